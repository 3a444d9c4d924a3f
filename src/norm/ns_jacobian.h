/* ns_jacobian: exact spectral norms of normalizer Jacobians (diagonal-minus-rank-one matrices
 * solved by their secular equation) and Lemma 2's general bound. Pure functions. */
#ifndef NS_JACOBIAN_H
#define NS_JACOBIAN_H

#include <stddef.h>

#include "norm/ns_normalize.h"

/* Largest eigenvalue of diag(w) - w w^T / sum(w) for w[0..n) >= 0 (a positive semidefinite
 * matrix, so this is also its 2-norm). Zero entries deflate (their eigenvalue is 0). With two
 * or more distinct positive entries the eigenvalue is the root in (w_(2), w_(1)) of the secular
 * equation sum_i w_i / (w_i - lambda) = 0, found by safeguarded Newton iteration around the
 * nearer pole (relative accuracy near 1e-15). Ties at the top give w_(1) exactly; fewer than
 * two positive entries give 0. */
double ns_jac_dmr_max(const double *w, size_t n);


/* || dF(z/T)/dz ||_2 for the normalizer at alpha = F(z/T) (L entries):
 *   softmax   lambda_max(diag(a) - a a^T) / T
 *   ssmax     lambda_max(diag(a) - a a^T) * |s log L| / T   (softmax at T / (s log L))
 *   sparsemax (diag(1_S) - 1_S 1_S^T / |S|) / T: 1/T when the support has >= 2 entries, else 0
 *   entmax15  lambda_max(diag(q) - q q^T / sum q) / T with q = sqrt(alpha) on the support
 *   entmax    the same with q = alpha^(2 - a) on the support (Peters, Niculae, Martins 2019).
 * work holds L doubles (used by the entmaxes). NaN for a normalizer off the simplex
 * (ns_norm_jac_norm). */
double ns_jac_exact_norm(const ns_normalizer *f, const double *alpha, size_t L, double T,
                         double *work);

/* The vector-Jacobian product out = J^T g of the normalizer at alpha = F(z/T) (L entries): the
 * gradient with respect to z of sum_i g_i alpha_i, the backward pass of attention. Every one of the
 * Jacobians above is symmetric, c (diag(w) - w w^T / sum w) with
 *   softmax, ssmax  w = alpha,                c = 1/T, or s log(L) / T for ssmax
 *   sparsemax       w = 1 on the support,     c = 1/T
 *   entmax15        w = sqrt(alpha) (support) c = 1/T,
 *   entmax          w = alpha^(2 - a) (support), c = 1/T,
 * so out_i = c w_i (g_i - <w, g> / sum w): exactly 0 outside the support of sparsemax and entmax15.
 * work holds L doubles; out may not alias alpha or g. */
void ns_jac_vjp(const ns_normalizer *f, const double *alpha, const double *g, size_t L, double T,
                double *out, double *work);

/* The w and c of a simplex normalizer's Jacobian J = c (diag(w) - w w^T / sum w) (the table of
 * ns_jac_vjp) at alpha = F(z/T) (L entries): alpha itself for softmax and ssmax, else w written
 * into work (L doubles); NaNs for a normalizer off the simplex. */
const double *ns_jac_structure(const ns_normalizer *f, const double *alpha, size_t L, double T,
                               double *work, double *c);

/* Lemma 2's general bound ||F'||_2 / (L min F) + ||F||_2 ||F'||_2 / (L^2 (min F)^2) for
 * F(z) = exp(c z) over z[0..L), evaluated with the maximum of c z subtracted (the bound is
 * invariant under that shift). ||F||_2 is the Euclidean norm of (F(z_j))_j and ||F'||_2 that of
 * (F'(z_j))_j = |c| ||F||_2; the caller gives f2sum = ||F||_2^2 = sum_j exp(c z_j - max_k c z_k)^2
 * (ns_softmax_family_row computes it from the weights' own exponentials). +inf when
 * exp(|c| (max z - min z)) overflows double. */
double ns_jac_lemma2(const double *z, size_t L, double c, double f2sum);

#endif

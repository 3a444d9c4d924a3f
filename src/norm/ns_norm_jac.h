/* ns_norm_jac: the Jacobian da/dz of every normalizer, issue 36's off the simplex included (the
 * 1/T included): exact spectral norm and vector-Jacobian product, at a row that ns_norm_row_eval
 * computed (the row analysis takes jac_exact from it for softmax1, sigmoid and relu), or from the
 * weights alone where that is a function of them (the trainer's backward). */
#ifndef NS_NORM_JAC_H
#define NS_NORM_JAC_H

#include <stddef.h>

#include "norm/ns_norm_row.h"

/* || da/dz ||_2 (the 1/T included) at the row r that ns_norm_row_eval computed from z:
 *   simplex     ns_jac_exact_norm
 *   softmax1    lambda_max(diag(a) - a a^T) / T, secular equation (ns_jac_softmax1_max)
 *   sigmoid     max_j a_j (1 - a_j) / T (diagonal)
 *   relu        1 / (T L) when some z_j > 0, else 0 (relu'(0) = 0; diagonal)
 *   softpick    largest singular value of (diag(u) - a s^T) / T, u_j = [z_j > 0] e^(y_j) / D,
 *               s_k = sign(z_k) e^(y_k) / D, D = sum |e^y - 1| (one-sided Jacobi, dense);
 *               NaN when D = 0 (every z = 0: not differentiable)
 *   stickbreaking  largest singular value of J_jk = a_j (delta_jk (1 - beta_j) - [k > j] beta_k) / T
 *               (one-sided Jacobi, dense).
 * NaN for a bad normalizer. */
double ns_norm_jac_norm(const ns_normalizer *f, const double *z, size_t L, double T,
                        const ns_norm_row *r, double *work);

/* || d a_{1..L-1} / d z_{1..L-1} ||_2 with z_0 held fixed (the 1/T included): the Jacobian of the
 * sink-excluded view's weights (docs/METRICS.md section 8.2), the trailing (L - 1) x (L - 1)
 * block of the normalizer's Jacobian, at the full row r (L >= 1 keys; r->a over all of them)
 * that ns_norm_row_eval computed from z:
 *   simplex   c (diag(w') - w' w'^T / W), w' = w_{1..}, W = sum_{j=0..L-1} w_j (ns_jac_structure):
 *             c W lambda_max(diag(b') - b' b'^T), b = w / W, by ns_jac_softmax1_max with b_0 as
 *             the weight outside the block
 *   softmax1  lambda_max(diag(a') - a' a'^T) / T, the weight outside the block a_0 plus the
 *             implicit 0 logit's
 *   sigmoid   max_{j >= 1} a_j (1 - a_j) / T;  relu  1 / (T L) when some z_j > 0, j >= 1, else 0
 *   softpick, stickbreaking  NaN (only a dense SVD; jac_fd measures them).
 * 0 when L = 1 (an empty block). work holds 2 L doubles. */
double ns_norm_jac_view_norm(const ns_normalizer *f, const double *z, size_t L, double T,
                             const ns_norm_row *r, double *work);

/* The Jacobian from the weights alone, for the normalizers whose Jacobian is a function of them --
 * the six a model may name among them (a trainer holds a row's weights a, not its logits) --, the
 * 1/T included:
 *   the five on the simplex   ns_jac_vjp, ns_jac_exact_norm
 *   softmax1  (diag(a) - a a^T) / T: out_i = a_i (g_i - <a, g>) / T; its norm by
 *             ns_jac_softmax1_max with the implicit logit's weight taken as 1 - sum a
 *   sigmoid   diag(a (1 - a)) / T:    out_i = a_i (1 - a_i) g_i / T; its norm max a_i (1 - a_i) / T.
 * out = (da/dz)^T g, the gradient of sum_j g_j a_j with respect to z (out may not alias a or g).
 * work holds L doubles. The others (softpick, relu, stick-breaking) need z: out is NaN and the
 * norm NaN (ns_norm_jac_vjp, ns_norm_jac_norm). */
void ns_norm_jac_vjp_weights(const ns_normalizer *f, const double *a, const double *g, size_t L,
                             double T, double *out, double *work);
double ns_norm_jac_norm_weights(const ns_normalizer *f, const double *a, size_t L, double T,
                                double *work);

/* Largest eigenvalue of diag(a) - a a^T (softmax1's Jacobian times T) over n weights, a0 = 1 -
 * sum a the implicit 0 logit's weight (computed as such, not as 1 - sum a): zero weights deflate;
 * a top tie gives it exactly; one positive weight a_1 a0 / (a_1 + a0); otherwise the root in
 * (a_(2), a_(1)) of sum_i a_i / (a_i - l) = a0 / l (the secular equation 1 = sum a_i^2 /
 * (a_i - l) without its cancellation near a_i = 1), by bisection until no double lies between
 * the ends. */
double ns_jac_softmax1_max(const double *a, size_t n, double a0);

/* Largest singular value of the n x n row-major matrix A (overwritten), by one-sided Jacobi
 * (Hestenes) on A scaled to a largest entry of 1, until every pair of columns is orthogonal to
 * working precision. O(n^3) per sweep: meant for the tests' and a row's small L. */
double ns_jac_dense_norm(double *A, size_t n);

#endif

/* ns_normalize: attention normalizers with temperature (softmax, scalable softmax, sparsemax,
 * 1.5-entmax), in double precision. Pure functions. */
#ifndef NS_NORMALIZE_H
#define NS_NORMALIZE_H

#include <stddef.h>

#include "common/ns_error.h"

typedef enum ns_normalizer_kind {
    NS_NORM_SOFTMAX = 0,
    NS_NORM_SSMAX,      /* softmax of s * log(L) * z / T */
    NS_NORM_SPARSEMAX,  /* Euclidean projection of z / T onto the simplex */
    NS_NORM_ENTMAX15    /* 1.5-entmax of z / T, exact sort-based */
} ns_normalizer_kind;

typedef struct ns_normalizer {
    ns_normalizer_kind kind;
    double s;           /* ssmax parameter (ignored by the others) */
} ns_normalizer;

/* "softmax", "ssmax", "sparsemax", "entmax15" <-> kind. parse returns NS_ERR_INVALID for others. */
const char *ns_normalizer_name(ns_normalizer_kind kind);
int ns_normalizer_parse(const char *name, ns_normalizer_kind *kind, ns_err *err);

/* alpha[0..L) = F(z / T). work holds at least 2 * L doubles. Returns NS_ERR_INVALID for T <= 0
 * or L == 0. */
int ns_normalize(const ns_normalizer *f, const double *z, size_t L, double T, double *alpha,
                 double *work, ns_err *err);

/* lalpha[0..L) = log alpha_i for alpha = F(z / T) (as ns_normalize computed it): for softmax and
 * ssmax the exact log-weight c z_i - log sum_j exp(c z_j), finite even where alpha_i underflows
 * to 0 at small T; for sparsemax and entmax15 log alpha_i, -inf outside the support. */
void ns_log_weights(const ns_normalizer *f, const double *z, const double *alpha, size_t L,
                    double T, double *lalpha);

/* softmax / ssmax at T with one exponential per key for what a row needs of them: alpha and
 * lalpha with the same bits as ns_normalize and ns_log_weights, and *f2sum = sum_i F_i^2,
 * F_i = exp(c z_i - max_j c z_j) (summed in key order: Lemma 2's ||F||_2^2, for ns_jac_lemma2).
 * f must be softmax or ssmax; L >= 1 and T finite and > 0 (checked by the caller). */
void ns_softmax_family_row(const ns_normalizer *f, const double *z, size_t L, double T,
                           double *alpha, double *lalpha, double *f2sum);

/* The factor c with alpha = softmax(c * z) for the softmax family: 1/T for softmax,
 * s * log(L) / T for ssmax (its "effective inverse temperature"); 1/T for the others. */
double ns_normalizer_inv_temp(const ns_normalizer *f, size_t L, double T);

#endif

/* ns_normalize: attention normalizers with temperature (softmax, scalable softmax, sparsemax,
 * 1.5-entmax and alpha-entmax on the simplex; issue 36's normalizers whose weights need not sum
 * to 1 are named here and computed by ns_norm_row), in double precision. Pure functions. */
#ifndef NS_NORMALIZE_H
#define NS_NORMALIZE_H

#include <stddef.h>

#include "common/ns_error.h"

typedef enum ns_normalizer_kind {
    NS_NORM_SOFTMAX = 0,
    NS_NORM_SSMAX,      /* softmax of s * log(L) * z / T */
    NS_NORM_SPARSEMAX,  /* Euclidean projection of z / T onto the simplex */
    NS_NORM_ENTMAX15,   /* 1.5-entmax of z / T, exact sort-based */
    /* Issue 36 (docs/METRICS.md section 2): not yet selectable in a sweep, a model or training
     * (ns_normalizer_parse refuses their names). ENTMAX is on the simplex and goes through
     * ns_normalize; the others' weights need not sum to 1: ns_norm_row (norm/ns_norm_row_internal.h). */
    NS_NORM_ENTMAX,        /* alpha-entmax of z / T, any alpha > 1 (threshold by bisection) */
    NS_NORM_SOFTMAX1,      /* exp(z_j / T) / (1 + sum_k exp(z_k / T)) */
    NS_NORM_SIGMOID,       /* sigmoid(z_j / T + b) */
    NS_NORM_SOFTPICK,      /* relu(exp(z_j / T) - 1) / sum_k |exp(z_k / T) - 1| */
    NS_NORM_RELU,          /* relu(z_j / T) / L */
    NS_NORM_STICKBREAKING  /* beta_j prod_{j < k < L} (1 - beta_k), beta = sigmoid(z / T) */
} ns_normalizer_kind;

/* Each normalizer has at most one parameter, so they share one double and the struct keeps its
 * size and layout; initialise by name ({.kind = NS_NORM_SSMAX, .s = 0.5}). */
typedef struct ns_normalizer {
    ns_normalizer_kind kind;
    union {
        double s;       /* ssmax: softmax of s log(L) z / T */
        double b;       /* sigmoid: the bias; NaN = the default -log(L) (ns_normalizer_sigmoid_bias) */
        double alpha;   /* entmax: alpha > 1 */
    };
} ns_normalizer;

/* "softmax", "ssmax", "sparsemax", "entmax15" <-> kind (the four a sweep, a model and training
 * can use). parse returns NS_ERR_INVALID for others, issue 36's names included. name() also
 * names issue 36's kinds: "entmax", "softmax1", "sigmoid", "softpick", "relu", "stickbreaking". */
const char *ns_normalizer_name(ns_normalizer_kind kind);
int ns_normalizer_parse(const char *name, ns_normalizer_kind *kind, ns_err *err);

/* alpha[0..L) = F(z / T) for a normalizer on the simplex (the first four, and ENTMAX: alpha
 * 1.5 is entmax15's closed form, bit for bit; any other alpha > 1 the bisection of ns_entmax).
 * work holds at least 2 * L doubles. Returns NS_ERR_INVALID for T <= 0, L == 0, an entmax alpha
 * that is not > 1, or a normalizer off the simplex (use ns_norm_row). */
int ns_normalize(const ns_normalizer *f, const double *z, size_t L, double T, double *alpha,
                 double *work, ns_err *err);

/* lalpha[0..L) = log alpha_i for alpha = F(z / T) (as ns_normalize computed it): for softmax and
 * ssmax the exact log-weight c z_i - log sum_j exp(c z_j), finite even where alpha_i underflows
 * to 0 at small T; for sparsemax and the entmaxes log alpha_i, -inf outside the support. */
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

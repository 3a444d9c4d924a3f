/* ns_normalize: attention normalizers with temperature (softmax, scalable softmax, sparsemax,
 * 1.5-entmax and alpha-entmax on the simplex; issue 36's normalizers whose weights need not sum
 * to 1 are named here and computed by ns_norm_row), in double precision; every normalizer's name,
 * parameter and label. Pure functions. */
#ifndef NS_NORMALIZE_H
#define NS_NORMALIZE_H

#include <stddef.h>

#include "common/ns_error.h"

typedef enum ns_normalizer_kind {
    NS_NORM_SOFTMAX = 0,
    NS_NORM_SSMAX,      /* softmax of s * log(L) * z / T */
    NS_NORM_SPARSEMAX,  /* Euclidean projection of z / T onto the simplex */
    NS_NORM_ENTMAX15,   /* 1.5-entmax of z / T, exact sort-based */
    /* Issue 36 (docs/METRICS.md section 2): selectable in a sweep file and in dump
     * (ns_normalizer_parse_any); SOFTMAX1 and SIGMOID also in a model and training
     * (ns_normalizer_parse), the other four not yet (refused, saying so). ENTMAX is on the
     * simplex and goes through ns_normalize; the others' weights need not sum to 1: ns_norm_row
     * (norm/ns_norm_row.h). */
    NS_NORM_ENTMAX,        /* alpha-entmax of z / T, any alpha > 1 (threshold by bisection) */
    NS_NORM_SOFTMAX1,      /* exp(z_j / T) / (1 + sum_k exp(z_k / T)) */
    NS_NORM_SIGMOID,       /* sigmoid(z_j / T + b) */
    NS_NORM_SOFTPICK,      /* relu(exp(z_j / T) - 1) / sum_k |exp(z_k / T) - 1| */
    NS_NORM_RELU,          /* relu(z_j / T) / L */
    NS_NORM_STICKBREAKING  /* beta_j prod_{j < k < L} (1 - beta_k), beta = sigmoid(z / T) */
} ns_normalizer_kind;

/* The keys a normalizer's metrics are computed over (issue 36, docs/METRICS.md section 8.2). */
typedef enum ns_view {
    NS_VIEW_ALL = 0,          /* every key of the row (what normsweep always did) */
    NS_VIEW_SINK_EXCLUDED = 1 /* a = F(z / T) over all L keys, key 0 dropped, the other L - 1
                               * renormalised (a sweep's `sink_view: true`, dump's --sink-view) */
} ns_view;

/* Each normalizer has at most one parameter, so they share one double; the view fills what was
 * padding, so the struct keeps its size; initialise by name ({.kind = NS_NORM_SSMAX, .s = 0.5}). */
typedef struct ns_normalizer {
    ns_normalizer_kind kind;
    ns_view view;       /* NS_VIEW_ALL unless set */
    union {
        double s;       /* ssmax: softmax of s log(L) z / T */
        double b;       /* sigmoid: the bias; NaN = the default -log(L) (ns_normalizer_sigmoid_bias) */
        double alpha;   /* entmax: alpha > 1 */
    };
} ns_normalizer;

/* "softmax", "ssmax", "sparsemax", "entmax15", "softmax1", "sigmoid" <-> kind (the six a model
 * and training can use: ns_normalizer_in_models). parse returns NS_ERR_INVALID for others: issue
 * 36's other four names with a message that they are not yet usable in a model or training, any
 * other as unknown. name() names every kind: also "entmax", "softpick", "relu", "stickbreaking". */
const char *ns_normalizer_name(ns_normalizer_kind kind);
int ns_normalizer_parse(const char *name, ns_normalizer_kind *kind, ns_err *err);

/* 1 for the six normalizers a model's config.json and training may name (the four of the paper,
 * softmax1, sigmoid); 0 for the rest. */
int ns_normalizer_in_models(ns_normalizer_kind kind);

/* Every normalizer by name (the paper's four and issue 36's six: what a sweep file and dump
 * accept), with its default parameter (ns_normalizer_default); NS_ERR_INVALID naming the others. */
int ns_normalizer_parse_any(const char *name, ns_normalizer *f, ns_err *err);

/* The defaults: ssmax s = 1, sigmoid b = NaN (-log L), entmax alpha = 1.5; 0 for the rest. */
ns_normalizer ns_normalizer_default(ns_normalizer_kind kind);

/* Sigmoid's bias for a row of L keys: f->b, or -log(L) when f->b is NaN (Ramapuram et al. 2024). */
double ns_normalizer_sigmoid_bias(const ns_normalizer *f, size_t L);

/* 1 for the normalizers whose weights lie on the simplex (softmax, ssmax, sparsemax, entmax15,
 * entmax): their mass is 1 by definition and p = a; 0 for issue 36's five off it. */
int ns_normalizer_on_simplex(ns_normalizer_kind kind);

/* The normalizer's label in outputs (the NetCDF `normalizer` coordinate, validate, dump): its
 * name, and its parameter as "NAME KEY=VALUE" with the shortest text that reads back as the
 * double -- always for entmax ("entmax alpha=1.3") and sigmoid ("sigmoid b=-2", or
 * "sigmoid b=-log(L)" for the default), for ssmax only when show_s ("ssmax s=0.5": a grid with
 * two ssmax; one ssmax keeps the label "ssmax" it always had); the sink-excluded view adds
 * ", sink excluded" ("softmax, sink excluded"). Returns the label's length (snprintf's: at most
 * 56). */
int ns_normalizer_label(const ns_normalizer *f, int show_s, char *buf, size_t size);

/* Two normalizers are the same (kind, parameter and view; two default sigmoids are the same). */
int ns_normalizer_same(const ns_normalizer *f, const ns_normalizer *g);

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

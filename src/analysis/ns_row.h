/* ns_row: METRICS.md (version 2) per-row metrics of one attention head over one forward pass:
 * Theorem 1 (d, d1, d_bound, d_expected, d_random), Theorem 2 (N_s/N, its bounds, delta),
 * Lemma 2 (exact and finite-difference Jacobian norms, the general bound) and the attention
 * entropy, for every temperature T, top-N size N and step eps of the grid. Pure computation in
 * double precision: no I/O, no MPI, no model types.
 *
 * One call analyses the requested rows of one (shard, layer, head): what all rows share (the
 * vectors, their Gram matrix, delta's prefix minima) is built once; each row then fills its own
 * row record (analysis/ns_metrics.h layout). Two kernels compute the N-dependent metrics and give
 * the same values up to rounding (tests/test_analysis.c): the reference evaluates every
 * definition directly, O(L d) per (T, N); the fast one updates every quantity from N to N + 1
 * in O(L) with the Gram matrix. NaN = missing (N >= the row's keys; ns_lower when r = 0;
 * jac_lemma2 for sparsemax and entmax15); +inf is a value (Lemma 2 at tiny T). */
#ifndef NS_ROW_H
#define NS_ROW_H

#include <stddef.h>
#include <stdint.h>

#include "analysis/ns_metrics.h"
#include "norm/ns_normalize.h"
#include "common/ns_error.h"

/* What to compute; arrays are borrowed. */
typedef struct ns_analysis_params {
    const size_t *N;      /* top-N sizes, ascending, each >= 1 */
    size_t nN;
    const double *T;      /* temperatures, each finite and > 0 */
    size_t nT;
    const double *eps;    /* finite-difference steps, each finite and > 0 */
    size_t neps;
    ns_normalizer normalizer; /* its view NS_VIEW_SINK_EXCLUDED: each row m is analysed over keys
                               * 1..m, the weights a over keys 0..m with key 0 dropped and the
                               * rest renormalised (METRICS.md section 8.2) */
    int sphere;           /* 1: every x_i scaled to norm 1 (M = 1); 0: raw, M = max_i ||x_i|| */
    unsigned probes;      /* random unit directions of jac_fd besides (e_a - e_b)/sqrt 2 */
    uint64_t seed;        /* key of the counter-based generator */
} ns_analysis_params;

/* One head's data from one forward pass over a shard of L_max tokens. */
typedef struct ns_head_input {
    const float *logits;  /* row m's z[m][0..m] at logits + m * logits_ld, or, with logits_slot,
                             at logits + logits_slot[m] * logits_ld (a forward pass keeps only the
                             rows asked for) */
    size_t logits_ld;
    const float *values;  /* (L_max, values_ld): v_i = values[i*values_ld .. + d) */
    size_t values_ld;
    size_t L_max;
    size_t d;             /* head dimension */
    const size_t *logits_slot; /* (L_max) or NULL (see logits); SIZE_MAX: row not held */
} ns_head_input;

/* Identity of the head: keys the counter-based generator (d_random, jac_fd probes). */
typedef struct ns_head_key {
    uint64_t shard;
    uint32_t layer;
    uint32_t head;
} ns_head_key;

/* One row to analyse: prefix row m (m + 1 keys) into the record out, laid out by lay, whose N's
 * are the first lay->nN of the parameters' N (those below the cell's context length). */
typedef struct ns_row_request {
    size_t m;
    const ns_row_layout *lay;
    double *out;
} ns_row_request;

typedef enum ns_kernel {
    NS_KERNEL_REFERENCE = 0, /* every definition evaluated directly */
    NS_KERNEL_FAST = 1       /* incremental over N (the one the program uses) */
} ns_kernel;

typedef struct ns_analysis_ws ns_analysis_ws;

/* Scratch for heads of up to L_max keys and d dimensions (one allocation, reused). */
int ns_analysis_ws_new(const ns_analysis_params *p, size_t L_max, size_t d, ns_analysis_ws **out,
                       ns_err *err);
void ns_analysis_ws_free(ns_analysis_ws *ws);
/* Bytes of that scratch (in double: an absurd size gives a huge number, not a wrapped one). */
double ns_analysis_ws_bytes(unsigned probes, size_t L_max, size_t d);

/* Analyse rows[0..n_rows) of one head with the given kernel. Every row's m < in->L_max. The
 * result depends only on (p, key, in, rows), never on which process computes it. Fails with
 * NS_ERR_INVALID naming the position of a non-finite logit or value, and the likely cause (the
 * caller names the shard, layer and head). */
int ns_analyze_head(const ns_analysis_params *p, const ns_head_key *key, const ns_head_input *in,
                    const ns_row_request *rows, size_t n_rows, ns_kernel kernel,
                    ns_analysis_ws *ws, ns_err *err);

/* Keys of the counter-based generator (analysis/ns_rng.h), so tests can replay a draw:
 * d_random's nested subsets are the prefixes of one random permutation keyed by
 * (seed, shard, row, layer, head, T); jac_fd's random directions are keyed by
 * (seed, shard, row, layer, head) under another domain tag (pass T = 0): the same directions for
 * every T and eps of a row, so g(T, eps) compares like with like. */
typedef enum ns_rng_purpose {
    NS_RNG_RANDOM_SUBSET = 0,
    NS_RNG_FD_PROBES = 1
} ns_rng_purpose;
uint64_t ns_analysis_rng_key(ns_rng_purpose purpose, uint64_t seed, const ns_head_key *key,
                             size_t row, double T);

/* The first n entries of a uniformly random permutation of [0, L) (a partial Fisher-Yates
 * shuffle) drawn from the stream keyed by key: perm[0..n) receives them; perm must hold L. */
void ns_random_prefix(uint64_t key, size_t L, size_t n, size_t *perm);

#endif

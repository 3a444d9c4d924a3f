/* ns_analysis: the per-head, per-row metrics of METRICS.md (Theorem 1, Theorem 2, Lemma 2)
 * over one head's logits and value vectors from one shard. Pure computation: no I/O, no MPI,
 * no model types. Every metric is computed in double precision.
 *
 * One call analyses one (shard, layer, head): it builds what all rows share (the Gram matrix of
 * the head's vectors, prefix minima for delta) once, then fills one ns_row_result per requested
 * row. Results are a flat array of doubles addressed through ns_row_layout, so they can be sent
 * over MPI and reduced without knowing their meaning. NaN means "missing" (N >= L for that row,
 * or undefined such as ns_lower when r = 0); +inf is a real value (e.g. Lemma 2 at tiny T). */
#ifndef NS_ANALYSIS_H
#define NS_ANALYSIS_H

#include <stddef.h>
#include <stdint.h>

#include "analysis/ns_normalize.h"
#include "common/ns_error.h"

/* Per-row metric identifiers, in output order. */
typedef enum ns_metric_id {
    /* shape (nT, nN) */
    NS_M_DISTANCE = 0,      /* d */
    NS_M_DISTANCE_D1,       /* d1 */
    NS_M_DISTANCE_BOUND,    /* d_bound */
    NS_M_DISTANCE_EXPECTED, /* d_expected */
    NS_M_DISTANCE_RANDOM,   /* d_random */
    NS_M_NS_FRAC,           /* N_s / N */
    NS_M_NS_LOWER,
    NS_M_NS_UPPER,
    /* shape (1) */
    NS_M_DELTA,
    /* shape (nT) */
    NS_M_JAC_EXACT,
    NS_M_JAC_LEMMA2,        /* softmax and ssmax (effective c = s log L / T); NaN for sparsemax, entmax15 */
    /* shape (nT, neps) */
    NS_M_JAC_FD,
    NS_M_COUNT
} ns_metric_id;

/* "distance", "distance_d1", ... "jac_fd": the NetCDF variable stem of each metric. */
const char *ns_metric_name(ns_metric_id id);

/* The per-row shape of a metric: (nT, nN), (1), (nT) or (nT, neps). */
typedef enum ns_metric_shape {
    NS_SHAPE_TN = 0,
    NS_SHAPE_SCALAR,
    NS_SHAPE_T,
    NS_SHAPE_TE
} ns_metric_shape;
ns_metric_shape ns_metric_shape_of(ns_metric_id id);

/* What to compute; arrays are borrowed, not copied. */
typedef struct ns_analysis_params {
    const size_t *N;      /* top-N sizes, each >= 1 */
    size_t nN;
    const double *T;      /* temperatures, each > 0 */
    size_t nT;
    const double *eps;    /* finite-difference steps, each > 0 */
    size_t neps;
    ns_normalizer normalizer;
    int sphere;           /* 1: scale every x_i to norm 1 (M = 1); 0: raw vectors, M = max ||x_i|| */
    unsigned probes;      /* P random unit directions for jac_fd (default 8) */
    uint64_t seed;        /* key of the counter-based generator */
} ns_analysis_params;

/* Offsets of each metric inside a row's flat result array. */
typedef struct ns_row_layout {
    size_t nT, nN, neps;
    size_t offset[NS_M_COUNT];
    size_t size[NS_M_COUNT];
    size_t total;         /* doubles per row */
} ns_row_layout;

void ns_row_layout_init(ns_row_layout *layout, size_t nT, size_t nN, size_t neps);
/* Index of metric id at (t, n) / (t) / (t, e) / () inside a row's array. */
size_t ns_row_index_tn(const ns_row_layout *layout, ns_metric_id id, size_t t, size_t n);
size_t ns_row_index_t(const ns_row_layout *layout, ns_metric_id id, size_t t);
size_t ns_row_index_te(const ns_row_layout *layout, ns_metric_id id, size_t t, size_t e);
/* 1 when ns_lower at (t, n) is missing because r = 0 (the row was analysed at that N, so ns_frac
 * is present, but ns_lower is NaN): the count METRICS.md asks for (`ns_lower_undefined`). */
int ns_row_ns_lower_undefined(const ns_row_layout *layout, const double *row, size_t t, size_t n);

/* One head's data from one forward pass over a shard of L_max tokens. */
typedef struct ns_head_input {
    const float *logits;  /* (L_max, logits_ld): row m holds z[m][0..m] */
    size_t logits_ld;
    const float *values;  /* (L_max, values_ld): v_i = values[i*values_ld .. + d) */
    size_t values_ld;
    size_t L_max;
    size_t d;             /* head dimension */
} ns_head_input;

/* Identity of the head, keys the counter-based generator (d_random, jac_fd probes). */
typedef struct ns_head_key {
    uint64_t shard;
    uint32_t layer;
    uint32_t head;
} ns_head_key;

typedef struct ns_analysis_ws ns_analysis_ws;

/* Scratch for heads up to L_max keys and d dims (one allocation, reused across heads). */
int ns_analysis_ws_new(const ns_analysis_params *p, size_t L_max, size_t d, ns_analysis_ws **out,
                       ns_err *err);
void ns_analysis_ws_free(ns_analysis_ws *ws);

/* Analyse rows[0..n_rows) (each m < L_max; row m has m + 1 keys) of one head.
 * out holds n_rows * layout.total doubles (layout from ns_row_layout_init(nT, nN, neps)),
 * row r at out + r * layout.total. The result depends only on (p, key, input, rows), never on
 * which process computes it. */
int ns_analyze_head(const ns_analysis_params *p, const ns_head_key *key, const ns_head_input *in,
                    const size_t *rows, size_t n_rows, ns_analysis_ws *ws, double *out,
                    ns_err *err);

/* Keys of the counter-based generator (analysis/ns_rng.h), so tests and tools can replay a draw:
 * d_random's subset is keyed by (seed, shard, row, layer, head, N, T); jac_fd's P random
 * directions by (seed, shard, row, layer, head, T) (N is ignored), the same for every eps.
 * Each purpose has its own domain tag, so the two streams never coincide. */
typedef enum ns_rng_purpose {
    NS_RNG_RANDOM_SUBSET = 0,
    NS_RNG_FD_PROBES = 1
} ns_rng_purpose;
uint64_t ns_analysis_rng_key(ns_rng_purpose purpose, uint64_t seed, const ns_head_key *key,
                             size_t row, size_t N, double T);

/* The paper's corollary bound min(1/(4T), sqrt(2)). */
double ns_jac_bound(double T);
/* 1 if value exceeds bound by more than a relative 1e-6 (the violation rule); NaN never violates. */
int ns_jac_violates(double value, double bound);

#endif

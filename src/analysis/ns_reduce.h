/* ns_reduce: the reduction of METRICS.md sections 5-9 over one slice of cells -- one (layer,
 * head, normalizer, L) across every shard and row -- from the slice's row records: per-cell
 * statistics of every metric, both KS tests and their n_crit, and every count (bound violations
 * with the rows they were counted over, vacuous bounds, undefined ns_lower, skipped rows). Pure
 * computation: no I/O, no MPI; the sweep runs it on slices spread over its ranks, `verify` on all
 * of them in one process, and the result is the same either way.
 *
 * A slice's result is one flat array of doubles (counts are exact in a double), laid out by
 * ns_slice_layout, so it can be moved between processes without knowing its meaning. */
#ifndef NS_REDUCE_H
#define NS_REDUCE_H

#include <stddef.h>
#include <stdint.h>

#include "analysis/ns_metrics.h"
#include "common/ns_error.h"

/* The statistics of every metric cell, in output order. */
typedef enum ns_stat_id {
    NS_ST_COUNT = 0, NS_ST_MEAN, NS_ST_STD, NS_ST_MIN, NS_ST_MAX, NS_ST_Q05, NS_ST_Q50, NS_ST_Q95,
    NS_ST_COUNT_ALL
} ns_stat_id;

typedef struct ns_stat_info {
    const char *suffix;       /* variable name suffix: "count", "mean", ... */
    const char *long_name;    /* "mean over rows", ... */
} ns_stat_info;
const ns_stat_info *ns_stat_info_of(ns_stat_id id);

/* Per-cell counts at the dimensions their quantity has: (T, N) for the theorems' (they depend on
 * the top-N set), (T) for jac_exact's and Lemma 2's and (T, eps) for jac_fd's (a row's Jacobian
 * does not depend on N: each row counts once, over every row where the value is defined). A
 * violation count comes with the number of rows it was checked over (its `_checked` twin). */
typedef enum ns_count_id {
    NS_C_SKIPPED_ROWS = 0, /* rows the cell skipped (N >= the row's keys) */
    NS_C_THM1_VIOL, NS_C_THM1_CHECKED,       /* d > d_bound (relative 1e-9) */
    NS_C_NS_UPPER_VIOL, NS_C_NS_UPPER_CHECKED, /* ns_frac > ns_upper */
    NS_C_NS_LOWER_VIOL, NS_C_NS_LOWER_CHECKED, /* ns_frac < ns_lower */
    NS_C_NS_LOWER_VACUOUS,   /* ns_lower <= 0 */
    NS_C_NS_UPPER_VACUOUS,   /* ns_upper >= 1 - 1e-12 */
    NS_C_NS_LOWER_UNDEFINED, /* r = 0: ns_lower missing */
    NS_C_JAC_EXACT_VIOL, NS_C_JAC_EXACT_CHECKED, /* jac_exact > jac_bound (relative 1e-6) */
    NS_C_LEMMA2_VIOL, NS_C_LEMMA2_CHECKED,       /* jac_exact > jac_lemma2 (relative 1e-6) */
    NS_C_JAC_FD_VIOL, NS_C_JAC_FD_CHECKED,       /* jac_fd(eps) > jac_bound (relative 1e-6) */
    NS_C_EMPTY_ROWS,         /* rows whose mass is 0: no shape p, every shape metric missing */
    NS_C_COUNT
} ns_count_id;

typedef enum ns_count_dims {
    NS_CD_TN = 0, /* (T, N) */
    NS_CD_T,      /* (T) */
    NS_CD_TE      /* (T, eps) */
} ns_count_dims;

typedef struct ns_count_info {
    const char *name;      /* NetCDF variable name */
    ns_count_dims dims;
    const char *long_name;
    const char *rule;      /* the exact rule, for the variable's `comment` */
    ns_count_id checked;   /* the denominator's count (itself for non-violations) */
} ns_count_info;
const ns_count_info *ns_count_info_of(ns_count_id id);

/* The cells of a count of dims in a slice of nT temperatures, nN N's and neps steps. */
size_t ns_count_cells(ns_count_dims dims, size_t nT, size_t nN, size_t neps);

/* Two KS tests (METRICS.md section 5): d against d_expected (the paper's), d against d_random. */
typedef enum ns_ks_test { NS_KS_EXPECTED = 0, NS_KS_RANDOM = 1, NS_KS_TESTS = 2 } ns_ks_test;

/* What a slice is: its records' layout and the grid. */
typedef struct ns_slice_shape {
    const ns_row_layout *lay; /* the slice's row records (lay->nN of the grid's N are below L) */
    size_t L;                 /* the slice's context length */
    const size_t *N;          /* the grid's N, ascending (cells with N >= L are skipped) */
    size_t nN;
    const double *T;
    size_t nT;
    const double *jac_bound;  /* (nT): the Jacobian bound at each T (analysis/ns_metrics.h's
                                 ns_jac_bound, computed once per grid: grid/ns_grid_derive) */
    size_t neps;
    double ks_alpha;
} ns_slice_shape;

/* Offsets inside a slice's result array. */
typedef struct ns_slice_layout {
    size_t cells[NS_M_COUNT];  /* cells of metric m in the slice: nT nN, nT, nT neps or 1 */
    size_t stats[NS_M_COUNT];  /* metric m's statistics: [cell][NS_ST_COUNT_ALL] */
    size_t ks_stat[NS_KS_TESTS], ks_p[NS_KS_TESTS]; /* [nT][nN] each */
    size_t n_crit[NS_KS_TESTS];                     /* [nT]: N, NS_NCRIT_NONE or _NOT_COMPUTABLE */
    size_t count[NS_C_COUNT];                       /* [nT][nN], [nT] or [nT][neps] */
    size_t total;
} ns_slice_layout;

void ns_slice_layout_init(ns_slice_layout *sl, const ns_slice_shape *sh);

/* One metric's sample over the slice's S records (record k at recs + k * stride, in shard then
 * row order) at grid indices (t, n, e): out[0..S). n indexes the grid's N (NaN when N >= L). */
void ns_slice_gather(const ns_slice_shape *sh, const double *recs, size_t S, size_t stride,
                     ns_metric_id id, size_t t, size_t n, size_t e, double *out);

typedef struct ns_reduce_ws ns_reduce_ws;
int ns_reduce_ws_new(size_t S, ns_reduce_ws **out, ns_err *err);
void ns_reduce_ws_free(ns_reduce_ws *ws);

/* Reduce the slice's S records into out[0..sl.total) (sl from ns_slice_layout_init(sh)).
 * Fails only on allocation (NS_ERR_NOMEM). */
int ns_reduce_slice(const ns_slice_shape *sh, const double *recs, size_t S, size_t stride,
                    ns_reduce_ws *ws, double *out, ns_err *err);

#endif

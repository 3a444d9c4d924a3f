/* ns_metrics: the one table of METRICS.md (version 2) per-row metrics -- name, dimensions,
 * long_name, units and meaning -- read by the analysis kernels, the reduction, the sweep's NetCDF
 * layout and `dump` (and, through the files' attributes, by the report); and the layout of one
 * row's values in a flat array of doubles (a "row record"). Pure data: no I/O, no MPI.
 *
 * A row record holds each value once, at the dimensions it really has:
 *   (T, N)    for the N of the grid that are < L (a row of L keys skips N >= L; rows with fewer
 *             keys than L, when `rows` > 1, hold NaN at the N they skip),
 *   (N) or (T, N) for distance_d1 (its top-N set does not depend on T for softmax and ssmax),
 *   (T), (T, eps), and one value per row (delta, which depends only on the vectors).
 * n_eff is not stored: ns_row_value derives it from entropy. */
#ifndef NS_METRICS_H
#define NS_METRICS_H

#include <stddef.h>

/* Per-row metric identifiers, in output order. */
typedef enum ns_metric_id {
    NS_M_DISTANCE = 0,      /* d (Theorem 1) */
    NS_M_DISTANCE_D1,       /* d1 */
    NS_M_DISTANCE_BOUND,    /* d_bound */
    NS_M_DISTANCE_EXPECTED, /* d_expected: Theorem 1's closed-form expectation term */
    NS_M_DISTANCE_RANDOM,   /* d_random: d for a uniformly random N-subset */
    NS_M_NS_FRAC,           /* N_s / N (Theorem 2) */
    NS_M_NS_LOWER,
    NS_M_NS_UPPER,
    NS_M_DELTA,             /* min pairwise distance of the row's vectors */
    NS_M_JAC_EXACT,         /* exact spectral norm of the normalizer's Jacobian (Lemma 2) */
    NS_M_JAC_LEMMA2,        /* Lemma 2's general bound (softmax, ssmax) */
    NS_M_ENTROPY,           /* attention entropy (nats) */
    NS_M_ENTROPY_NORM,      /* entropy / log(keys of the row) */
    NS_M_N_EFF,             /* exp(entropy) (derived) */
    NS_M_JAC_FD,            /* finite-difference sensitivity per eps */
    NS_M_MASS,              /* the row mass m = sum_j a_j (1 on the simplex; issue 36) */
    NS_M_SINK_MASS,         /* p_0 = a_0 / m, the share of the mass on the window's first key */
    NS_M_COUNT
} ns_metric_id;

/* The dimensions of a metric per row, between the row and the (layer, head) of the output. */
typedef enum ns_metric_dims {
    NS_DIMS_TN = 0, /* (T, N) */
    NS_DIMS_T,      /* (T) */
    NS_DIMS_TE,     /* (T, eps) */
    NS_DIMS_ROW     /* one value per row, the same for every normalizer */
} ns_metric_dims;

typedef struct ns_metric_info {
    const char *name;      /* NetCDF variable stem: "distance", "ns_frac", ... */
    ns_metric_dims dims;
    const char *long_name; /* CF long_name */
    const char *units;     /* CF units: "1" (dimensionless; the entropy in nats says so in meaning) */
    const char *meaning;   /* what it means, with the METRICS.md section */
} ns_metric_info;

/* The table entry of id (NULL for an unknown id). */
const ns_metric_info *ns_metric_info_of(ns_metric_id id);

/* Layout of one row record for a grid of nT temperatures, the nN_L N's of the grid that are below
 * the row's context length L, and neps steps. t_free_rank: the normalizer ranks keys
 * independently of T (softmax, ssmax), so distance_d1 is stored per N only. */
typedef struct ns_row_layout {
    size_t nT, nN, neps; /* nN: the N's of this layout (those < L) */
    int t_free_rank;
    size_t offset[NS_M_COUNT]; /* where each stored metric starts; SIZE_MAX for derived ones */
    size_t total;              /* doubles per row record */
} ns_row_layout;

void ns_row_layout_init(ns_row_layout *lay, size_t nT, size_t nN, size_t neps, int t_free_rank);

/* Index of a stored metric at (t, n, e) inside a row record (arguments a metric does not have are
 * ignored; n < lay->nN). Not for the derived metrics. */
size_t ns_row_index(const ns_row_layout *lay, ns_metric_id id, size_t t, size_t n, size_t e);

/* The value of any metric (stored or derived) of a row record at (t, n, e); L (the cell's context
 * length) is kept for derived values that may need it. NaN when n >= lay->nN (skipped). */
double ns_row_value(const ns_row_layout *lay, const double *row, size_t L, ns_metric_id id,
                    size_t t, size_t n, size_t e);

/* The paper's corollary bound min(1/(4T), sqrt 2) on the softmax Jacobian norm (METRICS §7). */
double ns_jac_bound(double T);

/* Violation rule with a relative slack: 1 when value > bound + rel * |bound|; NaN never violates. */
int ns_exceeds(double value, double bound, double rel);

/* Slacks of METRICS.md: Theorem 1 (relative 1e-9) and the Jacobian bounds (relative 1e-6). */
#define NS_THM1_SLACK 1e-9
#define NS_JAC_SLACK 1e-6
/* ns_upper is vacuous when it is at least 1 - 1e-12 (METRICS §6). */
#define NS_UPPER_VACUOUS 1e-12

#endif

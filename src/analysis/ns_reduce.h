/* ns_reduce: per-cell reductions of METRICS.md section 8 (count, mean, std, min, max, exact
 * quantiles) and a mergeable accumulator for partial results. Pure computation: no I/O, no MPI.
 *
 * Conventions (docs/STATISTICS.md):
 * - NaN means "missing" and is skipped; count is the number of non-NaN values.
 * - count 0: every statistic is NaN.
 * - std is the population standard deviation (ddof = 0).
 * - Quantiles are numpy's default method='linear': position q (n-1) in the sorted sample,
 *   linear interpolation between the two neighbouring order statistics.
 * - +-inf are real values: min/max/quantiles are order statistics (an interpolation next to
 *   +inf is +inf, between -inf and +inf NaN); mean is +inf (-inf) if any +inf (-inf) is
 *   present and NaN if both are; std is +inf if any infinite value is present, except NaN when
 *   every value is the same infinity.
 *   (numpy returns NaN for std and for quantiles next to an infinity; we do not.)
 * - Determinism: results depend only on the values and their order. The accumulator is merged
 *   in a fixed order (shard index, then row); exact quantiles need the gathered sample. */
#ifndef NS_REDUCE_H
#define NS_REDUCE_H

#include <stddef.h>
#include <stdint.h>

#include "common/ns_error.h"

/* The reduced statistics of one cell (OUTPUT.md: <stem>_count, _mean, _std, _min, _max,
 * _q05, _q50, _q95). */
typedef struct ns_summary {
    uint64_t count;
    double mean, std, min, max;
    double q05, q50, q95;
} ns_summary;

/* Quantile probabilities of ns_summary, in order. */
#define NS_SUMMARY_Q05 0.05
#define NS_SUMMARY_Q50 0.5
#define NS_SUMMARY_Q95 0.95

/* Summary of x[0..n) (any order; NaN skipped). scratch must hold n doubles (it receives the
 * sorted non-NaN values). Mean by pairwise summation, std by two passes about the mean. */
void ns_summary_compute(ns_summary *out, const double *x, size_t n, double *scratch);

/* Same, allocating its scratch; NS_ERR_NOMEM on failure (out then all-NaN, count 0). */
int ns_summary_of(ns_summary *out, const double *x, size_t n, ns_err *err);

/* numpy-'linear' quantile of an ascending, NaN-free sample; q in [0, 1]. NaN if n == 0 or q is
 * outside [0, 1]. */
double ns_quantile_sorted(const double *sorted, size_t n, double q);

/* Mergeable moments (Welford updates; Chan et al. parallel merge). Finite values feed
 * count/mean/m2; infinities are counted apart so merging never forms inf - inf. */
typedef struct ns_accum {
    uint64_t n_finite;  /* finite values */
    double mean;        /* mean of the finite values */
    double m2;          /* sum of squared deviations of the finite values from their mean */
    double min, max;    /* over all non-NaN values (NaN while empty) */
    uint64_t n_posinf, n_neginf;
} ns_accum;

void ns_accum_init(ns_accum *acc);
/* Add one value (NaN is skipped). */
void ns_accum_add(ns_accum *acc, double x);
/* Add x[0..n) in order. */
void ns_accum_add_array(ns_accum *acc, const double *x, size_t n);
/* acc <- acc followed by other (other is not changed). The result depends on the order of
 * merges: merge partials in a fixed order (shard index), never in arrival order. */
void ns_accum_merge(ns_accum *acc, const ns_accum *other);
/* Non-NaN count, mean, std (ddof = 0), min, max with the infinity rules above
 * (any pointer may be NULL). */
void ns_accum_result(const ns_accum *acc, uint64_t *count, double *mean, double *std, double *min,
                     double *max);

#endif

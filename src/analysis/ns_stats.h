/* ns_stats: the summary statistics of one cell's sample (METRICS.md section 9: count, mean, std,
 * min, max, exact quantiles). Pure computation: no I/O, no MPI.
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
 * - Determinism: results depend only on the values and their order (the sweep gathers every
 *   cell's sample by shard index, then row). */
#ifndef NS_STATS_H
#define NS_STATS_H

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

/* numpy-'linear' quantile of an ascending, NaN-free sample; q in [0, 1]. NaN if n == 0 or q is
 * outside [0, 1]. */
double ns_quantile_sorted(const double *sorted, size_t n, double q);

#endif

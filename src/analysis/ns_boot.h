/* ns_boot: the arithmetic of the shard bootstrap (docs/STATISTICS.md, "Uncertainty: the shard
 * bootstrap"): the resamples' shard multiplicities from the counter-based generator, a cell's
 * weighted mean and maximum from per-shard sums, counts and maxima, the median over heads, the
 * log-log slope, and the percentile interval. Every operation's order is the documented one, so
 * any implementation of that page gets the same bits. Pure functions: no I/O, no MPI. */
#ifndef NS_BOOT_H
#define NS_BOOT_H

#include <stddef.h>
#include <stdint.h>

#include "common/ns_error.h"
#include "common/ns_range.h"

#define NS_BOOT_TAG 0x626f6f7473747270ULL /* "bootstrp" */
#define NS_BOOT_DEFAULT_RESAMPLES 2000
#define NS_BOOT_MIN_RESAMPLES 1000
#define NS_BOOT_LEVEL 0.95
#define NS_BOOT_MAX_RESAMPLES 100000
/* B's range (common/ns_range.h), declared once: the sweep file's bootstrap.resamples.
 * At least NS_BOOT_MIN_RESAMPLES (the report refuses fewer: docs/STATISTICS.md, "Why B = 2000
 * is enough"), at most NS_BOOT_MAX_RESAMPLES (the cost and the replicates held grow with B). */
extern const ns_range ns_boot_range_resamples;

/* W: (B + 1) x S multiplicities, row 0 the full sample (every shard once), row b + 1 resample b
 * drawn from the stream keyed (NS_BOOT_TAG, seed, b): S draws ns_rng_below(S). Caller frees. */
int ns_boot_weights(uint64_t seed, size_t S, size_t B, uint32_t **W, ns_err *err);

/* For each of n cells j: (sum over shards s in index order of w[s] sum[s n + j]) / (sum over s
 * of w[s] cnt[s n + j]), each product rounded once and added left to right; shards with
 * w[s] = 0 add nothing; NaN when the weighted count is 0. sum and cnt are (S, n); out (n);
 * scratch 3 n doubles. (The cells are independent lanes: the order per cell is the page's.)
 * cnt NULL: every shard of cell j has the same count c_j, and scratch[2 n + j] holds c_j S (the
 * multiplicities of a resample add up to S: the weighted count, an exact integer, is that). */
void ns_boot_wmeans(const uint32_t *w, const double *sum, const double *cnt, size_t S, size_t n,
                    double *scratch, double *out);
/* The numerators of ns_boot_wmeans for R resamples and n cells at once, with the same bits:
 * out[b n + j] = the sum over shards s in index order of wd[b S + s] x[s n + j], each product
 * rounded once and added left to right from +0, shards of weight 0 left out. wd (R, S) holds the
 * multiplicities as doubles; x (S, n). Resample by resample, the drawn shards are listed once
 * (without a branch) and the columns summed over them in blocks of 32 and 4 (vector accumulators
 * held across the shards), column block by column block (a block's S rows within 1 MiB, so they
 * stay in the cache over the resamples): the cost of about 0.63 B S n multiplications and
 * additions (a resample leaves out about (1 - 1/S)^S = 37 % of the shards). The caller passes finite x only
 * (its rule for this path; ns_boot_wmeans's otherwise). */
void ns_boot_wsums(const double *wd, const double *x, size_t R, size_t S, size_t n, double *out);
/* For each of n cells j: the largest mx[s n + j] over the shards with w[s] > 0; NaN when none
 * is above -inf. */
void ns_boot_wmaxes(const uint32_t *w, const double *mx, size_t S, size_t n, double *out);

/* Head sets as index lists: set s holds heads idx[start[s] .. start[s + 1]). */
typedef struct ns_boot_sets {
    size_t nsets;
    const size_t *idx;
    const size_t *start; /* (nsets + 1) */
} ns_boot_sets;
/* Scratch for H heads: H doubles. */
typedef struct ns_boot_set_ws {
    double *vals;
} ns_boot_set_ws;
/* Aggregates over head sets of one replicate: x[0..H) the heads' values; out[s] the median of
 * set s's non-NaN values (the mean of the two middle values of an even count, +inf above every
 * number), or with use_max their largest; NaN when the set has none. */
void ns_boot_set_stats(const double *x, size_t H, const ns_boot_sets *sets, int use_max,
                       ns_boot_set_ws *ws, double *out);

/* The same medians for R replicates at once: x (R, H) row by row, out (nsets, R), with
 * ns_boot_set_stats's bits. Three paths:
 * - a set of at most NS_BOOT_BATCH_MAX heads goes through the comparators of a sorting network
 *   (Batcher's odd-even merge sort, padded to a power of 2) that its two middle positions depend
 *   on, applied to the replicates in step (lanes over replicates, no branches; chunks of
 *   replicates whose columns fit 32 KiB); a replicate holding a NaN or a -0 (which the network
 *   may order either way against a +0) takes ns_boot_set_stats's path instead;
 * - a larger set (GPT-2's all, sharp and flat heads), from NS_BOOT_SHARED_MIN_R replicates on,
 *   takes a selection shared across replicates: its heads are sorted once by their full-sample
 *   values (row 0); in each replicate the values of the heads w ranks below and above the full
 *   sample's middle are pivots, one pass counts the values below, equal to, strictly between
 *   and above them and keeps those between, and when both middle ranks of the replicate fall
 *   inside, they are read from those few values; otherwise w doubles and the pass is repeated
 *   (a window past both ends takes every value). w starts at 2 and follows the replicates (one
 *   less after a first-pass hit). A replicate whose window would have to pass 8 ranks is
 *   selected on its own; when after 16 replicates more than a quarter missed their first
 *   window (heads as alike as a random model's, which reshuffle in every resample), the
 *   remaining replicates go through the network of the first path (sets of up to 256 heads;
 *   1614 comparators for 144) or, for a larger set, are selected one by one;
 * - any other set (a NaN with at most NS_BOOT_BATCH_MAX heads, fewer replicates) takes
 *   ns_boot_set_stats's path, replicate by replicate, as does a replicate holding a -0 in a
 *   large set (in the shared selection or the network).
 * A set with the same heads as an earlier one (flat = all when no head is sharp) copies its
 * medians.
 * Exact whatever the pivots: an order statistic is one number whichever method finds it, and
 * equal doubles have equal bits but +0 and -0 (hence the last rule). ws: one.vals, mid and
 * order (H each) and cols (NS_BOOT_BATCH_MAX x R doubles); passes, full and net count, for the
 * tests, the counting passes over large sets, their replicates that took the full path and
 * those that took the network (added to, never reset here). */
#define NS_BOOT_BATCH_MAX 32
#define NS_BOOT_SHARED_MIN_R 16
typedef struct ns_boot_batch_ws {
    ns_boot_set_ws one;
    double *cols;
    double *mid;    /* H doubles: a replicate's values between the pivots */
    size_t *order;  /* H: a large set's heads in their full-sample order */
    size_t passes, full, net;
    size_t *from;   /* nsets, or NULL: with it, the sets' networks run chunk by chunk of
                       replicates over every set (faster: the chunk's rows stay in the cache);
                       without, set by set. The same values either way. */
} ns_boot_batch_ws;
void ns_boot_set_medians(const double *x, size_t R, size_t H, const ns_boot_sets *sets,
                         ns_boot_batch_ws *ws, double *out);

/* The C library's log for a finite positive x, +inf for +inf, NaN otherwise. */
double ns_boot_log(double x);
/* Least-squares slope of v against u over the m points where sel[j] (sums left to right):
 * NaN with fewer than two points or a result that is not finite. */
double ns_boot_slope(const double *u, const double *v, const unsigned char *sel, size_t m);

/* The 0-based order statistics of the percentile interval of B replicates: k - 1 and B - k,
 * k = floor(0.025 B). NS_ERR_INVALID when B is too small for any. */
int ns_boot_ranks(size_t B, size_t *lo, size_t *hi, ns_err *err);
/* The percentile interval of reps[0..B) (reordered): *lo, *hi the order statistics lo_rank and
 * hi_rank (0-based; ns_boot_ranks's); both NaN when a replicate is NaN. Ranks within B / 16 of
 * the ends (the 95 % interval's) are found by two heaps, the lo_rank + 1 smallest and the
 * B - hi_rank largest, in one pass each; other ranks, or replicates holding a -0 (equal to +0
 * with other bits), by selection. The same values either way: an order statistic is one number
 * whichever method finds it. */
void ns_boot_interval(double *reps, size_t B, size_t lo_rank, size_t hi_rank, double *lo,
                      double *hi);

#endif

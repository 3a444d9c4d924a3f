/* ns_boot_shard: what the shard bootstrap needs of one slice (one normalizer, L, layer and head;
 * analysis/ns_reduce.h): per cell and shard, the sum (row order) and count of the non-missing
 * values of each metric whose mean the catalogue uses, and the maximum of jac_exact
 * (docs/STATISTICS.md, "Per-head statistics, to the bit"), and the rows themselves of the three
 * distances the KS tests compare (d against d_expected and d_random); the same bytes whichever
 * process computes them. Also the arithmetic of sharing them over ranks: shares, the cost-weighted
 * assignment of units of work, the bytes a rank holds. */
#ifndef NS_BOOT_SHARD_H
#define NS_BOOT_SHARD_H

#include <stddef.h>

#include "analysis/ns_metrics.h"
#include "analysis/ns_reduce.h"
#include "common/ns_error.h"

/* The metrics whose per-head mean over rows the catalogue aggregates, (T, N) cells each, in the
 * order of the catalogue (distance, distance_expected, distance_random, distance_bound, ns_frac,
 * ns_upper, ns_lower). */
#define NS_BOOT_MEANS 7
extern const ns_metric_id ns_boot_mean_metric[NS_BOOT_MEANS];

/* The most bytes of the blocks one rank holds to compute the intervals (1 GiB by default): a
 * rank holds the pieces of the T parts its units of work read (analysis/ns_intervals.h: at most
 * ceil(G / P) groups' worth) and, while they travel, the blocks of a few slices it reduced
 * (ns_boot_shard_rank_bytes); a run whose largest rank would hold more gets no intervals. */
#define NS_BOOT_SHARD_MAX_BYTES 1073741824.0
/* The blocks a rank reduces and sends in one round (at least one slice's): 32 MiB, or an eighth
 * of a lower limit per rank. */
#define NS_BOOT_SHARD_ROUND_BYTES 33554432.0

/* The samples of the KS tests, in this order: distance, distance_expected, distance_random. */
#define NS_BOOT_KS_SAMPLES 3
extern const ns_metric_id ns_boot_ks_metric[NS_BOOT_KS_SAMPLES];

/* A slice's block is T-first: nT parts of ns_boot_shard_tsize doubles, part t holding what
 * group (normalizer, T) needs of the slice, in two pieces: first what its means read
 * (ns_boot_shard_front doubles: [mean k][n] {sums[S], counts[S]}, then entropy_norm's
 * {sums[S], counts[S]}, then jac_exact's maxima[S] (-inf: no value)), then what its KS tests read
 * (the KS samples' [k][n] values[S rows], shard-major, NaN: missing). The two pieces may go to
 * different ranks (ns_intervals.h's units). */
size_t ns_boot_shard_tsize(size_t nN, size_t n_shards, size_t rows);
/* Doubles of one slice's block (nT parts). */
size_t ns_boot_shard_size(size_t nT, size_t nN, size_t n_shards, size_t rows);
/* Doubles of a T part's first piece (the means'); the KS piece follows it. */
size_t ns_boot_shard_front(size_t nN, size_t n_shards);
/* Offsets inside a T part's first piece of the sums of mean k at n (counts follow at
 * + n_shards), of entropy_norm's sums, of jac_exact's maxima; inside its KS piece, of KS sample
 * k's rows at n. */
size_t ns_boot_shard_mean(size_t nN, size_t n_shards, size_t k, size_t n);
size_t ns_boot_shard_entropy(size_t nN, size_t n_shards);
size_t ns_boot_shard_jac(size_t nN, size_t n_shards);
size_t ns_boot_shard_ks(size_t nN, size_t n_shards, size_t rows, size_t k, size_t n);

/* Contiguous shares: items [*g0, *g1) of G that rank r of P takes (the reduction's slices). */
void ns_boot_shard_share_of(size_t G, size_t r, size_t P, size_t *g0, size_t *g1);
/* Units [0, U) of work, unit u of kind kind[u] (0 or 1) with the estimated cost cost[u] (>= 0),
 * given to P ranks: in the order of decreasing cost (ties: the lower index first), each goes to
 * the rank with the least load so far (the sum of its units' costs, added in that order; ties:
 * the lower rank) among the ranks that hold fewer than cap[kind[u]] units of its kind: a greedy
 * longest-processing-time assignment, whose result depends only on its arguments. owner[u]
 * receives the rank. P cap[k] must be at least the units of kind k (NS_ERR_INVALID otherwise). */
int ns_boot_shard_assign(const double *cost, const unsigned char *kind, size_t U, size_t P,
                         const size_t cap[2], size_t *owner, ns_err *err);
/* Slices a rank reduces and sends per round: the most whose blocks fit NS_BOOT_SHARD_ROUND_BYTES
 * and an eighth of cap (the limit per rank; <= 0: NS_BOOT_SHARD_MAX_BYTES), at least 1. */
size_t ns_boot_shard_round(size_t slice_doubles, double cap);
/* The most bytes any of P ranks holds for the intervals of a grid of nnorm normalizers, nT T,
 * nN N and per normalizer nsl slices (L x layers x heads), n_shards shards of rows rows, the
 * slices reduced by Pr of the ranks (contiguous shares): at most the T parts of ceil(nnorm nT /
 * P) groups (x nsl parts; the caps of ns_boot_units_assign: that many groups' first pieces and
 * that many groups' KS pieces, whichever units they come from) plus one round's blocks
 * (ns_boot_shard_round slices, at most a reducing rank's share) twice, reduced and sorted by
 * destination (once on one rank, which sends them as they are), rounds sized for the limit cap.
 * Computed in double. */
double ns_boot_shard_rank_bytes(size_t nnorm, size_t nT, size_t nN, size_t nsl, size_t n_shards,
                                size_t rows, size_t P, size_t Pr, double cap);
/* The smallest rank count P (all of them reducing) at which that fits cap bytes: 0 when none
 * does (at nnorm nT ranks each holds one group; more ranks hold no less). */
size_t ns_boot_shard_min_ranks(size_t nnorm, size_t nT, size_t nN, size_t nsl, size_t n_shards,
                               size_t rows, double cap);

/* Fill out[0 .. ns_boot_shard_size) (T parts in order) from the slice's n_shards * rows records
 * (shard then row order, as ns_slice_gather); scratch holds n_shards * rows doubles. */
void ns_boot_shard_slice(const ns_slice_shape *sh, const double *recs, size_t n_shards,
                         size_t rows, size_t stride, double *scratch, double *out);

#endif

/* ns_boot_shard: what the shard bootstrap needs of one slice (one normalizer, L, layer and head;
 * analysis/ns_reduce.h): per cell and shard, the sum (row order) and count of the non-missing
 * values of each metric whose mean the catalogue uses, and the maximum of jac_exact
 * (docs/STATISTICS.md, "Per-head statistics, to the bit"), and the rows themselves of the three
 * distances the KS tests compare (d against d_expected and d_random); the same bytes whichever
 * process computes them. */
#ifndef NS_BOOT_SHARD_H
#define NS_BOOT_SHARD_H

#include <stddef.h>

#include "analysis/ns_metrics.h"
#include "analysis/ns_reduce.h"

/* The metrics whose per-head mean over rows the catalogue aggregates, (T, N) cells each, in the
 * order of the catalogue (distance, distance_expected, distance_random, distance_bound, ns_frac,
 * ns_upper, ns_lower). */
#define NS_BOOT_MEANS 7
extern const ns_metric_id ns_boot_mean_metric[NS_BOOT_MEANS];

/* The most bytes of blocks (every slice's) a run holds to compute the intervals: every rank
 * holds them whole, so a grid whose blocks exceed this (1 GiB) gets no intervals. */
#define NS_BOOT_SHARD_MAX_BYTES 1073741824.0

/* The samples of the KS tests, in this order: distance, distance_expected, distance_random. */
#define NS_BOOT_KS_SAMPLES 3
extern const ns_metric_id ns_boot_ks_metric[NS_BOOT_KS_SAMPLES];

/* Doubles of one slice's block: [mean k][t][n] {sums[S], counts[S]}, then entropy_norm's
 * [t] {sums[S], counts[S]}, then jac_exact's [t] maxima[S] (-inf: no value), then the KS
 * samples' [k][t][n] values[S rows] (shard-major, NaN: missing). */
size_t ns_boot_shard_size(size_t nT, size_t nN, size_t n_shards, size_t rows);
/* Offsets inside a block of the sums of mean k at (t, n) (counts follow at + n_shards), of
 * entropy_norm's sums at t, and of jac_exact's maxima at t. */
size_t ns_boot_shard_mean(size_t nT, size_t nN, size_t n_shards, size_t k, size_t t, size_t n);
size_t ns_boot_shard_entropy(size_t nT, size_t nN, size_t n_shards, size_t t);
size_t ns_boot_shard_jac(size_t nT, size_t nN, size_t n_shards, size_t t);
/* Offset of KS sample k's rows at (t, n). */
size_t ns_boot_shard_ks(size_t nT, size_t nN, size_t n_shards, size_t rows, size_t k, size_t t,
                        size_t n);

/* Fill out[0 .. ns_boot_shard_size) from the slice's n_shards * rows records (shard then row
 * order, as ns_slice_gather); scratch holds n_shards * rows doubles. */
void ns_boot_shard_slice(const ns_slice_shape *sh, const double *recs, size_t n_shards,
                         size_t rows, size_t stride, double *scratch, double *out);

#endif

/* ns_boot_shard: per-shard sums, counts and maxima of a slice (see ns_boot_shard.h). */
#include "analysis/ns_boot_shard.h"

#include <math.h>

const ns_metric_id ns_boot_mean_metric[NS_BOOT_MEANS] = {
    NS_M_DISTANCE, NS_M_DISTANCE_EXPECTED, NS_M_DISTANCE_RANDOM, NS_M_DISTANCE_BOUND,
    NS_M_NS_FRAC, NS_M_NS_UPPER, NS_M_NS_LOWER,
};

const ns_metric_id ns_boot_ks_metric[NS_BOOT_KS_SAMPLES] = {
    NS_M_DISTANCE, NS_M_DISTANCE_EXPECTED, NS_M_DISTANCE_RANDOM,
};

size_t ns_boot_shard_size(size_t nT, size_t nN, size_t n_shards, size_t rows)
{
    return (NS_BOOT_MEANS * nT * nN * 2 + nT * 3) * n_shards +
           NS_BOOT_KS_SAMPLES * nT * nN * n_shards * rows;
}

size_t ns_boot_shard_ks(size_t nT, size_t nN, size_t n_shards, size_t rows, size_t k, size_t t,
                        size_t n)
{
    return (NS_BOOT_MEANS * nT * nN * 2 + nT * 3) * n_shards + ((k * nT + t) * nN + n) *
           n_shards * rows;
}

size_t ns_boot_shard_mean(size_t nT, size_t nN, size_t n_shards, size_t k, size_t t, size_t n)
{
    return ((k * nT + t) * nN + n) * 2 * n_shards;
}

size_t ns_boot_shard_entropy(size_t nT, size_t nN, size_t n_shards, size_t t)
{
    return (NS_BOOT_MEANS * nT * nN + t) * 2 * n_shards;
}

size_t ns_boot_shard_jac(size_t nT, size_t nN, size_t n_shards, size_t t)
{
    return (NS_BOOT_MEANS * nT * nN * 2 + nT * 2 + t) * n_shards;
}

/* Sums (left to right in row order) and counts of each shard's non-missing values. */
static void sums(const double *x, size_t n_shards, size_t rows, double *sum, double *cnt)
{
    for (size_t s = 0; s < n_shards; s++) {
        double a = 0.0, c = 0.0;
        for (size_t r = 0; r < rows; r++) {
            double v = x[s * rows + r];
            if (!isnan(v))
                a += v, c += 1.0;
        }
        sum[s] = a, cnt[s] = c;
    }
}

void ns_boot_shard_slice(const ns_slice_shape *sh, const double *recs, size_t n_shards,
                         size_t rows, size_t stride, double *scratch, double *out)
{
    size_t S = n_shards * rows, nT = sh->nT, nN = sh->nN;
    for (size_t k = 0; k < NS_BOOT_MEANS; k++)
        for (size_t t = 0; t < nT; t++)
            for (size_t n = 0; n < nN; n++) {
                double *o = out + ns_boot_shard_mean(nT, nN, n_shards, k, t, n);
                ns_slice_gather(sh, recs, S, stride, ns_boot_mean_metric[k], t, n, 0, scratch);
                sums(scratch, n_shards, rows, o, o + n_shards);
            }
    for (size_t t = 0; t < nT; t++) {
        double *o = out + ns_boot_shard_entropy(nT, nN, n_shards, t);
        ns_slice_gather(sh, recs, S, stride, NS_M_ENTROPY_NORM, t, 0, 0, scratch);
        sums(scratch, n_shards, rows, o, o + n_shards);
        o = out + ns_boot_shard_jac(nT, nN, n_shards, t);
        ns_slice_gather(sh, recs, S, stride, NS_M_JAC_EXACT, t, 0, 0, scratch);
        for (size_t s = 0; s < n_shards; s++) {
            double m = -INFINITY;
            for (size_t r = 0; r < rows; r++) {
                double v = scratch[s * rows + r];
                if (!isnan(v) && v > m)
                    m = v;
            }
            o[s] = m;
        }
    }
    for (size_t k = 0; k < NS_BOOT_KS_SAMPLES; k++)
        for (size_t t = 0; t < nT; t++)
            for (size_t n = 0; n < nN; n++)
                ns_slice_gather(sh, recs, S, stride, ns_boot_ks_metric[k], t, n, 0,
                                out + ns_boot_shard_ks(nT, nN, n_shards, rows, k, t, n));
}

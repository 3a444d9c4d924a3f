/* ns_boot_shard: per-shard sums, counts and maxima of a slice (see ns_boot_shard.h). */
#include "analysis/ns_boot_shard.h"

#include <math.h>
#include <stddef.h>
#include <stdlib.h>

const ns_metric_id ns_boot_mean_metric[NS_BOOT_MEANS] = {
    NS_M_DISTANCE, NS_M_DISTANCE_EXPECTED, NS_M_DISTANCE_RANDOM, NS_M_DISTANCE_BOUND,
    NS_M_NS_FRAC, NS_M_NS_UPPER, NS_M_NS_LOWER,
};

const ns_metric_id ns_boot_ks_metric[NS_BOOT_KS_SAMPLES] = {
    NS_M_DISTANCE, NS_M_DISTANCE_EXPECTED, NS_M_DISTANCE_RANDOM,
};

size_t ns_boot_shard_tsize(size_t nN, size_t n_shards, size_t rows)
{
    return (NS_BOOT_MEANS * nN * 2 + 3) * n_shards + NS_BOOT_KS_SAMPLES * nN * n_shards * rows;
}

size_t ns_boot_shard_size(size_t nT, size_t nN, size_t n_shards, size_t rows)
{
    return nT * ns_boot_shard_tsize(nN, n_shards, rows);
}

size_t ns_boot_shard_front(size_t nN, size_t n_shards)
{
    return (NS_BOOT_MEANS * nN * 2 + 3) * n_shards;
}

size_t ns_boot_shard_mean(size_t nN, size_t n_shards, size_t k, size_t n)
{
    return (k * nN + n) * 2 * n_shards;
}

size_t ns_boot_shard_entropy(size_t nN, size_t n_shards)
{
    return NS_BOOT_MEANS * nN * 2 * n_shards;
}

size_t ns_boot_shard_jac(size_t nN, size_t n_shards)
{
    return (NS_BOOT_MEANS * nN * 2 + 2) * n_shards;
}

size_t ns_boot_shard_ks(size_t nN, size_t n_shards, size_t rows, size_t k, size_t n)
{
    return (k * nN + n) * n_shards * rows;
}

void ns_boot_shard_share_of(size_t G, size_t r, size_t P, size_t *g0, size_t *g1)
{
    *g0 = G * r / P;
    *g1 = G * (r + 1) / P;
}

/* A unit in the assignment's order: its cost and index. */
typedef struct ranked {
    double cost;
    size_t u;
} ranked;

static int by_cost(const void *x, const void *y)
{
    const ranked *a = x, *b = y;
    if (a->cost != b->cost)
        return a->cost > b->cost ? -1 : 1;
    return (a->u > b->u) - (a->u < b->u);
}

int ns_boot_shard_assign(const double *cost, const unsigned char *kind, size_t U, size_t P,
                         const size_t cap[2], size_t *owner, ns_err *err)
{
    size_t want[2] = {0, 0};
    for (size_t u = 0; u < U; u++)
        want[kind[u] != 0]++;
    for (int k = 0; k < 2; k++)
        if (want[k] && (P == 0 || cap[k] < (want[k] + P - 1) / P))
            return ns_fail(err, NS_ERR_INVALID, "bootstrap: %zu units of kind %d do not fit %zu "
                           "ranks of %zu each", want[k], k, P, cap[k]);
    ranked *order = malloc((U ? U : 1) * sizeof *order);
    double *load = calloc(P ? P : 1, sizeof *load);
    size_t *held = calloc(2 * (P ? P : 1), sizeof *held);
    if (!order || !load || !held) {
        free(order), free(load), free(held);
        return ns_fail(err, NS_ERR_NOMEM, "bootstrap: out of memory (%zu units of work)", U);
    }
    for (size_t u = 0; u < U; u++)
        order[u] = (ranked){cost[u], u};
    qsort(order, U, sizeof *order, by_cost);
    for (size_t i = 0; i < U; i++) {
        size_t u = order[i].u, k = kind[u] != 0, best = P;
        for (size_t r = 0; r < P; r++)
            if (held[2 * r + k] < cap[k] && (best == P || load[r] < load[best]))
                best = r;
        owner[u] = best; /* best < P: the caps hold every unit (checked above) */
        load[best] += order[i].cost;
        held[2 * best + k]++;
    }
    free(order), free(load), free(held);
    return NS_OK;
}

size_t ns_boot_shard_round(size_t slice_doubles, double cap)
{
    double lim = (cap > 0 ? cap : NS_BOOT_SHARD_MAX_BYTES) / 8.0;
    lim = lim < NS_BOOT_SHARD_ROUND_BYTES ? lim : NS_BOOT_SHARD_ROUND_BYTES;
    double k = lim / ((double)slice_doubles * sizeof(double));
    return k >= 1.0 ? (size_t)k : 1;
}

double ns_boot_shard_rank_bytes(size_t nnorm, size_t nT, size_t nN, size_t nsl, size_t n_shards,
                                size_t rows, size_t P, size_t Pr, double cap)
{
    double part = (double)ns_boot_shard_tsize(nN, n_shards, rows), G = (double)nnorm * (double)nT;
    double groups = P ? ceil(G / (double)P) : G, slice = part * (double)nT;
    double round = (double)ns_boot_shard_round(ns_boot_shard_size(nT, nN, n_shards, rows), cap);
    /* a round holds at most the slices of a reducing rank's share */
    double sl = Pr ? ceil((double)nnorm * (double)nsl / (double)Pr) : (double)nnorm * (double)nsl;
    double copies = P > 1 ? 2.0 : 1.0; /* one rank sends its blocks as they are */
    return sizeof(double) * (groups * (double)nsl * part + copies * (round < sl ? round : sl) *
                             slice);
}

size_t ns_boot_shard_min_ranks(size_t nnorm, size_t nT, size_t nN, size_t nsl, size_t n_shards,
                               size_t rows, double cap)
{
    size_t G = nnorm * nT;
    for (size_t P = 1; P <= G; P++)
        if (ns_boot_shard_rank_bytes(nnorm, nT, nN, nsl, n_shards, rows, P, P, cap) <= cap)
            return P;
    return 0;
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
    size_t part = ns_boot_shard_tsize(nN, n_shards, rows);
    for (size_t k = 0; k < NS_BOOT_MEANS; k++)
        for (size_t t = 0; t < nT; t++)
            for (size_t n = 0; n < nN; n++) {
                double *o = out + t * part + ns_boot_shard_mean(nN, n_shards, k, n);
                ns_slice_gather(sh, recs, S, stride, ns_boot_mean_metric[k], t, n, 0, scratch);
                sums(scratch, n_shards, rows, o, o + n_shards);
            }
    for (size_t t = 0; t < nT; t++) {
        double *o = out + t * part + ns_boot_shard_entropy(nN, n_shards);
        ns_slice_gather(sh, recs, S, stride, NS_M_ENTROPY_NORM, t, 0, 0, scratch);
        sums(scratch, n_shards, rows, o, o + n_shards);
        o = out + t * part + ns_boot_shard_jac(nN, n_shards);
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
                                out + t * part + ns_boot_shard_front(nN, n_shards) +
                                    ns_boot_shard_ks(nN, n_shards, rows, k, n));
}

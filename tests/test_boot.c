/* test_boot: the shard bootstrap's arithmetic (src/analysis/ns_boot.c) against plain
 * reimplementations written here: each resample's multiplicities add up to the number of shards;
 * the percentile interval's order statistics equal those of a full sort (ties, infinities); the
 * medians and maxima over head sets equal a per-set sort, with 8 heads (the insertion sort) and
 * with 33 and 144 (GPT-2's: selection), NaN and infinite values among them; a weighted
 * mean with the uniform-count shortcut equals the general one, bit for bit. (The whole catalogue
 * against the report's Python reference: tests/sweep_intervals.sh.) */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/ns_boot.h"
#include "analysis/ns_rng.h"
#include "ns_test.h"

static int cmp(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static int same_bits(double a, double b)
{
    return memcmp(&a, &b, sizeof a) == 0;
}

static void test_weights(void)
{
    uint32_t *W = NULL;
    ns_err err;
    CU_ASSERT_EQUAL_FATAL(ns_boot_weights(5, 17, 300, &W, &err), NS_OK);
    size_t zero = 0;
    for (size_t b = 0; b <= 300; b++) {
        unsigned sum = 0;
        for (size_t s = 0; s < 17; s++) {
            sum += W[b * 17 + s];
            zero += W[b * 17 + s] == 0;
            if (b == 0)
                CU_ASSERT_EQUAL(W[s], 1);
        }
        CU_ASSERT_EQUAL(sum, 17);
    }
    /* about (1 - 1/17)^17 = 36 % of the shards are left out of a resample */
    CU_ASSERT(zero > 300 * 17 / 4 && zero < 300 * 17 / 2);
    free(W);
    CU_ASSERT_EQUAL(ns_boot_weights(5, 0, 10, &W, &err), NS_ERR_INVALID);
}

static void test_interval(void)
{
    size_t lo, hi;
    ns_err err;
    CU_ASSERT_EQUAL_FATAL(ns_boot_ranks(2000, &lo, &hi, &err), NS_OK);
    CU_ASSERT_EQUAL(lo, 49);
    CU_ASSERT_EQUAL(hi, 1950);
    CU_ASSERT_EQUAL(ns_boot_ranks(39, &lo, &hi, &err), NS_ERR_INVALID);
    ns_rng r;
    ns_rng_init(&r, 99);
    for (int trial = 0; trial < 50; trial++) {
        size_t B = 1000 + (size_t)trial * 37;
        double *x = malloc(B * sizeof *x), *y = malloc(B * sizeof *y);
        for (size_t i = 0; i < B; i++) {
            x[i] = trial % 3 ? floor(ns_rng_uniform(&r) * 20) : ns_rng_uniform(&r); /* ties */
            if (ns_rng_below(&r, 50) == 0)
                x[i] = ns_rng_below(&r, 2) ? INFINITY : -INFINITY;
        }
        memcpy(y, x, B * sizeof *x);
        qsort(y, B, sizeof *y, cmp);
        double a, b;
        CU_ASSERT_EQUAL_FATAL(ns_boot_ranks(B, &lo, &hi, &err), NS_OK);
        ns_boot_interval(x, B, lo, hi, &a, &b);
        CU_ASSERT(same_bits(a, y[lo]) && same_bits(b, y[hi]));
        x[B / 2] = NAN;
        ns_boot_interval(x, B, lo, hi, &a, &b);
        CU_ASSERT(isnan(a) && isnan(b));
        free(x), free(y);
    }
}

/* The median (or maximum) of set s by sorting its non-NaN members. */
static double plain(const double *x, const unsigned char *m, size_t H, int use_max)
{
    double *v = malloc(H * sizeof *v);
    size_t c = 0;
    for (size_t h = 0; h < H; h++)
        if (m[h] && !isnan(x[h]))
            v[c++] = x[h];
    qsort(v, c, sizeof *v, cmp);
    double out = c == 0 ? NAN : use_max ? v[c - 1] : (v[(c - 1) / 2] + v[c / 2]) / 2;
    free(v);
    return out;
}

static void sets_case(size_t H, ns_rng *r)
{
    size_t nsets = 5;
    double *x = malloc(H * sizeof *x), out[5];
    unsigned char *m = malloc(nsets * H);
    double *vals = malloc(H * sizeof *vals);
    for (int trial = 0; trial < 200; trial++) {
        for (size_t h = 0; h < H; h++) {
            uint64_t k = ns_rng_below(r, 20);
            x[h] = k == 0 ? NAN : k == 1 ? INFINITY : floor(ns_rng_uniform(r) * 30) / 7;
            m[h] = 1;                                  /* all */
            m[H + h] = ns_rng_below(r, 2);             /* a random set */
            m[2 * H + h] = !m[H + h];
            m[3 * H + h] = h < H / 2;                  /* a "layer" */
            m[4 * H + h] = trial % 4 == 0 ? 0 : h % 7 == 3; /* sometimes empty */
        }
        size_t idx[5 * 144], start[6], k = 0;
        for (size_t s = 0; s < nsets; s++) {
            start[s] = k;
            for (size_t h = 0; h < H; h++)
                if (m[s * H + h])
                    idx[k++] = h;
        }
        start[nsets] = k;
        ns_boot_sets sets = {nsets, idx, start};
        ns_boot_set_ws ws = {vals};
        for (int use_max = 0; use_max < 2; use_max++) {
            ns_boot_set_stats(x, H, &sets, use_max, &ws, out);
            for (size_t s = 0; s < nsets; s++) {
                double want = plain(x, m + s * H, H, use_max);
                CU_ASSERT(same_bits(out[s], want) || (isnan(out[s]) && isnan(want)));
            }
        }
    }
    free(x), free(m), free(vals);
}

static void test_sets(void)
{
    ns_rng r;
    ns_rng_init(&r, 7);
    sets_case(8, &r);
    sets_case(33, &r);
    sets_case(144, &r);
}

static void test_wmeans(void)
{
    enum { S = 13, n = 6 };
    double sum[S * n], cnt[S * n], scratch[3 * n], ma[n], mb[n];
    ns_rng r;
    ns_rng_init(&r, 3);
    uint32_t *W = NULL;
    ns_err err;
    CU_ASSERT_EQUAL_FATAL(ns_boot_weights(11, S, 50, &W, &err), NS_OK);
    for (size_t i = 0; i < S * n; i++) {
        sum[i] = ns_rng_uniform(&r) * 3 - 1;
        cnt[i] = (double)(1 + i % n % 3); /* count of lane j: 1 + j % 3, every shard */
    }
    sum[5 * n + 2] = INFINITY;
    for (size_t b = 0; b <= 50; b++) {
        ns_boot_wmeans(W + b * S, sum, cnt, S, n, scratch, ma);
        for (size_t j = 0; j < n; j++)
            scratch[2 * n + j] = cnt[j] * S;
        ns_boot_wmeans(W + b * S, sum, NULL, S, n, scratch, mb);
        for (size_t j = 0; j < n; j++) {
            /* the plain formula, lane by lane */
            double t = 0.0, c = 0.0;
            for (size_t s = 0; s < S; s++)
                if (W[b * S + s]) {
                    t += (double)W[b * S + s] * sum[s * n + j];
                    c += (double)W[b * S + s] * cnt[s * n + j];
                }
            CU_ASSERT(same_bits(ma[j], t / c) && same_bits(mb[j], t / c));
        }
    }
    free(W);
}

int main(void)
{
    if (CU_initialize_registry() != CUE_SUCCESS)
        return 1;
    CU_pSuite s = CU_add_suite("boot", NULL, NULL);
    CU_add_test(s, "resample multiplicities", test_weights);
    CU_add_test(s, "percentile interval vs a full sort", test_interval);
    CU_add_test(s, "medians and maxima over head sets vs per-set sorts", test_sets);
    CU_add_test(s, "weighted means, with and without the uniform-count shortcut", test_wmeans);
    return ns_test_run_all();
}

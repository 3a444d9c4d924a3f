/* test_boot: the shard bootstrap's arithmetic (src/analysis/ns_boot.c) against plain
 * reimplementations written here: each resample's multiplicities add up to the number of shards;
 * the percentile interval's order statistics equal those of a full sort (ties, infinities; the
 * heaps at the 95 % ranks and the selection at central ones); the
 * medians and maxima over head sets equal a per-set sort, with 8 heads (the insertion sort) and
 * with 33 and 144 (GPT-2's: selection), NaN and infinite values among them; a weighted
 * mean with the uniform-count shortcut equals the general one, bit for bit; a cell's KS
 * statistic, sizes and decision under every resample (ns_boot_ks) equal ns_ks_2samp_ws on the
 * resample written out row by row (each shard's rows repeated as often as it is drawn), with ties,
 * missing and infinite values, paired and unpaired samples, exact and asymptotic p-values, 16- and
 * 32-bit counts; the batched medians over head sets equal the replicate-by-replicate ones, and
 * for sets of 33 to 144 heads (the selection shared across replicates) both those and a per-set
 * sort, with ties, +-inf, missing values, even and odd counts, zeros of both signs, and
 * replicates that follow the full sample or not at all; and the comparator network for every set
 * size from 1 to 256, which takes over when they do not. (The whole catalogue against the
 * report's Python reference: tests/sweep_intervals.sh.) */
#include <float.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/ns_boot.h"
#include "analysis/ns_boot_ks.h"
#include "analysis/ns_ks.h"
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
            if (trial % 5 == 4 && ns_rng_below(&r, 10) == 0) /* zeros of both signs */
                x[i] = -0.0;
        }
        memcpy(y, x, B * sizeof *x);
        qsort(y, B, sizeof *y, cmp);
        double a, b;
        CU_ASSERT_EQUAL_FATAL(ns_boot_ranks(B, &lo, &hi, &err), NS_OK);
        /* ranks near the ends: the heaps (with a -0, the selection: qsort's order of -0 and
         * +0 is its own, so only the values are compared there) */
        ns_boot_interval(x, B, lo, hi, &a, &b);
        CU_ASSERT(a == y[lo] && b == y[hi]);
        CU_ASSERT(trial % 5 == 4 || (same_bits(a, y[lo]) && same_bits(b, y[hi])));
        ns_boot_interval(x, B, B / 3, 2 * B / 3, &a, &b); /* central ranks: the selection */
        CU_ASSERT(a == y[B / 3] && b == y[2 * B / 3]);
        CU_ASSERT(trial % 5 == 4 || (same_bits(a, y[B / 3]) && same_bits(b, y[2 * B / 3])));
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

/* The index lists of nsets membership rows m (nsets x H) into idx and start. */
static ns_boot_sets index_sets(const unsigned char *m, size_t nsets, size_t H, size_t *idx,
                               size_t *start)
{
    size_t k = 0;
    for (size_t s = 0; s < nsets; s++) {
        start[s] = k;
        for (size_t h = 0; h < H; h++)
            if (m[s * H + h])
                idx[k++] = h;
    }
    start[nsets] = k;
    return (ns_boot_sets){nsets, idx, start};
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
        size_t idx[5 * 144], start[6];
        ns_boot_sets sets = index_sets(m, nsets, H, idx, start);
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

/* The batched medians (comparator network over replicates) against plain() per replicate: ties,
 * infinities, a set without heads, a set above NS_BOOT_BATCH_MAX heads (the shared selection,
 * here with replicates drawn independently), and sets holding a head with a NaN value in one
 * replicate (at most NS_BOOT_BATCH_MAX heads: the replicate-by-replicate path). */
static void medians_case(size_t H, ns_rng *r)
{
    enum { R = 37, NSETS = 5 };
    double *x = malloc(R * H * sizeof *x), *out = malloc(NSETS * R * sizeof *out);
    double *cols = malloc(NS_BOOT_BATCH_MAX * R * sizeof *cols), *vals = malloc(H * sizeof *vals);
    double *mid = malloc(H * sizeof *mid);
    size_t *order = malloc(H * sizeof *order);
    unsigned char *m = malloc(NSETS * H);
    for (int trial = 0; trial < 50; trial++) {
        for (size_t i = 0; i < R * H; i++) {
            uint64_t k = ns_rng_below(r, 20);
            x[i] = k == 1 ? INFINITY : floor(ns_rng_uniform(r) * 30) / 7;
        }
        if (trial % 3 == 0) /* one NaN: the sets holding head 1 take the general path */
            x[5 * H + 1] = NAN;
        for (size_t h = 0; h < H; h++) {
            m[h] = 1;
            m[H + h] = ns_rng_below(r, 2);
            m[2 * H + h] = !m[H + h];
            m[3 * H + h] = h < H / 2;
            m[4 * H + h] = trial % 4 == 0 ? 0 : h % 7 == 3;
        }
        size_t idx[NSETS * 144], start[NSETS + 1];
        ns_boot_sets sets = index_sets(m, NSETS, H, idx, start);
        size_t from[NSETS]; /* chunk by chunk over the sets, or set by set */
        ns_boot_batch_ws ws = {{vals}, cols, mid, order, 0, 0, 0, trial % 2 ? from : NULL};
        ns_boot_set_medians(x, R, H, &sets, &ws, out);
        for (size_t s = 0; s < NSETS; s++)
            for (size_t b = 0; b < R; b++) {
                double want = plain(x + b * H, m + s * H, H, 0), got = out[s * R + b];
                CU_ASSERT(same_bits(got, want) || (isnan(got) && isnan(want)));
            }
    }
    free(x), free(out), free(cols), free(vals), free(m), free(mid), free(order);
}

/* The comparator network's medians for every set size from 1 to NS_BOOT_BATCH_MAX (the first
 * m of 32 heads; the network keeps only the comparators the middle positions depend on, a
 * different subset for each m) against plain() per replicate, bit for bit: ties and +-inf. */
static void prefix_case(ns_rng *r)
{
    enum { R = 37, H = NS_BOOT_BATCH_MAX, NSETS = NS_BOOT_BATCH_MAX };
    double x[R * H], out[NSETS * R], cols[NS_BOOT_BATCH_MAX * R], vals[H], mid[H];
    size_t order[H], idx[NSETS * H], start[NSETS + 1], bad = 0;
    unsigned char m[NSETS * H];
    for (int trial = 0; trial < 20; trial++) {
        for (size_t i = 0; i < R * H; i++) {
            uint64_t k = ns_rng_below(r, 20);
            x[i] = k == 0 ? INFINITY : k == 1 ? -INFINITY : floor(ns_rng_uniform(r) * 12) / 4;
        }
        for (size_t s = 0; s < NSETS; s++)
            for (size_t h = 0; h < H; h++)
                m[s * H + h] = h <= s;
        ns_boot_sets sets = index_sets(m, NSETS, H, idx, start);
        size_t from[NSETS]; /* 32 sizes: more than the networks one call keeps */
        ns_boot_batch_ws ws = {{vals}, cols, mid, order, 0, 0, 0, trial % 2 ? from : NULL};
        ns_boot_set_medians(x, R, H, &sets, &ws, out);
        for (size_t s = 0; s < NSETS; s++)
            for (size_t b = 0; b < R; b++) {
                double want = plain(x + b * H, m + s * H, H, 0), got = out[s * R + b];
                bad += !same_bits(got, want) && !(isnan(got) && isnan(want)); /* -inf + inf */
            }
    }
    CU_ASSERT_EQUAL(bad, 0);
}

/* One replicate row of the shared selection's cases (kind: 0 a full sample perturbed a little,
 * with a shift common to the heads; 1 every replicate drawn anew, so the full sample's order says
 * nothing; 2 values on a grid of eighths (ties) with +-inf among them; 3 as 0 with missing values
 * (NaN, so even and odd counts), a replicate of NaN only now and then; 4 zeros of both signs
 * among small values of both signs; 5 as 0 but the full sample all NaN; 6 like n_crit / L: a
 * few grid values and +inf). */
static void shared_row(int kind, size_t r, const double *base, size_t H, ns_rng *g, double *row)
{
    double shift = (ns_rng_uniform(g) - 0.5) * 0.05;
    for (size_t h = 0; h < H; h++) {
        double u = ns_rng_uniform(g), e = (ns_rng_uniform(g) - 0.5) * 0.004;
        double v = kind == 1 ? u : base[h] * (1.0 + shift) + e;
        if (kind == 2) {
            v = floor((base[h] + e * 20.0) * 8.0) / 8.0;
            v = u < 0.08 ? INFINITY : u < 0.11 ? -INFINITY : v;
        }
        if (kind == 3 && (u < 0.1 || r % 17 == 5))
            v = NAN;
        if (kind == 4)
            v = u < 0.4 ? (ns_rng_below(g, 2) ? -0.0 : 0.0) : (u - 0.7) * 1e-3;
        if (kind == 5 && r == 0)
            v = NAN;
        if (kind == 6) /* n_crit / L's upper ends: a few grid values, +inf (no N passed) for
                          about half the heads, so the median is often +inf or beside it */
            v = u < 0.03 ? NAN : u < 0.4 + 0.2 * base[h] ? INFINITY : floor(base[h] * 6.0) / 64.0;
        row[h] = v;
    }
}

/* The selection shared across replicates (sets above NS_BOOT_BATCH_MAX heads) against the
 * replicate-by-replicate ns_boot_set_stats (today's path, bit for bit, -0 included) and against
 * plain() (an independent sort; not for kind 4, where qsort may put -0 and +0 in either order),
 * for every set size from 33 to 144 of 144 heads (a random subset, its complement and a layer of
 * 12 beside it). Also that the cases exercise what they are meant to: kind 0 finds nearly every
 * median in one pass (the shared order works), kind 1 and 4 mostly take the replicate-by-replicate
 * path (the heads do not keep their order; a -0 among the values), and fewer than
 * NS_BOOT_SHARED_MIN_R replicates take it. */
static void shared_case(int kind, size_t R, size_t m_from, size_t m_to, ns_rng *g)
{
    enum { H = 144, NSETS = 4 };
    double *x = malloc(R * H * sizeof *x), *out = malloc(NSETS * R * sizeof *out);
    double *cols = malloc(NS_BOOT_BATCH_MAX * R * sizeof *cols), base[H], vals[H], mid[H];
    double ref[NSETS];
    size_t order[H], idx[NSETS * H], start[NSETS + 1], passes = 0, large = 0, full = 0, net = 0;
    unsigned char m_[NSETS * H];
    size_t bad_plain = 0, bad_stats = 0;
    CU_ASSERT_FATAL(x && out && cols);
    for (size_t m = m_from; m <= m_to; m++) {
        for (size_t h = 0; h < H; h++)
            base[h] = ns_rng_uniform(g);
        for (size_t r = 0; r < R; r++)
            shared_row(kind, r, base, H, g, x + r * H);
        size_t left = m; /* set 1: m heads drawn at random, set 2 the others */
        for (size_t h = 0; h < H; h++) {
            m_[h] = 1;
            m_[H + h] = ns_rng_below(g, H - h) < left;
            left -= m_[H + h];
            m_[2 * H + h] = !m_[H + h];
            m_[3 * H + h] = h / 12 == m % 12;
        }
        ns_boot_sets sets = index_sets(m_, NSETS, H, idx, start);
        size_t from[NSETS];
        ns_boot_batch_ws ws = {{vals}, cols, mid, order, 0, 0, 0, m % 2 ? from : NULL};
        ns_boot_set_medians(x, R, H, &sets, &ws, out);
        for (size_t r = 0; r < R; r++) {
            ns_boot_set_ws one = {vals};
            ns_boot_set_stats(x + r * H, H, &sets, 0, &one, ref);
            for (size_t s = 0; s < NSETS; s++) {
                double got = out[s * R + r];
                /* (a set of at most NS_BOOT_BATCH_MAX heads takes the comparator network, which
                 * may order a -0 and a +0 otherwise than ns_boot_set_stats: not compared with
                 * zeros of both signs; the pipeline's means and distances never hold a -0) */
                if (kind != 4 || start[s + 1] - start[s] > NS_BOOT_BATCH_MAX)
                    bad_stats += !same_bits(got, ref[s]) && !(isnan(got) && isnan(ref[s]));
                if (kind != 4) {
                    double want = plain(x + r * H, m_ + s * H, H, 0);
                    bad_plain += !same_bits(got, want) && !(isnan(got) && isnan(want));
                }
            }
        }
        for (size_t s = 0; s < NSETS; s++)
            large += start[s + 1] - start[s] > NS_BOOT_BATCH_MAX ? R : 0;
        passes += ws.passes, full += ws.full, net += ws.net;
    }
    CU_ASSERT_EQUAL(bad_stats, 0);
    CU_ASSERT_EQUAL(bad_plain, 0);
    CU_ASSERT(large > 0);
    if (R < NS_BOOT_SHARED_MIN_R) { /* too few replicates: ns_boot_set_stats's path */
        CU_ASSERT(passes == 0 && full == 0);
    } else {
        if (kind == 0) /* the pivots follow the heads: a second pass is the exception */
            CU_ASSERT(passes < large + large / 10 && full == 0);
        if (kind == 1) /* nothing to follow: the window widens, then the rest of the
                          replicates take the comparator network */
            CU_ASSERT(passes > 0 && net > large / 2);
        if (kind == 4) /* a -0 in nearly every replicate */
            CU_ASSERT(full > large / 2);
    }
    free(x), free(out), free(cols);
}

/* The comparator network for every set size from 1 to 256 (GPT-2's 144 heads and beyond; above
 * NS_BOOT_BATCH_MAX it takes the replicates the shared selection gives up on: values drawn anew
 * in every replicate) against ns_boot_set_stats, bit for bit, and a per-set sort: ties on a grid
 * of quarters, +-inf, a NaN in some replicates (odd and even counts) and zeros of both signs in
 * others (compared with the sort by value only: qsort orders -0 and +0 its own way). Also that
 * the large sets' replicates did take the network, and those with a NaN or a -0 did not. */
static void network_case(ns_rng *g)
{
    enum { H = 256, R = 41, NSETS = 2 };
    double *x = malloc(R * H * sizeof *x), out[NSETS * R], ref[NSETS], vals[H], mid[H];
    double *cols = malloc(NS_BOOT_BATCH_MAX * R * sizeof *cols);
    size_t order[H], idx[NSETS * H], start[NSETS + 1], bad_stats = 0, bad_plain = 0;
    size_t net = 0, want_net = 0;
    unsigned char m_[NSETS * H], odd[R];
    CU_ASSERT_FATAL(x && cols);
    for (size_t m = 1; m <= H; m++) {
        for (size_t r = 0; r < R; r++) {
            int nan = r % 7 == 3, zero = r % 7 == 5;
            for (size_t h = 0; h < H; h++) {
                uint64_t k = ns_rng_below(g, 40);
                double v = k == 0 ? INFINITY : k == 1 ? -INFINITY
                                                      : floor(ns_rng_uniform(g) * 40) / 4 - 5;
                if (nan && k == 2)
                    v = NAN;
                if (zero && k < 12)
                    v = k % 2 ? -0.0 : 0.0;
                x[r * H + h] = v;
            }
        }
        size_t left = m; /* set 0: the first m heads; set 1: m heads drawn at random */
        for (size_t h = 0; h < H; h++) {
            m_[h] = h < m;
            m_[H + h] = ns_rng_below(g, H - h) < left;
            left -= m_[H + h];
        }
        ns_boot_sets sets = index_sets(m_, NSETS, H, idx, start);
        size_t from[NSETS];
        ns_boot_batch_ws ws = {{vals}, cols, mid, order, 0, 0, 0, m % 2 ? from : NULL};
        ns_boot_set_medians(x, R, H, &sets, &ws, out);
        for (size_t r = 0; r < R; r++) {
            ns_boot_set_ws one = {vals};
            ns_boot_set_stats(x + r * H, H, &sets, 0, &one, ref);
            for (size_t s = 0; s < NSETS; s++) {
                double got = out[s * R + r], want = plain(x + r * H, m_ + s * H, H, 0);
                bad_stats += !same_bits(got, ref[s]) && !(isnan(got) && isnan(ref[s]));
                bad_plain += !(got == want || (isnan(got) && isnan(want)));
                odd[r] = 0;
                for (size_t i = start[s]; i < start[s + 1]; i++) {
                    double v = x[r * H + idx[i]];
                    odd[r] |= isnan(v) || (v == 0.0 && signbit(v));
                }
                /* the shared selection's first 16 replicates, then the network but for them */
                want_net += m > NS_BOOT_BATCH_MAX && r >= 16 && !odd[r];
            }
        }
        net += ws.net;
    }
    CU_ASSERT_EQUAL(bad_stats, 0);
    CU_ASSERT_EQUAL(bad_plain, 0);
    CU_ASSERT(want_net > 0);
    CU_ASSERT(net >= want_net); /* ws.net counts the network's lanes, odd ones included */
    free(x), free(cols);
}

static void test_shared(void)
{
    ns_rng g;
    ns_rng_init(&g, 33);
    for (int kind = 0; kind <= 6; kind++)
        shared_case(kind, 41, 33, 144, &g);
    shared_case(1, NS_BOOT_SHARED_MIN_R - 1, 33, 64, &g);
    shared_case(0, 2001, 144, 144, &g); /* GPT-2's every head, B = 2000 */
    shared_case(3, 2001, 143, 143, &g);
    network_case(&g);
}

static void test_sets(void)
{
    ns_rng r;
    ns_rng_init(&r, 7);
    sets_case(8, &r);
    sets_case(33, &r);
    sets_case(144, &r);
    prefix_case(&r);
    medians_case(3, &r);
    medians_case(16, &r);
    medians_case(32, &r);
    medians_case(33, &r);
    medians_case(144, &r);
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

/* ns_boot_wsums against the plain formula, written out: for every resample and column, the
 * sum over the drawn shards in index order (zero-weight shards skipped), bit for bit; n covers
 * the 32-column blocks, the 4-column blocks and the single columns; values of both signs,
 * zeros of both signs, and large and tiny magnitudes (so the order of the additions shows). */
static void wsums_case(size_t S, size_t n, size_t B, ns_rng *r)
{
    size_t R = B + 1;
    uint32_t *W = NULL;
    ns_err err;
    CU_ASSERT_EQUAL_FATAL(ns_boot_weights(5, S, B, &W, &err), NS_OK);
    double *wd = malloc(R * S * sizeof *wd), *x = malloc(S * n * sizeof *x);
    double *out = malloc(R * n * sizeof *out);
    CU_ASSERT_FATAL(wd && x && out);
    for (size_t i = 0; i < R * S; i++)
        wd[i] = (double)W[i];
    for (size_t i = 0; i < S * n; i++) {
        double u = ns_rng_uniform(r);
        x[i] = i % 7 == 0 ? 0.0 : i % 11 == 0 ? -0.0 : (u - 0.5) * (i % 3 == 0 ? 1e12 : 1e-3);
    }
    ns_boot_wsums(wd, x, R, S, n, out);
    size_t bad = 0;
    for (size_t b = 0; b < R; b++)
        for (size_t j = 0; j < n; j++) {
            double t = 0.0;
            for (size_t s = 0; s < S; s++)
                if (W[b * S + s])
                    t += (double)W[b * S + s] * x[s * n + j];
            bad += !same_bits(out[b * n + j], t);
        }
    CU_ASSERT_EQUAL(bad, 0);
    free(W), free(wd), free(x), free(out);
}

static void test_wsums(void)
{
    ns_rng r;
    ns_rng_init(&r, 9);
    wsums_case(1, 1, 20, &r);
    wsums_case(13, 3, 30, &r);
    wsums_case(48, 112, 40, &r);   /* cell_tn's columns: 7 means x 16 heads */
    wsums_case(97, 37, 25, &r);    /* one block of 32, one of 4, one single */
    wsums_case(300, 64, 10, &r);
    wsums_case(2000, 203, 6, &r);  /* column blocks of 64 (1 MiB of rows): 64, 64, 64, 11 */
    wsums_case(5000, 70, 4, &r);   /* blocks of 32 (the least): 32, 32, 6 */
}

/* One KS case over B resamples: S shards of `rows` values each, values v(i) = (i * mult) % mod (ties when mod
 * is small), every `nan_b`-th value of b missing (0: none), a[0] = +inf when inf_a; with general,
 * values of every sign and size instead (full mantissas, magnitudes from 1e-300 to 1e300,
 * subnormals, zeros of both signs, a repeat of an earlier value now and then and the doubles
 * just above and below one: the pooled sort works on all of a double's bits). */
static void ks_case_g(size_t S, size_t rows, unsigned mod, size_t nan_b, int inf_a, double alpha,
                      size_t B, int general)
{
    size_t R = B + 1, m = S * rows;
    uint32_t *W = NULL;
    ns_err err;
    CU_ASSERT_EQUAL_FATAL(ns_boot_weights(11, S, B, &W, &err), NS_OK);
    double *a = malloc(m * sizeof *a), *b = malloc(m * sizeof *b);
    double *ea = malloc(m * S * sizeof *ea), *eb = malloc(m * S * sizeof *eb);
    int64_t *k = malloc(R * sizeof *k), *na = malloc(R * sizeof *na), *nb = malloc(R * sizeof *nb);
    CU_ASSERT_FATAL(a && b && ea && eb && k && na && nb);
    ns_rng g;
    ns_rng_init(&g, 77 + m);
    for (size_t i = 0; i < m; i++) {
        a[i] = (double)((i * 7919u + 13u) % mod) / 8.0;
        b[i] = (double)((i * 104729u + 5u) % mod) / 8.0 + 0.0625 * (double)(i % 3);
        for (int q = 0; q < 2 && general; q++) {
            double *x = q ? b : a, u = ns_rng_uniform(&g) - 0.5;
            uint64_t k = ns_rng_below(&g, 12);
            const double *y = q ? a : b; /* an earlier value, the other sample's */
            x[i] = k < 5 ? u : k == 5 ? u * 1e300 : k == 6 ? u * 1e-300 : k == 7 ? u * 1e-310
                 : k == 8 ? (ns_rng_below(&g, 2) ? -0.0 : 0.0) : !i ? u
                 : k == 9 ? y[i / 2] /* a tie */
                 : nextafter(y[i / 2], k == 10 ? INFINITY : -INFINITY); /* its neighbours */
        }
        if (nan_b && i % nan_b == 1)
            b[i] = NAN;
    }
    if (inf_a)
        a[0] = INFINITY;
    ns_boot_ks *w = NULL;
    ns_ks_ws *kw = NULL;
    CU_ASSERT_EQUAL_FATAL(ns_boot_ks_new(S, rows, R, W, &w, &err), NS_OK);
    CU_ASSERT_EQUAL_FATAL(ns_ks_ws_new(&kw, &err), NS_OK);
    ns_boot_ks_cell(w, a, b, k, na, nb);
    for (size_t r = 0; r < R; r++) {
        /* the resample written out: shard s's rows W times; infinite values left out, as the
         * reference does (NaN: ns_ks_2samp_ws drops them itself) */
        size_t xa = 0, xb = 0;
        for (size_t s = 0; s < S; s++)
            for (uint32_t c = 0; c < W[r * S + s]; c++)
                for (size_t j = s * rows; j < (s + 1) * rows; j++) {
                    if (isfinite(a[j]))
                        ea[xa++] = a[j];
                    eb[xb++] = isinf(b[j]) ? NAN : b[j];
                }
        double D, p;
        CU_ASSERT_EQUAL_FATAL(ns_ks_2samp_ws(ea, xa, eb, xb, kw, &D, &p, NULL, &err), NS_OK);
        size_t nnb = 0;
        for (size_t j = 0; j < xb; j++)
            nnb += !isnan(eb[j]);
        CU_ASSERT_EQUAL(na[r], (int64_t)xa);
        CU_ASSERT_EQUAL(nb[r], (int64_t)nnb);
        /* exact path: D = h / lcm and k / (na nb) are the same rational, each rounded once;
         * asymptotic path: D is scipy's expression max |c_a / na - c_b / nb|: two quotients in
         * [0, 1], each within DBL_EPSILON / 2 of its rational, then their difference rounded,
         * so D is within 1.5 DBL_EPSILON of the rational (absolute), kd within half an ulp */
        double kd = (double)k[r] / (double)(na[r] * nb[r]);
        if (xa <= NS_KS_MAX_EXACT_N && nnb <= NS_KS_MAX_EXACT_N) {
            CU_ASSERT(same_bits(kd, D));
        } else {
            CU_ASSERT(fabs(kd - D) <= 2.0 * DBL_EPSILON);
        }
        int64_t kmax = -1;
        CU_ASSERT_EQUAL(ns_boot_ks_threshold(w, na[r], nb[r], alpha, &kmax, &err), NS_OK);
        CU_ASSERT_EQUAL(k[r] < kmax, p > alpha);
    }
    ns_boot_ks_free(w);
    ns_ks_ws_free(kw);
    free(W), free(a), free(b), free(ea), free(eb), free(k), free(na), free(nb);
}

static void ks_case(size_t S, size_t rows, unsigned mod, size_t nan_b, int inf_a, double alpha,
                    size_t B)
{
    ks_case_g(S, rows, mod, nan_b, inf_a, alpha, B, 0);
}

static void test_ks(void)
{
    ks_case(6, 3, 1000, 0, 0, 0.05, 40); /* paired, few ties: exact p, equal sizes */
    ks_case(6, 3, 5, 0, 0, 0.05, 40); /* many ties */
    ks_case(7, 4, 9, 5, 0, 0.01, 40); /* unpaired (missing values of b): unequal sizes */
    ks_case(5, 2, 1000, 0, 1, 0.2, 40); /* an infinite value of a is left out: unpaired */
    ks_case(9, 1200, 5000, 0, 0, 0.05, 12); /* 10800 values a side: the asymptotic p-value */
    ks_case(9, 1200, 5000, 3, 0, 0.05, 12); /* the same, unequal sizes (one above 10000) */
    ks_case(3, 11000, 50000, 0, 0, 0.05, 4); /* 33000 a side: counts beyond 16 bits */
    ks_case_g(6, 40, 1, 0, 0, 0.05, 40, 1);  /* values of every sign and size, paired */
    ks_case_g(7, 30, 1, 4, 1, 0.01, 40, 1);  /* the same, unpaired */
}

int main(void)
{
    if (CU_initialize_registry() != CUE_SUCCESS)
        return 1;
    CU_pSuite s = CU_add_suite("boot", NULL, NULL);
    CU_add_test(s, "resample multiplicities", test_weights);
    CU_add_test(s, "percentile interval vs a full sort", test_interval);
    CU_add_test(s, "medians and maxima over head sets vs per-set sorts", test_sets);
    CU_add_test(s, "medians of sets of 33 to 144 heads by the shared selection vs per replicate",
                test_shared);
    CU_add_test(s, "weighted means, with and without the uniform-count shortcut", test_wmeans);
    CU_add_test(s, "weighted sums of every resample at once vs the written-out sums", test_wsums);
    CU_add_test(s, "KS statistic and decision of every resample vs the written-out resample",
                test_ks);
    return ns_test_run_all();
}

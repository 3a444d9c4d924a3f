/* test_reduce: ns_reduce summaries against numpy fixtures (tests/data/ks/reduce_cases.txt),
 * infinity and NaN rules, and the mergeable accumulator (Chan merge, fixed-order determinism).
 *
 * Tolerances: min, max and count must be exact (they are order statistics / counts). mean, std
 * and quantiles may differ from numpy by rounding only: we allow 64 ulps of the sample's largest
 * magnitude (64 * DBL_EPSILON * max|x|), the scale of the inputs' own representation error,
 * which also covers cancellation when the spread is small next to the values (large_offset). */
#include <float.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/ns_reduce.h"
#include "common/ns_error.h"
#include "common/ns_file.h"
#include "ns_test.h"
#include "ns_test_ref.h"


static int close_to(double got, double want, double scale)
{
    if (isnan(want))
        return isnan(got);
    return fabs(got - want) <= 64.0 * DBL_EPSILON * scale;
}

static void check_summary(const char *label, const double *x, size_t n, uint64_t count,
                          const double ref[7])
{
    ns_summary s;
    ns_err err;
    CU_ASSERT_EQUAL_FATAL(ns_summary_of(&s, x, n, &err), NS_OK);
    double scale = 0.0;
    for (size_t i = 0; i < n; i++)
        if (!isnan(x[i]) && fabs(x[i]) > scale)
            scale = fabs(x[i]);
    double got[7] = {s.mean, s.std, s.min, s.max, s.q05, s.q50, s.q95};
    int ok = s.count == count;
    for (int k = 0; k < 7; k++) {
        int exact = (k == 2 || k == 3);
        int good = exact ? (got[k] == ref[k] || (isnan(got[k]) && isnan(ref[k])))
                         : close_to(got[k], ref[k], scale);
        if (!good)
            fprintf(stderr, "%s: stat %d got %.17g numpy %.17g\n", label, k, got[k], ref[k]);
        ok = ok && good;
    }
    CU_ASSERT(ok);

    /* the accumulator agrees on count/mean/std/min/max */
    ns_accum acc;
    ns_accum_init(&acc);
    ns_accum_add_array(&acc, x, n);
    uint64_t c;
    double mu, sd, mn, mx;
    ns_accum_result(&acc, &c, &mu, &sd, &mn, &mx);
    CU_ASSERT_EQUAL(c, count);
    CU_ASSERT(close_to(mu, ref[0], scale));
    CU_ASSERT(close_to(sd, ref[1], scale));
    CU_ASSERT(mn == ref[2] || (isnan(mn) && isnan(ref[2])));
    CU_ASSERT(mx == ref[3] || (isnan(mx) && isnan(ref[3])));
}

static void test_fixture(void)
{
    const char *dir = ns_test_env("NS_TEST_DATA_DIR");
    char path[4096];
    snprintf(path, sizeof path, "%s/ks/reduce_cases.txt", dir);
    char *text = NULL;
    size_t len;
    ns_err err;
    CU_ASSERT_EQUAL_FATAL(ns_file_read_all(path, 0, &text, &len, &err), NS_OK);
    size_t n_cases = 0;
    char *save = NULL, *pending = NULL;
    char label[256];
    unsigned long long count = 0;
    double ref[7];
    for (char *l = strtok_r(text, "\n", &save); l; l = strtok_r(NULL, "\n", &save)) {
        if (l[0] == '#')
            continue;
        if (strncmp(l, "reduce ", 7) == 0) {
            CU_ASSERT_EQUAL_FATAL(sscanf(l, "reduce %255s %llu %lf %lf %lf %lf %lf %lf %lf", label,
                                         &count, &ref[0], &ref[1], &ref[2], &ref[3], &ref[4],
                                         &ref[5], &ref[6]),
                                  9);
            pending = l;
        } else if (strncmp(l, "x", 1) == 0 && pending) {
            double v[64];
            size_t n = 0;
            char *s2 = NULL;
            strtok_r(l, " ", &s2);
            for (char *t = strtok_r(NULL, " ", &s2); t && n < 64; t = strtok_r(NULL, " ", &s2))
                v[n++] = strtod(t, NULL);
            check_summary(label, v, n, count, ref);
            pending = NULL;
            n_cases++;
        } else if (strncmp(l, "greduce ", 8) == 0) {
            unsigned long long seed;
            size_t n;
            char kind[16];
            double param, shift;
            CU_ASSERT_EQUAL_FATAL(sscanf(l, "greduce %255s %llu %zu %15s %lf %lf %llu %lf %lf %lf %lf %lf %lf %lf",
                                         label, &seed, &n, kind, &param, &shift, &count, &ref[0],
                                         &ref[1], &ref[2], &ref[3], &ref[4], &ref[5], &ref[6]),
                                  14);
            double *x = ns_test_gen_stream(seed, n, kind, param, shift);
            CU_ASSERT_FATAL(x != NULL);
            check_summary(label, x, n, count, ref);
            free(x);
            n_cases++;
        }
    }
    free(text);
    CU_ASSERT(n_cases >= 30);
}

static void test_quantile_linear(void)
{
    double s[5] = {1, 2, 3, 4, 10};
    CU_ASSERT_EQUAL(ns_quantile_sorted(s, 5, 0.0), 1.0);
    CU_ASSERT_EQUAL(ns_quantile_sorted(s, 5, 1.0), 10.0);
    CU_ASSERT_EQUAL(ns_quantile_sorted(s, 5, 0.5), 3.0);
    /* position 0.95 * 4 = 3.8: 4 + 0.8 * 6 = 8.8 */
    CU_ASSERT_DOUBLE_EQUAL(ns_quantile_sorted(s, 5, 0.95), 8.8, 1e-14);
    CU_ASSERT_DOUBLE_EQUAL(ns_quantile_sorted(s, 5, 0.05), 1.2, 1e-14);
    CU_ASSERT_EQUAL(ns_quantile_sorted(s, 1, 0.3), 1.0);
    CU_ASSERT(isnan(ns_quantile_sorted(s, 0, 0.5)));
    CU_ASSERT(isnan(ns_quantile_sorted(s, 5, 1.5)));
}

static void test_infinities_and_nan(void)
{
    ns_summary s;
    ns_err err;
    double a[4] = {1.0, NAN, 2.0, INFINITY};
    CU_ASSERT_EQUAL(ns_summary_of(&s, a, 4, &err), NS_OK);
    CU_ASSERT_EQUAL(s.count, 3);
    CU_ASSERT(isinf(s.mean) && s.mean > 0);
    CU_ASSERT(isinf(s.std) && s.std > 0);
    CU_ASSERT_EQUAL(s.min, 1.0);
    CU_ASSERT(isinf(s.max));
    CU_ASSERT_DOUBLE_EQUAL(s.q05, 1.1, 1e-14); /* position 0.1 */
    CU_ASSERT_EQUAL(s.q50, 2.0);                /* position 1 exactly: no NaN from inf * 0 */
    CU_ASSERT(isinf(s.q95) && s.q95 > 0);       /* between 2 and +inf */

    double b[2] = {INFINITY, INFINITY};
    CU_ASSERT_EQUAL(ns_summary_of(&s, b, 2, &err), NS_OK);
    CU_ASSERT_EQUAL(s.count, 2);
    CU_ASSERT(isinf(s.mean));
    CU_ASSERT(isnan(s.std)); /* every value the same infinity: spread undefined */
    CU_ASSERT(isinf(s.q50));

    double c[3] = {-INFINITY, 1.0, INFINITY};
    CU_ASSERT_EQUAL(ns_summary_of(&s, c, 3, &err), NS_OK);
    CU_ASSERT(isnan(s.mean));
    CU_ASSERT(isinf(s.std));
    CU_ASSERT_EQUAL(s.q50, 1.0);
    CU_ASSERT(isinf(s.q05) && s.q05 < 0);

    double d[3] = {NAN, NAN, NAN};
    CU_ASSERT_EQUAL(ns_summary_of(&s, d, 3, &err), NS_OK);
    CU_ASSERT_EQUAL(s.count, 0);
    CU_ASSERT(isnan(s.mean) && isnan(s.std) && isnan(s.min) && isnan(s.max));
    CU_ASSERT(isnan(s.q05) && isnan(s.q50) && isnan(s.q95));
    CU_ASSERT_EQUAL(ns_summary_of(&s, NULL, 0, &err), NS_OK);
    CU_ASSERT_EQUAL(s.count, 0);

    /* the accumulator follows the same rules, also across merges */
    ns_accum x, y;
    ns_accum_init(&x);
    ns_accum_init(&y);
    ns_accum_add_array(&x, a, 2);     /* 1, NaN */
    ns_accum_add_array(&y, a + 2, 2); /* 2, +inf */
    ns_accum_merge(&x, &y);
    uint64_t cnt;
    double mu, sd, mn, mx;
    ns_accum_result(&x, &cnt, &mu, &sd, &mn, &mx);
    CU_ASSERT_EQUAL(cnt, 3);
    CU_ASSERT(isinf(mu) && isinf(sd) && isinf(mx));
    CU_ASSERT_EQUAL(mn, 1.0);
    ns_accum_init(&x);
    ns_accum_add_array(&x, d, 3);
    ns_accum_result(&x, &cnt, &mu, &sd, &mn, &mx);
    CU_ASSERT_EQUAL(cnt, 0);
    CU_ASSERT(isnan(mu) && isnan(sd) && isnan(mn) && isnan(mx));
}

/* Partials computed per chunk (shard), by whichever "rank", merged in chunk order: the result
 * is bitwise the same for every assignment of chunks to ranks, and agrees with the two-pass
 * summary of the gathered sample. */
static void test_merge_fixed_order(void)
{
    enum { CHUNKS = 12, PER = 37 };
    double *x = ns_test_gen_stream(99, CHUNKS * PER, "sq", 0, 3.0);
    CU_ASSERT_FATAL(x != NULL);
    for (int i = 0; i < CHUNKS * PER; i += 17)
        x[i] = NAN; /* skipped rows */
    ns_accum part[CHUNKS];
    uint64_t cnt0 = 0;
    double mu0 = 0, sd0 = 0, mn0 = 0, mx0 = 0;
    for (int ranks = 1; ranks <= 5; ranks++) {
        /* round-robin assignment, each rank computing its chunks in its own order */
        for (int r = ranks - 1; r >= 0; r--)
            for (int c = r; c < CHUNKS; c += ranks) {
                ns_accum_init(&part[c]);
                ns_accum_add_array(&part[c], x + c * PER, PER);
            }
        ns_accum total;
        ns_accum_init(&total);
        for (int c = 0; c < CHUNKS; c++)
            ns_accum_merge(&total, &part[c]);
        uint64_t cnt;
        double mu, sd, mn, mx;
        ns_accum_result(&total, &cnt, &mu, &sd, &mn, &mx);
        if (ranks == 1) {
            cnt0 = cnt;
            mu0 = mu;
            sd0 = sd;
            mn0 = mn;
            mx0 = mx;
        } else {
            CU_ASSERT_EQUAL(cnt, cnt0);
            CU_ASSERT_EQUAL(memcmp(&mu, &mu0, sizeof mu), 0);
            CU_ASSERT_EQUAL(memcmp(&sd, &sd0, sizeof sd), 0);
            CU_ASSERT_EQUAL(mn, mn0);
            CU_ASSERT_EQUAL(mx, mx0);
        }
    }
    ns_summary s;
    ns_err err;
    CU_ASSERT_EQUAL_FATAL(ns_summary_of(&s, x, CHUNKS * PER, &err), NS_OK);
    CU_ASSERT_EQUAL(s.count, cnt0);
    CU_ASSERT(close_to(mu0, s.mean, 4.0));
    CU_ASSERT(close_to(sd0, s.std, 4.0));
    CU_ASSERT_EQUAL(s.min, mn0);
    CU_ASSERT_EQUAL(s.max, mx0);
    /* merging an empty partial changes nothing; merging into an empty one copies */
    ns_accum e, t;
    ns_accum_init(&e);
    ns_accum_init(&t);
    ns_accum_merge(&t, &part[3]);
    ns_accum_merge(&t, &e);
    CU_ASSERT_EQUAL(memcmp(&t, &part[3], sizeof t), 0);
    free(x);
}

/* Chan's merge against a direct two-pass computation on two very different halves. */
static void test_chan_merge_accuracy(void)
{
    double a[3] = {1e6, 1e6 + 1, 1e6 + 2}, b[4] = {-5, -6, -7, -8}, all[7];
    memcpy(all, a, sizeof a);
    memcpy(all + 3, b, sizeof b);
    ns_accum x, y;
    ns_accum_init(&x);
    ns_accum_init(&y);
    ns_accum_add_array(&x, a, 3);
    ns_accum_add_array(&y, b, 4);
    ns_accum_merge(&x, &y);
    double mu, sd;
    ns_accum_result(&x, NULL, &mu, &sd, NULL, NULL);
    ns_summary s;
    ns_err err;
    CU_ASSERT_EQUAL_FATAL(ns_summary_of(&s, all, 7, &err), NS_OK);
    CU_ASSERT(close_to(mu, s.mean, 1e6));
    CU_ASSERT(close_to(sd, s.std, 1e6));
    /* closed form: mean (3e6 + 3 - 26) / 7 */
    CU_ASSERT_DOUBLE_EQUAL(mu, (3e6 + 3.0 - 26.0) / 7.0, 1e-8);
}

int main(void)
{
    if (CU_initialize_registry() != CUE_SUCCESS)
        return 1;
    CU_pSuite s = CU_add_suite("reduce", NULL, NULL);
    CU_add_test(s, "summaries vs numpy fixtures", test_fixture);
    CU_add_test(s, "linear quantiles", test_quantile_linear);
    CU_add_test(s, "infinities and NaN", test_infinities_and_nan);
    CU_add_test(s, "fixed-order merge is rank-independent", test_merge_fixed_order);
    CU_add_test(s, "Chan merge accuracy", test_chan_merge_accuracy);
    return ns_test_run_all();
}

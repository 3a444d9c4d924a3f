/* test_reduce: the statistics of one cell (ns_stats) against numpy fixtures
 * (tests/data/ks/reduce_cases.txt) with the infinity and NaN rules, and the slice reduction
 * (ns_reduce_slice) on hand-made row records: every count of METRICS.md sections 4-7 and 9
 * (skipped rows, Theorem 1, Theorem 2's bounds with vacuous and undefined cases, the Jacobian
 * bounds per T and per eps, each with the rows it was checked over), worked out by hand below;
 * both KS tests and n_crit's three outcomes (found, none passes, not computable); the KS values
 * against the scipy fixtures (tests/data/ks/ks_cases.txt).
 *
 * Tolerances: counts, min, max, n_crit and D are exact (counts and order statistics; D is
 * scipy's expression). mean, std and quantiles may differ from numpy by rounding only: 64 ulps of
 * the sample's largest magnitude (64 * DBL_EPSILON * max|x|), the scale of the inputs' own
 * representation error, which also covers cancellation when the spread is small next to the
 * values (large_offset). p-values: 1e-12 relative for the closed forms below (exact
 * permutation counts 2 / C(n1 + n2, n1)), and scipy's own agreement, 1e-6 relative (p >= 1e-12),
 * against the fixtures, as tests/test_ks.c. */
#include <float.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/ns_ks.h"
#include "analysis/ns_metrics.h"
#include "analysis/ns_reduce.h"
#include "analysis/ns_stats.h"
#include "common/ns_error.h"
#include "common/ns_file.h"
#include "ns_test.h"
#include "ns_test_ref.h"

static int close_to(double got, double want, double scale)
{
    if (isnan(want))
        return isnan(got);
    if (isinf(want))
        return got == want;
    return fabs(got - want) <= 64.0 * DBL_EPSILON * scale;
}

/* ---- ns_stats ----------------------------------------------------------------------------- */

static void summary(ns_summary *s, const double *x, size_t n)
{
    double *scratch = malloc((n ? n : 1) * sizeof *scratch);
    CU_ASSERT_FATAL(scratch != NULL);
    ns_summary_compute(s, x, n, scratch);
    free(scratch);
}

static void check_summary(const char *label, const double *x, size_t n, uint64_t count,
                          const double ref[7])
{
    ns_summary s;
    summary(&s, x, n);
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
    CU_ASSERT(isnan(ns_quantile_sorted(s, 5, NAN)));
}

static void test_infinities_and_nan(void)
{
    ns_summary s;
    double a[4] = {1.0, NAN, 2.0, INFINITY};
    summary(&s, a, 4);
    CU_ASSERT_EQUAL(s.count, 3);
    CU_ASSERT(isinf(s.mean) && s.mean > 0);
    CU_ASSERT(isinf(s.std) && s.std > 0);
    CU_ASSERT_EQUAL(s.min, 1.0);
    CU_ASSERT(isinf(s.max));
    CU_ASSERT_DOUBLE_EQUAL(s.q05, 1.1, 1e-14); /* position 0.1 */
    CU_ASSERT_EQUAL(s.q50, 2.0);                /* position 1 exactly: no NaN from inf * 0 */
    CU_ASSERT(isinf(s.q95) && s.q95 > 0);       /* between 2 and +inf */

    double b[2] = {INFINITY, INFINITY};
    summary(&s, b, 2);
    CU_ASSERT_EQUAL(s.count, 2);
    CU_ASSERT(isinf(s.mean));
    CU_ASSERT(isnan(s.std)); /* every value the same infinity: spread undefined */
    CU_ASSERT(isinf(s.q50));

    double c[3] = {-INFINITY, 1.0, INFINITY};
    summary(&s, c, 3);
    CU_ASSERT(isnan(s.mean));
    CU_ASSERT(isinf(s.std));
    CU_ASSERT_EQUAL(s.q50, 1.0);
    CU_ASSERT(isinf(s.q05) && s.q05 < 0);

    double d[3] = {NAN, NAN, NAN};
    summary(&s, d, 3);
    CU_ASSERT_EQUAL(s.count, 0);
    CU_ASSERT(isnan(s.mean) && isnan(s.std) && isnan(s.min) && isnan(s.max));
    CU_ASSERT(isnan(s.q05) && isnan(s.q50) && isnan(s.q95));
    summary(&s, NULL, 0);
    CU_ASSERT_EQUAL(s.count, 0);
    CU_ASSERT(isnan(s.mean));
}

/* The order statistics depend only on the multiset; mean and std on the order only through
 * rounding (pairwise sums): a reversed sample keeps count/min/max/quantiles bitwise and the
 * moments within 64 ulps; the same order gives the same bits. */
static void test_order(void)
{
    enum { n = 333 };
    double *x = ns_test_gen_stream(99, n, "sq", 0, 3.0), y[n];
    CU_ASSERT_FATAL(x != NULL);
    for (int i = 0; i < n; i += 17)
        x[i] = NAN;
    for (int i = 0; i < n; i++)
        y[i] = x[n - 1 - i];
    ns_summary a, b, c;
    summary(&a, x, n);
    summary(&b, y, n);
    summary(&c, x, n);
    CU_ASSERT_EQUAL(a.count, n - 20);
    CU_ASSERT(a.count == b.count && a.min == b.min && a.max == b.max && a.q05 == b.q05 &&
              a.q50 == b.q50 && a.q95 == b.q95);
    CU_ASSERT(close_to(a.mean, b.mean, 4.0) && close_to(a.std, b.std, 4.0));
    CU_ASSERT_EQUAL(memcmp(&a, &c, sizeof a), 0);
    free(x);
}

/* ---- the slice reduction: layout and tables ----------------------------------------------- */

static void test_tables_and_layout(void)
{
    const char *suffix[NS_ST_COUNT_ALL] = {"count", "mean", "std", "min", "max", "q05", "q50", "q95"};
    for (int k = 0; k < NS_ST_COUNT_ALL; k++)
        CU_ASSERT_STRING_EQUAL(ns_stat_info_of((ns_stat_id)k)->suffix, suffix[k]);
    CU_ASSERT_PTR_NULL(ns_stat_info_of(NS_ST_COUNT_ALL));
    CU_ASSERT_PTR_NULL(ns_count_info_of(NS_C_COUNT));
    for (int c = 0; c < NS_C_COUNT; c++) {
        const ns_count_info *ci = ns_count_info_of((ns_count_id)c);
        CU_ASSERT(ci->name && ci->long_name && ci->rule && *ci->rule);
        ns_count_dims want_dims = c == NS_C_JAC_FD_VIOL || c == NS_C_JAC_FD_CHECKED ? NS_CD_TE
                                  : c >= NS_C_JAC_EXACT_VIOL ? NS_CD_T : NS_CD_TN;
        CU_ASSERT_EQUAL(ci->dims, want_dims);
        const char *viol = strstr(ci->name, "_violations");
        if (viol) { /* every violation count has its _checked twin */
            char twin[64];
            snprintf(twin, sizeof twin, "%.*s_checked", (int)(viol - ci->name), ci->name);
            CU_ASSERT_STRING_EQUAL(ns_count_info_of(ci->checked)->name, twin);
            CU_ASSERT_EQUAL(ns_count_info_of(ci->checked)->dims, ci->dims);
        }
        for (int o = 0; o < c; o++)
            CU_ASSERT(strcmp(ci->name, ns_count_info_of((ns_count_id)o)->name) != 0);
    }
    CU_ASSERT_STRING_EQUAL(ns_count_info_of(NS_C_SKIPPED_ROWS)->name, "skipped_rows");
    CU_ASSERT_EQUAL(ns_count_info_of(NS_C_NS_LOWER_VACUOUS)->checked, NS_C_NS_LOWER_CHECKED);
    CU_ASSERT_EQUAL(ns_count_info_of(NS_C_NS_UPPER_VACUOUS)->checked, NS_C_NS_UPPER_CHECKED);

    /* the result array: every part in order, nothing overlapping, total = sum of the parts */
    size_t N[3] = {1, 2, 4};
    double T[2] = {0.5, 0.1};
    ns_row_layout lay;
    ns_row_layout_init(&lay, 2, 2, 3, 0);
    double jb[2] = {0.5, M_SQRT2}; /* min(1/(4T), sqrt 2) */
    ns_slice_shape sh = {.lay = &lay, .L = 4, .N = N, .nN = 3, .T = T, .nT = 2,
                         .jac_bound = jb, .neps = 3, .ks_alpha = 0.01};
    ns_slice_layout sl;
    ns_slice_layout_init(&sl, &sh);
    size_t off = 0;
    for (int m = 0; m < NS_M_COUNT; m++) {
        ns_metric_dims dims = ns_metric_info_of((ns_metric_id)m)->dims;
        size_t want = dims == NS_DIMS_TN ? 6 : dims == NS_DIMS_T ? 2 : dims == NS_DIMS_TE ? 6 : 1;
        CU_ASSERT_EQUAL(sl.cells[m], want);
        CU_ASSERT_EQUAL(sl.stats[m], off);
        off += want * NS_ST_COUNT_ALL;
    }
    for (int k = 0; k < NS_KS_TESTS; k++) {
        CU_ASSERT_EQUAL(sl.ks_stat[k], off);
        CU_ASSERT_EQUAL(sl.ks_p[k], off + 6);
        CU_ASSERT_EQUAL(sl.n_crit[k], off + 12);
        off += 14;
    }
    for (int c = 0; c < NS_C_COUNT; c++) {
        CU_ASSERT_EQUAL(sl.count[c], off);
        ns_count_dims cd = ns_count_info_of((ns_count_id)c)->dims;
        off += cd == NS_CD_TE ? 6 : cd == NS_CD_T ? 2 : 6;
    }
    CU_ASSERT_EQUAL(sl.total, off);
}

/* ---- the slice reduction on hand-made records --------------------------------------------- */

#define HS 5 /* records of the hand-made slice */

static void put(const ns_row_layout *lay, double *rec, ns_metric_id id, size_t t, size_t n,
                size_t e, double v)
{
    rec[ns_row_index(lay, id, t, n, e)] = v;
}

/* Fill a metric at (t, n, e) of every record from vals[0..S). */
static void put_all(const ns_row_layout *lay, double *recs, size_t S, ns_metric_id id, size_t t,
                    size_t n, size_t e, const double *vals)
{
    for (size_t k = 0; k < S; k++)
        put(lay, recs + k * lay->total, id, t, n, e, vals[k]);
}

/* The hand-made slice: L = 4, grid N = (1, 2, 4) (N = 4 >= L: skipped by every record), T =
 * (0.5, 0.1) (jac_bound 0.5 and sqrt 2), two eps, softmax (d1 per N), five records; record 4 is
 * a row with two keys, so it skips N = 2 too. Values per (t, n), records 0..4 (see the expected
 * counts in test_hand_counts for the reasoning, record by record). */
static void hand_slice(ns_row_layout *lay, double *recs)
{
    const double Q = NAN, I = INFINITY;
    ns_row_layout_init(lay, 2, 2, 2, 1);
    for (size_t q = 0; q < HS * lay->total; q++)
        recs[q] = NAN;
    static const double d[2][2][HS] = {{{1, 2, 3, 4, 5}, {1, 1.2, 2, 1.5, NAN}},
                                       {{10, 2, 3, 4, 5}, {1, 1.2, 2, 1.5, NAN}}};
    const double db[2][HS] = {{2, 2 * (1 - 5e-10), 2.9, 5, 6}, {1, Q, 1, 1.6, Q}};
    const double f[2][HS] = {{1, 1, 1, 1, 1}, {0.5, 0.5, 0, 1, Q}};
    const double lo[2][HS] = {{0.5, Q, -0.2, 1.5, 0.0}, {0.5, 0.25, 0.1, Q, Q}};
    const double up[2][HS] = {{0.95, 1.0, 1 - 1e-13, 0.97, 0.96}, {0.5, 0.4, 0.99, 1.0, Q}};
    const double dexp[2][2][HS] = {{{11, 12, 13, 14, 15}, {1, 1.2, 2, 1.5, Q}},
                                   {{11, 12, 13, 14, 15}, {11, 12, 13, 14, Q}}};
    const double drand[2][2][HS] = {{{1, 2, 3, 4, 5}, {3, 4, 5, 6, Q}},
                                    {{21, 22, 23, 24, 25}, {21, 22, 23, 24, Q}}};
    const double d1[2][HS] = {{0.5, 0.6, 0.7, 0.8, 0.9}, {1.5, 1.6, 1.7, 1.8, Q}};
    for (size_t t = 0; t < 2; t++)
        for (size_t n = 0; n < 2; n++) {
            put_all(lay, recs, HS, NS_M_DISTANCE, t, n, 0, d[t][n]);
            put_all(lay, recs, HS, NS_M_DISTANCE_BOUND, t, n, 0, db[n]);
            put_all(lay, recs, HS, NS_M_NS_FRAC, t, n, 0, f[n]);
            put_all(lay, recs, HS, NS_M_NS_LOWER, t, n, 0, lo[n]);
            put_all(lay, recs, HS, NS_M_NS_UPPER, t, n, 0, up[n]);
            put_all(lay, recs, HS, NS_M_DISTANCE_EXPECTED, t, n, 0, dexp[t][n]);
            put_all(lay, recs, HS, NS_M_DISTANCE_RANDOM, t, n, 0, drand[t][n]);
            put_all(lay, recs, HS, NS_M_DISTANCE_D1, t, n, 0, d1[n]); /* one slot per N */
        }
    const double je[2][HS] = {{0.4, 0.5 * (1 + 0.5e-6), 0.5 * (1 + 2e-6), Q, 1.0}, {1.5, 1, 1, 1, 1}};
    const double jl[2][HS] = {{0.3, 1, 1, 1, Q}, {2, 2, 2, 2, 2}};
    const double jf[2][2][HS] = {{{0.6, Q, 0.2, 0.7, I}, {0.1, 0.1, 0.1, 0.1, 0.1}},
                                 {{1, 1, 1, 1, 1}, {1, 1, 1, 1, 1.5}}};
    const double h[2][HS] = {{0.5, 1.0, 1.5, 2.0, 0.7}, {0.1, 0.2, 0.3, 0.4, 0.5}};
    const double delta[HS] = {0.1, 0.2, 0.3, 0.4, 0.5};
    for (size_t t = 0; t < 2; t++) {
        put_all(lay, recs, HS, NS_M_JAC_EXACT, t, 0, 0, je[t]);
        put_all(lay, recs, HS, NS_M_JAC_LEMMA2, t, 0, 0, jl[t]);
        put_all(lay, recs, HS, NS_M_ENTROPY, t, 0, 0, h[t]);
        double hn[HS]; /* stored by the kernel: entropy / log(keys); record 4 has two keys */
        for (size_t k = 0; k < HS; k++)
            hn[k] = h[t][k] / log(k == 4 ? 2.0 : 4.0);
        put_all(lay, recs, HS, NS_M_ENTROPY_NORM, t, 0, 0, hn);
        for (size_t e = 0; e < 2; e++)
            put_all(lay, recs, HS, NS_M_JAC_FD, t, 0, e, jf[t][e]);
    }
    put_all(lay, recs, HS, NS_M_DELTA, 0, 0, 0, delta);
}

typedef struct hand_run {
    ns_row_layout lay;
    ns_slice_shape sh;
    ns_slice_layout sl;
    double *out;
} hand_run;

static size_t hN[3] = {1, 2, 4};
static double hT[2] = {0.5, 0.1};
static double hJB[2] = {0.5, M_SQRT2}; /* the Jacobian bound min(1/(4T), sqrt 2) at hT */

static void hand_reduce(hand_run *h, double *recs)
{
    hand_slice(&h->lay, recs);
    h->sh = (ns_slice_shape){.lay = &h->lay, .L = 4, .N = hN, .nN = 3, .T = hT,
                             .nT = 2, .jac_bound = hJB, .neps = 2, .ks_alpha = 0.05};
    ns_slice_layout_init(&h->sl, &h->sh);
    h->out = malloc(h->sl.total * sizeof(double));
    CU_ASSERT_FATAL(h->out != NULL);
    ns_reduce_ws *ws = NULL;
    ns_err err;
    CU_ASSERT_EQUAL_FATAL(ns_reduce_ws_new(HS, &ws, &err), NS_OK);
    CU_ASSERT_EQUAL_FATAL(ns_reduce_slice(&h->sh, recs, HS, h->lay.total, ws, h->out, &err), NS_OK);
    /* more samples than the workspace holds: refused */
    CU_ASSERT_EQUAL(ns_reduce_slice(&h->sh, recs, HS + 1, h->lay.total, ws, h->out, &err),
                    NS_ERR_INVALID);
    ns_reduce_ws_free(ws);
}

/* Expected counts at [t][n] (N = 1, 2, 4), worked out from hand_slice record by record:
 * skipped: N = 2 loses record 4 (two keys), N = 4 every record.
 * Theorem 1 (d > d_bound + 1e-9 |d_bound|), checked where both exist:
 *   N = 1: record 1 is 1e-9 above a bound of 2 - 1e-9: inside the slack; record 2 (3 > 2.9)
 *     violates, and at T = 0.1 record 0 too (10 > 2); N = 2: d_bound missing for record 1,
 *     record 2 violates (2 > 1), record 0 ties (1 = 1: no).
 * ns_upper (ns_frac > ns_upper): N = 1: every record but 1 (1 > 1 is false; 1 > 1 - 1e-13 is
 *     true): 4 of 5, vacuous (>= 1 - 1e-12) records 1 and 2; N = 2: record 1 (0.5 > 0.4), vacuous
 *     record 3 (1.0).
 * ns_lower (ns_frac < ns_lower, where defined): N = 1: record 1 undefined, record 3 violates
 *     (1 < 1.5), vacuous (<= 0) records 2 (-0.2) and 4 (0.0); N = 2: record 3 undefined, record 2
 *     violates (0 < 0.1), record 0 ties (0.5 = 0.5: no).
 * jac_exact > jac_bound (0.5 at T = 0.5, sqrt 2 at T = 0.1) with 1e-6 relative slack, over
 *     every record once (N skips none of them: the Jacobian does not depend on N): T = 0.5: record 1 is 0.5e-6 above (no), record 2 2e-6 above (yes),
 *     record 3 missing, record 4 (1.0) yes; T = 0.1: record 0 (1.5 > 1.414).
 * lemma2 (jac_exact > jac_lemma2): T = 0.5: records 0, 1, 2 have both, record 0 violates
 *     (0.4 > 0.3); T = 0.1: never.
 * jac_fd per eps: T = 0.5, eps 0: record 1 missing, records 0 (0.6), 3 (0.7), 4 (+inf)
 *     violate; eps 1: never; T = 0.1: eps 0 never, eps 1 record 4 (1.5 > 1.414). */
static const double want_tn[NS_C_COUNT][2][3] = {
    [NS_C_SKIPPED_ROWS] = {{0, 1, 5}, {0, 1, 5}},
    [NS_C_THM1_VIOL] = {{1, 1, 0}, {2, 1, 0}},
    [NS_C_THM1_CHECKED] = {{5, 3, 0}, {5, 3, 0}},
    [NS_C_NS_UPPER_VIOL] = {{4, 1, 0}, {4, 1, 0}},
    [NS_C_NS_UPPER_CHECKED] = {{5, 4, 0}, {5, 4, 0}},
    [NS_C_NS_LOWER_VIOL] = {{1, 1, 0}, {1, 1, 0}},
    [NS_C_NS_LOWER_CHECKED] = {{4, 3, 0}, {4, 3, 0}},
    [NS_C_NS_LOWER_VACUOUS] = {{2, 0, 0}, {2, 0, 0}},
    [NS_C_NS_UPPER_VACUOUS] = {{2, 1, 0}, {2, 1, 0}},
    [NS_C_NS_LOWER_UNDEFINED] = {{1, 1, 0}, {1, 1, 0}},
};
/* The Jacobian counts at [t] (each row once, whatever N skips: the Jacobian does not depend on
 * N), and jac_fd's at [t][e]. */
static const double want_t[NS_C_COUNT][2] = {
    [NS_C_JAC_EXACT_VIOL] = {2, 1},
    [NS_C_JAC_EXACT_CHECKED] = {4, 5},
    [NS_C_LEMMA2_VIOL] = {1, 0},
    [NS_C_LEMMA2_CHECKED] = {3, 5},
};
static const double want_fd_viol[2][2] = {{3, 0}, {0, 1}};
static const double want_fd_checked[2][2] = {{4, 5}, {5, 5}};

static void test_hand_counts(void)
{
    static double recs[HS * 256];
    hand_run h;
    hand_reduce(&h, recs);
    int bad = 0;
    for (int c = 0; c < NS_C_COUNT; c++) {
        const ns_count_info *ci = ns_count_info_of((ns_count_id)c);
        size_t nn = ci->dims == NS_CD_TN ? 3u : 1u, ne = ci->dims == NS_CD_TE ? 2u : 1u;
        for (size_t t = 0; t < 2; t++)
            for (size_t n = 0; n < nn; n++)
                for (size_t e = 0; e < ne; e++) {
                    double got = h.out[h.sl.count[c] + (t * nn + n) * ne + e];
                    double want = c == NS_C_JAC_FD_VIOL      ? want_fd_viol[t][e]
                                  : c == NS_C_JAC_FD_CHECKED ? want_fd_checked[t][e]
                                  : ci->dims == NS_CD_T      ? want_t[c][t]
                                                             : want_tn[c][t][n];
                    if (got != want && bad++ < 20)
                        fprintf(stderr, "%s [T=%g N=%zu eps %zu]: %g, expected %g\n", ci->name,
                                hT[t], hN[n], e, got, want);
                }
    }
    CU_ASSERT_EQUAL(bad, 0);
    free(h.out);
}

/* Statistics of the hand-made slice: the cells gather the right values (distance at T = 0.5,
 * N = 1 is 1..5: mean 3, population std sqrt 2, q05 1.2, q95 4.8), skipped cells are empty,
 * d1 has one value per N for every T, entropy_norm is the stored per-row value and n_eff is
 * derived from entropy (exp), +inf is a value. */
static void test_hand_stats(void)
{
    static double recs[HS * 256];
    hand_run h;
    hand_reduce(&h, recs);
#define ST(m, cell, s) h.out[h.sl.stats[m] + (cell) * NS_ST_COUNT_ALL + (s)]
    CU_ASSERT_EQUAL(ST(NS_M_DISTANCE, 0, NS_ST_COUNT), 5);
    CU_ASSERT(close_to(ST(NS_M_DISTANCE, 0, NS_ST_MEAN), 3.0, 5.0));
    CU_ASSERT(close_to(ST(NS_M_DISTANCE, 0, NS_ST_STD), sqrt(2.0), 5.0));
    CU_ASSERT_EQUAL(ST(NS_M_DISTANCE, 0, NS_ST_MIN), 1.0);
    CU_ASSERT_EQUAL(ST(NS_M_DISTANCE, 0, NS_ST_MAX), 5.0);
    CU_ASSERT(close_to(ST(NS_M_DISTANCE, 0, NS_ST_Q05), 1.2, 5.0));
    CU_ASSERT_EQUAL(ST(NS_M_DISTANCE, 0, NS_ST_Q50), 3.0);
    CU_ASSERT(close_to(ST(NS_M_DISTANCE, 0, NS_ST_Q95), 4.8, 5.0));
    /* T = 0.1 (cell 3 + n): record 0 is 10 */
    CU_ASSERT_EQUAL(ST(NS_M_DISTANCE, 3, NS_ST_MAX), 10.0);
    CU_ASSERT(close_to(ST(NS_M_DISTANCE, 3, NS_ST_MEAN), 24.0 / 5.0, 10.0));
    /* N = 2: four records; sorted 1, 1.2, 1.5, 2 */
    CU_ASSERT_EQUAL(ST(NS_M_DISTANCE, 1, NS_ST_COUNT), 4);
    CU_ASSERT(close_to(ST(NS_M_DISTANCE, 1, NS_ST_MEAN), 5.7 / 4.0, 2.0));
    CU_ASSERT(close_to(ST(NS_M_DISTANCE, 1, NS_ST_Q50), 1.35, 2.0));
    CU_ASSERT(close_to(ST(NS_M_DISTANCE, 1, NS_ST_Q05), 1.03, 2.0));
    CU_ASSERT(close_to(ST(NS_M_DISTANCE, 1, NS_ST_Q95), 1.925, 2.0));
    /* N = 4: empty */
    for (size_t t = 0; t < 2; t++) {
        CU_ASSERT_EQUAL(ST(NS_M_NS_FRAC, t * 3 + 2, NS_ST_COUNT), 0);
        CU_ASSERT(isnan(ST(NS_M_NS_FRAC, t * 3 + 2, NS_ST_MEAN)));
        CU_ASSERT(isnan(ST(NS_M_DISTANCE_D1, t * 3 + 2, NS_ST_MAX)));
    }
    /* d1: the same per-N values at both T */
    for (size_t n = 0; n < 2; n++)
        for (int s = 0; s < NS_ST_COUNT_ALL; s++)
            CU_ASSERT_EQUAL(ST(NS_M_DISTANCE_D1, n, s), ST(NS_M_DISTANCE_D1, 3 + n, s));
    CU_ASSERT(close_to(ST(NS_M_DISTANCE_D1, 0, NS_ST_MEAN), 0.7, 1.0));
    CU_ASSERT(close_to(ST(NS_M_DISTANCE_D1, 1, NS_ST_MEAN), 1.65, 2.0));
    /* entropy_norm as stored (record 4 over log 2), n_eff derived from entropy */
    double hsum = (0.5 + 1.0 + 1.5 + 2.0) / log(4.0) + 0.7 / log(2.0);
    double nsum = exp(0.1) + exp(0.2) + exp(0.3) + exp(0.4) + exp(0.5);
    CU_ASSERT(close_to(ST(NS_M_ENTROPY_NORM, 0, NS_ST_MEAN), hsum / 5.0, 2.0));
    CU_ASSERT(close_to(ST(NS_M_ENTROPY_NORM, 0, NS_ST_MAX), 2.0 / log(4.0), 2.0));
    CU_ASSERT(close_to(ST(NS_M_ENTROPY_NORM, 0, NS_ST_MIN), 0.5 / log(4.0), 2.0));
    CU_ASSERT(close_to(ST(NS_M_N_EFF, 1, NS_ST_MEAN), nsum / 5.0, 2.0));
    CU_ASSERT(close_to(ST(NS_M_N_EFF, 1, NS_ST_MIN), exp(0.1), 2.0));
    CU_ASSERT(close_to(ST(NS_M_DELTA, 0, NS_ST_MEAN), 0.3, 1.0));
    CU_ASSERT_EQUAL(ST(NS_M_DELTA, 0, NS_ST_COUNT), 5);
    /* jac_fd at T = 0.5, eps 0: four values, one +inf */
    CU_ASSERT_EQUAL(ST(NS_M_JAC_FD, 0, NS_ST_COUNT), 4);
    CU_ASSERT(isinf(ST(NS_M_JAC_FD, 0, NS_ST_MAX)) && isinf(ST(NS_M_JAC_FD, 0, NS_ST_MEAN)));
    CU_ASSERT_EQUAL(ST(NS_M_JAC_FD, 0, NS_ST_MIN), 0.2);
    /* every cell of every metric equals ns_summary_compute of ns_slice_gather's sample */
    double x[HS];
    int bad = 0;
    for (int m = 0; m < NS_M_COUNT; m++) {
        ns_metric_dims dims = ns_metric_info_of((ns_metric_id)m)->dims;
        for (size_t cell = 0; cell < h.sl.cells[m]; cell++) {
            size_t t = 0, n = 0, e = 0;
            if (dims == NS_DIMS_TN)
                t = cell / 3, n = cell % 3;
            else if (dims == NS_DIMS_T)
                t = cell;
            else if (dims == NS_DIMS_TE)
                t = cell / 2, e = cell % 2;
            ns_slice_gather(&h.sh, recs, HS, h.lay.total, (ns_metric_id)m, t, n, e, x);
            ns_summary s;
            summary(&s, x, HS);
            double want[NS_ST_COUNT_ALL] = {(double)s.count, s.mean, s.std, s.min, s.max, s.q05,
                                            s.q50, s.q95};
            bad += !(memcmp(want, &ST(m, cell, 0), sizeof want) == 0 ||
                     (s.count == 0 && isnan(ST(m, cell, NS_ST_MEAN))));
        }
    }
    CU_ASSERT_EQUAL(bad, 0);
#undef ST
    free(h.out);
}

/* Both KS tests and n_crit on the hand-made slice (ks_alpha = 0.05). Disjoint samples of sizes
 * n1, n2 give D = 1 and the exact two-sided p = 2 / C(n1 + n2, n1): 2/252 for 5 + 5, 2/70 for
 * 4 + 4; identical samples D = 0, p = 1; N = 4 is skipped by every record: NaN.
 *   ks_expected: T = 0.5: N = 1 disjoint (2/252, fails), N = 2 identical (passes) -> n_crit 2;
 *     T = 0.1: N = 1 disjoint (2/252), N = 2 disjoint (2/70 < 0.05) -> none passes: 0.
 *   ks_random: T = 0.5: N = 1 identical -> n_crit 1; T = 0.1: disjoint everywhere -> 0. */
static void test_hand_ks(void)
{
    static double recs[HS * 256];
    hand_run h;
    hand_reduce(&h, recs);
    const double p5 = 2.0 / 252.0, p4 = 2.0 / 70.0, Q = NAN;
    const double wantD[2][2][3] = {{{1, 0, Q}, {1, 1, Q}}, {{0, 1, Q}, {1, 1, Q}}};
    const double wantp[2][2][3] = {{{p5, 1, Q}, {p5, p4, Q}}, {{1, p4, Q}, {p5, p4, Q}}};
    const double wantn[2][2] = {{2, NS_NCRIT_NONE}, {1, NS_NCRIT_NONE}};
    for (int k = 0; k < NS_KS_TESTS; k++) {
        for (size_t t = 0; t < 2; t++) {
            for (size_t n = 0; n < 3; n++) {
                double D = h.out[h.sl.ks_stat[k] + t * 3 + n], p = h.out[h.sl.ks_p[k] + t * 3 + n];
                double wd = wantD[k][t][n], wp = wantp[k][t][n];
                int ok = isnan(wd) ? isnan(D) && isnan(p)
                                   : D == wd && fabs(p - wp) <= 1e-12 * wp;
                CU_ASSERT(ok);
                if (!ok)
                    fprintf(stderr, "KS test %d T=%g N=%zu: D %.17g p %.17g, expected %g %.17g\n",
                            k, hT[t], hN[n], D, p, wd, wp);
            }
            CU_ASSERT_EQUAL(h.out[h.sl.n_crit[k] + t], wantn[k][t]);
        }
    }
    free(h.out);
}

/* A slice whose every N is skipped (rows of one key): KS values NaN, n_crit not computable (-1)
 * for both tests at every T, skipped_rows = S everywhere, no other count, and the per-T metrics
 * still reduced. */
static void test_not_computable(void)
{
    size_t N[2] = {1, 2};
    double T[2] = {1.0, 2.0};
    ns_row_layout lay;
    ns_row_layout_init(&lay, 2, 0, 1, 1);
    double recs[3 * 16];
    for (size_t k = 0; k < 3; k++) {
        double *r = recs + k * lay.total;
        for (size_t q = 0; q < lay.total; q++)
            r[q] = NAN;
        for (size_t t = 0; t < 2; t++) {
            put(&lay, r, NS_M_JAC_EXACT, t, 0, 0, 0.0);
            put(&lay, r, NS_M_ENTROPY, t, 0, 0, 0.0);
            put(&lay, r, NS_M_JAC_FD, t, 0, 0, 0.0);
        }
    }
    double jb[2] = {0.25, 0.125}; /* min(1/(4T), sqrt 2) */
    ns_slice_shape sh = {.lay = &lay, .L = 1, .N = N, .nN = 2, .T = T, .nT = 2,
                         .jac_bound = jb, .neps = 1, .ks_alpha = 0.01};
    ns_slice_layout sl;
    ns_slice_layout_init(&sl, &sh);
    double *out = malloc(sl.total * sizeof *out);
    ns_reduce_ws *ws = NULL;
    ns_err err;
    CU_ASSERT_FATAL(out != NULL);
    CU_ASSERT_EQUAL_FATAL(ns_reduce_ws_new(3, &ws, &err), NS_OK);
    CU_ASSERT_EQUAL_FATAL(ns_reduce_slice(&sh, recs, 3, lay.total, ws, out, &err), NS_OK);
    for (int k = 0; k < NS_KS_TESTS; k++)
        for (size_t t = 0; t < 2; t++) {
            CU_ASSERT_EQUAL(out[sl.n_crit[k] + t], NS_NCRIT_NOT_COMPUTABLE);
            for (size_t n = 0; n < 2; n++)
                CU_ASSERT(isnan(out[sl.ks_stat[k] + t * 2 + n]) && isnan(out[sl.ks_p[k] + t * 2 + n]));
        }
    /* every N skipped: the theorems' counts are empty; the Jacobian's still count each row
     * (they do not depend on N), none of them violating (jac_exact = jac_fd = 0) */
    for (int c = 0; c < NS_C_COUNT; c++) {
        const ns_count_info *ci = ns_count_info_of((ns_count_id)c);
        double want = c == NS_C_SKIPPED_ROWS || c == NS_C_JAC_EXACT_CHECKED ||
                      c == NS_C_JAC_FD_CHECKED ? 3.0 : 0.0;
        CU_ASSERT_EQUAL(ns_count_cells(ci->dims, 2, 2, 1), ci->dims == NS_CD_TN ? 4u : 2u);
        for (size_t i = 0; i < ns_count_cells(ci->dims, 2, 2, 1); i++)
            CU_ASSERT_EQUAL(out[sl.count[c] + i], want);
    }
    CU_ASSERT_EQUAL(out[sl.stats[NS_M_DISTANCE] + NS_ST_COUNT], 0);
    CU_ASSERT_EQUAL(out[sl.stats[NS_M_JAC_EXACT] + NS_ST_COUNT], 3);
    CU_ASSERT_EQUAL(out[sl.stats[NS_M_N_EFF] + NS_ST_MEAN], 1.0);
    CU_ASSERT(isnan(out[sl.stats[NS_M_ENTROPY_NORM] + NS_ST_MEAN])); /* log 1 = 0: undefined */
    ns_reduce_ws_free(ws);
    free(out);
}

/* ns_n_crit directly: the first N whose p exceeds alpha strictly (p = alpha does not pass), also
 * after NaN cells; 0 when some p is computable and none passes; -1 when none is computable or
 * alpha is NaN. */
static void test_n_crit_outcomes(void)
{
    size_t N[4] = {1, 3, 8, 30};
    double a[4] = {0.001, 0.01, 0.2, 0.9};
    CU_ASSERT_EQUAL(ns_n_crit(a, N, 4, 0.01), 8);
    CU_ASSERT_EQUAL(ns_n_crit(a, N, 4, 0.0001), 1);
    double b[4] = {NAN, 0.005, NAN, 0.02};
    CU_ASSERT_EQUAL(ns_n_crit(b, N, 4, 0.01), 30);
    CU_ASSERT_EQUAL(ns_n_crit(b, N, 4, 0.05), NS_NCRIT_NONE);
    double c[4] = {NAN, NAN, NAN, NAN};
    CU_ASSERT_EQUAL(ns_n_crit(c, N, 4, 0.01), NS_NCRIT_NOT_COMPUTABLE);
    CU_ASSERT_EQUAL(ns_n_crit(a, N, 4, NAN), NS_NCRIT_NOT_COMPUTABLE);
    CU_ASSERT_EQUAL(ns_n_crit(a, N, 0, 0.01), NS_NCRIT_NOT_COMPUTABLE);
    CU_ASSERT(NS_NCRIT_NONE != NS_NCRIT_NOT_COMPUTABLE && NS_NCRIT_NONE == 0);
}

/* The KS tests of a slice against scipy's fixtures: every generated case of
 * tests/data/ks/ks_cases.txt with both samples of at most 300 values becomes one slice (distance
 * = sample a, distance_expected and distance_random = sample b, the shorter padded with NaN,
 * which the test drops). D within 1e-12, p within 1e-6 relative (scipy's own agreement, see
 * tests/test_ks.c). */
static void test_ks_fixtures(void)
{
    const char *dir = ns_test_env("NS_TEST_DATA_DIR");
    char path[4096];
    snprintf(path, sizeof path, "%s/ks/ks_cases.txt", dir);
    char *text = NULL;
    size_t len;
    ns_err err;
    CU_ASSERT_EQUAL_FATAL(ns_file_read_all(path, 0, &text, &len, &err), NS_OK);
    size_t N[1] = {1}, cases = 0;
    double T[1] = {1.0};
    ns_row_layout lay;
    ns_row_layout_init(&lay, 1, 1, 1, 1);
    char *save = NULL;
    for (char *l = strtok_r(text, "\n", &save); l; l = strtok_r(NULL, "\n", &save)) {
        char label[256], ka[16], kb[16], meth[16];
        unsigned long long sa, sb;
        size_t na, nb;
        double pa, sha, pb, shb, D, p;
        if (sscanf(l, "gks %255s %llu %zu %15s %lf %lf %llu %zu %15s %lf %lf %lf %lf %15s", label,
                   &sa, &na, ka, &pa, &sha, &sb, &nb, kb, &pb, &shb, &D, &p, meth) != 14 ||
            na > 300 || nb > 300)
            continue;
        double *a = ns_test_gen_stream(sa, na, ka, pa, sha);
        double *b = ns_test_gen_stream(sb, nb, kb, pb, shb);
        size_t S = na > nb ? na : nb;
        double *recs = malloc(S * lay.total * sizeof *recs);
        CU_ASSERT_FATAL(a && b && recs);
        for (size_t k = 0; k < S; k++) {
            double *r = recs + k * lay.total;
            for (size_t q = 0; q < lay.total; q++)
                r[q] = NAN;
            put(&lay, r, NS_M_DISTANCE, 0, 0, 0, k < na ? a[k] : NAN);
            put(&lay, r, NS_M_DISTANCE_EXPECTED, 0, 0, 0, k < nb ? b[k] : NAN);
            put(&lay, r, NS_M_DISTANCE_RANDOM, 0, 0, 0, k < nb ? b[nb - 1 - k] : NAN);
        }
        double jb[1] = {0.25}; /* min(1/(4T), sqrt 2) */
        ns_slice_shape sh = {.lay = &lay, .L = 2, .N = N, .nN = 1, .T = T, .nT = 1,
                             .jac_bound = jb, .neps = 1, .ks_alpha = 0.01};
        ns_slice_layout sl;
        ns_slice_layout_init(&sl, &sh);
        double *out = malloc(sl.total * sizeof *out);
        ns_reduce_ws *ws = NULL;
        CU_ASSERT_FATAL(out != NULL);
        CU_ASSERT_EQUAL_FATAL(ns_reduce_ws_new(S, &ws, &err), NS_OK);
        CU_ASSERT_EQUAL_FATAL(ns_reduce_slice(&sh, recs, S, lay.total, ws, out, &err), NS_OK);
        for (int k = 0; k < NS_KS_TESTS; k++) {
            double gD = out[sl.ks_stat[k]], gp = out[sl.ks_p[k]];
            int ok = fabs(gD - D) <= 1e-12 &&
                     (p >= 1e-12 ? fabs(gp - p) <= 1e-6 * p : fabs(gp - p) <= 1e-12);
            CU_ASSERT(ok);
            if (!ok)
                fprintf(stderr, "%s test %d: D %.17g p %.17g, scipy %.17g %.17g\n", label, k, gD,
                        gp, D, p);
            double wantn = p > 0.01 ? 1.0 : NS_NCRIT_NONE;
            CU_ASSERT_EQUAL(out[sl.n_crit[k]], wantn);
        }
        cases++;
        ns_reduce_ws_free(ws);
        free(out);
        free(recs);
        free(a);
        free(b);
    }
    free(text);
    CU_ASSERT(cases >= 40);
}

int main(void)
{
    if (CU_initialize_registry() != CUE_SUCCESS)
        return 1;
    CU_pSuite s = CU_add_suite("reduce", NULL, NULL);
    CU_add_test(s, "summaries vs numpy fixtures", test_fixture);
    CU_add_test(s, "linear quantiles", test_quantile_linear);
    CU_add_test(s, "infinities and NaN", test_infinities_and_nan);
    CU_add_test(s, "order of the sample", test_order);
    CU_add_test(s, "count and statistic tables, slice layout", test_tables_and_layout);
    CU_add_test(s, "hand-made slice: every count", test_hand_counts);
    CU_add_test(s, "hand-made slice: statistics", test_hand_stats);
    CU_add_test(s, "hand-made slice: KS tests and n_crit", test_hand_ks);
    CU_add_test(s, "every N skipped: n_crit not computable", test_not_computable);
    CU_add_test(s, "n_crit's three outcomes", test_n_crit_outcomes);
    CU_add_test(s, "slice KS tests vs scipy fixtures", test_ks_fixtures);
    return ns_test_run_all();
}

/* test_ks: ns_ks against scipy 1.10 fixtures (tests/data/ks/ks_cases.txt), against a brute-force
 * permutation count, and on closed cases (identical, disjoint samples); ns_n_crit.
 *
 * Tolerances (METRICS.md section 5 contract): D within 1e-12 absolute (D is in [0, 1]; the
 * implementation reproduces scipy's floating-point expression, so in practice it is bitwise);
 * p within 1e-6 relative when scipy's p >= 1e-12 (below that, within 1e-12 absolute). The
 * brute-force comparison uses 1e-12 relative: both sides are exact counts up to rounding. */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/ns_ks_internal.h"
#include "analysis/ns_ks.h"
#include "common/ns_error.h"
#include "common/ns_file.h"
#include "ns_test.h"
#include "ns_test_ref.h"

#define P_RTOL 1e-6
#define P_FLOOR 1e-12
#define D_ATOL 1e-12

static char *fixture_text;
static char **lines;
static size_t n_lines;

static int load_fixture(void)
{
    const char *dir = ns_test_env("NS_TEST_DATA_DIR");
    char path[4096];
    snprintf(path, sizeof path, "%s/ks/ks_cases.txt", dir);
    ns_err err;
    size_t len;
    if (ns_file_read_all(path, 0, &fixture_text, &len, &err) != NS_OK) {
        fprintf(stderr, "%s\n", err.msg);
        return -1;
    }
    size_t cap = 1;
    for (size_t i = 0; i < len; i++)
        cap += fixture_text[i] == '\n';
    lines = calloc(cap, sizeof *lines);
    if (!lines)
        return -1;
    char *save = NULL;
    for (char *l = strtok_r(fixture_text, "\n", &save); l; l = strtok_r(NULL, "\n", &save))
        if (l[0] != '#')
            lines[n_lines++] = l;
    return 0;
}

static int free_fixture(void)
{
    free(lines);
    free(fixture_text);
    return 0;
}


/* Parse whitespace-separated doubles after the first token of line into a fresh array. */
static double *parse_values(char *line, size_t *n)
{
    size_t cap = 16, k = 0;
    double *v = malloc(cap * sizeof *v);
    char *save = NULL;
    strtok_r(line, " ", &save); /* "a" / "b" */
    for (char *t = strtok_r(NULL, " ", &save); t && v; t = strtok_r(NULL, " ", &save)) {
        if (k == cap) {
            cap *= 2;
            double *nv = realloc(v, cap * sizeof *v);
            if (!nv) {
                free(v);
                return NULL;
            }
            v = nv;
        }
        v[k++] = strtod(t, NULL);
    }
    *n = k;
    return v;
}

static double worst_p_rel, worst_d_abs;

static int p_agrees(double mine, double ref)
{
    if (isnan(ref))
        return isnan(mine);
    if (ref >= P_FLOOR) {
        double r = fabs(mine - ref) / ref;
        if (r > worst_p_rel)
            worst_p_rel = r;
        return r <= P_RTOL;
    }
    return fabs(mine - ref) <= P_FLOOR;
}

static int d_agrees(double mine, double ref)
{
    double e = fabs(mine - ref);
    if (e > worst_d_abs)
        worst_d_abs = e;
    return e <= D_ATOL;
}

static void check_case(const char *label, const double *a, size_t na, const double *b, size_t nb,
                       double Dref, double pref, const char *mref, ns_ks_ws *ws)
{
    double D, p;
    ns_ks_method m;
    ns_err err;
    CU_ASSERT_EQUAL_FATAL(ns_ks_2samp_ws(a, na, b, nb, ws, &D, &p, &m, &err), NS_OK);
    int ok_d = d_agrees(D, Dref), ok_p = p_agrees(p, pref);
    int ok_m = (strcmp(mref, "exact") == 0) == (m == NS_KS_EXACT);
    if (!ok_d || !ok_p || !ok_m)
        fprintf(stderr, "case %s: D %.17g (scipy %.17g) p %.17g (scipy %.17g) method %d (%s)\n",
                label, D, Dref, p, pref, (int)m, mref);
    CU_ASSERT(ok_d);
    CU_ASSERT(ok_p);
    CU_ASSERT(ok_m);
}

static void test_fixture_two_sample(void)
{
    ns_ks_ws *ws = NULL;
    ns_err err;
    CU_ASSERT_EQUAL_FATAL(ns_ks_ws_new(&ws, &err), NS_OK);
    size_t n_cases = 0;
    for (size_t i = 0; i < n_lines; i++) {
        char label[256], ma[16], kb[16], mref[16];
        if (strncmp(lines[i], "ks ", 3) == 0) {
            double D, p;
            CU_ASSERT_EQUAL_FATAL(sscanf(lines[i], "ks %255s %lf %lf %15s", label, &D, &p, mref), 4);
            CU_ASSERT_FATAL(i + 2 < n_lines);
            size_t na, nb;
            double *a = parse_values(lines[i + 1], &na);
            double *b = parse_values(lines[i + 2], &nb);
            CU_ASSERT_FATAL(a && b);
            check_case(label, a, na, b, nb, D, p, mref, ws);
            free(a);
            free(b);
            i += 2;
            n_cases++;
        } else if (strncmp(lines[i], "gks ", 4) == 0) {
            unsigned long long sa, sb;
            size_t na, nb;
            double pa, ha, pb, hb, D, p;
            int got = sscanf(lines[i], "gks %255s %llu %zu %15s %lf %lf %llu %zu %15s %lf %lf %lf %lf %15s",
                             label, &sa, &na, ma, &pa, &ha, &sb, &nb, kb, &pb, &hb, &D, &p, mref);
            CU_ASSERT_EQUAL_FATAL(got, 14);
            double *a = ns_test_gen_stream(sa, na, ma, pa, ha);
            double *b = ns_test_gen_stream(sb, nb, kb, pb, hb);
            CU_ASSERT_FATAL(a && b);
            check_case(label, a, na, b, nb, D, p, mref, ws);
            free(a);
            free(b);
            n_cases++;
        }
    }
    ns_ks_ws_free(ws);
    printf("\n  %zu two-sample cases; worst p relative error %.3g, worst D error %.3g\n", n_cases,
           worst_p_rel, worst_d_abs);
    CU_ASSERT(n_cases >= 100);
}

static void test_fixture_distributions(void)
{
    size_t n_k = 0, n_s = 0;
    double worst = 0.0;
    ns_err err;
    for (size_t i = 0; i < n_lines; i++) {
        unsigned long long n;
        double x, ref, mine = NAN;
        if (sscanf(lines[i], "kstwo %llu %lf %lf", &n, &x, &ref) == 3) {
            CU_ASSERT_EQUAL_FATAL(ns_kstwo_sf(x, n, NULL, &mine, &err), NS_OK);
            n_k++;
        } else if (sscanf(lines[i], "smirnov %llu %lf %lf", &n, &x, &ref) == 3) {
            mine = ns_smirnov_sf(n, x);
            n_s++;
        } else {
            continue;
        }
        int ok = p_agrees(mine, ref);
        if (ref >= P_FLOOR && fabs(mine - ref) / ref > worst)
            worst = fabs(mine - ref) / ref;
        if (!ok)
            fprintf(stderr, "%s: got %.17g\n", lines[i], mine);
        CU_ASSERT(ok);
    }
    printf("\n  %zu kstwo + %zu smirnov values; worst relative error %.3g\n", n_k, n_s, worst);
    CU_ASSERT(n_k >= 100 && n_s >= 20);
}

static double binom(unsigned n, unsigned k)
{
    double c = 1.0;
    for (unsigned i = 1; i <= k; i++)
        c = c * (double)(n - k + i) / (double)i;
    return c;
}

/* The test with a temporary workspace. */
static int ks_2samp(const double *a, size_t na, const double *b, size_t nb, double *D, double *p,
                    ns_err *err)
{
    ns_ks_ws *ws = NULL;
    int rc = ns_ks_ws_new(&ws, err);
    if (rc == NS_OK)
        rc = ns_ks_2samp_ws(a, na, b, nb, ws, D, p, NULL, err);
    ns_ks_ws_free(ws);
    return rc;
}

static void test_closed_cases(void)
{
    ns_err err;
    double D, p;
    double x[6] = {0.3, 1.0, 2.5, 4.0, 4.0, 9.0};
    CU_ASSERT_EQUAL(ks_2samp(x, 6, x, 6, &D, &p, &err), NS_OK);
    CU_ASSERT_EQUAL(D, 0.0);
    CU_ASSERT_EQUAL(p, 1.0);

    /* disjoint: D = 1 and exactly two of the C(n+m, n) orderings reach it */
    double a[7] = {1, 2, 3, 4, 5, 6, 7}, b[9] = {10, 11, 12, 13, 14, 15, 16, 17, 18};
    unsigned sizes[][2] = {{5, 7}, {6, 6}, {7, 9}, {1, 1}, {3, 2}};
    for (size_t s = 0; s < sizeof sizes / sizeof sizes[0]; s++) {
        unsigned n = sizes[s][0], m = sizes[s][1];
        CU_ASSERT_EQUAL(ks_2samp(a, n, b, m, &D, &p, &err), NS_OK);
        CU_ASSERT_EQUAL(D, 1.0);
        double want = 2.0 / binom(n + m, n);
        if (want > 1.0)
            want = 1.0;
        CU_ASSERT_DOUBLE_EQUAL(p / want, 1.0, 1e-13);
        CU_ASSERT_EQUAL(ks_2samp(b, m, a, n, &D, &p, &err), NS_OK); /* symmetric */
        CU_ASSERT_DOUBLE_EQUAL(p / want, 1.0, 1e-13);
    }
    /* larger disjoint samples: 2 / C(60, 30) = 1.692e-17 and 2/C(150,50) */
    double big[100];
    for (int i = 0; i < 100; i++)
        big[i] = i;
    CU_ASSERT_EQUAL(ks_2samp(big, 30, big + 30, 30, &D, &p, &err), NS_OK);
    CU_ASSERT_DOUBLE_EQUAL(p / (2.0 / binom(60, 30)), 1.0, 1e-12);
    CU_ASSERT_EQUAL(ks_2samp(big, 50, big + 50, 50, &D, &p, &err), NS_OK);
    CU_ASSERT_DOUBLE_EQUAL(p / (2.0 / binom(100, 50)), 1.0, 1e-12);
}

static void test_nan_and_empty(void)
{
    ns_err err;
    double D, p, Dr, pr;
    double a[5] = {0.1, NAN, 0.5, 0.7, NAN}, a_clean[3] = {0.1, 0.5, 0.7};
    double b[4] = {0.2, 0.3, NAN, 0.9}, b_clean[3] = {0.2, 0.3, 0.9};
    CU_ASSERT_EQUAL(ks_2samp(a, 5, b, 4, &D, &p, &err), NS_OK);
    CU_ASSERT_EQUAL(ks_2samp(a_clean, 3, b_clean, 3, &Dr, &pr, &err), NS_OK);
    CU_ASSERT_EQUAL(D, Dr); /* NaN values are dropped, nothing else changes */
    CU_ASSERT_EQUAL(p, pr);
    double nans[2] = {NAN, NAN};
    CU_ASSERT_EQUAL(ks_2samp(nans, 2, b, 4, &D, &p, &err), NS_OK);
    CU_ASSERT(isnan(D) && isnan(p));
    CU_ASSERT_EQUAL(ks_2samp(a, 5, NULL, 0, &D, &p, &err), NS_OK);
    CU_ASSERT(isnan(D) && isnan(p));
    CU_ASSERT_EQUAL(ks_2samp(NULL, 3, b, 4, &D, &p, &err), NS_ERR_INVALID);
    CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "NULL"));
}

/* Naive reference for the exact p-value: enumerate every assignment of the n + m pooled ranks
 * to the two samples (no ties) and count those whose D reaches h / lcm. */
static double brute_pvalue(unsigned n, unsigned m, uint64_t h)
{
    unsigned total = n + m;
    uint64_t g = n, r = m;
    while (r) {
        uint64_t t = g % r;
        g = r;
        r = t;
    }
    uint64_t lcm = (uint64_t)n / g * m, sa = lcm / n, sb = lcm / m;
    uint64_t hits = 0, all = 0;
    for (uint32_t mask = 0; mask < (1u << total); mask++) {
        if ((unsigned)__builtin_popcount(mask) != n)
            continue;
        all++;
        int64_t i = 0, j = 0, dmax = 0;
        for (unsigned k = 0; k < total; k++) {
            if (mask >> k & 1)
                i++;
            else
                j++;
            int64_t d = llabs(i * (int64_t)sa - j * (int64_t)sb);
            if (d > dmax)
                dmax = d;
        }
        hits += (uint64_t)dmax >= h;
    }
    return (double)hits / (double)all;
}

static void test_exact_against_enumeration(void)
{
    unsigned sizes[][2] = {{4, 4}, {5, 5}, {3, 7}, {4, 6}, {6, 8}, {7, 7}, {1, 9}, {2, 10}};
    double col[32];
    for (size_t s = 0; s < sizeof sizes / sizeof sizes[0]; s++) {
        unsigned n = sizes[s][0], m = sizes[s][1];
        uint64_t g = n, r = m;
        while (r) {
            uint64_t t = g % r;
            g = r;
            r = t;
        }
        uint64_t lcm = (uint64_t)n / g * m;
        for (uint64_t h = 0; h <= lcm; h++) {
            double want = brute_pvalue(n, m, h);
            double got = ns_ks_exact_pvalue(n, m, h, col);
            double got_swapped = ns_ks_exact_pvalue(m, n, h, col);
            CU_ASSERT(fabs(got - want) <= 1e-12 * want + 1e-15);
            CU_ASSERT(fabs(got_swapped - want) <= 1e-12 * want + 1e-15);
        }
    }
}

/* Naive O(n^2) statistic: the ECDF difference at every pooled value. */
static void test_statistic_against_naive(void)
{
    double a[40], b[33];
    uint64_t s = 12345;
    for (int rep = 0; rep < 20; rep++) {
        for (int i = 0; i < 40; i++) {
            s = s * 6364136223846793005ull + 1442695040888963407ull;
            a[i] = (double)(s >> 60); /* 16 levels: many ties within and across samples */
        }
        for (int i = 0; i < 33; i++) {
            s = s * 6364136223846793005ull + 1442695040888963407ull;
            b[i] = (double)(s >> 61) + (rep % 3);
        }
        size_t na = 10 + rep, nb = 33 - rep;
        double want = 0.0;
        for (size_t k = 0; k < na + nb; k++) {
            double v = k < na ? a[k] : b[k - na];
            size_t ca = 0, cb = 0;
            for (size_t i = 0; i < na; i++)
                ca += a[i] <= v;
            for (size_t i = 0; i < nb; i++)
                cb += b[i] <= v;
            double d = fabs((double)ca / (double)na - (double)cb / (double)nb);
            if (d > want)
                want = d;
        }
        /* sort copies (insertion sort: tiny arrays) */
        double sa[40], sb[33];
        memcpy(sa, a, na * sizeof(double));
        memcpy(sb, b, nb * sizeof(double));
        for (size_t i = 1; i < na; i++)
            for (size_t j = i; j > 0 && sa[j - 1] > sa[j]; j--) {
                double t = sa[j];
                sa[j] = sa[j - 1];
                sa[j - 1] = t;
            }
        for (size_t i = 1; i < nb; i++)
            for (size_t j = i; j > 0 && sb[j - 1] > sb[j]; j--) {
                double t = sb[j];
                sb[j] = sb[j - 1];
                sb[j - 1] = t;
            }
        CU_ASSERT_EQUAL(ns_ks_statistic_sorted(sa, na, sb, nb), want);
    }
}

static void test_workspace_reuse_is_stable(void)
{
    ns_ks_ws *ws = NULL;
    ns_err err;
    CU_ASSERT_EQUAL_FATAL(ns_ks_ws_new(&ws, &err), NS_OK);
    double *a = ns_test_gen_stream(7, 12000, "unif", 0, 0.0), *b = ns_test_gen_stream(8, 300, "sq", 0, 0.0);
    double *c = ns_test_gen_stream(9, 50, "unif", 0, 0.1);
    CU_ASSERT_FATAL(a && b && c);
    double D1, p1, D2, p2, D3, p3;
    CU_ASSERT_EQUAL(ns_ks_2samp_ws(a, 12000, b, 300, ws, &D1, &p1, NULL, &err), NS_OK);
    CU_ASSERT_EQUAL(ns_ks_2samp_ws(c, 50, b, 300, ws, &D2, &p2, NULL, &err), NS_OK);
    CU_ASSERT_EQUAL(ns_ks_2samp_ws(a, 12000, b, 300, ws, &D3, &p3, NULL, &err), NS_OK);
    CU_ASSERT_EQUAL(D1, D3);
    CU_ASSERT_EQUAL(p1, p3);
    CU_ASSERT_EQUAL(ks_2samp(c, 50, b, 300, &D3, &p3, &err), NS_OK);
    CU_ASSERT_EQUAL(D2, D3);
    CU_ASSERT_EQUAL(p2, p3);
    free(a);
    free(b);
    free(c);
    ns_ks_ws_free(ws);
}

static void test_n_crit(void)
{
    size_t N[5] = {1, 2, 4, 8, 16};
    double p1[5] = {1e-9, 0.001, 0.02, 0.5, 0.9};
    CU_ASSERT_EQUAL(ns_n_crit(p1, N, 5, 0.01), 4);
    CU_ASSERT_EQUAL(ns_n_crit(p1, N, 5, 0.6), 16);
    CU_ASSERT_EQUAL(ns_n_crit(p1, N, 5, 0.95), NS_NCRIT_NONE); /* computable, none passes */
    double p2[5] = {0.01, 0.01, NAN, 0.0100001, 0.001}; /* strictly greater; NaN never */
    CU_ASSERT_EQUAL(ns_n_crit(p2, N, 5, 0.01), 8);
    double p3[5] = {0.5, 0.0, 0.0, 0.0, 0.0}; /* first grid point already exceeds */
    CU_ASSERT_EQUAL(ns_n_crit(p3, N, 5, 0.01), 1);
    CU_ASSERT_EQUAL(ns_n_crit(p3, N, 0, 0.01), NS_NCRIT_NOT_COMPUTABLE);
    CU_ASSERT_EQUAL(ns_n_crit(p3, N, 5, NAN), NS_NCRIT_NOT_COMPUTABLE);
    double p4[5] = {NAN, NAN, NAN, NAN, NAN}; /* every N skipped: not computable */
    CU_ASSERT_EQUAL(ns_n_crit(p4, N, 5, 0.01), NS_NCRIT_NOT_COMPUTABLE);
    double p5[5] = {0.001, 0.002, NAN, NAN, NAN}; /* some computable, none passes */
    CU_ASSERT_EQUAL(ns_n_crit(p5, N, 5, 0.01), NS_NCRIT_NONE);
}

int main(void)
{
    if (CU_initialize_registry() != CUE_SUCCESS)
        return 1;
    CU_pSuite s = CU_add_suite("ks", NULL, NULL);
    CU_pSuite f = CU_add_suite("ks_fixtures", load_fixture, free_fixture);
    CU_add_test(s, "closed cases: identical, disjoint", test_closed_cases);
    CU_add_test(s, "NaN dropped, empty gives NaN", test_nan_and_empty);
    CU_add_test(s, "exact p vs permutation enumeration", test_exact_against_enumeration);
    CU_add_test(s, "statistic vs naive ECDF scan", test_statistic_against_naive);
    CU_add_test(s, "workspace reuse", test_workspace_reuse_is_stable);
    CU_add_test(s, "n_crit", test_n_crit);
    CU_add_test(f, "two-sample cases vs scipy", test_fixture_two_sample);
    CU_add_test(f, "kstwo.sf and smirnov vs scipy", test_fixture_distributions);
    return ns_test_run_all();
}

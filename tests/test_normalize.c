/* test_normalize: the four normalizers against direct formulas (explicit exp, bisection on the
 * threshold), their sums and supports, and their T -> 0 and T -> inf limits; issue 36's names,
 * parameters and errors, and alpha-entmax against entmax15 (bits) and sparsemax. The values of
 * issue 36's normalizers are checked by tests/norm_rows.sh. */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "norm/ns_jacobian.h"
#include "norm/ns_norm_jac.h"
#include "norm/ns_norm_jac_internal.h"
#include "norm/ns_norm_row.h"
#include "norm/ns_normalize.h"
#include "norm/ns_normalize_internal.h"
#include "ns_test.h"
#include "ns_test_ref.h"

#define NS_LMAX 64

/* Deterministic test data: a small LCG-free hash so the cases do not depend on libc's rand(). */
static double test_uniform(uint64_t *state)
{
    uint64_t x = (*state += 0x9e3779b97f4a7c15ULL);
    x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
    x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
    x ^= x >> 31;
    return (double)(x >> 11) * 0x1.0p-53;
}

static void random_logits(double *z, size_t L, uint64_t seed, double scale)
{
    uint64_t st = seed;
    for (size_t i = 0; i < L; i++)
        z[i] = scale * (2.0 * test_uniform(&st) - 1.0);
}

static double sum_of(const double *a, size_t L)
{
    double s = 0.0;
    for (size_t i = 0; i < L; i++)
        s += a[i];
    return s;
}

static int run(ns_normalizer_kind kind, double s, const double *z, size_t L, double T, double *a)
{
    ns_normalizer f = {.kind = kind, .s = s};
    double work[2 * NS_LMAX];
    ns_err err;
    return ns_normalize(&f, z, L, T, a, work, &err);
}

/* Direct formulas (no shifting, no sorting) */
static void direct_softmax(double *a, const double *z, size_t L, double c)
{
    double sum = 0.0;
    for (size_t i = 0; i < L; i++)
        sum += exp(c * z[i]);
    for (size_t i = 0; i < L; i++)
        a[i] = exp(c * z[i]) / sum;
}

/* sparsemax / entmax15 by bisection on the threshold (tests/ns_test_ref.h). */
static void direct_threshold(double *a, const double *z, size_t L, double T, int entmax)
{
    ns_test_ref_threshold(a, z, L, T, entmax);
}

static void test_names_and_errors(void)
{
    ns_err err;
    ns_normalizer_kind k;
    const char *names[] = {"softmax", "ssmax", "sparsemax", "entmax15"};
    for (int i = 0; i < 4; i++) {
        CU_ASSERT_EQUAL(ns_normalizer_parse(names[i], &k, &err), NS_OK);
        CU_ASSERT_EQUAL((int)k, i);
        CU_ASSERT_STRING_EQUAL(ns_normalizer_name(k), names[i]);
    }
    CU_ASSERT_EQUAL(ns_normalizer_parse("softmaxx", &k, &err), NS_ERR_INVALID);
    CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "softmaxx"));
    double z[2] = {0, 1}, a[2];
    CU_ASSERT_EQUAL(run(NS_NORM_SOFTMAX, 0, z, 2, 0.0, a), NS_ERR_INVALID);
    CU_ASSERT_EQUAL(run(NS_NORM_SOFTMAX, 0, z, 2, -1.0, a), NS_ERR_INVALID);
    CU_ASSERT_EQUAL(run(NS_NORM_SPARSEMAX, 0, z, 0, 1.0, a), NS_ERR_INVALID);
}

/* Sums to 1 within 1e-13 (a few ulps per term over <= 64 terms), non-negative, and agrees with
 * the direct formula within 1e-12 (absolute; the weights are <= 1). */
static void check_against_direct(ns_normalizer_kind kind, double s)
{
    double z[NS_LMAX], a[NS_LMAX], ref[NS_LMAX];
    const double Ts[] = {0.05, 0.3, 1.0, 4.0};
    const size_t Ls[] = {1, 2, 7, 33, 64};
    for (size_t li = 0; li < 5; li++) {
        for (size_t ti = 0; ti < 4; ti++) {
            size_t L = Ls[li];
            double T = Ts[ti];
            random_logits(z, L, 1000 * li + ti + 17, 3.0);
            CU_ASSERT_EQUAL_FATAL(run(kind, s, z, L, T, a), NS_OK);
            switch (kind) {
            case NS_NORM_SOFTMAX: direct_softmax(ref, z, L, 1.0 / T); break;
            case NS_NORM_SSMAX: direct_softmax(ref, z, L, s * log((double)L) / T); break;
            case NS_NORM_SPARSEMAX: direct_threshold(ref, z, L, T, 0); break;
            case NS_NORM_ENTMAX15: direct_threshold(ref, z, L, T, 1); break;
            default: CU_FAIL("not one of the four"); break;
            }
            CU_ASSERT_DOUBLE_EQUAL(sum_of(a, L), 1.0, 1e-13);
            for (size_t i = 0; i < L; i++) {
                CU_ASSERT(a[i] >= 0.0);
                CU_ASSERT_DOUBLE_EQUAL(a[i], ref[i], 1e-12);
                /* support agreement for the sparse ones: zero exactly where the direct formula
                 * is zero (bisection leaves entries within 1e-12 of the threshold ambiguous) */
                if (kind == NS_NORM_SPARSEMAX || kind == NS_NORM_ENTMAX15) {
                    if (ref[i] > 1e-9)
                        CU_ASSERT(a[i] > 0.0);
                    if (ref[i] == 0.0)
                        CU_ASSERT(a[i] < 1e-12);
                }
            }
        }
    }
}

static void test_softmax_direct(void) { check_against_direct(NS_NORM_SOFTMAX, 0); }
static void test_ssmax_direct(void) { check_against_direct(NS_NORM_SSMAX, 0.7); }
static void test_sparsemax_direct(void) { check_against_direct(NS_NORM_SPARSEMAX, 0); }
static void test_entmax_direct(void) { check_against_direct(NS_NORM_ENTMAX15, 0); }

static void test_sparsemax_closed_form(void)
{
    /* z = (1, 0.5, -1), T = 1: support {0, 1}, tau = 0.25 -> (0.75, 0.25, 0) exactly */
    double z[3] = {1.0, 0.5, -1.0}, a[3];
    CU_ASSERT_EQUAL(run(NS_NORM_SPARSEMAX, 0, z, 3, 1.0, a), NS_OK);
    CU_ASSERT_EQUAL(a[0], 0.75);
    CU_ASSERT_EQUAL(a[1], 0.25);
    CU_ASSERT_EQUAL(a[2], 0.0);
    /* T = 2: y = (0.5, 0.25, -0.5), support {0, 1}, tau = (0.5 + 0.25 - 1) / 2 = -0.125,
     * weights (0.625, 0.375, 0) */
    CU_ASSERT_EQUAL(run(NS_NORM_SPARSEMAX, 0, z, 3, 2.0, a), NS_OK);
    CU_ASSERT_DOUBLE_EQUAL(a[0], 0.625, 1e-15);
    CU_ASSERT_DOUBLE_EQUAL(a[1], 0.375, 1e-15);
    CU_ASSERT_EQUAL(a[2], 0.0);
}

static void test_entmax_closed_form(void)
{
    /* two equal logits: (1/2, 1/2). Logits (2, 0) at T = 1: x = z/2 = (1, 0), tau = 0 puts
     * the second weight exactly on the support boundary: weights (1, 0). */
    double z[2] = {3.0, 3.0}, a[2];
    CU_ASSERT_EQUAL(run(NS_NORM_ENTMAX15, 0, z, 2, 1.0, a), NS_OK);
    CU_ASSERT_DOUBLE_EQUAL(a[0], 0.5, 1e-15);
    CU_ASSERT_DOUBLE_EQUAL(a[1], 0.5, 1e-15);
    double z2[2] = {2.0, 0.0};
    CU_ASSERT_EQUAL(run(NS_NORM_ENTMAX15, 0, z2, 2, 1.0, a), NS_OK);
    CU_ASSERT_DOUBLE_EQUAL(a[0], 1.0, 1e-15);
    CU_ASSERT_DOUBLE_EQUAL(a[1], 0.0, 1e-15);
    /* logits (1, 0): x = (1/2, 0), tau solves (1/2 - tau)^2 + tau^2 = 1:
     * tau = (1/2 - sqrt(7/4)) / 2, weights (1/2 - tau)^2 and tau^2 */
    double z3[2] = {1.0, 0.0};
    double tau = (0.5 - sqrt(1.75)) / 2.0;
    CU_ASSERT_EQUAL(run(NS_NORM_ENTMAX15, 0, z3, 2, 1.0, a), NS_OK);
    CU_ASSERT_DOUBLE_EQUAL(a[0], (0.5 - tau) * (0.5 - tau), 1e-15);
    CU_ASSERT_DOUBLE_EQUAL(a[1], tau * tau, 1e-15);
}

/* T -> 0: one-hot at the argmax (exactly, for every normalizer, once the gap / T is large).
 * T -> inf: uniform (softmax, ssmax, entmax15 within 1e-9 at T = 1e10 for |z| <= 3); for
 * sparsemax the projection of the nearly uniform point, exactly 1/L + (z_i - mean z) / T. */
static void test_limits(void)
{
    double z[NS_LMAX], a[NS_LMAX];
    size_t L = 40;
    random_logits(z, L, 99, 3.0);
    size_t am = 0;
    for (size_t i = 1; i < L; i++)
        if (z[i] > z[am])
            am = i;
    double mean = sum_of(z, L) / (double)L;
    for (int k = 0; k < 4; k++) {
        double s = 1.3;
        CU_ASSERT_EQUAL_FATAL(run((ns_normalizer_kind)k, s, z, L, 1e-9, a), NS_OK);
        for (size_t i = 0; i < L; i++)
            CU_ASSERT_EQUAL(a[i], i == am ? 1.0 : 0.0);
        CU_ASSERT_EQUAL_FATAL(run((ns_normalizer_kind)k, s, z, L, 1e10, a), NS_OK);
        for (size_t i = 0; i < L; i++) {
            CU_ASSERT_DOUBLE_EQUAL(a[i], 1.0 / (double)L, 1e-9);
            if (k == NS_NORM_SPARSEMAX)
                CU_ASSERT_DOUBLE_EQUAL(a[i], 1.0 / (double)L + (z[i] - mean) / 1e10, 1e-15);
        }
    }
    /* ssmax at L = 1: log 1 = 0, the single weight is 1 */
    CU_ASSERT_EQUAL(run(NS_NORM_SSMAX, 1.0, z, 1, 0.5, a), NS_OK);
    CU_ASSERT_EQUAL(a[0], 1.0);
}

/* The max subtraction: logits of size 1e4 at T = 1e-2 (z / T = 1e6) stay finite. */
static void test_no_overflow(void)
{
    double z[3] = {1e4, 1e4 - 0.01, -1e4}, a[3];
    CU_ASSERT_EQUAL(run(NS_NORM_SOFTMAX, 0, z, 3, 1e-2, a), NS_OK);
    CU_ASSERT_DOUBLE_EQUAL(a[0], 1.0 / (1.0 + exp(-1.0)), 1e-12);
    CU_ASSERT_DOUBLE_EQUAL(a[1], exp(-1.0) / (1.0 + exp(-1.0)), 1e-12);
    CU_ASSERT_EQUAL(a[2], 0.0);
    for (int k = 0; k < 4; k++) {
        CU_ASSERT_EQUAL(run((ns_normalizer_kind)k, 1.0, z, 3, 1e-2, a), NS_OK);
        for (int i = 0; i < 3; i++)
            CU_ASSERT(isfinite(a[i]));
        CU_ASSERT_DOUBLE_EQUAL(sum_of(a, 3), 1.0, 1e-14);
    }
}

/* ns_softmax_family_row (one exponential per key, what the analysis runs) gives the same bits
 * as ns_normalize and ns_log_weights, and as alpha, the log-weights and sum_i exp(c z_i - max
 * c z)^2 written out here (the definitions, summed in key order): rows of 1 to 64 keys, logits
 * from 0.1 to 1000 in size (alpha underflowing to 0 included), T from 1e-3 to 100, softmax and
 * ssmax. */
static void test_family_row_same_bits(void)
{
    const size_t Ls[] = {1, 2, 5, 64};
    const double Ts[] = {1e-3, 0.01, 0.3, 1.0, 100.0}, scales[] = {0.1, 10.0, 1000.0};
    const ns_normalizer fs[] = {{.kind = NS_NORM_SOFTMAX, .s = 0.0}, {.kind = NS_NORM_SSMAX, .s = 0.7}};
    double z[NS_LMAX], a1[NS_LMAX], a2[NS_LMAX], l1[NS_LMAX], l2[NS_LMAX], work[2 * NS_LMAX];
    int cases = 0, underflow = 0;
    ns_err err;
    for (size_t fi = 0; fi < 2; fi++)
        for (size_t li = 0; li < sizeof Ls / sizeof *Ls; li++)
            for (size_t ti = 0; ti < sizeof Ts / sizeof *Ts; ti++)
                for (size_t si = 0; si < sizeof scales / sizeof *scales; si++) {
                    size_t L = Ls[li];
                    double T = Ts[ti], f2 = -1.0;
                    random_logits(z, L, 1000 + 100 * li + 10 * ti + si, scales[si]);
                    CU_ASSERT_EQUAL_FATAL(ns_normalize(&fs[fi], z, L, T, a1, work, &err), NS_OK);
                    ns_log_weights(&fs[fi], z, a1, L, T, l1);
                    ns_softmax_family_row(&fs[fi], z, L, T, a2, l2, &f2);
                    CU_ASSERT(memcmp(a1, a2, L * sizeof *a1) == 0);
                    CU_ASSERT(memcmp(l1, l2, L * sizeof *l1) == 0);
                    double c = ns_normalizer_inv_temp(&fs[fi], L, T), mx = -INFINITY, ff = 0.0;
                    for (size_t i = 0; i < L; i++)
                        mx = fmax(mx, c * z[i]);
                    double sum = 0.0, lr[NS_LMAX], ar[NS_LMAX];
                    for (size_t i = 0; i < L; i++) {
                        double F = exp(c * z[i] - mx);
                        sum += F;
                        ff += F * F;
                    }
                    for (size_t i = 0; i < L; i++) {
                        ar[i] = exp(c * z[i] - mx) / sum;
                        lr[i] = (c * z[i] - mx) - log(sum);
                    }
                    CU_ASSERT(memcmp(&f2, &ff, sizeof ff) == 0);
                    CU_ASSERT(memcmp(a2, ar, L * sizeof *a2) == 0);
                    CU_ASSERT(memcmp(l2, lr, L * sizeof *l2) == 0);
                    for (size_t i = 0; i < L; i++)
                        underflow += a2[i] == 0.0;
                    cases++;
                }
    CU_ASSERT_EQUAL(cases, 120);
    CU_ASSERT(underflow > 0); /* the cases reach weights that underflow to 0 */
}

/* Labels: the parameter of entmax and sigmoid always, ssmax's only when asked (two ssmax), as
 * the shortest text that reads back as the double; two default sigmoids are the same normalizer. */
static void test_labels(void)
{
    char buf[64];
    ns_normalizer f = {.kind = NS_NORM_ENTMAX, .alpha = 1.3};
    CU_ASSERT_EQUAL(ns_normalizer_label(&f, 0, buf, sizeof buf), 16);
    CU_ASSERT_STRING_EQUAL(buf, "entmax alpha=1.3");
    f.alpha = 1.0 + 0x1p-52;
    ns_normalizer_label(&f, 0, buf, sizeof buf);
    CU_ASSERT_STRING_EQUAL(buf, "entmax alpha=1.0000000000000002");
    CU_ASSERT_EQUAL(strtod(buf + 13, NULL), f.alpha);
    f = ns_normalizer_default(NS_NORM_SIGMOID);
    ns_normalizer_label(&f, 0, buf, sizeof buf);
    CU_ASSERT_STRING_EQUAL(buf, "sigmoid b=-log(L)");
    ns_normalizer g = {.kind = NS_NORM_SIGMOID, .b = -2.0};
    ns_normalizer_label(&g, 0, buf, sizeof buf);
    CU_ASSERT_STRING_EQUAL(buf, "sigmoid b=-2");
    CU_ASSERT(ns_normalizer_same(&f, &f) && !ns_normalizer_same(&f, &g));
    ns_normalizer s1 = {.kind = NS_NORM_SSMAX, .s = 0.1};
    ns_normalizer_label(&s1, 0, buf, sizeof buf);
    CU_ASSERT_STRING_EQUAL(buf, "ssmax");
    ns_normalizer_label(&s1, 1, buf, sizeof buf);
    CU_ASSERT_STRING_EQUAL(buf, "ssmax s=0.1");
    ns_normalizer r = ns_normalizer_default(NS_NORM_SOFTMAX1);
    ns_normalizer_label(&r, 1, buf, sizeof buf);
    CU_ASSERT_STRING_EQUAL(buf, "softmax1");
    for (int k = 0; k <= NS_NORM_STICKBREAKING; k++)
        CU_ASSERT_EQUAL(ns_normalizer_on_simplex((ns_normalizer_kind)k), k <= NS_NORM_ENTMAX);
    /* the sink-excluded view (issue 36, METRICS.md 8.2): ", sink excluded" after the rest; a
     * normalizer and its view are not the same; the longest label fits the 56 announced */
    f.view = NS_VIEW_SINK_EXCLUDED;
    CU_ASSERT_EQUAL(ns_normalizer_label(&f, 0, buf, sizeof buf), 32);
    CU_ASSERT_STRING_EQUAL(buf, "sigmoid b=-log(L), sink excluded");
    ns_normalizer plain = {.kind = NS_NORM_SIGMOID, .b = NAN}, view = plain;
    view.view = NS_VIEW_SINK_EXCLUDED;
    CU_ASSERT(!ns_normalizer_same(&f, &plain));
    CU_ASSERT(ns_normalizer_same(&f, &view));
    s1.view = NS_VIEW_SINK_EXCLUDED;
    ns_normalizer_label(&s1, 1, buf, sizeof buf);
    CU_ASSERT_STRING_EQUAL(buf, "ssmax s=0.1, sink excluded");
    ns_normalizer w = {.kind = NS_NORM_SIGMOID, .b = -0x1.fffffffffffffp-1000,
                       .view = NS_VIEW_SINK_EXCLUDED};
    CU_ASSERT(ns_normalizer_label(&w, 0, buf, sizeof buf) <= 56);
}

/* Issue 36's six names: softmax1 and sigmoid read where a model or training reads a name, the
 * other four refused there (saying they are not yet usable there: ns_normalizer_in_models), all
 * read by ns_normalizer_parse_any (a sweep file, dump) with their defaults;
 * ns_normalize refuses the five off the simplex and an entmax alpha that is not > 1. */
static void test_issue36_names(void)
{
    const char *names[] = {"softmax", "ssmax", "sparsemax", "entmax15", "entmax",
                           "softmax1", "sigmoid", "softpick", "relu", "stickbreaking"};
    ns_err err;
    for (int i = 0; i < 10; i++) {
        ns_normalizer_kind k;
        ns_normalizer f;
        int model = i < 4 || i == NS_NORM_SOFTMAX1 || i == NS_NORM_SIGMOID;
        CU_ASSERT_EQUAL(ns_normalizer_in_models((ns_normalizer_kind)i), model);
        CU_ASSERT_EQUAL(ns_normalizer_parse(names[i], &k, &err), model ? NS_OK : NS_ERR_INVALID);
        if (model) {
            CU_ASSERT_EQUAL((int)k, i);
        } else {
            CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "is not yet usable in a model or in training"));
        }
        CU_ASSERT_EQUAL_FATAL(ns_normalizer_parse_any(names[i], &f, &err), NS_OK);
        CU_ASSERT_EQUAL((int)f.kind, i);
        CU_ASSERT_STRING_EQUAL(ns_normalizer_name(f.kind), names[i]);
    }
    ns_normalizer f;
    ns_normalizer_kind k2;
    CU_ASSERT_EQUAL(ns_normalizer_parse("softmax2", &k2, &err), NS_ERR_INVALID);
    CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "unknown normalizer 'softmax2'"));
    CU_ASSERT_EQUAL(ns_normalizer_parse_any("softmax2", &f, &err), NS_ERR_INVALID);
    CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "'softmax2'"));
    CU_ASSERT_EQUAL(ns_normalizer_default(NS_NORM_SSMAX).s, 1.0);
    CU_ASSERT_EQUAL(ns_normalizer_default(NS_NORM_ENTMAX).alpha, 1.5);
    f = ns_normalizer_default(NS_NORM_SIGMOID);
    CU_ASSERT(isnan(f.b));
    CU_ASSERT_EQUAL(ns_normalizer_sigmoid_bias(&f, 64), -log(64.0));
    f.b = 0.25;
    CU_ASSERT_EQUAL(ns_normalizer_sigmoid_bias(&f, 64), 0.25);
    double z[3] = {0.5, -1.0, 2.0}, a[3], work[6];
    for (int k = NS_NORM_SOFTMAX1; k <= NS_NORM_STICKBREAKING; k++) {
        ns_normalizer g = ns_normalizer_default((ns_normalizer_kind)k);
        CU_ASSERT_EQUAL(ns_normalize(&g, z, 3, 1.0, a, work, &err), NS_ERR_INVALID);
        CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "need not sum to 1"));
    }
    const double bad_alpha[] = {1.0, 0.5, -2.0, NAN, INFINITY};
    for (int i = 0; i < 5; i++) {
        ns_normalizer g = {.kind = NS_NORM_ENTMAX, .alpha = bad_alpha[i]};
        CU_ASSERT_EQUAL(ns_normalize(&g, z, 3, 1.0, a, work, &err), NS_ERR_INVALID);
    }
}

/* alpha-entmax at alpha = 1.5 is entmax15, bit for bit (weights, log-weights, exact Jacobian
 * norm, VJP); at alpha = 2 it is sparsemax within 4 (L + 2) eps: the bisection leaves the
 * threshold within one ulp of |tau| <= 1, each weight x_i - tau then carries that ulp, and the
 * final division by their sum (L terms, each rounded) adds L + 1 more; sparsemax's own threshold
 * is a cumulative sum of up to L terms. The supports agree wherever sparsemax's weight exceeds
 * 1e-12 (closer to the threshold, rounding can decide either way). */
static void test_entmax_alpha(void)
{
    const size_t Ls[] = {1, 2, 7, 33, 64};
    const double Ts[] = {1e-3, 0.05, 0.3, 1.0, 4.0, 100.0};
    double z[NS_LMAX], a1[NS_LMAX], a2[NS_LMAX], l1[NS_LMAX], l2[NS_LMAX], g[NS_LMAX],
        v1[NS_LMAX], v2[NS_LMAX], work[2 * NS_LMAX];
    const ns_normalizer e15 = {.kind = NS_NORM_ENTMAX15}, e150 = {.kind = NS_NORM_ENTMAX, .alpha = 1.5},
                        e2 = {.kind = NS_NORM_ENTMAX, .alpha = 2.0}, sp = {.kind = NS_NORM_SPARSEMAX};
    ns_err err;
    int sparse_rows = 0;
    for (size_t li = 0; li < 5; li++)
        for (size_t ti = 0; ti < 6; ti++) {
            size_t L = Ls[li];
            double T = Ts[ti];
            random_logits(z, L, 7000 + 10 * li + ti, 3.0);
            random_logits(g, L, 9000 + 10 * li + ti, 1.0);
            CU_ASSERT_EQUAL_FATAL(ns_normalize(&e15, z, L, T, a1, work, &err), NS_OK);
            CU_ASSERT_EQUAL_FATAL(ns_normalize(&e150, z, L, T, a2, work, &err), NS_OK);
            CU_ASSERT(memcmp(a1, a2, L * sizeof *a1) == 0);
            ns_log_weights(&e15, z, a1, L, T, l1);
            ns_log_weights(&e150, z, a2, L, T, l2);
            CU_ASSERT(memcmp(l1, l2, L * sizeof *l1) == 0);
            double n1 = ns_jac_exact_norm(&e15, a1, L, T, work), n2 = ns_jac_exact_norm(&e150, a2, L, T, work);
            CU_ASSERT(memcmp(&n1, &n2, sizeof n1) == 0);
            ns_jac_vjp(&e15, a1, g, L, T, v1, work);
            ns_jac_vjp(&e150, a2, g, L, T, v2, work);
            CU_ASSERT(memcmp(v1, v2, L * sizeof *v1) == 0);

            CU_ASSERT_EQUAL_FATAL(ns_normalize(&sp, z, L, T, a1, work, &err), NS_OK);
            CU_ASSERT_EQUAL_FATAL(ns_normalize(&e2, z, L, T, a2, work, &err), NS_OK);
            size_t s1 = 0;
            for (size_t i = 0; i < L; i++) {
                CU_ASSERT_DOUBLE_EQUAL(a2[i], a1[i], 4.0 * (double)(L + 2) * 0x1p-52);
                if (a1[i] > 1e-12)
                    CU_ASSERT(a2[i] > 0.0);
                if (a1[i] == 0.0)
                    CU_ASSERT(a2[i] < 1e-12);
                s1 += a1[i] > 0.0;
            }
            sparse_rows += s1 < L;
        }
    CU_ASSERT(sparse_rows > 10); /* the rows reach supports smaller than L */
}

/* ns_norm_row_eval: bad input refused; on the simplex p is ns_normalize's weights, bit for bit,
 * and m = 1, log m = 0. */
static void test_norm_row_errors(void)
{
    double z[3] = {0.5, -1.0, 2.0}, a[3], p[3], lp[3], work[9], ref[3], w2[6];
    ns_norm_row r = {a, p, lp, 0.0, 0.0, NULL};
    ns_normalizer sm1 = ns_normalizer_default(NS_NORM_SOFTMAX1), sig = {.kind = NS_NORM_SIGMOID, .b = INFINITY};
    ns_err err;
    CU_ASSERT_EQUAL(ns_norm_row_work(3), 9);
    CU_ASSERT_EQUAL(ns_norm_row_eval(&sm1, z, 0, 1.0, &r, work, &err), NS_ERR_INVALID);
    CU_ASSERT_EQUAL(ns_norm_row_eval(&sm1, z, 3, 0.0, &r, work, &err), NS_ERR_INVALID);
    CU_ASSERT_EQUAL(ns_norm_row_eval(&sm1, z, 3, INFINITY, &r, work, &err), NS_ERR_INVALID);
    CU_ASSERT_EQUAL(ns_norm_row_eval(&sig, z, 3, 1.0, &r, work, &err), NS_ERR_INVALID);
    double zbig[3] = {1e300, 0.0, 1.0};
    CU_ASSERT_EQUAL(ns_norm_row_eval(&sm1, zbig, 3, 1e-300, &r, work, &err), NS_ERR_INVALID);
    CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "key 0"));
    for (int k = NS_NORM_SOFTMAX; k <= NS_NORM_ENTMAX; k++) {
        ns_normalizer f = ns_normalizer_default((ns_normalizer_kind)k);
        if (k == NS_NORM_ENTMAX)
            f.alpha = 1.7;
        CU_ASSERT_EQUAL_FATAL(ns_norm_row_eval(&f, z, 3, 0.4, &r, work, &err), NS_OK);
        CU_ASSERT_EQUAL_FATAL(ns_normalize(&f, z, 3, 0.4, ref, w2, &err), NS_OK);
        CU_ASSERT(memcmp(a, ref, sizeof a) == 0);
        CU_ASSERT(memcmp(p, ref, sizeof p) == 0);
        CU_ASSERT(r.m == 1.0 && r.log_m == 0.0);
    }
}

/* The model normalizers from their weights alone (what a model's attention and the trainer use):
 * ns_norm_weights gives ns_normalize's bits on the simplex and ns_norm_row_eval's a off it (bit for
 * bit); ns_norm_jac_vjp_weights and ns_norm_jac_norm_weights, from a: on the simplex ns_jac_vjp's
 * and ns_jac_exact_norm's bits, NaN for softpick, relu and stick-breaking, and for softmax1 and
 * sigmoid against ns_norm_jac's evaluation from z (checked against mpmath by norm_rows):
 * softmax1's VJP is the same formula (bit for bit); sigmoid's a (1 - a) against
 * e^(log sig(x) + log sig(-x)) within 32 eps / (1 - a) relative (the exponent's ulps, |x| <= 7
 * here, become relative error of the exponential; 1 - a loses the digits a shares with 1; here
 * a <= sigmoid(5), 1 - a >= 0.0067); the norms within 1e-11 relative (softmax1's implicit
 * weight 1 - sum a against e^-M / den: an absolute error of L eps = 1.4e-14 on a weight >=
 * 1 / (1 + L e^6) = 3.9e-5, which moves the secular root by about as much; the test prints the
 * worst). A wrong term (a missing 1/T, a a^T for a (1 - a)) errs by O(1). */
static void test_model_normalizers_from_weights(void)
{
    const size_t Ls[] = {1, 2, 9, 64};
    const double Ts[] = {0.5, 1.0, 4.0};
    double z[NS_LMAX], a[NS_LMAX], w[NS_LMAX], p[NS_LMAX], g[NS_LMAX], v1[NS_LMAX], v2[NS_LMAX];
    double work[NS_LMAX * NS_LMAX + 3 * NS_LMAX];
    ns_err err;
    double worst_norm = 0.0;
    for (int k = NS_NORM_SOFTMAX; k <= NS_NORM_STICKBREAKING; k++) {
        ns_normalizer f = ns_normalizer_default((ns_normalizer_kind)k);
        if (k == NS_NORM_SIGMOID)
            f.b = -1.0;
        for (size_t li = 0; li < 4; li++)
            for (size_t ti = 0; ti < 3; ti++) {
                size_t L = Ls[li];
                double T = Ts[ti];
                random_logits(z, L, 500 + 10 * li + ti, 3.0);
                random_logits(g, L, 600 + 10 * li + ti, 1.0);
                ns_norm_row r = {.a = a, .p = p, .logp = NULL};
                CU_ASSERT_EQUAL_FATAL(ns_norm_row_eval(&f, z, L, T, &r, work, &err), NS_OK);
                CU_ASSERT_EQUAL_FATAL(ns_norm_weights(&f, z, L, T, w, work, &err), NS_OK);
                CU_ASSERT(memcmp(a, w, L * sizeof *a) == 0);
                ns_norm_jac_vjp_weights(&f, w, g, L, T, v1, work);
                double n1 = ns_norm_jac_norm_weights(&f, w, L, T, work);
                if (ns_normalizer_on_simplex(f.kind)) {
                    ns_jac_vjp(&f, w, g, L, T, v2, work);
                    double n2 = ns_jac_exact_norm(&f, w, L, T, work);
                    CU_ASSERT(memcmp(v1, v2, L * sizeof *v1) == 0);
                    CU_ASSERT(memcmp(&n1, &n2, sizeof n1) == 0);
                    continue;
                }
                if (k != NS_NORM_SOFTMAX1 && k != NS_NORM_SIGMOID) {
                    CU_ASSERT(isnan(n1) && isnan(v1[0]));
                    continue;
                }
                ns_norm_jac_vjp(&f, z, L, T, &r, g, v2, work);
                for (size_t j = 0; j < L; j++) {
                    double tol = k == NS_NORM_SOFTMAX1 ? 0.0 : 32.0 * 0x1p-52 / (1.0 - w[j]);
                    CU_ASSERT(fabs(v1[j] - v2[j]) <= tol * fabs(v2[j]));
                }
                double n2 = ns_norm_jac_norm(&f, z, L, T, &r, work);
                CU_ASSERT(n2 > 0.0 && fabs(n1 - n2) <= 1e-11 * n2);
                worst_norm = fmax(worst_norm, fabs(n1 - n2) / n2);
            }
    }
    printf("\n    softmax1, sigmoid: norms from a vs from z, worst relative difference %.2g ",
           worst_norm);
    /* bad input as ns_norm_row_eval refuses it */
    ns_normalizer sig = {.kind = NS_NORM_SIGMOID, .b = NAN}, inf = {.kind = NS_NORM_SIGMOID,
                                                                   .b = INFINITY};
    CU_ASSERT_EQUAL(ns_norm_weights(&sig, z, 3, 1.0, w, work, &err), NS_OK); /* -log L */
    CU_ASSERT_EQUAL(ns_norm_weights(&inf, z, 3, 1.0, w, work, &err), NS_ERR_INVALID);
    CU_ASSERT_EQUAL(ns_norm_weights(&sig, z, 0, 1.0, w, work, &err), NS_ERR_INVALID);
    CU_ASSERT_EQUAL(ns_norm_weights(&sig, z, 3, 0.0, w, work, &err), NS_ERR_INVALID);
}

int main(void)
{
    if (CU_initialize_registry() != CUE_SUCCESS)
        return 1;
    CU_pSuite s = CU_add_suite("normalize", NULL, NULL);
    CU_add_test(s, "names, parse errors, invalid T and L", test_names_and_errors);
    CU_add_test(s, "softmax = exp(z/T)/sum", test_softmax_direct);
    CU_add_test(s, "ssmax = softmax(s log L z / T)", test_ssmax_direct);
    CU_add_test(s, "sparsemax = threshold by bisection", test_sparsemax_direct);
    CU_add_test(s, "entmax15 = threshold by bisection", test_entmax_direct);
    CU_add_test(s, "sparsemax closed form", test_sparsemax_closed_form);
    CU_add_test(s, "entmax15 closed forms", test_entmax_closed_form);
    CU_add_test(s, "T -> 0 one-hot, T -> inf uniform", test_limits);
    CU_add_test(s, "large z / T stays finite", test_no_overflow);
    CU_add_test(s, "softmax-family row: the same bits as one by one", test_family_row_same_bits);
    CU_add_test(s, "issue 36: names, defaults, refusals", test_issue36_names);
    CU_add_test(s, "labels with parameters", test_labels);
    CU_add_test(s, "alpha-entmax: 1.5 = entmax15 bits, 2 = sparsemax", test_entmax_alpha);
    CU_add_test(s, "norm row: errors, the simplex ones unchanged", test_norm_row_errors);
    CU_add_test(s, "model normalizers: weights, VJP and norm from a",
                test_model_normalizers_from_weights);
    return ns_test_run_all();
}

/* test_analysis: METRICS.md metrics of ns_analyze_head against closed forms (uniform and one-hot
 * weights, two tokens), invariants (permutation, sphere scaling, ns_frac range), an independent
 * brute-force implementation written from METRICS.md, exact Jacobian norms against a Jacobi
 * eigen-solver and finite differences, and determinism of the counter-based draws. */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/ns_analysis.h"
#include "analysis/ns_jacobian.h"
#include "analysis/ns_normalize.h"
#include "analysis/ns_rng.h"
#include "analysis/ns_topn.h"
#include "ns_test.h"
#include "ns_test_ref.h"

#define BMAX 64 /* largest L of the brute-force cases */

/* ---- helpers ------------------------------------------------------------------------------ */

static double test_uniform(uint64_t *state)
{
    uint64_t x = (*state += 0x9e3779b97f4a7c15ULL);
    x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
    x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
    x ^= x >> 31;
    return (double)(x >> 11) * 0x1.0p-53;
}

/* A head of L_max tokens: logits (L_max, L_max) uniform in [-scale, scale], values (L_max, d)
 * uniform in [-1, 1]. */
typedef struct test_head {
    size_t L_max, d;
    float *logits, *values;
} test_head;

static test_head make_head(size_t L_max, size_t d, uint64_t seed, double scale)
{
    test_head h = {L_max, d, malloc(L_max * L_max * sizeof(float)),
                   malloc(L_max * d * sizeof(float))};
    uint64_t st = seed;
    for (size_t i = 0; i < L_max * L_max; i++)
        h.logits[i] = (float)(scale * (2.0 * test_uniform(&st) - 1.0));
    for (size_t i = 0; i < L_max * d; i++)
        h.values[i] = (float)(2.0 * test_uniform(&st) - 1.0);
    return h;
}

static void free_head(test_head *h)
{
    free(h->logits);
    free(h->values);
}

static ns_head_input input_of(const test_head *h)
{
    ns_head_input in = {h->logits, h->L_max, h->values, h->d, h->L_max, h->d};
    return in;
}

/* Run ns_analyze_head; returns a malloc'd n_rows * layout.total array (NULL on failure). */
static double *analyze(const ns_analysis_params *p, const ns_head_key *key, const test_head *h,
                       const size_t *rows, size_t n_rows, ns_row_layout *lay)
{
    ns_row_layout_init(lay, p->nT, p->nN, p->neps);
    ns_analysis_ws *ws = NULL;
    ns_err err;
    if (ns_analysis_ws_new(p, h->L_max, h->d, &ws, &err) != NS_OK)
        return NULL;
    double *out = malloc(n_rows * lay->total * sizeof(double));
    ns_head_input in = input_of(h);
    int rc = ns_analyze_head(p, key, &in, rows, n_rows, ws, out, &err);
    ns_analysis_ws_free(ws);
    if (rc != NS_OK) {
        fprintf(stderr, "ns_analyze_head: %s\n", err.msg);
        free(out);
        return NULL;
    }
    return out;
}

/* |a - b| <= abs + rel * max(|a|, |b|), NaN matching NaN, inf matching inf. */
static int close_to(double a, double b, double rel, double abs_tol)
{
    if (isnan(a) || isnan(b))
        return isnan(a) && isnan(b);
    if (isinf(a) || isinf(b))
        return a == b;
    return fabs(a - b) <= abs_tol + rel * fmax(fabs(a), fabs(b));
}

/* Largest |eigenvalue| of a symmetric n x n matrix (cyclic Jacobi rotations; independent of
 * the secular-equation solver under test). A is destroyed. */
static double jacobi_spectral_norm(double *A, size_t n)
{
    for (int sweep = 0; sweep < 100; sweep++) {
        double off = 0.0;
        for (size_t p = 0; p < n; p++)
            for (size_t q = p + 1; q < n; q++)
                off += A[p * n + q] * A[p * n + q];
        if (off < 1e-60)
            break;
        for (size_t p = 0; p < n; p++) {
            for (size_t q = p + 1; q < n; q++) {
                double apq = A[p * n + q];
                if (fabs(apq) < 1e-300)
                    continue;
                double theta = (A[q * n + q] - A[p * n + p]) / (2.0 * apq);
                double t = (theta >= 0 ? 1.0 : -1.0) / (fabs(theta) + sqrt(theta * theta + 1.0));
                double c = 1.0 / sqrt(t * t + 1.0), s = t * c;
                for (size_t k = 0; k < n; k++) { /* columns p, q */
                    double akp = A[k * n + p], akq = A[k * n + q];
                    A[k * n + p] = c * akp - s * akq;
                    A[k * n + q] = s * akp + c * akq;
                }
                for (size_t k = 0; k < n; k++) { /* rows p, q */
                    double apk = A[p * n + k], aqk = A[q * n + k];
                    A[p * n + k] = c * apk - s * aqk;
                    A[q * n + k] = s * apk + c * aqk;
                }
            }
        }
    }
    double mx = 0.0;
    for (size_t i = 0; i < n; i++)
        mx = fmax(mx, fabs(A[i * n + i]));
    return mx;
}

/* ---- brute force, straight from METRICS.md ------------------------------------------------ */

/* alpha = F(z / T) by the definitions: softmax exp / sum (with the max subtracted, which is the
 * same number), sparsemax and entmax15 by bisection on the threshold. */
static void brute_normalize(const ns_normalizer *f, const double *z, size_t L, double T, double *a)
{
    if (f->kind == NS_NORM_SOFTMAX || f->kind == NS_NORM_SSMAX) {
        double c = f->kind == NS_NORM_SOFTMAX ? 1.0 / T : f->s * log((double)L) / T;
        double mx = -INFINITY, sum = 0.0;
        for (size_t i = 0; i < L; i++)
            mx = fmax(mx, c * z[i]);
        for (size_t i = 0; i < L; i++)
            sum += exp(c * z[i] - mx);
        for (size_t i = 0; i < L; i++)
            a[i] = exp(c * z[i] - mx) / sum;
        return;
    }
    ns_test_ref_threshold(a, z, L, T, f->kind == NS_NORM_ENTMAX15);
}

static double vnorm(const double *a, size_t d)
{
    double s = 0.0;
    for (size_t k = 0; k < d; k++)
        s += a[k] * a[k];
    return sqrt(s);
}

/* sum_{i not in set} ||alpha_i x_i - s||, s = sum_{j in set} alpha_j x_j */
static double brute_dist_sum(double X[][16], size_t d, const double *a, size_t L,
                             const int *in_set, double *r_out, double *dist)
{
    double s[16] = {0};
    for (size_t j = 0; j < L; j++)
        if (in_set[j])
            for (size_t k = 0; k < d; k++)
                s[k] += a[j] * X[j][k];
    double sum = 0.0, r = INFINITY;
    for (size_t i = 0; i < L; i++) {
        double t[16];
        for (size_t k = 0; k < d; k++)
            t[k] = a[i] * X[i][k] - s[k];
        dist[i] = vnorm(t, d);
        if (!in_set[i]) {
            sum += dist[i];
            r = fmin(r, dist[i]);
        }
    }
    if (r_out)
        *r_out = r;
    return sum;
}

/* The exact Jacobian matrix of F(z/T) w.r.t. z from METRICS.md / the normalizer's definition;
 * returns its spectral norm by Jacobi. */
static double brute_jac_exact(const ns_normalizer *f, const double *a, size_t L, double T)
{
    static double J[BMAX * BMAX];
    double c = 1.0 / T;
    if (f->kind == NS_NORM_SSMAX)
        c = f->s * log((double)L) / T;
    double S = 0.0, q[BMAX];
    size_t supp = 0;
    for (size_t i = 0; i < L; i++) {
        q[i] = a[i] > 0.0 ? sqrt(a[i]) : 0.0;
        S += q[i];
        supp += a[i] > 0.0;
    }
    for (size_t i = 0; i < L; i++) {
        for (size_t j = 0; j < L; j++) {
            double v = 0.0;
            switch (f->kind) {
            case NS_NORM_SOFTMAX:
            case NS_NORM_SSMAX: v = c * ((i == j) * a[i] - a[i] * a[j]); break;
            case NS_NORM_SPARSEMAX:
                v = (a[i] > 0 && a[j] > 0) ? ((i == j) - 1.0 / (double)supp) / T : 0.0;
                break;
            case NS_NORM_ENTMAX15: v = ((i == j) * q[i] - q[i] * q[j] / S) / T; break;
            }
            J[i * L + j] = v;
        }
    }
    return jacobi_spectral_norm(J, L);
}

/* Every metric of one row, from the definitions, into row (layout lay). */
static void brute_row(const ns_analysis_params *p, const ns_head_key *key, const test_head *h,
                      size_t m, const ns_row_layout *lay, double *row)
{
    size_t L = m + 1, d = h->d;
    static double X[BMAX][16];
    double z[BMAX], a[BMAX], dist[BMAX];
    for (size_t k = 0; k < lay->total; k++)
        row[k] = NAN;
    double M = 0.0;
    for (size_t i = 0; i < L; i++) {
        for (size_t k = 0; k < d; k++)
            X[i][k] = h->values[i * d + k];
        double nr = vnorm(X[i], d);
        if (p->sphere)
            for (size_t k = 0; k < d; k++)
                X[i][k] /= nr;
        M = fmax(M, vnorm(X[i], d));
        z[i] = h->logits[m * h->L_max + i];
    }
    if (p->sphere)
        M = 1.0;
    double delta = INFINITY;
    for (size_t i = 0; i < L; i++)
        for (size_t j = 0; j < L; j++)
            if (i != j) {
                double t[16];
                for (size_t k = 0; k < d; k++)
                    t[k] = X[i][k] - X[j][k];
                delta = fmin(delta, vnorm(t, d));
            }
    row[ns_row_index_t(lay, NS_M_DELTA, 0)] = L >= 2 ? delta : NAN;
    for (size_t t = 0; t < p->nT; t++) {
        double T = p->T[t];
        brute_normalize(&p->normalizer, z, L, T, a);
        /* I_N: N largest alpha, ties by the smaller index (selection by repeated max) */
        size_t order[BMAX];
        int used[BMAX] = {0};
        for (size_t q = 0; q < L; q++) {
            size_t best = SIZE_MAX;
            for (size_t i = 0; i < L; i++)
                if (!used[i] && (best == SIZE_MAX || a[i] > a[best]))
                    best = i;
            order[q] = best;
            used[best] = 1;
        }
        for (size_t n = 0; n < p->nN; n++) {
            size_t N = p->N[n];
            if (N >= L)
                continue;
            int in[BMAX] = {0};
            double abar = 0.0, maxn2 = 0.0;
            for (size_t q = 0; q < N; q++) {
                in[order[q]] = 1;
                abar += a[order[q]];
                double nn = vnorm(X[order[q]], d);
                maxn2 = fmax(maxn2, nn * nn);
            }
            double r;
            double dd = brute_dist_sum(X, d, a, L, in, &r, dist);
            double d1 = 0.0;
            for (size_t i = 0; i < L; i++)
                for (size_t j = 0; j < L; j++)
                    if (!in[i] && in[j]) {
                        double tt[16];
                        for (size_t k = 0; k < d; k++)
                            tt[k] = X[i][k] - X[j][k];
                        d1 = fmax(d1, vnorm(tt, d));
                    }
            double bound = (1.0 - abar) * d1 + maxn2 * (abar * (double)(L - N) - (1.0 - abar));
            double xbar[16] = {0}, dexp = 0.0;
            for (size_t i = 0; i < L; i++)
                for (size_t k = 0; k < d; k++)
                    xbar[k] += a[i] * X[i][k];
            for (size_t i = 0; i < L; i++) {
                double tt[16];
                for (size_t k = 0; k < d; k++)
                    tt[k] = (a[i] + (double)N / (double)(L - 1)) * X[i][k] - xbar[k];
                double nn = vnorm(tt, d);
                dexp += nn * nn;
            }
            dexp *= (double)(L - N) / (double)L;
            /* Theorem 2 */
            size_t Ns = 0;
            double xisum = 0.0, up = 0.0;
            for (size_t q = 0; q < N; q++) {
                size_t i = order[q];
                if (dist[i] <= r)
                    Ns++;
                double s1 = 0.0, s2 = 0.0;
                for (size_t qj = 0; qj < N; qj++) {
                    size_t j = order[qj];
                    if (j != i)
                        s1 += a[j] * a[j];
                    for (size_t qk = 0; qk < N; qk++) {
                        size_t k = order[qk];
                        if (j != k && j != i && k != i)
                            s2 += a[j] * a[k];
                    }
                }
                double xi2 = M * M * s1 + (M * M - delta * delta / 2.0) * s2;
                double xi = sqrt(fmax(xi2, 0.0));
                xisum += xi;
                up += exp(-(r - xi) * (r - xi) / (16.0 * M * M));
            }
            /* d_random: the same draw as the library's (the generator is the contract) */
            ns_rng rng;
            ns_rng_init(&rng, ns_analysis_rng_key(NS_RNG_RANDOM_SUBSET, p->seed, key, m, N, T));
            size_t sel[BMAX];
            unsigned char ins[BMAX] = {0};
            ns_rng_subset(&rng, L, N, sel, ins);
            int inr[BMAX];
            for (size_t i = 0; i < L; i++)
                inr[i] = ins[i];
            double drand = brute_dist_sum(X, d, a, L, inr, NULL, dist);
            row[ns_row_index_tn(lay, NS_M_DISTANCE, t, n)] = dd;
            row[ns_row_index_tn(lay, NS_M_DISTANCE_D1, t, n)] = d1;
            row[ns_row_index_tn(lay, NS_M_DISTANCE_BOUND, t, n)] = bound;
            row[ns_row_index_tn(lay, NS_M_DISTANCE_EXPECTED, t, n)] = dexp;
            row[ns_row_index_tn(lay, NS_M_DISTANCE_RANDOM, t, n)] = drand;
            row[ns_row_index_tn(lay, NS_M_NS_FRAC, t, n)] = (double)Ns / (double)N;
            row[ns_row_index_tn(lay, NS_M_NS_LOWER, t, n)] =
                r > 0 ? 1.0 - xisum / (r * (double)N) : NAN;
            row[ns_row_index_tn(lay, NS_M_NS_UPPER, t, n)] = up / (double)N;
        }
        row[ns_row_index_t(lay, NS_M_JAC_EXACT, t)] = brute_jac_exact(&p->normalizer, a, L, T);
        if (p->normalizer.kind == NS_NORM_SOFTMAX || p->normalizer.kind == NS_NORM_SSMAX) {
            /* Lemma 2 literally: F = exp(c z), F' = c F, no shift (|c z| <= 6 here) */
            double c = p->normalizer.kind == NS_NORM_SOFTMAX ? 1.0 / T
                                                               : p->normalizer.s * log((double)L) / T;
            double nF = 0.0, nFp = 0.0, mn = INFINITY;
            for (size_t i = 0; i < L; i++) {
                double F = exp(c * z[i]);
                nF += F * F;
                nFp += c * F * c * F;
                mn = fmin(mn, F);
            }
            nF = sqrt(nF);
            nFp = sqrt(nFp);
            double Ld = (double)L;
            row[ns_row_index_t(lay, NS_M_JAC_LEMMA2, t)] =
                nFp / (Ld * mn) + nF * nFp / (Ld * Ld * mn * mn);
        }
        /* jac_fd: (e_a - e_b)/sqrt 2 for the two largest logits, then P random unit directions
         * replayed from the generator */
        double U[BMAX][BMAX];
        size_t nu = 0;
        if (L >= 2) {
            size_t ia = 0, ib = 0;
            for (size_t i = 0; i < L; i++)
                if (z[i] > z[ia])
                    ia = i;
            ib = ia == 0 ? 1 : 0;
            for (size_t i = 0; i < L; i++)
                if (i != ia && z[i] > z[ib])
                    ib = i;
            for (size_t i = 0; i < L; i++)
                U[0][i] = i == ia ? 1.0 / sqrt(2.0) : (i == ib ? -1.0 / sqrt(2.0) : 0.0);
            nu = 1;
        }
        ns_rng rng;
        ns_rng_init(&rng, ns_analysis_rng_key(NS_RNG_FD_PROBES, p->seed, key, m, 0, T));
        for (unsigned k = 0; k < p->probes; k++, nu++) {
            for (size_t i = 0; i < L; i += 2) {
                double g[2];
                ns_rng_normal2(&rng, g);
                U[nu][i] = g[0];
                if (i + 1 < L)
                    U[nu][i + 1] = g[1];
            }
            double nr = vnorm(U[nu], L);
            for (size_t i = 0; i < L; i++)
                U[nu][i] /= nr;
        }
        for (size_t e = 0; e < p->neps; e++) {
            double best = 0.0, zp[BMAX], ap[BMAX];
            for (size_t k = 0; k < nu; k++) {
                for (size_t i = 0; i < L; i++)
                    zp[i] = z[i] + p->eps[e] * U[k][i];
                brute_normalize(&p->normalizer, zp, L, T, ap);
                double acc = 0.0;
                for (size_t i = 0; i < L; i++)
                    acc += (ap[i] - a[i]) * (ap[i] - a[i]);
                best = fmax(best, sqrt(acc) / p->eps[e]);
            }
            row[ns_row_index_te(lay, NS_M_JAC_FD, t, e)] = nu ? best : NAN;
        }
    }
}

/* ---- layout, names, bounds ---------------------------------------------------------------- */

static void test_layout_and_names(void)
{
    ns_row_layout lay;
    ns_row_layout_init(&lay, 5, 4, 3);
    CU_ASSERT_EQUAL(lay.total, 8 * 5 * 4 + 1 + 2 * 5 + 5 * 3);
    /* every index is used exactly once */
    int seen[256] = {0};
    for (int id = 0; id < NS_M_COUNT; id++) {
        for (size_t t = 0; t < 5; t++) {
            switch (ns_metric_shape_of((ns_metric_id)id)) {
            case NS_SHAPE_TN:
                for (size_t n = 0; n < 4; n++)
                    seen[ns_row_index_tn(&lay, (ns_metric_id)id, t, n)]++;
                break;
            case NS_SHAPE_T: seen[ns_row_index_t(&lay, (ns_metric_id)id, t)]++; break;
            case NS_SHAPE_TE:
                for (size_t e = 0; e < 3; e++)
                    seen[ns_row_index_te(&lay, (ns_metric_id)id, t, e)]++;
                break;
            case NS_SHAPE_SCALAR:
                if (t == 0)
                    seen[ns_row_index_t(&lay, (ns_metric_id)id, 0)]++;
                break;
            }
        }
    }
    for (size_t k = 0; k < lay.total; k++)
        CU_ASSERT_EQUAL(seen[k], 1);
    const char *stems[NS_M_COUNT] = {"distance", "distance_d1", "distance_bound",
                                     "distance_expected", "distance_random", "ns_frac",
                                     "ns_lower", "ns_upper", "delta", "jac_exact", "jac_lemma2",
                                     "jac_fd"};
    for (int id = 0; id < NS_M_COUNT; id++)
        CU_ASSERT_STRING_EQUAL(ns_metric_name((ns_metric_id)id), stems[id]);
}

static void test_jac_bound_and_violation_rule(void)
{
    CU_ASSERT_DOUBLE_EQUAL(ns_jac_bound(1.0), 0.25, 0.0);
    CU_ASSERT_DOUBLE_EQUAL(ns_jac_bound(0.01), 25.0 < sqrt(2.0) ? 25.0 : sqrt(2.0), 0.0);
    CU_ASSERT_DOUBLE_EQUAL(ns_jac_bound(100.0), 0.0025, 1e-18);
    CU_ASSERT_EQUAL(ns_jac_violates(0.25 * (1 + 0.5e-6), 0.25), 0);
    CU_ASSERT_EQUAL(ns_jac_violates(0.25 * (1 + 2e-6), 0.25), 1);
    CU_ASSERT_EQUAL(ns_jac_violates(NAN, 0.25), 0);
    CU_ASSERT_EQUAL(ns_jac_violates(INFINITY, 0.25), 1);
    CU_ASSERT_EQUAL(ns_jac_violates(0.1, 0.25), 0);
}

/* ---- Jacobian norms ----------------------------------------------------------------------- */

/* Two tokens: ||J|| = 2ab/T exactly; at a = b it is 1/(2T), twice the paper's 1/(4T), so the
 * violation rule must count it. Tolerance 1e-15 relative (a few ulps). */
static void test_two_token_softmax_jacobian(void)
{
    ns_normalizer f = {NS_NORM_SOFTMAX, 0};
    const double Ts[] = {0.01, 1.0, 100.0};
    for (int ti = 0; ti < 3; ti++) {
        double T = Ts[ti];
        for (int k = 0; k <= 10; k++) {
            double a = 0.5 + 0.049 * k, al[2] = {a, 1.0 - a};
            double got = ns_jac_exact_norm(&f, al, 2, T, NULL);
            CU_ASSERT(close_to(got, 2.0 * a * (1.0 - a) / T, 1e-14, 0.0));
        }
        double half[2] = {0.5, 0.5};
        double j = ns_jac_exact_norm(&f, half, 2, T, NULL);
        CU_ASSERT_DOUBLE_EQUAL(j, 1.0 / (2.0 * T), 1e-15 / T);
        /* 1/(2T) > min(1/(4T), sqrt 2) for every T */
        CU_ASSERT_EQUAL(ns_jac_violates(j, ns_jac_bound(T)), 1);
    }
    /* and through ns_analyze_head: a two-key row with equal logits at T = 1 */
    test_head h = make_head(2, 4, 5, 1.0);
    h.logits[2] = h.logits[3] = 0.25f;
    size_t N[1] = {1};
    double T[1] = {1.0}, eps[1] = {1e-4};
    ns_analysis_params p = {N, 1, T, 1, eps, 1, f, 1, 0, 7};
    ns_head_key key = {0, 0, 0};
    size_t rows[1] = {1};
    ns_row_layout lay;
    double *out = analyze(&p, &key, &h, rows, 1, &lay);
    CU_ASSERT_PTR_NOT_NULL_FATAL(out);
    double je = out[ns_row_index_t(&lay, NS_M_JAC_EXACT, 0)];
    double jf = out[ns_row_index_te(&lay, NS_M_JAC_FD, 0, 0)];
    CU_ASSERT_DOUBLE_EQUAL(je, 0.5, 1e-15);
    /* the (e_a - e_b)/sqrt 2 probe is the top eigenvector: jac_fd -> 1/2 (O(eps^2) error) */
    CU_ASSERT_DOUBLE_EQUAL(jf, 0.5, 1e-8);
    CU_ASSERT_EQUAL(ns_jac_violates(je, ns_jac_bound(1.0)), 1);
    CU_ASSERT_EQUAL(ns_jac_violates(jf, ns_jac_bound(1.0)), 1);
    free(out);
    free_head(&h);
}

/* The secular solver against bisection and against Jacobi on the explicit matrix, including
 * weights spread over 300 orders of magnitude, ties and deflated zeros. Tolerance: 1e-13
 * relative (the solver targets ~1e-15; Jacobi's own error is ~1e-15 of the largest entry, so
 * that comparison also gets 1e-15 absolute). */
static void test_secular_solver(void)
{
    uint64_t st = 42;
    static double A[BMAX * BMAX];
    for (int c = 0; c < 200; c++) {
        size_t n = 2 + (size_t)(test_uniform(&st) * 40);
        double w[BMAX], S = 0.0;
        for (size_t i = 0; i < n; i++) {
            double u = test_uniform(&st);
            switch (c % 4) {
            case 0: w[i] = u; break;
            case 1: w[i] = exp(-700.0 * u); break;     /* 300 orders of magnitude */
            case 2: w[i] = u < 0.3 ? 0.0 : u; break;   /* deflated zeros */
            default: w[i] = floor(u * 4.0) / 4.0; break; /* ties */
            }
            S += w[i];
        }
        double fast = ns_jac_dmr_max(w, n), slow = ns_jac_dmr_max_bisect(w, n);
        CU_ASSERT(close_to(fast, slow, 1e-13, 0.0));
        if (!close_to(fast, slow, 1e-13, 0.0))
            fprintf(stderr, "case %d n %zu: %.17g vs %.17g\n", c, n, fast, slow);
        if (S > 0.0) {
            for (size_t i = 0; i < n; i++)
                for (size_t j = 0; j < n; j++)
                    A[i * n + j] = (i == j) * w[i] - w[i] * w[j] / S;
            double ref = jacobi_spectral_norm(A, n);
            CU_ASSERT(close_to(fast, ref, 1e-12, 1e-15));
        }
    }
    double one[3] = {0.0, 2.0, 0.0};
    CU_ASSERT_EQUAL(ns_jac_dmr_max(one, 3), 0.0);
    double tie[3] = {0.4, 0.4, 0.2};
    CU_ASSERT_EQUAL(ns_jac_dmr_max(tie, 3), 0.4);
    /* a = (1 - e, e): 2ab = 2e(1 - e) keeps its relative precision for e = 1e-200 */
    double tiny[2] = {1.0, 1e-200};
    CU_ASSERT(close_to(ns_jac_dmr_max(tiny, 2), 2e-200, 1e-14, 0.0));
}

/* Exact norms of all four normalizers against a central-difference Jacobian (h = 1e-6,
 * error O(h^2) ~ 1e-10 relative; points chosen away from support changes) and Jacobi. */
static void test_exact_norm_vs_finite_differences(void)
{
    size_t L = 12;
    double z[BMAX], a[BMAX], ap[BMAX], am[BMAX], work[2 * BMAX];
    static double J[BMAX * BMAX];
    uint64_t st = 7;
    for (size_t i = 0; i < L; i++)
        z[i] = 2.0 * test_uniform(&st) - 1.0;
    ns_err err;
    for (int k = 0; k < 4; k++) {
        ns_normalizer f = {(ns_normalizer_kind)k, 0.9};
        const double T = 0.7, h = 1e-6;
        CU_ASSERT_EQUAL_FATAL(ns_normalize(&f, z, L, T, a, work, &err), NS_OK);
        for (size_t j = 0; j < L; j++) {
            double zz[BMAX];
            memcpy(zz, z, L * sizeof *z);
            zz[j] = z[j] + h;
            ns_normalize(&f, zz, L, T, ap, work, &err);
            zz[j] = z[j] - h;
            ns_normalize(&f, zz, L, T, am, work, &err);
            for (size_t i = 0; i < L; i++)
                J[i * L + j] = (ap[i] - am[i]) / (2.0 * h);
        }
        /* symmetrise (the true Jacobians are symmetric; this halves the FD noise) */
        for (size_t i = 0; i < L; i++)
            for (size_t j = i + 1; j < L; j++)
                J[i * L + j] = J[j * L + i] = 0.5 * (J[i * L + j] + J[j * L + i]);
        double ref = jacobi_spectral_norm(J, L);
        double got = ns_jac_exact_norm(&f, a, L, T, work);
        CU_ASSERT(close_to(got, ref, 1e-7, 0.0));
        if (!close_to(got, ref, 1e-7, 0.0))
            fprintf(stderr, "normalizer %d: exact %.17g fd %.17g\n", k, got, ref);
        /* the backward pass: ns_jac_vjp(g) = J^T g against the same finite-difference Jacobian
         * (entries accurate to ~1e-10, so 1e-7 of the largest entry is ample); exactly 0 where
         * alpha is 0 (no gradient reaches a key outside sparsemax's or entmax's support) */
        double g[BMAX], out[BMAX], ref_out[BMAX], big = 0.0;
        for (size_t i = 0; i < L; i++)
            g[i] = 2.0 * test_uniform(&st) - 1.0;
        ns_jac_vjp(&f, a, g, L, T, out, work);
        for (size_t j = 0; j < L; j++) {
            ref_out[j] = 0.0;
            for (size_t i = 0; i < L; i++)
                ref_out[j] += J[i * L + j] * g[i];
            big = fmax(big, fabs(ref_out[j]));
        }
        for (size_t j = 0; j < L; j++) {
            CU_ASSERT(fabs(out[j] - ref_out[j]) <= 1e-7 * big);
            CU_ASSERT(a[j] > 0.0 || out[j] == 0.0);
        }
    }
}

/* ---- closed forms ------------------------------------------------------------------------- */

static void fill_logits_equal(test_head *h, float v)
{
    for (size_t i = 0; i < h->L_max * h->L_max; i++)
        h->logits[i] = v;
}

/* Uniform weights, identical unit vectors: the Theorem 1 bound holds with equality,
 * d = d_bound = d_random = (L - N)(N - 1)/L, d1 = delta = 0, ns_frac = 1, ns_lower = 0 (r = xi),
 * ns_upper = 1, and N = 1 makes r = 0 (ns_lower undefined). Tolerance 1e-13 relative. */
static void test_uniform_identical_vectors(void)
{
    size_t Lm = 20, d = 6;
    test_head h = make_head(Lm, d, 1, 1.0);
    fill_logits_equal(&h, 0.3f);
    for (size_t i = 0; i < Lm; i++)
        for (size_t k = 0; k < d; k++)
            h.values[i * d + k] = k == 2 ? 2.0f : 0.0f; /* norm 2; sphere scales to e_2 */
    size_t N[4] = {1, 2, 5, 19};
    double T[2] = {0.1, 10.0}, eps[1] = {1e-3};
    ns_analysis_params p = {N, 4, T, 2, eps, 1, {NS_NORM_SOFTMAX, 0}, 1, 4, 3};
    ns_head_key key = {2, 1, 0};
    size_t rows[2] = {9, 19};
    ns_row_layout lay;
    double *out = analyze(&p, &key, &h, rows, 2, &lay);
    CU_ASSERT_PTR_NOT_NULL_FATAL(out);
    for (size_t r = 0; r < 2; r++) {
        double *row = out + r * lay.total;
        double L = (double)(rows[r] + 1);
        CU_ASSERT_EQUAL(row[ns_row_index_t(&lay, NS_M_DELTA, 0)], 0.0);
        for (size_t t = 0; t < 2; t++) {
            CU_ASSERT(close_to(row[ns_row_index_t(&lay, NS_M_JAC_EXACT, t)], 1.0 / (L * T[t]),
                               1e-13, 0.0));
            double c = 1.0 / T[t];
            CU_ASSERT(close_to(row[ns_row_index_t(&lay, NS_M_JAC_LEMMA2, t)],
                               c * (1.0 / sqrt(L) + 1.0 / L), 1e-13, 0.0));
            for (size_t n = 0; n < 4; n++) {
                double Nd = (double)N[n];
                if (Nd >= L) {
                    CU_ASSERT(isnan(row[ns_row_index_tn(&lay, NS_M_DISTANCE, t, n)]));
                    CU_ASSERT(isnan(row[ns_row_index_tn(&lay, NS_M_NS_FRAC, t, n)]));
                    continue;
                }
                double want = (L - Nd) * (Nd - 1.0) / L;
                CU_ASSERT(close_to(row[ns_row_index_tn(&lay, NS_M_DISTANCE, t, n)], want, 1e-13, 1e-15));
                CU_ASSERT(close_to(row[ns_row_index_tn(&lay, NS_M_DISTANCE_BOUND, t, n)], want, 1e-13, 1e-15));
                CU_ASSERT(close_to(row[ns_row_index_tn(&lay, NS_M_DISTANCE_RANDOM, t, n)], want, 1e-13, 1e-15));
                CU_ASSERT_EQUAL(row[ns_row_index_tn(&lay, NS_M_DISTANCE_D1, t, n)], 0.0);
                double c0 = 1.0 / L + Nd / (L - 1.0) - 1.0;
                CU_ASSERT(close_to(row[ns_row_index_tn(&lay, NS_M_DISTANCE_EXPECTED, t, n)],
                                   (L - Nd) * c0 * c0, 1e-13, 0.0));
                CU_ASSERT_EQUAL(row[ns_row_index_tn(&lay, NS_M_NS_FRAC, t, n)], 1.0);
                CU_ASSERT(close_to(row[ns_row_index_tn(&lay, NS_M_NS_UPPER, t, n)], 1.0, 1e-13, 0.0));
                if (N[n] == 1) {
                    CU_ASSERT(isnan(row[ns_row_index_tn(&lay, NS_M_NS_LOWER, t, n)]));
                    CU_ASSERT(ns_row_ns_lower_undefined(&lay, row, t, n));
                } else {
                    CU_ASSERT(close_to(row[ns_row_index_tn(&lay, NS_M_NS_LOWER, t, n)], 0.0, 0.0, 1e-12));
                    CU_ASSERT(!ns_row_ns_lower_undefined(&lay, row, t, n));
                }
            }
        }
    }
    free(out);
    free_head(&h);
}

/* Uniform weights, orthonormal vectors x_i = e_i (d >= L): d = (L - N) sqrt(N + 1) / L,
 * d1 = delta = sqrt 2, d_bound = (L - N)/L (sqrt 2 + N - 1), ns_frac = 1,
 * ns_lower = 1 - sqrt(N - 1)/sqrt(N + 1), ns_upper = exp(-(sqrt(N+1) - sqrt(N-1))^2 / (16 L^2)),
 * d_expected = (L - N)(c0^2 + (L - 1)/L^2), c0 = N/(L - 1). The distance collapses as L grows
 * at fixed N: d / d_bound -> sqrt(N + 1) / (sqrt 2 + N - 1). Tolerance 1e-13 relative. */
static void test_uniform_orthonormal(void)
{
    size_t Lm = 16, d = 16;
    test_head h = make_head(Lm, d, 1, 1.0);
    fill_logits_equal(&h, -1.5f);
    for (size_t i = 0; i < Lm; i++)
        for (size_t k = 0; k < d; k++)
            h.values[i * d + k] = k == i ? 0.5f : 0.0f;
    size_t N[3] = {1, 3, 8};
    double T[1] = {1.0}, eps[1] = {1e-3};
    for (int sphere = 0; sphere <= 1; sphere++) {
        ns_analysis_params p = {N, 3, T, 1, eps, 1, {NS_NORM_SOFTMAX, 0}, sphere, 0, 3};
        ns_head_key key = {0, 0, 0};
        size_t rows[2] = {11, 15};
        ns_row_layout lay;
        double *out = analyze(&p, &key, &h, rows, 2, &lay);
        CU_ASSERT_PTR_NOT_NULL_FATAL(out);
        double sc = sphere ? 1.0 : 0.5; /* raw vectors have norm 1/2 = M */
        for (size_t r = 0; r < 2; r++) {
            double *row = out + r * lay.total;
            double L = (double)(rows[r] + 1);
            CU_ASSERT(close_to(row[ns_row_index_t(&lay, NS_M_DELTA, 0)], sc * sqrt(2.0), 1e-15, 0));
            for (size_t n = 0; n < 3; n++) {
                double Nd = (double)N[n], c0 = Nd / (L - 1.0);
                CU_ASSERT(close_to(row[ns_row_index_tn(&lay, NS_M_DISTANCE, 0, n)],
                                   sc * (L - Nd) * sqrt(Nd + 1.0) / L, 1e-13, 0));
                CU_ASSERT(close_to(row[ns_row_index_tn(&lay, NS_M_DISTANCE_D1, 0, n)],
                                   sc * sqrt(2.0), 1e-15, 0));
                CU_ASSERT(close_to(row[ns_row_index_tn(&lay, NS_M_DISTANCE_BOUND, 0, n)],
                                   (1.0 - Nd / L) * sc * sqrt(2.0) +
                                       sc * sc * (Nd / L * (L - Nd) - (1.0 - Nd / L)),
                                   1e-13, 0));
                CU_ASSERT(close_to(row[ns_row_index_tn(&lay, NS_M_DISTANCE_EXPECTED, 0, n)],
                                   sc * sc * (L - Nd) * (c0 * c0 + (L - 1.0) / (L * L)), 1e-13, 0));
                CU_ASSERT_EQUAL(row[ns_row_index_tn(&lay, NS_M_NS_FRAC, 0, n)], 1.0);
                CU_ASSERT(close_to(row[ns_row_index_tn(&lay, NS_M_NS_LOWER, 0, n)],
                                   1.0 - sqrt(Nd - 1.0) / sqrt(Nd + 1.0), 1e-13, 1e-15));
                double g = sqrt(Nd + 1.0) - sqrt(Nd - 1.0);
                CU_ASSERT(close_to(row[ns_row_index_tn(&lay, NS_M_NS_UPPER, 0, n)],
                                   exp(-g * g / (16.0 * L * L)), 1e-13, 0));
            }
        }
        free(out);
    }
    free_head(&h);
}

/* One-hot weights (T -> 0 with a unique maximum): s = x_a, d = d_bound = (L - N) on the sphere,
 * r = 1, ns_frac = 1, ns_lower = 1/N, ns_upper = (exp(-1/16) + N - 1)/N, jac_exact = 0,
 * Lemma 2 = +inf (min F underflows), and the underflowed tail still ranks by logit. */
static void test_one_hot_and_underflow_ranking(void)
{
    size_t Lm = 8, d = 8;
    test_head h = make_head(Lm, d, 3, 1.0);
    for (size_t i = 0; i < Lm; i++)
        for (size_t k = 0; k < d; k++)
            h.values[i * d + k] = k == i ? 1.0f : 0.0f;
    /* last row: z = (0, -30, -20, -10, -40, -50, -60, -70) at T = 0.01: every weight but the
     * first underflows to 0; by logit the top-2 is {0, 3}, not the index-order {0, 1} */
    float zr[8] = {0, -30, -20, -10, -40, -50, -60, -70};
    memcpy(h.logits + 7 * Lm, zr, sizeof zr);
    /* make e_3 distinguishable in d1: move x_3 off the axis */
    h.values[3 * d + 3] = 1.0f;
    h.values[3 * d + 0] = -1.0f; /* x_3 = (-1, 0, 0, 1, ...)/sqrt 2 on the sphere */
    size_t N[3] = {1, 2, 4};
    double T[1] = {0.01}, eps[1] = {1e-3};
    ns_analysis_params p = {N, 3, T, 1, eps, 1, {NS_NORM_SOFTMAX, 0}, 1, 2, 3};
    ns_head_key key = {0, 0, 0};
    size_t rows[1] = {7};
    ns_row_layout lay;
    double *out = analyze(&p, &key, &h, rows, 1, &lay);
    CU_ASSERT_PTR_NOT_NULL_FATAL(out);
    double L = 8.0;
    for (size_t n = 0; n < 3; n++) {
        double Nd = (double)N[n];
        CU_ASSERT(close_to(out[ns_row_index_tn(&lay, NS_M_DISTANCE, 0, n)], L - Nd, 1e-15, 0));
        CU_ASSERT(close_to(out[ns_row_index_tn(&lay, NS_M_DISTANCE_BOUND, 0, n)], L - Nd, 1e-15, 0));
        CU_ASSERT_EQUAL(out[ns_row_index_tn(&lay, NS_M_NS_FRAC, 0, n)], 1.0);
        CU_ASSERT(close_to(out[ns_row_index_tn(&lay, NS_M_NS_LOWER, 0, n)], 1.0 / Nd, 1e-15, 0));
        CU_ASSERT(close_to(out[ns_row_index_tn(&lay, NS_M_NS_UPPER, 0, n)],
                           (exp(-1.0 / 16.0) + Nd - 1.0) / Nd, 1e-15, 0));
    }
    /* d1 for N = 2 with I = {0, 3}: the farthest pair is x_3 vs any e_i (i not 0, 3):
     * ||(-1, 0, 0, 1)/sqrt 2 - e_i||^2 = 1/2 + 1/2 + 1 = 2 -> sqrt 2; with I = {0, 1} it would be
     * ||x_3 - e_0|| = sqrt((1 + 1/sqrt 2)^2 + 1/2) = 1.848; with I = {0} (N = 1): 1.848 too */
    CU_ASSERT(close_to(out[ns_row_index_tn(&lay, NS_M_DISTANCE_D1, 0, 1)], sqrt(2.0), 1e-15, 0));
    double far = sqrt((1.0 + M_SQRT1_2) * (1.0 + M_SQRT1_2) + 0.5);
    CU_ASSERT(close_to(out[ns_row_index_tn(&lay, NS_M_DISTANCE_D1, 0, 0)], far, 1e-15, 0));
    CU_ASSERT_EQUAL(out[ns_row_index_t(&lay, NS_M_JAC_EXACT, 0)], 0.0);
    CU_ASSERT(isinf(out[ns_row_index_t(&lay, NS_M_JAC_LEMMA2, 0)]));
    /* the ranking helper directly: ties of alpha (0 = 0) ordered by logit for softmax */
    double z[8], a[8];
    size_t order[8];
    ns_rank_item items[8];
    for (int i = 0; i < 8; i++) {
        z[i] = zr[i];
        a[i] = i == 0 ? 1.0 : 0.0;
    }
    ns_normalizer sm = {NS_NORM_SOFTMAX, 0}, sp = {NS_NORM_SPARSEMAX, 0};
    ns_topn_rank_row(order, items, &sm, z, a, 8, 0.01);
    size_t want_sm[8] = {0, 3, 2, 1, 4, 5, 6, 7};
    for (int i = 0; i < 8; i++)
        CU_ASSERT_EQUAL(order[i], want_sm[i]);
    /* sparsemax: exact zeros tie and follow by index */
    ns_topn_rank_row(order, items, &sp, z, a, 8, 0.01);
    for (int i = 0; i < 8; i++)
        CU_ASSERT_EQUAL(order[i], (size_t)i);
    free(out);
    free_head(&h);
}

/* ---- cross-check against the brute force -------------------------------------------------- */

/* Random rows for every normalizer, sphere on and off: every metric agrees with the brute force
 * within 1e-9 relative + 1e-12 absolute. Sources of difference: summation order, prefix/suffix
 * sums for xi, bisection (brute) vs sort-based thresholds (library), Jacobi vs secular
 * equation; all ~1e-15 relative except the finite differences, whose eps-division amplifies
 * weight rounding to ~1e-13. Also checks d <= d_bound (Theorem 1) and ns_frac in [0, 1]. */
static void test_cross_check_brute_force(void)
{
    size_t Lm = 40, d = 8;
    size_t N[4] = {1, 3, 10, 39};
    double T[3] = {0.5, 1.0, 3.0}, eps[2] = {1e-3, 1e-1};
    size_t rows[5] = {0, 1, 5, 17, 39};
    int bad = 0;
    for (int k = 0; k < 4; k++) {
        for (int sphere = 0; sphere <= 1; sphere++) {
            test_head h = make_head(Lm, d, 100 + 10 * k + sphere, 2.0);
            ns_analysis_params p = {N, 4, T, 3, eps, 2, {(ns_normalizer_kind)k, 0.8}, sphere, 3,
                                    12345};
            ns_head_key key = {3, 2, 1};
            ns_row_layout lay;
            double *out = analyze(&p, &key, &h, rows, 5, &lay);
            CU_ASSERT_PTR_NOT_NULL_FATAL(out);
            double ref[2048];
            for (size_t r = 0; r < 5; r++) {
                brute_row(&p, &key, &h, rows[r], &lay, ref);
                const double *row = out + r * lay.total;
                for (size_t q = 0; q < lay.total; q++) {
                    if (!close_to(row[q], ref[q], 1e-9, 1e-12)) {
                        if (bad++ < 10)
                            fprintf(stderr, "normalizer %d sphere %d row %zu slot %zu: %.17g vs "
                                            "brute %.17g\n",
                                    k, sphere, rows[r], q, row[q], ref[q]);
                    }
                }
                for (size_t t = 0; t < 3; t++)
                    for (size_t n = 0; n < 4; n++) {
                        double f = row[ns_row_index_tn(&lay, NS_M_NS_FRAC, t, n)];
                        if (!isnan(f))
                            CU_ASSERT(f >= 0.0 && f <= 1.0);
                        double dd = row[ns_row_index_tn(&lay, NS_M_DISTANCE, t, n)];
                        double db = row[ns_row_index_tn(&lay, NS_M_DISTANCE_BOUND, t, n)];
                        if (!isnan(dd) && sphere)
                            CU_ASSERT(dd <= db * (1 + 1e-12));
                    }
                /* row 0 (L = 1): every N skipped, delta missing, jacobian 0 */
                if (rows[r] == 0) {
                    CU_ASSERT(isnan(row[ns_row_index_tn(&lay, NS_M_DISTANCE, 0, 0)]));
                    CU_ASSERT(isnan(row[ns_row_index_t(&lay, NS_M_DELTA, 0)]));
                    CU_ASSERT_EQUAL(row[ns_row_index_t(&lay, NS_M_JAC_EXACT, 0)], 0.0);
                }
            }
            free(out);
            free_head(&h);
        }
    }
    CU_ASSERT_EQUAL(bad, 0);
}

/* ---- invariants --------------------------------------------------------------------------- */

/* Permuting the keys of a row (logits and values together) leaves every metric unchanged
 * (probes = 0 so jac_fd uses only the permutation-equivariant (e_a - e_b) probe; d_random
 * is excluded: its subset is drawn by position). Distinct random logits: no ties. Tolerance
 * 1e-11 relative (summation order changes). */
static void test_permutation_invariance(void)
{
    size_t Lm = 30, d = 7;
    size_t N[3] = {1, 4, 12};
    double T[3] = {0.05, 1.0, 20.0}, eps[2] = {1e-3, 1.0};
    for (int k = 0; k < 4; k++) {
        test_head h = make_head(Lm, d, 200 + k, 3.0), g = make_head(Lm, d, 1, 1.0);
        size_t perm[30];
        for (size_t i = 0; i < Lm; i++)
            perm[i] = (7 * i + 3) % Lm; /* 7 is coprime with 30 */
        for (size_t i = 0; i < Lm; i++) {
            g.logits[(Lm - 1) * Lm + perm[i]] = h.logits[(Lm - 1) * Lm + i];
            memcpy(g.values + perm[i] * d, h.values + i * d, d * sizeof(float));
        }
        ns_analysis_params p = {N, 3, T, 3, eps, 2, {(ns_normalizer_kind)k, 1.1}, 1, 0, 9};
        ns_head_key key = {0, 0, 0};
        size_t rows[1] = {Lm - 1};
        ns_row_layout lay;
        double *a = analyze(&p, &key, &h, rows, 1, &lay);
        double *b = analyze(&p, &key, &g, rows, 1, &lay);
        CU_ASSERT_PTR_NOT_NULL_FATAL(a);
        CU_ASSERT_PTR_NOT_NULL_FATAL(b);
        /* sparsemax/entmax15: beyond the support the weights are exact zeros that tie, so the
         * tie rule (smaller index) picks position-dependent members; compare N <= support */
        size_t support[3];
        for (size_t t = 0; t < 3; t++) {
            double z[30], al[30], work[60];
            ns_err err;
            for (size_t i = 0; i < Lm; i++)
                z[i] = h.logits[(Lm - 1) * Lm + i];
            ns_normalize(&p.normalizer, z, Lm, T[t], al, work, &err);
            support[t] = 0;
            for (size_t i = 0; i < Lm; i++)
                support[t] += al[i] > 0.0;
        }
        for (int id = 0; id < NS_M_COUNT; id++) {
            if (id == NS_M_DISTANCE_RANDOM)
                continue;
            for (size_t q = lay.offset[id]; q < lay.offset[id] + lay.size[id]; q++) {
                if (ns_metric_shape_of((ns_metric_id)id) == NS_SHAPE_TN) {
                    size_t t = (q - lay.offset[id]) / lay.nN, n = (q - lay.offset[id]) % lay.nN;
                    if (N[n] > support[t])
                        continue;
                }
                CU_ASSERT(close_to(a[q], b[q], 1e-11, 1e-14));
                if (!close_to(a[q], b[q], 1e-11, 1e-14))
                    fprintf(stderr, "perm normalizer %d %s slot %zu: %.17g vs %.17g\n", k,
                            ns_metric_name((ns_metric_id)id), q, a[q], b[q]);
            }
        }
        free(a);
        free(b);
        free_head(&h);
        free_head(&g);
    }
}

/* sphere: true makes every metric invariant under positive per-token rescaling of the values
 * (by powers of 2, so the float inputs stay exact; tolerance 1e-12 relative). sphere: false with values times 4
 * (exact in binary): lengths scale by 4, d_expected by 16, ns_* unchanged (tolerance 1e-14). */
static void test_sphere_scaling(void)
{
    size_t Lm = 24, d = 5;
    size_t N[2] = {2, 6};
    double T[2] = {0.3, 2.0}, eps[1] = {1e-2};
    test_head h = make_head(Lm, d, 77, 2.0), g = make_head(Lm, d, 77, 2.0);
    uint64_t st = 5;
    for (size_t i = 0; i < Lm; i++) {
        float c = ldexpf(1.0f, (int)(test_uniform(&st) * 5.0) - 2); /* 1/4 .. 4: exact */
        for (size_t k = 0; k < d; k++)
            g.values[i * d + k] = h.values[i * d + k] * c;
    }
    size_t rows[3] = {7, 15, 23};
    ns_head_key key = {1, 1, 1};
    ns_row_layout lay;
    ns_analysis_params p = {N, 2, T, 2, eps, 1, {NS_NORM_SOFTMAX, 0}, 1, 2, 1};
    double *a = analyze(&p, &key, &h, rows, 3, &lay);
    double *b = analyze(&p, &key, &g, rows, 3, &lay);
    CU_ASSERT_PTR_NOT_NULL_FATAL(a);
    CU_ASSERT_PTR_NOT_NULL_FATAL(b);
    for (size_t q = 0; q < 3 * lay.total; q++)
        CU_ASSERT(close_to(a[q], b[q], 1e-12, 1e-15));
    free(b);
    free(a);
    for (size_t i = 0; i < Lm * d; i++)
        g.values[i] = 4.0f * h.values[i];
    p.sphere = 0;
    a = analyze(&p, &key, &h, rows, 3, &lay);
    b = analyze(&p, &key, &g, rows, 3, &lay);
    CU_ASSERT_PTR_NOT_NULL_FATAL(a);
    CU_ASSERT_PTR_NOT_NULL_FATAL(b);
    for (size_t r = 0; r < 3; r++) {
        const double *ra = a + r * lay.total, *rb = b + r * lay.total;
        CU_ASSERT(close_to(rb[ns_row_index_t(&lay, NS_M_DELTA, 0)],
                           4 * ra[ns_row_index_t(&lay, NS_M_DELTA, 0)], 1e-14, 0));
        for (size_t t = 0; t < 2; t++)
            for (size_t n = 0; n < 2; n++) {
#define AT(buf, id) (buf)[ns_row_index_tn(&lay, id, t, n)]
                CU_ASSERT(close_to(AT(rb, NS_M_DISTANCE), 4 * AT(ra, NS_M_DISTANCE), 1e-14, 0));
                CU_ASSERT(close_to(AT(rb, NS_M_DISTANCE_D1), 4 * AT(ra, NS_M_DISTANCE_D1), 1e-14, 0));
                CU_ASSERT(close_to(AT(rb, NS_M_DISTANCE_RANDOM), 4 * AT(ra, NS_M_DISTANCE_RANDOM), 1e-14, 0));
                CU_ASSERT(close_to(AT(rb, NS_M_DISTANCE_EXPECTED), 16 * AT(ra, NS_M_DISTANCE_EXPECTED), 1e-14, 0));
                CU_ASSERT(close_to(AT(rb, NS_M_NS_FRAC), AT(ra, NS_M_NS_FRAC), 0, 0));
                CU_ASSERT(close_to(AT(rb, NS_M_NS_LOWER), AT(ra, NS_M_NS_LOWER), 1e-14, 1e-15));
                CU_ASSERT(close_to(AT(rb, NS_M_NS_UPPER), AT(ra, NS_M_NS_UPPER), 1e-14, 0));
#undef AT
            }
    }
    free(a);
    free(b);
    free_head(&h);
    free_head(&g);
}

/* ---- determinism -------------------------------------------------------------------------- */

static int same_bits(const double *a, const double *b, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (!(a[i] == b[i] || (isnan(a[i]) && isnan(b[i]))))
            return 0;
    return 1;
}

/* The same key gives bit-identical results whatever else the call analyses (one row alone vs
 * several, fresh workspace vs reused); another seed, shard, layer or head changes d_random (in
 * every row) and jac_fd (in some row: at eps = 10 the saturated (e_a - e_b) probe no longer
 * dominates, so the random directions decide the maximum) and nothing else. */
static void test_determinism_and_keys(void)
{
    size_t Lm = 64, d = 8;
    size_t N[2] = {3, 9};
    double T[2] = {0.5, 2.0}, eps[2] = {1e-2, 10.0};
    test_head h = make_head(Lm, d, 9, 2.0);
    ns_analysis_params p = {N, 2, T, 2, eps, 2, {NS_NORM_SOFTMAX, 0}, 1, 8, 2024};
    ns_head_key key = {5, 3, 7};
    size_t rows_all[6] = {20, 40, 63, 30, 50, 60}, row_one[1] = {40};
    ns_row_layout lay;
    double *a = analyze(&p, &key, &h, rows_all, 6, &lay);
    double *b = analyze(&p, &key, &h, row_one, 1, &lay);
    CU_ASSERT_PTR_NOT_NULL_FATAL(a);
    CU_ASSERT_PTR_NOT_NULL_FATAL(b);
    CU_ASSERT(same_bits(a + lay.total, b, lay.total));
    free(b);
    ns_head_key others[4] = {{5, 3, 8}, {6, 3, 7}, {5, 4, 7}, {5, 3, 7}};
    for (int o = 0; o < 4; o++) {
        ns_analysis_params q = p;
        if (o == 3)
            q.seed = 2025;
        b = analyze(&q, &others[o], &h, rows_all, 6, &lay);
        CU_ASSERT_PTR_NOT_NULL_FATAL(b);
        int fd_differs = 0;
        for (size_t r = 0; r < 6; r++) {
            const double *ra = a + r * lay.total, *rb = b + r * lay.total;
            for (int id = 0; id < NS_M_COUNT; id++) {
                int differs = 0;
                for (size_t s = lay.offset[id]; s < lay.offset[id] + lay.size[id]; s++)
                    differs |= !(ra[s] == rb[s] || (isnan(ra[s]) && isnan(rb[s])));
                if (id == NS_M_JAC_FD)
                    fd_differs |= differs;
                else
                    CU_ASSERT_EQUAL(differs, id == NS_M_DISTANCE_RANDOM);
            }
        }
        CU_ASSERT(fd_differs);
        free(b);
    }
    free(a);
    /* the probe key ignores N; every component of the tuple matters */
    ns_head_key k0 = {1, 2, 3}, k1 = {1, 2, 4};
    CU_ASSERT_EQUAL(ns_analysis_rng_key(NS_RNG_FD_PROBES, 9, &k0, 5, 1, 0.5),
                    ns_analysis_rng_key(NS_RNG_FD_PROBES, 9, &k0, 5, 7, 0.5));
    CU_ASSERT_NOT_EQUAL(ns_analysis_rng_key(NS_RNG_FD_PROBES, 9, &k0, 5, 1, 0.5),
                        ns_analysis_rng_key(NS_RNG_FD_PROBES, 9, &k1, 5, 1, 0.5));
    CU_ASSERT_NOT_EQUAL(ns_analysis_rng_key(NS_RNG_RANDOM_SUBSET, 9, &k0, 5, 1, 0.5),
                        ns_analysis_rng_key(NS_RNG_RANDOM_SUBSET, 9, &k0, 5, 2, 0.5));
    CU_ASSERT_NOT_EQUAL(ns_analysis_rng_key(NS_RNG_RANDOM_SUBSET, 9, &k0, 5, 1, 0.5),
                        ns_analysis_rng_key(NS_RNG_RANDOM_SUBSET, 9, &k0, 5, 1, 0.25));
    CU_ASSERT_NOT_EQUAL(ns_analysis_rng_key(NS_RNG_RANDOM_SUBSET, 9, &k0, 5, 1, 0.5),
                        ns_analysis_rng_key(NS_RNG_FD_PROBES, 9, &k0, 5, 1, 0.5));
    /* the subset sampler is uniform: L = 5, N = 2 over 20000 keys, each of the 10 subsets
     * within 5 standard deviations of 2000 (sd = sqrt(20000 * 0.1 * 0.9) = 42.4) */
    int count[32] = {0};
    for (uint64_t k = 0; k < 20000; k++) {
        ns_rng rng;
        ns_rng_init(&rng, ns_rng_key(&k, 1));
        size_t sel[2];
        unsigned char in[5] = {0};
        ns_rng_subset(&rng, 5, 2, sel, in);
        count[(1 << sel[0]) | (1 << sel[1])]++;
    }
    int subsets = 0;
    for (int m = 0; m < 32; m++) {
        if (__builtin_popcount(m) == 2) {
            subsets++;
            CU_ASSERT(abs(count[m] - 2000) < 5 * 43);
        } else {
            CU_ASSERT_EQUAL(count[m], 0);
        }
    }
    CU_ASSERT_EQUAL(subsets, 10);
    free_head(&h);
}

/* ---- errors ------------------------------------------------------------------------------- */

static void test_bad_inputs(void)
{
    test_head h = make_head(8, 4, 1, 1.0);
    size_t N[1] = {2};
    double T[1] = {1.0}, eps[1] = {1e-3};
    ns_analysis_params p = {N, 1, T, 1, eps, 1, {NS_NORM_SOFTMAX, 0}, 1, 1, 0};
    ns_analysis_ws *ws = NULL;
    ns_err err;
    CU_ASSERT_EQUAL_FATAL(ns_analysis_ws_new(&p, 8, 4, &ws, &err), NS_OK);
    ns_head_key key = {4, 2, 9};
    ns_head_input in = input_of(&h);
    ns_row_layout lay;
    ns_row_layout_init(&lay, 1, 1, 1);
    double out[64];
    size_t bad_row[1] = {8};
    CU_ASSERT_EQUAL(ns_analyze_head(&p, &key, &in, bad_row, 1, ws, out, &err), NS_ERR_INVALID);
    CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "row 8"));
    size_t row[1] = {7};
    h.logits[7 * 8 + 3] = NAN;
    CU_ASSERT_EQUAL(ns_analyze_head(&p, &key, &in, row, 1, ws, out, &err), NS_ERR_INVALID);
    CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "layer 2 head 9"));
    CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "z[7][3]"));
    h.logits[7 * 8 + 3] = 0.0f;
    double Tbad[1] = {0.0};
    ns_analysis_params q = p;
    q.T = Tbad;
    CU_ASSERT_EQUAL(ns_analyze_head(&q, &key, &in, row, 1, ws, out, &err), NS_ERR_INVALID);
    CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "T[0]"));
    size_t Nbad[1] = {0};
    q = p;
    q.N = Nbad;
    CU_ASSERT_EQUAL(ns_analyze_head(&q, &key, &in, row, 1, ws, out, &err), NS_ERR_INVALID);
    CU_ASSERT_EQUAL(ns_analyze_head(&p, &key, &in, row, 1, ws, out, &err), NS_OK);
    ns_analysis_ws_free(ws);
    free_head(&h);
}

int main(void)
{
    if (CU_initialize_registry() != CUE_SUCCESS)
        return 1;
    CU_pSuite s = CU_add_suite("analysis", NULL, NULL);
    CU_add_test(s, "row layout and metric stems", test_layout_and_names);
    CU_add_test(s, "jac_bound and the violation rule", test_jac_bound_and_violation_rule);
    CU_add_test(s, "two tokens: softmax Jacobian 2ab/T, 1/(2T) violates", test_two_token_softmax_jacobian);
    CU_add_test(s, "secular solver vs bisection and Jacobi", test_secular_solver);
    CU_add_test(s, "exact Jacobian norms vs finite differences", test_exact_norm_vs_finite_differences);
    CU_add_test(s, "uniform weights, identical vectors (bound tight)", test_uniform_identical_vectors);
    CU_add_test(s, "uniform weights, orthonormal vectors", test_uniform_orthonormal);
    CU_add_test(s, "one-hot weights, underflowed tail ranked by logit", test_one_hot_and_underflow_ranking);
    CU_add_test(s, "cross-check against brute force", test_cross_check_brute_force);
    CU_add_test(s, "permutation invariance", test_permutation_invariance);
    CU_add_test(s, "sphere and raw scaling", test_sphere_scaling);
    CU_add_test(s, "determinism and generator keys", test_determinism_and_keys);
    CU_add_test(s, "bad inputs name what is wrong", test_bad_inputs);
    return ns_test_run_all();
}

/* test_analysis: the per-row metrics of METRICS.md (version 2) as ns_analyze_head computes them,
 * with both kernels of the N-dependent metrics:
 * - the row-record layout and the metric table (analysis/ns_metrics.h);
 * - closed forms: uniform weights over identical or orthonormal vectors, one-hot weights with an
 *   underflowed tail (ranked by logit, N_s decided without cancellation), two-token Jacobians and
 *   entropy;
 * - an independent brute force written from METRICS.md v2 (weights in long double, so N_s is
 *   decided exactly also where alpha underflows double) on random rows, real-shaped rows with
 *   logit gaps of 10-50 at T = 0.01, and real rows of the stand-in model;
 * - the fast kernel against the reference kernel on rows up to L = 300, d = 32, within a bound
 *   derived per cell (tests/ns_test_kernels.h);
 * - exact Jacobian norms against a Jacobi eigen-solver and finite differences; invariants under
 *   key permutation and vector scaling; determinism of the counter-based draws, nested random
 *   subsets; bad inputs. */
#include <float.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "norm/ns_jacobian.h"
#include "norm/ns_jacobian_internal.h"
#include "analysis/ns_metrics.h"
#include "analysis/ns_reduce.h"
#include "norm/ns_normalize.h"
#include "analysis/ns_rng.h"
#include "analysis/ns_row.h"
#include "analysis/ns_topn.h"
#include "ns_test.h"
#include "ns_test_kernels.h"
#include "ns_test_model.h"
#include "ns_test_ref.h"

#define BMAX 64 /* largest L of the brute-force rows */
#define DMAX 32 /* largest d of the brute-force rows */
#define BT 6    /* largest nT, nN, neps of the brute force */
#define BN 10
#define BE 3

/* ---- helpers ------------------------------------------------------------------------------ */

static double test_uniform(uint64_t *state)
{
    uint64_t x = (*state += 0x9e3779b97f4a7c15ULL);
    x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
    x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
    x ^= x >> 31;
    return (double)(x >> 11) * 0x1.0p-53;
}

/* One head's data: logits (L_max, L_max), values (L_max, d). */
typedef struct test_head {
    size_t L_max, d;
    float *logits, *values;
} test_head;

static test_head head_alloc(size_t L_max, size_t d)
{
    test_head h = {L_max, d, calloc(L_max * L_max, sizeof(float)), calloc(L_max * d, sizeof(float))};
    CU_ASSERT_FATAL(h.logits && h.values);
    return h;
}

/* Random head: logits uniform in [-scale, scale], values uniform in [-1, 1]. */
static test_head make_head(size_t L_max, size_t d, uint64_t seed, double scale)
{
    test_head h = head_alloc(L_max, d);
    uint64_t st = seed;
    for (size_t i = 0; i < L_max * L_max; i++)
        h.logits[i] = (float)(scale * (2.0 * test_uniform(&st) - 1.0));
    for (size_t i = 0; i < L_max * d; i++)
        h.values[i] = (float)(2.0 * test_uniform(&st) - 1.0);
    return h;
}

/* A real-shaped head: in every row key 0 is an attention sink 0.2 below the top, about one key
 * in ten competes within 1 of the top, and the others lie gap_lo..gap_hi below it (with gaps of
 * 10-50 at T = 0.01 their weights, down to e^-5000, underflow double). Values share a mean
 * direction (0.3 per component) under uniform noise with per-token scales 0.5..2, so x_i . s
 * takes both signs and norms vary, as GPT-2's value vectors do. */
static test_head make_shaped_head(size_t L_max, size_t d, uint64_t seed, double gap_lo,
                                  double gap_hi)
{
    test_head h = head_alloc(L_max, d);
    uint64_t st = seed;
    for (size_t m = 0; m < L_max; m++) {
        float *z = h.logits + m * L_max;
        double top = 4.0 * test_uniform(&st) - 2.0;
        for (size_t i = 0; i <= m; i++) {
            double u = test_uniform(&st);
            double gap = u < 0.1 ? 10.0 * u : gap_lo + (gap_hi - gap_lo) * test_uniform(&st);
            z[i] = (float)(top - gap);
        }
        z[(size_t)(test_uniform(&st) * (double)(m + 1))] = (float)top;
        z[0] = (float)(top - 0.2);
    }
    for (size_t i = 0; i < L_max; i++) {
        double sc = 0.5 + 1.5 * test_uniform(&st);
        for (size_t k = 0; k < d; k++)
            h.values[i * d + k] = (float)(sc * (0.3 + 2.0 * test_uniform(&st) - 1.0));
    }
    return h;
}

static void free_head(test_head *h)
{
    free(h->logits);
    free(h->values);
}

static ns_head_input input_of(const test_head *h)
{
    ns_head_input in = {h->logits, h->L_max, h->values, h->d, h->L_max, h->d, NULL};
    return in;
}

/* How many of the grid's N are below L (the N a cell of context length L has). */
static size_t n_below(const ns_analysis_params *p, size_t L)
{
    size_t k = 0;
    while (k < p->nN && p->N[k] < L)
        k++;
    return k;
}

/* Run ns_analyze_head on rows ms[0..n) with records laid out for the cell of context length
 * L_cell; returns a malloc'd n * lay->total array (NULL on failure, with the message printed). */
static double *analyze_in(const ns_analysis_params *p, const ns_head_key *key,
                          const ns_head_input *in, const size_t *ms, size_t n, size_t L_cell,
                          ns_kernel kernel, ns_row_layout *lay)
{
    ns_row_layout_init(lay, p->nT, n_below(p, L_cell), p->neps,
                       ns_topn_rank_is_T_free(&p->normalizer));
    ns_analysis_ws *ws = NULL;
    ns_err err;
    if (ns_analysis_ws_new(p, in->L_max, in->d, &ws, &err) != NS_OK) {
        fprintf(stderr, "ns_analysis_ws_new: %s\n", err.msg);
        return NULL;
    }
    double *out = malloc((n ? n : 1) * lay->total * sizeof(double));
    ns_row_request *rq = malloc((n ? n : 1) * sizeof *rq);
    int rc = out && rq ? NS_OK : NS_ERR_NOMEM;
    for (size_t k = 0; k < n && rq; k++)
        rq[k] = (ns_row_request){ms[k], lay, out + k * lay->total};
    if (rc == NS_OK)
        rc = ns_analyze_head(p, key, in, rq, n, kernel, ws, &err);
    ns_analysis_ws_free(ws);
    free(rq);
    if (rc != NS_OK) {
        fprintf(stderr, "ns_analyze_head: %s\n", err.msg);
        free(out);
        return NULL;
    }
    return out;
}

/* The same for a test head, the cell being the largest row's context length. */
static double *analyze(const ns_analysis_params *p, const ns_head_key *key, const test_head *h,
                       const size_t *ms, size_t n, ns_kernel kernel, ns_row_layout *lay)
{
    ns_head_input in = input_of(h);
    size_t L_cell = 1;
    for (size_t k = 0; k < n; k++)
        if (ms[k] + 1 > L_cell)
            L_cell = ms[k] + 1;
    return analyze_in(p, key, &in, ms, n, L_cell, kernel, lay);
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

static int same_bits(const double *a, const double *b, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (!(a[i] == b[i] || (isnan(a[i]) && isnan(b[i]))))
            return 0;
    return 1;
}

/* A metric of a record at (t, n, e) for a row of L keys. */
static double val(const ns_row_layout *lay, const double *rec, size_t L, ns_metric_id id,
                  size_t t, size_t n, size_t e)
{
    return ns_row_value(lay, rec, L, id, t, n, e);
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

/* ---- brute force, straight from METRICS.md version 2 -------------------------------------- */

/* Every metric of one row at [id][t][n][e] (NaN where a metric has no such index or is missing). */
typedef struct brute_rec {
    double v[NS_M_COUNT][BT][BN][BE];
} brute_rec;

/* What the brute force saw about N_s. */
typedef struct brute_ns_stats {
    size_t cells;       /* (row, T, N) cells with an N_s */
    size_t naive_wrong; /* cells where comparing ||alpha_i x_i - s|| <= r in double disagrees */
    size_t underflow;   /* cells with a top-N weight that underflows double */
} brute_ns_stats;

/* alpha = F(z / T): softmax and ssmax in long double from the definition (the maximum subtracted,
 * which is the same number), with the exact log-weights la_i = c z_i - max - log sum (finite even
 * where alpha_i underflows long double); sparsemax and entmax15 by bisection on the threshold
 * (tests/ns_test_ref.h), la_i = log alpha_i, and zero[i] = 1 outside the support (la_i is then
 * -LDBL_MAX: no infinity is stored in a long double, which valgrind does not carry through
 * memory). la and zero may be NULL. */
static void brute_weights(const ns_normalizer *f, const double *z, size_t L, double T,
                          long double *a, long double *la, int *zero)
{
    if (zero)
        for (size_t i = 0; i < L; i++)
            zero[i] = 0;
    if (f->kind == NS_NORM_SOFTMAX || f->kind == NS_NORM_SSMAX) {
        long double c = f->kind == NS_NORM_SOFTMAX ? 1.0L / T : f->s * logl((long double)L) / T;
        long double mx = -INFINITY, sum = 0.0L;
        for (size_t i = 0; i < L; i++)
            mx = fmaxl(mx, c * z[i]);
        for (size_t i = 0; i < L; i++)
            sum += expl(c * z[i] - mx);
        for (size_t i = 0; i < L; i++) {
            a[i] = expl(c * z[i] - mx) / sum;
            if (la)
                la[i] = (c * z[i] - mx) - logl(sum);
        }
        return;
    }
    double ad[BMAX];
    ns_test_ref_threshold(ad, z, L, T, f->kind == NS_NORM_ENTMAX15);
    for (size_t i = 0; i < L; i++) {
        a[i] = ad[i];
        if (la)
            la[i] = ad[i] > 0.0 ? logl(ad[i]) : -LDBL_MAX;
        if (zero)
            zero[i] = ad[i] == 0.0;
    }
}

static void brute_weights_d(const ns_normalizer *f, const double *z, size_t L, double T, double *a)
{
    long double al[BMAX];
    brute_weights(f, z, L, T, al, NULL, NULL);
    for (size_t i = 0; i < L; i++)
        a[i] = (double)al[i];
}

static double vnorm(const double *a, size_t d)
{
    double s = 0.0;
    for (size_t k = 0; k < d; k++)
        s += a[k] * a[k];
    return sqrt(s);
}

static double vdist(const double *a, const double *b, size_t d)
{
    double s = 0.0;
    for (size_t k = 0; k < d; k++)
        s += (a[k] - b[k]) * (a[k] - b[k]);
    return sqrt(s);
}

/* sum_{i not in set} ||alpha_i x_i - s||, s = sum_{j in set} alpha_j x_j; r_out (may be NULL)
 * receives the minimum, dist[i] every ||alpha_i x_i - s||. */
static double brute_dist_sum(double X[][DMAX], size_t d, const double *a, size_t L,
                             const int *in_set, double *r_out, double *dist)
{
    double s[DMAX] = {0};
    for (size_t j = 0; j < L; j++)
        if (in_set[j])
            for (size_t k = 0; k < d; k++)
                s[k] += a[j] * X[j][k];
    double sum = 0.0, r = INFINITY;
    for (size_t i = 0; i < L; i++) {
        double t[DMAX];
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

/* N_s of METRICS.md section 6: e_i = ||alpha_i x_i - s||^2 - ||s||^2 = alpha_i (alpha_i ||x_i||^2 -
 * 2 x_i . s) (no cancellation), i counts iff e_i <= min over the complement. Each e_i is held as
 * a sign and the log of its magnitude, log alpha_i + log |alpha_i g_i - 2 x_i . s|, in long double,
 * so weights below even long double's range (ssmax at T = 0.01: e^-14000) keep their order. */
typedef struct brute_slog {
    int sign;
    long double lmag;
} brute_slog;

static int brute_slog_le(brute_slog a, brute_slog b)
{
    if (a.sign != b.sign)
        return a.sign < b.sign;
    if (a.sign == 0)
        return 1;
    return a.sign > 0 ? a.lmag <= b.lmag : a.lmag >= b.lmag;
}

static size_t brute_ns(long double Xl[][DMAX], size_t d, const long double *al,
                       const long double *la, const int *zero, size_t L, const int *in_set)
{
    long double s[DMAX] = {0};
    for (size_t j = 0; j < L; j++)
        if (in_set[j])
            for (size_t k = 0; k < d; k++)
                s[k] += al[j] * Xl[j][k];
    brute_slog e[BMAX], emin = {2, 0.0L};
    for (size_t i = 0; i < L; i++) {
        long double g = 0.0L, xs = 0.0L;
        for (size_t k = 0; k < d; k++) {
            g += Xl[i][k] * Xl[i][k];
            xs += Xl[i][k] * s[k];
        }
        long double q = al[i] * g - 2.0L * xs;
        e[i].sign = (q == 0.0L || zero[i]) ? 0 : (q > 0.0L ? 1 : -1);
        e[i].lmag = e[i].sign ? la[i] + logl(fabsl(q)) : 0.0L;
        if (!in_set[i] && (emin.sign == 2 || brute_slog_le(e[i], emin)))
            emin = e[i];
    }
    size_t ns = 0;
    for (size_t i = 0; i < L; i++)
        ns += in_set[i] && brute_slog_le(e[i], emin);
    return ns;
}

/* The exact Jacobian matrix of F(z/T) w.r.t. z from the normalizer's definition; returns its
 * spectral norm by Jacobi. */
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
            default: v = NAN; break; /* issue 36's: not analysed yet */
            }
            J[i * L + j] = v;
        }
    }
    return jacobi_spectral_norm(J, L);
}

/* Lemma 2's general bound for F(z) = exp(c z), evaluated in long double with the row maximum
 * subtracted (the bound is invariant under that shift); +inf beyond double's range. */
static double brute_lemma2(const double *z, size_t L, double c)
{
    long double mx = -INFINITY, nF = 0.0L, mn = INFINITY;
    for (size_t i = 0; i < L; i++)
        mx = fmaxl(mx, (long double)c * z[i]);
    for (size_t i = 0; i < L; i++) {
        long double F = expl((long double)c * z[i] - mx);
        nF += F * F;
        mn = fminl(mn, F);
    }
    nF = sqrtl(nF);
    long double nFp = fabsl((long double)c) * nF, Ld = (long double)L;
    long double v = nFp / (Ld * mn) + nF * nFp / (Ld * Ld * mn * mn);
    return v > (long double)DBL_MAX ? INFINITY : (double)v;
}

/* jac_fd at every eps: the probe (e_a - e_b)/sqrt 2 of the two largest logits (ties by the smaller
 * index), then P random unit directions replayed from the generator (its key is the contract). */
static void brute_jac_fd(const ns_analysis_params *p, const ns_head_key *key, size_t m,
                         const double *z, const double *a, size_t L, size_t t, brute_rec *b)
{
    static double U[BMAX + 1][BMAX];
    double T = p->T[t];
    size_t nu = 0;
    if (L >= 2) {
        size_t ia = 0, ib;
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
    /* the probe directions are keyed without T (T = 0): the same for every T and eps */
    ns_rng_init(&rng, ns_analysis_rng_key(NS_RNG_FD_PROBES, p->seed, key, m, 0.0));
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
            brute_weights_d(&p->normalizer, zp, L, T, ap);
            double acc = 0.0;
            for (size_t i = 0; i < L; i++)
                acc += (ap[i] - a[i]) * (ap[i] - a[i]);
            best = fmax(best, sqrt(acc) / p->eps[e]);
        }
        b->v[NS_M_JAC_FD][t][0][e] = nu ? best : NAN;
    }
}

/* The row's vectors: x_i (sphere: v_i / ||v_i||) in double and in long double; returns M. */
static double brute_vectors(const ns_analysis_params *p, const ns_head_input *in, size_t L,
                            double X[][DMAX], long double Xl[][DMAX])
{
    double M = 0.0;
    for (size_t i = 0; i < L; i++) {
        long double nr = 0.0L;
        for (size_t k = 0; k < in->d; k++) {
            Xl[i][k] = in->values[i * in->values_ld + k];
            nr += Xl[i][k] * Xl[i][k];
        }
        nr = sqrtl(nr);
        for (size_t k = 0; k < in->d; k++) {
            if (p->sphere && nr > 0.0L)
                Xl[i][k] /= nr;
            X[i][k] = (double)Xl[i][k];
        }
        M = fmax(M, vnorm(X[i], in->d));
    }
    return p->sphere ? 1.0 : M;
}

/* Theorem 2's bounds for I = order[0..N) at radius r (xi_i^2 with both j and k excluding i). */
static void brute_theorem2(const double *a, const size_t *order, size_t N, double r, double M,
                           double delta, double *lower, double *upper)
{
    double xisum = 0.0, up = 0.0;
    for (size_t q = 0; q < N; q++) {
        size_t i = order[q];
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
        double xi = sqrt(fmax(M * M * s1 + (M * M - delta * delta / 2.0) * s2, 0.0));
        xisum += xi;
        up += exp(-(r - xi) * (r - xi) / (16.0 * M * M));
    }
    *lower = r > 0 ? 1.0 - xisum / (r * (double)N) : NAN;
    *upper = up / (double)N;
}

/* The N-dependent metrics of one (row, T, N) into b at [t][n]. */
static void brute_cell(const ns_analysis_params *p, const ns_head_key *key, size_t m,
                       double X[][DMAX], long double Xl[][DMAX], size_t d, const long double *al,
                       const long double *la, const int *zero, const double *a,
                       const size_t *order, double M, double delta, size_t t,
                       size_t n, brute_rec *b, brute_ns_stats *st)
{
    size_t L = m + 1, N = p->N[n];
    double T = p->T[t], dist[BMAX];
    int in[BMAX] = {0};
    long double tail = 0.0L;
    double abar = 0.0, maxn2 = 0.0;
    for (size_t q = 0; q < N; q++) {
        in[order[q]] = 1;
        abar += a[order[q]];
        maxn2 = fmax(maxn2, vnorm(X[order[q]], d) * vnorm(X[order[q]], d));
        st->underflow += la[order[q]] < -745.2L && !zero[order[q]]; /* below double's range */
    }
    for (size_t i = 0; i < L; i++)
        if (!in[i])
            tail += al[i]; /* 1 - abar_N, exactly as the weights give it */
    double r, dd = brute_dist_sum(X, d, a, L, in, &r, dist), d1 = 0.0;
    for (size_t i = 0; i < L; i++)
        for (size_t j = 0; j < L; j++)
            if (!in[i] && in[j])
                d1 = fmax(d1, vdist(X[i], X[j], d));
    double bound = (double)tail * d1 + maxn2 * (abar * (double)(L - N) - (double)tail);
    double xbar[DMAX] = {0}, dexp = 0.0;
    for (size_t i = 0; i < L; i++)
        for (size_t k = 0; k < d; k++)
            xbar[k] += a[i] * X[i][k];
    for (size_t i = 0; i < L; i++) {
        double tt[DMAX];
        for (size_t k = 0; k < d; k++)
            tt[k] = (a[i] + (double)N / (double)(L - 1)) * X[i][k] - xbar[k];
        double nn = vnorm(tt, d);
        dexp += nn * nn;
    }
    dexp *= (double)(L - N) / (double)L;
    size_t Ns = brute_ns(Xl, d, al, la, zero, L, in), naive = 0;
    for (size_t q = 0; q < N; q++)
        naive += dist[order[q]] <= r;
    st->cells++;
    st->naive_wrong += naive != Ns;
    double lower, upper;
    brute_theorem2(a, order, N, r, M, delta, &lower, &upper);
    /* d_random: the first N keys of the permutation keyed by (seed, shard, row, layer, head, T),
     * drawn here for this N alone (the library draws once for its largest N: nesting) */
    size_t perm[BMAX];
    int inr[BMAX] = {0};
    ns_random_prefix(ns_analysis_rng_key(NS_RNG_RANDOM_SUBSET, p->seed, key, m, T), L, N, perm);
    for (size_t q = 0; q < N; q++)
        inr[perm[q]] = 1;
    double drand = brute_dist_sum(X, d, a, L, inr, NULL, dist);
    b->v[NS_M_DISTANCE][t][n][0] = dd;
    b->v[NS_M_DISTANCE_D1][t][n][0] = d1;
    b->v[NS_M_DISTANCE_BOUND][t][n][0] = bound;
    b->v[NS_M_DISTANCE_EXPECTED][t][n][0] = dexp;
    b->v[NS_M_DISTANCE_RANDOM][t][n][0] = drand;
    b->v[NS_M_NS_FRAC][t][n][0] = (double)Ns / (double)N;
    b->v[NS_M_NS_LOWER][t][n][0] = lower;
    b->v[NS_M_NS_UPPER][t][n][0] = upper;
}

/* Every metric of row m from the definitions; N's at n >= nN_cell are skipped (NaN). */
static void brute_row(const ns_analysis_params *p, const ns_head_key *key, const ns_head_input *in,
                      size_t m, size_t nN_cell, brute_rec *b, brute_ns_stats *st)
{
    size_t L = m + 1, d = in->d;
    static double X[BMAX][DMAX];
    static long double Xl[BMAX][DMAX];
    double z[BMAX], a[BMAX];
    long double al[BMAX], la[BMAX];
    int zero[BMAX];
    CU_ASSERT_FATAL(L <= BMAX && d <= DMAX && p->nT <= BT && p->nN <= BN && p->neps <= BE);
    for (size_t q = 0; q < sizeof b->v / sizeof(double); q++)
        (&b->v[0][0][0][0])[q] = NAN;
    double M = brute_vectors(p, in, L, X, Xl);
    for (size_t i = 0; i < L; i++)
        z[i] = in->logits[m * in->logits_ld + i];
    double delta = INFINITY;
    for (size_t i = 0; i < L; i++)
        for (size_t j = 0; j < L; j++)
            if (i != j)
                delta = fmin(delta, vdist(X[i], X[j], d));
    b->v[NS_M_DELTA][0][0][0] = L >= 2 ? delta : NAN;
    for (size_t t = 0; t < p->nT; t++) {
        double T = p->T[t];
        brute_weights(&p->normalizer, z, L, T, al, la, zero);
        for (size_t i = 0; i < L; i++)
            a[i] = (double)al[i];
        /* I_N: the N largest alpha, ties by the smaller index, ranked by the exact log-weight
         * (long double; equal only where the weights are equal) */
        size_t order[BMAX];
        int used[BMAX] = {0};
        for (size_t q = 0; q < L; q++) {
            size_t best = SIZE_MAX;
            for (size_t i = 0; i < L; i++)
                if (!used[i] && (best == SIZE_MAX || la[i] > la[best]))
                    best = i;
            order[q] = best;
            used[best] = 1;
        }
        for (size_t n = 0; n < nN_cell; n++)
            if (p->N[n] < L)
                brute_cell(p, key, m, X, Xl, d, al, la, zero, a, order, M, delta, t, n, b, st);
        long double h = 0.0L;
        for (size_t i = 0; i < L; i++)
            if (al[i] > 0.0L)
                h -= al[i] * la[i];
        b->v[NS_M_ENTROPY][t][0][0] = (double)h;
        b->v[NS_M_ENTROPY_NORM][t][0][0] = L >= 2 ? (double)(h / logl((long double)L)) : NAN;
        b->v[NS_M_N_EFF][t][0][0] = (double)expl(h);
        b->v[NS_M_JAC_EXACT][t][0][0] = brute_jac_exact(&p->normalizer, a, L, T);
        b->v[NS_M_MASS][t][0][0] = 1.0; /* the brute force's normalizers are on the simplex */
        b->v[NS_M_SINK_MASS][t][0][0] = (double)al[0];
        if (ns_topn_rank_is_T_free(&p->normalizer))
            b->v[NS_M_JAC_LEMMA2][t][0][0] =
                brute_lemma2(z, L, ns_normalizer_inv_temp(&p->normalizer, L, T));
        brute_jac_fd(p, key, m, z, a, L, t, b);
    }
}

/* Compare a record (row of L keys) with the brute force at every (metric, t, n, e), the derived
 * metrics through ns_row_value. ns_frac exactly; the rest within 1e-9 relative + 1e-12 absolute:
 * sources of difference are summation order, prefix/suffix sums for xi, Gram-selected pairs,
 * bisection (brute) vs sort-based thresholds, Jacobi vs secular equation, long double vs double
 * weights -- all ~1e-15 relative. jac_fd divides weight differences by eps: the brute force's
 * bisection pins sparsemax/entmax15 weights to a few ulps of y = z/T, so jac_fd also gets
 * 8 eps_mach max(1, max|z|/T) / eps absolute (2.8e-11 observed for a one-hot row at T = 0.01,
 * eps = 1e-3, where the library's is exactly 0). Returns the number of mismatches. */
static int compare_brute(const ns_analysis_params *p, const ns_row_layout *lay, const double *rec,
                         size_t L, const double *z, const brute_rec *b, const char *label)
{
    double zmax = 0.0;
    for (size_t i = 0; i < L; i++)
        zmax = fmax(zmax, fabs(z[i]));
    int bad = 0;
    for (int id = 0; id < NS_M_COUNT; id++) {
        ns_metric_dims dims = ns_metric_info_of((ns_metric_id)id)->dims;
        size_t nt = dims == NS_DIMS_ROW ? 1 : p->nT, nn = dims == NS_DIMS_TN ? p->nN : 1;
        size_t ne = dims == NS_DIMS_TE ? p->neps : 1;
        for (size_t t = 0; t < nt; t++)
            for (size_t n = 0; n < nn; n++)
                for (size_t e = 0; e < ne; e++) {
                    double got = val(lay, rec, L, (ns_metric_id)id, t, n, e);
                    double want = b->v[id][t][n][e];
                    double abs_tol = id == NS_M_JAC_FD
                        ? 1e-12 + 8.0 * DBL_EPSILON * fmax(1.0, zmax / p->T[t]) / p->eps[e]
                        : 1e-12;
                    int ok = id == NS_M_NS_FRAC ? (got == want || (isnan(got) && isnan(want)))
                                                : close_to(got, want, 1e-9, abs_tol);
                    if (!ok && bad++ < 6)
                        fprintf(stderr, "%s %s t %zu n %zu e %zu: %.17g vs brute %.17g\n", label,
                                ns_metric_info_of((ns_metric_id)id)->name, t, n, e, got, want);
                }
    }
    return bad;
}

/* Both kernels against the brute force on rows ms of one head; returns mismatches. */
static int brute_check_head(const ns_analysis_params *p, const ns_head_key *key,
                            const ns_head_input *in, const size_t *ms, size_t n_rows,
                            brute_ns_stats *st, const char *what)
{
    size_t L_cell = 1;
    for (size_t r = 0; r < n_rows; r++)
        L_cell = ms[r] + 1 > L_cell ? ms[r] + 1 : L_cell;
    int bad = 0;
    static brute_rec b;
    ns_row_layout lay;
    double *out[2];
    for (int k = 0; k < 2; k++) {
        out[k] = analyze_in(p, key, in, ms, n_rows, L_cell, (ns_kernel)k, &lay);
        CU_ASSERT_PTR_NOT_NULL_FATAL(out[k]);
    }
    for (size_t r = 0; r < n_rows; r++) {
        brute_row(p, key, in, ms[r], lay.nN, &b, st);
        double z[BMAX];
        for (size_t i = 0; i <= ms[r]; i++)
            z[i] = in->logits[ms[r] * in->logits_ld + i];
        for (int k = 0; k < 2; k++) {
            char label[200];
            snprintf(label, sizeof label, "%s %s sphere %d %s row %zu", what,
                     ns_normalizer_name(p->normalizer.kind), p->sphere,
                     k == NS_KERNEL_FAST ? "fast" : "reference", ms[r]);
            bad += compare_brute(p, &lay, out[k] + r * lay.total, ms[r] + 1, z, &b, label);
        }
    }
    free(out[0]);
    free(out[1]);
    return bad;
}

/* ---- layout, table, bounds ---------------------------------------------------------------- */

static void test_layout_and_table(void)
{
    const char *stems[NS_M_COUNT] = {"distance", "distance_d1", "distance_bound",
                                     "distance_expected", "distance_random", "ns_frac",
                                     "ns_lower", "ns_upper", "delta", "jac_exact", "jac_lemma2",
                                     "entropy", "entropy_norm", "n_eff", "jac_fd", "mass",
                                     "sink_mass"};
    for (int id = 0; id < NS_M_COUNT; id++) {
        const ns_metric_info *mi = ns_metric_info_of((ns_metric_id)id);
        CU_ASSERT_PTR_NOT_NULL_FATAL(mi);
        CU_ASSERT_STRING_EQUAL(mi->name, stems[id]);
        CU_ASSERT(mi->long_name && *mi->long_name && mi->units && *mi->units && mi->meaning &&
                  strstr(mi->meaning, "METRICS.md section"));
    }
    CU_ASSERT_PTR_NULL(ns_metric_info_of(NS_M_COUNT));
    CU_ASSERT_STRING_EQUAL(ns_metric_info_of(NS_M_ENTROPY)->units, "1"); /* nats: not UDUNITS */
    for (int t_free = 0; t_free <= 1; t_free++) {
        size_t nT = 5, nN = 4, neps = 3;
        ns_row_layout lay;
        ns_row_layout_init(&lay, nT, nN, neps, t_free);
        /* 7 (T, N) metrics, d1 per N (T-free ranking) or per (T, N), delta, 4 per-T
         * (jac_exact, jac_lemma2, entropy, entropy_norm), jac_fd, 2 per-T (mass, sink_mass);
         * n_eff derived */
        CU_ASSERT_EQUAL(lay.total,
                        7 * nT * nN + (t_free ? nN : nT * nN) + 1 + 4 * nT + nT * neps + 2 * nT);
        CU_ASSERT_EQUAL(lay.offset[NS_M_N_EFF], SIZE_MAX);
        int seen[256] = {0};
        for (int id = 0; id < NS_M_COUNT; id++) {
            if (id == NS_M_N_EFF)
                continue;
            for (size_t t = 0; t < nT; t++)
                for (size_t n = 0; n < nN; n++)
                    for (size_t e = 0; e < neps; e++) {
                        ns_metric_dims dims = ns_metric_info_of((ns_metric_id)id)->dims;
                        int first = (dims == NS_DIMS_TN || n == 0) && (dims == NS_DIMS_TE || e == 0) &&
                                    (dims != NS_DIMS_ROW || t == 0) &&
                                    !(id == NS_M_DISTANCE_D1 && t_free && t > 0);
                        size_t q = ns_row_index(&lay, (ns_metric_id)id, t, n, e);
                        CU_ASSERT_FATAL(q < lay.total);
                        seen[q] += first;
                        if (id == NS_M_DISTANCE_D1 && t_free) /* one slot per N for every T */
                            CU_ASSERT_EQUAL(q, ns_row_index(&lay, (ns_metric_id)id, 0, n, 0));
                    }
        }
        for (size_t k = 0; k < lay.total; k++)
            CU_ASSERT_EQUAL(seen[k], 1);
        /* derived metrics and skipped N through ns_row_value */
        double rec[256];
        for (size_t k = 0; k < lay.total; k++)
            rec[k] = (double)k + 0.5;
        double h = rec[ns_row_index(&lay, NS_M_ENTROPY, 2, 0, 0)];
        CU_ASSERT_EQUAL(ns_row_value(&lay, rec, 10, NS_M_ENTROPY_NORM, 2, 0, 0),
                        rec[ns_row_index(&lay, NS_M_ENTROPY_NORM, 2, 0, 0)]);
        CU_ASSERT_DOUBLE_EQUAL(ns_row_value(&lay, rec, 10, NS_M_N_EFF, 2, 0, 0), exp(h),
                               1e-15 * exp(h));
        CU_ASSERT(isnan(ns_row_value(&lay, rec, 10, NS_M_DISTANCE, 0, nN, 0)));
        CU_ASSERT(isnan(ns_row_value(&lay, rec, 10, NS_M_DISTANCE_D1, 3, nN + 2, 0)));
        CU_ASSERT_EQUAL(ns_row_value(&lay, rec, 10, NS_M_JAC_FD, 4, 9, 2),
                        rec[ns_row_index(&lay, NS_M_JAC_FD, 4, 0, 2)]);
    }
    /* a layout with no N (a row too short for every N of the grid) */
    ns_row_layout lay0;
    ns_row_layout_init(&lay0, 2, 0, 1, 1);
    CU_ASSERT_EQUAL(lay0.total, 1 + 4 * 2 + 2 + 2 * 2);
}

static void test_jac_bound_and_violation_rule(void)
{
    CU_ASSERT_DOUBLE_EQUAL(ns_jac_bound(1.0), 0.25, 0.0);
    CU_ASSERT_EQUAL(ns_jac_bound(0.01), sqrt(2.0));
    CU_ASSERT_DOUBLE_EQUAL(ns_jac_bound(100.0), 0.0025, 1e-18);
    CU_ASSERT_EQUAL(ns_exceeds(0.25 * (1 + 0.5e-6), 0.25, NS_JAC_SLACK), 0);
    CU_ASSERT_EQUAL(ns_exceeds(0.25 * (1 + 2e-6), 0.25, NS_JAC_SLACK), 1);
    CU_ASSERT_EQUAL(ns_exceeds(NAN, 0.25, NS_JAC_SLACK), 0);
    CU_ASSERT_EQUAL(ns_exceeds(0.3, NAN, NS_JAC_SLACK), 0);
    CU_ASSERT_EQUAL(ns_exceeds(INFINITY, 0.25, NS_JAC_SLACK), 1);
    CU_ASSERT_EQUAL(ns_exceeds(INFINITY, INFINITY, NS_JAC_SLACK), 0);
    CU_ASSERT_EQUAL(ns_exceeds(1e300, INFINITY, NS_JAC_SLACK), 0);
    CU_ASSERT_EQUAL(ns_exceeds(0.1, 0.25, NS_JAC_SLACK), 0);
    /* Theorem 1's slack: relative 1e-9, also for negative bounds */
    CU_ASSERT_EQUAL(ns_exceeds(2.0 * (1 + 0.5e-9), 2.0, NS_THM1_SLACK), 0);
    CU_ASSERT_EQUAL(ns_exceeds(2.0 * (1 + 2e-9), 2.0, NS_THM1_SLACK), 1);
    CU_ASSERT_EQUAL(ns_exceeds(-1.0 + 0.5e-9, -1.0, NS_THM1_SLACK), 0);
    CU_ASSERT_EQUAL(ns_exceeds(-1.0 + 2e-9, -1.0, NS_THM1_SLACK), 1);
}

/* ---- Jacobian norms ----------------------------------------------------------------------- */

/* Two tokens: ||J|| = 2ab/T exactly; at a = b it is 1/(2T), twice the paper's 1/(4T), so the
 * violation rule must count it. Tolerance 1e-14 relative (a few ulps). */
static void test_two_token_softmax_jacobian(void)
{
    ns_normalizer f = {.kind = NS_NORM_SOFTMAX, .s = 0};
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
        CU_ASSERT_EQUAL(ns_exceeds(j, ns_jac_bound(T), NS_JAC_SLACK), 1);
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
    double *out = analyze(&p, &key, &h, rows, 1, NS_KERNEL_FAST, &lay);
    CU_ASSERT_PTR_NOT_NULL_FATAL(out);
    double je = out[ns_row_index(&lay, NS_M_JAC_EXACT, 0, 0, 0)];
    double jf = out[ns_row_index(&lay, NS_M_JAC_FD, 0, 0, 0)];
    CU_ASSERT_DOUBLE_EQUAL(je, 0.5, 1e-15);
    /* the (e_a - e_b)/sqrt 2 probe is the top eigenvector: jac_fd -> 1/2 (O(eps^2) error) */
    CU_ASSERT_DOUBLE_EQUAL(jf, 0.5, 1e-8);
    CU_ASSERT_EQUAL(ns_exceeds(je, ns_jac_bound(1.0), NS_JAC_SLACK), 1);
    CU_ASSERT_EQUAL(ns_exceeds(jf, ns_jac_bound(1.0), NS_JAC_SLACK), 1);
    /* entropy of (1/2, 1/2): log 2 nats, normalised 1, two effective keys */
    CU_ASSERT_DOUBLE_EQUAL(val(&lay, out, 2, NS_M_ENTROPY, 0, 0, 0), log(2.0), 1e-15);
    CU_ASSERT_DOUBLE_EQUAL(val(&lay, out, 2, NS_M_ENTROPY_NORM, 0, 0, 0), 1.0, 1e-15);
    CU_ASSERT_DOUBLE_EQUAL(val(&lay, out, 2, NS_M_N_EFF, 0, 0, 0), 2.0, 1e-14);
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
            case 1: w[i] = exp(-700.0 * u); break;       /* 300 orders of magnitude */
            case 2: w[i] = u < 0.3 ? 0.0 : u; break;     /* deflated zeros */
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
        ns_normalizer f = {.kind = (ns_normalizer_kind)k, .s = 0.9};
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
                ref_out[j] += J[i * L + j] * g[i]; /* before the Jacobi solver overwrites J */
            big = fmax(big, fabs(ref_out[j]));
        }
        for (size_t j = 0; j < L; j++) {
            CU_ASSERT(fabs(out[j] - ref_out[j]) <= 1e-7 * big);
            CU_ASSERT(a[j] > 0.0 || out[j] == 0.0);
        }
        double ref = jacobi_spectral_norm(J, L);
        double got = ns_jac_exact_norm(&f, a, L, T, work);
        CU_ASSERT(close_to(got, ref, 1e-7, 0.0));
        if (!close_to(got, ref, 1e-7, 0.0))
            fprintf(stderr, "normalizer %d: exact %.17g fd %.17g\n", k, got, ref);
    }
}

/* ---- closed forms ------------------------------------------------------------------------- */

static void fill_logits_equal(test_head *h, float v)
{
    for (size_t i = 0; i < h->L_max * h->L_max; i++)
        h->logits[i] = v;
}

/* Uniform weights, identical unit vectors: the Theorem 1 bound holds with equality,
 * d = d_bound = d_random = (L - N)(N - 1)/L, d1 = delta = 0, ns_frac = 1 (every e_i = -a^2),
 * ns_lower = 0 (r = xi), ns_upper = 1, entropy log L, and N = 1 makes r = 0 (ns_lower missing).
 * Both kernels; tolerance 1e-13 relative. */
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
    ns_analysis_params p = {N, 4, T, 2, eps, 1, {.kind = NS_NORM_SOFTMAX, .s = 0}, 1, 4, 3};
    ns_head_key key = {2, 1, 0};
    size_t rows[2] = {9, 19};
    for (int kern = 0; kern < 2; kern++) {
        ns_row_layout lay;
        double *out = analyze(&p, &key, &h, rows, 2, (ns_kernel)kern, &lay);
        CU_ASSERT_PTR_NOT_NULL_FATAL(out);
        for (size_t r = 0; r < 2; r++) {
            double *row = out + r * lay.total;
            size_t Lz = rows[r] + 1;
            double L = (double)Lz;
            CU_ASSERT_EQUAL(val(&lay, row, Lz, NS_M_DELTA, 0, 0, 0), 0.0);
            for (size_t t = 0; t < 2; t++) {
                CU_ASSERT(close_to(val(&lay, row, Lz, NS_M_JAC_EXACT, t, 0, 0), 1.0 / (L * T[t]),
                                   1e-13, 0.0));
                CU_ASSERT(close_to(val(&lay, row, Lz, NS_M_JAC_LEMMA2, t, 0, 0),
                                   (1.0 / T[t]) * (1.0 / sqrt(L) + 1.0 / L), 1e-13, 0.0));
                CU_ASSERT(close_to(val(&lay, row, Lz, NS_M_ENTROPY, t, 0, 0), log(L), 1e-13, 0));
                CU_ASSERT(close_to(val(&lay, row, Lz, NS_M_ENTROPY_NORM, t, 0, 0), 1.0, 1e-13, 0));
                CU_ASSERT(close_to(val(&lay, row, Lz, NS_M_N_EFF, t, 0, 0), L, 1e-13, 0));
                for (size_t n = 0; n < 4; n++) {
                    double Nd = (double)N[n];
#define AT(id) val(&lay, row, Lz, id, t, n, 0)
                    if (Nd >= L) {
                        CU_ASSERT(isnan(AT(NS_M_DISTANCE)) && isnan(AT(NS_M_NS_FRAC)));
                        continue;
                    }
                    double want = (L - Nd) * (Nd - 1.0) / L;
                    CU_ASSERT(close_to(AT(NS_M_DISTANCE), want, 1e-13, 1e-15));
                    CU_ASSERT(close_to(AT(NS_M_DISTANCE_BOUND), want, 1e-13, 1e-15));
                    CU_ASSERT(close_to(AT(NS_M_DISTANCE_RANDOM), want, 1e-13, 1e-15));
                    CU_ASSERT_EQUAL(AT(NS_M_DISTANCE_D1), 0.0);
                    double c0 = 1.0 / L + Nd / (L - 1.0) - 1.0;
                    CU_ASSERT(close_to(AT(NS_M_DISTANCE_EXPECTED), (L - Nd) * c0 * c0, 1e-13, 0.0));
                    CU_ASSERT_EQUAL(AT(NS_M_NS_FRAC), 1.0);
                    CU_ASSERT(close_to(AT(NS_M_NS_UPPER), 1.0, 1e-13, 0.0));
                    if (N[n] == 1) {
                        CU_ASSERT(isnan(AT(NS_M_NS_LOWER)));
                    } else {
                        CU_ASSERT(close_to(AT(NS_M_NS_LOWER), 0.0, 0.0, 1e-12));
                    }
#undef AT
                }
            }
        }
        free(out);
    }
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
    for (int sphere = 0; sphere <= 1; sphere++)
        for (int kern = 0; kern < 2; kern++) {
            ns_analysis_params p = {N, 3, T, 1, eps, 1, {.kind = NS_NORM_SOFTMAX, .s = 0}, sphere, 0, 3};
            ns_head_key key = {0, 0, 0};
            size_t rows[2] = {11, 15};
            ns_row_layout lay;
            double *out = analyze(&p, &key, &h, rows, 2, (ns_kernel)kern, &lay);
            CU_ASSERT_PTR_NOT_NULL_FATAL(out);
            double sc = sphere ? 1.0 : 0.5; /* raw vectors have norm 1/2 = M */
            for (size_t r = 0; r < 2; r++) {
                double *row = out + r * lay.total;
                size_t Lz = rows[r] + 1;
                double L = (double)Lz;
                CU_ASSERT(close_to(val(&lay, row, Lz, NS_M_DELTA, 0, 0, 0), sc * sqrt(2.0), 1e-15, 0));
                CU_ASSERT(close_to(val(&lay, row, Lz, NS_M_N_EFF, 0, 0, 0), L, 1e-13, 0));
                for (size_t n = 0; n < 3; n++) {
                    double Nd = (double)N[n], c0 = Nd / (L - 1.0);
#define AT(id) val(&lay, row, Lz, id, 0, n, 0)
                    CU_ASSERT(close_to(AT(NS_M_DISTANCE), sc * (L - Nd) * sqrt(Nd + 1.0) / L, 1e-13, 0));
                    CU_ASSERT(close_to(AT(NS_M_DISTANCE_D1), sc * sqrt(2.0), 1e-15, 0));
                    CU_ASSERT(close_to(AT(NS_M_DISTANCE_BOUND),
                                       (1.0 - Nd / L) * sc * sqrt(2.0) +
                                           sc * sc * (Nd / L * (L - Nd) - (1.0 - Nd / L)),
                                       1e-13, 0));
                    CU_ASSERT(close_to(AT(NS_M_DISTANCE_EXPECTED),
                                       sc * sc * (L - Nd) * (c0 * c0 + (L - 1.0) / (L * L)), 1e-13, 0));
                    CU_ASSERT_EQUAL(AT(NS_M_NS_FRAC), 1.0);
                    CU_ASSERT(close_to(AT(NS_M_NS_LOWER), 1.0 - sqrt(Nd - 1.0) / sqrt(Nd + 1.0),
                                       1e-13, 1e-15));
                    double g = sqrt(Nd + 1.0) - sqrt(Nd - 1.0);
                    CU_ASSERT(close_to(AT(NS_M_NS_UPPER), exp(-g * g / (16.0 * L * L)), 1e-13, 0));
#undef AT
                }
            }
            free(out);
        }
    free_head(&h);
}

/* One-hot weights (T -> 0 with a unique maximum): s = x_0 up to weights that underflow double,
 * d = d_bound = L - N on the sphere, ns_lower = 1/N... and N_s decided without cancellation.
 * Row: z = (0, -30, -20, -10, -40, -50, -60, -70) at T = 0.01, x_i = e_i except
 * x_3 = (e_3 - e_0)/sqrt 2. Every distance is ||s|| = 1 up to e^-1000, where rounding decides a
 * naive comparison (it counts every key: ns_frac 1). Exactly, e_i = alpha_i (alpha_i - 2 x_i . s):
 * e_0 = -1 + O(e^-1000); for orthogonal keys in I, x_i . s = alpha_i, so e_i = -alpha_i^2 < 0;
 * e_3 = alpha_3 (sqrt 2 - alpha_3) > 0; outside I, e_j = +alpha_j^2. With I ranked by logit
 * (0, 3, 2, 1, 4, ...): N = 1: {0} -> 1; N = 2: {0, 3} -> 1/2; N = 4: {0, 3, 2, 1} -> 3/4.
 * Also jac_exact = 0, Lemma 2 = +inf (min F underflows), entropy 0, and the underflowed tail
 * still ranks by logit. */
static void test_one_hot_and_underflow(void)
{
    size_t Lm = 8, d = 8;
    test_head h = make_head(Lm, d, 3, 1.0);
    for (size_t i = 0; i < Lm; i++)
        for (size_t k = 0; k < d; k++)
            h.values[i * d + k] = k == i ? 1.0f : 0.0f;
    float zr[8] = {0, -30, -20, -10, -40, -50, -60, -70};
    memcpy(h.logits + 7 * Lm, zr, sizeof zr);
    h.values[3 * d + 3] = 1.0f;
    h.values[3 * d + 0] = -1.0f; /* x_3 = (-1, 0, 0, 1, ...)/sqrt 2 on the sphere */
    size_t N[3] = {1, 2, 4};
    double T[1] = {0.01}, eps[1] = {1e-3}, want_ns[3] = {1.0, 0.5, 0.75};
    ns_analysis_params p = {N, 3, T, 1, eps, 1, {.kind = NS_NORM_SOFTMAX, .s = 0}, 1, 2, 3};
    ns_head_key key = {0, 0, 0};
    size_t rows[1] = {7};
    for (int kern = 0; kern < 2; kern++) {
        ns_row_layout lay;
        double *out = analyze(&p, &key, &h, rows, 1, (ns_kernel)kern, &lay);
        CU_ASSERT_PTR_NOT_NULL_FATAL(out);
        double L = 8.0;
        for (size_t n = 0; n < 3; n++) {
            double Nd = (double)N[n];
#define AT(id) val(&lay, out, 8, id, 0, n, 0)
            CU_ASSERT(close_to(AT(NS_M_DISTANCE), L - Nd, 1e-15, 0));
            CU_ASSERT(close_to(AT(NS_M_DISTANCE_BOUND), L - Nd, 1e-15, 0));
            CU_ASSERT_EQUAL(AT(NS_M_NS_FRAC), want_ns[n]);
            if (AT(NS_M_NS_FRAC) != want_ns[n])
                fprintf(stderr, "one-hot N = %zu kernel %d: ns_frac %g, exact %g\n", N[n], kern,
                        AT(NS_M_NS_FRAC), want_ns[n]);
            CU_ASSERT(close_to(AT(NS_M_NS_LOWER), 1.0 / Nd, 1e-15, 0));
            CU_ASSERT(close_to(AT(NS_M_NS_UPPER), (exp(-1.0 / 16.0) + Nd - 1.0) / Nd, 1e-15, 0));
#undef AT
        }
        /* d1 for N = 2 with I = {0, 3}: the farthest pair is x_3 vs any e_i (i not 0, 3):
         * ||(-1, 0, 0, 1)/sqrt 2 - e_i||^2 = 2 -> sqrt 2; with I = {0, 1} it would be
         * ||x_3 - e_0|| = sqrt((1 + 1/sqrt 2)^2 + 1/2) = 1.848; with I = {0} (N = 1): 1.848 too */
        CU_ASSERT(close_to(val(&lay, out, 8, NS_M_DISTANCE_D1, 0, 1, 0), sqrt(2.0), 1e-15, 0));
        double far = sqrt((1.0 + M_SQRT1_2) * (1.0 + M_SQRT1_2) + 0.5);
        CU_ASSERT(close_to(val(&lay, out, 8, NS_M_DISTANCE_D1, 0, 0, 0), far, 1e-15, 0));
        CU_ASSERT_EQUAL(val(&lay, out, 8, NS_M_JAC_EXACT, 0, 0, 0), 0.0);
        CU_ASSERT(isinf(val(&lay, out, 8, NS_M_JAC_LEMMA2, 0, 0, 0)));
        CU_ASSERT_EQUAL(val(&lay, out, 8, NS_M_ENTROPY, 0, 0, 0), 0.0);
        CU_ASSERT_EQUAL(val(&lay, out, 8, NS_M_N_EFF, 0, 0, 0), 1.0);
        free(out);
    }
    /* the ranking helper directly: ties of alpha (0 = 0) ordered by logit for softmax */
    double z[8], a[8];
    size_t order[8];
    ns_rank_item items[8];
    for (int i = 0; i < 8; i++) {
        z[i] = zr[i];
        a[i] = i == 0 ? 1.0 : 0.0;
    }
    ns_normalizer sm = {.kind = NS_NORM_SOFTMAX, .s = 0}, sp = {.kind = NS_NORM_SPARSEMAX, .s = 0};
    ns_topn_rank_row(order, items, &sm, z, a, 8, 0.01);
    size_t want_sm[8] = {0, 3, 2, 1, 4, 5, 6, 7};
    for (int i = 0; i < 8; i++)
        CU_ASSERT_EQUAL(order[i], want_sm[i]);
    /* sparsemax: exact zeros tie and follow by index */
    ns_topn_rank_row(order, items, &sp, z, a, 8, 0.01);
    for (int i = 0; i < 8; i++)
        CU_ASSERT_EQUAL(order[i], (size_t)i);
    free_head(&h);
}

/* Entropy of a two-key row with logits (0, -1) at T = 1: p = 1/(1 + e^-1),
 * H = -p log p - (1 - p) log(1 - p); at T = 0.5 the gap doubles. Tolerance 1e-14 relative. */
static void test_entropy_two_keys(void)
{
    test_head h = make_head(2, 3, 11, 1.0);
    h.logits[2] = 0.0f;
    h.logits[3] = -1.0f;
    size_t N[1] = {1};
    double T[2] = {1.0, 0.5}, eps[1] = {1e-3};
    for (int k = 0; k < 2; k++) {
        ns_analysis_params p = {N, 1, T, 2, eps, 1, {.kind = k ? NS_NORM_SSMAX : NS_NORM_SOFTMAX, .s = 1.0 / log(2.0)},
                                1, 0, 1};
        ns_head_key key = {0, 0, 0};
        size_t rows[1] = {1};
        ns_row_layout lay;
        double *out = analyze(&p, &key, &h, rows, 1, NS_KERNEL_FAST, &lay);
        CU_ASSERT_PTR_NOT_NULL_FATAL(out);
        for (size_t t = 0; t < 2; t++) {
            /* ssmax with s = 1/log 2 at L = 2 is softmax: s log L = 1 */
            double pp = 1.0 / (1.0 + exp(-1.0 / T[t]));
            double H = -pp * log(pp) - (1.0 - pp) * log1p(-pp);
            CU_ASSERT(close_to(val(&lay, out, 2, NS_M_ENTROPY, t, 0, 0), H, 1e-14, 0));
            CU_ASSERT(close_to(val(&lay, out, 2, NS_M_ENTROPY_NORM, t, 0, 0), H / log(2.0), 1e-14, 0));
            CU_ASSERT(close_to(val(&lay, out, 2, NS_M_N_EFF, t, 0, 0), exp(H), 1e-14, 0));
        }
        free(out);
    }
    free_head(&h);
}

/* ---- cross-check against the brute force -------------------------------------------------- */

/* Random rows for every normalizer, sphere on and off, both kernels: every metric agrees with
 * the brute force (compare_brute), rows with fewer keys than the cell skip the N they do not
 * have (row 0: every N). Also d <= d_bound on the sphere and ns_frac in [0, 1]. */
static void test_brute_random_rows(void)
{
    size_t Lm = 40, d = 8;
    size_t N[4] = {1, 3, 10, 39};
    double T[4] = {0.01, 0.5, 1.0, 3.0}, eps[2] = {1e-3, 1e-1};
    size_t rows[5] = {39, 0, 1, 5, 17};
    int bad = 0;
    brute_ns_stats st = {0};
    for (int k = 0; k < 4; k++) {
        for (int sphere = 0; sphere <= 1; sphere++) {
            test_head h = make_head(Lm, d, 100 + 10 * k + sphere, 2.0);
            ns_analysis_params p = {N, 4, T, 4, eps, 2, {.kind = (ns_normalizer_kind)k, .s = 0.8}, sphere, 3,
                                    12345};
            ns_head_key key = {3, 2, 1};
            ns_head_input in = input_of(&h);
            bad += brute_check_head(&p, &key, &in, rows, 5, &st, "random");
            ns_row_layout lay;
            double *out = analyze(&p, &key, &h, rows, 5, NS_KERNEL_FAST, &lay);
            CU_ASSERT_PTR_NOT_NULL_FATAL(out);
            for (size_t r = 0; r < 5; r++) {
                const double *row = out + r * lay.total;
                size_t Lz = rows[r] + 1;
                for (size_t t = 0; t < 4; t++)
                    for (size_t n = 0; n < 4; n++) {
                        double f = val(&lay, row, Lz, NS_M_NS_FRAC, t, n, 0);
                        CU_ASSERT(isnan(f) == (N[n] >= Lz));
                        if (!isnan(f)) /* N_s = 0 is possible for N >= 2 */
                            CU_ASSERT(f >= 0.0 && f <= 1.0 &&
                                      fabs(f * (double)N[n] - round(f * (double)N[n])) < 1e-9);
                        double dd = val(&lay, row, Lz, NS_M_DISTANCE, t, n, 0);
                        double db = val(&lay, row, Lz, NS_M_DISTANCE_BOUND, t, n, 0);
                        if (!isnan(dd) && sphere)
                            CU_ASSERT(!ns_exceeds(dd, db, NS_THM1_SLACK));
                    }
                if (rows[r] == 0) { /* one key: every N skipped, delta missing, Jacobians 0 */
                    CU_ASSERT(isnan(val(&lay, row, 1, NS_M_DISTANCE, 0, 0, 0)));
                    CU_ASSERT(isnan(val(&lay, row, 1, NS_M_DELTA, 0, 0, 0)));
                    CU_ASSERT_EQUAL(val(&lay, row, 1, NS_M_JAC_EXACT, 0, 0, 0), 0.0);
                    CU_ASSERT_EQUAL(val(&lay, row, 1, NS_M_JAC_FD, 0, 0, 0), 0.0);
                    CU_ASSERT_EQUAL(val(&lay, row, 1, NS_M_ENTROPY, 0, 0, 0), 0.0);
                }
            }
            free(out);
            free_head(&h);
        }
    }
    CU_ASSERT_EQUAL(bad, 0);
    CU_ASSERT(st.cells > 0);
}

/* Real-shaped rows with logit gaps of 10-50 (tests/ make_shaped_head) at T = 0.01, 0.1 and 1,
 * all four normalizers, sphere on and off, both kernels, against the brute force: at T = 0.01
 * most weights underflow double (e^-1000..e^-5000) and the naive comparison of distances decides
 * N_s by rounding; the library must agree with the long-double e_i of the brute force in every
 * cell. The test requires that the data really has such cells (naive_wrong > 0, underflow > 0),
 * so it cannot pass vacuously. */
static void test_brute_underflow_rows(void)
{
    size_t Lm = 64, d = 32;
    size_t N[7] = {1, 2, 4, 8, 16, 32, 63};
    double T[3] = {0.01, 0.1, 1.0}, eps[1] = {1e-2};
    size_t rows[4] = {63, 62, 40, 20};
    int bad = 0;
    brute_ns_stats st = {0};
    for (int k = 0; k < 4; k++)
        for (int sphere = 0; sphere <= 1; sphere++) {
            test_head h = make_shaped_head(Lm, d, 500 + 10 * k + sphere, 10.0, 50.0);
            ns_analysis_params p = {N, 7, T, 3, eps, 1, {.kind = (ns_normalizer_kind)k, .s = 0.7}, sphere, 2,
                                    99};
            ns_head_key key = {11, 1, 2};
            ns_head_input in = input_of(&h);
            bad += brute_check_head(&p, &key, &in, rows, 4, &st, "underflow");
            free_head(&h);
        }
    printf("\n  underflow rows: %zu N_s cells exact; the naive comparison is wrong in %zu, "
           "%zu top-N weights underflow double\n", st.cells, st.naive_wrong, st.underflow);
    CU_ASSERT_EQUAL(bad, 0);
    CU_ASSERT(st.naive_wrong > 0);
    CU_ASSERT(st.underflow > 0);
}

/* Real rows of the stand-in model (tokens 410000.. of War and Peace, L = 64, d = 32): every head
 * with softmax at T = 0.01, 0.1, 1 and four heads with the other normalizers, both kernels,
 * against the brute force. */
static void test_brute_real_rows(void)
{
    layer_capture cap;
    CU_ASSERT_EQUAL_FATAL(standin_capture(410000, 64, &cap), 0);
    CU_ASSERT_FATAL(cap.D <= DMAX);
    size_t N[7] = {1, 2, 4, 8, 16, 32, 63};
    double T[3] = {0.01, 0.1, 1.0}, eps[1] = {1e-3};
    size_t rows[2] = {63, 50};
    int bad = 0;
    brute_ns_stats st = {0};
    for (size_t l = 0; l < cap.n_layer; l++)
        for (size_t hh = 0; hh < cap.H; hh++)
            for (int k = 0; k < 4; k++) {
                if (k > 0 && hh != (l + (size_t)k) % cap.H)
                    continue;
                ns_analysis_params p = {N, 7, T, 3, eps, 1, {.kind = (ns_normalizer_kind)k, .s = 0.5},
                                        k != 1, 2, 5};
                ns_head_key key = {410000, (uint32_t)l, (uint32_t)hh};
                ns_head_input in = layer_capture_head(&cap, l, hh);
                bad += brute_check_head(&p, &key, &in, rows, 2, &st, "real");
            }
    printf("\n  real rows: %zu N_s cells exact (the naive comparison is wrong in %zu)\n", st.cells,
           st.naive_wrong);
    CU_ASSERT_EQUAL(bad, 0);
    layer_capture_free(&cap);
}

/* ---- fast kernel against the reference kernel --------------------------------------------- */

/* Both kernels on one head, rows ms (cell L = ms[0] + 1), compared by ka_compare_head. */
static void kernels_on_head(kernel_agreement *ka, const ns_analysis_params *p,
                            const ns_head_key *key, const ns_head_input *in, const size_t *ms,
                            size_t n_rows)
{
    ns_row_layout lay;
    double *f = analyze_in(p, key, in, ms, n_rows, ms[0] + 1, NS_KERNEL_FAST, &lay);
    double *r = analyze_in(p, key, in, ms, n_rows, ms[0] + 1, NS_KERNEL_REFERENCE, &lay);
    CU_ASSERT_PTR_NOT_NULL_FATAL(f);
    CU_ASSERT_PTR_NOT_NULL_FATAL(r);
    CU_ASSERT_EQUAL(ka_compare_head(ka, p, key, in, ms, n_rows, &lay, f, r), 0);
    free(f);
    free(r);
}

/* Random and real-shaped rows of up to L = 300 keys, d = 32, every normalizer, sphere on and
 * off, T from 0.01 to 100, N up to L - 1, five rows per cell (the shorter ones skip the large N).
 * The bound and its derivation: tests/ns_test_kernels.h. */
static void test_kernels_synthetic(void)
{
    size_t N[8] = {1, 2, 5, 17, 64, 150, 250, 299};
    double T[5] = {0.01, 0.1, 1.0, 10.0, 100.0}, eps[1] = {1e-3};
    size_t rows[5] = {299, 298, 200, 64, 39};
    kernel_agreement ka = {0};
    for (int shaped = 0; shaped <= 1; shaped++)
        for (int k = 0; k < 4; k++) {
            int sphere = (k + shaped) % 2;
            test_head h = shaped ? make_shaped_head(300, 32, 900 + k, 10.0, 50.0)
                                 : make_head(300, 32, 800 + k, 3.0);
            ns_analysis_params p = {N, 8, T, 5, eps, 1, {.kind = (ns_normalizer_kind)k, .s = 0.6}, sphere, 1,
                                    4242};
            ns_head_key key = {7, 1, (uint32_t)k};
            ns_head_input in = input_of(&h);
            kernels_on_head(&ka, &p, &key, &in, rows, 5);
            free_head(&h);
        }
    ka_print(&ka, "synthetic rows");
    CU_ASSERT_EQUAL(ka.bad, 0);
    CU_ASSERT(ka.cells > 0 && ka.skipped > 0);
}

/* Real rows of the stand-in model (tokens 420000.., L = 300): one head per layer for every
 * normalizer, sphere on (softmax, sparsemax) and off (ssmax, entmax15). */
static void test_kernels_real(void)
{
    layer_capture cap;
    CU_ASSERT_EQUAL_FATAL(standin_capture(420000, 300, &cap), 0);
    size_t N[8] = {1, 2, 5, 17, 64, 150, 250, 299};
    double T[5] = {0.01, 0.1, 1.0, 10.0, 100.0}, eps[1] = {1e-3};
    size_t rows[3] = {299, 297, 129};
    kernel_agreement ka = {0};
    for (size_t l = 0; l < cap.n_layer; l++)
        for (int k = 0; k < 4; k++) {
            size_t hh = (l + (size_t)k) % cap.H;
            ns_analysis_params p = {N, 8, T, 5, eps, 1, {.kind = (ns_normalizer_kind)k, .s = 0.6}, k % 2 == 0,
                                    1, 31};
            ns_head_key key = {420000, (uint32_t)l, (uint32_t)hh};
            ns_head_input in = layer_capture_head(&cap, l, hh);
            kernels_on_head(&ka, &p, &key, &in, rows, 3);
        }
    ka_print(&ka, "real rows");
    CU_ASSERT_EQUAL(ka.bad, 0);
    layer_capture_free(&cap);
}

/* ---- METRICS v2 specifics: d1's dimensions, nested subsets -------------------------------- */

/* d1 depends on the top-N set only: for softmax and ssmax the set is ranked by logit whatever T,
 * so d1 is stored once per N; for sparsemax and entmax15 the ranking ties outside the support
 * (by index) and the support shrinks with T, so d1 is stored per (T, N) and does change with T. */
static void test_d1_dimensions(void)
{
    size_t N[3] = {2, 10, 30};
    double T[3] = {0.01, 1.0, 100.0}, eps[1] = {1e-3};
    test_head h = make_head(40, 8, 4, 2.0);
    size_t rows[1] = {39};
    for (int k = 0; k < 4; k++) {
        ns_analysis_params p = {N, 3, T, 3, eps, 1, {.kind = (ns_normalizer_kind)k, .s = 0.8}, 1, 0, 1};
        ns_head_key key = {0, 0, 0};
        ns_row_layout lay;
        double *out = analyze(&p, &key, &h, rows, 1, NS_KERNEL_FAST, &lay);
        CU_ASSERT_PTR_NOT_NULL_FATAL(out);
        int t_free = k == NS_NORM_SOFTMAX || k == NS_NORM_SSMAX, differs = 0;
        CU_ASSERT_EQUAL(lay.t_free_rank, t_free);
        for (size_t n = 0; n < 3; n++)
            for (size_t t = 1; t < 3; t++)
                differs |= val(&lay, out, 40, NS_M_DISTANCE_D1, t, n, 0) !=
                           val(&lay, out, 40, NS_M_DISTANCE_D1, 0, n, 0);
        CU_ASSERT_EQUAL(differs, !t_free);
        free(out);
    }
    free_head(&h);
}

/* ns_random_prefix: a partial Fisher-Yates shuffle, so the first n entries do not depend on n
 * (the nested subsets of d_random) and every ordered n-prefix is equally likely: L = 5, n = 2
 * over 40000 keys, each of the 20 ordered pairs within 5 standard deviations of 2000
 * (sd = sqrt(40000 * 0.05 * 0.95) = 43.6), and each of the 120 full permutations of L = 5 within
 * 5 sd of 40000/120 (sd = 18.2). */
static void test_random_prefix(void)
{
    for (uint64_t key = 1; key < 50; key++) {
        size_t full[40], part[40];
        ns_random_prefix(key, 40, 39, full);
        for (size_t n = 0; n <= 39; n += 3) {
            ns_random_prefix(key, 40, n, part);
            CU_ASSERT_EQUAL(memcmp(full, part, n * sizeof *full), 0);
        }
        int seen[40] = {0};
        for (size_t i = 0; i < 40; i++)
            seen[full[i]]++;
        for (size_t i = 0; i < 40; i++)
            CU_ASSERT_EQUAL(seen[i], 1);
    }
    static int pairs[25], perms[3125];
    for (uint64_t k = 0; k < 40000; k++) {
        size_t perm[5];
        uint64_t key = ns_rng_key(&k, 1);
        ns_random_prefix(key, 5, 2, perm);
        pairs[perm[0] * 5 + perm[1]]++;
        ns_random_prefix(key ^ 0x5555, 5, 5, perm);
        perms[(((perm[0] * 5 + perm[1]) * 5 + perm[2]) * 5 + perm[3]) * 5 + perm[4]]++;
    }
    int npairs = 0, nperms = 0;
    for (int i = 0; i < 25; i++) {
        if (i / 5 == i % 5) {
            CU_ASSERT_EQUAL(pairs[i], 0);
            continue;
        }
        npairs++;
        CU_ASSERT(abs(pairs[i] - 2000) < 5 * 44);
    }
    for (int i = 0; i < 3125; i++)
        if (perms[i]) {
            nperms++;
            CU_ASSERT(fabs(perms[i] - 40000.0 / 120.0) < 5 * 18.2);
        }
    CU_ASSERT_EQUAL(npairs, 20);
    CU_ASSERT_EQUAL(nperms, 120);
}

/* ---- invariants --------------------------------------------------------------------------- */

/* Permuting the keys of a row (logits and values together) leaves every metric unchanged
 * (probes = 0 so jac_fd uses only the permutation-equivariant (e_a - e_b) probe; d_random
 * is excluded: its subset is drawn by position). Distinct random logits: no ties. Tolerance
 * 1e-11 relative: the same sums in another order, each term within the kernels' error bound
 * (ns_test_kernels.h), ~1e-13 here. */
static void test_permutation_invariance(void)
{
    size_t Lm = 30, d = 7;
    size_t N[3] = {1, 4, 12};
    double T[3] = {0.05, 1.0, 20.0}, eps[2] = {1e-3, 1.0};
    for (int k = 0; k < 4; k++)
        for (int kern = 0; kern < 2; kern++) {
            test_head h = make_head(Lm, d, 200 + k, 3.0), g = make_head(Lm, d, 1, 1.0);
            size_t perm[30];
            for (size_t i = 0; i < Lm; i++)
                perm[i] = (7 * i + 3) % Lm; /* 7 is coprime with 30 */
            for (size_t i = 0; i < Lm; i++) {
                g.logits[(Lm - 1) * Lm + perm[i]] = h.logits[(Lm - 1) * Lm + i];
                memcpy(g.values + perm[i] * d, h.values + i * d, d * sizeof(float));
            }
            ns_analysis_params p = {N, 3, T, 3, eps, 2, {.kind = (ns_normalizer_kind)k, .s = 1.1}, 1, 0, 9};
            ns_head_key key = {0, 0, 0};
            size_t rows[1] = {Lm - 1};
            ns_row_layout lay;
            double *a = analyze(&p, &key, &h, rows, 1, (ns_kernel)kern, &lay);
            double *b = analyze(&p, &key, &g, rows, 1, (ns_kernel)kern, &lay);
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
                if (id == NS_M_DISTANCE_RANDOM || id == NS_M_SINK_MASS) /* key 0 is a position */
                    continue;
                ns_metric_dims dims = ns_metric_info_of((ns_metric_id)id)->dims;
                for (size_t t = 0; t < 3; t++)
                    for (size_t n = 0; n < 3; n++)
                        for (size_t e = 0; e < 2; e++) {
                            if (dims == NS_DIMS_TN && N[n] > support[t])
                                continue;
                            double x = val(&lay, a, Lm, (ns_metric_id)id, t, n, e);
                            double y = val(&lay, b, Lm, (ns_metric_id)id, t, n, e);
                            CU_ASSERT(close_to(x, y, 1e-11, 1e-14));
                            if (!close_to(x, y, 1e-11, 1e-14))
                                fprintf(stderr, "perm normalizer %d kernel %d %s: %.17g vs %.17g\n",
                                        k, kern, ns_metric_info_of((ns_metric_id)id)->name, x, y);
                        }
            }
            free(a);
            free(b);
            free_head(&h);
            free_head(&g);
        }
}

/* sphere: true makes every metric invariant under positive per-token rescaling of the values by
 * powers of 2: the unit vectors come out bit for bit the same, so the records are bitwise equal.
 * sphere: false with the values times 4 (exact in binary, and every operation of both kernels
 * commutes with it): lengths scale by exactly 4, d_expected by 16, ns_* and the Jacobians not at
 * all -- bitwise. (d_bound mixes a length and a squared length: not compared.) */
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
    size_t rows[3] = {23, 15, 7};
    ns_head_key key = {1, 1, 1};
    for (int kern = 0; kern < 2; kern++) {
        ns_row_layout lay;
        ns_analysis_params p = {N, 2, T, 2, eps, 1, {.kind = NS_NORM_SOFTMAX, .s = 0}, 1, 2, 1};
        double *a = analyze(&p, &key, &h, rows, 3, (ns_kernel)kern, &lay);
        double *b = analyze(&p, &key, &g, rows, 3, (ns_kernel)kern, &lay);
        CU_ASSERT_PTR_NOT_NULL_FATAL(a);
        CU_ASSERT_PTR_NOT_NULL_FATAL(b);
        CU_ASSERT(same_bits(a, b, 3 * lay.total));
        free(b);
        free(a);
        for (size_t i = 0; i < Lm * d; i++)
            g.values[i] = 4.0f * h.values[i];
        p.sphere = 0;
        a = analyze(&p, &key, &h, rows, 3, (ns_kernel)kern, &lay);
        b = analyze(&p, &key, &g, rows, 3, (ns_kernel)kern, &lay);
        CU_ASSERT_PTR_NOT_NULL_FATAL(a);
        CU_ASSERT_PTR_NOT_NULL_FATAL(b);
        for (size_t r = 0; r < 3; r++) {
            const double *ra = a + r * lay.total, *rb = b + r * lay.total;
            size_t Lz = rows[r] + 1;
            CU_ASSERT_EQUAL(val(&lay, rb, Lz, NS_M_DELTA, 0, 0, 0), 4 * val(&lay, ra, Lz, NS_M_DELTA, 0, 0, 0));
            for (size_t t = 0; t < 2; t++) {
                CU_ASSERT_EQUAL(val(&lay, rb, Lz, NS_M_ENTROPY, t, 0, 0), val(&lay, ra, Lz, NS_M_ENTROPY, t, 0, 0));
                CU_ASSERT_EQUAL(val(&lay, rb, Lz, NS_M_JAC_EXACT, t, 0, 0), val(&lay, ra, Lz, NS_M_JAC_EXACT, t, 0, 0));
                for (size_t n = 0; n < 2; n++) {
#define AT(buf, id) val(&lay, buf, Lz, id, t, n, 0)
                    CU_ASSERT_EQUAL(AT(rb, NS_M_DISTANCE), 4 * AT(ra, NS_M_DISTANCE));
                    CU_ASSERT_EQUAL(AT(rb, NS_M_DISTANCE_D1), 4 * AT(ra, NS_M_DISTANCE_D1));
                    CU_ASSERT_EQUAL(AT(rb, NS_M_DISTANCE_RANDOM), 4 * AT(ra, NS_M_DISTANCE_RANDOM));
                    CU_ASSERT_EQUAL(AT(rb, NS_M_DISTANCE_EXPECTED), 16 * AT(ra, NS_M_DISTANCE_EXPECTED));
                    CU_ASSERT_EQUAL(AT(rb, NS_M_NS_FRAC), AT(ra, NS_M_NS_FRAC));
                    CU_ASSERT_EQUAL(AT(rb, NS_M_NS_LOWER), AT(ra, NS_M_NS_LOWER));
                    CU_ASSERT_EQUAL(AT(rb, NS_M_NS_UPPER), AT(ra, NS_M_NS_UPPER));
#undef AT
                }
            }
        }
        free(a);
        free(b);
        memcpy(g.values, h.values, Lm * d * sizeof(float));
        st = 5;
        for (size_t i = 0; i < Lm; i++) {
            float c = ldexpf(1.0f, (int)(test_uniform(&st) * 5.0) - 2);
            for (size_t k = 0; k < d; k++)
                g.values[i * d + k] = h.values[i * d + k] * c;
        }
    }
    free_head(&h);
    free_head(&g);
}

/* ---- determinism -------------------------------------------------------------------------- */

/* The same key gives bit-identical results whatever else the call analyses (one row alone vs
 * several, rows in another order, another cell layout for the same row); another seed, shard,
 * layer or head changes d_random (in every row) and jac_fd (in some row: at eps = 10 the
 * saturated (e_a - e_b) probe no longer dominates, so the random directions decide the maximum)
 * and nothing else. */
static void test_determinism_and_keys(void)
{
    size_t Lm = 64, d = 8;
    size_t N[2] = {3, 9};
    double T[2] = {0.5, 2.0}, eps[2] = {1e-2, 10.0};
    test_head h = make_head(Lm, d, 9, 2.0);
    ns_analysis_params p = {N, 2, T, 2, eps, 2, {.kind = NS_NORM_SOFTMAX, .s = 0}, 1, 8, 2024};
    ns_head_key key = {5, 3, 7};
    size_t rows_all[6] = {63, 40, 20, 30, 50, 60}, row_one[2] = {63, 40};
    ns_row_layout lay;
    double *a = analyze(&p, &key, &h, rows_all, 6, NS_KERNEL_FAST, &lay);
    double *b = analyze(&p, &key, &h, row_one, 2, NS_KERNEL_FAST, &lay);
    CU_ASSERT_PTR_NOT_NULL_FATAL(a);
    CU_ASSERT_PTR_NOT_NULL_FATAL(b);
    CU_ASSERT(same_bits(a + lay.total, b + lay.total, lay.total));
    free(b);
    ns_head_key others[4] = {{5, 3, 8}, {6, 3, 7}, {5, 4, 7}, {5, 3, 7}};
    for (int o = 0; o < 4; o++) {
        ns_analysis_params q = p;
        if (o == 3)
            q.seed = 2025;
        b = analyze(&q, &others[o], &h, rows_all, 6, NS_KERNEL_FAST, &lay);
        CU_ASSERT_PTR_NOT_NULL_FATAL(b);
        int fd_differs = 0;
        for (size_t r = 0; r < 6; r++) {
            const double *ra = a + r * lay.total, *rb = b + r * lay.total;
            for (int id = 0; id < NS_M_COUNT; id++) {
                if (lay.offset[id] == SIZE_MAX)
                    continue;
                size_t next = lay.total;
                for (int j = 0; j < NS_M_COUNT; j++)
                    if (lay.offset[j] != SIZE_MAX && lay.offset[j] > lay.offset[id] &&
                        lay.offset[j] < next)
                        next = lay.offset[j];
                int differs = !same_bits(ra + lay.offset[id], rb + lay.offset[id],
                                         next - lay.offset[id]);
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
    /* every component of the key tuple matters, and the two purposes draw different streams */
    ns_head_key k0 = {1, 2, 3}, k1 = {1, 2, 4}, k2 = {2, 2, 3}, k3 = {1, 3, 3};
    uint64_t base = ns_analysis_rng_key(NS_RNG_RANDOM_SUBSET, 9, &k0, 5, 0.5);
    CU_ASSERT_EQUAL(base, ns_analysis_rng_key(NS_RNG_RANDOM_SUBSET, 9, &k0, 5, 0.5));
    CU_ASSERT_NOT_EQUAL(base, ns_analysis_rng_key(NS_RNG_RANDOM_SUBSET, 8, &k0, 5, 0.5));
    CU_ASSERT_NOT_EQUAL(base, ns_analysis_rng_key(NS_RNG_RANDOM_SUBSET, 9, &k1, 5, 0.5));
    CU_ASSERT_NOT_EQUAL(base, ns_analysis_rng_key(NS_RNG_RANDOM_SUBSET, 9, &k2, 5, 0.5));
    CU_ASSERT_NOT_EQUAL(base, ns_analysis_rng_key(NS_RNG_RANDOM_SUBSET, 9, &k3, 5, 0.5));
    CU_ASSERT_NOT_EQUAL(base, ns_analysis_rng_key(NS_RNG_RANDOM_SUBSET, 9, &k0, 6, 0.5));
    CU_ASSERT_NOT_EQUAL(base, ns_analysis_rng_key(NS_RNG_RANDOM_SUBSET, 9, &k0, 5, 0.25));
    CU_ASSERT_NOT_EQUAL(base, ns_analysis_rng_key(NS_RNG_FD_PROBES, 9, &k0, 5, 0.5));
    free_head(&h);
}

/* ---- errors ------------------------------------------------------------------------------- */

/* ---- issue 36: mass, sink_mass, empty rows, stick-breaking --------------------------------- */

/* Hand-made rows (every normalizer): key 0 alone (the others 1e30 below it, so their weights are
 * 0 in double for every normalizer that can make them 0) and a uniform row (equal logits):
 * sink_mass = p_0 is 1 and 1/L (stick-breaking: beta (1 - beta)^(L-1) / m), mass 1 on the
 * simplex and the formula's sum off it (1e-14 relative: a sum of L doubles against exp and
 * log1p of the closed form). */
static void test_sink_hand_rows(void)
{
    size_t Lm = 8, d = 4;
    size_t N[2] = {1, 3};
    double T[2] = {0.5, 2.0}, eps[1] = {1e-4};
    ns_head_key key = {0, 0, 0};
    size_t rows[1] = {Lm - 1};
    for (int k = 0; k <= NS_NORM_STICKBREAKING; k++) {
        ns_normalizer f = ns_normalizer_default((ns_normalizer_kind)k);
        if (k == NS_NORM_ENTMAX)
            f.alpha = 1.7;
        ns_analysis_params p = {N, 2, T, 2, eps, 1, f, 1, 2, 3};
        for (int uniform = 0; uniform <= 1; uniform++) {
            test_head h = make_head(Lm, d, 11, 1.0);
            fill_logits_equal(&h, uniform ? 2.0f : -1e30f);
            h.logits[(Lm - 1) * Lm] = 2.0f; /* key 0 of the last row */
            ns_row_layout lay;
            double *out = analyze(&p, &key, &h, rows, 1, NS_KERNEL_FAST, &lay);
            CU_ASSERT_PTR_NOT_NULL_FATAL(out);
            for (size_t t = 0; t < 2; t++) {
                double sink = val(&lay, out, Lm, NS_M_SINK_MASS, t, 0, 0);
                double mass = val(&lay, out, Lm, NS_M_MASS, t, 0, 0);
                double y = 2.0 / T[t], L = (double)Lm, want_sink, want_mass;
                if (uniform) {
                    want_sink = 1.0 / L;
                    want_mass = k == NS_NORM_SOFTMAX1   ? L * exp(y) / (1.0 + L * exp(y))
                                : k == NS_NORM_SIGMOID  ? L / (1.0 + exp(-(y - log(L))))
                                : k == NS_NORM_SOFTPICK ? 1.0
                                : k == NS_NORM_RELU     ? y
                                                        : 1.0;
                } else { /* key 0 alone: sigmoid's others are sigmoid(-huge) = 0 too; softpick's
                          * others have |e^y - 1| = 1 in its denominator */
                    want_sink = 1.0;
                    want_mass = k == NS_NORM_SOFTMAX1   ? exp(y) / (1.0 + exp(y))
                                : k == NS_NORM_SIGMOID  ? 1.0 / (1.0 + exp(-(y - log(L))))
                                : k == NS_NORM_SOFTPICK ? expm1(y) / (expm1(y) + (L - 1.0))
                                : k == NS_NORM_RELU     ? y / L
                                : k == NS_NORM_STICKBREAKING ? 1.0 / (1.0 + exp(-y))
                                                        : 1.0;
                }
                if (k == NS_NORM_STICKBREAKING && uniform) { /* beta = sigmoid(y) */
                    double beta = 1.0 / (1.0 + exp(-y));
                    want_mass = 1.0 - pow(1.0 - beta, L);
                    want_sink = beta * pow(1.0 - beta, L - 1.0) / want_mass;
                }
                /* p_0 = a_0 / m with m a sum of L doubles: a few ulps; stick-breaking's
                 * closed forms above round in pow: 1e-13 */
                double stol = k == NS_NORM_STICKBREAKING ? 1e-13 : 16 * DBL_EPSILON;
                if (!close_to(sink, want_sink, stol, 0.0)) {
                    CU_FAIL("sink_mass");
                    fprintf(stderr, "%s uniform %d T %g: sink_mass %.17g, want %.17g\n",
                            ns_normalizer_name(f.kind), uniform, T[t], sink, want_sink);
                }
                if (!close_to(mass, want_mass, 1e-14, 0.0)) {
                    CU_FAIL("mass");
                    fprintf(stderr, "%s uniform %d T %g: mass %.17g, want %.17g\n",
                            ns_normalizer_name(f.kind), uniform, T[t], mass, want_mass);
                }
                if (k <= NS_NORM_ENTMAX) {
                    CU_ASSERT_EQUAL(mass, 1.0); /* by definition on the simplex */
                }
            }
            free(out);
            free_head(&h);
        }
    }
}

/* Empty rows: softpick and relu with every z_j <= 0 (softpick's every z = 0 too) have mass 0,
 * every shape metric missing, jac_fd of a defined; the reduction counts them in empty_rows and
 * not in skipped_rows, and a row with mass (z_0 > 0) in neither. Stick-breaking: distance_random
 * missing at every N (key order), distance defined. Counts exact. */
static void test_empty_rows_and_stickbreaking(void)
{
    size_t Lm = 6, d = 3;
    size_t N[2] = {1, 2};
    double T[1] = {1.0}, eps[1] = {1e-3};
    ns_head_key key = {1, 0, 0};
    size_t rows[3] = {5, 5, 5};
    for (int k = NS_NORM_SOFTPICK; k <= NS_NORM_STICKBREAKING; k++) {
        ns_analysis_params p = {N, 2, T, 1, eps, 1, ns_normalizer_default((ns_normalizer_kind)k),
                                1, 2, 3};
        test_head h[3] = {make_head(Lm, d, 5, 1.0), make_head(Lm, d, 6, 1.0),
                          make_head(Lm, d, 7, 1.0)};
        fill_logits_equal(&h[0], 0.0f);   /* every z = 0 */
        fill_logits_equal(&h[1], -0.75f); /* every z < 0 */
        fill_logits_equal(&h[2], -0.75f);
        h[2].logits[5 * Lm] = 0.5f;       /* one z > 0: a row with mass */
        ns_row_layout lay;
        double *out[3];
        for (int r = 0; r < 3; r++) {
            out[r] = analyze(&p, &key, &h[r], rows + r, 1, NS_KERNEL_FAST, &lay);
            CU_ASSERT_PTR_NOT_NULL_FATAL(out[r]);
        }
        double *recs = malloc(3 * lay.total * sizeof *recs);
        CU_ASSERT_PTR_NOT_NULL_FATAL(recs);
        for (int r = 0; r < 3; r++)
            memcpy(recs + r * lay.total, out[r], lay.total * sizeof *recs);
        int empties = k == NS_NORM_STICKBREAKING ? 0 : 2;
        for (int r = 0; r < 3; r++) {
            double *row = out[r];
            int empty = r < empties;
            CU_ASSERT_EQUAL(val(&lay, row, Lm, NS_M_MASS, 0, 0, 0) == 0.0, empty);
            CU_ASSERT_EQUAL(isnan(val(&lay, row, Lm, NS_M_SINK_MASS, 0, 0, 0)), empty);
            CU_ASSERT_EQUAL(isnan(val(&lay, row, Lm, NS_M_ENTROPY, 0, 0, 0)), empty);
            CU_ASSERT(!isnan(val(&lay, row, Lm, NS_M_JAC_FD, 0, 0, 0)));
            CU_ASSERT(!isnan(val(&lay, row, Lm, NS_M_DELTA, 0, 0, 0)));
            for (size_t n = 0; n < 2; n++) {
                CU_ASSERT_EQUAL(isnan(val(&lay, row, Lm, NS_M_DISTANCE, 0, n, 0)), empty);
                CU_ASSERT_EQUAL(isnan(val(&lay, row, Lm, NS_M_NS_FRAC, 0, n, 0)), empty);
                CU_ASSERT_EQUAL(isnan(val(&lay, row, Lm, NS_M_DISTANCE_RANDOM, 0, n, 0)),
                                empty || k == NS_NORM_STICKBREAKING);
            }
            /* jac_exact: exact for relu (1/(T L) or 0), missing for softpick and stick-breaking */
            double je = val(&lay, row, Lm, NS_M_JAC_EXACT, 0, 0, 0);
            if (k == NS_NORM_RELU) {
                CU_ASSERT_EQUAL(je, empty ? 0.0 : 1.0 / (double)Lm);
            } else {
                CU_ASSERT(isnan(je));
            }
        }
        double jb[1] = {0.25}; /* min(1/(4T), sqrt 2) at T = 1 */
        ns_slice_shape sh = {.lay = &lay, .L = Lm, .N = N, .nN = 2, .T = T, .nT = 1,
                             .jac_bound = jb, .neps = 1, .ks_alpha = 0.01};
        ns_slice_layout sl;
        ns_slice_layout_init(&sl, &sh);
        double *res = malloc(sl.total * sizeof *res);
        ns_reduce_ws *rws = NULL;
        ns_err err;
        CU_ASSERT_FATAL(res && ns_reduce_ws_new(3, &rws, &err) == NS_OK);
        CU_ASSERT_EQUAL_FATAL(ns_reduce_slice(&sh, recs, 3, lay.total, rws, res, &err), NS_OK);
        CU_ASSERT_EQUAL(res[sl.count[NS_C_EMPTY_ROWS]], (double)empties);
        for (size_t n = 0; n < 2; n++) {
            CU_ASSERT_EQUAL(res[sl.count[NS_C_SKIPPED_ROWS] + n], 0.0);
            CU_ASSERT_EQUAL(res[sl.count[NS_C_THM1_CHECKED] + n], (double)(3 - empties));
        }
        CU_ASSERT_EQUAL(res[sl.stats[NS_M_MASS] + NS_ST_COUNT], 3.0); /* 0 is a value */
        CU_ASSERT_EQUAL(res[sl.stats[NS_M_SINK_MASS] + NS_ST_COUNT], (double)(3 - empties));
        if (k == NS_NORM_STICKBREAKING) { /* d_random missing: its KS test too */
            CU_ASSERT(isnan(res[sl.ks_stat[NS_KS_RANDOM]]) && isnan(res[sl.ks_p[NS_KS_RANDOM]]));
        }
        ns_reduce_ws_free(rws);
        free(res);
        free(recs);
        for (int r = 0; r < 3; r++) {
            free(out[r]);
            free_head(&h[r]);
        }
    }
}

/* Issue 36's sink-excluded view (METRICS.md section 8.2). For softmax, dropping key 0 and
 * renormalising is softmax over the other L - 1 logits, exactly in arithmetic; so the view of a
 * head equals plain softmax on the head without its key 0 (logits and values shifted by one):
 * every Theorem 1 and 2 quantity, entropy, delta and sink_mass (the view's p_0 is the shifted
 * row's a_0) within rounding (1e-12 relative: p is a / m in one and a direct softmax in the
 * other; d_random draws from another row's stream and is left out). The view's mass is
 * 1 - a_0 of the full row, its jac_exact the norm of the trailing block of the full softmax
 * Jacobian (Jacobi rotations, independent of the secular solver), jac_lemma2 missing; a view of
 * one key has sink_mass 1 and every N skipped; a view of row 0 (no key) is empty: mass 0,
 * sink_mass missing. */
static void test_sink_view_softmax(void)
{
    enum { NR = 4 };
    size_t Lm = 24, d = 8, N[4] = {1, 2, 5, 22};
    double T[3] = {0.3, 1.0, 3.0}, eps[1] = {1e-4};
    ns_head_key key = {0, 0, 0};
    size_t rows[NR] = {Lm - 1, Lm - 4, 1, 0}, srows[NR - 1] = {Lm - 2, Lm - 5, 0};
    ns_normalizer plain = ns_normalizer_default(NS_NORM_SOFTMAX), view = plain;
    view.view = NS_VIEW_SINK_EXCLUDED;
    ns_analysis_params pv = {N, 4, T, 3, eps, 1, view, 1, 0, 3}, pp = pv;
    pp.normalizer = plain;
    static const ns_metric_id tn[] = {NS_M_DISTANCE, NS_M_DISTANCE_D1, NS_M_DISTANCE_BOUND,
                                      NS_M_DISTANCE_EXPECTED, NS_M_NS_FRAC, NS_M_NS_LOWER,
                                      NS_M_NS_UPPER};
    for (uint64_t seed = 1; seed <= 2; seed++) {
        test_head h = make_head(Lm, d, seed, 3.0), s = head_alloc(Lm - 1, d);
        for (size_t m = 0; m + 1 < Lm; m++)
            for (size_t i = 0; i <= m; i++)
                s.logits[m * (Lm - 1) + i] = h.logits[(m + 1) * Lm + i + 1];
        memcpy(s.values, h.values + d, (Lm - 1) * d * sizeof *s.values);
        ns_row_layout lv, lp, lf;
        double *ov = analyze(&pv, &key, &h, rows, NR, NS_KERNEL_FAST, &lv);
        double *os = analyze(&pp, &key, &s, srows, NR - 1, NS_KERNEL_FAST, &lp);
        double *of = analyze(&pp, &key, &h, rows, NR, NS_KERNEL_FAST, &lf);
        CU_ASSERT_PTR_NOT_NULL_FATAL(ov);
        CU_ASSERT_PTR_NOT_NULL_FATAL(os);
        CU_ASSERT_PTR_NOT_NULL_FATAL(of);
        CU_ASSERT_FALSE(lv.t_free_rank); /* ranked by log p, d1 per (T, N) */
        for (size_t k = 0; k < NR; k++) {
            const double *rv = ov + k * lv.total, *rf = of + k * lf.total;
            const double *rs = k + 1 < NR ? os + k * lp.total : NULL;
            size_t m = rows[k], L = m + 1;
            if (rs && !close_to(val(&lv, rv, Lm, NS_M_DELTA, 0, 0, 0),
                                val(&lp, rs, Lm - 1, NS_M_DELTA, 0, 0, 0), 1e-14, 0.0))
                CU_FAIL("view: delta");
            for (size_t t = 0; t < 3; t++) {
                double a0 = val(&lf, rf, Lm, NS_M_SINK_MASS, t, 0, 0); /* the full row's a_0 */
                double mass = val(&lv, rv, Lm, NS_M_MASS, t, 0, 0);
                /* 1 - a_0 cancels: 1e-15 absolute besides the sum's 1e-13 relative */
                if (!close_to(mass, L > 1 ? 1.0 - a0 : 0.0, 1e-13, 1e-15)) {
                    CU_FAIL("view: mass = 1 - a_0");
                    fprintf(stderr, "seed %llu m %zu T %g: mass %.17g, 1 - a_0 %.17g\n",
                            (unsigned long long)seed, m, T[t], mass, 1.0 - a0);
                }
                CU_ASSERT(isnan(val(&lv, rv, Lm, NS_M_JAC_LEMMA2, t, 0, 0)));
                if (!rs) { /* row 0: the view has no key */
                    CU_ASSERT(isnan(val(&lv, rv, Lm, NS_M_SINK_MASS, t, 0, 0)));
                    CU_ASSERT(isnan(val(&lv, rv, Lm, NS_M_ENTROPY, t, 0, 0)));
                    continue;
                }
                static const ns_metric_id tm[] = {NS_M_ENTROPY, NS_M_ENTROPY_NORM,
                                                  NS_M_SINK_MASS};
                for (size_t q = 0; q < 3; q++)
                    if (!close_to(val(&lv, rv, Lm, tm[q], t, 0, 0),
                                  val(&lp, rs, Lm - 1, tm[q], t, 0, 0), 1e-12, 1e-15)) {
                        CU_FAIL("view: entropy or sink_mass");
                        fprintf(stderr, "seed %llu m %zu T %g metric %d: %.17g vs %.17g\n",
                                (unsigned long long)seed, m, T[t], (int)tm[q],
                                val(&lv, rv, Lm, tm[q], t, 0, 0), val(&lp, rs, Lm - 1, tm[q], t, 0, 0));
                    }
                for (size_t n = 0; n < 4; n++)
                    for (size_t q = 0; q < sizeof tn / sizeof tn[0]; q++) {
                        double a = val(&lv, rv, Lm, tn[q], t, n, 0);
                        double b = val(&lp, rs, Lm - 1, tn[q], t, n, 0);
                        if (!close_to(a, b, 1e-12, 1e-14)) {
                            CU_FAIL("view: a Theorem 1 or 2 quantity");
                            fprintf(stderr, "seed %llu m %zu T %g N %zu metric %d: view %.17g, "
                                    "shifted softmax %.17g\n", (unsigned long long)seed, m, T[t],
                                    N[n], (int)tn[q], a, b);
                        }
                    }
                /* jac_exact: the trailing block of (diag(a) - a a^T) / T, a the full softmax */
                const float *z = h.logits + m * Lm;
                double mx = -INFINITY, sum = 0.0, a[24], B[23 * 23];
                for (size_t i = 0; i < L; i++)
                    mx = fmax(mx, (double)z[i] / T[t]);
                for (size_t i = 0; i < L; i++)
                    sum += a[i] = exp((double)z[i] / T[t] - mx);
                for (size_t i = 0; i < L; i++)
                    a[i] /= sum;
                for (size_t i = 1; i < L; i++)
                    for (size_t j = 1; j < L; j++)
                        B[(i - 1) * (L - 1) + (j - 1)] = ((i == j ? a[i] : 0.0) - a[i] * a[j]) / T[t];
                double want = jacobi_spectral_norm(B, L - 1);
                double got = val(&lv, rv, Lm, NS_M_JAC_EXACT, t, 0, 0);
                if (!close_to(got, want, 1e-12, 1e-15 / T[t])) {
                    CU_FAIL("view: jac_exact");
                    fprintf(stderr, "seed %llu m %zu T %g: jac_exact %.17g, Jacobi %.17g\n",
                            (unsigned long long)seed, m, T[t], got, want);
                }
            }
        }
        free(ov);
        free(os);
        free(of);
        free_head(&h);
        free_head(&s);
    }
}

static void test_bad_inputs(void)
{
    test_head h = make_head(8, 4, 1, 1.0);
    size_t N[1] = {2};
    double T[1] = {1.0}, eps[1] = {1e-3};
    ns_analysis_params p = {N, 1, T, 1, eps, 1, {.kind = NS_NORM_SOFTMAX, .s = 0}, 1, 1, 0};
    ns_analysis_ws *ws = NULL;
    ns_err err;
    CU_ASSERT_EQUAL_FATAL(ns_analysis_ws_new(&p, 8, 4, &ws, &err), NS_OK);
    ns_head_key key = {4, 2, 9};
    ns_head_input in = input_of(&h);
    ns_row_layout lay, lay_bad;
    ns_row_layout_init(&lay, 1, 1, 1, 1);
    double out[64];
    ns_row_request rq = {8, &lay, out};
    CU_ASSERT_EQUAL(ns_analyze_head(&p, &key, &in, &rq, 1, NS_KERNEL_FAST, ws, &err), NS_ERR_INVALID);
    CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "row 8"));
    rq.m = 7;
    h.logits[7 * 8 + 3] = NAN;
    CU_ASSERT_EQUAL(ns_analyze_head(&p, &key, &in, &rq, 1, NS_KERNEL_FAST, ws, &err), NS_ERR_INVALID);
    /* the cause once, with the likely reason; the caller (the rows stage) names shard, layer and
     * head (it used to be named twice) */
    CU_ASSERT_STRING_EQUAL(err.msg, "logit z[7][3] = nan is not finite (the model's attention "
                                    "scores overflow float32: are its weights too large?)");
    h.logits[7 * 8 + 3] = 0.0f;
    h.values[5 * 4 + 1] = INFINITY;
    CU_ASSERT_EQUAL(ns_analyze_head(&p, &key, &in, &rq, 1, NS_KERNEL_FAST, ws, &err), NS_ERR_INVALID);
    CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "v[5][1]"));
    h.values[5 * 4 + 1] = 0.5f;
    double Tbad[1] = {0.0};
    ns_analysis_params q = p;
    q.T = Tbad;
    CU_ASSERT_EQUAL(ns_analyze_head(&q, &key, &in, &rq, 1, NS_KERNEL_FAST, ws, &err), NS_ERR_INVALID);
    CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "T[0]"));
    size_t Nbad[1] = {0};
    q = p;
    q.N = Nbad;
    CU_ASSERT_EQUAL(ns_analyze_head(&q, &key, &in, &rq, 1, NS_KERNEL_FAST, ws, &err), NS_ERR_INVALID);
    /* a record layout that does not match the parameters (T-dependent ranking, nT) */
    ns_row_layout_init(&lay_bad, 1, 1, 1, 0);
    ns_row_request rb = {7, &lay_bad, out};
    CU_ASSERT_EQUAL(ns_analyze_head(&p, &key, &in, &rb, 1, NS_KERNEL_FAST, ws, &err), NS_ERR_INVALID);
    ns_row_layout_init(&lay_bad, 2, 1, 1, 1);
    CU_ASSERT_EQUAL(ns_analyze_head(&p, &key, &in, &rb, 1, NS_KERNEL_FAST, ws, &err), NS_ERR_INVALID);
    /* a head that does not fit the workspace */
    test_head big = make_head(9, 4, 1, 1.0);
    ns_head_input bin = input_of(&big);
    CU_ASSERT_EQUAL(ns_analyze_head(&p, &key, &bin, &rq, 1, NS_KERNEL_FAST, ws, &err), NS_ERR_INVALID);
    CU_ASSERT_EQUAL(ns_analyze_head(&p, &key, &in, &rq, 1, NS_KERNEL_FAST, ws, &err), NS_OK);
    CU_ASSERT_EQUAL(ns_analyze_head(&p, &key, &in, NULL, 0, NS_KERNEL_FAST, ws, &err), NS_OK);
    ns_analysis_ws_free(ws);
    CU_ASSERT_EQUAL(ns_analysis_ws_new(&p, 0, 4, &ws, &err), NS_ERR_INVALID);
    free_head(&big);
    free_head(&h);
}

int main(void)
{
    if (CU_initialize_registry() != CUE_SUCCESS)
        return 1;
    CU_pSuite s = CU_add_suite("analysis", NULL, NULL);
    CU_add_test(s, "row layout and metric table", test_layout_and_table);
    CU_add_test(s, "jac_bound and the violation rule", test_jac_bound_and_violation_rule);
    CU_add_test(s, "two tokens: softmax Jacobian 2ab/T, 1/(2T) violates", test_two_token_softmax_jacobian);
    CU_add_test(s, "secular solver vs bisection and Jacobi", test_secular_solver);
    CU_add_test(s, "exact Jacobian norms vs finite differences", test_exact_norm_vs_finite_differences);
    CU_add_test(s, "uniform weights, identical vectors (bound tight)", test_uniform_identical_vectors);
    CU_add_test(s, "uniform weights, orthonormal vectors", test_uniform_orthonormal);
    CU_add_test(s, "one-hot weights: underflowed tail, exact N_s", test_one_hot_and_underflow);
    CU_add_test(s, "entropy of two keys", test_entropy_two_keys);
    CU_add_test(s, "brute force: random rows", test_brute_random_rows);
    CU_add_test(s, "brute force: rows whose weights underflow double", test_brute_underflow_rows);
    CU_add_test(s, "brute force: real rows of the stand-in model", test_brute_real_rows);
    CU_add_test(s, "fast vs reference kernel: synthetic rows to L = 300", test_kernels_synthetic);
    CU_add_test(s, "fast vs reference kernel: real rows, L = 300", test_kernels_real);
    CU_add_test(s, "d1 per N (T-free ranking) or per (T, N)", test_d1_dimensions);
    CU_add_test(s, "nested, uniform random prefixes", test_random_prefix);
    CU_add_test(s, "permutation invariance", test_permutation_invariance);
    CU_add_test(s, "sphere and raw scaling", test_sphere_scaling);
    CU_add_test(s, "determinism and generator keys", test_determinism_and_keys);
    CU_add_test(s, "bad inputs name what is wrong", test_bad_inputs);
    CU_add_test(s, "issue 36: sink_mass and mass on hand-made rows", test_sink_hand_rows);
    CU_add_test(s, "issue 36: the sink-excluded view of softmax is softmax without key 0",
                test_sink_view_softmax);
    CU_add_test(s, "issue 36: empty rows counted, stick-breaking's d_random missing",
                test_empty_rows_and_stickbreaking);
    return ns_test_run_all();
}

/* ns_analysis: METRICS.md's per-row metrics (Theorem 1, Theorem 2, Lemma 2) for one head. */
#include "analysis/ns_analysis.h"

#include <cblas.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/ns_jacobian.h"
#include "analysis/ns_rng.h"
#include "analysis/ns_topn.h"

/* Domain tags of the counter-based generator's keys. */
#define NS_RNG_TAG_RANDOM_SUBSET 0x72616e645f737562ULL /* d_random */
#define NS_RNG_TAG_FD_PROBES 0x66645f70726f6265ULL     /* jac_fd directions */

uint64_t ns_analysis_rng_key(ns_rng_purpose purpose, uint64_t seed, const ns_head_key *key,
                             size_t row, size_t N, double T)
{
    if (purpose == NS_RNG_RANDOM_SUBSET) {
        uint64_t w[8] = {NS_RNG_TAG_RANDOM_SUBSET, seed, key->shard, (uint64_t)row,
                         key->layer, key->head, (uint64_t)N, ns_rng_double_bits(T)};
        return ns_rng_key(w, 8);
    }
    uint64_t w[7] = {NS_RNG_TAG_FD_PROBES, seed, key->shard, (uint64_t)row,
                     key->layer, key->head, ns_rng_double_bits(T)};
    return ns_rng_key(w, 7);
}

static const char *const ns_metric_names[NS_M_COUNT] = {
    "distance", "distance_d1", "distance_bound", "distance_expected", "distance_random",
    "ns_frac",  "ns_lower",    "ns_upper",       "delta",             "jac_exact",
    "jac_lemma2", "jac_fd",
};

const char *ns_metric_name(ns_metric_id id)
{
    if ((unsigned)id < NS_M_COUNT)
        return ns_metric_names[id];
    return "unknown";
}

ns_metric_shape ns_metric_shape_of(ns_metric_id id)
{
    if (id <= NS_M_NS_UPPER)
        return NS_SHAPE_TN;
    if (id == NS_M_DELTA)
        return NS_SHAPE_SCALAR;
    if (id == NS_M_JAC_FD)
        return NS_SHAPE_TE;
    return NS_SHAPE_T;
}

void ns_row_layout_init(ns_row_layout *layout, size_t nT, size_t nN, size_t neps)
{
    layout->nT = nT;
    layout->nN = nN;
    layout->neps = neps;
    size_t off = 0;
    for (int id = 0; id < NS_M_COUNT; id++) {
        size_t sz = 0;
        switch (ns_metric_shape_of((ns_metric_id)id)) {
        case NS_SHAPE_TN: sz = nT * nN; break;
        case NS_SHAPE_SCALAR: sz = 1; break;
        case NS_SHAPE_T: sz = nT; break;
        case NS_SHAPE_TE: sz = nT * neps; break;
        }
        layout->offset[id] = off;
        layout->size[id] = sz;
        off += sz;
    }
    layout->total = off;
}

size_t ns_row_index_tn(const ns_row_layout *layout, ns_metric_id id, size_t t, size_t n)
{
    return layout->offset[id] + t * layout->nN + n;
}

size_t ns_row_index_t(const ns_row_layout *layout, ns_metric_id id, size_t t)
{
    return layout->offset[id] + t;
}

size_t ns_row_index_te(const ns_row_layout *layout, ns_metric_id id, size_t t, size_t e)
{
    return layout->offset[id] + t * layout->neps + e;
}

int ns_row_ns_lower_undefined(const ns_row_layout *layout, const double *row, size_t t, size_t n)
{
    return !isnan(row[ns_row_index_tn(layout, NS_M_NS_FRAC, t, n)]) &&
           isnan(row[ns_row_index_tn(layout, NS_M_NS_LOWER, t, n)]);
}

double ns_jac_bound(double T)
{
    double b = 1.0 / (4.0 * T);
    return b < M_SQRT2 ? b : M_SQRT2;
}

int ns_jac_violates(double value, double bound)
{
    if (isnan(value) || isnan(bound))
        return 0;
    return value - bound > 1e-6 * fabs(bound);
}

/* ---- workspace ---------------------------------------------------------------------------- */

struct ns_analysis_ws {
    size_t L_max, d_cap, nN, nT;
    size_t d;          /* head dimension of the current call (<= d_cap) */
    void *block;       /* the one allocation; everything below points into it */
    double *X;         /* (L_max, d): the row vectors x_i (scaled to norm 1 when sphere) */
    double *G;         /* (L_max, L_max): Gram matrix X X^T, lower triangle, ld = rows used */
    double *gdiag;     /* (L_max): ||x_i||^2 computed directly */
    double *delta;     /* (L_max): delta of row m = min pairwise distance among x_0..x_m */
    double *mnorm;     /* (L_max): max_{i <= m} ||x_i|| (M of row m when not sphere) */
    double *z;         /* (L_max): the row's logits in double */
    double *alpha;     /* (L_max) */
    double *work;      /* (2 L_max): normalizer scratch */
    double *zp;        /* (L_max): perturbed logits */
    double *ap;        /* (L_max): perturbed weights */
    double *u;         /* ((probes + 1) * L_max): jac_fd directions */
    double *dist;      /* (L_max): ||alpha_i x_i - s|| */
    double *pre, *suf; /* (L_max + 1) each: prefix/suffix sums over I_N */
    double *s;         /* (d) */
    double *xbar;      /* (d) */
    double *d1_cache;  /* (nN) */
    size_t *order;     /* (L_max) */
    size_t *order_prev;/* (L_max) */
    size_t *rsel;      /* (L_max): random subset */
    ns_rank_item *items;  /* (L_max) */
    unsigned char *in_set; /* (L_max) */
    unsigned probes;
};

int ns_analysis_ws_new(const ns_analysis_params *p, size_t L_max, size_t d, ns_analysis_ws **out,
                       ns_err *err)
{
    *out = NULL;
    if (L_max == 0 || d == 0)
        return ns_fail(err, NS_ERR_INVALID, "analysis workspace: L_max = %zu and d = %zu must be >= 1",
                       L_max, d);
    ns_analysis_ws *ws = calloc(1, sizeof *ws);
    if (!ws)
        return ns_fail(err, NS_ERR_NOMEM, "analysis workspace: out of memory");
    ws->L_max = L_max;
    ws->d = d;
    ws->d_cap = d;
    ws->nN = p->nN;
    ws->nT = p->nT;
    ws->probes = p->probes;
    size_t nd = L_max * d                  /* X */
                + L_max * L_max            /* G */
                + 4 * L_max                /* gdiag, delta, mnorm, z */
                + L_max + 2 * L_max        /* alpha, work */
                + 2 * L_max                /* zp, ap */
                + ((size_t)p->probes + 1) * L_max /* u */
                + L_max                    /* dist */
                + 2 * (L_max + 1)          /* pre, suf */
                + 2 * d                    /* s, xbar */
                + p->nN + 1;               /* d1_cache */
    size_t bytes = nd * sizeof(double) + 3 * L_max * sizeof(size_t) +
                   L_max * sizeof(ns_rank_item) + L_max;
    ws->block = malloc(bytes);
    if (!ws->block) {
        free(ws);
        return ns_fail(err, NS_ERR_NOMEM,
                       "analysis workspace: out of memory (%zu bytes for L_max = %zu, d = %zu)",
                       bytes, L_max, d);
    }
    double *q = ws->block;
    ws->X = q; q += L_max * d;
    ws->G = q; q += L_max * L_max;
    ws->gdiag = q; q += L_max;
    ws->delta = q; q += L_max;
    ws->mnorm = q; q += L_max;
    ws->z = q; q += L_max;
    ws->alpha = q; q += L_max;
    ws->work = q; q += 2 * L_max;
    ws->zp = q; q += L_max;
    ws->ap = q; q += L_max;
    ws->u = q; q += ((size_t)p->probes + 1) * L_max;
    ws->dist = q; q += L_max;
    ws->pre = q; q += L_max + 1;
    ws->suf = q; q += L_max + 1;
    ws->s = q; q += d;
    ws->xbar = q; q += d;
    ws->d1_cache = q; q += p->nN + 1;
    size_t *zq = (size_t *)q;
    ws->order = zq; zq += L_max;
    ws->order_prev = zq; zq += L_max;
    ws->rsel = zq; zq += L_max;
    ws->items = (ns_rank_item *)zq;
    ws->in_set = (unsigned char *)(ws->items + L_max);
    memset(ws->in_set, 0, L_max);
    *out = ws;
    return NS_OK;
}

void ns_analysis_ws_free(ns_analysis_ws *ws)
{
    if (!ws)
        return;
    free(ws->block);
    free(ws);
}

/* ---- kernels ------------------------------------------------------------------------------ */

/* sum_k (c a_k - b_k)^2 over d entries, directly (no Gram cancellation). Four independent
 * accumulators (a fixed order, so the result is still deterministic) break the dependency chain
 * of a single running sum. */
static inline double ns_sqdist_scaled(double c, const double *a, const double *b, size_t d)
{
    double s0 = 0.0, s1 = 0.0, s2 = 0.0, s3 = 0.0;
    size_t k = 0;
    for (; k + 4 <= d; k += 4) {
        double t0 = c * a[k] - b[k], t1 = c * a[k + 1] - b[k + 1];
        double t2 = c * a[k + 2] - b[k + 2], t3 = c * a[k + 3] - b[k + 3];
        s0 += t0 * t0;
        s1 += t1 * t1;
        s2 += t2 * t2;
        s3 += t3 * t3;
    }
    for (; k < d; k++) {
        double t = c * a[k] - b[k];
        s0 += t * t;
    }
    return (s0 + s1) + (s2 + s3);
}

/* ||a - b||_2 */
static double ns_dist(const double *a, const double *b, size_t d)
{
    return sqrt(ns_sqdist_scaled(1.0, a, b, d));
}

/* Gram entry (i, j) from the lower triangle. */
static inline double ns_gram(const double *G, size_t ld, size_t i, size_t j)
{
    return i >= j ? G[i * ld + j] : G[j * ld + i];
}

/* s = sum_{j in sel} alpha_j x_j (in sel's order). */
static void ns_weighted_sum(double *s, const double *X, size_t d, const double *alpha,
                            const size_t *sel, size_t n)
{
    memset(s, 0, d * sizeof *s);
    for (size_t q = 0; q < n; q++) {
        const double *x = X + sel[q] * d;
        double a = alpha[sel[q]];
        for (size_t k = 0; k < d; k++)
            s[k] += a * x[k];
    }
}

/* dist[i] = ||alpha_i x_i - s|| for every i < L; returns sum over i not in the set and the
 * minimum over them in *rmin. */
static double ns_set_distances(double *dist, double *rmin, const double *X, size_t d,
                               const double *alpha, size_t L, const unsigned char *in_set,
                               const double *s)
{
    double sum = 0.0, mn = INFINITY;
    for (size_t i = 0; i < L; i++) {
        dist[i] = sqrt(ns_sqdist_scaled(alpha[i], X + i * d, s, d));
        if (!in_set[i]) {
            sum += dist[i];
            if (dist[i] < mn)
                mn = dist[i];
        }
    }
    *rmin = mn;
    return sum;
}

/* d_random: the distance sum with a uniformly random N-subset (Floyd's algorithm over the
 * counter-based stream). in_set must be all zero on entry and is left all zero. */
static double ns_random_distance(ns_analysis_ws *ws, const ns_analysis_params *p,
                                 const ns_head_key *key, size_t m, size_t L, size_t N, double T)
{
    ns_rng rng;
    ns_rng_init(&rng, ns_analysis_rng_key(NS_RNG_RANDOM_SUBSET, p->seed, key, m, N, T));
    ns_rng_subset(&rng, L, N, ws->rsel, ws->in_set);
    double rmin;
    ns_weighted_sum(ws->s, ws->X, ws->d, ws->alpha, ws->rsel, N);
    double sum = ns_set_distances(ws->dist, &rmin, ws->X, ws->d, ws->alpha, L, ws->in_set, ws->s);
    for (size_t q = 0; q < N; q++)
        ws->in_set[ws->rsel[q]] = 0;
    return sum;
}

/* d1 = max_{i not in I, j in I} ||x_i - x_j||: the pair is chosen on the Gram matrix, its
 * distance recomputed directly. */
static double ns_d1(const ns_analysis_ws *ws, size_t ld, const size_t *sel, size_t N, size_t L)
{
    double best = -INFINITY;
    size_t bi = 0, bj = 0;
    for (size_t q = 0; q < N; q++) {
        size_t j = sel[q];
        double gj = ws->gdiag[j];
        for (size_t i = 0; i < L; i++) {
            if (ws->in_set[i])
                continue;
            double dsq = ws->gdiag[i] + gj - 2.0 * ns_gram(ws->G, ld, i, j);
            if (dsq > best) {
                best = dsq;
                bi = i;
                bj = j;
            }
        }
    }
    return ns_dist(ws->X + bi * ws->d, ws->X + bj * ws->d, ws->d);
}

/* d_expected = (L - N)/L sum_i ||(alpha_i + N/(L-1)) x_i - xbar||^2. */
static double ns_d_expected(const ns_analysis_ws *ws, size_t L, size_t N)
{
    double c0 = (double)N / (double)(L - 1), acc = 0.0;
    for (size_t i = 0; i < L; i++) {
        acc += ns_sqdist_scaled(ws->alpha[i] + c0, ws->X + i * ws->d, ws->xbar, ws->d);
    }
    return (double)(L - N) / (double)L * acc;
}

/* Theorem 2: ns_frac, ns_lower, ns_upper for I = sel[0..N) given dist[] and r. */
static void ns_separability(ns_analysis_ws *ws, const size_t *sel, size_t N, double r, double M,
                            double delta, double *frac, double *lower, double *upper)
{
    const double *a = ws->alpha;
    double *pre = ws->pre, *suf = ws->suf;
    /* prefix/suffix sums of alpha and alpha^2 over sel: the sums excluding sel[q] are
     * pre[q] + suf[q+1] without the cancellation of total - alpha_i */
    double *pre2 = ws->work, *suf2 = ws->work + N + 1;
    pre[0] = pre2[0] = 0.0;
    for (size_t q = 0; q < N; q++) {
        double x = a[sel[q]];
        pre[q + 1] = pre[q] + x;
        pre2[q + 1] = pre2[q] + x * x;
    }
    suf[N] = suf2[N] = 0.0;
    for (size_t q = N; q-- > 0;) {
        double x = a[sel[q]];
        suf[q] = suf[q + 1] + x;
        suf2[q] = suf2[q + 1] + x * x;
    }
    double M2 = M * M, cross = M2 - 0.5 * delta * delta;
    size_t ns = 0;
    double xi_sum = 0.0, up = 0.0;
    for (size_t q = 0; q < N; q++) {
        size_t i = sel[q];
        if (ws->dist[i] <= r)
            ns++;
        double A = pre[q] + suf[q + 1];   /* sum_{j in I, j != i} alpha_j */
        double Q = pre2[q] + suf2[q + 1]; /* sum_{j in I, j != i} alpha_j^2 */
        double xi2 = M2 * Q + cross * (A * A - Q);
        double xi = xi2 > 0.0 ? sqrt(xi2) : 0.0;
        xi_sum += xi;
        double dr = r - xi;
        up += exp(-(dr * dr) / (16.0 * M2));
    }
    *frac = (double)ns / (double)N;
    *lower = r > 0.0 ? 1.0 - xi_sum / (r * (double)N) : NAN;
    *upper = up / (double)N;
}

/* jac_fd for every eps at one (row, T): directions u_0 = (e_a - e_b)/sqrt 2 (a, b the two
 * largest logits, ties by the smaller index) and P random unit directions. */
static int ns_jac_fd(ns_analysis_ws *ws, const ns_analysis_params *p, const ns_head_key *key,
                     size_t m, size_t L, size_t t, double *row, const ns_row_layout *lay,
                     ns_err *err)
{
    double T = p->T[t];
    size_t nu = 0;
    double *u = ws->u;
    if (L >= 2) {
        size_t a = 0, b = SIZE_MAX;
        for (size_t i = 1; i < L; i++)
            if (ws->z[i] > ws->z[a])
                a = i;
        for (size_t i = 0; i < L; i++)
            if (i != a && (b == SIZE_MAX || ws->z[i] > ws->z[b]))
                b = i;
        memset(u, 0, L * sizeof *u);
        u[a] = M_SQRT1_2;
        u[b] = -M_SQRT1_2;
        nu = 1;
    }
    if (p->probes > 0) {
        ns_rng rng;
        ns_rng_init(&rng, ns_analysis_rng_key(NS_RNG_FD_PROBES, p->seed, key, m, 0, T));
        for (unsigned k = 0; k < p->probes; k++) {
            double *v = u + nu * L, nrm = 0.0;
            for (size_t i = 0; i < L; i += 2) {
                double g[2];
                ns_rng_normal2(&rng, g);
                v[i] = g[0];
                nrm += g[0] * g[0];
                if (i + 1 < L) {
                    v[i + 1] = g[1];
                    nrm += g[1] * g[1];
                }
            }
            nrm = sqrt(nrm);
            for (size_t i = 0; i < L; i++)
                v[i] /= nrm;
            nu++;
        }
    }
    for (size_t e = 0; e < p->neps; e++) {
        double eps = p->eps[e], best = 0.0;
        for (size_t k = 0; k < nu; k++) {
            const double *v = u + k * L;
            for (size_t i = 0; i < L; i++)
                ws->zp[i] = ws->z[i] + eps * v[i];
            int rc = ns_normalize(&p->normalizer, ws->zp, L, T, ws->ap, ws->work, err);
            if (rc != NS_OK)
                return rc;
            double acc = 0.0;
            for (size_t i = 0; i < L; i++) {
                double dd = ws->ap[i] - ws->alpha[i];
                acc += dd * dd;
            }
            double g = sqrt(acc) / eps;
            if (g > best)
                best = g;
        }
        row[ns_row_index_te(lay, NS_M_JAC_FD, t, e)] = nu ? best : NAN;
    }
    return NS_OK;
}

/* ---- per head ----------------------------------------------------------------------------- */

static int ns_check_params(const ns_analysis_params *p, ns_err *err)
{
    for (size_t n = 0; n < p->nN; n++)
        if (p->N[n] < 1)
            return ns_fail(err, NS_ERR_INVALID, "analysis: N[%zu] = %zu must be >= 1", n, p->N[n]);
    for (size_t t = 0; t < p->nT; t++)
        if (!(p->T[t] > 0.0) || isinf(p->T[t]))
            return ns_fail(err, NS_ERR_INVALID, "analysis: T[%zu] = %g must be finite and > 0", t,
                           p->T[t]);
    for (size_t e = 0; e < p->neps; e++)
        if (!(p->eps[e] > 0.0) || isinf(p->eps[e]))
            return ns_fail(err, NS_ERR_INVALID, "analysis: eps[%zu] = %g must be finite and > 0",
                           e, p->eps[e]);
    return NS_OK;
}

/* Vectors, Gram matrix, delta prefix minima and M prefix maxima for rows 0..Ln-1. */
static int ns_prepare_head(ns_analysis_ws *ws, const ns_analysis_params *p,
                           const ns_head_key *key, const ns_head_input *in, size_t Ln,
                           ns_err *err)
{
    size_t d = in->d;
    double mmax = 0.0;
    for (size_t i = 0; i < Ln; i++) {
        const float *v = in->values + i * in->values_ld;
        double *x = ws->X + i * d, nrm2 = 0.0;
        for (size_t k = 0; k < d; k++) {
            if (!isfinite(v[k]))
                return ns_fail(err, NS_ERR_INVALID,
                               "analysis shard %llu layer %u head %u: value v[%zu][%zu] = %g is not "
                               "finite",
                               (unsigned long long)key->shard, key->layer, key->head, i, k,
                               (double)v[k]);
            x[k] = (double)v[k];
            nrm2 += x[k] * x[k];
        }
        double nrm = sqrt(nrm2);
        if (p->sphere && nrm > 0.0) {
            nrm2 = 0.0;
            for (size_t k = 0; k < d; k++) {
                x[k] /= nrm;
                nrm2 += x[k] * x[k];
            }
            nrm = sqrt(nrm2);
        }
        ws->gdiag[i] = nrm2;
        if (nrm > mmax)
            mmax = nrm;
        ws->mnorm[i] = mmax;
    }
    /* G = X X^T (lower triangle), one BLAS call; it only selects pairs (delta, d1), whose
     * distances are then recomputed directly. */
    cblas_dsyrk(CblasRowMajor, CblasLower, CblasNoTrans, (int)Ln, (int)d, 1.0, ws->X, (int)d, 0.0,
                ws->G, (int)Ln);
    ws->delta[0] = NAN;
    double best = INFINITY;
    for (size_t j = 1; j < Ln; j++) {
        const double *gr = ws->G + j * Ln;
        double mn = INFINITY, gj = ws->gdiag[j];
        size_t bi = 0;
        for (size_t i = 0; i < j; i++) {
            double dsq = ws->gdiag[i] + gj - 2.0 * gr[i];
            if (dsq < mn) {
                mn = dsq;
                bi = i;
            }
        }
        double dd = ns_dist(ws->X + j * d, ws->X + bi * d, d);
        if (dd < best)
            best = dd;
        ws->delta[j] = best;
    }
    return NS_OK;
}

int ns_analyze_head(const ns_analysis_params *p, const ns_head_key *key, const ns_head_input *in,
                    const size_t *rows, size_t n_rows, ns_analysis_ws *ws, double *out,
                    ns_err *err)
{
    NS_TRY(ns_check_params(p, err));
    if (in->L_max > ws->L_max || in->d > ws->d_cap || in->d == 0)
        return ns_fail(err, NS_ERR_INVALID,
                       "analysis: head input (L_max = %zu, d = %zu) does not fit the workspace "
                       "(L_max = %zu, d = %zu)",
                       in->L_max, in->d, ws->L_max, ws->d_cap);
    if (p->nN > ws->nN || p->probes > ws->probes)
        return ns_fail(err, NS_ERR_INVALID,
                       "analysis: parameters (nN = %zu, probes = %u) exceed the workspace's "
                       "(nN = %zu, probes = %u)",
                       p->nN, p->probes, ws->nN, ws->probes);
    if (in->values_ld < in->d)
        return ns_fail(err, NS_ERR_INVALID, "analysis: values_ld = %zu < d = %zu", in->values_ld,
                       in->d);
    size_t Ln = 0;
    for (size_t r = 0; r < n_rows; r++) {
        if (rows[r] >= in->L_max)
            return ns_fail(err, NS_ERR_INVALID, "analysis: row %zu is outside the shard (L_max = %zu)",
                           rows[r], in->L_max);
        if (rows[r] + 1 > Ln)
            Ln = rows[r] + 1;
    }
    if (n_rows == 0)
        return NS_OK;
    if (in->logits_ld < Ln)
        return ns_fail(err, NS_ERR_INVALID, "analysis: logits_ld = %zu < %zu keys of row %zu",
                       in->logits_ld, Ln, Ln - 1);
    ws->d = in->d;
    int rc = ns_prepare_head(ws, p, key, in, Ln, err);
    if (rc != NS_OK)
        goto done;

    ns_row_layout lay;
    ns_row_layout_init(&lay, p->nT, p->nN, p->neps);
    int T_free = ns_topn_rank_is_T_free(&p->normalizer);
    for (size_t r = 0; r < n_rows; r++) {
        size_t m = rows[r], L = m + 1;
        double *row = out + r * lay.total;
        for (size_t k = 0; k < lay.total; k++)
            row[k] = NAN;
        const float *zr = in->logits + m * in->logits_ld;
        for (size_t i = 0; i < L; i++) {
            if (!isfinite(zr[i])) {
                rc = ns_fail(err, NS_ERR_INVALID,
                             "analysis shard %llu layer %u head %u: logit z[%zu][%zu] = %g is not "
                             "finite",
                             (unsigned long long)key->shard, key->layer, key->head, m, i,
                             (double)zr[i]);
                goto done;
            }
            ws->z[i] = (double)zr[i];
        }
        double M = p->sphere ? 1.0 : ws->mnorm[m];
        double delta = ws->delta[m];
        row[ns_row_index_t(&lay, NS_M_DELTA, 0)] = delta;
        size_t prev_len = 0; /* length of order_prev that is valid for d1 reuse */
        for (size_t t = 0; t < p->nT; t++) {
            double T = p->T[t];
            rc = ns_normalize(&p->normalizer, ws->z, L, T, ws->alpha, ws->work, err);
            if (rc != NS_OK)
                goto done;
            if (!T_free || t == 0)
                ns_topn_rank_row(ws->order, ws->items, &p->normalizer, ws->z, ws->alpha, L, T);
            /* d1 depends only on the set I_N: reuse it while the ranking's prefix is unchanged */
            size_t common = 0;
            while (common < prev_len && ws->order[common] == ws->order_prev[common])
                common++;

            row[ns_row_index_t(&lay, NS_M_JAC_EXACT, t)] =
                ns_jac_exact_norm(&p->normalizer, ws->alpha, L, T, ws->work);
            row[ns_row_index_t(&lay, NS_M_JAC_LEMMA2, t)] =
                (p->normalizer.kind == NS_NORM_SOFTMAX || p->normalizer.kind == NS_NORM_SSMAX)
                    ? ns_jac_lemma2(ws->z, L, ns_normalizer_inv_temp(&p->normalizer, L, T))
                    : NAN;
            rc = ns_jac_fd(ws, p, key, m, L, t, row, &lay, err);
            if (rc != NS_OK)
                goto done;
            memset(ws->xbar, 0, ws->d * sizeof *ws->xbar);
            for (size_t i = 0; i < L; i++) {
                const double *x = ws->X + i * ws->d;
                double a = ws->alpha[i];
                for (size_t k = 0; k < ws->d; k++)
                    ws->xbar[k] += a * x[k];
            }
            size_t maxN_used = 0;
            for (size_t n = 0; n < p->nN; n++) {
                size_t N = p->N[n];
                if (N >= L)
                    continue; /* skipped: stays NaN */
                const size_t *sel = ws->order;
                for (size_t q = 0; q < N; q++)
                    ws->in_set[sel[q]] = 1;
                double abar = 0.0, tail = 0.0, maxn2 = 0.0;
                for (size_t q = 0; q < N; q++) {
                    abar += ws->alpha[sel[q]];
                    if (ws->gdiag[sel[q]] > maxn2)
                        maxn2 = ws->gdiag[sel[q]];
                }
                for (size_t i = 0; i < L; i++)
                    if (!ws->in_set[i])
                        tail += ws->alpha[i];
                ns_weighted_sum(ws->s, ws->X, ws->d, ws->alpha, sel, N);
                double rmin;
                double dsum =
                    ns_set_distances(ws->dist, &rmin, ws->X, ws->d, ws->alpha, L, ws->in_set, ws->s);
                double d1;
                if (N <= common)
                    d1 = ws->d1_cache[n];
                else
                    d1 = ws->d1_cache[n] = ns_d1(ws, Ln, sel, N, L);
                double dbound = tail * d1 + maxn2 * (abar * (double)(L - N) - tail);
                double frac, lower, upper;
                ns_separability(ws, sel, N, rmin, M, delta, &frac, &lower, &upper);
                for (size_t q = 0; q < N; q++)
                    ws->in_set[sel[q]] = 0;
                row[ns_row_index_tn(&lay, NS_M_DISTANCE, t, n)] = dsum;
                row[ns_row_index_tn(&lay, NS_M_DISTANCE_D1, t, n)] = d1;
                row[ns_row_index_tn(&lay, NS_M_DISTANCE_BOUND, t, n)] = dbound;
                row[ns_row_index_tn(&lay, NS_M_DISTANCE_EXPECTED, t, n)] = ns_d_expected(ws, L, N);
                row[ns_row_index_tn(&lay, NS_M_DISTANCE_RANDOM, t, n)] =
                    ns_random_distance(ws, p, key, m, L, N, T);
                row[ns_row_index_tn(&lay, NS_M_NS_FRAC, t, n)] = frac;
                row[ns_row_index_tn(&lay, NS_M_NS_LOWER, t, n)] = lower;
                row[ns_row_index_tn(&lay, NS_M_NS_UPPER, t, n)] = upper;
                if (N > maxN_used)
                    maxN_used = N;
            }
            memcpy(ws->order_prev, ws->order, maxN_used * sizeof *ws->order);
            prev_len = maxN_used;
            /* entries n with N > maxN_used are never cached: they were skipped (N >= L) */
        }
    }
    rc = NS_OK;
done:
    return rc;
}

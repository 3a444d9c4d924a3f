/* ns_row: one head's per-row metrics: what rows share, the T-dependent metrics, and the call of
 * the N-dependent kernel (see ns_row.h). */
#include "analysis/ns_row.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "norm/ns_jacobian.h"
#include "norm/ns_norm_jac.h"
#include "norm/ns_norm_row.h"
#include "analysis/ns_rng.h"
#include "analysis/ns_row_kernels_internal.h"
#include "analysis/ns_topn.h"

/* Domain tags of the counter-based generator's keys. */
#define NS_RNG_TAG_RANDOM_PERM 0x72616e645f706572ULL /* d_random's permutation */
#define NS_RNG_TAG_FD_PROBES 0x66645f70726f6265ULL   /* jac_fd directions */

uint64_t ns_analysis_rng_key(ns_rng_purpose purpose, uint64_t seed, const ns_head_key *key,
                             size_t row, double T)
{
    uint64_t w[7] = {purpose == NS_RNG_RANDOM_SUBSET ? NS_RNG_TAG_RANDOM_PERM : NS_RNG_TAG_FD_PROBES,
                     seed, key->shard, (uint64_t)row, key->layer, key->head,
                     ns_rng_double_bits(T)};
    return ns_rng_key(w, 7);
}

void ns_random_prefix(uint64_t key, size_t L, size_t n, size_t *perm)
{
    ns_rng rng;
    ns_rng_init(&rng, key);
    for (size_t i = 0; i < L; i++)
        perm[i] = i;
    for (size_t i = 0; i < n && i + 1 < L; i++) {
        size_t j = i + (size_t)ns_rng_below(&rng, (uint64_t)(L - i));
        size_t tmp = perm[i];
        perm[i] = perm[j];
        perm[j] = tmp;
    }
}

/* ---- workspace ---------------------------------------------------------------------------- */

struct ns_analysis_ws {
    size_t L_max, d_cap, nN;
    size_t d;          /* head dimension of the current call (<= d_cap) */
    unsigned probes;
    void *block;       /* the one allocation; everything below points into it */
    double *X;         /* (L_max, d): the row vectors x_i (scaled to norm 1 when sphere) */
    double *G;         /* Gram matrix X X^T of the rows used (Ln), ld NS_GRAM_LD(Ln), full */
    double *gdiag;     /* (L_max): ||x_i||^2 computed directly */
    double *delta;     /* (L_max): delta of row m = min pairwise distance among x_0..x_m */
    double *mnorm;     /* (L_max): max_{i <= m} ||x_i|| (M of row m when not sphere) */
    double *z;         /* (L_max): the row's logits in double */
    double *alpha, *lalpha; /* (L_max) each */
    double *work;      /* (2 L_max + 2): normalizer and Theorem 2 scratch */
    double *zp, *ap;   /* (L_max) each: perturbed logits and weights */
    double *na, *np;   /* (L_max) each: a normalizer's weights a off the simplex, a perturbed p */
    double *nwork;     /* (ns_norm_row_work(L_max)): ns_norm_row_eval's work */
    double *u;         /* ((probes + 1) L_max): jac_fd directions */
    double *v[9];      /* (L_max) each: kernel scratch */
    double *s, *sr, *xbar; /* (d) each */
    double *xsum;      /* (d): sum_i x_i over the current row's keys (T-free) */
    size_t *order, *perm; /* (L_max) each */
    ns_rank_item *items;  /* (L_max) */
    unsigned char *in_set, *in_rand; /* (L_max) each */
};

double ns_analysis_ws_bytes(unsigned probes, size_t L_max, size_t d)
{
    double L = (double)L_max, D = (double)d, P = (double)probes + 1.0;
    /* X, G, gdiag/delta/mnorm/z/alpha/lalpha, work, zp/ap, na/np/nwork, u, v[9], s/sr/xbar/xsum */
    double nd = L * D + L * (double)NS_GRAM_LD(L_max) + 6.0 * L + (2.0 * L + 2.0) + 2.0 * L +
                2.0 * L + (double)ns_norm_row_work(L_max) + P * L + 9.0 * L + 4.0 * D;
    return nd * sizeof(double) + 2.0 * L * sizeof(size_t) + L * sizeof(ns_rank_item) + 2.0 * L;
}

int ns_analysis_ws_new(const ns_analysis_params *p, size_t L_max, size_t d, ns_analysis_ws **out,
                       ns_err *err)
{
    *out = NULL;
    if (L_max == 0 || d == 0)
        return ns_fail(err, NS_ERR_INVALID,
                       "analysis workspace: L_max = %zu and d = %zu must be >= 1", L_max, d);
    ns_analysis_ws *ws = calloc(1, sizeof *ws);
    if (!ws)
        return ns_fail(err, NS_ERR_NOMEM, "analysis workspace: out of memory");
    ws->L_max = L_max;
    ws->d_cap = d;
    ws->nN = p->nN;
    ws->probes = p->probes;
    double want = ns_analysis_ws_bytes(p->probes, L_max, d);
    size_t bytes = want < (double)(SIZE_MAX / 2) ? (size_t)want : 0;
    ws->block = bytes ? malloc(bytes) : NULL;
    if (!ws->block) {
        free(ws);
        return ns_fail(err, NS_ERR_NOMEM,
                       "analysis workspace: out of memory (%.0f bytes for L_max = %zu, d = %zu)",
                       want, L_max, d);
    }
    double *q = ws->block;
    ws->X = q, q += L_max * d;
    ws->G = q, q += L_max * NS_GRAM_LD(L_max);
    ws->gdiag = q, q += L_max;
    ws->delta = q, q += L_max;
    ws->mnorm = q, q += L_max;
    ws->z = q, q += L_max;
    ws->alpha = q, q += L_max;
    ws->lalpha = q, q += L_max;
    ws->work = q, q += 2 * L_max + 2;
    ws->zp = q, q += L_max;
    ws->ap = q, q += L_max;
    ws->na = q, q += L_max;
    ws->np = q, q += L_max;
    ws->nwork = q, q += ns_norm_row_work(L_max);
    ws->u = q, q += ((size_t)p->probes + 1) * L_max;
    for (int k = 0; k < 9; k++)
        ws->v[k] = q, q += L_max;
    ws->s = q, q += d;
    ws->sr = q, q += d;
    ws->xbar = q, q += d;
    ws->xsum = q, q += d;
    size_t *zq = (size_t *)q;
    ws->order = zq, zq += L_max;
    ws->perm = zq, zq += L_max;
    ws->items = (ns_rank_item *)zq;
    ws->in_set = (unsigned char *)(ws->items + L_max);
    ws->in_rand = ws->in_set + L_max;
    memset(ws->in_set, 0, 2 * L_max);
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

/* ---- T-dependent metrics ------------------------------------------------------------------ */

/* jac_fd's directions for row m over the L logits z (the sink-excluded view's: z_1.. of the row):
 * u_0 = (e_a - e_b)/sqrt 2 (a, b the two largest logits, ties by the smaller index) and P random
 * unit directions keyed by the row, the same for every T and eps. Returns how many (in ws->u, L
 * apart). */
static size_t ns_fd_directions(ns_analysis_ws *ws, const ns_analysis_params *p,
                               const ns_head_key *key, size_t m, const double *z, size_t L)
{
    size_t nu = 0;
    double *u = ws->u;
    if (L == 0)
        return 0;
    if (L >= 2) {
        size_t a = 0, b = SIZE_MAX;
        for (size_t i = 1; i < L; i++)
            if (z[i] > z[a])
                a = i;
        for (size_t i = 0; i < L; i++)
            if (i != a && (b == SIZE_MAX || z[i] > z[b]))
                b = i;
        memset(u, 0, L * sizeof *u);
        u[a] = M_SQRT1_2;
        u[b] = -M_SQRT1_2;
        nu = 1;
    }
    if (p->probes > 0) {
        ns_rng rng;
        ns_rng_init(&rng, ns_analysis_rng_key(NS_RNG_FD_PROBES, p->seed, key, m, 0.0));
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
    return nu;
}

/* jac_fd for every eps at one (row, T) over the nu directions in ws->u (L entries each): the fast
 * kernel's own vectorized version for the softmax family, else each perturbed row normalized
 * directly. The sink-excluded view (off = 1): z_0 held fixed, the directions move z_1..z_L, the
 * normalizer runs over all L + 1 keys and the difference is of a_1..a_L (METRICS.md 8.2). */
static int ns_jac_fd(ns_analysis_ws *ws, const ns_analysis_params *p, size_t nu, size_t L,
                     size_t off, size_t t, const ns_row_layout *lay, double *row,
                     ns_kernel kernel, ns_err *err)
{
    double T = p->T[t];
    const double *u = ws->u;
    if (kernel == NS_KERNEL_FAST && ns_topn_rank_is_T_free(&p->normalizer)) {
        double out[64];
        for (size_t e0 = 0; e0 < p->neps; e0 += 64) {
            size_t ne = p->neps - e0 < 64 ? p->neps - e0 : 64;
            ns_jac_fd_softmax(ws->z, ws->alpha, L, ns_normalizer_inv_temp(&p->normalizer, L, T),
                              u, nu, p->eps + e0, ne, ws->ap, out);
            for (size_t e = 0; e < ne; e++)
                row[ns_row_index(lay, NS_M_JAC_FD, t, 0, e0 + e)] = out[e];
        }
        return NS_OK;
    }
    int on_simplex = ns_normalizer_on_simplex(p->normalizer.kind);
    /* the Jacobian of a, not of p (of the view's a = a_1.., held in na, for the view) */
    const double *a0 = on_simplex && !off ? ws->alpha : ws->na;
    size_t Lf = L + off; /* the keys the normalizer runs over */
    for (size_t e = 0; e < p->neps; e++) {
        double eps = p->eps[e], best = 0.0;
        for (size_t k = 0; k < nu; k++) {
            const double *v = u + k * L;
            for (size_t i = 0; i < off; i++)
                ws->zp[i] = ws->z[i];
            for (size_t i = 0; i < L; i++)
                ws->zp[off + i] = ws->z[off + i] + eps * v[i];
            if (on_simplex) {
                NS_TRY(ns_normalize(&p->normalizer, ws->zp, Lf, T, ws->ap, ws->work, err));
            } else {
                ns_norm_row r = {.a = ws->ap, .p = ws->np, .logp = NULL};
                NS_TRY(ns_norm_row_eval(&p->normalizer, ws->zp, Lf, T, &r, ws->nwork, err));
            }
            double acc = 0.0;
            for (size_t i = 0; i < L; i++) {
                double dd = ws->ap[off + i] - a0[i];
                acc += dd * dd;
            }
            double g = sqrt(acc) / eps;
            if (g > best)
                best = g;
        }
        row[ns_row_index(lay, NS_M_JAC_FD, t, 0, e)] = nu ? best : NAN;
    }
    return NS_OK;
}

/* entropy = -sum alpha_i log alpha_i (0 log 0 = 0), with the exact log-weights. */
static double ns_entropy(const double *alpha, const double *lalpha, size_t L)
{
    double h = 0.0;
    for (size_t i = 0; i < L; i++)
        if (alpha[i] > 0.0)
            h -= alpha[i] * lalpha[i];
    return h + 0.0; /* -0.0 for one-hot rows becomes 0.0 */
}

/* ---- per head ----------------------------------------------------------------------------- */

static int ns_check_params(const ns_analysis_params *p, ns_err *err)
{
    for (size_t n = 0; n < p->nN; n++)
        if (p->N[n] < 1 || (n > 0 && p->N[n] <= p->N[n - 1]))
            return ns_fail(err, NS_ERR_INVALID, "analysis: N must be ascending and >= 1 (N[%zu] = %zu)",
                           n, p->N[n]);
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
    size_t d = ws->d;
    double mmax = 0.0;
    for (size_t i = 0; i < Ln; i++) {
        const float *v = in->values + i * in->values_ld;
        double *x = ws->X + i * d, nrm2 = 0.0;
        for (size_t k = 0; k < d; k++) {
            if (!isfinite(v[k]))
                return ns_fail(err, NS_ERR_INVALID,
                               "value v[%zu][%zu] = %g is not finite (the model's activations "
                               "overflow float32: are its weights too large?)", i, k,
                               (double)v[k]); /* (the caller names shard, layer and head) */
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
    ns_row_gram(ws->X, ws->gdiag, Ln, d, ws->G, ws->delta);
    return NS_OK;
}

/* Check the inputs of ns_analyze_head; *Ln receives the rows the head's data must cover. */
static int ns_check_head(const ns_analysis_params *p, const ns_head_input *in,
                         const ns_row_request *rows, size_t n_rows, const ns_analysis_ws *ws,
                         size_t *Ln, ns_err *err)
{
    NS_TRY(ns_check_params(p, err));
    if (in->L_max > ws->L_max || in->d > ws->d_cap || in->d == 0)
        return ns_fail(err, NS_ERR_INVALID,
                       "analysis: head input (L_max = %zu, d = %zu) does not fit the workspace "
                       "(L_max = %zu, d = %zu)", in->L_max, in->d, ws->L_max, ws->d_cap);
    if (p->nN > ws->nN || p->probes > ws->probes)
        return ns_fail(err, NS_ERR_INVALID,
                       "analysis: parameters (nN = %zu, probes = %u) exceed the workspace's "
                       "(nN = %zu, probes = %u)", p->nN, p->probes, ws->nN, ws->probes);
    if (in->values_ld < in->d)
        return ns_fail(err, NS_ERR_INVALID, "analysis: values_ld = %zu < d = %zu", in->values_ld,
                       in->d);
    *Ln = 0;
    for (size_t r = 0; r < n_rows; r++) {
        const ns_row_layout *lay = rows[r].lay;
        if (rows[r].m >= in->L_max)
            return ns_fail(err, NS_ERR_INVALID,
                           "analysis: row %zu is outside the shard (L_max = %zu)", rows[r].m,
                           in->L_max);
        if (lay->nT != p->nT || lay->neps != p->neps || lay->nN > p->nN ||
            lay->t_free_rank != ns_topn_rank_is_T_free(&p->normalizer))
            return ns_fail(err, NS_ERR_INVALID, "analysis: row %zu's record layout does not "
                           "match the parameters", rows[r].m);
        if (in->logits_slot && in->logits_slot[rows[r].m] == SIZE_MAX)
            return ns_fail(err, NS_ERR_INVALID, "analysis: row %zu's logits were not kept",
                           rows[r].m);
        if (rows[r].m + 1 > *Ln)
            *Ln = rows[r].m + 1;
    }
    if (n_rows > 0 && in->logits_ld < *Ln)
        return ns_fail(err, NS_ERR_INVALID, "analysis: logits_ld = %zu < %zu keys of row %zu",
                       in->logits_ld, *Ln, *Ln - 1);
    return NS_OK;
}

/* The weights of one row at T into ws: the shape p (alpha) and log p (lalpha) the theorems use,
 * and for a normalizer off the simplex its own weights a (na); and the metrics that need no more:
 * mass, sink_mass, jac_exact, jac_lemma2 (METRICS.md sections 2.1, 7, 8.1). *empty: the row's
 * mass is 0 (every a_j = 0), so its shape metrics stay missing. */
static int ns_weights_at_T(ns_analysis_ws *ws, const ns_analysis_params *p, size_t L, size_t t,
                           const ns_row_layout *lay, double *row, int *empty, ns_err *err)
{
    const ns_normalizer *f = &p->normalizer;
    double T = p->T[t], mass = 1.0, jac, lemma2 = NAN; /* on the simplex m = 1 by definition */
    *empty = 0;
    if (ns_topn_rank_is_T_free(f)) {
        double f2sum = 0.0;
        ns_softmax_family_row(f, ws->z, L, T, ws->alpha, ws->lalpha, &f2sum);
        jac = ns_jac_exact_norm(f, ws->alpha, L, T, ws->work);
        lemma2 = ns_jac_lemma2(ws->z, L, ns_normalizer_inv_temp(f, L, T), f2sum);
    } else if (ns_normalizer_on_simplex(f->kind)) {
        NS_TRY(ns_normalize(f, ws->z, L, T, ws->alpha, ws->work, err));
        ns_log_weights(f, ws->z, ws->alpha, L, T, ws->lalpha);
        jac = ns_jac_exact_norm(f, ws->alpha, L, T, ws->work);
    } else {
        ns_norm_row r = {.a = ws->na, .p = ws->alpha, .logp = ws->lalpha};
        NS_TRY(ns_norm_row_eval(f, ws->z, L, T, &r, ws->nwork, err));
        mass = r.m;
        *empty = !isfinite(r.log_m); /* -inf: every a_j is 0 (log m is never +inf or NaN) */
        /* exact where norm/ has a closed form; softpick's and stick-breaking's only as a dense
         * O(L^3) SVD: missing in a sweep (jac_fd measures them) */
        jac = f->kind == NS_NORM_SOFTPICK || f->kind == NS_NORM_STICKBREAKING
                  ? NAN
                  : ns_norm_jac_norm(f, ws->z, L, T, &r, ws->nwork);
    }
    row[ns_row_index(lay, NS_M_MASS, t, 0, 0)] = mass;
    row[ns_row_index(lay, NS_M_SINK_MASS, t, 0, 0)] = *empty ? NAN : ws->alpha[0];
    row[ns_row_index(lay, NS_M_JAC_EXACT, t, 0, 0)] = jac;
    row[ns_row_index(lay, NS_M_JAC_LEMMA2, t, 0, 0)] = lemma2;
    return NS_OK;
}

/* The sink-excluded view of one row of Lf keys at T (METRICS.md section 8.2): the normalizer's
 * weights over all Lf keys (v[0], their logs v[1]), key 0 dropped, the rest renormalised over
 * L = Lf - 1 keys: the view's a in na, p in alpha, log p in lalpha; mass = sum of the view's a,
 * sink_mass = p_0 (the share on the window's key 1), jac_exact the norm of the block of d a / d z
 * over keys 1.. with z_0 held fixed, jac_lemma2 missing. *empty: the view's mass is 0. */
static int ns_view_weights_at_T(ns_analysis_ws *ws, const ns_analysis_params *p, size_t Lf,
                                size_t t, const ns_row_layout *lay, double *row, int *empty,
                                ns_err *err)
{
    const ns_normalizer *f = &p->normalizer;
    double T = p->T[t];
    ns_norm_row full = {.a = ws->v[0], .p = ws->np, .logp = NULL, .loga = ws->v[1]};
    NS_TRY(ns_norm_row_eval(f, ws->z, Lf, T, &full, ws->nwork, err));
    ns_norm_row r = {.a = ws->na, .p = ws->alpha, .logp = ws->lalpha};
    ns_norm_row_view(full.a, full.loga, Lf, &r);
    *empty = !isfinite(r.log_m);
    row[ns_row_index(lay, NS_M_MASS, t, 0, 0)] = r.m;
    row[ns_row_index(lay, NS_M_SINK_MASS, t, 0, 0)] = *empty ? NAN : ws->alpha[0];
    row[ns_row_index(lay, NS_M_JAC_EXACT, t, 0, 0)] =
        Lf >= 2 ? ns_norm_jac_view_norm(f, ws->z, Lf, T, &full, ws->work) : NAN;
    row[ns_row_index(lay, NS_M_JAC_LEMMA2, t, 0, 0)] = NAN;
    return NS_OK;
}

/* The metrics of one row m at temperature index t (the row's z, X, G are in place; for the
 * sink-excluded view X, G, delta and M are of keys 1..m, and the row has L = m keys). */
static int ns_row_at_T(ns_analysis_ws *ws, const ns_analysis_params *p, const ns_head_key *key,
                       const ns_row_request *rq, size_t Ln, size_t t, size_t nu, ns_kernel kernel,
                       ns_err *err)
{
    size_t off = p->normalizer.view == NS_VIEW_SINK_EXCLUDED, m = rq->m, L = m + 1 - off;
    const ns_row_layout *lay = rq->lay;
    double *row = rq->out, T = p->T[t];
    int t_free = ns_topn_rank_is_T_free(&p->normalizer); /* the softmax family, not a view */
    int simplex = ns_normalizer_on_simplex(p->normalizer.kind) && !off; /* p = a */
    int empty;
    if (off)
        NS_TRY(ns_view_weights_at_T(ws, p, L + 1, t, lay, row, &empty, err));
    else
        NS_TRY(ns_weights_at_T(ws, p, L, t, lay, row, &empty, err));
    if (L > 0)
        NS_TRY(ns_jac_fd(ws, p, nu, L, off, t, lay, row, kernel, err));
    if (empty)
        return NS_OK; /* no shape p: its metrics stay missing (counted in empty_rows) */
    /* off the simplex ranked by log p: the order of p, exact where p underflows */
    if (!t_free || t == 0)
        ns_topn_rank_row(ws->order, ws->items, &p->normalizer, ws->z,
                         simplex ? ws->alpha : ws->lalpha, L, T);
    double h = ns_entropy(ws->alpha, ws->lalpha, L);
    row[ns_row_index(lay, NS_M_ENTROPY, t, 0, 0)] = h;
    row[ns_row_index(lay, NS_M_ENTROPY_NORM, t, 0, 0)] = L >= 2 ? h / log((double)L) : NAN;

    size_t nN = 0; /* the N's this row has: below its L keys (and within the layout) */
    while (nN < lay->nN && p->N[nN] < L)
        nN++;
    if (nN == 0)
        return NS_OK;
    size_t d = ws->d;
    ns_row_colsum(ws->X, L, d, ws->alpha, ws->xbar);
    ns_random_prefix(ns_analysis_rng_key(NS_RNG_RANDOM_SUBSET, p->seed, key, m, T), L,
                     p->N[nN - 1], ws->perm);
    ns_row_ctx c = {
        .L = L, .d = d, .X = ws->X, .gdiag = ws->gdiag, .G = ws->G, .ldg = NS_GRAM_LD(Ln - off),
        .alpha = ws->alpha, .lalpha = ws->lalpha, .xbar = ws->xbar, .xsum = ws->xsum,
        .order = ws->order, .perm = ws->perm, .M = p->sphere ? 1.0 : ws->mnorm[m - off],
        .delta = ws->delta[m - off], .N = p->N, .nN = nN, .want_d1 = !t_free || t == 0, .t = t,
        .lay = lay, .out = row, .s = ws->s, .sr = ws->sr, .v1 = ws->v[0], .v2 = ws->v[1],
        .v3 = ws->v[2], .v4 = ws->v[3], .v5 = ws->v[4], .v6 = ws->v[5], .a2g = ws->v[6],
        .mtop = ws->v[7], .mrand = ws->v[8], .work = ws->work, .in_set = ws->in_set,
        .in_rand = ws->in_rand,
    };
    if (kernel == NS_KERNEL_FAST)
        ns_row_n_fast(&c);
    else
        ns_row_n_reference(&c);
    if (p->normalizer.kind == NS_NORM_STICKBREAKING) /* key order matters: no exchangeable */
        for (size_t n = 0; n < nN; n++)              /* random-subset reference (METRICS 2.1) */
            row[ns_row_index(lay, NS_M_DISTANCE_RANDOM, t, n, 0)] = NAN;
    return NS_OK;
}

int ns_analyze_head(const ns_analysis_params *p, const ns_head_key *key, const ns_head_input *in,
                    const ns_row_request *rows, size_t n_rows, ns_kernel kernel,
                    ns_analysis_ws *ws, ns_err *err)
{
    size_t Ln = 0;
    NS_TRY(ns_check_head(p, in, rows, n_rows, ws, &Ln, err));
    if (n_rows == 0)
        return NS_OK;
    ws->d = in->d; /* the arrays are laid out for this call's head dimension */
    /* the sink-excluded view: vectors, Gram matrix, delta and M of keys 1.. only (METRICS 8.2) */
    size_t off = p->normalizer.view == NS_VIEW_SINK_EXCLUDED;
    ns_head_input vin = *in;
    vin.values += off * in->values_ld;
    if (Ln > off) /* (a view of row 0 alone has no key) */
        NS_TRY(ns_prepare_head(ws, p, key, &vin, Ln - off, err));
    for (size_t r = 0; r < n_rows; r++) {
        const ns_row_request *rq = &rows[r];
        size_t m = rq->m, L = m + 1;
        for (size_t k = 0; k < rq->lay->total; k++)
            rq->out[k] = NAN;
        const float *zr = in->logits + (in->logits_slot ? in->logits_slot[m] : m) * in->logits_ld;
        for (size_t i = 0; i < L; i++) {
            if (!isfinite(zr[i]))
                return ns_fail(err, NS_ERR_INVALID,
                               "logit z[%zu][%zu] = %g is not finite (the model's attention scores "
                               "overflow float32: are its weights too large?)", m, i,
                               (double)zr[i]); /* (the caller names shard, layer and head) */
            ws->z[i] = (double)zr[i];
        }
        size_t Lv = L - off; /* the keys analysed */
        rq->out[ns_row_index(rq->lay, NS_M_DELTA, 0, 0, 0)] = Lv ? ws->delta[m - off] : NAN;
        ns_row_colsum(ws->X, Lv, ws->d, NULL, ws->xsum);
        size_t nu = ns_fd_directions(ws, p, key, m, ws->z + off, Lv);
        for (size_t t = 0; t < p->nT; t++)
            NS_TRY(ns_row_at_T(ws, p, key, rq, Ln, t, nu, kernel, err));
    }
    return NS_OK;
}

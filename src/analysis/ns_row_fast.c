/* ns_row_fast: the incremental kernel of the N-dependent metrics. The top-N set (and the random
 * set of d_random) grows by one key per step; with the head's Gram matrix G = X X^T every
 * quantity follows from the previous step's in O(L):
 *   sx_i = x_i . s      += alpha_j G_ij        (for d, r and N_s)
 *   far_i = max_{k in I} ||x_i - x_k||^2       (d1: its argmax pair is recomputed directly)
 * and d_expected is a quadratic in c = N/(L-1) whose three coefficients depend only on T.
 * Where a Gram-based value could lose digits to cancellation (a distance much smaller than its
 * terms) it is recomputed directly, so the values agree with the reference kernel (ns_row_ref.c)
 * to a few ulps times the row's condition (tests/test_analysis.c). */
#include <math.h>
#include <string.h>

#include "analysis/ns_row_kernels_internal.h"
#include "common/ns_simd.h"

/* Below this ratio of a squared distance to the size of its terms, recompute it directly. */
#define NS_CANCEL_GUARD 1e-6
/* Log weights below this are "tiny": alpha may underflow in products (see ns_ev). */
#define NS_TINY_LOG (-600.0)

_Static_assert(sizeof(size_t) == sizeof(double), "partner indices share a double scratch array");

/* A set's mixture s = sum over sel[0..n) of alpha_j x_j, computed directly only when the
 * cancellation guard needs it. */
typedef struct lazy_s {
    double *s;
    const size_t *sel;
    size_t n;
    int ready;
} lazy_s;

/* Add key j to a growing set: sxv[i] += alpha_j G_ij for every i < L; returns the new ||s||^2
 * from the old one (ss + 2 alpha_j sx_j + alpha_j^2 g_j, with sx_j before the update). */
NS_HOT static double add_key(const ns_row_ctx *c, double *sxv, double ss, size_t j)
{
    double a = c->alpha[j];
    double ss_new = ss + 2.0 * a * sxv[j] + a * a * c->gdiag[j];
    if (a != 0.0) {
        const double *Gj = c->G + j * c->ldg; /* the Gram matrix is stored full (symmetric) */
        for (size_t i = 0; i < c->L; i++)
            sxv[i] += a * Gj[i];
    }
    return ss_new;
}

/* s = sum over sel[0..n) of alpha_j x_j, in sel's order. */
static void weighted_sum(double *s, const ns_row_ctx *c, const size_t *sel, size_t n)
{
    memset(s, 0, c->d * sizeof *s);
    for (size_t q = 0; q < n; q++) {
        const double *x = c->X + sel[q] * c->d;
        for (size_t k = 0; k < c->d; k++)
            s[k] += c->alpha[sel[q]] * x[k];
    }
}

/* ||alpha_i x_i - s|| from the Gram quantities, directly when cancellation threatens. */
static double dist_of(const ns_row_ctx *c, size_t i, const double *sxv, double ss, lazy_s *ls)
{
    double a = c->alpha[i], t1 = a * a * c->gdiag[i], t2 = 2.0 * a * sxv[i];
    double d2 = t1 - t2 + ss;
    if (d2 >= NS_CANCEL_GUARD * (t1 + fabs(t2) + ss))
        return sqrt(d2);
    if (!ls->ready) {
        weighted_sum(ls->s, c, ls->sel, ls->n);
        ls->ready = 1;
    }
    return sqrt(ns_sqdist_scaled(a, c->X + i * c->d, ls->s, c->d));
}

/* e_i = alpha_i (alpha_i g_i - 2 x_i.s) (METRICS.md section 6), for comparisons. */
static ns_evalue e_of(const ns_row_ctx *c, size_t i, const double *sxv)
{
    double a = c->alpha[i];
    return ns_ev(a, c->lalpha[i], a * c->gdiag[i] - 2.0 * sxv[i]);
}

/* log |e| of a negative e, or -inf when e >= 0: then a later e_j, however small |e_j| is, may
 * still be negative and so smaller, and nothing can stop the scan. */
static double log_neg_mag(ns_evalue e)
{
    if (!e.tiny)
        return e.v < 0.0 ? log(-e.v) : -INFINITY;
    ns_slog l = ns_slog_of(e.la, e.q);
    return l.sign < 0 ? l.lmag : -INFINITY;
}

/* min over j outside I of e_j. The complement is scanned in rank order (weights descending):
 * once the weights are tiny (log below NS_TINY_LOG) and a clearly negative e was found, no later
 * e_j can be smaller, since |e_j| <= alpha_j (alpha_j g_j + 2 |x_j.s|). */
static ns_evalue complement_min(const ns_row_ctx *c, size_t N, const double *sxv, double ss)
{
    ns_evalue best = {0.0, 0.0, 0.0, 0};
    int have = 0;
    double qmax = 0.0; /* bound on |alpha_j g_j - 2 x_j.s| */
    for (size_t i = 0; i < c->L; i++)
        if (c->gdiag[i] > qmax)
            qmax = c->gdiag[i];
    qmax = qmax + 2.0 * sqrt(qmax) * sqrt(ss > 0.0 ? ss : 0.0) + 1.0;
    double lq = log(qmax);
    for (size_t q = N; q < c->L; q++) {
        size_t j = c->order[q];
        double la = c->lalpha[j];
        if (have && la < NS_TINY_LOG && la + lq < log_neg_mag(best))
            break; /* later keys rank no higher: their |e| stays below |best| */
        ns_evalue e = e_of(c, j, sxv);
        if (!have || !ns_ev_le(best, e))
            best = e;
        have = 1;
    }
    return best;
}

/* The d_expected coefficients: sum_i ||(alpha_i + c) x_i - xbar||^2 = P0 + c P1 + c^2 P2 with
 * P0 = sum alpha^2 g + (L - 2) ||xbar||^2, P1 = 2 (sum alpha g - (sum x) . xbar), P2 = sum g.
 * scale receives the size of the terms (for the cancellation guard). */
static void expected_coeffs(const ns_row_ctx *c, double P[3], double *scale)
{
    double a2g = 0.0, ag = 0.0, g = 0.0, xx = 0.0, sxb = 0.0;
    for (size_t k = 0; k < c->d; k++) {
        xx += c->xbar[k] * c->xbar[k];
        sxb += c->xsum[k] * c->xbar[k]; /* sum_i x_i . xbar */
    }
    for (size_t i = 0; i < c->L; i++) {
        double a = c->alpha[i];
        a2g += a * a * c->gdiag[i];
        ag += a * c->gdiag[i];
        g += c->gdiag[i];
    }
    P[0] = a2g + (double)(c->L - 2) * xx;
    P[1] = 2.0 * (ag - sxb);
    P[2] = g;
    *scale = a2g + (double)c->L * xx + 2.0 * (ag + fabs(sxb));
}

static double expected_direct(const ns_row_ctx *c, double c0)
{
    double acc = 0.0;
    for (size_t i = 0; i < c->L; i++)
        acc += ns_sqdist_scaled(c->alpha[i] + c0, c->X + i * c->d, c->xbar, c->d);
    return acc;
}

/* d1 state: far[i] = max_{k in I} ||x_i - x_k||^2 (Gram) and its partner. */
NS_HOT static void far_add(const ns_row_ctx *c, double *far, size_t *partner, size_t j)
{
    const double *Gj = c->G + j * c->ldg;
    double gj = c->gdiag[j];
    for (size_t i = 0; i < c->L; i++) {
        double dsq = c->gdiag[i] + gj - 2.0 * Gj[i];
        if (dsq > far[i]) {
            far[i] = dsq;
            partner[i] = j;
        }
    }
}

/* For every key i: dist[i] = ||alpha_i x_i - s|| from the Gram quantities (a2g = alpha^2 g,
 * sx = x.s, ss = ||s||^2) and flag[i] = 1 where the key is counted (mask 1) and cancellation
 * threatens, else 0. Elementwise and branch-free, so it vectorizes (sqrt included). */
NS_HOT static void gram_dists(size_t L, const double *a, const double *a2g, const double *sx, double ss,
                       const double *mask, double *dist, double *flag)
{
    for (size_t i = 0; i < L; i++) {
        double t2 = 2.0 * a[i] * sx[i];
        double d2 = a2g[i] - t2 + ss;
        double scale = a2g[i] + fabs(t2) + ss;
        flag[i] = d2 < NS_CANCEL_GUARD * scale ? mask[i] : 0.0;
        dist[i] = sqrt(d2 > 0.0 ? d2 : 0.0);
    }
}

/* Over the keys with mask 1: the sum of dist (and of a when asum is not NULL), the minimum of
 * dist (when mn is not NULL) and the sum of flag, each in the fixed lane order. */
NS_HOT static void masked_reduce(size_t L, const double *dist, const double *mask, const double *a,
                          const double *flag, double *sum, double *asum, double *mn,
                          double *flags)
{
    const v4d inf = splat(INFINITY), zero = splat(0.0);
    v4d s = zero, t = zero, f = zero, m = inf;
    size_t i = 0;
    for (; i + 4 <= L; i += 4) {
        v4d dv = load4(dist + i), mv = load4(mask + i);
        s += mv * dv;
        f += load4(flag + i);
        if (asum)
            t += mv * load4(a + i);
        if (mn) {
            v4d cand = dv + (v4d)((v4i)inf & (mv == zero)); /* +inf for keys not counted */
            m = select4(cand < m, cand, m);
        }
    }
    double ss = lanes_sum(s), ts = lanes_sum(t), fs = lanes_sum(f);
    double mm = mn ? fmin(fmin(m[0], m[1]), fmin(m[2], m[3])) : INFINITY;
    for (; i < L; i++) { /* the tail, after the lanes */
        ss += mask[i] * dist[i];
        ts += mask[i] * a[i];
        fs += flag[i];
        if (mask[i] != 0.0 && dist[i] < mm)
            mm = dist[i];
    }
    *sum = ss;
    if (asum)
        *asum = ts;
    if (mn)
        *mn = mm;
    *flags = fs;
}

/* What one pass over the keys of a set at a grid point gives (see grid_pass). */
typedef struct grid_sums {
    double sum, asum, mn, flags; /* over the keys outside the set: sum of dist, of alpha, min dist,
                                    keys where cancellation threatens */
    double emin, tinys;          /* top set: min of e over them, and how many are tiny */
} grid_sums;

/* gram_dists and masked_reduce fused into one pass that stores nothing: the same operations on
 * every key and the same lane order, so the same bits. For the top set it also gives, over the
 * keys outside the set, the minimum of e_i = alpha_i (alpha_i g_i - 2 x_i.s) (computed as e_of
 * does) and how many of them ns_ev would call tiny. The distance sums are used only when no key
 * needs the cancellation guard (flags 0); otherwise the caller recomputes them on the two-pass
 * path, which keeps the per-key distances. e does not depend on that guard. */
static inline __attribute__((always_inline)) void grid_pass(
    size_t L, const double *a, const double *a2g, const double *g, const double *la,
    const double *sx, double ss, const double *mask, int top, grid_sums *o)
{
    const v4d inf = splat(INFINITY), zero = splat(0.0), two = splat(2.0), ssv = splat(ss);
    const v4d guard = splat(NS_CANCEL_GUARD), tlog = splat(NS_TINY_LOG);
    const v4d tlo = splat(-1e-280), thi = splat(1e-280);
    const v4i absm = ~(v4i)splat(-0.0); /* every bit but the sign */
    v4d s = zero, t = zero, f = zero, m = inf, em = inf, ti = zero;
    size_t i = 0;
    for (; i + 4 <= L; i += 4) {
        v4d av = load4(a + i), sxv = load4(sx + i), a2 = load4(a2g + i), mv = load4(mask + i);
        v4d t2 = two * av * sxv;
        v4d d2 = a2 - t2 + ssv;
        v4d scale = a2 + (v4d)((v4i)t2 & absm) + ssv;
        v4d fl = (v4d)((v4i)mv & (d2 < guard * scale));
        v4d dv = sqrt4((v4d)((v4i)d2 & (d2 > zero)));
        v4i out = mv == zero;
        s += mv * dv;
        f += fl;
        if (top) {
            t += mv * av;
            v4d cand = dv + (v4d)((v4i)inf & out); /* +inf for keys not counted */
            m = select4(cand < m, cand, m);
            v4d ev = av * (av * load4(g + i) - two * sxv);
            v4i tv = (load4(la + i) < tlog) | ((ev != zero) & (ev > tlo) & (ev < thi));
            ti += (v4d)((v4i)mv & tv);
            v4d ec = ev + (v4d)((v4i)inf & out);
            em = select4(ec < em, ec, em);
        }
    }
    double ssum = lanes_sum(s), ts = lanes_sum(t), fs = lanes_sum(f), tis = lanes_sum(ti);
    double mm = fmin(fmin(m[0], m[1]), fmin(m[2], m[3]));
    double emm = fmin(fmin(em[0], em[1]), fmin(em[2], em[3]));
    for (; i < L; i++) { /* the tail, as gram_dists and masked_reduce do it */
        double t2 = 2.0 * a[i] * sx[i];
        double d2 = a2g[i] - t2 + ss;
        double sc = a2g[i] + fabs(t2) + ss;
        double fl = d2 < NS_CANCEL_GUARD * sc ? mask[i] : 0.0;
        double dv = sqrt(d2 > 0.0 ? d2 : 0.0);
        ssum += mask[i] * dv;
        ts += mask[i] * a[i];
        fs += fl;
        if (mask[i] != 0.0 && dv < mm)
            mm = dv;
        if (top) {
            double v = a[i] * (a[i] * g[i] - 2.0 * sx[i]);
            int tv = (la[i] < NS_TINY_LOG) | ((v != 0.0) & (v > -1e-280) & (v < 1e-280));
            tis += tv ? mask[i] : 0.0;
            if (mask[i] != 0.0 && v < emm)
                emm = v;
        }
    }
    *o = (grid_sums){ssum, ts, mm, fs, emm, tis};
}

NS_HOT static void grid_pass_top(size_t L, const double *a, const double *a2g, const double *g,
                                 const double *la, const double *sx, double ss, const double *mask,
                                 grid_sums *o)
{
    grid_pass(L, a, a2g, g, la, sx, ss, mask, 1, o);
}

NS_HOT static void grid_pass_rand(size_t L, const double *a, const double *a2g, const double *sx,
                                  double ss, const double *mask, grid_sums *o)
{
    grid_pass(L, a, a2g, NULL, NULL, sx, ss, mask, 0, o);
}

/* The distances of one set at a grid point: *sum (and *tail, *r when wanted) over the keys
 * outside the set, from dist[] recomputed directly where the cancellation guard asks. With emin
 * not NULL (the top set) also the minimum of e_j over the keys outside the set when none of them
 * is tiny: *emin_ok = 0 when one is, and the careful scan (complement_min) must decide. */
static void set_distances(const ns_row_ctx *c, const double *sxv, double ss, const double *mask,
                          lazy_s *ls, double *dist, double *flag, double *sum, double *tail,
                          double *r, ns_evalue *emin, int *emin_ok)
{
    grid_sums o;
    if (emin) {
        grid_pass_top(c->L, c->alpha, c->a2g, c->gdiag, c->lalpha, sxv, ss, mask, &o);
        *emin = (ns_evalue){o.emin, 0.0, 0.0, 0};
        *emin_ok = o.tinys == 0.0;
    } else {
        grid_pass_rand(c->L, c->alpha, c->a2g, sxv, ss, mask, &o);
    }
    if (o.flags == 0.0) { /* the usual case: no distance needs recomputing */
        *sum = o.sum;
        if (tail)
            *tail = o.asum;
        if (r)
            *r = o.mn;
        return;
    }
    double flags;
    gram_dists(c->L, c->alpha, c->a2g, sxv, ss, mask, dist, flag);
    for (size_t i = 0; i < c->L; i++)
        if (flag[i] != 0.0) {
            dist[i] = dist_of(c, i, sxv, ss, ls);
            flag[i] = 0.0;
        }
    masked_reduce(c->L, dist, mask, c->alpha, flag, sum, tail, r, &flags);
}

void ns_row_n_fast(ns_row_ctx *c)
{
    const ns_row_layout *lay = c->lay;
    double *row = c->out, *sx = c->v1, *sxr = c->v2, *far = c->v3;
    size_t *partner = (size_t *)c->v4; /* same size as a double */
    double *dist = c->v5, *flag = c->v6;
    size_t L = c->L, t = c->t, Nmax = c->N[c->nN - 1];
    double ss = 0.0, ssr = 0.0, abar = 0.0, maxn2 = 0.0, P[3], pscale;
    memset(sx, 0, L * sizeof *sx);
    memset(sxr, 0, L * sizeof *sxr);
    for (size_t i = 0; i < L; i++) {
        far[i] = -INFINITY, partner[i] = 0;
        c->a2g[i] = c->alpha[i] * c->alpha[i] * c->gdiag[i];
        c->mtop[i] = 1.0, c->mrand[i] = 1.0;
    }
    expected_coeffs(c, P, &pscale);
    size_t n = 0;
    for (size_t k = 0; k < Nmax; k++) {
        size_t j = c->order[k], jr = c->perm[k];
        ss = add_key(c, sx, ss, j);
        ssr = add_key(c, sxr, ssr, jr);
        c->in_set[j] = 1;
        c->in_rand[jr] = 1;
        c->mtop[j] = 0.0;
        c->mrand[jr] = 0.0;
        abar += c->alpha[j];
        if (c->gdiag[j] > maxn2)
            maxn2 = c->gdiag[j];
        if (c->want_d1)
            far_add(c, far, partner, j);
        size_t N = k + 1;
        if (N != c->N[n])
            continue;
        /* grid point N: every metric from the running state */
        lazy_s ls = {c->s, c->order, N, 0}, lr = {c->sr, c->perm, N, 0};
        double d, r, tail, drand, best = -INFINITY;
        size_t bi = 0;
        ns_evalue emin;
        int emin_ok;
        set_distances(c, sx, ss, c->mtop, &ls, dist, flag, &d, &tail, &r, &emin, &emin_ok);
        set_distances(c, sxr, ssr, c->mrand, &lr, dist, flag, &drand, NULL, NULL, NULL, NULL);
        if (c->want_d1)
            for (size_t i = 0; i < L; i++)
                if (!c->in_set[i] && far[i] > best)
                    best = far[i], bi = i;
        if (!emin_ok)
            emin = complement_min(c, N, sx, ss);
        size_t ns = 0;
        for (size_t q = 0; q < N; q++)
            ns += ns_ev_le(e_of(c, c->order[q], sx), emin);
        size_t i_d1 = ns_row_index(lay, NS_M_DISTANCE_D1, t, n, 0);
        if (c->want_d1)
            row[i_d1] = sqrt(ns_sqdist_scaled(1.0, c->X + bi * c->d, c->X + partner[bi] * c->d,
                                              c->d));
        double d1 = row[i_d1], lower, upper;
        ns_theorem2_bounds(c->alpha, c->order, N, r, c->M, c->delta, c->work, &lower, &upper);
        double c0 = (double)N / (double)(L - 1);
        double ex = P[0] + c0 * P[1] + c0 * c0 * P[2];
        if (ex < NS_CANCEL_GUARD * (pscale + c0 * c0 * P[2]))
            ex = expected_direct(c, c0);
        row[ns_row_index(lay, NS_M_DISTANCE, t, n, 0)] = d;
        row[ns_row_index(lay, NS_M_DISTANCE_BOUND, t, n, 0)] =
            tail * d1 + maxn2 * (abar * (double)(L - N) - tail);
        row[ns_row_index(lay, NS_M_DISTANCE_EXPECTED, t, n, 0)] = (double)(L - N) / (double)L * ex;
        row[ns_row_index(lay, NS_M_DISTANCE_RANDOM, t, n, 0)] = drand;
        row[ns_row_index(lay, NS_M_NS_FRAC, t, n, 0)] = (double)ns / (double)N;
        row[ns_row_index(lay, NS_M_NS_LOWER, t, n, 0)] = lower;
        row[ns_row_index(lay, NS_M_NS_UPPER, t, n, 0)] = upper;
        if (++n == c->nN)
            break;
    }
    for (size_t k = 0; k < Nmax; k++) {
        c->in_set[c->order[k]] = 0;
        c->in_rand[c->perm[k]] = 0;
    }
}

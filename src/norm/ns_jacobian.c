/* ns_jacobian: exact normalizer Jacobian norms via the secular equation; Lemma 2's bound. */
#include "norm/ns_jacobian.h"
#include "norm/ns_jacobian_internal.h"

#include <float.h>
#include <math.h>

#include "common/ns_simd.h"

/* g(t) = sum_i w_i / (dl_i - t) and its derivative, over positive w (dl_i = w_i - origin).
 * The quotients of a block of keys are computed first (elementwise: they vectorize; 0 for a
 * key without positive weight), then added in key order: the same sums, bit for bit, as adding
 * each term as it comes (a skipped key adds +0 to a sum that is never -0). */
NS_HOT static double ns_secular(const double *w, size_t n, double origin, double t, double *deriv)
{
    double g = 0.0, gp = 0.0, q[256], qd[256];
    const v4d zero = splat(0.0);
    for (size_t i0 = 0; i0 < n; i0 += 256) {
        size_t nb = n - i0 < 256 ? n - i0 : 256, i = 0;
        const double *wb = w + i0;
        for (; i + 4 <= nb; i += 4) { /* a masked key's own quotient may be inf or NaN: dropped */
            v4d wv = load4(wb + i);
            v4d den = (wv - splat(origin)) - splat(t);
            v4d qi = wv / den;
            v4i pos = wv > zero;
            store4(q + i, select4(pos, qi, zero));
            store4(qd + i, select4(pos, qi / den, zero));
        }
        for (; i < nb; i++) {
            double den = (wb[i] - origin) - t, qi = wb[i] / den;
            q[i] = wb[i] > 0.0 ? qi : 0.0;
            qd[i] = wb[i] > 0.0 ? qi / den : 0.0;
        }
        for (i = 0; i < nb; i++) {
            g += q[i];
            gp += qd[i];
        }
    }
    *deriv = gp;
    return g;
}

/* The two largest positive entries; returns the number of positive entries. */
static size_t ns_top2(const double *w, size_t n, double *w1, double *w2)
{
    size_t cnt = 0;
    double a = 0.0, b = 0.0;
    for (size_t i = 0; i < n; i++) {
        double x = w[i];
        if (!(x > 0.0))
            continue;
        cnt++;
        if (x > a) {
            b = a;
            a = x;
        } else if (x > b) {
            b = x;
        }
    }
    *w1 = a;
    *w2 = b;
    return cnt;
}

/* A point strictly inside (lo, hi) (same sign or one end 0): the geometric mean of the
 * magnitudes when they differ by more than a factor 4, else the midpoint. */
static double ns_split(double lo, double hi)
{
    double a = fabs(lo), b = fabs(hi);
    double sgn = (lo + hi) < 0.0 ? -1.0 : 1.0;
    double small = a < b ? a : b, big = a < b ? b : a;
    if (small < DBL_MIN)
        small = DBL_MIN * big < DBL_TRUE_MIN ? DBL_TRUE_MIN : DBL_MIN * big;
    if (big > 4.0 * small) {
        double m = sgn * sqrt(small) * sqrt(big);
        if (m > lo && m < hi)
            return m;
    }
    return lo + 0.5 * (hi - lo);
}

double ns_jac_dmr_max(const double *w, size_t n)
{
    double w1, w2;
    size_t cnt = ns_top2(w, n, &w1, &w2);
    if (cnt < 2)
        return 0.0;
    if (w2 == w1)
        return w1;
    double mid = w2 + 0.5 * (w1 - w2), gp;
    double gm = ns_secular(w, n, 0.0, mid, &gp);
    if (gm == 0.0)
        return mid;
    /* Work around the nearer pole: t = lambda - origin, g increasing in t on (lo, hi). */
    double origin, lo, hi;
    if (gm > 0.0) {
        origin = w2;
        lo = 0.0;
        hi = mid - w2;
    } else {
        origin = w1;
        lo = mid - w1;
        hi = 0.0;
    }
    /* rtsafe-style: Newton when it stays inside the bracket and at least halves the previous
     * step, else split the bracket (geometrically when its ends differ by orders of magnitude). */
    double t = lo + 0.5 * (hi - lo), dxold = hi - lo;
    for (int it = 0; it < 400; it++) {
        double g = ns_secular(w, n, origin, t, &gp);
        if (g == 0.0 || !isfinite(g))
            break;
        if (g > 0.0)
            hi = t;
        else
            lo = t;
        if (hi - lo <= 4.0 * DBL_EPSILON * fmin(fabs(lo), fabs(hi)))
            break;
        double tn = t - g / gp;
        if (!(tn > lo && tn < hi) || fabs(tn - t) > 0.5 * dxold)
            tn = ns_split(lo, hi);
        if (fabs(tn - t) <= 2.0 * DBL_EPSILON * fabs(t) || tn <= lo || tn >= hi)
            break;
        dxold = fabs(tn - t);
        t = tn;
    }
    double lam = origin + t;
    if (lam > w1)
        lam = w1;
    if (lam < w2)
        lam = w2;
    return lam;
}

double ns_jac_dmr_max_bisect(const double *w, size_t n)
{
    double w1, w2;
    size_t cnt = ns_top2(w, n, &w1, &w2);
    if (cnt < 2)
        return 0.0;
    if (w2 == w1)
        return w1;
    double lo = w2, hi = w1, gp;
    for (int it = 0; it < 2000 && hi - lo > 0.0; it++) {
        double m = lo + 0.5 * (hi - lo);
        if (m <= lo || m >= hi)
            break;
        double g = ns_secular(w, n, 0.0, m, &gp);
        if (g > 0.0)
            hi = m;
        else
            lo = m;
    }
    return lo + 0.5 * (hi - lo);
}

const double *ns_jac_structure(const ns_normalizer *f, const double *alpha, size_t L,
                                      double T, double *work, double *c)
{
    switch (f->kind) {
    case NS_NORM_SOFTMAX:
    case NS_NORM_SSMAX:
        *c = ns_normalizer_inv_temp(f, L, T);
        return alpha;
    case NS_NORM_SPARSEMAX:
        for (size_t i = 0; i < L; i++)
            work[i] = alpha[i] > 0.0 ? 1.0 : 0.0;
        break;
    case NS_NORM_ENTMAX15:
        for (size_t i = 0; i < L; i++)
            work[i] = alpha[i] > 0.0 ? sqrt(alpha[i]) : 0.0;
        break;
    case NS_NORM_ENTMAX: /* w = alpha^(2 - a) on the support (entmax15's sqrt at a = 1.5) */
        for (size_t i = 0; i < L; i++)
            work[i] = !(alpha[i] > 0.0) ? 0.0
                      : f->alpha == 1.5 ? sqrt(alpha[i])
                                        : pow(alpha[i], 2.0 - f->alpha);
        break;
    default: /* off the simplex: not this form (ns_norm_jac) */
        for (size_t i = 0; i < L; i++)
            work[i] = NAN;
        break;
    }
    *c = 1.0 / T;
    return work;
}

void ns_jac_vjp(const ns_normalizer *f, const double *alpha, const double *g, size_t L, double T,
                double *out, double *work)
{
    double c;
    const double *w = ns_jac_structure(f, alpha, L, T, work, &c);
    double sw = 0.0, swg = 0.0;
    for (size_t i = 0; i < L; i++) {
        sw += w[i];
        swg += w[i] * g[i];
    }
    double mean = sw > 0.0 ? swg / sw : 0.0;
    for (size_t i = 0; i < L; i++)
        out[i] = w[i] > 0.0 ? c * w[i] * (g[i] - mean) : 0.0;
}

double ns_jac_exact_norm(const ns_normalizer *f, const double *alpha, size_t L, double T,
                         double *work)
{
    switch (f->kind) {
    case NS_NORM_SOFTMAX:
    case NS_NORM_SSMAX:
        return ns_jac_dmr_max(alpha, L) * fabs(ns_normalizer_inv_temp(f, L, T));
    case NS_NORM_SPARSEMAX: {
        size_t support = 0;
        for (size_t i = 0; i < L; i++)
            support += alpha[i] > 0.0;
        return support >= 2 ? 1.0 / T : 0.0;
    }
    case NS_NORM_ENTMAX15:
    case NS_NORM_ENTMAX: {
        double c;
        return ns_jac_dmr_max(ns_jac_structure(f, alpha, L, T, work, &c), L) * c;
    }
    default:
        return NAN;
    }
}

double ns_jac_lemma2(const double *z, size_t L, double c, double f2sum)
{
    if (L == 0)
        return NAN;
    double ac = fabs(c);
    if (ac == 0.0)
        return 0.0;
    double zmax = z[0], zmin = z[0];
    for (size_t i = 1; i < L; i++) {
        if (z[i] > zmax)
            zmax = z[i];
        if (z[i] < zmin)
            zmin = z[i];
    }
    /* F_j = exp(c z_j - max_k c z_k) in (0, 1]; min F = exp(-|c| (zmax - zmin)) = 1 / E. */
    double normF = sqrt(f2sum);
    double E = exp(ac * (zmax - zmin));
    double Ld = (double)L;
    double t1 = ac * normF * E / Ld;
    double t2 = ac * normF * normF * (E / Ld) * (E / Ld);
    return t1 + t2;
}

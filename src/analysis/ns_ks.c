/* ns_ks: two-sample Kolmogorov-Smirnov statistic and p-value (exact and asymptotic), n_crit. */
#include "analysis/ns_ks.h"
#include "analysis/ns_ks_internal.h"

#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

struct ns_ks_ws {
    double *data;     /* sorted, NaN-free copies of both samples */
    size_t data_cap;
    double *scratch;  /* one lattice column or the Durbin matrices */
    size_t scratch_cap;
};

int ns_ks_ws_new(ns_ks_ws **out, ns_err *err)
{
    *out = calloc(1, sizeof **out);
    if (!*out)
        return ns_fail(err, NS_ERR_NOMEM, "ks workspace: out of memory");
    return NS_OK;
}

void ns_ks_ws_free(ns_ks_ws *ws)
{
    if (!ws)
        return;
    free(ws->data);
    free(ws->scratch);
    free(ws);
}

static int grow(double **buf, size_t *cap, size_t need, ns_err *err)
{
    if (need <= *cap)
        return NS_OK;
    if (need > SIZE_MAX / sizeof(double))
        return ns_fail(err, NS_ERR_NOMEM, "ks workspace: %zu doubles is too large", need);
    double *p = realloc(*buf, need * sizeof(double));
    if (!p)
        return ns_fail(err, NS_ERR_NOMEM, "ks workspace: cannot allocate %zu doubles", need);
    *buf = p;
    *cap = need;
    return NS_OK;
}

static int cmp_double(const void *x, const void *y)
{
    double a = *(const double *)x, b = *(const double *)y;
    return (a > b) - (a < b);
}

/* ------------------------------------------------------------------------------------------ */
/* Statistic                                                                                    */

double ns_ks_statistic_sorted(const double *a, size_t na, const double *b, size_t nb)
{
    if (na == 0 || nb == 0)
        return 0.0;
    size_t i = 0, j = 0;
    double D = 0.0, fa = (double)na, fb = (double)nb;
    while (i < na || j < nb) {
        /* next pooled value, then the right-continuous ECDF counts at it */
        double v = (j >= nb || (i < na && a[i] <= b[j])) ? a[i] : b[j];
        while (i < na && a[i] <= v)
            i++;
        while (j < nb && b[j] <= v)
            j++;
        double diff = fabs((double)i / fa - (double)j / fb);
        if (diff > D)
            D = diff;
    }
    return D;
}

/* ------------------------------------------------------------------------------------------ */
/* Exact permutation distribution of D_{n1,n2}                                                  */

static uint64_t gcd_u64(uint64_t x, uint64_t y)
{
    while (y) {
        uint64_t t = x % y;
        x = y;
        y = t;
    }
    return x;
}

/* Equal sizes n: by reflection, P(D >= h/n) = 2 sum_{k>=1} (-1)^(k-1) C(2n, n-kh) / C(2n, n).
 * Evaluated innermost-first as 2 r1 (1 - (r2/r1) (1 - (r3/r2) (1 - ...))), where each ratio of
 * successive terms is a product of h factors below 1, so nothing overflows. */
static double exact_equal(uint64_t n, uint64_t h)
{
    uint64_t kmax = n / h;
    double acc = 0.0;
    for (uint64_t k = kmax; k >= 1; k--) {
        uint64_t a = (k - 1) * h; /* ratio C(2n, n-a-h) / C(2n, n-a) */
        double ratio = 1.0;
        for (uint64_t j = 0; j < h; j++)
            ratio *= (double)(n - a - j) / (double)(n + a + j + 1);
        acc = ratio * (1.0 - acc);
    }
    return 2.0 * acc;
}

/* Unequal sizes: lattice paths (0,0) -> (m,n), m >= n, one step per observation. A path stays
 * inside the band |ng*i - mg*j| < h iff its D is below h/lcm. U(i,j) is the fraction of the
 * C(i+j, j) paths to (i,j) that have touched the outside; U = 1 outside the band, U(0,0) = 0 and
 * U(i,j) = (i U(i-1,j) + j U(i,j-1)) / (i+j) inside (path counts weighted by their share).
 * p = U(m,n). Averages of numbers in [0,1]: no cancellation, no overflow. The band for column i
 * moves up monotonically, so one column of n+1 entries, initialised to 1, suffices. */
static double exact_unequal(uint64_t m, uint64_t n, uint64_t g, uint64_t h, double *col)
{
    if (m < n) {
        uint64_t t = m;
        m = n;
        n = t;
    }
    int64_t mg = (int64_t)(m / g), ng = (int64_t)(n / g), hh = (int64_t)h;
    for (uint64_t j = 0; j <= n; j++)
        col[j] = 1.0;
    for (int64_t i = 0; i <= (int64_t)m; i++) {
        int64_t lo_num = ng * i - hh; /* inside: mg*j > ng*i - h and mg*j < ng*i + h */
        int64_t jlo = lo_num < 0 ? 0 : lo_num / mg + 1;
        int64_t jhi = (ng * i + hh - 1) / mg;
        if (jhi > (int64_t)n)
            jhi = (int64_t)n;
        if (jlo > jhi)
            return 1.0; /* every path leaves the band */
        double prev = 1.0; /* U(i, jlo-1): outside the band */
        for (int64_t j = jlo; j <= jhi; j++) {
            double v;
            if (i == 0)
                v = j == 0 ? 0.0 : prev;
            else
                v = ((double)i * col[j] + (double)j * prev) / (double)(i + j);
            col[j] = v;
            prev = v;
        }
    }
    return col[n];
}

double ns_ks_exact_pvalue(uint64_t n1, uint64_t n2, uint64_t h, double *col)
{
    if (h == 0)
        return 1.0;
    double p;
    if (n1 == n2)
        p = exact_equal(n1, h);
    else
        p = exact_unequal(n1, n2, gcd_u64(n1, n2), h, col);
    if (!(p >= 0.0))
        p = 0.0;
    if (p > 1.0)
        p = 1.0;
    return p;
}

/* ------------------------------------------------------------------------------------------ */
/* One-sided Smirnov distribution                                                              */

double ns_smirnov_sf(uint64_t n, double x)
{
    if (isnan(x) || n == 0)
        return NAN;
    if (x <= 0.0)
        return 1.0;
    if (x >= 1.0)
        return 0.0;
    if (n == 1)
        return 1.0 - x;
    double fn = (double)n, nx = fn * x;
    if (nx <= 1.0) /* x <= 1/n: P(D+ < x) = x (1+x)^(n-1) */
        return 1.0 - x * pow(1.0 + x, fn - 1.0);
    if (-2.0 * fn * x * x < -708.3964185322641) /* the tail underflows */
        return 0.0;
    if (floor(nx) >= fn - 1.0) /* x >= 1 - 1/n */
        return pow(1.0 - x, fn);
    if (n > 1000000) { /* Miller's approximation, as scipy: p ~ exp(-(6nx+1)^2 / (18n)) */
        double t = 6.0 * nx + 1.0;
        return exp(-t * t / 18.0 / fn);
    }
    /* Birnbaum-Tingey: P(D+ >= x) = x sum_{j=0}^{floor(n(1-x))} C(n,j) (x+j/n)^(j-1) (1-x-j/n)^(n-j).
     * Every term is positive; each is evaluated in log space in long double. */
    long double lx = x, ln = (long double)n;
    long double lgn1 = lgammal(ln + 1.0L), logx = logl(lx);
    long double sum = 0.0L, prev = 0.0L;
    uint64_t jmax = n - (uint64_t)ceil(nx);
    for (uint64_t j = 0; j <= jmax; j++) {
        long double lj = (long double)j;
        long double base = lx + lj / ln;
        long double rest = ((ln - lj) - ln * lx) / ln; /* 1 - x - j/n */
        if (rest <= 0.0L)
            break;
        long double lt = lgn1 - lgammal(lj + 1.0L) - lgammal(ln - lj + 1.0L) + logx +
                         (lj - 1.0L) * logl(base) + (ln - lj) * logl(rest);
        long double t = expl(lt);
        sum += t;
        /* terms are unimodal in j: stop once past the peak and negligible */
        if (t < prev && t * (long double)(jmax - j + 1) < 1e-19L * sum)
            break;
        prev = t;
    }
    double p = (double)sum;
    return p > 1.0 ? 1.0 : p;
}

/* ------------------------------------------------------------------------------------------ */
/* Two-sided one-sample Kolmogorov distribution (scipy.stats.kstwo)                            */

/* Durbin's matrix method (Marsaglia, Tsang & Wang 2003): P(D_n < x) = n!/n^n (H^n)[k-1][k-1],
 * x = (k - h)/n, H of order 2k-1. Powers are kept as (matrix scaled to max entry < 1) x 2^e. */
static void mat_mul(double *c, const double *a, const double *b, size_t m)
{
    for (size_t i = 0; i < m; i++) {
        double *ci = c + i * m;
        for (size_t j = 0; j < m; j++)
            ci[j] = 0.0;
        for (size_t l = 0; l < m; l++) {
            double ail = a[i * m + l];
            if (ail == 0.0)
                continue;
            const double *bl = b + l * m;
            for (size_t j = 0; j < m; j++)
                ci[j] += ail * bl[j];
        }
    }
}

static long mat_normalize(double *a, size_t m)
{
    double mx = 0.0;
    for (size_t i = 0; i < m * m; i++)
        if (a[i] > mx)
            mx = a[i];
    if (mx == 0.0 || !isfinite(mx))
        return 0;
    int e;
    frexp(mx, &e);
    for (size_t i = 0; i < m * m; i++)
        a[i] = ldexp(a[i], -e);
    return e;
}

static int kolmogorov_cdf_durbin(double x, uint64_t n, ns_ks_ws *ws, double *cdf, ns_err *err)
{
    double nd = (double)n * x;
    uint64_t k = (uint64_t)ceil(nd);
    double h = (double)k - nd;
    size_t m = 2 * (size_t)k - 1;
    NS_TRY(grow(&ws->scratch, &ws->scratch_cap, 3 * m * m + m + 1, err));
    double *H = ws->scratch, *R = H + m * m, *T = R + m * m, *fact_inv = T + m * m;

    fact_inv[0] = 1.0; /* fact_inv[r] = 1/r! */
    for (size_t r = 1; r <= m; r++)
        fact_inv[r] = fact_inv[r - 1] / (double)r;
    for (size_t i = 0; i < m; i++)
        for (size_t j = 0; j < m; j++)
            H[i * m + j] = (i + 1 >= j) ? fact_inv[i + 1 - j] : 0.0;
    for (size_t i = 0; i < m; i++) {
        H[i * m + 0] -= pow(h, (double)(i + 1)) * fact_inv[i + 1];
        H[(m - 1) * m + i] -= pow(h, (double)(m - i)) * fact_inv[m - i];
    }
    double corner = 2.0 * h - 1.0;
    if (corner > 0.0)
        H[(m - 1) * m + 0] += pow(corner, (double)m) * fact_inv[m];

    for (size_t i = 0; i < m * m; i++)
        R[i] = 0.0;
    for (size_t i = 0; i < m; i++)
        R[i * m + i] = 1.0;
    long eR = 0, eH = mat_normalize(H, m);
    for (uint64_t e = n; e > 0; e >>= 1) {
        if (e & 1) {
            mat_mul(T, R, H, m);
            memcpy(R, T, m * m * sizeof(double));
            eR += eH + mat_normalize(R, m);
        }
        if (e > 1) {
            mat_mul(T, H, H, m);
            memcpy(H, T, m * m * sizeof(double));
            eH = 2 * eH + mat_normalize(H, m);
        }
    }
    /* multiply by n!/n^n = prod_{i=1..n} i/n, keeping the exponent apart */
    double v = R[(k - 1) * m + (k - 1)];
    long ev = eR;
    for (uint64_t i = 1; i <= n && v != 0.0; i++) {
        v *= (double)i / (double)n;
        int e2;
        v = frexp(v, &e2);
        ev += e2;
    }
    if (ev > 2000)
        ev = 2000;
    if (ev < -2000)
        ev = -2000;
    *cdf = ldexp(v, (int)ev);
    return NS_OK;
}

/* Pelz-Good (1976) asymptotic series: P(D_n <= x) ~ K0 + K1/sqrt(n) + K2/n + K3/n^1.5 in the
 * small-z (theta-transformed) form, z = sqrt(n) x; used by scipy for large n, moderate x. */
static double kolmogorov_cdf_pelz_good(double x, uint64_t n)
{
    if (x <= 0.0)
        return 0.0;
    if (x >= 1.0)
        return 1.0;
    const double pi = M_PI, pi2 = pi * pi, pi4 = pi2 * pi2, pi6 = pi4 * pi2;
    const double sqrt2pi = sqrt(2.0 * pi);
    double fn = (double)n, z = sqrt(fn) * x;
    double z2 = z * z, z4 = z2 * z2, z6 = z4 * z2, z8 = z4 * z4;
    double qlog = -pi2 / 8.0 / z2;
    if (qlog < -708.0)
        return 0.0;
    uint64_t kmax = (uint64_t)ceil(16.0 * z / pi);
    double s0 = 0, s1 = 0, s2 = 0, s3 = 0, e2 = 0, e3 = 0;
    for (uint64_t k = kmax; k >= 1; k--) {
        double mo = 2.0 * (double)k - 1.0; /* odd m */
        double m2 = mo * mo, m4 = m2 * m2, m6 = m4 * m2;
        double w = exp(qlog * m2);
        s0 += w;
        s1 += (pi2 * m2 / 4.0 - z2) * w;
        s2 += (6.0 * z6 + 2.0 * z4 + (2.0 * z4 - 5.0 * z2) * pi2 / 4.0 * m2 +
               pi4 * (1.0 - 2.0 * z2) / 16.0 * m4) *
              w;
        s3 += (-30.0 * z6 - 90.0 * z8 + pi2 * (135.0 * z4 - 96.0 * z6) / 4.0 * m2 +
               pi4 * (212.0 * z4 - 60.0 * z2) / 16.0 * m4 + pi6 * (5.0 - 30.0 * z2) / 64.0 * m6) *
              w;
        double kk = (double)k, k2 = kk * kk;
        double u = exp(-pi2 * k2 / 2.0 / z2);
        e2 += k2 * u;
        e3 += (3.0 * z2 - pi2 * k2) * k2 * u;
    }
    double K0 = sqrt2pi * s0 / z;
    double K1 = sqrt2pi * s1 / (6.0 * z4);
    double K2 = sqrt2pi * s2 / (72.0 * z6 * z) - pi2 * sqrt2pi / (36.0 * z2 * z) * e2;
    double K3 = sqrt2pi * s3 / (6480.0 * z8 * z2) + pi2 * sqrt2pi / (216.0 * z6) * e3;
    return K0 + K1 / sqrt(fn) + K2 / fn + K3 / pow(fn, 1.5);
}

static double clip01(double p)
{
    if (!(p >= 0.0))
        return isnan(p) ? p : 0.0;
    return p > 1.0 ? 1.0 : p;
}

static int kstwo_sf_impl(double x, uint64_t n, ns_ks_ws *ws, double *sf, ns_err *err)
{
    if (isnan(x) || n == 0) {
        *sf = NAN;
        return NS_OK;
    }
    if (x >= 1.0) {
        *sf = 0.0;
        return NS_OK;
    }
    if (x <= 0.0) {
        *sf = 1.0;
        return NS_OK;
    }
    double fn = (double)n, t = fn * x;
    if (t <= 1.0) { /* Ruben-Gambino: P(D_n <= x) = n!/n^n (2t-1)^n for 1/(2n) <= x <= 1/n */
        if (t <= 0.5) {
            *sf = 1.0;
            return NS_OK;
        }
        double cdf;
        if (n <= 140) {
            cdf = 1.0;
            for (uint64_t i = 1; i <= n; i++)
                cdf *= (double)i * (1.0 / fn) * (2.0 * t - 1.0);
        } else {
            cdf = exp(lgamma(fn + 1.0) - fn * log(fn) + fn * log(2.0 * t - 1.0));
        }
        *sf = clip01(1.0 - cdf);
        return NS_OK;
    }
    if (t >= fn - 1.0) { /* Ruben-Gambino upper end */
        *sf = clip01(2.0 * pow(1.0 - x, fn));
        return NS_OK;
    }
    if (x >= 0.5) { /* D+ and D- cannot both exceed 1/2 */
        *sf = clip01(2.0 * ns_smirnov_sf(n, x));
        return NS_OK;
    }
    double nx2 = t * x, cdf;
    if (n <= 140) {
        if (nx2 <= 4.0) { /* scipy: Durbin below 0.754693, Pomeranz up to 4; both exact */
            NS_TRY(kolmogorov_cdf_durbin(x, n, ws, &cdf, err));
            *sf = clip01(1.0 - cdf);
        } else {
            *sf = clip01(2.0 * ns_smirnov_sf(n, x));
        }
        return NS_OK;
    }
    if (nx2 >= 370.0) {
        *sf = 0.0;
        return NS_OK;
    }
    if (nx2 >= 2.2) {
        *sf = clip01(2.0 * ns_smirnov_sf(n, x));
        return NS_OK;
    }
    if (n <= 100000 && fn * pow(x, 1.5) <= 1.4)
        NS_TRY(kolmogorov_cdf_durbin(x, n, ws, &cdf, err));
    else
        cdf = kolmogorov_cdf_pelz_good(x, n);
    *sf = clip01(1.0 - clip01(cdf));
    return NS_OK;
}

int ns_kstwo_sf(double x, uint64_t n, ns_ks_ws *ws, double *sf, ns_err *err)
{
    if (ws)
        return kstwo_sf_impl(x, n, ws, sf, err);
    ns_ks_ws *tmp = NULL;
    NS_TRY(ns_ks_ws_new(&tmp, err));
    int rc = kstwo_sf_impl(x, n, tmp, sf, err);
    ns_ks_ws_free(tmp);
    return rc;
}

/* ------------------------------------------------------------------------------------------ */
/* The test                                                                                     */

static size_t copy_non_nan(double *dst, const double *src, size_t n)
{
    size_t k = 0;
    for (size_t i = 0; i < n; i++)
        if (!isnan(src[i]))
            dst[k++] = src[i];
    return k;
}

int ns_ks_2samp_ws(const double *a, size_t na, const double *b, size_t nb, ns_ks_ws *ws, double *D,
                   double *p, ns_ks_method *method, ns_err *err)
{
    *D = NAN;
    *p = NAN;
    if (method)
        *method = NS_KS_NONE;
    if ((!a && na) || (!b && nb))
        return ns_fail(err, NS_ERR_INVALID, "ks_2samp: NULL sample with %zu/%zu values", na, nb);
    if (na > SIZE_MAX - nb)
        return ns_fail(err, NS_ERR_INVALID, "ks_2samp: sample sizes overflow");
    NS_TRY(grow(&ws->data, &ws->data_cap, na + nb, err));
    double *sa = ws->data;
    size_t n1 = copy_non_nan(sa, a, na);
    double *sb = sa + n1;
    size_t n2 = copy_non_nan(sb, b, nb);
    if (n1 == 0 || n2 == 0)
        return NS_OK;
    qsort(sa, n1, sizeof(double), cmp_double);
    qsort(sb, n2, sizeof(double), cmp_double);
    double d = ns_ks_statistic_sorted(sa, n1, sb, n2);

    if ((n1 > n2 ? n1 : n2) <= NS_KS_MAX_EXACT_N) {
        uint64_t g = gcd_u64(n1, n2);
        uint64_t lcm = (uint64_t)(n1 / g) * n2;
        double hd = nearbyint(d * (double)lcm);
        uint64_t h = (uint64_t)hd;
        NS_TRY(grow(&ws->scratch, &ws->scratch_cap, (n1 < n2 ? n1 : n2) + 1, err));
        *D = (double)h / (double)lcm;
        *p = ns_ks_exact_pvalue(n1, n2, h, ws->scratch);
        if (method)
            *method = NS_KS_EXACT;
        return NS_OK;
    }
    double fm = (double)(n1 > n2 ? n1 : n2), fk = (double)(n1 > n2 ? n2 : n1);
    double en = fm * fk / (fm + fk);
    uint64_t ne = (uint64_t)nearbyint(en);
    if (ne == 0)
        ne = 1;
    double sf;
    NS_TRY(kstwo_sf_impl(d, ne, ws, &sf, err));
    *D = d;
    *p = clip01(sf);
    if (method)
        *method = NS_KS_ASYMP;
    return NS_OK;
}

int ns_ks_critical_h(uint64_t na, uint64_t nb, double alpha, ns_ks_ws *ws, uint64_t *h,
                     ns_err *err)
{
    if (na == 0 || nb == 0)
        return ns_fail(err, NS_ERR_INVALID, "ks critical h: empty sample (%llu, %llu)",
                       (unsigned long long)na, (unsigned long long)nb);
    uint64_t g = gcd_u64(na, nb), lcm = na / g * nb;
    int exact = (na > nb ? na : nb) <= NS_KS_MAX_EXACT_N;
    if (exact)
        NS_TRY(grow(&ws->scratch, &ws->scratch_cap, (na < nb ? na : nb) + 1, err));
    double fa = (double)na, fb = (double)nb;
    uint64_t ne = (uint64_t)nearbyint(fa * fb / (fa + fb));
    uint64_t lo = 1, hi = lcm + 1;
    while (lo < hi) {
        uint64_t mid = lo + (hi - lo) / 2;
        double p = 0.0;
        if (mid <= lcm && exact)
            p = ns_ks_exact_pvalue(na, nb, mid, ws->scratch);
        else if (mid <= lcm)
            NS_TRY(kstwo_sf_impl((double)mid / (double)lcm, ne ? ne : 1, ws, &p, err));
        if (mid <= lcm && p > alpha)
            lo = mid + 1;
        else
            hi = mid;
    }
    *h = lo;
    return NS_OK;
}

int64_t ns_n_crit(const double *p, const size_t *N, size_t nN, double alpha)
{
    int64_t best = NS_NCRIT_NONE;
    int computable = 0;
    for (size_t i = 0; i < nN; i++) {
        if (isnan(p[i]))
            continue;
        computable = 1;
        if (p[i] > alpha && (best == NS_NCRIT_NONE || (int64_t)N[i] < best))
            best = (int64_t)N[i];
    }
    return computable && !isnan(alpha) ? best : NS_NCRIT_NOT_COMPUTABLE;
}

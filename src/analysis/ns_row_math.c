/* ns_row_math: the arithmetic of one row that the dispatcher's kernels share (see
 * ns_row_math_internal.h): signed log numbers, the scaled squared distance, Theorem 2's bounds. */
#include "analysis/ns_row_math_internal.h"

#include <math.h>

/* ---- signed log numbers ------------------------------------------------------------------- */

ns_slog ns_slog_of(double la, double q)
{
    ns_slog r = {0, 0.0};
    if (q == 0.0 || la == -INFINITY)
        return r;
    r.sign = q > 0.0 ? 1 : -1;
    r.lmag = la + log(fabs(q));
    return r;
}

int ns_slog_le(ns_slog a, ns_slog b)
{
    if (a.sign != b.sign)
        return a.sign < b.sign;
    if (a.sign == 0)
        return 1;
    return a.sign > 0 ? a.lmag <= b.lmag : a.lmag >= b.lmag;
}

/* ---- shared kernels ------------------------------------------------------------------------ */

double ns_sqdist_scaled(double c, const double *a, const double *b, size_t d)
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

void ns_theorem2_bounds(const double *alpha, const size_t *sel, size_t N, double r, double M,
                        double delta, double *work, double *lower, double *upper)
{
    /* The sums over I without sel[q] are a prefix over sel[0..q) plus a suffix over
     * sel(q..N): no cancellation of total - alpha_i. pa[q], pq[q]: prefix sums of alpha and
     * alpha^2; the suffix sums are accumulated walking q down. */
    double *pa = work, *pq = work + (N + 1);
    pa[0] = pq[0] = 0.0;
    for (size_t q = 0; q < N; q++) {
        double a = alpha[sel[q]];
        pa[q + 1] = pa[q] + a;
        pq[q + 1] = pq[q] + a * a;
    }
    double M2 = M * M, cross = M2 - 0.5 * delta * delta;
    double sa = 0.0, sq = 0.0, xi_sum = 0.0, up = 0.0;
    for (size_t q = N; q-- > 0;) {
        double Ai = pa[q] + sa, Qi = pq[q] + sq; /* sum over I \ {sel[q]} of alpha, alpha^2 */
        double xi2 = M2 * Qi + cross * (Ai * Ai - Qi);
        double xi = xi2 > 0.0 ? sqrt(xi2) : 0.0;
        xi_sum += xi;
        double dr = r - xi;
        up += exp(-(dr * dr) / (16.0 * M2));
        double a = alpha[sel[q]];
        sa += a;
        sq += a * a;
    }
    *lower = r > 0.0 ? 1.0 - xi_sum / (r * (double)N) : NAN;
    *upper = up / (double)N;
}

/* ns_row_fd: the fast kernel's finite-difference sensitivity jac_fd for the softmax family
 * (METRICS.md section 7): for each direction u and step eps, alpha' = softmax(c (z + eps u)) and
 * || alpha' - alpha ||_2 / eps, with an exponential of its own that the compiler vectorizes
 * (the reference, ns_row.c, calls libm's exp key by key). Same arithmetic on every x86-64: no
 * FMA, elementwise loops, reductions in a fixed lane order. */
#include <math.h>
#include <stdint.h>
#include <string.h>

#include "analysis/ns_row_kernels_internal.h"
#include "common/ns_simd.h"

static inline uint64_t bits_of(double x)
{
    uint64_t b;
    memcpy(&b, &x, sizeof b);
    return b;
}

static inline double double_of(uint64_t b)
{
    double x;
    memcpy(&x, &b, sizeof x);
    return x;
}

/* exp(x) for x <= 0 to about 1 ulp; 0 below -708 (where exp is below 3.3e-308 and only
 * subnormal or zero). x = k ln 2 + r with |r| <= ln(2)/2 (Cody-Waite: k ln2_hi is exact), exp(r)
 * by its Taylor polynomial to degree 13 (truncation below 4e-18), times 2^k built in the
 * exponent bits. Branch-free, so loops over it vectorize. */
static inline double ns_exp_nonpos(double x)
{
    const double log2e = 1.4426950408889634, shift = 0x1.8p52;
    const double ln2_hi = 6.93147180369123816490e-01, ln2_lo = 1.90821492927058770002e-10;
    double xc = x < -708.0 ? -708.0 : x;
    double kd = xc * log2e + shift;
    int64_t k = (int64_t)(bits_of(kd) - bits_of(shift));
    kd -= shift;
    double r = (xc - kd * ln2_hi) - kd * ln2_lo;
    double p = 1.0 / 6227020800.0;           /* 1/13! */
    p = p * r + 1.0 / 479001600.0;           /* 1/12! */
    p = p * r + 1.0 / 39916800.0;
    p = p * r + 1.0 / 3628800.0;
    p = p * r + 1.0 / 362880.0;
    p = p * r + 1.0 / 40320.0;
    p = p * r + 1.0 / 5040.0;
    p = p * r + 1.0 / 720.0;
    p = p * r + 1.0 / 120.0;
    p = p * r + 1.0 / 24.0;
    p = p * r + 1.0 / 6.0;
    p = p * r + 0.5;
    p = p * r + 1.0;
    p = p * r + 1.0;
    double scale = double_of(bits_of(1.0) + ((uint64_t)k << 52));
    return x < -708.0 ? 0.0 : p * scale;
}

/* ns_exp_nonpos on four lanes, operation for operation. */
NS_INLINE v4d ns_exp4_nonpos(v4d x)
{
    const v4d lo = splat(-708.0), shift = splat(0x1.8p52);
    v4i under = x < lo;
    v4d xc = select4(under, lo, x);
    v4d kd = xc * splat(1.4426950408889634) + shift;
    v4u k = (v4u)kd - (v4u)shift; /* unsigned, as the scalar code: no signed overflow or shift */
    kd -= shift;
    v4d r = (xc - kd * splat(6.93147180369123816490e-01)) - kd * splat(1.90821492927058770002e-10);
    v4d p = splat(1.0 / 6227020800.0);
    p = p * r + splat(1.0 / 479001600.0);
    p = p * r + splat(1.0 / 39916800.0);
    p = p * r + splat(1.0 / 3628800.0);
    p = p * r + splat(1.0 / 362880.0);
    p = p * r + splat(1.0 / 40320.0);
    p = p * r + splat(1.0 / 5040.0);
    p = p * r + splat(1.0 / 720.0);
    p = p * r + splat(1.0 / 120.0);
    p = p * r + splat(1.0 / 24.0);
    p = p * r + splat(1.0 / 6.0);
    p = p * r + splat(0.5);
    p = p * r + splat(1.0);
    p = p * r + splat(1.0);
    v4d scale = (v4d)((v4u)splat(1.0) + (k << 52));
    return (v4d)((v4i)(p * scale) & ~under);
}

/* alpha'_i = exp(y_i - max y) unnormalised into w, y_i = c (z_i + eps u_i); returns the sum
 * (lane l sums keys i = l mod 4, then ((0 + 1) + 2) + 3, then the tail). */
NS_HOT static double shifted_exps(size_t L, const double *z, const double *u, double c, double eps,
                                  double *w)
{
    double mx = -INFINITY;
    size_t i = 0;
    v4d m4 = splat(-INFINITY);
    for (; i + 4 <= L; i += 4) { /* max is exact in any order */
        v4d y = splat(c) * (load4(z + i) + splat(eps) * load4(u + i));
        store4(w + i, y);
        m4 = select4(y > m4, y, m4);
    }
    for (int l = 0; l < 4; l++)
        mx = m4[l] > mx ? m4[l] : mx;
    for (; i < L; i++) {
        double y = c * (z[i] + eps * u[i]);
        w[i] = y;
        mx = y > mx ? y : mx;
    }
    v4d s4 = splat(0.0);
    i = 0;
    for (; i + 4 <= L; i += 4) {
        v4d e = ns_exp4_nonpos(load4(w + i) - splat(mx));
        store4(w + i, e);
        s4 += e;
    }
    double sum = lanes_sum(s4);
    for (; i < L; i++) {
        w[i] = ns_exp_nonpos(w[i] - mx);
        sum += w[i];
    }
    return sum;
}

/* sum_i (w_i / sum - alpha_i)^2 in the fixed lane order. */
NS_HOT static double sq_diff(size_t L, const double *w, double sum, const double *alpha)
{
    v4d s4 = splat(0.0);
    size_t i = 0;
    for (; i + 4 <= L; i += 4) {
        v4d dd = load4(w + i) / splat(sum) - load4(alpha + i);
        s4 += dd * dd;
    }
    double acc = lanes_sum(s4);
    for (; i < L; i++) {
        double dd = w[i] / sum - alpha[i];
        acc += dd * dd;
    }
    return acc;
}

void ns_jac_fd_softmax(const double *z, const double *alpha, size_t L, double c, const double *u,
                       size_t nu, const double *eps, size_t neps, double *w, double *out)
{
    for (size_t e = 0; e < neps; e++) {
        double best = 0.0;
        for (size_t k = 0; k < nu; k++) {
            double sum = shifted_exps(L, z, u + k * L, c, eps[e], w);
            double g = sqrt(sq_diff(L, w, sum, alpha)) / eps[e];
            if (g > best)
                best = g;
        }
        out[e] = nu ? best : NAN;
    }
}

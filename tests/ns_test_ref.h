/* ns_test_ref: plain reference formulas shared by the analysis tests (written straight from
 * METRICS.md, deliberately unlike the library's sort-based algorithms). */
#ifndef NS_TEST_REF_H
#define NS_TEST_REF_H

#include <math.h>
#include <stdlib.h>

/* sparsemax / 1.5-entmax by bisection on the threshold: alpha_i = (y_i - tau)_+ with y = z/T
 * (sparsemax) or alpha_i = (y_i - tau)_+^2 with y = z/(2T) (1.5-entmax), sum alpha = 1.
 * 200 halvings pin tau to the last bit. */
static inline void ns_test_ref_threshold(double *a, const double *z, size_t L, double T, int entmax)
{
    double *y = malloc(L * sizeof *y);
    if (!y)
        abort();
    double mx = -INFINITY;
    for (size_t i = 0; i < L; i++) {
        y[i] = entmax ? 0.5 * z[i] / T : z[i] / T;
        if (y[i] > mx)
            mx = y[i];
    }
    double lo = mx - 1.0, hi = mx; /* sum >= 1 at lo, 0 at hi */
    for (int it = 0; it < 200; it++) {
        double tau = 0.5 * (lo + hi), sum = 0.0;
        for (size_t i = 0; i < L; i++) {
            double u = y[i] - tau;
            if (u > 0.0)
                sum += entmax ? u * u : u;
        }
        if (sum > 1.0)
            lo = tau;
        else
            hi = tau;
    }
    double tau = 0.5 * (lo + hi);
    for (size_t i = 0; i < L; i++) {
        double u = y[i] - tau;
        a[i] = u > 0.0 ? (entmax ? u * u : u) : 0.0;
    }
    free(y);
}

#endif

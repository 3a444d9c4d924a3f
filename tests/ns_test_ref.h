/* ns_test_ref: reference formulas and fixture generators shared by the analysis and statistics
 * tests (written straight from METRICS.md and the fixture scripts, unlike the library code). */
#ifndef NS_TEST_REF_H
#define NS_TEST_REF_H

#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

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

/* The splitmix64 sample streams of tests/data/ks/gen_ks_fixtures.py, bit for bit: `kind` picks the
 * transform of the uniform draws (see the script), param and shift its parameters. Caller frees. */
static inline double *ns_test_gen_stream(uint64_t seed, size_t n, const char *kind, double param, double shift)
{
    double *v = malloc((n ? n : 1) * sizeof *v);
    if (!v)
        return NULL;
    uint64_t s = seed;
    for (size_t i = 0; i < n; i++) {
        s += 0x9E3779B97F4A7C15ull;
        uint64_t z = s;
        z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
        z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
        z ^= z >> 31;
        double u = (double)(z >> 11) * 0x1p-53;
        volatile double t; /* one rounding per operation, as in Python (no contraction) */
        if (strcmp(kind, "unif") == 0) {
            t = u;
        } else if (strcmp(kind, "sq") == 0) {
            t = u * u;
        } else {
            t = u * param;
            t = floor(t);
        }
        v[i] = t + shift;
    }
    return v;
}

#endif

/* ns_stats: count/mean/std/min/max/quantile summaries of one cell's sample. */
#include "analysis/ns_stats.h"

#include <math.h>
#include <stdlib.h>

static int cmp_double(const void *x, const void *y)
{
    double a = *(const double *)x, b = *(const double *)y;
    return (a > b) - (a < b);
}

/* Pairwise (cascade) sum: error grows with log(n), not n; deterministic for a given order. */
static double pairwise_sum(const double *x, size_t n)
{
    if (n <= 16) {
        double s = 0.0;
        for (size_t i = 0; i < n; i++)
            s += x[i];
        return s;
    }
    size_t h = n / 2;
    return pairwise_sum(x, h) + pairwise_sum(x + h, n - h);
}

static double pairwise_sqdev(const double *x, size_t n, double mean)
{
    if (n <= 16) {
        double s = 0.0;
        for (size_t i = 0; i < n; i++) {
            double d = x[i] - mean;
            s += d * d;
        }
        return s;
    }
    size_t h = n / 2;
    return pairwise_sqdev(x, h, mean) + pairwise_sqdev(x + h, n - h, mean);
}

/* Interpolate a + t (b - a) as numpy's _lerp does (from the nearer end), with the cases that
 * numpy turns into NaN made explicit: equal ends (also +inf, +inf) and an infinite end. */
static double lerp(double a, double b, double t)
{
    if (t == 0.0 || a == b)
        return a;
    if (isinf(a) || isinf(b)) {
        if (isinf(a) && isinf(b))
            return NAN; /* -inf .. +inf */
        return isinf(a) ? a : b;
    }
    double diff = b - a;
    return t < 0.5 ? a + diff * t : b - diff * (1.0 - t);
}

double ns_quantile_sorted(const double *sorted, size_t n, double q)
{
    if (n == 0 || !(q >= 0.0 && q <= 1.0))
        return NAN;
    double pos = q * (double)(n - 1);
    double fl = floor(pos);
    size_t lo = (size_t)fl;
    if (lo >= n - 1)
        return sorted[n - 1];
    return lerp(sorted[lo], sorted[lo + 1], pos - fl);
}

static void summary_nan(ns_summary *out)
{
    out->count = 0;
    out->mean = out->std = out->min = out->max = NAN;
    out->q05 = out->q50 = out->q95 = NAN;
}

void ns_summary_compute(ns_summary *out, const double *x, size_t n, double *scratch)
{
    size_t k = 0, npos = 0, nneg = 0;
    for (size_t i = 0; i < n; i++) {
        if (isnan(x[i]))
            continue;
        scratch[k++] = x[i];
        if (isinf(x[i])) {
            if (x[i] > 0)
                npos++;
            else
                nneg++;
        }
    }
    summary_nan(out);
    if (k == 0)
        return;
    out->count = k;
    if (npos || nneg) {
        out->mean = (npos && nneg) ? NAN : (npos ? INFINITY : -INFINITY);
        out->std = (npos == k || nneg == k) ? NAN : INFINITY;
    } else {
        /* moments in the given (shard, row) order, before sorting */
        double mean = pairwise_sum(scratch, k) / (double)k;
        out->mean = mean;
        out->std = sqrt(pairwise_sqdev(scratch, k, mean) / (double)k);
    }
    qsort(scratch, k, sizeof(double), cmp_double);
    out->min = scratch[0];
    out->max = scratch[k - 1];
    out->q05 = ns_quantile_sorted(scratch, k, NS_SUMMARY_Q05);
    out->q50 = ns_quantile_sorted(scratch, k, NS_SUMMARY_Q50);
    out->q95 = ns_quantile_sorted(scratch, k, NS_SUMMARY_Q95);
}

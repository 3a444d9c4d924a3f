/* ns_reduce: count/mean/std/min/max/quantile reductions and a mergeable moment accumulator. */
#include "analysis/ns_reduce.h"

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

int ns_summary_of(ns_summary *out, const double *x, size_t n, ns_err *err)
{
    summary_nan(out);
    if (n == 0)
        return NS_OK;
    double *scratch = malloc(n * sizeof(double));
    if (!scratch)
        return ns_fail(err, NS_ERR_NOMEM, "summary of %zu values: out of memory", n);
    ns_summary_compute(out, x, n, scratch);
    free(scratch);
    return NS_OK;
}

void ns_accum_init(ns_accum *acc)
{
    acc->n_finite = 0;
    acc->mean = 0.0;
    acc->m2 = 0.0;
    acc->min = NAN;
    acc->max = NAN;
    acc->n_posinf = 0;
    acc->n_neginf = 0;
}

static void minmax_update(ns_accum *acc, double lo, double hi)
{
    if (isnan(acc->min) || lo < acc->min)
        acc->min = lo;
    if (isnan(acc->max) || hi > acc->max)
        acc->max = hi;
}

void ns_accum_add(ns_accum *acc, double x)
{
    if (isnan(x))
        return;
    minmax_update(acc, x, x);
    if (isinf(x)) {
        if (x > 0)
            acc->n_posinf++;
        else
            acc->n_neginf++;
        return;
    }
    acc->n_finite++;
    double d = x - acc->mean;
    acc->mean += d / (double)acc->n_finite;
    acc->m2 += d * (x - acc->mean);
}

void ns_accum_add_array(ns_accum *acc, const double *x, size_t n)
{
    for (size_t i = 0; i < n; i++)
        ns_accum_add(acc, x[i]);
}

void ns_accum_merge(ns_accum *acc, const ns_accum *other)
{
    if (!isnan(other->min))
        minmax_update(acc, other->min, other->max);
    acc->n_posinf += other->n_posinf;
    acc->n_neginf += other->n_neginf;
    if (other->n_finite == 0)
        return;
    if (acc->n_finite == 0) {
        acc->n_finite = other->n_finite;
        acc->mean = other->mean;
        acc->m2 = other->m2;
        return;
    }
    double na = (double)acc->n_finite, nb = (double)other->n_finite, n = na + nb;
    double delta = other->mean - acc->mean;
    acc->mean += delta * (nb / n);
    acc->m2 += other->m2 + delta * delta * (na * nb / n);
    acc->n_finite += other->n_finite;
}

void ns_accum_result(const ns_accum *acc, uint64_t *count, double *mean, double *std, double *min,
                     double *max)
{
    uint64_t k = acc->n_finite + acc->n_posinf + acc->n_neginf;
    double mu = NAN, sd = NAN;
    if (k > 0) {
        if (acc->n_posinf || acc->n_neginf) {
            mu = (acc->n_posinf && acc->n_neginf) ? NAN : (acc->n_posinf ? INFINITY : -INFINITY);
            sd = (acc->n_posinf == k || acc->n_neginf == k) ? NAN : INFINITY;
        } else {
            mu = acc->mean;
            sd = sqrt(acc->m2 > 0.0 ? acc->m2 / (double)k : 0.0);
        }
    }
    if (count)
        *count = k;
    if (mean)
        *mean = mu;
    if (std)
        *std = sd;
    if (min)
        *min = k ? acc->min : NAN;
    if (max)
        *max = k ? acc->max : NAN;
}

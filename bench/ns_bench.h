/* ns_bench: what every benchmark program times with: a monotonic clock in seconds and the
 * median of repeated measurements. */
#ifndef NS_BENCH_H
#define NS_BENCH_H

#include <stdlib.h>
#include <time.h>

static inline double ns_bench_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static inline int ns_bench_cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* The median of v[0..n) (n >= 1; v is sorted in place). */
static inline double ns_bench_median(double *v, size_t n)
{
    qsort(v, n, sizeof *v, ns_bench_cmp_double);
    return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

#endif

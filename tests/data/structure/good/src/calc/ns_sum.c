/* ns_sum: a sum; its helper is static, and a static twin elsewhere makes no edge. */
#include "calc/ns_calc.h"
#include "calc/ns_sum_internal.h"

static double twice(double v)
{
    return 2.0 * v;
}

double ns_sum(const double *x, size_t n)
{
    double s = 0.0;
    for (size_t i = 0; i < n; i++)
        s += x[i];
    return ns_sum_half(twice(s));
}

double ns_sum_half(double v)
{
    return v / 2.0;
}

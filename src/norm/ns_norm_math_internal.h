/* ns_norm_math_internal: the stable scalar functions issue 36's normalizers share (log-sigmoid,
 * sigmoid, log |e^y - 1|). Header only. */
#ifndef NS_NORM_MATH_INTERNAL_H
#define NS_NORM_MATH_INTERNAL_H

#include <math.h>

/* log sigmoid(x) = -log(1 + e^-x), without overflow and without losing the tail. */
static inline double ns_log_sigmoid(double x)
{
    return x < 0.0 ? x - log1p(exp(x)) : -log1p(exp(-x));
}

static inline double ns_sigmoid(double x)
{
    if (x >= 0.0)
        return 1.0 / (1.0 + exp(-x));
    double e = exp(x);
    return e / (1.0 + e);
}

/* log |e^y - 1|: -inf at y = 0, expm1 near 0, the factored forms away from it. */
static inline double ns_log_abs_expm1(double y)
{
    if (y == 0.0)
        return -INFINITY;
    if (y > 0.0)
        return y < 1.0 ? log(expm1(y)) : y + log1p(-exp(-y));
    return y > -1.0 ? log(-expm1(y)) : log1p(-exp(y));
}

#endif

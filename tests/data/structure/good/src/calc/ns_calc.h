/* ns_calc: the facade of calc (no ns_calc.c): it declares what ns_bound.c and ns_sum.c define,
 * and both include it -- a facade makes no circle. */
#ifndef NS_CALC_H
#define NS_CALC_H
#include <stddef.h>
double ns_bound(double t);
double ns_sum(const double *x, size_t n);
#endif

/* ns_sum_internal: what calc's own files share (unit ns_sum). */
#ifndef NS_SUM_INTERNAL_H
#define NS_SUM_INTERNAL_H
double ns_sum_half(double v);
static inline double ns_sum_quarter(double v)
{
    return ns_sum_half(v) / 2.0;
}
#endif

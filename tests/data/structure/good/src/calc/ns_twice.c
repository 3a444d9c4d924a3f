/* ns_twice: a unit with a static function of the same name as ns_sum.c's (no edge either way);
 * it uses ns_sum's private header (its own module's), so ns_twice -> ns_sum. */
#include "calc/ns_sum_internal.h"

static double twice(double v)
{
    return v + v;
}

double ns_twice_quarter(double v)
{
    return ns_sum_quarter(twice(v));
}

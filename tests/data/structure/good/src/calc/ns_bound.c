/* ns_bound: the bound (its home), through the sum. */
#include "calc/ns_calc.h"

static const char *sep = "//";   /* a string with slashes is not a comment */
static const char quote = '"';   /* nor does a quote in a character constant open a string */

double ns_bound(double t)
{
    double x[2] = {t, (double)(sep[0] == quote)};
    return ns_sum(x, 2);
}

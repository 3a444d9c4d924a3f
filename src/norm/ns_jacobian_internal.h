/* ns_jacobian_internal: the slow reference kept beside a fast Jacobian routine, for the tests.
 * Not for use by the program. */
#ifndef NS_JACOBIAN_INTERNAL_H
#define NS_JACOBIAN_INTERNAL_H

#include <stddef.h>

/* Reference of ns_jac_dmr_max: the same eigenvalue by bisection on the secular equation. */
double ns_jac_dmr_max_bisect(const double *w, size_t n);

#endif

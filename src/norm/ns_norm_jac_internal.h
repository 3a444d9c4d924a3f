/* ns_norm_jac_internal: what the tests use of the Jacobians off the simplex beyond the row
 * analysis -- the work ns_norm_jac_norm needs for the dense ones, and the vector-Jacobian product
 * (the trainer's is ns_norm_jac_vjp_weights). Not for use outside src/norm (and the tests). */
#ifndef NS_NORM_JAC_INTERNAL_H
#define NS_NORM_JAC_INTERNAL_H

#include <stddef.h>

#include "norm/ns_norm_jac.h"

/* Doubles of work ns_norm_jac_norm needs for L keys (L^2 + 3 L). */
size_t ns_norm_jac_work(size_t L);

/* out = (da/dz)^T g, the gradient of sum_j g_j a_j with respect to z (work: ns_norm_row_work(L)). */
void ns_norm_jac_vjp(const ns_normalizer *f, const double *z, size_t L, double T,
                     const ns_norm_row *r, const double *g, double *out, double *work);

#endif

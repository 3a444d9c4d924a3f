/* ns_analysis_internal: what the analysis module's tests need beyond its public interface -- the
 * slow reference kernels kept beside the fast ones, and parts of the KS test checked against
 * scipy on their own. Not for use by the program. */
#ifndef NS_ANALYSIS_INTERNAL_H
#define NS_ANALYSIS_INTERNAL_H

#include <stddef.h>
#include <stdint.h>

#include "analysis/ns_ks.h"
#include "common/ns_error.h"

/* Reference of ns_jac_dmr_max: the same eigenvalue by bisection on the secular equation. */
double ns_jac_dmr_max_bisect(const double *w, size_t n);

/* Survival function of the two-sided one-sample Kolmogorov statistic D_n (scipy.stats.kstwo.sf),
 * with scipy's choice of method per region (Ruben-Gambino ends, 2 x Smirnov tail, Durbin
 * matrix, Pelz-Good): the asymptotic path of ns_ks_2samp_ws. NS_ERR_NOMEM possible (Durbin
 * matrices); ws may be NULL (a temporary one is used). n >= 1. */
int ns_kstwo_sf(double x, uint64_t n, ns_ks_ws *ws, double *sf, ns_err *err);

#endif

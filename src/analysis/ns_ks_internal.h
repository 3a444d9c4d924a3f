/* ns_ks_internal: a part of the KS test that tests check against scipy on its own. Not for use by
 * the program. */
#ifndef NS_KS_INTERNAL_H
#define NS_KS_INTERNAL_H

#include <stdint.h>

#include "analysis/ns_ks.h"
#include "common/ns_error.h"

/* Survival function of the two-sided one-sample Kolmogorov statistic D_n (scipy.stats.kstwo.sf),
 * with scipy's choice of method per region (Ruben-Gambino ends, 2 x Smirnov tail, Durbin
 * matrix, Pelz-Good): the asymptotic path of ns_ks_2samp_ws. NS_ERR_NOMEM possible (Durbin
 * matrices); ws may be NULL (a temporary one is used). n >= 1. */
int ns_kstwo_sf(double x, uint64_t n, ns_ks_ws *ws, double *sf, ns_err *err);

#endif

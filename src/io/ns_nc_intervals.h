/* ns_nc_intervals: the NetCDF description of the bootstrap intervals (docs/STATISTICS.md, "The
 * intervals in the NetCDF file"): the head_set dimension and its names, and for each statistic
 * NAME of analysis/ns_intervals.h the variables NAME, NAME_ci_low and NAME_ci_high over
 * (normalizer, its dims, head_set) with their attributes, and the global attributes
 * bootstrap_rule, bootstrap_resamples, bootstrap_statistics and bootstrap_interval_T (the claims'
 * temperatures: ns_intervals_claim_T). The sweep file's layout
 * (ns_nc_results) appends them, so they are written and compared by one description. */
#ifndef NS_NC_INTERVALS_H
#define NS_NC_INTERVALS_H

#include <stddef.h>

#include "analysis/ns_intervals.h"
#include "io/ns_nc_write.h"

#define NS_NC_INTERVALS_VARS (3 * NS_CI_COUNT + 1)
#define NS_NC_INTERVALS_ATTRS 4

typedef struct ns_nc_intervals {
    ns_nc_dim dims[2];                      /* head_set, head_set_strlen */
    ns_nc_var vars[NS_NC_INTERVALS_VARS];   /* head_set_name, then NAME, _ci_low, _ci_high */
    size_t nvars;
    ns_nc_attr attrs[NS_NC_INTERVALS_ATTRS];
    char text[NS_NC_INTERVALS_VARS][4][192]; /* the variables' names and attribute texts */
    char rule[640], stats[1024], temps[96];
} ns_nc_intervals;

/* Describe iv (borrowed: the variables point into it) in *out. */
void ns_nc_intervals_describe(const ns_intervals *iv, ns_nc_intervals *out);

#endif

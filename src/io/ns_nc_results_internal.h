/* ns_nc_results_internal: the sweep file's description (ns_nc_results.c builds it), shared with
 * the comparison of a file against it (ns_nc_results_compare.c). Not for use outside src/io. */
#ifndef NS_NC_RESULTS_INTERNAL_H
#define NS_NC_RESULTS_INTERNAL_H

#include "io/ns_nc_intervals.h"
#include "io/ns_nc_results.h"
#include "io/ns_nc_write.h"

typedef struct ns_results_desc {
    ns_nc_desc desc;
    ns_nc_dim dims[14];
    ns_nc_var *vars;
    size_t nvars, cap;
    ns_nc_attr attrs[NS_PROVENANCE_MAX_ATTRS + 16 + NS_NC_INTERVALS_ATTRS];
    ns_nc_intervals *iv;    /* the intervals' variables (NULL: none) */
    char attr_buf[4096];
    void **blocks;          /* every allocation the description points into */
    size_t nblocks, blocks_cap;
    int nomem;
} ns_results_desc;

/* The whole file's description (prov may be NULL: no global attributes, for comparisons). The
 * arrays it points to are allocated here; free with ns_results_desc_free. */
int ns_results_desc_new(const ns_results_data *d, const ns_provenance *prov,
                        ns_results_desc **out, ns_err *err);
void ns_results_desc_free(ns_results_desc *rd);

#endif

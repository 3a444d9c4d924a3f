/* ns_nc_results: the layout of a sweep's NetCDF file (docs/OUTPUT.md): the coordinates, one
 * variable per (metric, statistic) of the metric table, both KS tests and their n_crit, every
 * count of the reduction, the optional per-row samples, and the global attributes -- from the
 * reduced slices (analysis/ns_reduce.h), which the sweep computes in parallel and `verify`
 * recomputes. The same description is written (ns_nc_results_write) and compared with an
 * existing file (ns_nc_results_compare.h), so the two cannot drift apart. CF-1.8. */
#ifndef NS_NC_RESULTS_H
#define NS_NC_RESULTS_H

#include <stddef.h>
#include <stdint.h>

#include "common/ns_error.h"
#include "analysis/ns_intervals.h"
#include "grid/ns_grid.h"
#include "grid/ns_grid_derive.h"
#include "io/ns_nc_check.h"
#include "io/ns_nc_write.h"
#include "io/ns_provenance.h"

/* The `output_layout` global attribute: the layout this code writes and compares (docs/OUTPUT.md,
 * "Output layouts"; 2 since issue 34, files before it have none: layout 1). */
#define NS_OUTPUT_LAYOUT 2

typedef struct ns_results_data {
    const ns_grid *grid;              /* what was swept */
    const ns_grid_derived *derived;   /* its derived values (the slices, the Jacobian bound) */
    double ks_alpha;
    size_t n_shards;
    size_t L_max, shard_first, shard_stride; /* shard k = tokens [first + k stride, + L_max) */
    size_t corpus_tokens;
    const double *slices;         /* (derived->nslices, derived->slice.total) */
    const double *samples;        /* NULL, or (nslices, ns_grid_slice_samples(n_shards rows)) */
    const int32_t *forward_count; /* (n_shards): forward passes run per shard; NULL: not known
                                     (a comparison from the journal), the variable is left out */
    int uncompressed;             /* 1: written without shuffle and deflate (recorded in the
                                     `compression` attribute) */
    const ns_intervals *intervals; /* the bootstrap intervals (io/ns_nc_intervals.h); NULL: none */
} ns_results_data;

/* Write the sweep file to path (atomically). */
int ns_nc_results_write(const char *path, const ns_results_data *d, const ns_provenance *prov,
                        ns_err *err);

#endif

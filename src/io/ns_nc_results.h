/* ns_nc_results: the layout of a sweep's NetCDF file (docs/OUTPUT.md): the coordinates, one
 * variable per (metric, statistic) of the metric table, both KS tests and their n_crit, every
 * count of the reduction, the optional per-row samples, and the global attributes -- from the
 * reduced slices (analysis/ns_reduce.h), which the sweep computes in parallel and `verify`
 * recomputes. The same description is written (ns_nc_results_write) and compared with an
 * existing file (ns_nc_results_compare), so the two cannot drift apart. CF-1.8. */
#ifndef NS_NC_RESULTS_H
#define NS_NC_RESULTS_H

#include <stddef.h>
#include <stdint.h>

#include "common/ns_error.h"
#include "analysis/ns_intervals.h"
#include "io/ns_nc_check.h"
#include "io/ns_nc_write.h"
#include "io/ns_provenance.h"
#include "rows/ns_plan.h"

/* The `output_layout` global attribute: the layout this code writes and compares (docs/OUTPUT.md,
 * "Output layouts"; 2 since issue 34, files before it have none: layout 1). */
#define NS_OUTPUT_LAYOUT 2

typedef struct ns_results_data {
    const ns_plan *plan;
    double ks_alpha;
    size_t n_shards;
    size_t L_max, shard_first, shard_stride; /* shard k = tokens [first + k stride, + L_max) */
    size_t corpus_tokens;
    const double *slices;         /* (ns_plan_nslices, ns_plan_slice_total) */
    const double *samples;        /* NULL, or (nslices, ns_plan_slice_samples(n_shards * rows)) */
    const int32_t *forward_count; /* (n_shards): forward passes run per shard; NULL: not known
                                     (a comparison from the journal), the variable is left out */
    int uncompressed;             /* 1: written without shuffle and deflate (recorded in the
                                     `compression` attribute) */
    const ns_intervals *intervals; /* the bootstrap intervals (io/ns_nc_intervals.h); NULL: none */
} ns_results_data;

/* Write the sweep file to path (atomically). */
int ns_nc_results_write(const char *path, const ns_results_data *d, const ns_provenance *prov,
                        ns_err *err);

/* Called for each variable that differs: its name, the differing values and the first index. */
typedef void (*ns_nc_diff_fn)(void *user, const char *var, size_t n_diff, const char *where,
                              double file_value, double expected);

/* A comparison of a file with the description of d. */
typedef struct ns_nc_compare {
    int exact;                  /* data bit-identical; else within |a - b| <= tol max(|a|, |b|, 1)
                                   (NaN matches NaN, an infinity itself) */
    double tol;
    ns_nc_diff_fn diff;         /* each variable whose data differ (may be NULL) */
    const ns_provenance *prov;  /* non-NULL: also the whole layout and every attribute, against
                                   what ns_nc_results_write writes for d and prov (ns_nc_check) */
    ns_nc_check_fn layout;      /* each difference of layout or attribute (may be NULL) */
    void *user;                 /* passed to diff and layout */
    size_t n_bad;               /* out: variables whose data differ or are missing */
    ns_nc_check_counts checked; /* out: what the layout comparison compared and found */
} ns_nc_compare;

/* Compare every variable of the description with path's data (and, with c->prov, the layout and
 * every attribute). NS_ERR_* only when path cannot be read. */
int ns_nc_results_compare(const char *path, const ns_results_data *d, ns_nc_compare *c,
                          ns_err *err);

/* What a sweep file records that the journal does not give: the forward passes run per shard
 * (*forward_count: n_shards values of shard_forward_count, caller frees; NULL when the file has no
 * such variable or another shape) and whether its data variables are stored without filters
 * (*uncompressed, judged by distance_mean's storage), for a comparison that regenerates the file's
 * description. */
int ns_nc_results_recorded(const char *path, size_t n_shards, int32_t **forward_count,
                           int *uncompressed, ns_err *err);

#endif

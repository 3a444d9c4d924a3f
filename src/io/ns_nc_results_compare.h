/* ns_nc_results_compare: a sweep file compared with the description ns_nc_results writes for
 * the same data (io/ns_nc_results.h), variable by variable and, on request, attribute by
 * attribute: what `verify` checks. */
#ifndef NS_NC_RESULTS_COMPARE_H
#define NS_NC_RESULTS_COMPARE_H

#include <stddef.h>
#include <stdint.h>

#include "common/ns_error.h"
#include "io/ns_nc_check.h"
#include "io/ns_nc_results.h"

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

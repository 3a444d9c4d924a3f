/* ns_nc_dump: write one shard's token ids, attention weights and value vectors to NetCDF-4
 * (the `normsweep dump` file), layer by layer, to a temporary name renamed into place at the end.
 *
 * Shape key: NL = layers, H = heads, L = tokens, D = head dim, C = H * D.
 * Variables: token_id(position) int; attention_weight(layer, head, query, key) float (exactly 0
 * above the diagonal); value(layer, head, position, dim) float. Optional (ns_nc_dump_extras):
 * logit(layer, head, query, key) float (NaN above the diagonal) and the per-(layer, head)
 * metrics of METRICS.md for one query row (every metric of the metric table,
 * analysis/ns_metrics.h), double with NaN as _FillValue, over coordinate variables N, T, eps.
 * Global attributes: the provenance of io/ns_provenance.h plus the window's. */
#ifndef NS_NC_DUMP_H
#define NS_NC_DUMP_H

#include <stddef.h>
#include <stdint.h>

#include "analysis/ns_metrics.h"
#include "common/ns_error.h"
#include "io/ns_provenance.h"

/* What the file records besides its data. NULL strings are left out. */
typedef struct ns_nc_dump_meta {
    const ns_provenance *prov;  /* the common global attributes (model, build, rules, ...) */
    const char *text_file;      /* "text_file" */
    const char *text_sha256;    /* "text_sha256" */
    size_t offset;              /* "offset": first token of the window in the (stripped) text */
    size_t text_tokens;         /* "text_tokens": tokens in the (stripped) text */
    double ln_eps;              /* "layer_norm_epsilon": the model's norm epsilon (LayerNorm's or
                                   RMSNorm's) */
} ns_nc_dump_meta;

typedef struct ns_nc_dump ns_nc_dump;

/* What the metrics were computed with: grids (coordinate variables N, T, eps; N may be empty:
 * then the (T, N) metrics have no values), jac_bound(T), and the settings written as global
 * attributes. Arrays are copied as needed during create. */
typedef struct ns_nc_dump_metrics {
    const size_t *N;  size_t nN;     /* each >= 1 */
    const double *T;  size_t nT;     /* each > 0 */
    const double *eps; size_t neps;  /* each > 0 */
    const double *jac_bound;         /* (nT): min(1/(4T), sqrt 2) */
    size_t row;                      /* query row analysed ("metrics_row", L - 1) */
    const char *normalizer;          /* "normalizer": its label (ns_normalizer_label): "softmax",
                                        "entmax alpha=1.3", "sigmoid b=-log(L)" */
    double normalizer_s;             /* "normalizer_s" (ssmax only; NaN leaves it out) */
    int sphere;                      /* "sphere": "true" / "false" */
    unsigned long long seed;         /* "seed" (NC_UINT64) */
    unsigned probes;                 /* "probes" */
} ns_nc_dump_metrics;

/* Optional parts of a dump. */
typedef struct ns_nc_dump_extras {
    int logits;                        /* 1: define logit(layer, head, query, key) */
    const ns_nc_dump_metrics *metrics; /* NULL: no metric variables */
} ns_nc_dump_extras;

/* Create path's temporary sibling, define the dimensions, variables and attributes, and write
 * tokens[0..L); extras (may be NULL) adds logits and metrics. *out is owned by the caller: finish
 * with ns_nc_dump_close (success) or ns_nc_dump_abort; on failure nothing is left on disk. Every
 * variable defined must be written for every layer before ns_nc_dump_close succeeds. */
int ns_nc_dump_create_ext(const char *path, const ns_nc_dump_meta *meta, size_t n_layer,
                          size_t n_head, size_t L, size_t d_head, const int32_t *tokens,
                          const ns_nc_dump_extras *extras, ns_nc_dump **out, ns_err *err);

/* Write layer `layer`'s logits (H, L, L) (above the diagonal replaced by NaN). NS_ERR_INVALID
 * when the dump was created without logits. */
int ns_nc_dump_write_logits(ns_nc_dump *d, size_t layer, const float *logits, ns_err *err);

/* Write metric id of layer `layer`. data holds the variable's slab for that layer in C order
 * without the layer axis: (nT, nN, H), (nT, H), (nT, neps, H) or (H) by the metric's dimensions.
 * NaN marks missing values. NS_ERR_INVALID when the dump has no metrics. */
int ns_nc_dump_write_metric(ns_nc_dump *d, ns_metric_id id, size_t layer, const double *data,
                            ns_err *err);

/* Write layer `layer`: weights (H, L, L) as is and values (L, KV D) of n_kv_head key/value heads
 * regrouped to (H, L, D), query head h receiving those of its group h / (H / KV). */
int ns_nc_dump_write_layer(ns_nc_dump *d, size_t layer, const float *weights, const float *values,
                           size_t n_kv_head, ns_err *err);

/* Close the file and rename it to its final path (fsync'ing the directory). Fails if not every
 * layer was written. Frees d in every case; on failure the temporary is removed. */
int ns_nc_dump_close(ns_nc_dump *d, ns_err *err);

/* Close and remove the temporary, free d. Safe on NULL. */
void ns_nc_dump_abort(ns_nc_dump *d);

#endif

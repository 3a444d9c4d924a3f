/* ns_train_log: what training records per step and per evaluation, kept in memory (saved in the
 * checkpoint, so a resumed run continues the same log) and written as a CF NetCDF file: learning
 * rate, loss, the gradient's norm in total, per layer and per parameter group, the distribution of
 * the attention rows' exact Jacobian norms per layer (METRICS section 7, the quantity the paper
 * says explodes at low temperature), and the validation loss. */
#ifndef NS_TRAIN_LOG_H
#define NS_TRAIN_LOG_H

#include <stddef.h>

#include "norm/ns_normalize.h"
#include "common/ns_error.h"
#include "io/ns_nc_write.h"
#include "io/ns_provenance.h"
#include "train/ns_train_params.h"

/* Quantiles of the Jacobian norms: 0 and 1 are the minimum and maximum. */
#define NS_TRAIN_LOG_NQ 7
extern const double ns_train_log_quantiles[NS_TRAIN_LOG_NQ];

/* One step's row (doubles): lr, loss, grad_norm, then per layer grad_norm_layer (NL), per layer
 * and group grad_norm_param (NL x NS_TRAIN_LAYER_GROUPS), grad_norm_embed (NS_TRAIN_GLOBAL_GROUPS),
 * per layer attn_jac quantiles (NL x NS_TRAIN_LOG_NQ), attn_jac_mean (NL), attn_jac_above_bound
 * (NL). */
typedef struct ns_train_log_columns {
    size_t lr, loss, grad_norm, layer, param, embed, jac_q, jac_mean, jac_above, width;
} ns_train_log_columns;

typedef struct ns_train_log {
    size_t NL;
    ns_train_log_columns col;
    double *rows;      /* n_steps x col.width */
    size_t n_steps, cap;
    double *evals;     /* n_evals x 2: step (0 = before training), validation loss */
    size_t n_evals, cap_evals;
} ns_train_log;

int ns_train_log_init(ns_train_log *log, size_t n_layer, ns_err *err);
void ns_train_log_free(ns_train_log *log);

/* Append a row for the next step (NaN-filled); NULL when out of memory. */
double *ns_train_log_new_row(ns_train_log *log);
int ns_train_log_add_eval(ns_train_log *log, double step, double val_loss, ns_err *err);

/* Fill row's gradient norms from the gradient g (lay->total floats) times scale. */
void ns_train_log_grad_norms(const ns_train_log *log, double *row,
                             const ns_train_params_layout *lay, const float *g, double scale);

/* Fill row's Jacobian columns of layer l from the n exact norms in jac (sorted in place; NaN-free)
 * with bound = the paper's min(1/(4T), sqrt 2) for the fraction above it (1e-6 relative slack). */
void ns_train_log_jacobians(const ns_train_log *log, double *row, size_t layer, double *jac,
                            size_t n, double bound);

/* What the file says about the run beyond the provenance: the model, the attention and the
 * options, as global attributes (borrowed). */
typedef struct ns_train_log_meta {
    const ns_provenance *prov;
    const ns_nc_attr *attrs;
    size_t nattrs;
} ns_train_log_meta;

/* Write the log to path (temporary name, renamed when complete). Needs at least one step. */
int ns_train_log_write(const char *path, const ns_train_log *log, const ns_train_log_meta *meta,
                       ns_err *err);

#endif

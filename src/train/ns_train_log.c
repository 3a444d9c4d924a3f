/* ns_train_log: the training log in memory and as a CF NetCDF file (see ns_train_log.h). */
#include "train/ns_train_log.h"

#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/ns_stats.h"

const double ns_train_log_quantiles[NS_TRAIN_LOG_NQ] = {0.0, 0.05, 0.25, 0.5, 0.75, 0.95, 1.0};

#define NS_TRAIN_LOG_NAME_LEN 12 /* characters of the group names */

int ns_train_log_init(ns_train_log *log, size_t NL, ns_err *err)
{
    memset(log, 0, sizeof *log);
    log->NL = NL;
    ns_train_log_columns *c = &log->col;
    c->lr = 0, c->loss = 1, c->grad_norm = 2, c->layer = 3;
    c->param = c->layer + NL;
    c->embed = c->param + NL * NS_TRAIN_LAYER_GROUPS;
    c->jac_q = c->embed + NS_TRAIN_GLOBAL_GROUPS;
    c->jac_mean = c->jac_q + NL * NS_TRAIN_LOG_NQ;
    c->jac_above = c->jac_mean + NL;
    c->width = c->jac_above + NL;
    (void)err;
    return NS_OK;
}

void ns_train_log_free(ns_train_log *log)
{
    if (!log)
        return;
    free(log->rows);
    free(log->evals);
    memset(log, 0, sizeof *log);
}

double *ns_train_log_new_row(ns_train_log *log)
{
    size_t W = log->col.width;
    if (log->n_steps == log->cap) {
        size_t cap = log->cap ? 2 * log->cap : 64;
        double *r = realloc(log->rows, cap * W * sizeof *r);
        if (!r)
            return NULL;
        log->rows = r;
        log->cap = cap;
    }
    double *row = log->rows + log->n_steps++ * W;
    for (size_t i = 0; i < W; i++)
        row[i] = NAN;
    return row;
}

int ns_train_log_add_eval(ns_train_log *log, double step, double val_loss, ns_err *err)
{
    if (log->n_evals == log->cap_evals) {
        size_t cap = log->cap_evals ? 2 * log->cap_evals : 16;
        double *e = realloc(log->evals, cap * 2 * sizeof *e);
        if (!e)
            return ns_fail(err, NS_ERR_NOMEM, "training log: out of memory");
        log->evals = e;
        log->cap_evals = cap;
    }
    log->evals[2 * log->n_evals] = step;
    log->evals[2 * log->n_evals + 1] = val_loss;
    log->n_evals++;
    return NS_OK;
}

void ns_train_log_grad_norms(const ns_train_log *log, double *row,
                             const ns_train_params_layout *lay, const float *g, double scale)
{
    const ns_train_log_columns *c = &log->col;
    double total = 0.0;
    for (size_t i = 0; i < log->NL * NS_TRAIN_LAYER_GROUPS; i++)
        row[c->param + i] = 0.0;
    for (size_t i = 0; i < NS_TRAIN_GLOBAL_GROUPS; i++)
        row[c->embed + i] = 0.0;
    for (size_t k = 0; k < lay->n; k++) {
        const ns_train_params_tensor *t = &lay->t[k];
        double ss = 0.0;
        for (size_t i = t->offset; i < t->offset + t->numel; i++)
            ss += (double)g[i] * g[i];
        ss *= scale * scale;
        total += ss;
        if (t->layer < 0)
            row[c->embed + (size_t)t->group] += ss;
        else
            row[c->param + (size_t)t->layer * NS_TRAIN_LAYER_GROUPS + (size_t)t->group] += ss;
    }
    row[c->grad_norm] = sqrt(total);
    for (size_t l = 0; l < log->NL; l++) {
        double ls = 0.0;
        for (size_t gi = 0; gi < NS_TRAIN_LAYER_GROUPS; gi++) {
            double *x = &row[c->param + l * NS_TRAIN_LAYER_GROUPS + gi];
            ls += *x;
            *x = sqrt(*x);
        }
        row[c->layer + l] = sqrt(ls);
    }
    for (size_t i = 0; i < NS_TRAIN_GLOBAL_GROUPS; i++)
        row[c->embed + i] = sqrt(row[c->embed + i]);
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

void ns_train_log_jacobians(const ns_train_log *log, double *row, size_t layer, double *jac,
                            size_t n, double bound)
{
    const ns_train_log_columns *c = &log->col;
    if (n == 0)
        return;
    qsort(jac, n, sizeof *jac, cmp_double);
    double sum = 0.0;
    size_t above = 0;
    for (size_t i = 0; i < n; i++) {
        sum += jac[i];
        above += jac[i] > bound * (1.0 + 1e-6);
    }
    for (size_t q = 0; q < NS_TRAIN_LOG_NQ; q++)
        row[c->jac_q + layer * NS_TRAIN_LOG_NQ + q] =
            ns_quantile_sorted(jac, n, ns_train_log_quantiles[q]);
    row[c->jac_mean + layer] = sum / (double)n;
    row[c->jac_above + layer] = (double)above / (double)n;
}

/* ---- the NetCDF file ---- */

typedef struct nc_build {
    ns_nc_var vars[24];
    size_t nvars;
    void *blocks[24];
    size_t nblocks;
    int failed;
} nc_build;

static void *own(nc_build *b, size_t bytes)
{
    void *p = b->nblocks < 24 ? calloc(bytes ? bytes : 1, 1) : NULL;
    if (!p)
        b->failed = 1;
    else
        b->blocks[b->nblocks++] = p;
    return p;
}

static ns_nc_var *var(nc_build *b, const char *name, ns_nc_type type, const char *d0,
                      const char *d1, const char *d2, const void *data, const char *long_name,
                      const char *units)
{
    ns_nc_var *v = &b->vars[b->nvars++];
    memset(v, 0, sizeof *v);
    v->name = name;
    v->type = type;
    const char *dims[3] = {d0, d1, d2};
    for (size_t i = 0; i < 3 && dims[i]; i++)
        v->dims[v->ndims++] = dims[i];
    v->data = data;
    v->fill = NS_FILL_MISSING;
    ns_nc_var_text(v, "long_name", long_name);
    if (units)
        ns_nc_var_text(v, "units", units);
    return v;
}

/* Column block [col, col + k) of every step row, as an (n_steps, k) array. */
static double *columns(nc_build *b, const ns_train_log *log, size_t col, size_t k)
{
    double *out = own(b, log->n_steps * k * sizeof *out);
    for (size_t s = 0; out && s < log->n_steps; s++)
        memcpy(out + s * k, log->rows + s * log->col.width + col, k * sizeof *out);
    return out;
}

/* The coordinates: step, layer, quantile, group names, eval step. */
static void coordinates(nc_build *b, const ns_train_log *log)
{
    size_t NL = log->NL;
    int32_t *step = own(b, log->n_steps * sizeof *step), *layer = own(b, NL * sizeof *layer);
    int32_t *estep = own(b, log->n_evals * sizeof *estep);
    char *pg = own(b, NS_TRAIN_LAYER_GROUPS * NS_TRAIN_LOG_NAME_LEN),
         *eg = own(b, NS_TRAIN_GLOBAL_GROUPS * NS_TRAIN_LOG_NAME_LEN);
    if (b->failed)
        return;
    for (size_t s = 0; s < log->n_steps; s++)
        step[s] = (int32_t)(s + 1);
    for (size_t l = 0; l < NL; l++)
        layer[l] = (int32_t)l;
    for (size_t e = 0; e < log->n_evals; e++)
        estep[e] = (int32_t)log->evals[2 * e];
    for (size_t g = 0; g < NS_TRAIN_LAYER_GROUPS; g++)
        strncpy(pg + g * NS_TRAIN_LOG_NAME_LEN, ns_train_params_layer_groups[g],
                NS_TRAIN_LOG_NAME_LEN);
    for (size_t g = 0; g < NS_TRAIN_GLOBAL_GROUPS; g++)
        strncpy(eg + g * NS_TRAIN_LOG_NAME_LEN, ns_train_params_global_groups[g],
                NS_TRAIN_LOG_NAME_LEN);
    var(b, "step", NS_NC_INT, "step", NULL, NULL, step, "optimisation steps completed", "1");
    var(b, "layer", NS_NC_INT, "layer", NULL, NULL, layer, "transformer block (0-based)", "1");
    var(b, "quantile", NS_NC_DOUBLE, "quantile", NULL, NULL, ns_train_log_quantiles,
        "probability of the quantile (0: minimum, 1: maximum)", "1");
    var(b, "eval_step", NS_NC_INT, "eval_step", NULL, NULL, estep,
        "steps completed when the validation loss was measured (0: the initial model)", "1");
    var(b, "param_group", NS_NC_CHAR, "param_group", "name_strlen", NULL, pg,
        "parameter group of a layer (a weight with its bias)", NULL);
    var(b, "embed_group", NS_NC_CHAR, "embed_group", "name_strlen", NULL, eg,
        "parameters outside the layers", NULL);
}

static void data_vars(nc_build *b, const ns_train_log *log)
{
    const ns_train_log_columns *c = &log->col;
    size_t NL = log->NL;
    double *ev = own(b, log->n_evals * sizeof *ev);
    for (size_t e = 0; ev && e < log->n_evals; e++)
        ev[e] = log->evals[2 * e + 1];
    var(b, "lr", NS_NC_DOUBLE, "step", NULL, NULL, columns(b, log, c->lr, 1),
        "learning rate of the step (warmup, then cosine decay)", "1");
    var(b, "loss", NS_NC_DOUBLE, "step", NULL, NULL, columns(b, log, c->loss, 1),
        "training loss of the step's batch: mean cross-entropy per predicted token, in nats", "1");
    var(b, "grad_norm", NS_NC_DOUBLE, "step", NULL, NULL, columns(b, log, c->grad_norm, 1),
        "global L2 norm of the gradient of the mean loss, before clipping", "1");
    var(b, "grad_norm_layer", NS_NC_DOUBLE, "step", "layer", NULL, columns(b, log, c->layer, NL),
        "L2 norm of the gradient of one layer's parameters, before clipping", "1");
    ns_nc_var *v =
        var(b, "grad_norm_param", NS_NC_DOUBLE, "step", "layer", "param_group",
            columns(b, log, c->param, NL * NS_TRAIN_LAYER_GROUPS),
            "L2 norm of the gradient of one parameter group of one layer, before clipping", "1");
    ns_nc_var_text(v, "coordinates", "param_group");
    v = var(b, "grad_norm_embed", NS_NC_DOUBLE, "step", "embed_group", NULL,
            columns(b, log, c->embed, NS_TRAIN_GLOBAL_GROUPS),
            "L2 norm of the gradient of the embeddings and the final LayerNorm, before clipping",
            "1");
    ns_nc_var_text(v, "coordinates", "embed_group");
    v = var(b, "attn_jac", NS_NC_DOUBLE, "step", "layer", "quantile",
            columns(b, log, c->jac_q, NL * NS_TRAIN_LOG_NQ),
            "quantiles over the training batch's attention rows (every head, every query) of the "
            "exact Jacobian norm of the model's normalizer, METRICS section 7",
            "1");
    ns_nc_var_text(v, "comment", "missing at steps where it was not measured (--jac-every)");
    var(b, "attn_jac_mean", NS_NC_DOUBLE, "step", "layer", NULL, columns(b, log, c->jac_mean, NL),
        "mean exact Jacobian norm of the attention rows of the training batch", "1");
    var(b, "attn_jac_above_bound", NS_NC_DOUBLE, "step", "layer", NULL,
        columns(b, log, c->jac_above, NL),
        "fraction of the attention rows whose exact Jacobian norm exceeds the paper's "
        "min(1/(4T), sqrt 2) (1e-6 relative slack)", "1");
    var(b, "val_loss", NS_NC_DOUBLE, "eval_step", NULL, NULL, ev,
        "validation loss: mean cross-entropy per predicted token over the validation windows, in "
        "nats", "1");
}

int ns_train_log_write(const char *path, const ns_train_log *log, const ns_train_log_meta *meta,
                       ns_err *err)
{
    if (log->n_steps == 0 || log->n_evals == 0)
        return ns_fail(err, NS_ERR_INVALID, "%s: nothing to write yet (no step or no evaluation)",
                       path);
    nc_build b;
    memset(&b, 0, sizeof b);
    coordinates(&b, log);
    data_vars(&b, log);
    int rc = NS_OK;
    ns_nc_attr *attrs = own(&b, (NS_PROVENANCE_MAX_ATTRS + meta->nattrs) * sizeof *attrs);
    char *buf = own(&b, 8192);
    if (b.failed) {
        rc = ns_fail(err, NS_ERR_NOMEM, "%s: out of memory", path);
        goto done;
    }
    size_t na = ns_provenance_attrs(meta->prov, attrs, NS_PROVENANCE_MAX_ATTRS, buf, 8192);
    memcpy(attrs + na, meta->attrs, meta->nattrs * sizeof *attrs);
    ns_nc_dim dims[] = {{"step", log->n_steps},
                        {"layer", log->NL},
                        {"quantile", NS_TRAIN_LOG_NQ},
                        {"eval_step", log->n_evals},
                        {"param_group", NS_TRAIN_LAYER_GROUPS},
                        {"embed_group", NS_TRAIN_GLOBAL_GROUPS},
                        {"name_strlen", NS_TRAIN_LOG_NAME_LEN}};
    ns_nc_desc desc = {dims, sizeof dims / sizeof dims[0], b.vars, b.nvars, attrs,
                       na + meta->nattrs, 0};
    rc = ns_nc_write(path, &desc, err);
done:
    for (size_t i = 0; i < b.nblocks; i++)
        free(b.blocks[i]);
    return rc;
}

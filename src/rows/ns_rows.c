/* ns_rows: one window's forward pass and per-row analysis (see ns_rows.h). */
#include "rows/ns_rows.h"

#include <stdlib.h>
#include <string.h>

struct ns_rows {
    const ns_plan *plan;
    const ns_model *model;
    ns_kernel kernel;
    ns_model_workspace *fws;
    ns_analysis_ws *aws[NS_PLAN_MAX_NORMALIZERS];
    size_t *layer_index;     /* model layer -> index in the plan's layers, or SIZE_MAX */
    ns_row_request *req;     /* (nL * rows): one head's requests for one normalizer */
    /* the window being analysed */
    uint64_t shard;
    double *payload;
    const ns_rows_hooks *hooks;
};

int ns_rows_new(const ns_plan *plan, const ns_model *model, ns_kernel kernel, unsigned flags,
                ns_rows **out, ns_err *err)
{
    int rc;
    *out = NULL;
    ns_rows *r = calloc(1, sizeof *r);
    if (!r)
        return ns_fail(err, NS_ERR_NOMEM, "rows: out of memory");
    const ns_model_config *mc = ns_model_config_of(model);
    const ns_grid *g = &plan->g;
    r->plan = plan;
    r->model = model;
    r->kernel = kernel;
    r->layer_index = malloc(mc->n_layer * sizeof *r->layer_index);
    r->req = malloc(g->nL * g->rows * sizeof *r->req);
    if (!r->layer_index || !r->req) {
        rc = ns_fail(err, NS_ERR_NOMEM, "rows: out of memory");
        goto fail;
    }
    for (size_t l = 0; l < mc->n_layer; l++)
        r->layer_index[l] = SIZE_MAX;
    for (size_t i = 0; i < g->nlayers; i++)
        r->layer_index[g->layers[i]] = i;
    int all = (flags & NS_ROWS_ALL_ROWS) != 0;
    if ((rc = ns_model_workspace_new(model, plan->derived.L_fwd, all ? NULL : plan->fwd_rows,
                                     plan->n_fwd_rows, &r->fws, err)) != NS_OK)
        goto fail;
    for (size_t i = 0; i < g->nnormalizers; i++)
        if ((rc = ns_analysis_ws_new(&plan->params[i], plan->derived.L_fwd, mc->d_head, &r->aws[i],
                                     err)) != NS_OK)
            goto fail;
    *out = r;
    return NS_OK;
fail:
    ns_rows_free(r);
    return rc;
}

void ns_rows_free(ns_rows *r)
{
    if (!r)
        return;
    ns_model_workspace_free(r->fws);
    for (size_t i = 0; i < NS_PLAN_MAX_NORMALIZERS; i++)
        ns_analysis_ws_free(r->aws[i]);
    free(r->layer_index);
    free(r->req);
    free(r);
}

/* Every planned row of one head for one normalizer. */
static int analyse_head(ns_rows *r, const ns_attn_layer_view *v, size_t li, size_t hi,
                        size_t ni, ns_err *err)
{
    const ns_plan *p = r->plan;
    const ns_grid *g = &p->g;
    size_t h = g->heads[hi], k = 0, vld = 0;
    const float *values = ns_view_head_values(v, h, &vld); /* its key/value group's */
    ns_head_input in = {
        .logits = v->logits + h * v->head_stride, .logits_ld = v->ld, .logits_slot = v->row_slot,
        .values = values, .values_ld = vld, .L_max = v->L, .d = v->d_head,
    };
    for (size_t Li = 0; Li < g->nL; Li++)
        for (size_t row = 0; row < g->rows; row++)
            r->req[k++] = (ns_row_request){
                .m = ns_plan_row(p, Li, row), .lay = ns_plan_layout(p, ni, Li),
                .out = r->payload + ns_plan_offset(p, li, hi, ni, Li, row),
            };
    ns_head_key key = {.shard = r->shard, .layer = (uint32_t)v->layer, .head = (uint32_t)h};
    return ns_analyze_head(&p->params[ni], &key, &in, r->req, k, r->kernel, r->aws[ni], err);
}

/* Every planned head and normalizer of the layer in view (r->shard, r->payload, r->hooks set). */
static int analyse_layer(ns_rows *r, const ns_attn_layer_view *v, ns_err *err)
{
    const ns_rows_hooks *hk = r->hooks;
    const ns_grid *g = &r->plan->g;
    size_t li = r->layer_index[v->layer];
    if (li == SIZE_MAX)
        return NS_OK;
    for (size_t hi = 0; hi < g->nheads; hi++) {
        if (hk && hk->poll)
            NS_TRY(hk->poll(hk->poll_user, err));
        for (size_t ni = 0; ni < g->nnormalizers; ni++)
            if (analyse_head(r, v, li, hi, ni, err) != NS_OK)
                return ns_err_prefix(err, "shard %llu layer %zu head %zu",
                                     (unsigned long long)r->shard, v->layer, g->heads[hi]);
    }
    return NS_OK;
}

int ns_rows_analyse_layer(ns_rows *r, uint64_t shard, const ns_attn_layer_view *v,
                          const ns_rows_hooks *hooks, double *payload, ns_err *err)
{
    r->shard = shard;
    r->payload = payload;
    r->hooks = hooks;
    return analyse_layer(r, v, err);
}

static int on_layer(void *user, const ns_attn_layer_view *v, ns_err *err)
{
    ns_rows *r = user;
    if (r->hooks && r->hooks->layer)
        NS_TRY(r->hooks->layer(r->hooks->layer_user, v, err));
    return ns_rows_analyse_layer(r, r->shard, v, r->hooks, r->payload, err);
}

int ns_rows_run(ns_rows *r, uint64_t shard, const int32_t *tokens, const ns_rows_hooks *hooks,
                double *payload, ns_err *err)
{
    r->shard = shard;
    r->payload = payload;
    r->hooks = hooks;
    int rc = ns_model_forward(r->model, r->fws, tokens, r->plan->derived.L_fwd,
                              r->plan->n_layers_run, on_layer, r, err);
    r->payload = NULL;
    r->hooks = NULL;
    return rc;
}

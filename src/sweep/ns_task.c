/* ns_task: one shard's forward pass and analysis (see ns_task.h). */
#include "sweep/ns_task.h"

#include <stdlib.h>
#include <string.h>

/* Private return of the layer callback: every requested layer is done, stop the forward. */
#define NS_TASK_STOP_EARLY 0x7e57

struct ns_task_runner {
    const ns_task_plan *plan;
    const ns_gpt2_model *model;
    ns_gpt2_workspace *fws;
    ns_analysis_ws *aws[NS_SWEEP_MAX_NORMALIZERS];
    size_t *layer_index;  /* model layer -> index in plan->layers, or SIZE_MAX */
    size_t deepest;       /* deepest requested model layer */
    /* per-run state */
    uint64_t shard;
    double *out;
    ns_task_poll_fn poll;
    void *poll_user;
};

int ns_task_plan_init(ns_task_plan *p, const ns_sweep_config *cfg, const ns_gpt2_config *mc,
                      ns_err *err)
{
    memset(p, 0, sizeof *p);
    if (cfg->nL == 0 || cfg->nlayers == 0 || cfg->nheads == 0 || cfg->nnormalizers == 0 ||
        cfg->rows == 0)
        return ns_fail(err, NS_ERR_INVALID, "sweep: empty grid (L, layers, heads, normalizers, rows)");
    p->nnorm = cfg->nnormalizers;
    p->nL = cfg->nL;
    p->nlayers = cfg->nlayers;
    p->nheads = cfg->nheads;
    p->rows = cfg->rows;
    p->L = cfg->L;
    p->layers = cfg->layers;
    p->heads = cfg->heads;
    p->n_layer_model = mc->n_layer;
    for (size_t i = 0; i < cfg->nlayers; i++)
        if (cfg->layers[i] >= mc->n_layer)
            return ns_fail(err, NS_ERR_INVALID, "sweep: layer %zu does not exist (model has %zu)",
                           cfg->layers[i], mc->n_layer);
    for (size_t i = 0; i < cfg->nheads; i++)
        if (cfg->heads[i] >= mc->n_head)
            return ns_fail(err, NS_ERR_INVALID, "sweep: head %zu does not exist (model has %zu)",
                           cfg->heads[i], mc->n_head);
    p->L_fwd = 0;
    for (size_t i = 0; i < cfg->nL; i++) {
        if (cfg->L[i] < cfg->rows)
            return ns_fail(err, NS_ERR_INVALID, "sweep: L = %zu is smaller than rows = %zu",
                           cfg->L[i], cfg->rows);
        if (cfg->L[i] > p->L_fwd)
            p->L_fwd = cfg->L[i];
    }
    if (p->L_fwd > mc->n_ctx || p->L_fwd > cfg->L_max)
        return ns_fail(err, NS_ERR_INVALID, "sweep: L = %zu exceeds L_max (%zu) or the model's "
                       "n_positions (%zu)", p->L_fwd, cfg->L_max, mc->n_ctx);
    for (size_t i = 0; i < cfg->nnormalizers; i++) {
        ns_analysis_params *a = &p->params[i];
        a->N = cfg->N;
        a->nN = cfg->nN;
        a->T = cfg->T;
        a->nT = cfg->nT;
        a->eps = cfg->eps;
        a->neps = cfg->neps;
        a->normalizer = cfg->normalizers[i];
        a->sphere = cfg->sphere;
        a->probes = cfg->probes;
        a->seed = cfg->seed;
    }
    ns_row_layout_init(&p->layout, cfg->nT, cfg->nN, cfg->neps);
    p->row_m = malloc(p->nL * p->rows * sizeof *p->row_m);
    if (!p->row_m)
        return ns_fail(err, NS_ERR_NOMEM, "out of memory");
    for (size_t i = 0; i < p->nL; i++)
        for (size_t r = 0; r < p->rows; r++)
            p->row_m[i * p->rows + r] = p->L[i] - 1 - r;
    p->per_head = p->nL * p->rows * p->layout.total;
    p->payload = p->nlayers * p->nheads * p->nnorm * p->per_head;
    return NS_OK;
}

void ns_task_plan_free(ns_task_plan *p)
{
    free(p->row_m);
    p->row_m = NULL;
}

size_t ns_task_row_offset(const ns_task_plan *p, size_t li, size_t hi, size_t ni, size_t Li,
                          size_t r)
{
    return ((li * p->nheads + hi) * p->nnorm + ni) * p->per_head +
           (Li * p->rows + r) * p->layout.total;
}

int ns_task_runner_new(const ns_task_plan *plan, const ns_gpt2_model *model,
                       ns_task_runner **out, ns_err *err)
{
    int rc;
    *out = NULL;
    ns_task_runner *r = calloc(1, sizeof *r);
    if (!r)
        return ns_fail(err, NS_ERR_NOMEM, "out of memory");
    const ns_gpt2_config *mc = ns_gpt2_config_of(model);
    r->plan = plan;
    r->model = model;
    r->layer_index = malloc(mc->n_layer * sizeof *r->layer_index);
    if (!r->layer_index) {
        rc = ns_fail(err, NS_ERR_NOMEM, "out of memory");
        goto fail;
    }
    for (size_t l = 0; l < mc->n_layer; l++)
        r->layer_index[l] = SIZE_MAX;
    for (size_t i = 0; i < plan->nlayers; i++) {
        r->layer_index[plan->layers[i]] = i;
        if (plan->layers[i] > r->deepest)
            r->deepest = plan->layers[i];
    }
    if ((rc = ns_gpt2_workspace_new(model, plan->L_fwd, &r->fws, err)) != NS_OK)
        goto fail;
    for (size_t i = 0; i < plan->nnorm; i++)
        if ((rc = ns_analysis_ws_new(&plan->params[i], plan->L_fwd, mc->n_embd / mc->n_head,
                                     &r->aws[i], err)) != NS_OK)
            goto fail;
    *out = r;
    return NS_OK;
fail:
    ns_task_runner_free(r);
    return rc;
}

void ns_task_runner_free(ns_task_runner *r)
{
    if (!r)
        return;
    ns_gpt2_workspace_free(r->fws);
    for (size_t i = 0; i < NS_SWEEP_MAX_NORMALIZERS; i++)
        ns_analysis_ws_free(r->aws[i]);
    free(r->layer_index);
    free(r);
}

static int on_layer(void *user, const ns_attn_layer_view *v, ns_err *err)
{
    ns_task_runner *r = user;
    const ns_task_plan *p = r->plan;
    if (r->poll)
        NS_TRY(r->poll(r->poll_user, err));
    size_t li = r->layer_index[v->layer];
    if (li != SIZE_MAX) {
        size_t C = v->n_head * v->d_head;
        for (size_t hi = 0; hi < p->nheads; hi++) {
            size_t h = p->heads[hi];
            ns_head_input in = {
                .logits = v->logits + h * v->L * v->L,
                .logits_ld = v->L,
                .values = v->values + h * v->d_head,
                .values_ld = C,
                .L_max = v->L,
                .d = v->d_head,
            };
            ns_head_key key = {.shard = r->shard, .layer = (uint32_t)v->layer, .head = (uint32_t)h};
            for (size_t ni = 0; ni < p->nnorm; ni++) {
                double *o = r->out + ns_task_row_offset(p, li, hi, ni, 0, 0);
                int rc = ns_analyze_head(&p->params[ni], &key, &in, p->row_m, p->nL * p->rows,
                                         r->aws[ni], o, err);
                if (rc != NS_OK)
                    return ns_err_prefix(err, "shard %llu layer %zu head %zu",
                                         (unsigned long long)r->shard, v->layer, h);
            }
            if (r->poll)
                NS_TRY(r->poll(r->poll_user, err));
        }
    }
    if (v->layer >= r->deepest)
        return NS_TASK_STOP_EARLY;
    return NS_OK;
}

int ns_task_run(ns_task_runner *r, uint64_t shard, const int32_t *tokens, ns_task_poll_fn poll,
                void *poll_user, double *out, ns_err *err)
{
    r->shard = shard;
    r->out = out;
    r->poll = poll;
    r->poll_user = poll_user;
    int rc = ns_gpt2_forward(r->model, r->fws, tokens, r->plan->L_fwd, on_layer, r, err);
    r->out = NULL;
    if (rc == NS_TASK_STOP_EARLY) {
        ns_err_clear(err);
        return NS_OK;
    }
    return rc;
}

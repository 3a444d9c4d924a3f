/* ns_model_probe: one forward pass over a few tokens, checking that every layer's attention
 * logits, weights and value vectors are finite: a model whose weights are finite but so large
 * that its activations overflow float32 is named before any work (validation), with its largest
 * weight as the likely cause, instead of failing mid-run. Any architecture: the largest weight is
 * found through the model's tensor slots (those of the failing layer and the embeddings). */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "model/ns_model_internal.h"

typedef struct probe {
    char what[160];   /* the first non-finite value, or "" */
    size_t layer;
} probe;

static int check_layer(void *user, const ns_attn_layer_view *v, ns_err *err)
{
    probe *p = user;
    (void)err;
    size_t L = v->L, H = v->n_head, D = v->d_head;
    for (size_t h = 0; h < H && !p->what[0]; h++)
        for (size_t m = 0; m < L && !p->what[0]; m++) {
            if (v->row_slot[m] == SIZE_MAX)
                continue;
            const float *z = v->logits + h * v->head_stride + v->row_slot[m] * v->ld;
            const float *w = v->weights + h * v->head_stride + v->row_slot[m] * v->ld;
            for (size_t i = 0; i <= m && !p->what[0]; i++) {
                if (!isfinite(z[i]))
                    snprintf(p->what, sizeof p->what, "head %zu: logit z[%zu][%zu] = %g", h, m, i,
                             (double)z[i]);
                else if (!isfinite(w[i]))
                    snprintf(p->what, sizeof p->what, "head %zu: attention weight w[%zu][%zu] = %g",
                             h, m, i, (double)w[i]);
            }
        }
    /* values: (L, KV * D); with grouped-query attention a value belongs to a key/value head */
    size_t KV = v->n_kv_head, W = KV * D;
    const char *head = KV == H ? "head" : "key/value head";
    for (size_t k = 0; k < L * W && !p->what[0]; k++)
        if (!isfinite(v->values[k]))
            snprintf(p->what, sizeof p->what, "%s %zu: value v[%zu][%zu] = %g", head, (k % W) / D,
                     k / W, k % D, (double)v->values[k]);
    if (p->what[0])
        p->layer = v->layer;
    return p->what[0] ? NS_ERR_INVALID : NS_OK;
}

/* 1 when slot s is one of layer l's tensors (its destination lies in model->layers[l]) or an
 * embedding (token or learned positions). */
static int slot_in_scope(const ns_model *model, const ns_ckpt_slot *s, size_t l)
{
    const char *d = (const char *)s->dst, *lo = (const char *)&model->layers[l];
    if (d >= lo && d < lo + sizeof model->layers[l])
        return 1;
    return s->dst == &model->tok_emb || s->dst == &model->pos_emb;
}

/* The largest |weight| of layer l and the embeddings, and its tensor's name. */
static double largest_weight(const ns_model *model, size_t l, char *name, size_t size)
{
    double best = -1.0;
    for (size_t k = 0; k < model->n_slots; k++) {
        const ns_ckpt_slot *s = &model->slots[k];
        const float *w = *s->dst;
        if (!w || !s->t || !slot_in_scope(model, s, l))
            continue;
        for (size_t i = 0; i < s->t->numel; i++)
            if (fabs((double)w[i]) > best) {
                best = fabs((double)w[i]);
                snprintf(name, size, "%s", s->name);
            }
    }
    return best;
}

int ns_model_probe(const ns_model *model, const int32_t *tokens, size_t L, ns_err *err)
{
    const ns_model_config *cfg = ns_model_config_of(model);
    ns_model_workspace *ws = NULL;
    NS_TRY(ns_model_workspace_new(model, L, NULL, 0, &ws, err));
    probe p = {"", 0};
    int rc = ns_model_forward(model, ws, tokens, L, cfg->n_layer, check_layer, &p, err);
    ns_model_workspace_free(ws);
    if (!p.what[0])
        return rc;
    char name[128] = "?";
    double big = largest_weight(model, p.layer, name, sizeof name);
    return ns_fail(err, NS_ERR_INVALID, "a forward pass over %zu tokens overflows float32: layer %zu "
                   "%s is not finite (the model's weights are too large: the largest in layer %zu "
                   "and the embeddings is %.3g, in %s)", L, p.layer, p.what, p.layer, big, name);
}

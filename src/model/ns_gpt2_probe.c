/* ns_gpt2_probe: one forward pass over a few tokens, checking that every layer's attention
 * logits, weights and value vectors are finite: a model whose weights are finite but so large
 * that its activations overflow float32 is named before any work (validation), with its largest
 * weight as the likely cause, instead of failing mid-run. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "model/ns_gpt2.h"

typedef struct probe {
    char what[160];   /* the first non-finite value, or "" */
    size_t layer;
} probe;

static int check_layer(void *user, const ns_attn_layer_view *v, ns_err *err)
{
    probe *p = user;
    (void)err;
    size_t L = v->L, H = v->n_head, C = H * v->d_head;
    for (size_t h = 0; h < H && !p->what[0]; h++)
        for (size_t m = 0; m < L && !p->what[0]; m++)
            for (size_t i = 0; i <= m && !p->what[0]; i++) {
                float z = v->logits[(h * L + m) * L + i], w = v->weights[(h * L + m) * L + i];
                if (!isfinite(z))
                    snprintf(p->what, sizeof p->what, "head %zu: logit z[%zu][%zu] = %g", h, m, i,
                             (double)z);
                else if (!isfinite(w))
                    snprintf(p->what, sizeof p->what, "head %zu: attention weight w[%zu][%zu] = %g",
                             h, m, i, (double)w);
            }
    for (size_t k = 0; k < L * C && !p->what[0]; k++)
        if (!isfinite(v->values[k]))
            snprintf(p->what, sizeof p->what, "head %zu: value v[%zu][%zu] = %g", (k % C) / v->d_head,
                     k / C, k % v->d_head, (double)v->values[k]);
    if (p->what[0])
        p->layer = v->layer;
    return p->what[0] ? NS_ERR_INVALID : NS_OK;
}

/* The largest |weight| of layer l and the embeddings, and its tensor's name. */
static double largest_weight(const ns_gpt2_model *model, size_t l, char *name, size_t size)
{
    static const char *const suffix[] = {"ln_1.weight", "ln_1.bias", "attn.c_attn.weight",
                                         "attn.c_attn.bias", "attn.c_proj.weight", "attn.c_proj.bias",
                                         "ln_2.weight", "ln_2.bias", "mlp.c_fc.weight",
                                         "mlp.c_fc.bias", "mlp.c_proj.weight", "mlp.c_proj.bias",
                                         "wte.weight", "wpe.weight"};
    double best = -1.0;
    for (size_t k = 0; k < sizeof suffix / sizeof suffix[0]; k++) {
        char t[64];
        if (k < 12)
            snprintf(t, sizeof t, "h.%zu.%s", l, suffix[k]);
        else
            snprintf(t, sizeof t, "%s", suffix[k]);
        size_t n = 0;
        const float *w = ns_gpt2_tensor(model, t, &n);
        for (size_t i = 0; w && i < n; i++)
            if (fabs((double)w[i]) > best) {
                best = fabs((double)w[i]);
                snprintf(name, size, "%s", t);
            }
    }
    return best;
}

int ns_gpt2_probe(const ns_gpt2_model *model, const int32_t *tokens, size_t L, ns_err *err)
{
    const ns_gpt2_config *cfg = ns_gpt2_config_of(model);
    ns_gpt2_workspace *ws = NULL;
    NS_TRY(ns_gpt2_workspace_new(model, L, &ws, err));
    probe p = {"", 0};
    int rc = ns_gpt2_forward(model, ws, tokens, L, cfg->n_layer, check_layer, &p, err);
    ns_gpt2_workspace_free(ws);
    if (!p.what[0])
        return rc;
    char name[64] = "?";
    double big = largest_weight(model, p.layer, name, sizeof name);
    return ns_fail(err, NS_ERR_INVALID, "a forward pass over %zu tokens overflows float32: layer %zu "
                   "%s is not finite (the model's weights are too large: the largest in layer %zu "
                   "and the embeddings is %.3g, in %s)", L, p.layer, p.what, p.layer, big, name);
}

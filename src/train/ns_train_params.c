/* ns_train_params: the trainer's parameter block: layout, GPT-2 initialisation, loading a model
 * directory into it and writing it out as one (see ns_train_params.h). */
#include "train/ns_train_params.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "model/ns_mkmodel.h"

const char *const ns_train_params_layer_groups[NS_TRAIN_LAYER_GROUPS] = {
    "ln_1", "attn_qkv", "attn_proj", "ln_2", "mlp_fc", "mlp_proj"};
const char *const ns_train_params_global_groups[NS_TRAIN_GLOBAL_GROUPS] = {"wte", "wpe", "ln_f"};

/* The name suffix of layer tensor k (file order), for a check that mkmodel's list agrees. */
static const char *const train_params_suffix[NS_TRAIN_PER_LAYER] = {
    "ln_1.weight",        "ln_1.bias",        "attn.c_attn.weight", "attn.c_attn.bias",
    "attn.c_proj.weight", "attn.c_proj.bias", "ln_2.weight",        "ln_2.bias",
    "mlp.c_fc.weight",    "mlp.c_fc.bias",    "mlp.c_proj.weight",  "mlp.c_proj.bias"};

void ns_train_params_layout_free(ns_train_params_layout *lay)
{
    if (!lay)
        return;
    free(lay->t);
    memset(lay, 0, sizeof *lay);
}

/* Place tensor number i of the layout (its name from mkmodel's list) and check it is the one the
 * trainer's code expects there. */
static int place(ns_train_params_layout *lay, size_t i, const ns_mkmodel_tensor *mt, ns_err *err)
{
    ns_train_params_tensor *t = &lay->t[i];
    int layer = -1, k = (int)i;
    char want[64];
    if (i < NS_TRAIN_GLOBAL) {
        static const char *const g[NS_TRAIN_GLOBAL] = {"wte.weight", "wpe.weight", "ln_f.weight",
                                                       "ln_f.bias"};
        snprintf(want, sizeof want, "%s", g[i]);
        t->group = i < 2 ? (int)i : 2;
    } else {
        layer = (int)((i - NS_TRAIN_GLOBAL) / NS_TRAIN_PER_LAYER);
        k = (int)((i - NS_TRAIN_GLOBAL) % NS_TRAIN_PER_LAYER);
        snprintf(want, sizeof want, "h.%d.%s", layer, train_params_suffix[k]);
        t->group = k / 2;
    }
    if (strcmp(mt->name, want) != 0)
        return ns_fail(err, NS_ERR_INVALID, "trainer layout: tensor %zu is '%s', expected '%s'", i,
                       mt->name, want);
    memcpy(t->name, mt->name, sizeof t->name);
    t->offset = lay->total;
    t->numel = mt->numel;
    t->rows = mt->shape[0];
    t->cols = mt->ndim == 2 ? mt->shape[1] : 0;
    t->layer = layer;
    t->decay = mt->ndim == 2;
    lay->total += mt->numel;
    return NS_OK;
}

int ns_train_params_layout_init(ns_train_params_layout *lay, const ns_gpt2_config *cfg, ns_err *err)
{
    memset(lay, 0, sizeof *lay);
    NS_TRY(ns_mkmodel_check(cfg, err));
    ns_mkmodel_tensor *mt = NULL;
    size_t nmt = 0;
    NS_TRY(ns_mkmodel_tensors(cfg, &mt, &nmt, err));
    lay->cfg = *cfg;
    if (lay->cfg.n_inner == 0)
        lay->cfg.n_inner = 4 * cfg->n_embd;
    lay->n = NS_TRAIN_GLOBAL + NS_TRAIN_PER_LAYER * cfg->n_layer;
    lay->t = calloc(lay->n, sizeof *lay->t);
    int rc = lay->t ? NS_OK : ns_fail(err, NS_ERR_NOMEM, "trainer layout: out of memory");
    size_t i = 0;
    for (size_t j = 0; rc == NS_OK && j < nmt; j++) {
        if (!mt[j].is_param)
            continue;
        if (i == lay->n)
            rc = ns_fail(err, NS_ERR_INVALID, "trainer layout: more tensors than expected");
        else
            rc = place(lay, i++, &mt[j], err);
    }
    if (rc == NS_OK && i != lay->n)
        rc = ns_fail(err, NS_ERR_INVALID, "trainer layout: %zu tensors, expected %zu", i, lay->n);
    free(mt);
    if (rc != NS_OK)
        ns_train_params_layout_free(lay);
    return rc;
}

int ns_train_params_init_gpt2(const ns_train_params_layout *lay, uint64_t seed, float *params,
                              ns_err *err)
{
    ns_mkmodel_opts o = {.config = lay->cfg, .seed = seed, .dtype = NS_ST_F32};
    for (size_t i = 0; i < lay->n; i++)
        NS_TRY(ns_mkmodel_values(&o, lay->t[i].name, 0, lay->t[i].numel, params + lay->t[i].offset,
                                 err));
    return NS_OK;
}

/* The first shape key in which two configs differ, or NULL. */
static const char *shape_difference(const ns_gpt2_config *a, const ns_gpt2_config *b)
{
    if (a->n_layer != b->n_layer)
        return "n_layer";
    if (a->n_head != b->n_head)
        return "n_head";
    if (a->n_embd != b->n_embd)
        return "n_embd";
    if (a->n_ctx != b->n_ctx)
        return "n_positions";
    if (a->vocab_size != b->vocab_size)
        return "vocab_size";
    if (a->n_inner != b->n_inner)
        return "n_inner";
    return NULL;
}

int ns_train_params_load_model(const ns_train_params_layout *lay, const char *dir, float *params,
                               ns_err *err)
{
    ns_gpt2_model *m = NULL;
    NS_TRY(ns_gpt2_load(dir, &m, err));
    int rc = NS_OK;
    const char *diff = shape_difference(ns_gpt2_config_of(m), &lay->cfg);
    if (diff)
        rc = ns_fail(err, NS_ERR_INVALID, "%s: its %s differs from the model being trained", dir,
                     diff);
    for (size_t i = 0; rc == NS_OK && i < lay->n; i++) {
        size_t numel = 0;
        const float *src = ns_gpt2_tensor(m, lay->t[i].name, &numel);
        if (!src || numel != lay->t[i].numel)
            rc = ns_fail(err, NS_ERR_INVALID, "%s: tensor '%s' not found or of another size", dir,
                         lay->t[i].name);
        else
            memcpy(params + lay->t[i].offset, src, numel * sizeof(float));
    }
    ns_gpt2_free(m);
    return rc;
}

typedef struct write_ctx {
    const ns_train_params_layout *lay;
    const float *params;
    size_t *param_of; /* mkmodel tensor index -> layout index */
} write_ctx;

static int fill_from_block(void *user, size_t tensor, size_t start, size_t n, float *out,
                           ns_err *err)
{
    const write_ctx *w = user;
    const ns_train_params_tensor *t = &w->lay->t[w->param_of[tensor]];
    if (start > t->numel || n > t->numel - start)
        return ns_fail(err, NS_ERR_INVALID, "trainer: range beyond tensor '%s'", t->name);
    memcpy(out, w->params + t->offset + start, n * sizeof(float));
    return NS_OK;
}

int ns_train_params_write_model(const char *dir, const ns_train_params_layout *lay,
                                const float *params, uint64_t seed, const char *extra_json,
                                ns_err *err)
{
    ns_mkmodel_tensor *mt = NULL;
    size_t nmt = 0;
    NS_TRY(ns_mkmodel_tensors(&lay->cfg, &mt, &nmt, err));
    size_t *param_of = calloc(nmt, sizeof *param_of);
    int rc = param_of ? NS_OK : ns_fail(err, NS_ERR_NOMEM, "out of memory");
    for (size_t j = 0, i = 0; rc == NS_OK && j < nmt; j++)
        if (mt[j].is_param)
            param_of[j] = i++;
    if (rc == NS_OK) {
        write_ctx w = {lay, params, param_of};
        ns_mkmodel_opts o = {.config = lay->cfg, .seed = seed, .dtype = NS_ST_F32,
                             .extra_json = extra_json};
        rc = ns_mkmodel_write_from(dir, &o, fill_from_block, &w, err);
    }
    free(param_of);
    free(mt);
    return rc;
}

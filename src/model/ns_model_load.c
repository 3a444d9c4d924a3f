/* ns_model_load: load a model directory -- config.json, then its weights (ns_checkpoint) bound into
 * the generic decoder by the architecture's tensor list, every tensor checked before use. */
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "model/ns_model_internal.h"

void ns_model_free(ns_model *m)
{
    if (!m)
        return;
    ns_ckpt_close(&m->ckpt);
    free(m->converted);
    free(m->layers);
    free(m->slots);
    free(m);
}

const ns_model_config *ns_model_config_of(const ns_model *model)
{
    return &model->config;
}

const char *ns_model_weights_path(const ns_model *model)
{
    return model->ckpt.weights_path;
}

int ns_model_sha256(const ns_model *model, char hex[65], ns_err *err)
{
    return ns_ckpt_sha256(&model->ckpt, hex, err);
}

/* FNV-1a over 8-byte words. */
static uint64_t mix(uint64_t h, long long v)
{
    uint64_t u = (uint64_t)v;
    for (int i = 0; i < 8; i++) {
        h ^= (u >> (8 * i)) & 0xff;
        h *= 0x100000001b3ull;
    }
    return h;
}

int ns_model_files_ident(const ns_model *model, ns_model_files_id *id, ns_err *err)
{
    id->where = id->what = 0xcbf29ce484222325ull;
    for (size_t f = 0; f < model->ckpt.n_files; f++) {
        const ns_st_file *st = &model->ckpt.files[f];
        struct stat sb;
        if (fstat(st->map.fd, &sb) != 0)
            return ns_fail(err, NS_ERR_IO, "%s: cannot stat the mapped file", st->path);
        id->where = mix(mix(id->where, (long long)sb.st_dev), (long long)sb.st_ino);
        id->what = mix(mix(mix(id->what, (long long)sb.st_size), (long long)sb.st_mtim.tv_sec),
                       (long long)sb.st_mtim.tv_nsec);
    }
    return NS_OK;
}

/* The GPT-2 config of any model: GPT-2's own, or a generic one's attention (softmax at 1). */
static void gpt2_view(const ns_model_config *c, ns_gpt2_config *g)
{
    memset(g, 0, sizeof *g);
    g->n_layer = c->n_layer;
    g->n_head = c->n_head;
    g->n_embd = c->n_embd;
    g->n_ctx = c->n_ctx;
    g->vocab_size = c->vocab_size;
    g->n_inner = c->n_inner;
    g->ln_eps = c->norm_eps;
    g->attn_norm.kind = (ns_normalizer_kind)c->attn_norm_kind;
    g->attn_norm.s = c->attn_norm_s;
    g->attn_temperature = c->attn_temperature > 0.0 ? c->attn_temperature : 1.0;
}

int ns_model_load(const char *dir, ns_model **out, ns_err *err)
{
    *out = NULL;
    ns_model *m = calloc(1, sizeof *m);
    if (!m)
        return ns_fail(err, NS_ERR_NOMEM, "out of memory");
    int rc = ns_model_config_read(dir, &m->config, err);
    const ns_model_config *c = &m->config;
    int gpt2 = c->arch == NS_ARCH_GPT2;
    if (rc == NS_OK) {
        gpt2_view(c, &m->gpt2);
        size_t cap = gpt2 ? ns_gpt2_slot_count(c) : ns_decoder_slot_count(c);
        m->layers = calloc(c->n_layer, sizeof *m->layers);
        m->slots = calloc(cap, sizeof *m->slots);
        if (!m->layers || !m->slots)
            rc = ns_fail(err, NS_ERR_NOMEM, "out of memory");
    }
    if (rc == NS_OK)
        rc = ns_ckpt_open(dir, &m->ckpt, err);
    if (rc == NS_OK) {
        m->n_slots = gpt2 ? ns_gpt2_fill_slots(m, m->slots) : ns_decoder_fill_slots(m, m->slots);
        rc = ns_ckpt_bind(&m->ckpt, m->slots, m->n_slots, &m->converted, err);
    }
    if (rc == NS_OK)
        rc = ns_ckpt_check_layers(&m->ckpt, gpt2 ? "transformer." : c->arch == NS_ARCH_LLAMA
                                                                      ? "model." : "gpt_neox.",
                                  gpt2 ? "h." : "layers.", c->n_layer,
                                  gpt2 ? "n_layer" : "num_hidden_layers", err);
    if (rc != NS_OK) {
        ns_model_free(m);
        return rc;
    }
    *out = m;
    return NS_OK;
}

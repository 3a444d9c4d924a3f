/* ns_gpt2_load: GPT-2's tensors as the generic decoder (ns_model_internal.h): their names (with or
 * without the "transformer." prefix of GPT2LMHeadModel exports), the shapes config.json implies
 * (Conv1D layout [in, out]), and the fused c_attn columns q | k | v. The trainer's view of a loaded
 * GPT-2 is ns_gpt2_view.c. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "model/ns_model_internal.h"

void ns_gpt2_config_generic(const ns_gpt2_config *g, ns_model_config *c)
{
    memset(c, 0, sizeof *c);
    c->arch = NS_ARCH_GPT2;
    snprintf(c->model_type, sizeof c->model_type, "gpt2");
    c->n_layer = g->n_layer;
    c->n_head = c->n_kv_head = g->n_head;
    c->d_head = g->n_embd / g->n_head;
    c->n_embd = g->n_embd;
    c->n_inner = g->n_inner;
    c->n_ctx = g->n_ctx;
    c->vocab_size = g->vocab_size;
    c->norm_eps = g->ln_eps;
    snprintf(c->hidden_act, sizeof c->hidden_act, "gelu_new");
    c->qkv_bias = c->o_bias = c->mlp_bias = 1;
    c->tied_embeddings = 1;
    c->attn_norm_kind = (int)g->attn_norm.kind;
    c->attn_norm_s = g->attn_norm.s;
    c->attn_temperature = g->attn_temperature;
}

size_t ns_gpt2_slot_count(const ns_model_config *c)
{
    return 4 + 12 * c->n_layer;
}

static void lin(ns_linear *l, size_t n_in, size_t n_out)
{
    l->n_in = n_in;
    l->n_out = n_out;
    l->trans = 0; /* Conv1D: [in, out] */
}

void ns_gpt2_shapes(ns_model *m)
{
    const ns_model_config *c = &m->config;
    size_t C = c->n_embd, F = c->n_inner;
    m->act = NS_ACT_GELU_TANH;
    m->qkv = (ns_qkv_layout){.width = 3 * C, .q0 = 0, .q_step = c->d_head, .k0 = C,
                             .k_step = c->d_head, .v0 = 2 * C, .v_step = c->d_head};
    for (size_t l = 0; l < c->n_layer; l++) {
        ns_layer_weights *w = &m->layers[l];
        w->n_qkv = 1;
        lin(&w->qkv[0], C, 3 * C);
        lin(&w->o, C, C);
        lin(&w->up, C, F);
        lin(&w->down, F, C);
    }
}

size_t ns_gpt2_fill_slots(ns_model *m, ns_ckpt_slot *s)
{
    const ns_model_config *c = &m->config;
    size_t C = c->n_embd, F = c->n_inner, n = 0;
    const char *T = "transformer.";
    ns_gpt2_shapes(m);
    ns_ckpt_slot_set(&s[n++], "wte.weight", c->vocab_size, C, "vocab_size, n_embd", &m->tok_emb, 0);
    ns_ckpt_slot_set(&s[n++], "wpe.weight", c->n_ctx, C, "n_positions, n_embd", &m->pos_emb, 0);
    ns_ckpt_slot_set(&s[n++], "ln_f.weight", C, 0, "n_embd", &m->norm_f_w, 0);
    ns_ckpt_slot_set(&s[n++], "ln_f.bias", C, 0, "n_embd", &m->norm_f_b, 0);
    for (size_t l = 0; l < c->n_layer; l++) {
        ns_layer_weights *w = &m->layers[l];
        static const char *fmt[] = {
            "h.%zu.ln_1.weight",      "h.%zu.ln_1.bias",      "h.%zu.attn.c_attn.weight",
            "h.%zu.attn.c_attn.bias", "h.%zu.attn.c_proj.weight", "h.%zu.attn.c_proj.bias",
            "h.%zu.ln_2.weight",      "h.%zu.ln_2.bias",      "h.%zu.mlp.c_fc.weight",
            "h.%zu.mlp.c_fc.bias",    "h.%zu.mlp.c_proj.weight", "h.%zu.mlp.c_proj.bias",
        };
        const float **dst[] = {&w->norm1_w, &w->norm1_b, &w->qkv[0].w, &w->qkv[0].b,
                               &w->o.w, &w->o.b, &w->norm2_w, &w->norm2_b,
                               &w->up.w, &w->up.b, &w->down.w, &w->down.b};
        const size_t d0[] = {C, C, C, 3 * C, C, C, C, C, C, F, F, C};
        const size_t d1[] = {0, 0, 3 * C, 0, C, 0, 0, 0, F, 0, C, 0};
        const char *why[] = {"n_embd", "n_embd", "n_embd", "n_embd", "n_embd", "n_embd",
                             "n_embd", "n_embd", "n_embd, n_inner", "n_inner",
                             "n_inner, n_embd", "n_embd"};
        for (size_t k = 0; k < 12; k++) {
            char name[96];
            snprintf(name, sizeof name, fmt[k], l);
            ns_ckpt_slot_set(&s[n], name, d0[k], d1[k], why[k], dst[k], 0);
            s[n++].prefix = T;
        }
    }
    for (size_t i = 0; i < 4; i++)
        s[i].prefix = T;
    return n;
}

/* ---- the trainer's view ---- */

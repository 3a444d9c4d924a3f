/* ns_decoder_load: the tensors of the Llama layout and of GPT-NeoX as the generic decoder
 * (ns_model_internal.h) -- their Hugging Face names (with or without the head model's "model." /
 * "gpt_neox." prefix), the shapes config.json implies (nn.Linear [out, in]), and where each
 * query, key and value head lies in the projections' output:
 *   Llama: q_proj | k_proj | v_proj side by side (H D | KV D | KV D columns);
 *   GPT-NeoX: query_key_value, whose 3C outputs are grouped per head as [q_h | k_h | v_h]
 *   (GPTNeoXAttention views them as (heads, 3 head_size) before splitting). */
#include <stdio.h>
#include <string.h>

#include "model/ns_model_internal.h"

size_t ns_decoder_slot_count(const ns_model_config *c)
{
    return 4 + 16 * c->n_layer; /* Llama with every bias: 2 norms, 7 maps, 7 biases */
}

static void lin(ns_linear *l, size_t n_in, size_t n_out)
{
    l->n_in = n_in;
    l->n_out = n_out;
    l->trans = 1; /* nn.Linear: [out, in] */
}

/* Slot for the weight (and, when bias, the bias) of layer l's map `what` of shape [out, in]. */
static size_t put_linear(ns_ckpt_slot *s, const char *prefix, size_t l, const char *what,
                         ns_linear *L, size_t n_in, size_t n_out, int bias, const char *why)
{
    char name[128];
    size_t n = 0;
    lin(L, n_in, n_out);
    snprintf(name, sizeof name, "layers.%zu.%s.weight", l, what);
    ns_ckpt_slot_set(&s[n], name, n_out, n_in, why, &L->w, 0);
    s[n++].prefix = prefix;
    L->b = NULL;
    if (bias) {
        snprintf(name, sizeof name, "layers.%zu.%s.bias", l, what);
        ns_ckpt_slot_set(&s[n], name, n_out, 0, why, &L->b, 0);
        s[n++].prefix = prefix;
    }
    return n;
}

static size_t put_norm(ns_ckpt_slot *s, const char *prefix, const char *name, size_t C, int bias,
                       const float **w, const float **b)
{
    char nm[128];
    size_t n = 0;
    snprintf(nm, sizeof nm, "%s.weight", name);
    ns_ckpt_slot_set(&s[n], nm, C, 0, "hidden_size", w, 0);
    s[n++].prefix = prefix;
    *b = NULL;
    if (bias) {
        snprintf(nm, sizeof nm, "%s.bias", name);
        ns_ckpt_slot_set(&s[n], nm, C, 0, "hidden_size", b, 0);
        s[n++].prefix = prefix;
    }
    return n;
}

static size_t llama_layer(ns_model *m, ns_ckpt_slot *s, size_t l)
{
    const ns_model_config *c = &m->config;
    ns_layer_weights *w = &m->layers[l];
    size_t C = c->n_embd, F = c->n_inner, HD = c->n_head * c->d_head, KD = c->n_kv_head * c->d_head;
    const char *P = "model.";
    char nm[96];
    size_t n = 0;
    snprintf(nm, sizeof nm, "layers.%zu.input_layernorm", l);
    n += put_norm(s + n, P, nm, C, 0, &w->norm1_w, &w->norm1_b);
    n += put_linear(s + n, P, l, "self_attn.q_proj", &w->qkv[0], C, HD, c->qkv_bias,
                    "num_attention_heads x head_dim, hidden_size");
    n += put_linear(s + n, P, l, "self_attn.k_proj", &w->qkv[1], C, KD, c->qkv_bias,
                    "num_key_value_heads x head_dim, hidden_size");
    n += put_linear(s + n, P, l, "self_attn.v_proj", &w->qkv[2], C, KD, c->qkv_bias,
                    "num_key_value_heads x head_dim, hidden_size");
    w->n_qkv = 3;
    n += put_linear(s + n, P, l, "self_attn.o_proj", &w->o, HD, C, c->o_bias,
                    "hidden_size, num_attention_heads x head_dim");
    snprintf(nm, sizeof nm, "layers.%zu.post_attention_layernorm", l);
    n += put_norm(s + n, P, nm, C, 0, &w->norm2_w, &w->norm2_b);
    n += put_linear(s + n, P, l, "mlp.gate_proj", &w->gate, C, F, c->mlp_bias,
                    "intermediate_size, hidden_size");
    n += put_linear(s + n, P, l, "mlp.up_proj", &w->up, C, F, c->mlp_bias,
                    "intermediate_size, hidden_size");
    n += put_linear(s + n, P, l, "mlp.down_proj", &w->down, F, C, c->mlp_bias,
                    "hidden_size, intermediate_size");
    return n;
}

static size_t neox_layer(ns_model *m, ns_ckpt_slot *s, size_t l)
{
    const ns_model_config *c = &m->config;
    ns_layer_weights *w = &m->layers[l];
    size_t C = c->n_embd, F = c->n_inner;
    const char *P = "gpt_neox.";
    char nm[96];
    size_t n = 0;
    snprintf(nm, sizeof nm, "layers.%zu.input_layernorm", l);
    n += put_norm(s + n, P, nm, C, 1, &w->norm1_w, &w->norm1_b);
    n += put_linear(s + n, P, l, "attention.query_key_value", &w->qkv[0], C, 3 * C, c->qkv_bias,
                    "3 x hidden_size, hidden_size");
    w->n_qkv = 1;
    n += put_linear(s + n, P, l, "attention.dense", &w->o, C, C, c->o_bias,
                    "hidden_size, hidden_size");
    snprintf(nm, sizeof nm, "layers.%zu.post_attention_layernorm", l);
    n += put_norm(s + n, P, nm, C, 1, &w->norm2_w, &w->norm2_b);
    n += put_linear(s + n, P, l, "mlp.dense_h_to_4h", &w->up, C, F, 1,
                    "intermediate_size, hidden_size");
    n += put_linear(s + n, P, l, "mlp.dense_4h_to_h", &w->down, F, C, 1,
                    "hidden_size, intermediate_size");
    return n;
}

size_t ns_decoder_fill_slots(ns_model *m, ns_ckpt_slot *s)
{
    const ns_model_config *c = &m->config;
    size_t C = c->n_embd, D = c->d_head, n = 0;
    int llama = c->arch == NS_ARCH_LLAMA;
    const char *P = llama ? "model." : "gpt_neox.";
    m->act = strcmp(c->hidden_act, "gelu") == 0   ? NS_ACT_GELU_ERF
             : strncmp(c->hidden_act, "gelu", 4) == 0 ? NS_ACT_GELU_TANH
                                                        : NS_ACT_SILU;
    if (llama)
        m->qkv = (ns_qkv_layout){.width = (c->n_head + 2 * c->n_kv_head) * D, .q0 = 0, .q_step = D,
                                 .k0 = c->n_head * D, .k_step = D,
                                 .v0 = (c->n_head + c->n_kv_head) * D, .v_step = D};
    else
        m->qkv = (ns_qkv_layout){.width = 3 * C, .q0 = 0, .q_step = 3 * D, .k0 = D, .k_step = 3 * D,
                                 .v0 = 2 * D, .v_step = 3 * D};
    ns_ckpt_slot_set(&s[n], llama ? "embed_tokens.weight" : "embed_in.weight", c->vocab_size, C,
                     "vocab_size, hidden_size", &m->tok_emb, 0);
    s[n++].prefix = P;
    m->pos_emb = NULL;
    for (size_t l = 0; l < c->n_layer; l++)
        n += llama ? llama_layer(m, s + n, l) : neox_layer(m, s + n, l);
    n += put_norm(s + n, P, llama ? "norm" : "final_layer_norm", C, !llama, &m->norm_f_w,
                  &m->norm_f_b);
    /* The LM head is never computed; a tied model may still ship it (then it is checked). */
    ns_ckpt_slot_set(&s[n++], llama ? "lm_head.weight" : "embed_out.weight", c->vocab_size, C,
                     "vocab_size, hidden_size", &m->lm_head, c->tied_embeddings);
    return n;
}

/* ns_model_internal: the one decoder every architecture loads into -- embeddings, per layer two
 * norms, the q/k/v projections written side by side into one buffer, the attention output map
 * and the MLP -- shared by the loaders (ns_model_load.c, ns_gpt2_load.c, ns_decoder_load.c), the
 * forward pass (ns_model_forward.c) and the forward benchmark. Not for use outside src/model.
 *
 * A linear map is kept as the file stores it: Hugging Face's Conv1D (GPT-2) is [in, out] row-major
 * (y = x W + b), nn.Linear (Llama, GPT-NeoX) is [out, in] (y = x W^T + b). */
#ifndef NS_MODEL_INTERNAL_H
#define NS_MODEL_INTERNAL_H

#include <jansson.h>

#include "model/ns_checkpoint.h"
#include "model/ns_gpt2.h"
#include "model/ns_model.h"

/* Query rows per block of the causal attention: each block of rows [m0, m0 + B) is multiplied
 * only with keys [0, m0 + B), so the forward forms sum over blocks of B (m0 + B) scores instead of
 * L^2 (0.5625 L^2 at L = 8B), and holds B x L scores per head at a time. bench/bench_forward
 * issues the same GEMMs for its baseline. */
#define NS_MODEL_ATT_BLOCK 128

typedef struct ns_linear {
    const float *w;   /* trans 0: (n_in, n_out); trans 1: (n_out, n_in) */
    const float *b;   /* (n_out), or NULL */
    size_t n_in, n_out;
    int trans;
} ns_linear;

typedef struct ns_layer_weights {
    const float *norm1_w, *norm1_b; /* (C); b NULL for RMSNorm */
    ns_linear qkv[3];               /* written side by side into a token's row of the qkv buffer */
    size_t n_qkv;                   /* 1: fused (GPT-2 c_attn, GPT-NeoX query_key_value); 3 */
    ns_linear o;                    /* attention output: (H D) -> C */
    const float *norm2_w, *norm2_b;
    ns_linear up;                   /* C -> F (c_fc, dense_h_to_4h, up_proj) */
    ns_linear gate;                 /* C -> F (gate_proj), w NULL unless gated */
    ns_linear down;                 /* F -> C */
} ns_layer_weights;

/* Where query head h's q and key/value head g's k and v lie in a token's row of the qkv buffer:
 * q at q0 + h q_step, k at k0 + g k_step, v at v0 + g v_step (D floats each). */
typedef struct ns_qkv_layout {
    size_t width;
    size_t q0, q_step, k0, k_step, v0, v_step;
} ns_qkv_layout;

/* The activation of the MLP (gated: applied to the gate). */
typedef enum ns_act {
    NS_ACT_GELU_TANH = 0, /* gelu_new, gelu_pytorch_tanh: GPT-2's tanh approximation */
    NS_ACT_GELU_ERF = 1,  /* gelu: 0.5 x (1 + erf(x / sqrt 2)) */
    NS_ACT_SILU = 2       /* silu: x / (1 + exp(-x)) */
} ns_act;

struct ns_model {
    ns_model_config config;
    ns_gpt2_config gpt2;     /* GPT-2's own config (attention fields: every architecture's) */
    ns_act act;
    const float *tok_emb;    /* (V, C) */
    const float *pos_emb;    /* (P, C) learned positions, or NULL (rotary) */
    const float *norm_f_w, *norm_f_b, *lm_head; /* validated, unused (no LM head) */
    ns_layer_weights *layers;
    ns_qkv_layout qkv;
    /* ownership */
    ns_ckpt ckpt;
    float *converted;        /* one block for converted tensors, or NULL */
    ns_ckpt_slot *slots;     /* every tensor bound, for lookups by name */
    size_t n_slots;
};

/* The tensors of an architecture: fill slots (capacity from *_slot_count) pointing into m, and
 * set m's linear-map shapes and qkv layout. */
size_t ns_gpt2_slot_count(const ns_model_config *c);
/* GPT-2's act, qkv layout and linear-map shapes from m->config (m->layers allocated). */
void ns_gpt2_shapes(ns_model *m);
size_t ns_gpt2_fill_slots(ns_model *m, ns_ckpt_slot *slots);
size_t ns_decoder_slot_count(const ns_model_config *c);
size_t ns_decoder_fill_slots(ns_model *m, ns_ckpt_slot *slots);

/* The config readers of each architecture (root is config.json's object, path its name). */
int ns_llama_config_parse(const char *path, json_t *root, const char *model_type,
                          ns_model_config *cfg, ns_err *err);
int ns_neox_config_parse(const char *path, json_t *root, ns_model_config *cfg, ns_err *err);
/* GPT-2's config as the generic one. */
void ns_gpt2_config_generic(const ns_gpt2_config *g, ns_model_config *cfg);

#endif

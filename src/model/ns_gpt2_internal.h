/* ns_gpt2_internal: the GPT-2 parameter tensors, shared by the loader (ns_gpt2_load.c) and the
 * forward pass (ns_gpt2_forward.c). Not for use outside src/model.
 *
 * Shape key: C = n_embd, V = vocab_size, P = n_ctx (positions), F = n_inner (4C for GPT-2).
 * Linear weights are Hugging Face Conv1D layout: [in, out] row-major, so y = x W + b. */
#ifndef NS_GPT2_INTERNAL_H
#define NS_GPT2_INTERNAL_H

#include "common/ns_file.h"
#include "model/ns_gpt2.h"

/* Query rows per block of the causal attention: each block of rows [m0, m0 + B) is multiplied
 * only with keys [0, m0 + B), so the forward forms sum over blocks of B (m0 + B) scores instead of
 * L^2 (0.5625 L^2 at L = 8B). bench/bench_forward issues the same GEMMs for its baseline. */
#define NS_GPT2_ATT_BLOCK 128

typedef struct ns_gpt2_layer_weights {
    const float *ln_1_w, *ln_1_b;           /* (C), (C) */
    const float *attn_w, *attn_b;           /* c_attn: (C, 3C), (3C); columns q | k | v */
    const float *attn_proj_w, *attn_proj_b; /* attn.c_proj: (C, C), (C) */
    const float *ln_2_w, *ln_2_b;           /* (C), (C) */
    const float *fc_w, *fc_b;               /* mlp.c_fc: (C, F), (F) */
    const float *fc_proj_w, *fc_proj_b;     /* mlp.c_proj: (F, C), (C) */
} ns_gpt2_layer_weights;

struct ns_gpt2_model {
    ns_gpt2_config config;
    const float *wte;                 /* (V, C) token embeddings */
    const float *wpe;                 /* (P, C) position embeddings */
    const float *ln_f_w, *ln_f_b;     /* (C), (C); validated, unused (no LM head) */
    ns_gpt2_layer_weights *layers;    /* n_layer entries */
    /* ownership */
    ns_mmap map;                      /* model.safetensors, read-only shared */
    float *converted;                 /* one block for F16/BF16 tensors converted to F32, or NULL */
    char *dir;
};

/* One causal row of ns_gpt2_attn_weights: w[0..n) = attn_norm(z[0..n) / attn_temperature), with
 * the AVX2 kernels when simd (ns_k_simd()). work holds NS_GPT2_ATTN_WORK(n) doubles. Fails only
 * for an invalid temperature. (ns_gpt2_attn.c) */
int ns_gpt2_attn_row(float *w, const float *z, size_t n, const ns_gpt2_config *cfg, int simd,
                     double *work, ns_err *err);

#endif

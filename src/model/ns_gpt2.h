/* ns_gpt2: GPT-2 model loading (config.json + model.safetensors, memory-mapped) and the
 * attention-capturing causal forward pass (OpenBLAS sgemm). Knows nothing of sweeps or I/O formats.
 *
 * Shape key: L = sequence length, C = n_embd, H = n_head, D = C / H (head dim), V = vocab. */
#ifndef NS_GPT2_H
#define NS_GPT2_H

#include <stddef.h>
#include <stdint.h>

#include "analysis/ns_normalize.h"
#include "common/ns_error.h"
#include "common/ns_range.h"

/* The attention temperature a config.json may name lies in this range (z / T stays finite in
 * double for any float logit, and training at it is meaningful). */
#define NS_GPT2_MIN_TEMPERATURE 1e-6
#define NS_GPT2_MAX_TEMPERATURE 1e6
/* ... and ssmax's s (normsweep_ssmax_s). */
#define NS_GPT2_MIN_SSMAX_S 1e-6
#define NS_GPT2_MAX_SSMAX_S 1e6

/* The same two ranges as declared values (common/ns_range.h), for every option and key that
 * sets them: train's --temperature and --s, a training grid's temperatures: and ssmax_s:. */
extern const ns_range ns_gpt2_range_temperature;
extern const ns_range ns_gpt2_range_ssmax_s;

/* The largest shape config.json may name (GPT-2 XL: 48 layers, 25 heads, n_embd 1600, vocab
 * 50257, 1024 positions, n_inner 6400): every later size computation stays far from overflow.
 * The options that set a shape (train, mkmodel) and the grid's indices take their ranges from
 * these. */
#define NS_GPT2_MAX_LAYER 1024u
#define NS_GPT2_MAX_HEAD 4096u
#define NS_GPT2_MAX_EMBD 65536u
#define NS_GPT2_MAX_CTX 1048576u
#define NS_GPT2_MAX_VOCAB 16777216u
#define NS_GPT2_MAX_INNER 1048576u

typedef struct ns_gpt2_config {
    size_t n_layer;
    size_t n_head;
    size_t n_embd;
    size_t n_ctx;       /* n_positions: longest sequence the position table allows */
    size_t vocab_size;
    size_t n_inner;     /* MLP width; config's n_inner, or 4 * n_embd when null/absent */
    double ln_eps;      /* layer_norm_epsilon */
    /* The model's attention: weights = attn_norm(z / attn_temperature) with z = q.k / sqrt(D).
     * config.json keys normsweep_attn_normalizer (softmax when absent), normsweep_ssmax_s (only
     * and always for ssmax) and normsweep_attn_temperature (1 when absent); docs/MODEL.md. */
    ns_normalizer attn_norm;
    double attn_temperature;
} ns_gpt2_config;

/* Read and validate dir/config.json only (cheap: used to check sweep files against a model).
 * Errors name the file and the key. */
int ns_gpt2_config_read(const char *dir, ns_gpt2_config *cfg, ns_err *err);

typedef struct ns_gpt2_model ns_gpt2_model;

/* The attention temperature in force (attn_temperature, or 1 when it is 0). */
double ns_gpt2_attn_temperature(const ns_gpt2_config *cfg);
/* 1 when the config's attention is GPT-2's own (softmax at temperature 1). */
int ns_gpt2_attn_is_default(const ns_gpt2_config *cfg);

/* Load dir/config.json and dir/model.safetensors. The safetensors file is mapped read-only
 * and shared; F32 tensors are used in place, F16/BF16 converted to private F32 copies.
 * Everything is validated first; failures name the file and tensor. */
int ns_gpt2_load(const char *dir, ns_gpt2_model **out, ns_err *err);
void ns_gpt2_free(ns_gpt2_model *model);
/* SHA-256 (lowercase hex, 65 bytes) of the mapped model.safetensors: of the bytes the model
 * uses, whatever happened to the file's path since it was mapped. */
int ns_gpt2_sha256(const ns_gpt2_model *model, char hex[65], ns_err *err);
const ns_gpt2_config *ns_gpt2_config_of(const ns_gpt2_model *model);

/* The F32 data of a loaded parameter tensor by its Hugging Face name without prefix
 * ("wte.weight", "h.3.mlp.c_fc.bias", ...; *numel receives its size), or NULL when the model has
 * no such parameter (buffers such as h.N.attn.bias are not parameters). */
const float *ns_gpt2_tensor(const ns_gpt2_model *model, const char *name, size_t *numel);

/* What the forward pass shows after each layer's attention (valid only during the callback). */
typedef struct ns_attn_layer_view {
    size_t layer;          /* 0-based */
    size_t n_head, d_head, L;
    const float *logits;   /* (H, L, L): z[h][m][i] = q_m . k_i / sqrt(D), valid for i <= m */
    const float *weights;  /* (H, L, L): the model's attention weights attn_norm(z / attn_temperature)
                              per causal row (softmax at T = 1 for GPT-2), exactly 0 above the
                              diagonal */
    const float *values;   /* (L, C): value vector of token i, head h = values[i*C + h*D .. +D) */
} ns_attn_layer_view;

/* Called once per layer, in order. A non-zero return stops the forward pass and is returned. */
typedef int (*ns_attn_layer_fn)(void *user, const ns_attn_layer_view *view, ns_err *err);

/* The model's attention weights of one head from its logits z (L x L, row m valid for i <= m):
 * w[m][i] = attn_norm(z[m][0..m] / attn_temperature)_i, exactly 0 above the diagonal -- the one
 * function the forward pass and the trainer (src/train) both use. work holds NS_GPT2_ATTN_WORK(L)
 * doubles. Fails only for an invalid temperature. */
#define NS_GPT2_ATTN_WORK(L) (4 * (L))
int ns_gpt2_attn_weights(float *w, const float *z, size_t L, const ns_gpt2_config *cfg,
                         double *work, ns_err *err);

typedef struct ns_gpt2_workspace ns_gpt2_workspace;

/* Activations for sequences up to L_max tokens (one allocation). */
int ns_gpt2_workspace_new(const ns_gpt2_model *model, size_t L_max, ns_gpt2_workspace **out,
                          ns_err *err);
void ns_gpt2_workspace_free(ns_gpt2_workspace *ws);
/* Bytes ns_gpt2_workspace_new allocates for a model of this shape (computed in double, so an
 * absurd L_max gives a huge number rather than a wrapped one): for memory estimates. */
double ns_gpt2_workspace_bytes(const ns_gpt2_config *cfg, size_t L_max);

/* Causal forward over tokens[0..L) through layers 0..n_layers-1 (1 <= n_layers <= n_layer: a
 * caller that observes only the first layers stops there). Token ids must be < vocab_size and
 * L <= min(L_max, n_ctx). The LM head is not computed. fn may be NULL. */
int ns_gpt2_forward(const ns_gpt2_model *model, ns_gpt2_workspace *ws, const int32_t *tokens,
                    size_t L, size_t n_layers, ns_attn_layer_fn fn, void *user, ns_err *err);

/* One forward pass over tokens[0..L) through every layer (L <= n_ctx) checking that the attention
 * logits, weights and value vectors stay finite: NS_ERR_INVALID "a forward pass over L tokens
 * overflows float32: layer l head h: logit z[m][i] = inf is not finite (the model's weights are
 * too large: ...)" naming the largest weight (ns_gpt2_probe.c). Validation runs it on the first
 * tokens of the first shard. */
int ns_gpt2_probe(const ns_gpt2_model *model, const int32_t *tokens, size_t L, ns_err *err);

#endif

/* ns_train_params: the trainer's one parameter block -- every GPT-2 parameter tensor, back to back
 * in the Hugging Face file order (ns_mkmodel_tensors without the mask buffers) -- with each
 * tensor's place, layer and kind; GPT-2 initialisation (ns_mkmodel_values, so step 0 of training
 * is `normsweep mkmodel` of the same seed), copying from a loaded model, and writing the block as
 * a model directory (ns_mkmodel_write_from).
 *
 * Shape key: C = n_embd, F = n_inner, V = vocab_size, P = n_ctx (positions). Linear weights are
 * Conv1D layout [in, out] row-major (y = x W + b). */
#ifndef NS_TRAIN_PARAMS_H
#define NS_TRAIN_PARAMS_H

#include <stddef.h>
#include <stdint.h>

#include "common/ns_error.h"
#include "model/ns_gpt2.h"

/* Tensors of one layer, in file order (index k of ns_train_params_index). */
enum {
    NS_TRAIN_LN1_W = 0,
    NS_TRAIN_LN1_B, /* ln_1: (C), (C) */
    NS_TRAIN_QKV_W,
    NS_TRAIN_QKV_B, /* attn.c_attn: (C, 3C), (3C); columns q | k | v */
    NS_TRAIN_AP_W,
    NS_TRAIN_AP_B, /* attn.c_proj: (C, C), (C) */
    NS_TRAIN_LN2_W,
    NS_TRAIN_LN2_B, /* ln_2 */
    NS_TRAIN_FC_W,
    NS_TRAIN_FC_B, /* mlp.c_fc: (C, F), (F) */
    NS_TRAIN_FP_W,
    NS_TRAIN_FP_B, /* mlp.c_proj: (F, C), (C) */
    NS_TRAIN_PER_LAYER
};
/* The tensors outside the layers: tensor indices 0..3. */
enum { NS_TRAIN_WTE = 0, NS_TRAIN_WPE, NS_TRAIN_LNF_W, NS_TRAIN_LNF_B, NS_TRAIN_GLOBAL };

/* Parameter groups of the log's gradient norms: per layer ln_1, attn_qkv, attn_proj, ln_2,
 * mlp_fc, mlp_proj (a weight and its bias together: group = k / 2), and outside the layers wte,
 * wpe, ln_f. */
#define NS_TRAIN_LAYER_GROUPS 6
#define NS_TRAIN_GLOBAL_GROUPS 3
extern const char *const ns_train_params_layer_groups[NS_TRAIN_LAYER_GROUPS];
extern const char *const ns_train_params_global_groups[NS_TRAIN_GLOBAL_GROUPS];

typedef struct ns_train_params_tensor {
    char name[64];      /* Hugging Face name without prefix */
    size_t offset;      /* first float in the block */
    size_t numel;
    size_t rows, cols;  /* a matrix (rows, cols), or a vector (numel, 0) */
    int layer;          /* 0-based layer, or -1 outside the layers */
    int group; /* 0..NS_TRAIN_LAYER_GROUPS-1 in a layer, else 0..NS_TRAIN_GLOBAL_GROUPS-1 */
    int decay;          /* 1 for the 2-D weights AdamW decays (not biases, LayerNorms) */
} ns_train_params_tensor;

typedef struct ns_train_params_layout {
    ns_gpt2_config cfg;
    ns_train_params_tensor
        *t; /* NS_TRAIN_GLOBAL + NS_TRAIN_PER_LAYER * n_layer tensors, file order */
    size_t n;
    size_t total;       /* floats in the block (= the parameter count) */
} ns_train_params_layout;

/* The layout of a model of shape cfg (which must pass ns_mkmodel_check). */
int ns_train_params_layout_init(ns_train_params_layout *lay, const ns_gpt2_config *cfg,
                                ns_err *err);
void ns_train_params_layout_free(ns_train_params_layout *lay);

/* Index into lay->t of tensor k (NS_TRAIN_LN1_W ...) of a layer. */
static inline size_t ns_train_params_index(size_t layer, size_t k)
{
    return NS_TRAIN_GLOBAL + NS_TRAIN_PER_LAYER * layer + k;
}

/* params (lay->total floats) := GPT-2's initialisation for seed, exactly the values
 * `normsweep mkmodel --seed` writes. */
int ns_train_params_init_gpt2(const ns_train_params_layout *lay, uint64_t seed, float *params,
                              ns_err *err);

/* params := the weights of the model directory dir, whose shape must be lay's (message names the
 * key that differs). */
int ns_train_params_load_model(const ns_train_params_layout *lay, const char *dir, float *params,
                               ns_err *err);

/* Write params as a model directory (model.safetensors + config.json, Hugging Face layout, each
 * renamed into place). seed is recorded as normsweep_seed, extra_json (may be NULL) as further
 * members of config.json. */
int ns_train_params_write_model(const char *dir, const ns_train_params_layout *lay,
                                const float *params, uint64_t seed, const char *extra_json,
                                ns_err *err);

#endif

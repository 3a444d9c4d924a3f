/* ns_model: a causal language model loaded from a Hugging Face directory -- config.json (whose
 * `model_type` decides the architecture) and its weights (model.safetensors, or shards named by
 * model.safetensors.index.json; F32/F16/BF16, memory-mapped) -- and its forward pass, which
 * yields, layer by layer and per QUERY head, the attention logits and weights of the query rows
 * asked for and the value vectors each query head sees. The rows stage, `dump`, the sweep and
 * `verify` see models only through this interface; GPT-2, the Llama layout (llama, mistral,
 * qwen2) and GPT-NeoX (Pythia) are its implementations (docs/MODELS.md).
 *
 * Shape key: L = sequence length, C = hidden size, H = query heads, KV = key/value heads
 * (H for plain multi-head attention; with grouped-query attention query head h uses key/value
 * head h / (H / KV)), D = head dimension, R = query rows kept. */
#ifndef NS_MODEL_H
#define NS_MODEL_H

#include <stddef.h>
#include <stdint.h>

#include "common/ns_error.h"
#include "model/ns_model_limits.h"

typedef enum ns_arch {
    NS_ARCH_GPT2 = 0,     /* model_type gpt2 */
    NS_ARCH_LLAMA = 1,    /* model_type llama, mistral, qwen2 */
    NS_ARCH_GPT_NEOX = 2  /* model_type gpt_neox */
} ns_arch;

/* "gpt2", "llama" or "gpt_neox": the layout's name (the config's model_type is kept apart). */
const char *ns_arch_name(ns_arch arch);

/* Everything the forward pass and the output's provenance need to know about a model. Plain
 * data (no pointers): the sweep broadcasts it as bytes. */
typedef struct ns_model_config {
    ns_arch arch;
    char model_type[16];   /* config.json's model_type ("gpt2" when absent from a GPT-2 config) */
    size_t n_layer;
    size_t n_head;         /* query heads */
    size_t n_kv_head;      /* key/value heads (num_key_value_heads; = n_head without GQA) */
    size_t d_head;         /* head dimension */
    size_t n_embd;         /* hidden size C */
    size_t n_inner;        /* MLP width */
    size_t n_ctx;          /* longest sequence: n_positions / max_position_embeddings */
    size_t vocab_size;
    int rms_norm;          /* 1: RMSNorm (no bias); 0: LayerNorm */
    double norm_eps;       /* layer_norm_epsilon / rms_norm_eps / layer_norm_eps */
    char hidden_act[24];   /* the MLP's activation as config.json names it */
    int gated_mlp;         /* 1: down(act(gate x) * up x) (SwiGLU); 0: down(act(up x)) */
    int parallel_residual; /* 1: x + attn(ln1 x) + mlp(ln2 x) (GPT-NeoX use_parallel_residual) */
    int qkv_bias, o_bias, mlp_bias; /* which linear maps carry a bias */
    int tied_embeddings;   /* tie_word_embeddings (the LM head is never computed) */
    size_t rotary_dim;     /* dimensions of each head rotated (0: learned positions, GPT-2) */
    double rope_theta;     /* rotary base */
    size_t sliding_window; /* 0: none; else a query sees only its last sliding_window keys, so
                              any L above it is refused (ns_plan_check_model) */
    /* The model's own attention normalizer (normsweep's keys, GPT-2 layout only): kind as
     * ns_normalizer_kind, its parameter (ns_normalizer's one double: ssmax's s or sigmoid's b)
     * and temperature; softmax at 1 for every real model. */
    int attn_norm_kind;
    double attn_norm_s, attn_temperature;
} ns_model_config;

/* Read and validate dir/config.json only (cheap: sweep files are checked against it). Options
 * the forward does not implement are refused (NS_ERR_INVALID) naming the file and the key. */
int ns_model_config_read(const char *dir, ns_model_config *cfg, ns_err *err);

typedef struct ns_model ns_model;

/* Load dir/config.json and the weights: dir/model.safetensors, or (when that file is absent) the
 * shards listed by dir/model.safetensors.index.json. Every file is mapped read-only and shared;
 * F32 tensors are used in place, F16/BF16 converted into one private F32 block. Every tensor the
 * architecture needs is checked (present, dtype, shape from config.json, finite) first. */
int ns_model_load(const char *dir, ns_model **out, ns_err *err);
void ns_model_free(ns_model *model);
const ns_model_config *ns_model_config_of(const ns_model *model);

/* SHA-256 (lowercase hex) identifying the weights the model computes with, of the mapped bytes:
 * a single model.safetensors is that file's SHA-256; shards give the SHA-256 of the text
 * `sha256sum` prints for them, one line "<sha256>  <file name>\n" per shard in byte order of
 * the file names (docs/MODELS.md). */
int ns_model_sha256(const ns_model *model, char hex[65], ns_err *err);

/* The weight file(s) as messages name them: DIR/model.safetensors or
 * DIR/model.safetensors.index.json. */
const char *ns_model_weights_path(const ns_model *model);

/* Which files a process mapped (to check that every MPI rank maps the same ones): a hash of
 * every mapped file's device and inode, and one of their sizes and modification times. */
typedef struct ns_model_files_id {
    uint64_t where;
    uint64_t what;
} ns_model_files_id;
int ns_model_files_ident(const ns_model *model, ns_model_files_id *id, ns_err *err);

/* What the forward pass shows after each layer's attention (valid only during the callback).
 * Logits and weights are kept for the query rows asked for when the workspace was made: row m
 * (m < L) of query head h lies at logits + h * head_stride + row_slot[m] * ld, keys 0 .. m
 * (row_slot[m] == SIZE_MAX: not kept); its entries m+1 .. L-1 are NaN for logits and 0 for
 * weights. With every row kept, head_stride = L * ld and row_slot[m] = m: (H, L, L) when ld = L. */
typedef struct ns_attn_layer_view {
    size_t layer;           /* 0-based */
    size_t n_head, n_kv_head, d_head, L;
    size_t n_rows;          /* rows kept below L */
    const size_t *rows;     /* (n_rows) those rows, ascending */
    const size_t *row_slot; /* (L) slot of row m, or SIZE_MAX */
    size_t ld;              /* floats between kept rows (>= L) */
    size_t head_stride;     /* floats between heads */
    const float *logits;    /* z[m][i] = q_m . k_i / sqrt(D) (after the rotary embedding) */
    const float *weights;   /* the model's attention weights of the row */
    const float *values;    /* (L, KV * D): value vector of token i for key/value head g at
                               values[i * KV * D + g * D .. + D) */
} ns_attn_layer_view;

/* The value vectors query head h sees (those of its key/value group): v_i = p[i * ld .. + D). */
const float *ns_view_head_values(const ns_attn_layer_view *v, size_t h, size_t *ld);

/* Called once per layer, in order. A non-zero return stops the forward pass and is returned. */
typedef int (*ns_attn_layer_fn)(void *user, const ns_attn_layer_view *view, ns_err *err);

typedef struct ns_model_workspace ns_model_workspace;

/* Activations for sequences of up to L_max tokens (one allocation), keeping the logits and
 * weights of rows[0..n_rows) (ascending, no repeats, each < L_max; rows NULL: every row). The
 * causal attention is computed in blocks of query rows, so nothing of size L x L is held per
 * head unless every row is kept. */
int ns_model_workspace_new(const ns_model *model, size_t L_max, const size_t *rows, size_t n_rows,
                           ns_model_workspace **out, ns_err *err);
void ns_model_workspace_free(ns_model_workspace *ws);
/* Bytes ns_model_workspace_new allocates for this shape with n_rows kept rows (in double: an
 * absurd L_max gives a huge number, never a wrapped one). */
double ns_model_workspace_bytes(const ns_model_config *cfg, size_t L_max, size_t n_rows);

/* Floating-point operations of ns_model_forward's matrix products over L tokens through n_layers
 * layers (2 M N K per GEMM; the causal blocks counted as computed): for time estimates. */
double ns_model_forward_flops(const ns_model_config *cfg, size_t L, size_t n_layers);

/* Causal forward over tokens[0..L) through layers 0..n_layers-1 (1 <= n_layers <= n_layer),
 * calling fn (may be NULL) after each layer's attention. Token ids must be < vocab_size and
 * L <= min(L_max, n_ctx). The LM head is never computed. */
int ns_model_forward(const ns_model *model, ns_model_workspace *ws, const int32_t *tokens,
                     size_t L, size_t n_layers, ns_attn_layer_fn fn, void *user, ns_err *err);

/* One forward pass over tokens[0..L) through every layer (L <= n_ctx) checking that the attention
 * logits, weights and value vectors stay finite: NS_ERR_INVALID "a forward pass over L tokens
 * overflows float32: layer l head h: logit z[m][i] = inf is not finite (the model's weights are
 * too large: ...)" naming the largest weight of that layer and the embeddings (ns_model_probe.c).
 * Validation runs it on the first tokens of the first shard. */
int ns_model_probe(const ns_model *model, const int32_t *tokens, size_t L, ns_err *err);

#endif

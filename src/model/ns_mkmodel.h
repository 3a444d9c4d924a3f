/* ns_mkmodel: write a model directory in the Hugging Face layout (config.json and model.safetensors,
 * or shards with model.safetensors.index.json): a GPT-2 with random weights (GPT-2
 * initialisation, deterministic for a seed) or weights a caller supplies (the trainer); or a
 * Llama-layout (llama, qwen2, mistral) or GPT-NeoX model with random weights (ns_mkdecoder_*). */
#ifndef NS_MKMODEL_H
#define NS_MKMODEL_H

#include <signal.h>
#include <stddef.h>
#include <stdint.h>

#include "common/ns_error.h"
#include "common/ns_hooks.h"
#include "model/ns_gpt2.h"
#include "model/ns_model.h"
#include "model/ns_safetensors.h"

/* The longest context a written model may have: the file holds an n_ctx x n_ctx causal mask per
 * layer (Hugging Face's h.N.attn.bias buffers). */
#define NS_MKMODEL_MAX_CTX 65536u

/* The ranges of a written model's shape (common/ns_range.h), for every option that sets one
 * (mkmodel's and train's --layers, --heads, --embd, --ctx/--positions, --vocab, --inner): what
 * config.json may name (the model must load again) and NS_MKMODEL_MAX_CTX. */
extern const ns_range ns_mkmodel_range_layers, ns_mkmodel_range_heads, ns_mkmodel_range_embd,
    ns_mkmodel_range_ctx, ns_mkmodel_range_vocab, ns_mkmodel_range_inner;
/* ... and of the other architectures' options: --ctx of a Llama-layout or GPT-NeoX model (no mask
 * buffers: what config.json may name), --shards, --rope-theta, --rotary-pct, --init-std. */
extern const ns_range ns_mkmodel_range_decoder_ctx, ns_mkmodel_range_shards,
    ns_mkmodel_range_rope_theta, ns_mkmodel_range_rotary_pct, ns_mkmodel_range_init_std;

typedef struct ns_mkmodel_opts {
    ns_gpt2_config config; /* n_inner 0 means 4 * n_embd; ln_eps 0 means 1e-5; attn_temperature
                              0 means 1 (attn_norm zeroed is softmax) */
    uint64_t seed;
    ns_st_dtype dtype;     /* NS_ST_F32, NS_ST_F16 or NS_ST_BF16 */
    const char *extra_json; /* NULL, or a JSON object whose members are added to config.json
                               (a trainer's record); a member named like a written key is refused */
    size_t shards;          /* 0 or 1: model.safetensors; K: K shards and
                               model.safetensors.index.json */
    /* stop and hold only (common/ns_hooks.h). stop non-zero: the writer stops, the temporary is
     * removed and NS_ERR_INTERRUPTED returned. The test-only hold is called with point "temp" and
     * count 0 once model.safetensors's temporary holds its header, before the first tensor is
     * written and the stop flag looked at. */
    ns_hooks hooks;
} ns_mkmodel_opts;

/* The files of a model directory: the weights in one file, or shards named by the index. */
#define NS_MKMODEL_WEIGHTS "model.safetensors"
#define NS_MKMODEL_INDEX "model.safetensors.index.json"
#define NS_MKMODEL_CONFIG "config.json"

/* The name of shard k (0-based) of K: model-0000<k+1>-of-0000K.safetensors. */
void ns_mkmodel_shard_name(size_t k, size_t K, char name[48]);

/* One tensor of the Hugging Face file, in file order. */
typedef struct ns_mkmodel_tensor {
    char name[64];         /* without prefix: "wte.weight", "h.0.attn.c_attn.weight", ... */
    size_t ndim;
    size_t shape[4];
    size_t numel;
    int is_param;          /* 0 for the h.N.attn.bias causal-mask buffers */
} ns_mkmodel_tensor;

/* Fill cfg from a Hugging Face preset name: gpt2, gpt2-medium, gpt2-large, gpt2-xl.
 * NS_ERR_INVALID naming the preset when unknown. */
int ns_mkmodel_preset(const char *name, ns_gpt2_config *cfg, ns_err *err);

/* Check a configuration can be written and loaded again (the same limits as config.json). */
int ns_mkmodel_check(const ns_gpt2_config *cfg, ns_err *err);

/* Number of model parameters (without the attention mask buffers). */
size_t ns_mkmodel_param_count(const ns_gpt2_config *cfg);

/* The tensors of a GPT-2 of shape cfg, in file order (*out: caller frees; *n: their count):
 * wte, wpe, ln_f, then per layer ln_1, attn.c_attn, attn.c_proj, ln_2, mlp.c_fc, mlp.c_proj,
 * attn.bias. */
int ns_mkmodel_tensors(const ns_gpt2_config *cfg, ns_mkmodel_tensor **out, size_t *n, ns_err *err);

/* The F32 values (before rounding to opts->dtype) of elements [start, start + n) (row-major) of
 * tensor `name`, as ns_mkmodel_write writes them: GPT-2's initialisation. Weights N(0, 0.02),
 * c_proj weights N(0, 0.02 / sqrt(2 n_layer)); biases 0; LayerNorm weight 1, bias 0; h.N.attn.bias
 * the causal mask (1 on and below the diagonal). Element i is a pure function of (seed, name, i)
 * (SplitMix64 hashing and Box-Muller), so any chunking gives the same values. NS_ERR_INVALID for
 * an unknown name or a range beyond the tensor. */
int ns_mkmodel_values(const ns_mkmodel_opts *opts, const char *name, size_t start, size_t n,
                      float *out, ns_err *err);

/* Supplies elements [start, start + n) of parameter tensor number `tensor` (an index into
 * ns_mkmodel_tensors's list) for ns_mkmodel_write_from. */
typedef int (*ns_mkmodel_fill_fn)(void *user, size_t tensor, size_t start, size_t n, float *out,
                                  ns_err *err);

/* Create out_dir (mkdir -p) and write out_dir/model.safetensors then out_dir/config.json, each
 * through a temporary name renamed into place, so a failure never leaves a partial file (nor an
 * out_dir this call created); temporaries of dead processes there are removed first (ns_tmp).
 * Tensor order: wte, wpe, ln_f, then per layer ln_1, attn.c_attn, attn.c_proj, ln_2, mlp.c_fc,
 * mlp.c_proj, attn.bias (the mask buffer Hugging Face files carry and the loader ignores). */
int ns_mkmodel_write(const char *out_dir, const ns_mkmodel_opts *opts, ns_err *err);

/* ns_mkmodel_write with the parameters' values taken from fill (a trained model); the mask
 * buffers are generated. config.json also records the attention (normsweep_attn_normalizer,
 * normsweep_attn_temperature, normsweep_ssmax_s for ssmax, normsweep_sigmoid_b for sigmoid) and
 * opts->extra_json. */
int ns_mkmodel_write_from(const char *out_dir, const ns_mkmodel_opts *opts, ns_mkmodel_fill_fn fill,
                          void *user, ns_err *err);

/* ---- Llama layout and GPT-NeoX (ns_mkdecoder.c) ---- */

typedef struct ns_mkdecoder_opts {
    ns_model_config config;  /* arch NS_ARCH_LLAMA (model_type llama, qwen2, mistral) or
                                NS_ARCH_GPT_NEOX; d_head 0: embd / heads; n_kv_head 0: heads */
    double rotary_pct;       /* GPT-NeoX: the rotated fraction of each head (rotary_dim follows) */
    size_t sliding_window;   /* written as config.json's sliding_window (qwen2: with
                                use_sliding_window false; 0: the context); mistral 0: null */
    size_t max_window_layers;/* qwen2 (0: the layer count) */
    double init_std;         /* initializer_range: weights N(0, init_std) */
    int init_full;           /* 1: biases N(0, init_std) and norm gains 1 + N(0, 0.1), norm
                                biases N(0, 0.1) too, so every convention shows (tests); 0: zero
                                biases, unit gains (Hugging Face's initialisation) */
    uint64_t seed;
    ns_st_dtype dtype;
    size_t shards;           /* 0 or 1: model.safetensors; K: K shards and the index */
    ns_hooks hooks;          /* as ns_mkmodel_opts' */
} ns_mkdecoder_opts;

/* The family's defaults for custom sizes (Hugging Face's configuration defaults: RMSNorm eps 1e-6,
 * rope_theta 10000, SiLU, qwen2's q/k/v biases; GPT-NeoX LayerNorm eps 1e-5, GELU, rotary_pct
 * 0.25, parallel residual, biases), sizes zero; model_type for NS_ARCH_LLAMA: llama, qwen2 or
 * mistral. */
void ns_mkdecoder_defaults(ns_arch arch, const char *model_type, ns_mkdecoder_opts *o);
/* A preset of a released model's shape and config values: smollm2-135m, qwen2.5-0.5b,
 * pythia-70m, pythia-160m. */
int ns_mkdecoder_preset(const char *name, ns_mkdecoder_opts *o, ns_err *err);
/* Check (and complete: kv heads, head dim, rotary_dim) the options: the sizes within config.json's
 * limits, heads a multiple of kv heads, head dim even, rotary dimensions even and >= 2, numbers
 * that survive 10 significant digits. NS_ERR_INVALID naming the option. */
int ns_mkdecoder_check(ns_mkdecoder_opts *o, ns_err *err);
/* Parameters written (the LM head counted when untied). */
size_t ns_mkdecoder_param_count(const ns_mkdecoder_opts *o);
/* Create dir (mkdir -p) and write the weights then config.json, every file through a temporary
 * name renamed into place. */
int ns_mkdecoder_write(const char *dir, const ns_mkdecoder_opts *o, ns_err *err);

#endif

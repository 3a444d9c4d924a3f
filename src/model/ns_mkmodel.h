/* ns_mkmodel: write a GPT-2 model directory (config.json + model.safetensors) in the Hugging Face
 * layout: random weights with GPT-2 initialisation, deterministic for a seed, or weights a caller
 * supplies (the trainer). */
#ifndef NS_MKMODEL_H
#define NS_MKMODEL_H

#include <signal.h>
#include <stddef.h>
#include <stdint.h>

#include "common/ns_error.h"
#include "model/ns_gpt2.h"
#include "model/ns_safetensors.h"

/* The longest context a written model may have: the file holds an n_ctx x n_ctx causal mask per
 * layer (Hugging Face's h.N.attn.bias buffers). */
#define NS_MKMODEL_MAX_CTX 65536u

/* The ranges of a written model's shape (common/ns_range.h), for every option that sets one
 * (mkmodel's and train's --layers, --heads, --embd, --ctx/--positions, --vocab, --inner): what
 * config.json may name (the model must load again) and NS_MKMODEL_MAX_CTX. */
extern const ns_range ns_mkmodel_range_layers, ns_mkmodel_range_heads, ns_mkmodel_range_embd,
    ns_mkmodel_range_ctx, ns_mkmodel_range_vocab, ns_mkmodel_range_inner;

typedef struct ns_mkmodel_opts {
    ns_gpt2_config config; /* n_inner 0 means 4 * n_embd; ln_eps 0 means 1e-5; attn_temperature
                              0 means 1 (attn_norm zeroed is softmax) */
    uint64_t seed;
    ns_st_dtype dtype;     /* NS_ST_F32, NS_ST_F16 or NS_ST_BF16 */
    const char *extra_json; /* NULL, or a JSON object whose members are added to config.json
                               (a trainer's record); a member named like a written key is refused */
    const volatile sig_atomic_t *stop; /* NULL, or non-zero when the writer must stop: the
                               temporary is removed and NS_ERR_INTERRUPTED returned */
    /* Test only (docs/RELIABILITY.md, "How the tests hold a run"); NULL: none, the usual case.
     * Called with point "temp" and count 0 once model.safetensors's temporary holds its header,
     * before the first tensor is written and the stop flag looked at. */
    void (*hold)(void *hold_user, const char *point, unsigned long long count);
    void *hold_user;
} ns_mkmodel_opts;

/* The two files of a model directory. */
#define NS_MKMODEL_WEIGHTS "model.safetensors"
#define NS_MKMODEL_CONFIG "config.json"

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
 * normsweep_attn_temperature, normsweep_ssmax_s for ssmax) and opts->extra_json. */
int ns_mkmodel_write_from(const char *out_dir, const ns_mkmodel_opts *opts, ns_mkmodel_fill_fn fill,
                          void *user, ns_err *err);

#endif

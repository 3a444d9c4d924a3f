/* ns_mkmodel: write a random-weight GPT-2 model directory (config.json + model.safetensors) in the
 * Hugging Face layout with GPT-2 initialisation, deterministic for a seed. */
#ifndef NS_MKMODEL_H
#define NS_MKMODEL_H

#include <stddef.h>
#include <stdint.h>

#include "common/ns_error.h"
#include "model/ns_gpt2.h"
#include "model/ns_safetensors.h"

typedef struct ns_mkmodel_opts {
    ns_gpt2_config config; /* n_inner 0 means 4 * n_embd; ln_eps 0 means 1e-5 */
    uint64_t seed;
    ns_st_dtype dtype;     /* NS_ST_F32, NS_ST_F16 or NS_ST_BF16 */
} ns_mkmodel_opts;

/* Fill cfg from a Hugging Face preset name: gpt2, gpt2-medium, gpt2-large, gpt2-xl.
 * NS_ERR_INVALID naming the preset when unknown. */
int ns_mkmodel_preset(const char *name, ns_gpt2_config *cfg, ns_err *err);

/* Check a configuration can be written and loaded again (the same limits as config.json). */
int ns_mkmodel_check(const ns_gpt2_config *cfg, ns_err *err);

/* Number of model parameters (without the attention mask buffers). */
size_t ns_mkmodel_param_count(const ns_gpt2_config *cfg);

/* Create out_dir (mkdir -p) and write out_dir/model.safetensors then out_dir/config.json, each
 * through a temporary name renamed into place, so a failure never leaves a partial file.
 * Tensor order: wte, wpe, ln_f, then per layer ln_1, attn.c_attn, attn.c_proj, ln_2, mlp.c_fc,
 * mlp.c_proj, attn.bias (the mask buffer Hugging Face files carry and the loader ignores). */
int ns_mkmodel_write(const char *out_dir, const ns_mkmodel_opts *opts, ns_err *err);

#endif

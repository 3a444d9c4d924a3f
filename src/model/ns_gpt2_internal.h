/* ns_gpt2_internal: what the GPT-2 parts of src/model share: the config parser over a loaded
 * config.json, and the attention row of a model's own normalizer. Not for use outside src/model.
 *
 * Shape key: C = n_embd, V = vocab_size, P = n_ctx (positions), F = n_inner (4C for GPT-2). */
#ifndef NS_GPT2_INTERNAL_H
#define NS_GPT2_INTERNAL_H

#include <jansson.h>

#include "model/ns_gpt2.h"

/* Validate a GPT-2 config.json already loaded as root (path names it in messages). */
int ns_gpt2_config_parse(const char *path, json_t *root, ns_gpt2_config *cfg, ns_err *err);

/* One causal row of ns_gpt2_attn_weights: w[0..n) = attn_norm(z[0..n) / attn_temperature), with
 * the AVX2 kernels when simd (ns_k_simd()). work holds NS_GPT2_ATTN_WORK(n) doubles. Fails only
 * for an invalid temperature. (ns_gpt2_attn.c) */
int ns_gpt2_attn_row(float *w, const float *z, size_t n, const ns_gpt2_config *cfg, int simd,
                     double *work, ns_err *err);

#endif

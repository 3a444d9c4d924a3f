/* ns_gpt2: the GPT-2 layout's config (Hugging Face's keys plus normsweep's for a model's own
 * attention normalizer and temperature, which `normsweep train` writes) and the model's attention
 * rows. Loading and the forward pass are those of every architecture (model/ns_model.h); this
 * header is what the trainer, which trains GPT-2-layout models, needs besides.
 *
 * Shape key: L = sequence length, C = n_embd, H = n_head, D = C / H (head dim), V = vocab. */
#ifndef NS_GPT2_H
#define NS_GPT2_H

#include <stddef.h>
#include <stdint.h>

#include "norm/ns_normalize.h" /* ns_normalizer */
#include "common/ns_error.h"
#include "common/ns_range.h"
#include "model/ns_model_limits.h"

/* The attention temperature a config.json may name lies in this range (z / T stays finite in
 * double for any float logit, and training at it is meaningful). */
#define NS_GPT2_MIN_TEMPERATURE 1e-6
#define NS_GPT2_MAX_TEMPERATURE 1e6
/* ... and ssmax's s (normsweep_ssmax_s) ... */
#define NS_GPT2_MIN_SSMAX_S 1e-6
#define NS_GPT2_MAX_SSMAX_S 1e6
/* ... and sigmoid's bias b (normsweep_sigmoid_b: the range a sweep file's b has). */
#define NS_GPT2_MIN_SIGMOID_B -1000.0
#define NS_GPT2_MAX_SIGMOID_B 1000.0

/* The same three ranges as declared values (common/ns_range.h), for every option and key that
 * sets them: train's --temperature, --s and --b, a training grid's temperatures: and ssmax_s:. */
extern const ns_range ns_gpt2_range_temperature;
extern const ns_range ns_gpt2_range_ssmax_s;
extern const ns_range ns_gpt2_range_sigmoid_b;

/* The largest shape a GPT-2 config.json may name: every architecture's (model/ns_model.h). */
#define NS_GPT2_MAX_LAYER NS_MODEL_MAX_LAYER
#define NS_GPT2_MAX_HEAD NS_MODEL_MAX_HEAD
#define NS_GPT2_MAX_EMBD NS_MODEL_MAX_EMBD
#define NS_GPT2_MAX_CTX NS_MODEL_MAX_CTX
#define NS_GPT2_MAX_VOCAB NS_MODEL_MAX_VOCAB
#define NS_GPT2_MAX_INNER NS_MODEL_MAX_INNER

typedef struct ns_gpt2_config {
    size_t n_layer;
    size_t n_head;
    size_t n_embd;
    size_t n_ctx;       /* n_positions: longest sequence the position table allows */
    size_t vocab_size;
    size_t n_inner;     /* MLP width; config's n_inner, or 4 * n_embd when null/absent */
    double ln_eps;      /* layer_norm_epsilon */
    /* The model's attention: weights = attn_norm(z / attn_temperature) with z = q.k / sqrt(D).
     * config.json keys normsweep_attn_normalizer (softmax when absent; one of the six
     * ns_normalizer_in_models), normsweep_ssmax_s (only and always for ssmax: attn_norm.s),
     * normsweep_sigmoid_b (only and always for sigmoid: attn_norm.b, a finite constant, the same
     * for every row) and normsweep_attn_temperature (1 when absent); docs/MODEL.md. */
    ns_normalizer attn_norm;
    double attn_temperature;
} ns_gpt2_config;

typedef struct ns_model ns_gpt2_model;

/* The attention temperature in force (attn_temperature, or 1 when it is 0). */
double ns_gpt2_attn_temperature(const ns_gpt2_config *cfg);
/* 1 when the config's attention is GPT-2's own (softmax at temperature 1). */
int ns_gpt2_attn_is_default(const ns_gpt2_config *cfg);

/* A GPT-2-layout model (ns_model_load of a gpt2 config.json; anything else is refused), for the
 * trainer, which starts from one: its GPT-2 config and its parameters by name. */
int ns_gpt2_load(const char *dir, ns_gpt2_model **out, ns_err *err);
void ns_gpt2_free(ns_gpt2_model *model);
const ns_gpt2_config *ns_gpt2_config_of(const ns_gpt2_model *model);

/* The F32 data of a loaded parameter tensor by its Hugging Face name without prefix
 * ("wte.weight", "h.3.mlp.c_fc.bias", ...; *numel receives its size), or NULL when the model has
 * no such parameter (buffers such as h.N.attn.bias are not parameters). */
const float *ns_gpt2_tensor(const ns_gpt2_model *model, const char *name, size_t *numel);

/* The model's attention weights of one head from its logits z (L x L, row m valid for i <= m):
 * w[m][i] = attn_norm(z[m][0..m] / attn_temperature)_i, exactly 0 above the diagonal -- the
 * function the trainer (src/train) uses, and row by row (ns_gpt2_attn_row) the forward pass. work
 * holds NS_GPT2_ATTN_WORK(L) doubles. Fails only for an invalid temperature. */
#define NS_GPT2_ATTN_WORK(L) (4 * (L))
int ns_gpt2_attn_weights(float *w, const float *z, size_t L, const ns_gpt2_config *cfg,
                         double *work, ns_err *err);

#endif

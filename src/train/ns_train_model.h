/* ns_train_model: GPT-2's forward pass with the loss, and its exact backward pass, over one
 * sequence (the trainer's unit of work), in float with OpenBLAS sgemm. The attention normalizer and
 * temperature are the model's own (lay->cfg): the forward uses ns_gpt2_attn_weights -- the very
 * function of the inference forward, so a saved model's attention is the trained one bit for bit --
 * and the backward the normalizer's exact Jacobian (ns_norm_jac_vjp_weights, from the weights).
 *
 * One activation block per work area (llm.c's layout: every activation of every layer kept for
 * the backward), sized for sequences up to T_max tokens. Shape key: T = tokens, C = n_embd,
 * H = n_head, D = C / H, F = n_inner, V = vocab_size. The output layer is the token embedding
 * (tied weights, as GPT-2). */
#ifndef NS_TRAIN_MODEL_H
#define NS_TRAIN_MODEL_H

#include <stddef.h>
#include <stdint.h>

#include "common/ns_error.h"
#include "train/ns_train_params.h"

typedef struct ns_train_model_work_f32 ns_train_model_work_f32;

/* A work area for sequences of up to T_max tokens (T_max <= n_ctx). */
int ns_train_model_work_new_f32(const ns_train_params_layout *lay, size_t T_max,
                                ns_train_model_work_f32 **out, ns_err *err);
void ns_train_model_work_free_f32(ns_train_model_work_f32 *w);

/* Forward over in[0..T) with targets tg[0..T): *loss_sum = sum over t of -log p(tg[t] | in[0..t])
 * (natural log, accumulated in double). With grads non-NULL also the backward: grads (lay->total
 * floats, overwritten) = d loss_sum / d params. Token ids must be < vocab_size. */
int ns_train_model_step_f32(const ns_train_params_layout *lay, const float *params, float *grads,
                            ns_train_model_work_f32 *w, const int32_t *in, const int32_t *tg,
                            size_t T, double *loss_sum, ns_err *err);

/* The attention weights (H, T, T) of layer l from the last step (row m valid for keys <= m). */
const float *ns_train_model_attn_f32(const ns_train_model_work_f32 *w, size_t layer);

#endif

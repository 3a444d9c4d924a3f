/* ns_train_model: GPT-2 forward, loss and backward over one sequence, compiled from one body
 * (ns_train_model_impl.h) in float for the trainer and in double for the gradient checks. */
#include "train/ns_train_model.h"
#include "train/ns_train_model_internal.h"

#include <cblas.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "norm/ns_normalize.h"
#include "norm/ns_norm_jac.h"
#include "norm/ns_norm_row.h"
#include "model/ns_gpt2.h"

#define NS_TRAIN_MODEL_CAT_(a, b) a##b
#define NS_TRAIN_MODEL_CAT(a, b) NS_TRAIN_MODEL_CAT_(a, b)
#define FN(name) NS_TRAIN_MODEL_CAT(name, NS_TRAIN_MODEL_SUFFIX)

#define R float
#define NS_TRAIN_MODEL_F32 1
#define NS_TRAIN_MODEL_SUFFIX _f32
#define GEMM cblas_sgemm
#define EXP expf
#include "train/ns_train_model_impl.h"
#undef R
#undef NS_TRAIN_MODEL_F32
#undef NS_TRAIN_MODEL_SUFFIX
#undef GEMM
#undef EXP

#define R double
#define NS_TRAIN_MODEL_F32 0
#define NS_TRAIN_MODEL_SUFFIX _f64
#define GEMM cblas_dgemm
#define EXP exp
#include "train/ns_train_model_impl.h"
#undef R
#undef NS_TRAIN_MODEL_F32
#undef NS_TRAIN_MODEL_SUFFIX
#undef GEMM
#undef EXP

/* ---- the public entry points (ns_train_model.h, ns_train_model_internal.h) ---- */

int ns_train_model_work_new_f32(const ns_train_params_layout *lay, size_t T_max,
                                ns_train_model_work_f32 **out, ns_err *err)
{
    return tm_work_new_f32(lay, T_max, out, err);
}

void ns_train_model_work_free_f32(ns_train_model_work_f32 *w) { tm_work_free_f32(w); }

int ns_train_model_step_f32(const ns_train_params_layout *lay, const float *params, float *grads,
                            ns_train_model_work_f32 *w, const int32_t *in, const int32_t *tg,
                            size_t T, double *loss_sum, ns_err *err)
{
    return tm_step_f32(lay, params, grads, w, in, tg, T, loss_sum, err);
}

const float *ns_train_model_attn_f32(const ns_train_model_work_f32 *w, size_t layer)
{
    return tm_attn_f32(w, layer);
}

int ns_train_model_work_new_f64(const ns_train_params_layout *lay, size_t T_max,
                                ns_train_model_work_f64 **out, ns_err *err)
{
    return tm_work_new_f64(lay, T_max, out, err);
}

void ns_train_model_work_free_f64(ns_train_model_work_f64 *w) { tm_work_free_f64(w); }

int ns_train_model_step_f64(const ns_train_params_layout *lay, const double *params, double *grads,
                            ns_train_model_work_f64 *w, const int32_t *in, const int32_t *tg,
                            size_t T, double *loss_sum, ns_err *err)
{
    return tm_step_f64(lay, params, grads, w, in, tg, T, loss_sum, err);
}

const double *ns_train_model_attn_f64(const ns_train_model_work_f64 *w, size_t layer)
{
    return tm_attn_f64(w, layer);
}

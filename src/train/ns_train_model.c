/* ns_train_model: GPT-2 forward, loss and backward over one sequence, compiled from one body
 * (ns_train_model_impl.h) in float for the trainer and in double for the gradient checks. */
#include "train/ns_train_model.h"
#include "train/ns_train_model_internal.h"

#include <cblas.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/ns_jacobian.h"
#include "analysis/ns_normalize.h"
#include "model/ns_gpt2.h"

#define NS_TM_CAT_(a, b) a##b
#define NS_TM_CAT(a, b) NS_TM_CAT_(a, b)
#define FN(name) NS_TM_CAT(name, NS_TM_SUFFIX)

#define R float
#define NS_TM_F32 1
#define NS_TM_SUFFIX _f32
#define GEMM cblas_sgemm
#define EXP expf
#include "train/ns_train_model_impl.h"
#undef R
#undef NS_TM_F32
#undef NS_TM_SUFFIX
#undef GEMM
#undef EXP

#define R double
#define NS_TM_F32 0
#define NS_TM_SUFFIX _f64
#define GEMM cblas_dgemm
#define EXP exp
#include "train/ns_train_model_impl.h"
#undef R
#undef NS_TM_F32
#undef NS_TM_SUFFIX
#undef GEMM
#undef EXP

/* ---- the public entry points (ns_train_model.h, ns_train_model_internal.h) ---- */

int ns_tm_work_new_f32(const ns_tp_layout *lay, size_t T_max, ns_tm_work_f32 **out, ns_err *err)
{
    return tm_work_new_f32(lay, T_max, out, err);
}

void ns_tm_work_free_f32(ns_tm_work_f32 *w) { tm_work_free_f32(w); }

int ns_tm_step_f32(const ns_tp_layout *lay, const float *params, float *grads, ns_tm_work_f32 *w,
                   const int32_t *in, const int32_t *tg, size_t T, double *loss_sum, ns_err *err)
{
    return tm_step_f32(lay, params, grads, w, in, tg, T, loss_sum, err);
}

const float *ns_tm_attn_f32(const ns_tm_work_f32 *w, size_t layer) { return tm_attn_f32(w, layer); }

int ns_tm_work_new_f64(const ns_tp_layout *lay, size_t T_max, ns_tm_work_f64 **out, ns_err *err)
{
    return tm_work_new_f64(lay, T_max, out, err);
}

void ns_tm_work_free_f64(ns_tm_work_f64 *w) { tm_work_free_f64(w); }

int ns_tm_step_f64(const ns_tp_layout *lay, const double *params, double *grads, ns_tm_work_f64 *w,
                   const int32_t *in, const int32_t *tg, size_t T, double *loss_sum, ns_err *err)
{
    return tm_step_f64(lay, params, grads, w, in, tg, T, loss_sum, err);
}

const double *ns_tm_attn_f64(const ns_tm_work_f64 *w, size_t layer) { return tm_attn_f64(w, layer); }

/* ns_train_model_internal: the same forward and backward in double precision (dgemm), for the
 * gradient checks of the tests (finite differences need double). Not used by the program. */
#ifndef NS_TRAIN_MODEL_INTERNAL_H
#define NS_TRAIN_MODEL_INTERNAL_H

#include "train/ns_train_model.h"

typedef struct ns_train_model_work_f64 ns_train_model_work_f64;

int ns_train_model_work_new_f64(const ns_train_params_layout *lay, size_t T_max,
                                ns_train_model_work_f64 **out, ns_err *err);
void ns_train_model_work_free_f64(ns_train_model_work_f64 *w);
int ns_train_model_step_f64(const ns_train_params_layout *lay, const double *params, double *grads,
                            ns_train_model_work_f64 *w, const int32_t *in, const int32_t *tg,
                            size_t T, double *loss_sum, ns_err *err);
const double *ns_train_model_attn_f64(const ns_train_model_work_f64 *w, size_t layer);

#endif

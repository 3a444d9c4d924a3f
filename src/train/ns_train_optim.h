/* ns_train_optim: the optimisation step: the learning-rate schedule (linear warmup, then cosine
 * decay to a floor), the gradient norm and its clipping, and AdamW (decoupled weight decay on the
 * 2-D weight matrices only). Arithmetic in double, parameters and moments stored in float; the same
 * operations in the same order on every rank, so every rank holds the same bits. */
#ifndef NS_TRAIN_OPTIM_H
#define NS_TRAIN_OPTIM_H

#include <stddef.h>
#include <stdint.h>

#include "train/ns_train_params.h"

typedef struct ns_train_optim_hparams {
    double lr;           /* peak learning rate */
    double lr_min_frac;  /* final learning rate = lr * lr_min_frac */
    uint64_t warmup;     /* steps of linear warmup */
    uint64_t steps;      /* total steps (the cosine reaches its floor at the last one) */
    double beta1, beta2, eps, weight_decay;
    double clip;         /* clip the gradient's global norm to this (0: no clipping) */
} ns_train_optim_hparams;

/* Learning rate of step s (0-based): lr (s + 1) / warmup during the warmup, then
 * lr_min + (lr - lr_min) (1 + cos(pi p)) / 2 with p = (s - warmup) / max(1, steps - 1 - warmup). */
double ns_train_optim_lr(const ns_train_optim_hparams *h, uint64_t s);

/* Sum of squares of g[0..n) in double, in index order. */
double ns_train_optim_sumsq(const float *g, size_t n);

/* One AdamW step t (1-based) over the whole block with gradient g * gscale (gscale folds the mean
 * over tokens and the clipping factor): m, v updated, then
 * p -= lr (mhat / (sqrt(vhat) + eps) + wd p), wd only for tensors with decay set. */
void ns_train_optim_adamw(const ns_train_params_layout *lay, const ns_train_optim_hparams *h,
                          uint64_t t, double lr, double gscale, float *params, const float *g,
                          float *m, float *v);

#endif

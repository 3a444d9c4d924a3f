/* ns_train_optim: learning-rate schedule, gradient norm, AdamW (see ns_train_optim.h). */
#include "train/ns_train_optim.h"

#include <math.h>

double ns_train_optim_lr(const ns_train_optim_hparams *h, uint64_t s)
{
    if (s < h->warmup)
        return h->lr * (double)(s + 1) / (double)h->warmup;
    double span = h->steps > h->warmup + 1 ? (double)(h->steps - 1 - h->warmup) : 1.0;
    double p = (double)(s - h->warmup) / span;
    if (p > 1.0)
        p = 1.0;
    double lo = h->lr * h->lr_min_frac;
    return lo + (h->lr - lo) * 0.5 * (1.0 + cos(M_PI * p));
}

double ns_train_optim_sumsq(const float *g, size_t n)
{
    double s = 0.0;
    for (size_t i = 0; i < n; i++)
        s += (double)g[i] * g[i];
    return s;
}

void ns_train_optim_adamw(const ns_train_params_layout *lay, const ns_train_optim_hparams *h,
                          uint64_t t, double lr, double gscale, float *params, const float *g,
                          float *m, float *v)
{
    double c1 = 1.0 - pow(h->beta1, (double)t), c2 = 1.0 - pow(h->beta2, (double)t);
    for (size_t k = 0; k < lay->n; k++) {
        const ns_train_params_tensor *tt = &lay->t[k];
        double wd = tt->decay ? h->weight_decay : 0.0;
        for (size_t i = tt->offset; i < tt->offset + tt->numel; i++) {
            double gi = (double)g[i] * gscale;
            double mi = h->beta1 * m[i] + (1.0 - h->beta1) * gi;
            double vi = h->beta2 * v[i] + (1.0 - h->beta2) * gi * gi;
            m[i] = (float)mi;
            v[i] = (float)vi;
            double step = (mi / c1) / (sqrt(vi / c2) + h->eps) + wd * params[i];
            params[i] = (float)(params[i] - lr * step);
        }
    }
}

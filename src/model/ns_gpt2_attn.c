/* ns_gpt2_attn: a model's own attention normalizer over the causal rows of one head, for any
 * normalizer and temperature named in config.json. GPT-2's softmax at T = 1 is the float kernel
 * ns_k_softmax_row (ns_model_kernels.c); any other is computed in double by the analysis
 * normalizers (ns_norm_weights, src/norm: the same functions the metrics and the trainer use; for
 * softmax1 and sigmoid the weights a themselves, which need not sum to 1) and rounded to float.
 * The forward pass and the trainer both come through here, so a trained model's inference
 * weights are the trainer's. */
#include "model/ns_gpt2_internal.h"
#include "model/ns_model_kernels.h"
#include "norm/ns_norm_row.h"

#include <string.h>

int ns_gpt2_attn_row(float *w, const float *z, size_t n, const ns_gpt2_config *cfg, int simd,
                     double *work, ns_err *err)
{
    if (ns_gpt2_attn_is_default(cfg)) {
        ns_k_softmax_row(w, z, n, simd);
        return NS_OK;
    }
    double *zd = work, *ad = work + n, *scratch = work + 2 * n;
    for (size_t i = 0; i < n; i++)
        zd[i] = z[i];
    NS_TRY(ns_norm_weights(&cfg->attn_norm, zd, n, ns_gpt2_attn_temperature(cfg), ad, scratch,
                           err));
    for (size_t i = 0; i < n; i++)
        w[i] = (float)ad[i];
    return NS_OK;
}

int ns_gpt2_attn_weights(float *w, const float *z, size_t L, const ns_gpt2_config *cfg,
                         double *work, ns_err *err)
{
    const int simd = ns_k_simd();
    for (size_t m = 0; m < L; m++) {
        NS_TRY(ns_gpt2_attn_row(w + m * L, z + m * L, m + 1, cfg, simd, work, err));
        if (m + 1 < L)
            memset(w + m * L + m + 1, 0, (L - m - 1) * sizeof(float));
    }
    return NS_OK;
}

/* ns_gpt2_attn: a model's own attention normalizer over the causal rows of one head, for any
 * normalizer and temperature named in config.json (GPT-2's softmax at T = 1 keeps the float
 * kernel of ns_gpt2_forward.c). Each row is normalized in double by the analysis normalizers
 * (src/analysis/ns_normalize.c, the same functions the metrics and the trainer use) and rounded
 * to float. */
#include "model/ns_gpt2_internal.h"

#include <string.h>

int ns_gpt2_attn_rows(float *w, const float *z, size_t L, const ns_normalizer *f, double T,
                      double *work, ns_err *err)
{
    double *zd = work, *ad = work + L, *scratch = work + 2 * L;
    for (size_t m = 0; m < L; m++) {
        const float *zr = z + m * L;
        float *wr = w + m * L;
        size_t n = m + 1;
        for (size_t i = 0; i < n; i++)
            zd[i] = zr[i];
        NS_TRY(ns_normalize(f, zd, n, T, ad, scratch, err));
        for (size_t i = 0; i < n; i++)
            wr[i] = (float)ad[i];
        if (n < L)
            memset(wr + n, 0, (L - n) * sizeof(float));
    }
    return NS_OK;
}

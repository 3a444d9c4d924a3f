/* ns_topn: ranking of attention weights for the top-N selection (METRICS.md section 3). */
#include "analysis/ns_topn.h"

#include <math.h>
#include <stdlib.h>

static int ns_rank_cmp(const void *a, const void *b)
{
    const ns_rank_item *x = a, *y = b;
    if (x->key > y->key)
        return -1;
    if (x->key < y->key)
        return 1;
    return (x->idx > y->idx) - (x->idx < y->idx);
}

int ns_topn_rank_is_T_free(const ns_normalizer *f)
{
    return (f->kind == NS_NORM_SOFTMAX || f->kind == NS_NORM_SSMAX) && f->view == NS_VIEW_ALL;
}

void ns_topn_rank_row(size_t *order, ns_rank_item *scratch, const ns_normalizer *f,
                      const double *z, const double *alpha, size_t L, double T)
{
    if (ns_topn_rank_is_T_free(f)) {
        double c = ns_normalizer_inv_temp(f, L, T);
        double sgn = c > 0.0 ? 1.0 : (c < 0.0 ? -1.0 : 0.0);
        for (size_t i = 0; i < L; i++) {
            scratch[i].key = sgn * z[i] + 0.0; /* + 0.0: -0.0 and 0.0 compare equal anyway */
            scratch[i].idx = i;
        }
    } else {
        for (size_t i = 0; i < L; i++) {
            scratch[i].key = alpha[i];
            scratch[i].idx = i;
        }
    }
    qsort(scratch, L, sizeof *scratch, ns_rank_cmp);
    for (size_t i = 0; i < L; i++)
        order[i] = scratch[i].idx;
}

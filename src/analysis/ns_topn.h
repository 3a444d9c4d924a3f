/* ns_topn: the top-N ranking of a row (largest key first, ties by the smaller index). */
#ifndef NS_TOPN_H
#define NS_TOPN_H

#include <stddef.h>

#include "norm/ns_normalize.h"

typedef struct ns_rank_item {
    double key;
    size_t idx;
} ns_rank_item;

/* The ranking rule of METRICS.md section 3 for a normalizer: order[0..L) lists the indices of
 * alpha = F(z / T) from the largest weight down, ties by the smaller index.
 *   softmax, ssmax: ranked by the exact log-weight c * z_i (c = 1/T or s log(L) / T), i.e. by z
 *     in the direction of sign(c); this equals the order of alpha wherever alpha is
 *     representable and stays correct where the tail underflows to 0 (T -> 0).
 *   sparsemax, entmax15: ranked by alpha itself (weights outside the support are exactly 0 and
 *     tie, so they follow by index).
 * scratch holds L items. */
void ns_topn_rank_row(size_t *order, ns_rank_item *scratch, const ns_normalizer *f,
                      const double *z, const double *alpha, size_t L, double T);

/* 1 when the normalizer's ranking does not depend on T (softmax, ssmax; not their sink-excluded
 * views, ranked by log p like a normalizer off the simplex). */
int ns_topn_rank_is_T_free(const ns_normalizer *f);

#endif

/* ns_norm_row: one row of any normalizer as issue 36's metrics need it -- the unnormalised
 * weights a = F(z / T), the row mass m = sum_j a_j, the shape p = a / m that the theorems need,
 * log p (their Jacobians: ns_norm_jac.h). docs/METRICS.md section 2 defines each normalizer; the
 * row analysis (analysis/ns_row.c) uses it for the normalizers off the simplex.
 *
 * A row is the keys 0..L-1 of one query, in key order, the query's own key last (stick-breaking
 * depends on that order; the others do not). */
#ifndef NS_NORM_ROW_H
#define NS_NORM_ROW_H

#include <stddef.h>

#include "common/ns_error.h"
#include "norm/ns_normalize.h"

typedef struct ns_norm_row {
    double *a;    /* [L] the normalizer's weights, unnormalised (on the simplex for the first five) */
    double *p;    /* [L] a / m; all 0 when the row is empty (log_m = -inf) */
    double *logp; /* [L] log p, -inf where p = 0 exactly; NULL: not computed */
    double m;     /* sum_j a_j in key order; 1 by definition on the simplex. It may underflow to
                   * 0 (or overflow) where log_m is finite */
    double log_m; /* log of the mass, computed in log space: finite whenever some a_j > 0
                   * mathematically; -inf when every a_j is 0 (an empty row, e.g. softpick with
                   * every z <= 0): the shape metrics skip it and count it */
    double *loga; /* [L] log a, -inf where a = 0 exactly (ns_log_weights on the simplex); NULL:
                   * not computed (last, so {a, p, logp, m, log_m} leaves it NULL).
                   * ns_norm_row_view takes it */
} ns_norm_row;

/* Doubles of work ns_norm_row_eval needs for L keys (3 L). */
size_t ns_norm_row_work(size_t L);

/* r->a, r->p, r->logp and r->loga (each when not NULL), r->m and r->log_m for the row z[0..L)
 * at T; every normalizer (its view is not looked at: this is the row over all L keys).
 * NS_ERR_INVALID for L == 0, T not finite and > 0, a bad parameter, or z / T not finite. */
int ns_norm_row_eval(const ns_normalizer *f, const double *z, size_t L, double T, ns_norm_row *r,
                     double *work, ns_err *err);

/* The sink-excluded view (docs/METRICS.md section 8.2) of a row of L >= 1 keys whose weights a
 * and log a (la, -inf where a_j = 0) ns_norm_row_eval computed: r->a = a[1..L) (L - 1 entries),
 * r->m = their sum in key order, r->log_m in log space, r->p and r->logp (when not NULL) as
 * ns_norm_row_eval forms them off the simplex -- a / m, or from the logs where m under- or
 * overflows. log_m = -inf (an empty view) when every a_j, j >= 1, is 0, and when L = 1. */
void ns_norm_row_view(const double *a, const double *la, size_t L, ns_norm_row *r);

/* a[0..L) = F(z / T), the weights alone (what attention multiplies the values by), for every
 * normalizer: ns_normalize's bits on the simplex, ns_norm_row_eval's a off it (no mass, no p).
 * A model's attention row (model/ns_gpt2_attn.c) and the trainer's double pass use it. work holds
 * 2 L doubles. The errors of ns_norm_row_eval. */
int ns_norm_weights(const ns_normalizer *f, const double *z, size_t L, double T, double *a,
                    double *work, ns_err *err);

#endif

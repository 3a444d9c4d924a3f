/* ns_test_kernels: does the fast kernel of the N-dependent metrics (analysis/ns_row_fast.c:
 * incremental over N, through the Gram matrix) agree with the reference kernel
 * (analysis/ns_row_ref.c: every definition evaluated directly)? Counts must be equal; every
 * continuous value must lie within a bound derived per cell from a running error analysis of the
 * two evaluations, computed here from the row itself. Header-only (test_analysis, test_rows).
 *
 * The bound. u = 2^-53 and gamma = (L + d + 16) u, which covers every gamma_k below (k <= N + d +
 * 8 and k <= L + d + 8, N < L). Both kernels evaluate the same double inputs (x_i, alpha_i,
 * xbar); each is within the bound below of the exact value of its inputs, and the test allows the
 * sum of the two.
 *
 * Squared distances D_i = ||a_i x_i - s||^2, s = sum_{j in S} a_j x_j (S = the top-N set, or the
 * random set of d_random). Let W = sum_{j in S} a_j ||x_j|| and A_i = (a_i ||x_i|| + W)^2;
 * Cauchy-Schwarz bounds every |x_j . x_k| by ||x_j|| ||x_k||, so A_i bounds every term below.
 *   fast: D_i = a_i^2 g_i - 2 a_i sx_i + ss, sx_i = sum_j a_j G_ij (G from dsyrk, each entry
 *     within gamma_d ||x_i|| ||x_j||; N-term sum: gamma_N), ss = ||s||^2 updated N times by
 *     2 a_j sx_j + a_j^2 g_j: |error| <= gamma (a_i^2 g_i + 2 a_i ||x_i|| W + 3 W^2 + A_i)
 *     <= 4 gamma A_i. Where its cancellation guard recomputes D_i directly, the value is the
 *     reference's.
 *   reference: s_k within gamma_N sum_j a_j |x_jk|, then sum_k (a_i x_ik - s_k)^2:
 *     |error| <= 2 gamma ||a_i x_i - s|| sqrt(A_i) + gamma_d D_i <= 3 gamma A_i.
 * So both computed D_i are within eta_i = 4 gamma A_i of the exact D_i, and the two distances
 * differ by |sqrt(D_f) - sqrt(D_r)| = |D_f - D_r| / (sqrt(D_f) + sqrt(D_r)) <= eta_i /
 * sqrt(D_i - eta_i) when D_i > 2 eta_i, and by at most sqrt(2 eta_i) always. D_i itself is
 * evaluated here in long double (its error, ~1e-19 A_i, is far below eta_i).
 *   distance, distance_random: the sum of those over i outside S, plus 2 gamma d for the two
 *     sums' own rounding (both sum in index order).
 *   r = min over i outside I of the distances: |r_f - r_r| <= delta_r = max of the per-key bounds.
 *   ns_lower = 1 - X / (r N), X = sum_i xi_i computed by the same code from the same inputs:
 *     |delta| <= (1 - ns_lower) delta_r / (r - delta_r) + 8 u.
 *   ns_upper = mean of exp(-(r - xi_i)^2 / (16 M^2)), whose derivative in r is at most
 *     sqrt(8) e^(-1/2) / (8 M) = 0.2145 / M: |delta| <= 0.2145 delta_r / M + 8 u.
 *   distance_d1: both take max ||x_i - x_j|| over i outside I, j in I, and recompute the chosen
 *     pair's distance by the same code. The fast kernel chooses on Gram values (each squared
 *     distance within 4 gamma_d M^2, so its pair may be up to 8 gamma_d M^2 shorter), the
 *     reference on direct values (within gamma_d D each, D <= 4 M^2): |d1_f^2 - d1_r^2| <=
 *     20 gamma_d M^2, so |d1_f - d1_r| <= 20 gamma_d M^2 / (d1_f + d1_r).
 *   distance_bound = tail d1 + maxn2 (abar (L - N) - tail), tail, abar and maxn2 summed the same
 *     way by both: tail times d1's bound plus 4 u of the two terms.
 *   distance_expected = (L - N)/L sum_i ||(a_i + c) x_i - xbar||^2, c = N/(L - 1): the fast kernel
 *     evaluates P0 + c P1 + c^2 P2 (the sums sum a^2 g, ||xbar||^2, sum a g, sum x_i . xbar,
 *     sum g, each within gamma of its terms' magnitudes, and the expansion's own identity error
 *     2 ||xbar|| gamma sum a_i ||x_i||), the reference term by term (3 gamma of each term's
 *     magnitude): with Q = sum_i ((a_i + c) ||x_i|| + ||xbar||)^2 + 2 ||xbar|| sum_i a_i ||x_i||,
 *     both are within 2 gamma Q; bound (L - N)/L 4 gamma Q + 4 u |value|.
 *   ns_frac: a count: equal.
 *   jac_fd (softmax family): both compute alpha'_i = w_i / S, w_i = exp(y_i - max y), the
 *     reference with libm's exp summing in index order, the fast kernel with its own exp (within
 *     2 ulp) summing in four lanes: each alpha'_i within (L + 8) u relative in either, so the
 *     difference vector e has ||e|| <= 2 (L + 8) u ||alpha'|| <= 2 (L + 8) u; the two norms of
 *     alpha' - alpha differ by at most that plus their own summation error (L + 8) u times the
 *     norm, so per direction |g_f - g_r| <= 4 (L + 8) u / eps + 2 (L + 8) u g, and so does the
 *     maximum over directions. (sparsemax and entmax15 share one code path: bitwise.)
 * delta, jac_exact, jac_lemma2 and entropy(_norm) come from code the kernels share: bitwise
 * equal. Where N >= the row's keys both hold NaN. */
#ifndef NS_TEST_KERNELS_H
#define NS_TEST_KERNELS_H

#include <float.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/ns_metrics.h"
#include "norm/ns_normalize.h"
#include "analysis/ns_row.h"
#include "analysis/ns_topn.h"

typedef struct kernel_agreement {
    size_t cells;             /* (row, T, N) cells with values */
    size_t skipped;           /* (row, T, N) cells both kernels skipped (N >= keys) */
    size_t bad;               /* values outside their bound, unequal counts or bits */
    size_t guarded;           /* cells whose distance bound used the sqrt(2 eta) branch */
    double worst[NS_M_COUNT]; /* max over cells of |fast - ref| / bound */
} kernel_agreement;

#define KA_U (DBL_EPSILON / 2.0)

/* One comparison: fails when the values differ by more than tol (NaN only matches NaN). */
static inline void ka_check(kernel_agreement *ka, ns_metric_id id, double f, double r, double tol,
                            const char *where)
{
    if (isnan(f) || isnan(r) || isinf(f) || isinf(r)) {
        int same = (isnan(f) && isnan(r)) || f == r;
        if (!same && ka->bad++ < 10)
            fprintf(stderr, "kernels %s %s: fast %.17g reference %.17g\n", where,
                    ns_metric_info_of(id)->name, f, r);
        return;
    }
    double diff = fabs(f - r);
    if (diff > tol) {
        if (ka->bad++ < 10)
            fprintf(stderr, "kernels %s %s: fast %.17g reference %.17g differ by %.3g > bound %.3g\n",
                    where, ns_metric_info_of(id)->name, f, r, diff, tol);
        return;
    }
    double ratio = diff == 0.0 ? 0.0 : diff / tol;
    if (ratio > ka->worst[id])
        ka->worst[id] = ratio;
}

/* The scratch of one row. */
typedef struct ka_row {
    size_t L, d;
    double *X, *xn, *z, *alpha, *work, *xbar;
    size_t *order, *perm;
    ns_rank_item *items;
    unsigned char *mark;
    long double *s;
} ka_row;

/* Bounds for the distance-type sum over i outside sel[0..N): *tol_sum for the sum, *dr for its
 * minimum r, *rmin = r (long double evaluation). Returns 1 when the sqrt(2 eta) branch was used. */
static inline int ka_dist_bound(const ka_row *w, const size_t *sel, size_t N, double gam,
                                double *tol_sum, double *dr, double *rmin)
{
    size_t L = w->L, d = w->d;
    long double Wt = 0.0L;
    memset(w->mark, 0, L);
    for (size_t k = 0; k < d; k++)
        w->s[k] = 0.0L;
    for (size_t q = 0; q < N; q++) {
        size_t j = sel[q];
        w->mark[j] = 1;
        Wt += (long double)w->alpha[j] * w->xn[j];
        for (size_t k = 0; k < d; k++)
            w->s[k] += (long double)w->alpha[j] * w->X[j * d + k];
    }
    double sum_b = 0.0, max_b = 0.0, dsum = 0.0, rm = INFINITY;
    int guarded = 0;
    for (size_t i = 0; i < L; i++) {
        if (w->mark[i])
            continue;
        long double D = 0.0L;
        for (size_t k = 0; k < d; k++) {
            long double t = (long double)w->alpha[i] * w->X[i * d + k] - w->s[k];
            D += t * t;
        }
        double A = (double)(((long double)w->alpha[i] * w->xn[i] + Wt) *
                            ((long double)w->alpha[i] * w->xn[i] + Wt));
        double eta = 4.0 * gam * A, Dd = (double)D, b;
        if (Dd > 2.0 * eta) {
            b = eta / sqrt(Dd - eta);
        } else {
            b = sqrt(2.0 * eta);
            guarded = 1;
        }
        sum_b += b;
        if (b > max_b)
            max_b = b;
        double di = sqrt(Dd);
        dsum += di;
        if (di < rm)
            rm = di;
    }
    *tol_sum = sum_b + 2.0 * gam * dsum;
    *dr = max_b;
    *rmin = rm;
    return guarded;
}

/* Row m's vectors (as ns_analyze_head prepares them) into w; returns M. */
static inline double ka_prepare_row(ka_row *w, const ns_analysis_params *p, const ns_head_input *in,
                                    size_t m)
{
    size_t L = m + 1, d = in->d;
    double M = 0.0;
    for (size_t i = 0; i < L; i++) {
        double nrm2 = 0.0, *x = w->X + i * d;
        for (size_t k = 0; k < d; k++) {
            x[k] = (double)in->values[i * in->values_ld + k];
            nrm2 += x[k] * x[k];
        }
        double nrm = sqrt(nrm2);
        if (p->sphere && nrm > 0.0) {
            for (size_t k = 0; k < d; k++)
                x[k] /= nrm;
            nrm2 = 0.0;
            for (size_t k = 0; k < d; k++)
                nrm2 += x[k] * x[k];
            nrm = sqrt(nrm2);
        }
        w->xn[i] = nrm;
        if (nrm > M)
            M = nrm;
        w->z[i] = (double)in->logits[m * in->logits_ld + i];
    }
    return p->sphere ? 1.0 : M;
}

/* Compare one (row, T, N) cell of the two records. */
static inline void ka_cell(kernel_agreement *ka, const ka_row *w, const ns_row_layout *lay,
                           const double *rf, const double *rr, size_t t, size_t n, size_t N,
                           double M, const char *where)
{
    size_t L = w->L, d = w->d;
    double gam = (double)(L + d + 16) * KA_U;
#define KA_V(rec, id) ns_row_value(lay, rec, L, id, t, n, 0)
    double tol_d, dr, r, tol_dr, dr2, r2;
    ka->guarded += ka_dist_bound(w, w->order, N, gam, &tol_d, &dr, &r);
    ka_dist_bound(w, w->perm, N, gam, &tol_dr, &dr2, &r2);
    ka_check(ka, NS_M_DISTANCE, KA_V(rf, NS_M_DISTANCE), KA_V(rr, NS_M_DISTANCE), tol_d, where);
    ka_check(ka, NS_M_DISTANCE_RANDOM, KA_V(rf, NS_M_DISTANCE_RANDOM),
             KA_V(rr, NS_M_DISTANCE_RANDOM), tol_dr, where);
    double lo = KA_V(rr, NS_M_NS_LOWER);
    double tol_lo = r > dr ? fabs(1.0 - lo) * dr / (r - dr) + 8.0 * KA_U : INFINITY;
    ka_check(ka, NS_M_NS_LOWER, KA_V(rf, NS_M_NS_LOWER), lo, tol_lo, where);
    ka_check(ka, NS_M_NS_UPPER, KA_V(rf, NS_M_NS_UPPER), KA_V(rr, NS_M_NS_UPPER),
             0.2145 * dr / M + 8.0 * KA_U, where);
    double f_ns = KA_V(rf, NS_M_NS_FRAC), r_ns = KA_V(rr, NS_M_NS_FRAC);
    ka_check(ka, NS_M_NS_FRAC, f_ns, r_ns, 0.0, where);
    /* d1 and the bound */
    double gd = (double)(d + 8) * KA_U, d1f = KA_V(rf, NS_M_DISTANCE_D1);
    double d1r = KA_V(rr, NS_M_DISTANCE_D1);
    double tol_d1 = d1f + d1r > 0.0 ? 20.0 * gd * M * M / (d1f + d1r) : 0.0;
    ka_check(ka, NS_M_DISTANCE_D1, d1f, d1r, tol_d1, where);
    double tail = 0.0, abar = 0.0, maxn2 = 0.0;
    memset(w->mark, 0, L);
    for (size_t q = 0; q < N; q++) {
        w->mark[w->order[q]] = 1;
        abar += w->alpha[w->order[q]];
        maxn2 = fmax(maxn2, w->xn[w->order[q]] * w->xn[w->order[q]]);
    }
    for (size_t i = 0; i < L; i++)
        if (!w->mark[i])
            tail += w->alpha[i];
    double terms = fabs(tail * d1r) + fabs(maxn2 * (abar * (double)(L - N) - tail));
    ka_check(ka, NS_M_DISTANCE_BOUND, KA_V(rf, NS_M_DISTANCE_BOUND),
             KA_V(rr, NS_M_DISTANCE_BOUND), tail * tol_d1 * (1.0 + 4.0 * KA_U) + 4.0 * KA_U * terms,
             where);
    /* d_expected */
    double c = (double)N / (double)(L - 1), xbn = 0.0, Q = 0.0, aw = 0.0;
    for (size_t k = 0; k < d; k++)
        xbn += w->xbar[k] * w->xbar[k];
    xbn = sqrt(xbn);
    for (size_t i = 0; i < L; i++) {
        double t1 = (w->alpha[i] + c) * w->xn[i] + xbn;
        Q += t1 * t1;
        aw += w->alpha[i] * w->xn[i];
    }
    Q += 2.0 * xbn * aw;
    double ex = KA_V(rr, NS_M_DISTANCE_EXPECTED);
    ka_check(ka, NS_M_DISTANCE_EXPECTED, KA_V(rf, NS_M_DISTANCE_EXPECTED), ex,
             (double)(L - N) / (double)L * 4.0 * gam * Q + 4.0 * KA_U * fabs(ex), where);
#undef KA_V
}

/* The metrics both kernels share must be bitwise equal. */
static inline void ka_shared(kernel_agreement *ka, const ns_row_layout *lay, const double *rf,
                             const double *rr, const char *where)
{
    static const ns_metric_id shared[] = {NS_M_DELTA, NS_M_JAC_EXACT, NS_M_JAC_LEMMA2,
                                          NS_M_ENTROPY, NS_M_ENTROPY_NORM};
    for (size_t k = 0; k < sizeof shared / sizeof shared[0]; k++) {
        size_t n = 1;
        switch (ns_metric_info_of(shared[k])->dims) {
        case NS_DIMS_T: n = lay->nT; break;
        case NS_DIMS_TE: n = lay->nT * lay->neps; break;
        default: break;
        }
        size_t off = lay->offset[shared[k]];
        for (size_t q = off; q < off + n; q++)
            if (!(rf[q] == rr[q] || (isnan(rf[q]) && isnan(rr[q])))) {
                if (ka->bad++ < 10)
                    fprintf(stderr, "kernels %s %s: shared value differs: %.17g vs %.17g\n",
                            where, ns_metric_info_of(shared[k])->name, rf[q], rr[q]);
            }
    }
}

/* jac_fd within the bound above (bitwise for the normalizers without a fast path). */
static inline void ka_jac_fd(kernel_agreement *ka, const ns_analysis_params *p,
                             const ns_row_layout *lay, const double *rf, const double *rr,
                             size_t L, const char *where)
{
    int own = ns_topn_rank_is_T_free(&p->normalizer);
    for (size_t t = 0; t < lay->nT; t++)
        for (size_t e = 0; e < lay->neps; e++) {
            size_t q = ns_row_index(lay, NS_M_JAC_FD, t, 0, e);
            double g = fabs(rr[q]), k = (double)(L + 8) * KA_U;
            double tol = own ? 4.0 * k / p->eps[e] + 2.0 * k * g : 0.0;
            ka_check(ka, NS_M_JAC_FD, rf[q], rr[q], tol, where);
        }
}

/* Compare the records of rows ms[0..n_rows) of one head (fast[k], ref[k] at k * lay->total), all
 * laid out by lay, analysed with p and key from in. Returns 0, or -1 on allocation failure. */
static inline int ka_compare_head(kernel_agreement *ka, const ns_analysis_params *p,
                                  const ns_head_key *key, const ns_head_input *in,
                                  const size_t *ms, size_t n_rows, const ns_row_layout *lay,
                                  const double *fast, const double *ref)
{
    size_t Lm = in->L_max, d = in->d;
    ka_row w = {0};
    w.d = d;
    w.X = malloc(Lm * d * sizeof *w.X);
    w.xn = malloc(Lm * sizeof *w.xn);
    w.z = malloc(Lm * sizeof *w.z);
    w.alpha = malloc(Lm * sizeof *w.alpha);
    w.work = malloc((2 * Lm + 2) * sizeof *w.work);
    w.xbar = malloc(d * sizeof *w.xbar);
    w.order = malloc(Lm * sizeof *w.order);
    w.perm = malloc(Lm * sizeof *w.perm);
    w.items = malloc(Lm * sizeof *w.items);
    w.mark = malloc(Lm);
    w.s = malloc(d * sizeof *w.s);
    int rc = -1;
    if (!w.X || !w.xn || !w.z || !w.alpha || !w.work || !w.xbar || !w.order || !w.perm ||
        !w.items || !w.mark || !w.s)
        goto done;
    for (size_t r = 0; r < n_rows; r++) {
        size_t m = ms[r], L = m + 1;
        const double *rf = fast + r * lay->total, *rr = ref + r * lay->total;
        char where[160];
        snprintf(where, sizeof where, "[%s shard %llu layer %u head %u row %zu]",
                 ns_normalizer_name(p->normalizer.kind), (unsigned long long)key->shard,
                 key->layer, key->head, m);
        ka_shared(ka, lay, rf, rr, where);
        ka_jac_fd(ka, p, lay, rf, rr, L, where);
        w.L = L;
        double M = ka_prepare_row(&w, p, in, m);
        for (size_t t = 0; t < p->nT; t++) {
            double T = p->T[t];
            ns_err err;
            if (ns_normalize(&p->normalizer, w.z, L, T, w.alpha, w.work, &err) != NS_OK)
                goto done;
            ns_topn_rank_row(w.order, w.items, &p->normalizer, w.z, w.alpha, L, T);
            ns_random_prefix(ns_analysis_rng_key(NS_RNG_RANDOM_SUBSET, p->seed, key, m, T), L,
                             L - 1, w.perm);
            memset(w.xbar, 0, d * sizeof *w.xbar);
            for (size_t i = 0; i < L; i++)
                for (size_t k = 0; k < d; k++)
                    w.xbar[k] += w.alpha[i] * w.X[i * d + k];
            for (size_t n = 0; n < p->nN; n++) {
                size_t N = p->N[n];
                char at[200];
                snprintf(at, sizeof at, "%s T=%g N=%zu", where, T, N);
                if (n >= lay->nN || N >= L) {
                    static const ns_metric_id tn[] = {
                        NS_M_DISTANCE, NS_M_DISTANCE_D1, NS_M_DISTANCE_BOUND,
                        NS_M_DISTANCE_EXPECTED, NS_M_DISTANCE_RANDOM, NS_M_NS_FRAC,
                        NS_M_NS_LOWER, NS_M_NS_UPPER};
                    for (size_t k = 0; k < sizeof tn / sizeof tn[0]; k++) {
                        double a = ns_row_value(lay, rf, L, tn[k], t, n, 0);
                        double b = ns_row_value(lay, rr, L, tn[k], t, n, 0);
                        if (!(isnan(a) && isnan(b)) && ka->bad++ < 10)
                            fprintf(stderr, "kernels %s: %s not NaN at a skipped N (%g, %g)\n",
                                    at, ns_metric_info_of(tn[k])->name, a, b);
                    }
                    ka->skipped++;
                    continue;
                }
                ka_cell(ka, &w, lay, rf, rr, t, n, N, M, at);
                ka->cells++;
            }
        }
    }
    rc = 0;
done:
    free(w.X), free(w.xn), free(w.z), free(w.alpha), free(w.work), free(w.xbar);
    free(w.order), free(w.perm), free(w.items), free(w.mark), free(w.s);
    return rc;
}

/* One line per metric: the largest observed fraction of its bound. */
static inline void ka_print(const kernel_agreement *ka, const char *label)
{
    printf("\n  %s: %zu cells (+%zu skipped), %zu outside the bound; largest |fast - ref| / bound:",
           label, ka->cells, ka->skipped, ka->bad);
    static const ns_metric_id ids[] = {NS_M_DISTANCE, NS_M_DISTANCE_D1, NS_M_DISTANCE_BOUND,
                                       NS_M_DISTANCE_EXPECTED, NS_M_DISTANCE_RANDOM,
                                       NS_M_NS_LOWER, NS_M_NS_UPPER, NS_M_JAC_FD};
    for (size_t k = 0; k < sizeof ids / sizeof ids[0]; k++)
        printf(" %s %.2g", ns_metric_info_of(ids[k])->name, ka->worst[ids[k]]);
    printf("\n");
}

#endif

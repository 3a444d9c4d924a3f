/* ns_row_ref: the reference kernel of the N-dependent metrics: every definition of METRICS.md
 * sections 4 and 6 evaluated directly for each N, O(L d) per N (O(N (L - N) d) for d1). Slow and
 * plain on purpose: it is what the fast kernel (ns_row_fast.c) is tested against. */
#include <math.h>
#include <string.h>

#include "analysis/ns_row_kernels_internal.h"

/* x . y over d entries. */
static double dot(const double *x, const double *y, size_t d)
{
    double acc = 0.0;
    for (size_t k = 0; k < d; k++)
        acc += x[k] * y[k];
    return acc;
}

/* s = sum over sel[0..n) of alpha_j x_j, in sel's order. */
static void weighted_sum(double *s, const ns_row_ctx *c, const size_t *sel, size_t n)
{
    memset(s, 0, c->d * sizeof *s);
    for (size_t q = 0; q < n; q++) {
        const double *x = c->X + sel[q] * c->d;
        for (size_t k = 0; k < c->d; k++)
            s[k] += c->alpha[sel[q]] * x[k];
    }
}

/* sum over i outside mark of ||alpha_i x_i - s|| and (r) the minimum over them. */
static double outside_distance(const ns_row_ctx *c, const unsigned char *mark, const double *s,
                               double *r)
{
    double sum = 0.0, mn = INFINITY;
    for (size_t i = 0; i < c->L; i++) {
        if (mark[i])
            continue;
        double di = sqrt(ns_sqdist_scaled(c->alpha[i], c->X + i * c->d, s, c->d));
        sum += di;
        if (di < mn)
            mn = di;
    }
    *r = mn;
    return sum;
}

/* N_s: i in I counts when e_i <= min over j outside I of e_j, e_i = alpha_i (alpha_i ||x_i||^2 -
 * 2 x_i . s), compared as signed logarithms (METRICS.md section 6: no cancellation, and no
 * underflow of alpha at small T). */
static size_t count_ns(const ns_row_ctx *c, const size_t *sel, size_t N, const double *s)
{
    ns_slog emin = {0, 0.0};
    int have = 0;
    for (size_t j = 0; j < c->L; j++) {
        if (c->in_set[j])
            continue;
        double q = c->alpha[j] * c->gdiag[j] - 2.0 * dot(c->X + j * c->d, s, c->d);
        ns_slog e = ns_slog_of(c->lalpha[j], q);
        if (!have || !ns_slog_le(emin, e))
            emin = e;
        have = 1;
    }
    size_t ns = 0;
    for (size_t q = 0; q < N; q++) {
        size_t i = sel[q];
        double qi = c->alpha[i] * c->gdiag[i] - 2.0 * dot(c->X + i * c->d, s, c->d);
        ns += ns_slog_le(ns_slog_of(c->lalpha[i], qi), emin);
    }
    return ns;
}

/* d1 = max over i outside I and j in I of ||x_i - x_j||. */
static double diameter(const ns_row_ctx *c, const size_t *sel, size_t N)
{
    double best = 0.0;
    for (size_t q = 0; q < N; q++)
        for (size_t i = 0; i < c->L; i++)
            if (!c->in_set[i]) {
                double dsq = ns_sqdist_scaled(1.0, c->X + i * c->d, c->X + sel[q] * c->d, c->d);
                if (dsq > best)
                    best = dsq;
            }
    return sqrt(best);
}

/* d_expected = (L - N)/L sum_i ||(alpha_i + N/(L-1)) x_i - xbar||^2. */
static double expected_term(const ns_row_ctx *c, size_t N)
{
    double c0 = (double)N / (double)(c->L - 1), acc = 0.0;
    for (size_t i = 0; i < c->L; i++)
        acc += ns_sqdist_scaled(c->alpha[i] + c0, c->X + i * c->d, c->xbar, c->d);
    return (double)(c->L - N) / (double)c->L * acc;
}

void ns_row_n_reference(ns_row_ctx *c)
{
    const ns_row_layout *lay = c->lay;
    double *row = c->out;
    size_t L = c->L, t = c->t;
    for (size_t n = 0; n < c->nN; n++) {
        size_t N = c->N[n];
        const size_t *sel = c->order;
        double abar = 0.0, tail = 0.0, maxn2 = 0.0;
        for (size_t q = 0; q < N; q++) {
            c->in_set[sel[q]] = 1;
            abar += c->alpha[sel[q]];
            if (c->gdiag[sel[q]] > maxn2)
                maxn2 = c->gdiag[sel[q]];
        }
        for (size_t i = 0; i < L; i++)
            if (!c->in_set[i])
                tail += c->alpha[i]; /* 1 - abar without cancellation */
        weighted_sum(c->s, c, sel, N);
        double r, d = outside_distance(c, c->in_set, c->s, &r);
        size_t ns = count_ns(c, sel, N, c->s);
        size_t i_d1 = ns_row_index(lay, NS_M_DISTANCE_D1, t, n, 0);
        if (c->want_d1)
            row[i_d1] = diameter(c, sel, N);
        double d1 = row[i_d1];
        double lower, upper;
        ns_theorem2_bounds(c->alpha, sel, N, r, c->M, c->delta, c->work, &lower, &upper);
        for (size_t q = 0; q < N; q++)
            c->in_set[sel[q]] = 0;

        for (size_t q = 0; q < N; q++)
            c->in_rand[c->perm[q]] = 1;
        weighted_sum(c->sr, c, c->perm, N);
        double r_rand, d_rand = outside_distance(c, c->in_rand, c->sr, &r_rand);
        for (size_t q = 0; q < N; q++)
            c->in_rand[c->perm[q]] = 0;

        row[ns_row_index(lay, NS_M_DISTANCE, t, n, 0)] = d;
        row[ns_row_index(lay, NS_M_DISTANCE_BOUND, t, n, 0)] =
            tail * d1 + maxn2 * (abar * (double)(L - N) - tail);
        row[ns_row_index(lay, NS_M_DISTANCE_EXPECTED, t, n, 0)] = expected_term(c, N);
        row[ns_row_index(lay, NS_M_DISTANCE_RANDOM, t, n, 0)] = d_rand;
        row[ns_row_index(lay, NS_M_NS_FRAC, t, n, 0)] = (double)ns / (double)N;
        row[ns_row_index(lay, NS_M_NS_LOWER, t, n, 0)] = lower;
        row[ns_row_index(lay, NS_M_NS_UPPER, t, n, 0)] = upper;
    }
}

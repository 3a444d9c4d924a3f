/* ns_norm_row: the weights a, mass m, shape p = a / m and log p of a row for every normalizer,
 * issue 36's off the simplex computed in log space (docs/METRICS.md section 2). */
#include "norm/ns_norm_row.h"

#include <math.h>
#include <string.h>

#include "norm/ns_normalize_internal.h"
#include "norm/ns_norm_math_internal.h"

size_t ns_norm_row_work(size_t L)
{
    return 3 * L;
}

/* softmax1: a_j = e^(y_j - M) / (e^-M + sum_k e^(y_k - M)), M = max(0, max y) (the implicit 0
 * logit takes part in the shift); log a_j = y_j - M - log(den), den in [1, L + 1]. */
static void ns_softmax1(const double *y, size_t L, double *a, double *la)
{
    double M = 0.0;
    for (size_t j = 0; j < L; j++)
        if (y[j] > M)
            M = y[j];
    double den = exp(-M);
    for (size_t j = 0; j < L; j++) {
        a[j] = exp(y[j] - M);
        den += a[j];
    }
    double lden = log(den);
    for (size_t j = 0; j < L; j++) {
        a[j] /= den;
        la[j] = (y[j] - M) - lden;
    }
}

/* softpick: with l_j = log |e^(y_j) - 1| and M = max l, a_j = [y_j > 0] e^(l_j - M) / D',
 * D' = sum_k e^(l_k - M) (numerator and denominator scaled by e^-M: nothing overflows). Every
 * y = 0 makes the denominator 0: the row is empty (a = 0). */
static void ns_softpick(const double *y, size_t L, double *a, double *la)
{
    double M = -INFINITY;
    for (size_t j = 0; j < L; j++) {
        la[j] = ns_log_abs_expm1(y[j]);
        if (la[j] > M)
            M = la[j];
    }
    if (M == -INFINITY) {
        for (size_t j = 0; j < L; j++)
            a[j] = 0.0;
        return;
    }
    double D = 0.0;
    for (size_t j = 0; j < L; j++)
        D += exp(la[j] - M);
    double lD = log(D);
    for (size_t j = 0; j < L; j++) {
        if (y[j] > 0.0) {
            a[j] = exp(la[j] - M) / D;
            la[j] = (la[j] - M) - lD;
        } else {
            a[j] = 0.0;
            la[j] = -INFINITY;
        }
    }
}

/* stick-breaking for the query at key L - 1: log a_j = log beta_j + sum_{j < k < L} log(1 -
 * beta_k), the suffix sums taken from the query backwards; log(1 - beta) = log sigmoid(-y). */
static void ns_stickbreaking(const double *y, size_t L, double *a, double *la)
{
    double acc = 0.0;
    for (size_t j = L; j-- > 0;) {
        la[j] = ns_log_sigmoid(y[j]) + acc;
        a[j] = exp(la[j]);
        acc += ns_log_sigmoid(-y[j]);
    }
}

/* a and la = log a for the normalizers off the simplex, from y = z / T. */
static void ns_free_weights(const ns_normalizer *f, const double *z, const double *y, size_t L,
                            double T, double *a, double *la)
{
    switch (f->kind) {
    case NS_NORM_SOFTMAX1:
        ns_softmax1(y, L, a, la);
        return;
    case NS_NORM_SIGMOID: {
        double b = ns_normalizer_sigmoid_bias(f, L);
        for (size_t j = 0; j < L; j++) {
            a[j] = ns_sigmoid(y[j] + b);
            la[j] = ns_log_sigmoid(y[j] + b);
        }
        return;
    }
    case NS_NORM_SOFTPICK:
        ns_softpick(y, L, a, la);
        return;
    case NS_NORM_RELU: { /* a_j = relu(y_j) / L; log a from z itself (finite where a is not) */
        double lTL = log(T) + log((double)L);
        for (size_t j = 0; j < L; j++) {
            a[j] = y[j] > 0.0 ? y[j] / (double)L : 0.0;
            la[j] = y[j] > 0.0 ? log(z[j]) - lTL : -INFINITY;
        }
        return;
    }
    case NS_NORM_STICKBREAKING:
        ns_stickbreaking(y, L, a, la);
        return;
    default:
        return;
    }
}

/* m = sum a (key order), log m = log sum exp(la) with its maximum shifted out, p and log p. */
static void ns_free_shape(const double *la, size_t L, ns_norm_row *r)
{
    double m = 0.0, M = -INFINITY;
    for (size_t j = 0; j < L; j++) {
        m += r->a[j];
        if (la[j] > M)
            M = la[j];
    }
    r->m = m;
    if (M == -INFINITY) { /* an empty row */
        r->log_m = -INFINITY;
        for (size_t j = 0; j < L; j++) {
            r->p[j] = 0.0;
            if (r->logp)
                r->logp[j] = -INFINITY;
        }
        return;
    }
    double s = 0.0;
    for (size_t j = 0; j < L; j++)
        s += exp(la[j] - M);
    r->log_m = M + log(s);
    /* a / m directly where m is a normal number; from the logs where it under- or overflowed */
    int direct = isfinite(m) && m >= 0x1p-1022;
    for (size_t j = 0; j < L; j++) {
        double lp = la[j] - r->log_m;
        r->p[j] = direct ? r->a[j] / m : exp(lp);
        if (r->logp)
            r->logp[j] = lp;
    }
}

/* a and la = log a for a normalizer off the simplex, after the checks every row takes (work: y
 * and la, 2 L doubles). */
static int ns_free_row(const ns_normalizer *f, const double *z, size_t L, double T, double *a,
                       double *work, ns_err *err)
{
    if ((unsigned)f->kind > NS_NORM_STICKBREAKING)
        return ns_fail(err, NS_ERR_INVALID, "normalize: unknown normalizer kind %d", (int)f->kind);
    if (f->kind == NS_NORM_SIGMOID && !isfinite(ns_normalizer_sigmoid_bias(f, L)))
        return ns_fail(err, NS_ERR_INVALID, "normalize: sigmoid's bias b = %g must be finite", f->b);
    double *y = work, *la = work + L;
    for (size_t j = 0; j < L; j++) {
        y[j] = z[j] / T;
        if (!isfinite(y[j]))
            return ns_fail(err, NS_ERR_INVALID,
                           "normalize: z / T is not finite at key %zu (z = %g, T = %g)", j, z[j], T);
    }
    ns_free_weights(f, z, y, L, T, a, la);
    return NS_OK;
}

int ns_norm_row_eval(const ns_normalizer *f, const double *z, size_t L, double T, ns_norm_row *r,
                     double *work, ns_err *err)
{
    NS_TRY(ns_normalize_check_row(L, T, err));
    if ((unsigned)f->kind <= NS_NORM_ENTMAX) { /* on the simplex: a = p, m = 1 by definition */
        NS_TRY(ns_normalize(f, z, L, T, r->a, work, err));
        memcpy(r->p, r->a, L * sizeof *r->p);
        if (r->logp)
            ns_log_weights(f, z, r->a, L, T, r->logp);
        if (r->loga)
            ns_log_weights(f, z, r->a, L, T, r->loga);
        r->m = 1.0; /* not the rounded sum */
        r->log_m = 0.0;
        return NS_OK;
    }
    NS_TRY(ns_free_row(f, z, L, T, r->a, work, err));
    ns_free_shape(work + L, L, r);
    if (r->loga)
        memcpy(r->loga, work + L, L * sizeof *work);
    return NS_OK;
}

void ns_norm_row_view(const double *a, const double *la, size_t L, ns_norm_row *r)
{
    size_t n = L > 0 ? L - 1 : 0;
    if (n)
        memcpy(r->a, a + 1, n * sizeof *a);
    ns_free_shape(la + (L > 0), n, r);
}

int ns_norm_weights(const ns_normalizer *f, const double *z, size_t L, double T, double *a,
                    double *work, ns_err *err)
{
    NS_TRY(ns_normalize_check_row(L, T, err));
    if ((unsigned)f->kind <= NS_NORM_ENTMAX)
        return ns_normalize(f, z, L, T, a, work, err);
    return ns_free_row(f, z, L, T, a, work, err);
}

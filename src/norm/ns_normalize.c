/* ns_normalize: softmax, scalable softmax, sparsemax and 1.5-entmax with temperature, in double. */
#include "norm/ns_normalize.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static const char *const ns_norm_names[] = {"softmax", "ssmax", "sparsemax", "entmax15"};

const char *ns_normalizer_name(ns_normalizer_kind kind)
{
    if ((unsigned)kind < sizeof ns_norm_names / sizeof ns_norm_names[0])
        return ns_norm_names[kind];
    return "unknown";
}

int ns_normalizer_parse(const char *name, ns_normalizer_kind *kind, ns_err *err)
{
    for (unsigned k = 0; k < sizeof ns_norm_names / sizeof ns_norm_names[0]; k++) {
        if (name && strcmp(name, ns_norm_names[k]) == 0) {
            *kind = (ns_normalizer_kind)k;
            return NS_OK;
        }
    }
    return ns_fail(err, NS_ERR_INVALID,
                   "unknown normalizer '%s' (expected softmax, ssmax, sparsemax or entmax15)",
                   name ? name : "(null)");
}

double ns_normalizer_inv_temp(const ns_normalizer *f, size_t L, double T)
{
    if (f->kind == NS_NORM_SSMAX)
        return f->s * log((double)L) / T;
    return 1.0 / T;
}

/* softmax(c * z) with the maximum of c * z subtracted, from one exponential per key, into
 * whichever outputs are not NULL: alpha, lalpha = the exact log-weights (c z_i - max) - log sum,
 * *f2sum = sum_i exp(c z_i - max)^2 (key order). Every output has the same bits whichever of
 * the others are asked for. */
static void ns_softmax_core(const double *z, size_t L, double c, double *alpha, double *lalpha,
                            double *f2sum)
{
    double mx = -INFINITY;
    for (size_t i = 0; i < L; i++) {
        double y = c * z[i];
        if (y > mx)
            mx = y;
    }
    double sum = 0.0, f2 = 0.0;
    for (size_t i = 0; i < L; i++) {
        double y = c * z[i] - mx, F = exp(y);
        if (alpha)
            alpha[i] = F;
        if (lalpha)
            lalpha[i] = y;
        sum += F;
        f2 += F * F;
    }
    double lse = lalpha ? log(sum) : 0.0;
    for (size_t i = 0; i < L; i++) {
        if (alpha)
            alpha[i] /= sum;
        if (lalpha)
            lalpha[i] -= lse;
    }
    if (f2sum)
        *f2sum = f2;
}

static int ns_cmp_double_desc(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x < y) - (x > y);
}

/* y[i] = (z[i] - max z) / T into y; returns nothing. The shift leaves sparsemax and entmax
 * unchanged and keeps z / T finite-difference free of overflow at tiny T. */
static void ns_shifted_scaled(double *y, const double *z, size_t L, double T)
{
    double mx = z[0];
    for (size_t i = 1; i < L; i++)
        if (z[i] > mx)
            mx = z[i];
    for (size_t i = 0; i < L; i++)
        y[i] = (z[i] - mx) / T;
}

/* Sparsemax of y (already scaled): sort descending, support k = max{k : 1 + k y_(k) > sum_{j<=k}
 * y_(j)}, tau = (sum_{j<=k} y_(j) - 1) / k, alpha = max(y - tau, 0). */
static void ns_sparsemax(double *alpha, const double *y, size_t L, double *sorted)
{
    memcpy(sorted, y, L * sizeof *sorted);
    qsort(sorted, L, sizeof *sorted, ns_cmp_double_desc);
    double cum = 0.0, tau_cum = sorted[0] - 1.0;
    size_t k_star = 1;
    for (size_t k = 1; k <= L; k++) {
        cum += sorted[k - 1];
        if (1.0 + (double)k * sorted[k - 1] > cum) {
            k_star = k;
            tau_cum = cum - 1.0;
        }
    }
    double tau = tau_cum / (double)k_star;
    for (size_t i = 0; i < L; i++)
        alpha[i] = y[i] > tau ? y[i] - tau : 0.0;
}

/* 1.5-entmax of y (already scaled): alpha_i = [y_i / 2 - tau]_+^2 with sum alpha = 1. Exact
 * sort-based algorithm: over x = y / 2 sorted descending, the support-k threshold is
 * tau_k = mean_k - sqrt((1 - M2_k) / k) (M2_k the sum of squared deviations from mean_k, kept
 * by Welford's update to avoid cancellation); the support is the largest k with
 * M2_k <= 1 and x_(k) > tau_k. */
static void ns_entmax15(double *alpha, const double *y, size_t L, double *sorted)
{
    for (size_t i = 0; i < L; i++)
        sorted[i] = 0.5 * y[i];
    qsort(sorted, L, sizeof *sorted, ns_cmp_double_desc);
    double mean = 0.0, m2 = 0.0;
    double tau = sorted[0] - 1.0; /* support 1 */
    for (size_t k = 1; k <= L; k++) {
        double x = sorted[k - 1];
        double dlt = x - mean;
        mean += dlt / (double)k;
        m2 += dlt * (x - mean);
        if (m2 > 1.0)
            break; /* M2 only grows with k: no larger support is feasible */
        double tk = mean - sqrt((1.0 - m2) / (double)k);
        if (x > tk)
            tau = tk;
    }
    for (size_t i = 0; i < L; i++) {
        double t = 0.5 * y[i] - tau;
        alpha[i] = t > 0.0 ? t * t : 0.0;
    }
}

void ns_log_weights(const ns_normalizer *f, const double *z, const double *alpha, size_t L,
                    double T, double *lalpha)
{
    if (f->kind == NS_NORM_SOFTMAX || f->kind == NS_NORM_SSMAX) {
        ns_softmax_core(z, L, ns_normalizer_inv_temp(f, L, T), NULL, lalpha, NULL);
        return;
    }
    for (size_t i = 0; i < L; i++)
        lalpha[i] = alpha[i] > 0.0 ? log(alpha[i]) : -INFINITY;
}

void ns_softmax_family_row(const ns_normalizer *f, const double *z, size_t L, double T,
                           double *alpha, double *lalpha, double *f2sum)
{
    ns_softmax_core(z, L, ns_normalizer_inv_temp(f, L, T), alpha, lalpha, f2sum);
}

int ns_normalize(const ns_normalizer *f, const double *z, size_t L, double T, double *alpha,
                 double *work, ns_err *err)
{
    if (L == 0)
        return ns_fail(err, NS_ERR_INVALID, "normalize: empty row (L = 0)");
    if (!(T > 0.0) || isinf(T))
        return ns_fail(err, NS_ERR_INVALID, "normalize: temperature T = %g must be finite and > 0",
                       T);
    switch (f->kind) {
    case NS_NORM_SOFTMAX:
        ns_softmax_core(z, L, 1.0 / T, alpha, NULL, NULL);
        return NS_OK;
    case NS_NORM_SSMAX:
        ns_softmax_core(z, L, ns_normalizer_inv_temp(f, L, T), alpha, NULL, NULL);
        return NS_OK;
    case NS_NORM_SPARSEMAX:
        ns_shifted_scaled(work, z, L, T);
        ns_sparsemax(alpha, work, L, work + L);
        return NS_OK;
    case NS_NORM_ENTMAX15:
        ns_shifted_scaled(work, z, L, T);
        ns_entmax15(alpha, work, L, work + L);
        return NS_OK;
    }
    return ns_fail(err, NS_ERR_INVALID, "normalize: unknown normalizer kind %d", (int)f->kind);
}

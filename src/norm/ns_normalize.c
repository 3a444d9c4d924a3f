/* ns_normalize: softmax, scalable softmax, sparsemax, 1.5-entmax and alpha-entmax with
 * temperature, in double; the names of every normalizer. */
#include "norm/ns_normalize.h"
#include "norm/ns_normalize_internal.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *const ns_norm_names[] = {"softmax", "ssmax",  "sparsemax", "entmax15",
                                             "entmax",  "softmax1", "sigmoid",  "softpick",
                                             "relu",    "stickbreaking"};
#define NS_NORM_ALL (sizeof ns_norm_names / sizeof ns_norm_names[0])
/* The six a model and training can use (a sweep and dump: all ten). */
#define NS_NORM_MODEL_NAMES "softmax, ssmax, sparsemax, entmax15, softmax1 or sigmoid"

const char *ns_normalizer_name(ns_normalizer_kind kind)
{
    if ((unsigned)kind < sizeof ns_norm_names / sizeof ns_norm_names[0])
        return ns_norm_names[kind];
    return "unknown";
}

int ns_normalizer_in_models(ns_normalizer_kind kind)
{
    return (unsigned)kind <= NS_NORM_ENTMAX15 || kind == NS_NORM_SOFTMAX1 ||
           kind == NS_NORM_SIGMOID;
}

int ns_normalizer_parse(const char *name, ns_normalizer_kind *kind, ns_err *err)
{
    for (unsigned k = 0; name && k < NS_NORM_ALL; k++) {
        if (strcmp(name, ns_norm_names[k]) != 0)
            continue;
        if (!ns_normalizer_in_models((ns_normalizer_kind)k))
            return ns_fail(err, NS_ERR_INVALID,
                           "normalizer '%s' is not yet usable in a model or in training (only in a "
                           "sweep file and in dump; expected " NS_NORM_MODEL_NAMES ")",
                           name);
        *kind = (ns_normalizer_kind)k;
        return NS_OK;
    }
    return ns_fail(err, NS_ERR_INVALID,
                   "unknown normalizer '%s' (expected " NS_NORM_MODEL_NAMES ")",
                   name ? name : "(null)");
}

int ns_normalizer_parse_any(const char *name, ns_normalizer *f, ns_err *err)
{
    for (unsigned k = 0; k < sizeof ns_norm_names / sizeof ns_norm_names[0]; k++) {
        if (name && strcmp(name, ns_norm_names[k]) == 0) {
            *f = ns_normalizer_default((ns_normalizer_kind)k);
            return NS_OK;
        }
    }
    return ns_fail(err, NS_ERR_INVALID,
                   "unknown normalizer '%s' (expected softmax, ssmax, sparsemax, entmax15, entmax, "
                   "softmax1, sigmoid, softpick, relu or stickbreaking)",
                   name ? name : "(null)");
}

ns_normalizer ns_normalizer_default(ns_normalizer_kind kind)
{
    ns_normalizer f = {.kind = kind, .s = 0.0};
    if (kind == NS_NORM_SSMAX)
        f.s = 1.0;
    else if (kind == NS_NORM_SIGMOID)
        f.b = NAN;
    else if (kind == NS_NORM_ENTMAX)
        f.alpha = 1.5;
    return f;
}

double ns_normalizer_sigmoid_bias(const ns_normalizer *f, size_t L)
{
    return isnan(f->b) ? -log((double)L) : f->b;
}

int ns_normalizer_on_simplex(ns_normalizer_kind kind)
{
    return (unsigned)kind <= NS_NORM_ENTMAX;
}

/* "KEY=" and the shortest %.*g text of v that reads back as v, appended at buf + n. */
static int ns_label_param(char *buf, size_t size, int n, const char *key, double v)
{
    int w = n;
    for (int digits = 1; digits <= 17; digits++) {
        char tmp[40];
        snprintf(tmp, sizeof tmp, "%.*g", digits, v);
        if (strtod(tmp, NULL) == v || digits == 17) {
            size_t at = (size_t)n < size ? (size_t)n : size;
            w = n + snprintf(buf + at, size - at, " %s=%s", key, tmp);
            break;
        }
    }
    return w;
}

/* The label without its view. */
static int ns_label_kind(const ns_normalizer *f, int show_s, char *buf, size_t size)
{
    int n = snprintf(buf, size, "%s", ns_normalizer_name(f->kind));
    if (f->kind == NS_NORM_SSMAX && show_s)
        return ns_label_param(buf, size, n, "s", f->s);
    if (f->kind == NS_NORM_ENTMAX)
        return ns_label_param(buf, size, n, "alpha", f->alpha);
    if (f->kind == NS_NORM_SIGMOID && isnan(f->b)) {
        size_t at = (size_t)n < size ? (size_t)n : size;
        return n + snprintf(buf + at, size - at, " b=-log(L)");
    }
    if (f->kind == NS_NORM_SIGMOID)
        return ns_label_param(buf, size, n, "b", f->b);
    return n;
}

int ns_normalizer_label(const ns_normalizer *f, int show_s, char *buf, size_t size)
{
    int n = ns_label_kind(f, show_s, buf, size);
    if (f->view != NS_VIEW_SINK_EXCLUDED)
        return n;
    size_t at = (size_t)n < size ? (size_t)n : size;
    return n + snprintf(buf + at, size - at, ", sink excluded");
}

int ns_normalizer_same(const ns_normalizer *f, const ns_normalizer *g)
{
    if (f->kind != g->kind || f->view != g->view)
        return 0;
    return f->s == g->s || (isnan(f->s) && isnan(g->s));
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

/* alpha-entmax of y (already scaled and shifted: max y = 0), alpha > 1, alpha != 1.5:
 * alpha_i = [x_i - tau]_+^(1 / (alpha - 1)), x = (alpha - 1) y, with tau found by bisection on
 * [-1, -L^(1 - alpha)] (sum >= 1 at the left end, <= 1 at the right) until no double lies
 * strictly between the ends; tau is the left end (sum >= 1), and the weights are then divided
 * by their sum, so they lie on the simplex to rounding. x and tau are in work's first L. */
static void ns_entmax_bisect(double *p, const double *y, size_t L, double alpha, double *x)
{
    double am1 = alpha - 1.0, ex = 1.0 / am1;
    for (size_t i = 0; i < L; i++)
        x[i] = am1 * y[i];
    double lo = -1.0, hi = -pow((double)L, -am1);
    for (int it = 0; it < 4096; it++) {
        double mid = lo + 0.5 * (hi - lo), sum = 0.0;
        if (!(mid > lo && mid < hi))
            break;
        for (size_t i = 0; i < L; i++)
            sum += x[i] > mid ? pow(x[i] - mid, ex) : 0.0;
        if (sum >= 1.0)
            lo = mid;
        else
            hi = mid;
    }
    double sum = 0.0;
    for (size_t i = 0; i < L; i++) {
        p[i] = x[i] > lo ? pow(x[i] - lo, ex) : 0.0;
        sum += p[i];
    }
    for (size_t i = 0; i < L; i++)
        p[i] /= sum;
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

int ns_normalize_check_row(size_t L, double T, ns_err *err)
{
    if (L == 0)
        return ns_fail(err, NS_ERR_INVALID, "normalize: empty row (L = 0)");
    if (!(T > 0.0) || isinf(T))
        return ns_fail(err, NS_ERR_INVALID, "normalize: temperature T = %g must be finite and > 0",
                       T);
    return NS_OK;
}

int ns_normalize(const ns_normalizer *f, const double *z, size_t L, double T, double *alpha,
                 double *work, ns_err *err)
{
    NS_TRY(ns_normalize_check_row(L, T, err));
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
    case NS_NORM_ENTMAX:
        if (!(f->alpha > 1.0) || isinf(f->alpha))
            return ns_fail(err, NS_ERR_INVALID, "normalize: entmax needs a finite alpha > 1, not %g",
                           f->alpha);
        ns_shifted_scaled(work, z, L, T);
        if (f->alpha == 1.5)
            ns_entmax15(alpha, work, L, work + L);
        else
            ns_entmax_bisect(alpha, work, L, f->alpha, work + L);
        return NS_OK;
    default:
        if ((unsigned)f->kind <= NS_NORM_STICKBREAKING) /* off the simplex */
            return ns_fail(err, NS_ERR_INVALID,
                           "normalize: %s's weights need not sum to 1 (compute them with ns_norm_row)",
                           ns_normalizer_name(f->kind));
        break;
    }
    return ns_fail(err, NS_ERR_INVALID, "normalize: unknown normalizer kind %d", (int)f->kind);
}

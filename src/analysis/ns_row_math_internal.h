/* ns_row_math: the arithmetic of one row that ns_row.c's kernels share (ns_row_math.c): signed
 * log numbers, the scaled squared distance, Theorem 2's bounds. A leaf: it uses no other file of
 * the analysis. Not for use outside src/analysis. */
#ifndef NS_ROW_MATH_INTERNAL_H
#define NS_ROW_MATH_INTERNAL_H

#include <stddef.h>

/* A signed number held as sign * exp(lmag), so that e_i = alpha_i (alpha_i ||x_i||^2 - 2 x_i.s)
 * keeps its order when alpha_i underflows double (small T): sign 0 means exactly 0. */
typedef struct ns_slog {
    int sign;
    double lmag;
} ns_slog;

/* e = exp(la) * q, with la = log(alpha) (-inf for alpha = 0). */
ns_slog ns_slog_of(double la, double q);
/* 1 when a <= b. */
int ns_slog_le(ns_slog a, ns_slog b);

/* sum_k (c a_k - b_k)^2 over d entries, directly (fixed accumulation order). */
double ns_sqdist_scaled(double c, const double *a, const double *b, size_t d);

/* Theorem 2's bounds for I = sel[0..N) at radius r (xi_i as in METRICS.md section 6, with
 * sums over I without i by prefix and suffix sums: no cancellation). work holds 2 (N + 1). */
void ns_theorem2_bounds(const double *alpha, const size_t *sel, size_t N, double r, double M,
                        double delta, double *work, double *lower, double *upper);

#endif

/* ns_model_kernels: the element-wise kernels of the forward pass (causal softmax rows, GELU,
 * LayerNorm, RMSNorm, the SiLU gate, bias rows; the rotary embedding and exact GELU in one
 * portable form only), each in two forms: a portable scalar loop (the reference) and an
 * AVX2 + FMA form that calls glibc's vector expf (libmvec, `_ZGVdN8v_expf`), used when the build
 * has it and the CPU runs it. Kernels are plain functions: outputs first, then inputs, then sizes,
 * then `simd` (0: the portable loop; non-zero: the AVX2 form, which the caller may choose only
 * when ns_k_simd() said so). No allocation, no state.
 *
 * The two forms differ only by float rounding: the vector expf is within 1 ulp of expf
 * (glibc's documented bound; the scalar expf is within 1 ulp of exp too), sums in double are
 * added in another order, and nothing else changes (no FMA contraction of the scalar
 * expressions, the same operation order). tests/test_forward.c compares them. */
#ifndef NS_MODEL_KERNELS_H
#define NS_MODEL_KERNELS_H

#include <stddef.h>

/* 1 when the AVX2 kernels are built in (x86-64 with libmvec) and this CPU has AVX2 and FMA. */
int ns_k_simd(void);

/* One causal softmax row: w[i] = exp(z[i] - max z) / sum_j exp(z[j] - max z) for i < n (n >= 1),
 * the denominator accumulated in double. Writes w[0..n) only. */
void ns_k_softmax_row(float *w, const float *z, size_t n, int simd);

/* In place over x[0..n): GPT-2's tanh GELU, x / (1 + exp(-2 sqrt(2/pi) (x + 0.044715 x^3))). */
void ns_k_gelu(float *x, size_t n, int simd);

/* out (L, C) = LayerNorm of each row of x (L, C) with gain w and bias b (C): mean and biased
 * variance in double, then (x - mean) * rstd * w + b in float. */
void ns_k_layernorm(float *out, const float *x, const float *w, const float *b, size_t L,
                    size_t C, double eps, int simd);

/* out (rows, cols) += bias (cols) on every row. */
void ns_k_rows_add(float *out, const float *bias, size_t rows, size_t cols, int simd);

/* out (L, C) = RMSNorm of each row of x (L, C) with gain w (C), as Hugging Face's LlamaRMSNorm:
 * mean of squares in double, rstd = 1 / sqrt(ms + eps) rounded to float, out = w * (x * rstd). */
void ns_k_rmsnorm(float *out, const float *x, const float *w, size_t L, size_t C, double eps,
                  int simd);

/* In place over g[0..n): g = silu(g) * u = g / (1 + exp(-g)) * u (the SwiGLU gate). */
void ns_k_silu_mul(float *g, const float *u, size_t n, int simd);

/* In place over x[0..n): the exact GELU 0.5 x (1 + erf(x / sqrt 2)) (GPT-NeoX's "gelu"),
 * evaluated as 0.5 x erfc(-x / sqrt 2) (no cancellation for x << 0; portable only). */
void ns_k_gelu_erf(float *x, size_t n);

/* The rotary embedding of one head vector x (its first rot dimensions; rot even), Hugging Face's
 * convention: dimension i is rotated together with i + rot/2 by the angle whose cosine and sine
 * are cs[i], sn[i] (i < rot/2): x_i' = x_i c - x_{i+rot/2} s, x_{i+rot/2}' = x_{i+rot/2} c + x_i s. */
void ns_k_rotary(float *x, const float *cs, const float *sn, size_t rot);

#endif

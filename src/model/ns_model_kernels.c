/* ns_model_kernels: the forward pass's element-wise kernels, portable and AVX2 (see the header). */
#include "config.h"

#include "model/ns_model_kernels.h"

#include <math.h>

#if NS_HAVE_MVEC_AVX2
#include <immintrin.h>
#define NS_AVX2 __attribute__((target("avx2,fma")))
#endif

/* ---- portable (reference) kernels ---- */

static void softmax_row_scalar(float *w, const float *z, size_t n)
{
    float mx = z[0];
    for (size_t i = 1; i < n; i++)
        if (z[i] > mx)
            mx = z[i];
    double sum = 0.0;
    for (size_t i = 0; i < n; i++) {
        float e = expf(z[i] - mx);
        w[i] = e;
        sum += e;
    }
    float inv = (float)(1.0 / sum);
    for (size_t i = 0; i < n; i++)
        w[i] *= inv;
}

/* x = 0.5 x (1 + tanh(u)), u = sqrt(2/pi) (x + 0.044715 x^3) (GPT-2's "gelu_new"), evaluated as
 * x / (1 + exp(-2u)) (the same function: 0.5 (1 + tanh u) = sigmoid(2u)): exp is cheaper than
 * tanh, and this form has no cancellation for u << 0; exp overflowing to inf gives the right
 * limit (-0). */
#define NS_GELU_S2 (2.0f * 0.7978845608028654f) /* 2 sqrt(2/pi) */
#define NS_GELU_A 0.044715f

static void gelu_scalar(float *x, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        float v = x[i];
        x[i] = v / (1.0f + expf(-NS_GELU_S2 * (v + NS_GELU_A * v * v * v)));
    }
}

static void layernorm_scalar(float *out, const float *x, const float *w, const float *b,
                             size_t L, size_t C, double eps)
{
    for (size_t t = 0; t < L; t++) {
        const float *xt = x + t * C;
        double sum = 0.0;
        for (size_t c = 0; c < C; c++)
            sum += xt[c];
        double mean = sum / (double)C;
        double ss = 0.0;
        for (size_t c = 0; c < C; c++) {
            double d = xt[c] - mean;
            ss += d * d;
        }
        float rstd = (float)(1.0 / sqrt(ss / (double)C + eps));
        float m = (float)mean;
        float *o = out + t * C;
        for (size_t c = 0; c < C; c++)
            o[c] = (xt[c] - m) * rstd * w[c] + b[c];
    }
}

static void rows_add_scalar(float *out, const float *bias, size_t rows, size_t cols)
{
    for (size_t r = 0; r < rows; r++) {
        float *o = out + r * cols;
        for (size_t c = 0; c < cols; c++)
            o[c] += bias[c];
    }
}

static void rmsnorm_scalar(float *out, const float *x, const float *w, size_t L, size_t C,
                           double eps)
{
    for (size_t t = 0; t < L; t++) {
        const float *xt = x + t * C;
        double ss = 0.0;
        for (size_t c = 0; c < C; c++)
            ss += (double)xt[c] * xt[c];
        float rstd = (float)(1.0 / sqrt(ss / (double)C + eps));
        float *o = out + t * C;
        for (size_t c = 0; c < C; c++)
            o[c] = w[c] * (xt[c] * rstd);
    }
}

static void silu_mul_scalar(float *g, const float *u, size_t n)
{
    for (size_t i = 0; i < n; i++)
        g[i] = g[i] / (1.0f + expf(-g[i])) * u[i];
}

/* 0.5 x (1 + erf(x / sqrt 2)) evaluated as 0.5 x erfc(-x / sqrt 2): the same function, without
 * the cancellation of 1 + erf for x << 0. */
void ns_k_gelu_erf(float *x, size_t n)
{
    for (size_t i = 0; i < n; i++)
        x[i] = 0.5f * x[i] * erfcf(-x[i] * 0.70710678118654752f);
}

void ns_k_rotary(float *x, const float *cs, const float *sn, size_t rot)
{
    size_t h = rot / 2;
    for (size_t i = 0; i < h; i++) {
        float a = x[i], b = x[i + h];
        x[i] = a * cs[i] - b * sn[i];
        x[i + h] = b * cs[i] + a * sn[i];
    }
}

/* ---- AVX2 + FMA kernels (8 floats a step; the last partial step masked) ---- */

#if NS_HAVE_MVEC_AVX2

/* glibc's libmvec: expf on 8 lanes, x86-64 vector function ABI ("d" = AVX2), in libmvec.so.1
 * since glibc 2.22 (linked through libm's linker script). */
NS_AVX2 __m256 _ZGVdN8v_expf(__m256 x);

/* Lanes 0 .. r-1 set (r < 8). */
NS_AVX2 static inline __m256i ns_mask(size_t r)
{
    return _mm256_cmpgt_epi32(_mm256_set1_epi32((int)r), _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7));
}

/* The lanes of z that mk selects, the others `fill`. */
NS_AVX2 static inline __m256 ns_load_part(const float *z, __m256i mk, float fill)
{
    return _mm256_blendv_ps(_mm256_set1_ps(fill), _mm256_maskload_ps(z, mk), _mm256_castsi256_ps(mk));
}

NS_AVX2 static inline double ns_hsum_pd(__m256d s)
{
    __m128d h = _mm_add_pd(_mm256_castpd256_pd128(s), _mm256_extractf128_pd(s, 1));
    return _mm_cvtsd_f64(_mm_add_sd(h, _mm_unpackhi_pd(h, h)));
}

NS_AVX2 static inline float ns_hmax_ps(__m256 v)
{
    __m128 h = _mm_max_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
    h = _mm_max_ps(h, _mm_movehl_ps(h, h));
    h = _mm_max_ss(h, _mm_shuffle_ps(h, h, 1));
    return _mm_cvtss_f32(h);
}

/* s += the 8 lanes of e, widened to double. */
NS_AVX2 static inline __m256d ns_acc_pd(__m256d s, __m256 e)
{
    s = _mm256_add_pd(s, _mm256_cvtps_pd(_mm256_castps256_ps128(e)));
    return _mm256_add_pd(s, _mm256_cvtps_pd(_mm256_extractf128_ps(e, 1)));
}

NS_AVX2 static void softmax_row_avx2(float *w, const float *z, size_t n)
{
    size_t n8 = n & ~(size_t)7, r = n - n8;
    __m256i mk = ns_mask(r);
    __m256 vmx = _mm256_set1_ps(z[0]);
    for (size_t i = 0; i < n8; i += 8)
        vmx = _mm256_max_ps(vmx, _mm256_loadu_ps(z + i));
    if (r)
        vmx = _mm256_max_ps(vmx, ns_load_part(z + n8, mk, z[0]));
    __m256 mx = _mm256_set1_ps(ns_hmax_ps(vmx));
    __m256d s = _mm256_setzero_pd();
    for (size_t i = 0; i < n8; i += 8) {
        __m256 e = _ZGVdN8v_expf(_mm256_sub_ps(_mm256_loadu_ps(z + i), mx));
        _mm256_storeu_ps(w + i, e);
        s = ns_acc_pd(s, e);
    }
    if (r) { /* masked lanes hold -inf: exp gives 0, which adds nothing */
        __m256 e = _ZGVdN8v_expf(_mm256_sub_ps(ns_load_part(z + n8, mk, -INFINITY), mx));
        _mm256_maskstore_ps(w + n8, mk, e);
        s = ns_acc_pd(s, e);
    }
    __m256 inv = _mm256_set1_ps((float)(1.0 / ns_hsum_pd(s)));
    for (size_t i = 0; i < n8; i += 8)
        _mm256_storeu_ps(w + i, _mm256_mul_ps(_mm256_loadu_ps(w + i), inv));
    if (r)
        _mm256_maskstore_ps(w + n8, mk, _mm256_mul_ps(_mm256_maskload_ps(w + n8, mk), inv));
}

/* The scalar expression, lane-wise, in the same order (no FMA). */
NS_AVX2 static inline __m256 ns_gelu8(__m256 v)
{
    __m256 u = _mm256_add_ps(v, _mm256_mul_ps(_mm256_mul_ps(_mm256_mul_ps(_mm256_set1_ps(NS_GELU_A), v), v), v));
    __m256 e = _ZGVdN8v_expf(_mm256_mul_ps(_mm256_set1_ps(-NS_GELU_S2), u));
    return _mm256_div_ps(v, _mm256_add_ps(_mm256_set1_ps(1.0f), e));
}

NS_AVX2 static void gelu_avx2(float *x, size_t n)
{
    size_t n8 = n & ~(size_t)7, r = n - n8;
    for (size_t i = 0; i < n8; i += 8)
        _mm256_storeu_ps(x + i, ns_gelu8(_mm256_loadu_ps(x + i)));
    if (r) {
        __m256i mk = ns_mask(r);
        _mm256_maskstore_ps(x + n8, mk, ns_gelu8(ns_load_part(x + n8, mk, 0.0f)));
    }
}

/* One row of LayerNorm; the statistics in double (4 lanes), the output as the scalar form. */
NS_AVX2 static void layernorm_row_avx2(float *o, const float *xt, const float *w, const float *b,
                                       size_t C, double eps)
{
    size_t c8 = C & ~(size_t)7;
    __m256d s = _mm256_setzero_pd();
    for (size_t c = 0; c < c8; c += 8)
        s = ns_acc_pd(s, _mm256_loadu_ps(xt + c));
    double sum = ns_hsum_pd(s);
    for (size_t c = c8; c < C; c++)
        sum += xt[c];
    double mean = sum / (double)C;
    __m256d vm = _mm256_set1_pd(mean), q = _mm256_setzero_pd();
    for (size_t c = 0; c < c8; c += 8) {
        __m256 v = _mm256_loadu_ps(xt + c);
        __m256d d0 = _mm256_sub_pd(_mm256_cvtps_pd(_mm256_castps256_ps128(v)), vm);
        __m256d d1 = _mm256_sub_pd(_mm256_cvtps_pd(_mm256_extractf128_ps(v, 1)), vm);
        q = _mm256_add_pd(q, _mm256_add_pd(_mm256_mul_pd(d0, d0), _mm256_mul_pd(d1, d1)));
    }
    double ss = ns_hsum_pd(q);
    for (size_t c = c8; c < C; c++) {
        double d = xt[c] - mean;
        ss += d * d;
    }
    float rstd = (float)(1.0 / sqrt(ss / (double)C + eps));
    float m = (float)mean;
    __m256 vr = _mm256_set1_ps(rstd), vmf = _mm256_set1_ps(m);
    for (size_t c = 0; c < c8; c += 8) {
        __m256 y = _mm256_mul_ps(_mm256_mul_ps(_mm256_sub_ps(_mm256_loadu_ps(xt + c), vmf), vr),
                                 _mm256_loadu_ps(w + c));
        _mm256_storeu_ps(o + c, _mm256_add_ps(y, _mm256_loadu_ps(b + c)));
    }
    for (size_t c = c8; c < C; c++)
        o[c] = (xt[c] - m) * rstd * w[c] + b[c];
}

NS_AVX2 static void rows_add_avx2(float *out, const float *bias, size_t rows, size_t cols)
{
    size_t c8 = cols & ~(size_t)7;
    for (size_t r = 0; r < rows; r++) {
        float *o = out + r * cols;
        for (size_t c = 0; c < c8; c += 8)
            _mm256_storeu_ps(o + c, _mm256_add_ps(_mm256_loadu_ps(o + c), _mm256_loadu_ps(bias + c)));
        for (size_t c = c8; c < cols; c++)
            o[c] += bias[c];
    }
}

/* One row of RMSNorm: the mean of squares in double (4 lanes), the output as the scalar form. */
NS_AVX2 static void rmsnorm_row_avx2(float *o, const float *xt, const float *w, size_t C, double eps)
{
    size_t c8 = C & ~(size_t)7;
    __m256d q = _mm256_setzero_pd();
    for (size_t c = 0; c < c8; c += 8) {
        __m256 v = _mm256_loadu_ps(xt + c);
        __m256d d0 = _mm256_cvtps_pd(_mm256_castps256_ps128(v));
        __m256d d1 = _mm256_cvtps_pd(_mm256_extractf128_ps(v, 1));
        q = _mm256_add_pd(q, _mm256_add_pd(_mm256_mul_pd(d0, d0), _mm256_mul_pd(d1, d1)));
    }
    double ss = ns_hsum_pd(q);
    for (size_t c = c8; c < C; c++)
        ss += (double)xt[c] * xt[c];
    float rstd = (float)(1.0 / sqrt(ss / (double)C + eps));
    __m256 vr = _mm256_set1_ps(rstd);
    for (size_t c = 0; c < c8; c += 8)
        _mm256_storeu_ps(o + c, _mm256_mul_ps(_mm256_loadu_ps(w + c),
                                              _mm256_mul_ps(_mm256_loadu_ps(xt + c), vr)));
    for (size_t c = c8; c < C; c++)
        o[c] = w[c] * (xt[c] * rstd);
}

/* The scalar expression, lane-wise, in the same order. */
NS_AVX2 static inline __m256 ns_silu_mul8(__m256 g, __m256 u)
{
    __m256 e = _ZGVdN8v_expf(_mm256_sub_ps(_mm256_setzero_ps(), g));
    return _mm256_mul_ps(_mm256_div_ps(g, _mm256_add_ps(_mm256_set1_ps(1.0f), e)), u);
}

NS_AVX2 static void silu_mul_avx2(float *g, const float *u, size_t n)
{
    size_t n8 = n & ~(size_t)7, r = n - n8;
    for (size_t i = 0; i < n8; i += 8)
        _mm256_storeu_ps(g + i, ns_silu_mul8(_mm256_loadu_ps(g + i), _mm256_loadu_ps(u + i)));
    if (r) {
        __m256i mk = ns_mask(r);
        _mm256_maskstore_ps(g + n8, mk, ns_silu_mul8(ns_load_part(g + n8, mk, 0.0f),
                                                     ns_load_part(u + n8, mk, 0.0f)));
    }
}

#endif /* NS_HAVE_MVEC_AVX2 */

/* ---- dispatch ---- */

int ns_k_simd(void)
{
#if NS_HAVE_MVEC_AVX2
    return __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
#else
    return 0;
#endif
}

void ns_k_softmax_row(float *w, const float *z, size_t n, int simd)
{
#if NS_HAVE_MVEC_AVX2
    if (simd) {
        softmax_row_avx2(w, z, n);
        return;
    }
#endif
    (void)simd;
    softmax_row_scalar(w, z, n);
}

void ns_k_gelu(float *x, size_t n, int simd)
{
#if NS_HAVE_MVEC_AVX2
    if (simd) {
        gelu_avx2(x, n);
        return;
    }
#endif
    (void)simd;
    gelu_scalar(x, n);
}

void ns_k_layernorm(float *out, const float *x, const float *w, const float *b, size_t L,
                    size_t C, double eps, int simd)
{
#if NS_HAVE_MVEC_AVX2
    if (simd) {
        for (size_t t = 0; t < L; t++)
            layernorm_row_avx2(out + t * C, x + t * C, w, b, C, eps);
        return;
    }
#endif
    (void)simd;
    layernorm_scalar(out, x, w, b, L, C, eps);
}

void ns_k_rows_add(float *out, const float *bias, size_t rows, size_t cols, int simd)
{
#if NS_HAVE_MVEC_AVX2
    if (simd) {
        rows_add_avx2(out, bias, rows, cols);
        return;
    }
#endif
    (void)simd;
    rows_add_scalar(out, bias, rows, cols);
}

void ns_k_rmsnorm(float *out, const float *x, const float *w, size_t L, size_t C, double eps,
                  int simd)
{
#if NS_HAVE_MVEC_AVX2
    if (simd) {
        for (size_t t = 0; t < L; t++)
            rmsnorm_row_avx2(out + t * C, x + t * C, w, C, eps);
        return;
    }
#endif
    (void)simd;
    rmsnorm_scalar(out, x, w, L, C, eps);
}

void ns_k_silu_mul(float *g, const float *u, size_t n, int simd)
{
#if NS_HAVE_MVEC_AVX2
    if (simd) {
        silu_mul_avx2(g, u, n);
        return;
    }
#endif
    (void)simd;
    silu_mul_scalar(g, u, n);
}

/* ns_gpt2_forward: the GPT-2 causal forward pass (OpenBLAS sgemm) that shows each layer's attention.
 *
 * Shape key: L = sequence length, C = n_embd, H = n_head, D = C / H, F = n_inner, V = vocab.
 * Exactly GPT-2: token + learned position embeddings, pre-LayerNorm blocks, causal attention with
 * scale 1/sqrt(D), GELU (tanh approximation), residual connections. The attention normalizer and
 * temperature are the model's own (config.json), one causal row at a time through
 * ns_gpt2_attn_row (GPT-2's softmax at T = 1 is the float kernel). Every matrix product goes
 * through cblas_sgemm; the element-wise parts are the kernels of ns_gpt2_kernels (AVX2 where the
 * CPU has it). Causal attention is computed in blocks of NS_GPT2_ATT_BLOCK query rows, each
 * against only the keys it can see, so about half of the L x L products are never formed. The LM
 * head (and ln_f) is not computed, and nor is the last layer's attention projection and MLP:
 * nothing after the last attention is observable through ns_gpt2_forward's interface. */
#include "model/ns_gpt2_internal.h"
#include "model/ns_gpt2_kernels.h"

#include <cblas.h>
#include <limits.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

struct ns_gpt2_workspace {
    size_t L_max, C, H, F; /* the shapes this workspace was sized for */
    size_t zero_L;         /* weights' strict upper triangles are zero for this L (0: unknown) */
    float *block;          /* the one allocation; every buffer below points into it */
    float *x;              /* (L, C)   residual stream */
    float *ln;             /* (L, C)   LayerNorm output (input of c_attn and c_fc) */
    float *qkv;            /* (L, 3C)  q | k | v, heads interleaved as h*D within each third */
    float *values;         /* (L, C)   v copied out of qkv (the view's `values`) */
    float *att;            /* (L, C)   attention output, heads concatenated */
    float *fc;             /* (L, F)   MLP hidden activations */
    float *logits;         /* (H, L, L) scaled pre-softmax scores */
    float *weights;        /* (H, L, L) attention weights, zero above the diagonal */
    double *attn_work;     /* NS_GPT2_ATTN_WORK(L) doubles for a model's own normalizer */
};

/* Round a float count up to a multiple of 16 (64 bytes), so every buffer stays cache-line aligned. */
static size_t ns_round16(size_t n) { return (n + 15) / 16 * 16; }

/* a * b, or SIZE_MAX when it would overflow (so the allocation size check fails cleanly). */
static size_t ns_mul(size_t a, size_t b)
{
    if (a != 0 && b > SIZE_MAX / a)
        return SIZE_MAX;
    return a * b;
}

/* The buffers of a workspace for L_max tokens, in floats (SIZE_MAX when one would overflow):
 * x, ln, qkv, values, att, fc, logits, weights, then attn_work (doubles, counted as 2 floats). */
#define NS_WS_BUFFERS 9
static void workspace_sizes(size_t C, size_t H, size_t F, size_t L_max, size_t sizes[NS_WS_BUFFERS])
{
    sizes[0] = ns_mul(L_max, C);                /* x */
    sizes[1] = ns_mul(L_max, C);                /* ln */
    sizes[2] = ns_mul(L_max, ns_mul(3, C));     /* qkv */
    sizes[3] = ns_mul(L_max, C);                /* values */
    sizes[4] = ns_mul(L_max, C);                /* att */
    sizes[5] = ns_mul(L_max, F);                /* fc */
    sizes[6] = ns_mul(H, ns_mul(L_max, L_max)); /* logits */
    sizes[7] = ns_mul(H, ns_mul(L_max, L_max)); /* weights */
    sizes[8] = ns_mul(2, NS_GPT2_ATTN_WORK(L_max)); /* attn_work */
}

double ns_gpt2_workspace_bytes(const ns_gpt2_config *cfg, size_t L_max)
{
    if (L_max > cfg->n_ctx)
        L_max = cfg->n_ctx;
    double L = (double)L_max, C = (double)cfg->n_embd, H = (double)cfg->n_head;
    double F = (double)cfg->n_inner;
    /* the sizes of workspace_sizes, in double so no product can wrap (rounding to 16 floats
     * adds at most 8 x 64 bytes) */
    return sizeof(float) * (L * C * 7.0 + L * F + 2.0 * H * L * L) +
           sizeof(double) * NS_GPT2_ATTN_WORK(L) + NS_WS_BUFFERS * 64.0;
}

int ns_gpt2_workspace_new(const ns_gpt2_model *model, size_t L_max, ns_gpt2_workspace **out,
                          ns_err *err)
{
    *out = NULL;
    const ns_gpt2_config *cfg = &model->config;
    if (L_max == 0)
        return ns_fail(err, NS_ERR_INVALID, "forward workspace: L_max must be at least 1");
    if (L_max > cfg->n_ctx)
        L_max = cfg->n_ctx; /* the forward refuses L > n_ctx anyway */
    size_t C = cfg->n_embd, H = cfg->n_head, F = cfg->n_inner;
    if (H == 0 || C == 0 || C % H != 0 || F == 0)
        return ns_fail(err, NS_ERR_INVALID,
                       "forward workspace: bad model shape (n_embd=%zu, n_head=%zu, n_inner=%zu)", C,
                       H, F);

    size_t sizes[NS_WS_BUFFERS];
    workspace_sizes(C, H, F, L_max, sizes);
    size_t total = 0;
    for (size_t i = 0; i < NS_WS_BUFFERS; i++) {
        if (sizes[i] == SIZE_MAX || ns_round16(sizes[i]) > SIZE_MAX / sizeof(float) - total)
            return ns_fail(err, NS_ERR_INVALID, "forward workspace: L_max=%zu is too large", L_max);
        sizes[i] = ns_round16(sizes[i]);
        total += sizes[i];
    }
    if (total > SIZE_MAX / sizeof(float))
        return ns_fail(err, NS_ERR_INVALID, "forward workspace: L_max=%zu is too large", L_max);

    ns_gpt2_workspace *ws = calloc(1, sizeof *ws);
    if (!ws)
        return ns_fail(err, NS_ERR_NOMEM, "forward workspace: out of memory");
    void *block = NULL;
    if (posix_memalign(&block, 64, total * sizeof(float)) != 0) {
        free(ws);
        return ns_fail(err, NS_ERR_NOMEM, "forward workspace: cannot allocate %zu MiB for L_max=%zu",
                       total * sizeof(float) >> 20, L_max);
    }
    ws->L_max = L_max;
    ws->C = C;
    ws->H = H;
    ws->F = F;
    ws->block = block;
    float **bufs[8] = {&ws->x, &ws->ln, &ws->qkv, &ws->values, &ws->att, &ws->fc, &ws->logits,
                       &ws->weights};
    float *p = ws->block;
    for (size_t i = 0; i < 8; i++) {
        *bufs[i] = p;
        p += sizes[i];
    }
    ws->attn_work = (double *)(void *)p;
    *out = ws;
    return NS_OK;
}

void ns_gpt2_workspace_free(ns_gpt2_workspace *ws)
{
    if (!ws)
        return;
    free(ws->block);
    free(ws);
}

/* ---- element-wise kernels (outputs first, then inputs, then sizes) ---- */

/* out[t] = wte[tokens[t]] + wpe[t]. */
static void ns_embed(float *out, const int32_t *tokens, const float *wte, const float *wpe, size_t L,
                     size_t C)
{
    for (size_t t = 0; t < L; t++) {
        const float *te = wte + (size_t)tokens[t] * C;
        const float *pe = wpe + t * C;
        float *o = out + t * C;
        for (size_t c = 0; c < C; c++)
            o[c] = te[c] + pe[c];
    }
}

/* Every row of out (rows x cols) set to bias (so a following sgemm with beta = 1 adds x W). */
static void ns_rows_set(float *out, const float *bias, size_t rows, size_t cols)
{
    for (size_t r = 0; r < rows; r++)
        memcpy(out + r * cols, bias, cols * sizeof(float));
}

/* The strict upper triangle of each of the H (L, L) weight matrices set to 0. The forward never
 * writes there afterwards, so this is done once per workspace and L. */
static void ns_zero_upper(float *weights, size_t H, size_t L)
{
    for (size_t h = 0; h < H; h++)
        for (size_t m = 0; m + 1 < L; m++)
            memset(weights + (h * L + m) * L + m + 1, 0, (L - m - 1) * sizeof(float));
}

/* ---- the forward pass ---- */

/* c (M, N; ldc) = alpha * a (M, K; lda) b (K, N; ldb) + beta * c, all row-major. */
static void ns_mm(float *c, size_t ldc, const float *a, size_t lda, const float *b, size_t ldb,
                  size_t M, size_t N, size_t K, float alpha, float beta)
{
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, (int)M, (int)N, (int)K, alpha, a,
                (int)lda, b, (int)ldb, beta, c, (int)ldc);
}

/* Causal attention of one head, NS_GPT2_ATT_BLOCK query rows [m0, m1) at a time against keys
 * [0, m1): z = q k^T / sqrt(D) (logits of rows m0.. at zh, ld L), the model's normalizer of each
 * row m over keys 0..m into wh (whose upper triangle is already 0; ns_gpt2_attn_row with work), then
 * out = w v. q, k, v: (L, D) with leading dimensions ldq (= ldk) and ldv; out (L, D; ld ldo).
 * Fails only for an invalid temperature. */
static int ns_attention_head(float *out, size_t ldo, float *zh, float *wh, const float *q,
                             const float *k, size_t ldq, const float *v, size_t ldv, size_t L,
                             size_t D, float scale, const ns_gpt2_config *cfg, int simd,
                             double *work, ns_err *err)
{
    for (size_t m0 = 0; m0 < L; m0 += NS_GPT2_ATT_BLOCK) {
        size_t m1 = m0 + NS_GPT2_ATT_BLOCK < L ? m0 + NS_GPT2_ATT_BLOCK : L, rows = m1 - m0;
        cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, (int)rows, (int)m1, (int)D, scale,
                    q + m0 * ldq, (int)ldq, k, (int)ldq, 0.0f, zh + m0 * L, (int)L); /* (rows, m1) */
        for (size_t m = m0; m < m1; m++)
            NS_TRY(ns_gpt2_attn_row(wh + m * L, zh + m * L, m + 1, cfg, simd, work, err));
        ns_mm(out + m0 * ldo, ldo, wh + m0 * L, L, v, ldv, rows, D, m1, 1.0f, 0.0f); /* (rows, D) */
    }
    return NS_OK;
}

int ns_gpt2_forward(const ns_gpt2_model *model, ns_gpt2_workspace *ws, const int32_t *tokens,
                    size_t L, size_t n_layers, ns_attn_layer_fn fn, void *user, ns_err *err)
{
    const ns_gpt2_config *cfg = &model->config;
    const size_t C = cfg->n_embd, H = cfg->n_head, F = cfg->n_inner, V = cfg->vocab_size;
    if (ws->C != C || ws->H != H || ws->F != F)
        return ns_fail(err, NS_ERR_INVALID,
                       "forward: workspace was made for another model shape (C=%zu H=%zu F=%zu, "
                       "model C=%zu H=%zu F=%zu)", ws->C, ws->H, ws->F, C, H, F);
    if (L == 0)
        return ns_fail(err, NS_ERR_INVALID, "forward: empty token sequence");
    if (L > cfg->n_ctx)
        return ns_fail(err, NS_ERR_INVALID, "forward: %zu tokens exceed the model's n_ctx=%zu", L,
                       cfg->n_ctx);
    if (L > ws->L_max)
        return ns_fail(err, NS_ERR_INVALID, "forward: %zu tokens exceed the workspace's L_max=%zu",
                       L, ws->L_max);
    if (n_layers == 0 || n_layers > cfg->n_layer)
        return ns_fail(err, NS_ERR_INVALID, "forward: %zu layers requested, the model has %zu",
                       n_layers, cfg->n_layer);
    if (C > INT_MAX / 3 || F > INT_MAX)
        return ns_fail(err, NS_ERR_INVALID, "forward: model too large for 32-bit BLAS dimensions");
    for (size_t t = 0; t < L; t++)
        if (tokens[t] < 0 || (size_t)tokens[t] >= V)
            return ns_fail(err, NS_ERR_INVALID,
                           "forward: token id %d at position %zu is outside the vocabulary (size %zu)",
                           (int)tokens[t], t, V);

    const size_t D = C / H, C3 = 3 * C;
    const float scale = (float)(1.0 / sqrt((double)D));
    float *x = ws->x, *ln = ws->ln, *qkv = ws->qkv, *values = ws->values, *att = ws->att;
    float *fc = ws->fc, *logits = ws->logits, *weights = ws->weights;

    const int simd = ns_k_simd();
    if (ws->zero_L != L) {
        ns_zero_upper(weights, H, L);
        ws->zero_L = L;
    }

    ns_embed(x, tokens, model->wte, model->wpe, L, C);                  /* (L, C) */
    for (size_t l = 0; l < n_layers; l++) {
        const ns_gpt2_layer_weights *w = &model->layers[l];

        /* attention */
        ns_k_layernorm(ln, x, w->ln_1_w, w->ln_1_b, L, C, cfg->ln_eps, simd); /* (L, C) */
        ns_rows_set(qkv, w->attn_b, L, C3);
        ns_mm(qkv, C3, ln, C, w->attn_w, C3, L, C3, C, 1.0f, 1.0f);      /* (L, 3C) */
        for (size_t t = 0; t < L; t++)
            memcpy(values + t * C, qkv + t * C3 + 2 * C, C * sizeof(float)); /* (L, C) */
        for (size_t h = 0; h < H; h++)                                  /* (L, D; ld C) each */
            NS_TRY(ns_attention_head(att + h * D, C, logits + h * L * L, weights + h * L * L,
                                     qkv + h * D, qkv + C + h * D, C3, values + h * D, C, L, D,
                                     scale, cfg, simd, ws->attn_work, err));
        if (fn) {
            ns_attn_layer_view view = {.layer = l, .n_head = H, .d_head = D, .L = L,
                                       .logits = logits, .weights = weights, .values = values};
            int rc = fn(user, &view, err);
            if (rc != NS_OK)
                return rc;
        }
        if (l + 1 == n_layers)
            break; /* what follows the last attention asked for is unobservable (no LM head) */

        /* x += att Wproj + bproj */
        ns_mm(x, C, att, C, w->attn_proj_w, C, L, C, C, 1.0f, 1.0f);
        ns_k_rows_add(x, w->attn_proj_b, L, C, simd);

        /* MLP: x += gelu(ln2(x) Wfc + bfc) Wproj + bproj */
        ns_k_layernorm(ln, x, w->ln_2_w, w->ln_2_b, L, C, cfg->ln_eps, simd);
        ns_rows_set(fc, w->fc_b, L, F);
        ns_mm(fc, F, ln, C, w->fc_w, F, L, F, C, 1.0f, 1.0f);            /* (L, F) */
        ns_k_gelu(fc, L * F, simd);
        ns_mm(x, C, fc, F, w->fc_proj_w, C, L, C, F, 1.0f, 1.0f);        /* (L, C) */
        ns_k_rows_add(x, w->fc_proj_b, L, C, simd);
    }
    return NS_OK;
}

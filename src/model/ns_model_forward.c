/* ns_model_forward: the causal forward pass of every architecture (OpenBLAS sgemm), showing each
 * layer's attention per query head.
 *
 * Shape key: L = sequence length, C = hidden size, H = query heads, KV = key/value heads,
 * D = head dimension, W = floats per token of the q/k/v buffer, F = MLP width, R = kept rows.
 * One decoder (ns_model_internal.h) serves the three layouts:
 *   x = tok_emb[token] (+ pos_emb[position], GPT-2)
 *   per layer: a = attention(norm1(x)) with q, k rotated (rotary models) and 1/sqrt(D) scores;
 *     sequential: x += a Wo + bo; x += mlp(norm2(x))
 *     parallel (GPT-NeoX use_parallel_residual): x += a Wo + bo + mlp(norm2(x_in))
 *   mlp(y) = down(act(up y)), or down(act(gate y) * up y) (SwiGLU)
 * with LayerNorm or RMSNorm. The attention normalizer and temperature are the model's own
 * (config.json; softmax at 1 for every released model), one causal row at a time through
 * ns_gpt2_attn_row. Every matrix product is one cblas_sgemm call; the element-wise parts are the
 * kernels of ns_model_kernels (AVX2 where the CPU has it). Causal attention is computed per head
 * in blocks of NS_MODEL_ATT_BLOCK query rows, each against only the keys it can see, in a B x L
 * scratch; only the rows asked for are kept. Nothing after the last attention asked for is
 * computed (no LM head): it cannot be observed through this interface. */
#include "model/ns_gpt2_internal.h"
#include "model/ns_model_internal.h"
#include "model/ns_model_kernels.h"

#include <cblas.h>
#include <limits.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

struct ns_model_workspace {
    size_t L_max, C, H, KV, D, W, F, rot; /* the shapes this workspace was sized for */
    int gated;
    size_t filled_L;       /* kept rows' tails are filled for this L (0: not yet) */
    size_t n_rows;         /* R */
    size_t *rows;          /* (R) kept rows, ascending */
    size_t *row_slot;      /* (L_max) slot of a row, or SIZE_MAX */
    float *block;          /* the one allocation; every buffer below points into it */
    float *x;              /* (L, C)   residual stream */
    float *ln;             /* (L, C)   norm output (input of the q/k/v and MLP maps) */
    float *qkv;            /* (L, W)   q, k, v of every head */
    float *values;         /* (L, KV D) v copied out of qkv (the view's `values`) */
    float *att;            /* (L, H D) attention output, heads concatenated */
    float *fc, *fc2;       /* (L, F)   MLP hidden activations (fc2: the up map of a gated MLP) */
    float *zb, *wb;        /* (B, L_max) one block of a head's scores and weights */
    float *keep_z, *keep_w;/* (H, R, L_max) the kept rows' logits and weights */
    float *cs, *sn;        /* (L_max, rot/2) cosines and sines of the rotary angles */
    double *attn_work;     /* NS_GPT2_ATTN_WORK(L) doubles for a model's own normalizer */
};

/* Round a float count up to a multiple of 16 (64 bytes), so every buffer stays cache-line aligned. */
static size_t ns_round16(size_t n) { return (n + 15) / 16 * 16; }

/* a * b, or SIZE_MAX when it would overflow (so the allocation size check fails cleanly). */
static size_t ns_mul(size_t a, size_t b)
{
    if (a != 0 && b > SIZE_MAX / a)
        return SIZE_MAX;
    return a == SIZE_MAX || b == SIZE_MAX ? SIZE_MAX : a * b;
}

/* The q/k/v width of a config (as the loaders lay it out). */
static size_t qkv_width(const ns_model_config *c)
{
    return (c->n_head + 2 * c->n_kv_head) * c->d_head;
}

double ns_model_forward_flops(const ns_model_config *c, size_t L, size_t n_layers)
{
    double Ld = (double)L, C = (double)c->n_embd, D = (double)c->d_head, H = (double)c->n_head;
    double W = (double)qkv_width(c), F = (double)c->n_inner, att = 0.0;
    for (size_t m0 = 0; m0 < L; m0 += NS_MODEL_ATT_BLOCK) { /* q k^T and w v per block */
        double m1 = (double)(m0 + NS_MODEL_ATT_BLOCK < L ? m0 + NS_MODEL_ATT_BLOCK : L);
        att += 2.0 * 2.0 * (m1 - (double)m0) * m1 * D;
    }
    double first = 2.0 * Ld * C * W + H * att;                       /* q/k/v, attention */
    double rest = 2.0 * Ld * H * D * C + 2.0 * Ld * C * F * (c->gated_mlp ? 3.0 : 2.0);
    return (double)n_layers * first + (double)(n_layers ? n_layers - 1 : 0) * rest;
}

/* The buffers of a workspace in floats (SIZE_MAX when one would overflow), in the order of the
 * struct: x, ln, qkv, values, att, fc, fc2, zb, wb, keep_z, keep_w, cs, sn, then attn_work
 * (doubles, counted as 2 floats). */
#define NS_WS_BUFFERS 14
static void workspace_sizes(const ns_model_config *c, size_t L, size_t R, size_t s[NS_WS_BUFFERS])
{
    size_t B = L < NS_MODEL_ATT_BLOCK ? L : NS_MODEL_ATT_BLOCK;
    s[0] = s[1] = ns_mul(L, c->n_embd);
    s[2] = ns_mul(L, qkv_width(c));
    s[3] = ns_mul(L, c->n_kv_head * c->d_head);
    s[4] = ns_mul(L, c->n_head * c->d_head);
    s[5] = ns_mul(L, c->n_inner);
    s[6] = c->gated_mlp ? s[5] : 0;
    s[7] = s[8] = ns_mul(B, L);
    s[9] = s[10] = ns_mul(c->n_head, ns_mul(R, L));
    s[11] = s[12] = ns_mul(L, c->rotary_dim / 2);
    s[13] = ns_mul(2, NS_GPT2_ATTN_WORK(L));
}

double ns_model_workspace_bytes(const ns_model_config *c, size_t L_max, size_t n_rows)
{
    if (L_max > c->n_ctx)
        L_max = c->n_ctx;
    double L = (double)L_max, R = (double)(n_rows < L_max ? n_rows : L_max);
    double B = L < NS_MODEL_ATT_BLOCK ? L : NS_MODEL_ATT_BLOCK;
    double C = (double)c->n_embd, H = (double)c->n_head, HD = H * (double)c->d_head;
    double KD = (double)c->n_kv_head * (double)c->d_head;
    double F = (double)c->n_inner * (c->gated_mlp ? 2.0 : 1.0);
    /* the sizes of workspace_sizes, in double so no product can wrap (rounding to 16 floats
     * adds at most 14 x 64 bytes), and the rows and their slots */
    return sizeof(float) * (L * (2.0 * C + HD + 2.0 * KD + KD + HD + F) + 2.0 * B * L +
                            2.0 * H * R * L + L * (double)c->rotary_dim) +
           sizeof(double) * NS_GPT2_ATTN_WORK(L) + NS_WS_BUFFERS * 64.0 +
           sizeof(size_t) * (R + L);
}

/* The rotary angles t * theta^(-2i/rot) in double, their cosines and sines rounded to float. */
static void rope_tables(float *cs, float *sn, size_t L, size_t rot, double theta)
{
    size_t half = rot / 2;
    for (size_t i = 0; i < half; i++) {
        double f = pow(theta, -(double)(2 * i) / (double)rot);
        for (size_t t = 0; t < L; t++) {
            double a = (double)t * f;
            cs[t * half + i] = (float)cos(a);
            sn[t * half + i] = (float)sin(a);
        }
    }
}

/* The kept rows (NULL: all) into ws->rows and ws->row_slot. */
static int set_rows(ns_model_workspace *ws, const size_t *rows, size_t n_rows, ns_err *err)
{
    size_t L = ws->L_max;
    ws->row_slot = malloc(L * sizeof *ws->row_slot);
    ws->rows = malloc((rows ? n_rows : L) * sizeof *ws->rows + 1);
    if (!ws->row_slot || !ws->rows)
        return ns_fail(err, NS_ERR_NOMEM, "forward workspace: out of memory");
    for (size_t m = 0; m < L; m++)
        ws->row_slot[m] = rows ? SIZE_MAX : m;
    ws->n_rows = rows ? n_rows : L;
    for (size_t i = 0; i < ws->n_rows; i++) {
        size_t m = rows ? rows[i] : i;
        if (m >= L || (i > 0 && m <= ws->rows[i - 1]))
            return ns_fail(err, NS_ERR_INVALID, "forward workspace: kept rows must be ascending "
                           "and below L_max = %zu (row %zu)", L, m);
        ws->rows[i] = m;
        ws->row_slot[m] = i;
    }
    return NS_OK;
}

static int workspace_alloc(ns_model_workspace *ws, const ns_model_config *c, ns_err *err)
{
    size_t sizes[NS_WS_BUFFERS], total = 0;
    workspace_sizes(c, ws->L_max, ws->n_rows, sizes);
    for (size_t i = 0; i < NS_WS_BUFFERS; i++) {
        if (sizes[i] == SIZE_MAX || ns_round16(sizes[i]) > SIZE_MAX / sizeof(float) - total)
            return ns_fail(err, NS_ERR_INVALID, "forward workspace: L_max=%zu is too large",
                           ws->L_max);
        sizes[i] = ns_round16(sizes[i]);
        total += sizes[i];
    }
    void *block = NULL;
    if (posix_memalign(&block, 64, total * sizeof(float)) != 0)
        return ns_fail(err, NS_ERR_NOMEM, "forward workspace: cannot allocate %zu MiB for "
                       "L_max=%zu", total * sizeof(float) >> 20, ws->L_max);
    ws->block = block;
    float **bufs[NS_WS_BUFFERS - 1] = {&ws->x, &ws->ln, &ws->qkv, &ws->values, &ws->att,
                                       &ws->fc, &ws->fc2, &ws->zb, &ws->wb, &ws->keep_z,
                                       &ws->keep_w, &ws->cs, &ws->sn};
    float *p = ws->block;
    for (size_t i = 0; i < NS_WS_BUFFERS - 1; i++) {
        *bufs[i] = p;
        p += sizes[i];
    }
    ws->attn_work = (double *)(void *)p;
    return NS_OK;
}

int ns_model_workspace_new(const ns_model *model, size_t L_max, const size_t *rows, size_t n_rows,
                           ns_model_workspace **out, ns_err *err)
{
    *out = NULL;
    const ns_model_config *c = &model->config;
    if (L_max == 0)
        return ns_fail(err, NS_ERR_INVALID, "forward workspace: L_max must be at least 1");
    if (L_max > c->n_ctx)
        L_max = c->n_ctx; /* the forward refuses L > n_ctx anyway */
    if (c->n_head == 0 || c->n_kv_head == 0 || c->n_head % c->n_kv_head != 0 || c->d_head == 0 ||
        c->n_inner == 0 || model->qkv.width != qkv_width(c))
        return ns_fail(err, NS_ERR_INVALID, "forward workspace: bad model shape");
    ns_model_workspace *ws = calloc(1, sizeof *ws);
    if (!ws)
        return ns_fail(err, NS_ERR_NOMEM, "forward workspace: out of memory");
    *ws = (ns_model_workspace){.L_max = L_max, .C = c->n_embd, .H = c->n_head, .KV = c->n_kv_head,
                               .D = c->d_head, .W = model->qkv.width, .F = c->n_inner,
                               .rot = c->rotary_dim, .gated = c->gated_mlp};
    int rc = set_rows(ws, rows, n_rows, err);
    if (rc == NS_OK)
        rc = workspace_alloc(ws, c, err);
    if (rc != NS_OK) {
        ns_model_workspace_free(ws);
        return rc;
    }
    if (ws->rot)
        rope_tables(ws->cs, ws->sn, L_max, ws->rot, c->rope_theta);
    *out = ws;
    return NS_OK;
}

void ns_model_workspace_free(ns_model_workspace *ws)
{
    if (!ws)
        return;
    free(ws->block);
    free(ws->rows);
    free(ws->row_slot);
    free(ws);
}

/* ---- element-wise parts (outputs first, then inputs, then sizes) ---- */

/* out[t] = tok_emb[tokens[t]] (+ pos_emb[t]). */
static void ns_embed(float *out, const int32_t *tokens, const float *tok, const float *pos,
                     size_t L, size_t C)
{
    for (size_t t = 0; t < L; t++) {
        const float *te = tok + (size_t)tokens[t] * C;
        float *o = out + t * C;
        if (!pos) {
            memcpy(o, te, C * sizeof(float));
            continue;
        }
        const float *pe = pos + t * C;
        for (size_t c = 0; c < C; c++)
            o[c] = te[c] + pe[c];
    }
}

/* Every row of out (rows x cols, leading dimension ld) set to bias (a following sgemm with
 * beta = 1 adds x W). */
static void ns_rows_set(float *out, size_t ld, const float *bias, size_t rows, size_t cols)
{
    for (size_t r = 0; r < rows; r++)
        memcpy(out + r * ld, bias, cols * sizeof(float));
}

/* The kept rows' logits past their diagonal set to NaN and weights to 0, for sequences of L. */
static void fill_tails(ns_model_workspace *ws, size_t L)
{
    size_t stride = ws->n_rows * ws->L_max;
    for (size_t h = 0; h < ws->H; h++)
        for (size_t i = 0; i < ws->n_rows && ws->rows[i] < L; i++) {
            size_t m = ws->rows[i];
            float *z = ws->keep_z + h * stride + i * ws->L_max;
            float *w = ws->keep_w + h * stride + i * ws->L_max;
            for (size_t k = m + 1; k < L; k++)
                z[k] = NAN;
            memset(w + m + 1, 0, (L - m - 1) * sizeof(float));
        }
}

static void norm(const ns_model *m, float *out, const float *x, const float *w, const float *b,
                 size_t L, int simd)
{
    const ns_model_config *c = &m->config;
    if (c->rms_norm)
        ns_k_rmsnorm(out, x, w, L, c->n_embd, c->norm_eps, simd);
    else
        ns_k_layernorm(out, x, w, b, L, c->n_embd, c->norm_eps, simd);
}

/* ---- the forward pass ---- */

const float *ns_view_head_values(const ns_attn_layer_view *v, size_t h, size_t *ld)
{
    *ld = v->n_kv_head * v->d_head;
    return v->values + (h / (v->n_head / v->n_kv_head)) * v->d_head;
}

/* c (M, n_out; ldc) = a (M, n_in; lda) W + beta c, row-major, W as the file stores it. */
static void ns_mm(float *c, size_t ldc, const float *a, size_t lda, const ns_linear *w, size_t M,
                  float beta)
{
    cblas_sgemm(CblasRowMajor, CblasNoTrans, w->trans ? CblasTrans : CblasNoTrans, (int)M,
                (int)w->n_out, (int)w->n_in, 1.0f, a, (int)lda, w->w,
                (int)(w->trans ? w->n_in : w->n_out), beta, c, (int)ldc);
}

/* out (L, n_out; ldo) = in W + b: the bias written first, the product accumulated onto it. */
static void ns_affine(float *out, size_t ldo, const float *in, size_t ldi, const ns_linear *w,
                      size_t L)
{
    if (w->b)
        ns_rows_set(out, ldo, w->b, L, w->n_out);
    ns_mm(out, ldo, in, ldi, w, L, w->b ? 1.0f : 0.0f);
}

/* What one head's attention reads and writes. */
typedef struct head_args {
    const ns_model *m;
    ns_model_workspace *ws;
    size_t L;
    float scale;
    int simd;
} head_args;

/* Causal attention of query head h, NS_MODEL_ATT_BLOCK query rows [m0, m1) at a time against keys
 * [0, m1): z = q k^T / sqrt(D) into the block scratch (ld L), the model's normalizer of each row m
 * over keys 0..m (entries m+1..m1-1 zero), kept rows copied out, then out = w v. Fails only for an
 * invalid temperature. */
static int attention_head(const head_args *a, size_t h, ns_err *err)
{
    ns_model_workspace *ws = a->ws;
    const ns_qkv_layout *lay = &a->m->qkv;
    size_t L = a->L, D = ws->D, g = h / (ws->H / ws->KV), ldq = lay->width, ldv = ws->KV * D;
    const float *q = ws->qkv + lay->q0 + h * lay->q_step, *k = ws->qkv + lay->k0 + g * lay->k_step;
    const float *v = ws->values + g * D;
    float *out = ws->att + h * D, *zb = ws->zb, *wb = ws->wb;
    size_t ldo = ws->H * D, stride = ws->n_rows * ws->L_max;
    for (size_t m0 = 0; m0 < L; m0 += NS_MODEL_ATT_BLOCK) {
        size_t m1 = m0 + NS_MODEL_ATT_BLOCK < L ? m0 + NS_MODEL_ATT_BLOCK : L, rows = m1 - m0;
        cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, (int)rows, (int)m1, (int)D, a->scale,
                    q + m0 * ldq, (int)ldq, k, (int)ldq, 0.0f, zb, (int)L); /* (rows, m1) */
        for (size_t m = m0; m < m1; m++) {
            float *z = zb + (m - m0) * L, *w = wb + (m - m0) * L;
            NS_TRY(ns_gpt2_attn_row(w, z, m + 1, &a->m->gpt2, a->simd, ws->attn_work, err));
            memset(w + m + 1, 0, (m1 - m - 1) * sizeof(float));
            size_t slot = ws->row_slot[m];
            if (slot != SIZE_MAX) {
                memcpy(ws->keep_z + h * stride + slot * ws->L_max, z, (m + 1) * sizeof(float));
                memcpy(ws->keep_w + h * stride + slot * ws->L_max, w, (m + 1) * sizeof(float));
            }
        }
        cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, (int)rows, (int)D, (int)m1, 1.0f,
                    wb, (int)L, v, (int)ldv, 0.0f, out + m0 * ldo, (int)ldo); /* (rows, D) */
    }
    return NS_OK;
}

/* norm1, the q/k/v maps, the rotary embedding, v copied out, every head's attention. */
static int attention(const ns_model *m, ns_model_workspace *ws, const ns_layer_weights *w,
                     size_t L, int simd, ns_err *err)
{
    const ns_model_config *c = &m->config;
    const ns_qkv_layout *lay = &m->qkv;
    size_t W = lay->width, D = ws->D, KD = ws->KV * D;
    norm(m, ws->ln, ws->x, w->norm1_w, w->norm1_b, L, simd);                     /* (L, C) */
    for (size_t i = 0, col = 0; i < w->n_qkv; col += w->qkv[i].n_out, i++)
        ns_affine(ws->qkv + col, W, ws->ln, c->n_embd, &w->qkv[i], L);          /* (L, W) */
    if (ws->rot) {
        size_t half = ws->rot / 2;
        for (size_t t = 0; t < L; t++) {
            float *row = ws->qkv + t * W;
            const float *cs = ws->cs + t * half, *sn = ws->sn + t * half;
            for (size_t h = 0; h < ws->H; h++)
                ns_k_rotary(row + lay->q0 + h * lay->q_step, cs, sn, ws->rot);
            for (size_t g = 0; g < ws->KV; g++)
                ns_k_rotary(row + lay->k0 + g * lay->k_step, cs, sn, ws->rot);
        }
    }
    for (size_t t = 0; t < L; t++) {                                             /* (L, KV D) */
        if (lay->v_step == D) {
            memcpy(ws->values + t * KD, ws->qkv + t * W + lay->v0, KD * sizeof(float));
            continue;
        }
        for (size_t g = 0; g < ws->KV; g++)
            memcpy(ws->values + t * KD + g * D, ws->qkv + t * W + lay->v0 + g * lay->v_step,
                   D * sizeof(float));
    }
    head_args a = {.m = m, .ws = ws, .L = L, .scale = (float)(1.0 / sqrt((double)D)),
                   .simd = simd};
    for (size_t h = 0; h < ws->H; h++)                                           /* (L, D) each */
        NS_TRY(attention_head(&a, h, err));
    return NS_OK;
}

/* x += mlp(ln): down(act(up ln)) or down(act(gate ln) * up ln), biases as the map has them. */
static void mlp(const ns_model *m, ns_model_workspace *ws, const ns_layer_weights *w, size_t L,
                int simd)
{
    size_t C = ws->C, F = ws->F;
    if (w->gate.w) {
        ns_affine(ws->fc, F, ws->ln, C, &w->gate, L);                            /* (L, F) */
        ns_affine(ws->fc2, F, ws->ln, C, &w->up, L);
        if (m->act == NS_ACT_SILU)
            ns_k_silu_mul(ws->fc, ws->fc2, L * F, simd);
    } else {
        ns_affine(ws->fc, F, ws->ln, C, &w->up, L);                              /* (L, F) */
        if (m->act == NS_ACT_GELU_ERF)
            ns_k_gelu_erf(ws->fc, L * F);
        else
            ns_k_gelu(ws->fc, L * F, simd);
    }
    ns_mm(ws->x, C, ws->fc, F, &w->down, L, 1.0f);                               /* (L, C) */
    if (w->down.b)
        ns_k_rows_add(ws->x, w->down.b, L, C, simd);
}

static int check_call(const ns_model *m, const ns_model_workspace *ws, const int32_t *tokens,
                      size_t L, size_t n_layers, ns_err *err)
{
    const ns_model_config *c = &m->config;
    if (ws->C != c->n_embd || ws->H != c->n_head || ws->KV != c->n_kv_head || ws->D != c->d_head ||
        ws->F != c->n_inner || ws->W != m->qkv.width || ws->rot != c->rotary_dim)
        return ns_fail(err, NS_ERR_INVALID, "forward: workspace was made for another model shape");
    if (L == 0)
        return ns_fail(err, NS_ERR_INVALID, "forward: empty token sequence");
    if (L > c->n_ctx)
        return ns_fail(err, NS_ERR_INVALID, "forward: %zu tokens exceed the model's n_ctx=%zu", L,
                       c->n_ctx);
    if (L > ws->L_max)
        return ns_fail(err, NS_ERR_INVALID, "forward: %zu tokens exceed the workspace's L_max=%zu",
                       L, ws->L_max);
    if (n_layers == 0 || n_layers > c->n_layer)
        return ns_fail(err, NS_ERR_INVALID, "forward: %zu layers requested, the model has %zu",
                       n_layers, c->n_layer);
    if (ws->W > INT_MAX || ws->F > INT_MAX || ws->L_max > INT_MAX / 4)
        return ns_fail(err, NS_ERR_INVALID, "forward: model too large for 32-bit BLAS dimensions");
    for (size_t t = 0; t < L; t++)
        if (tokens[t] < 0 || (size_t)tokens[t] >= c->vocab_size)
            return ns_fail(err, NS_ERR_INVALID,
                           "forward: token id %d at position %zu is outside the vocabulary (size %zu)",
                           (int)tokens[t], t, c->vocab_size);
    return NS_OK;
}

int ns_model_forward(const ns_model *model, ns_model_workspace *ws, const int32_t *tokens,
                     size_t L, size_t n_layers, ns_attn_layer_fn fn, void *user, ns_err *err)
{
    NS_TRY(check_call(model, ws, tokens, L, n_layers, err));
    const ns_model_config *c = &model->config;
    const size_t C = c->n_embd, HD = ws->H * ws->D;
    const int simd = ns_k_simd();
    if (ws->filled_L != L) {
        fill_tails(ws, L);
        ws->filled_L = L;
    }
    size_t n_rows = 0;
    while (n_rows < ws->n_rows && ws->rows[n_rows] < L)
        n_rows++;
    ns_attn_layer_view view = {
        .n_head = ws->H, .n_kv_head = ws->KV, .d_head = ws->D, .L = L, .n_rows = n_rows,
        .rows = ws->rows, .row_slot = ws->row_slot, .ld = ws->L_max,
        .head_stride = ws->n_rows * ws->L_max, .logits = ws->keep_z, .weights = ws->keep_w,
        .values = ws->values,
    };
    ns_embed(ws->x, tokens, model->tok_emb, model->pos_emb, L, C);                /* (L, C) */
    for (size_t l = 0; l < n_layers; l++) {
        const ns_layer_weights *w = &model->layers[l];
        NS_TRY(attention(model, ws, w, L, simd, err));
        if (fn) {
            view.layer = l;
            int rc = fn(user, &view, err);
            if (rc != NS_OK)
                return rc;
        }
        if (l + 1 == n_layers)
            break; /* what follows the last attention asked for is unobservable (no LM head) */
        if (c->parallel_residual) /* the MLP reads the layer's input */
            norm(model, ws->ln, ws->x, w->norm2_w, w->norm2_b, L, simd);
        ns_mm(ws->x, C, ws->att, HD, &w->o, L, 1.0f);                             /* x += a Wo */
        if (w->o.b)
            ns_k_rows_add(ws->x, w->o.b, L, C, simd);
        if (!c->parallel_residual)
            norm(model, ws->ln, ws->x, w->norm2_w, w->norm2_b, L, simd);
        mlp(model, ws, w, L, simd);
    }
    return NS_OK;
}

/* ns_test_model: models for the forward, analysis and rows tests -- a tiny random GPT-2 filled through the
 * internal struct (shared with tests/test_forward.c), and one forward pass of a model over
 * tokens of golden/wap_tokens.i32 with every layer's logits and values captured, so tests can
 * analyse real rows of the stand-in model. Header-only; include it once per test program. */
#ifndef NS_TEST_MODEL_H
#define NS_TEST_MODEL_H

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/ns_row.h"
#include "model/ns_gpt2.h"
#include "model/ns_gpt2_internal.h"
#include "model/ns_model_internal.h"
#include "ns_test.h"

typedef struct tiny_model {
    ns_model m;
    float *params; /* one block holding every tensor */
} tiny_model;

/* splitmix64: a small deterministic generator for test weights. */
static inline uint64_t tiny_rng_next(uint64_t *s)
{
    uint64_t z = (*s += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

/* Uniform in [-1, 1). */
static inline float tiny_rng_unit(uint64_t *s)
{
    return (float)((double)(tiny_rng_next(s) >> 11) * 0x1.0p-52 - 1.0);
}

static inline float *tiny_take(float **p, size_t n, uint64_t *s, float center, float spread)
{
    float *t = *p;
    for (size_t i = 0; i < n; i++)
        t[i] = center + spread * tiny_rng_unit(s);
    *p += n;
    return t;
}

/* n_layer = 2, n_head = 4, n_embd = 16 (d_head = 4), n_ctx as given, vocab = 40, n_inner = 40
 * (not 4 C, so the MLP width comes from the config). Weights are large enough (|w| <= 0.5 on 16
 * inputs) that attention rows are far from uniform, so a wrong scale, mask or bias shows. */
static inline void tiny_model_make_ctx(tiny_model *t, uint64_t seed, size_t n_ctx)
{
    memset(t, 0, sizeof *t);
    ns_gpt2_config *c = &t->m.gpt2;
    c->n_layer = 2;
    c->n_head = 4;
    c->n_embd = 16;
    c->n_ctx = n_ctx;
    c->vocab_size = 40;
    c->n_inner = 40;
    c->ln_eps = 1e-5;
    c->attn_temperature = 1.0;
    ns_gpt2_config_generic(c, &t->m.config);
    size_t C = c->n_embd, F = c->n_inner;
    size_t per_layer = 4 * C + C * 3 * C + 3 * C + C * C + C + C * F + F + F * C + C;
    size_t total = c->vocab_size * C + c->n_ctx * C + 2 * C + c->n_layer * per_layer;
    t->params = malloc(total * sizeof(float));
    t->m.layers = calloc(c->n_layer, sizeof *t->m.layers);
    CU_ASSERT_FATAL(t->params != NULL && t->m.layers != NULL);
    ns_gpt2_shapes(&t->m);
    float *p = t->params;
    uint64_t s = seed;
    t->m.tok_emb = tiny_take(&p, c->vocab_size * C, &s, 0.0f, 1.0f);
    t->m.pos_emb = tiny_take(&p, c->n_ctx * C, &s, 0.0f, 0.3f);
    t->m.norm_f_w = tiny_take(&p, C, &s, 1.0f, 0.1f);
    t->m.norm_f_b = tiny_take(&p, C, &s, 0.0f, 0.1f);
    for (size_t l = 0; l < c->n_layer; l++) {
        ns_layer_weights *w = &t->m.layers[l];
        w->norm1_w = tiny_take(&p, C, &s, 1.0f, 0.2f);
        w->norm1_b = tiny_take(&p, C, &s, 0.0f, 0.1f);
        w->qkv[0].w = tiny_take(&p, C * 3 * C, &s, 0.0f, 0.5f);
        w->qkv[0].b = tiny_take(&p, 3 * C, &s, 0.0f, 0.1f);
        w->o.w = tiny_take(&p, C * C, &s, 0.0f, 0.3f);
        w->o.b = tiny_take(&p, C, &s, 0.0f, 0.1f);
        w->norm2_w = tiny_take(&p, C, &s, 1.0f, 0.2f);
        w->norm2_b = tiny_take(&p, C, &s, 0.0f, 0.1f);
        w->up.w = tiny_take(&p, C * F, &s, 0.0f, 0.3f);
        w->up.b = tiny_take(&p, F, &s, 0.0f, 0.1f);
        w->down.w = tiny_take(&p, F * C, &s, 0.0f, 0.3f);
        w->down.b = tiny_take(&p, C, &s, 0.0f, 0.1f);
    }
    CU_ASSERT_FATAL((size_t)(p - t->params) == total);
}

static inline void tiny_model_make(tiny_model *t, uint64_t seed)
{
    tiny_model_make_ctx(t, seed, 12);
}

static inline void tiny_model_free(tiny_model *t)
{
    free(t->params);
    free(t->m.layers);
}

/* Tokens of the tiny vocabulary from a fixed stream. */
static inline void tiny_tokens(int32_t *tokens, size_t L, size_t V, uint64_t seed)
{
    uint64_t s = seed;
    for (size_t t = 0; t < L; t++)
        tokens[t] = (int32_t)(tiny_rng_next(&s) % V);
}

/* ---- capturing every layer of a forward pass ---- */

typedef struct layer_capture {
    size_t n_layer, H, D, L;
    float *logits; /* (n_layer, H, L, L): the layer view's logits (rows not kept: 0) */
    float *values; /* (n_layer, L, H * D): the values each query head sees */
    size_t calls;
} layer_capture;

static inline int layer_capture_init(layer_capture *cap, size_t n_layer, size_t H, size_t D,
                                     size_t L)
{
    memset(cap, 0, sizeof *cap);
    cap->n_layer = n_layer, cap->H = H, cap->D = D, cap->L = L;
    cap->logits = calloc(n_layer * H * L * L, sizeof(float));
    cap->values = calloc(n_layer * L * H * D, sizeof(float));
    return cap->logits && cap->values ? 0 : -1;
}

static inline void layer_capture_free(layer_capture *cap)
{
    free(cap->logits);
    free(cap->values);
}

/* ns_attn_layer_fn: copy the layer's logits and values. */
static inline int layer_capture_fn(void *user, const ns_attn_layer_view *v, ns_err *err)
{
    layer_capture *cap = user;
    (void)err;
    cap->calls++;
    if (v->layer >= cap->n_layer || v->L != cap->L || v->n_head != cap->H || v->d_head != cap->D)
        return ns_fail(err, NS_ERR_INVALID, "capture: unexpected layer view");
    size_t L = cap->L, D = cap->D, C = cap->H * D, hll = cap->H * L * L, lc = L * C;
    for (size_t h = 0; h < cap->H; h++) {
        for (size_t m = 0; m < L; m++) /* the kept rows (the others stay 0) */
            if (v->row_slot[m] != SIZE_MAX)
                memcpy(cap->logits + v->layer * hll + (h * L + m) * L,
                       v->logits + h * v->head_stride + v->row_slot[m] * v->ld, L * sizeof(float));
        size_t ld;
        const float *hv = ns_view_head_values(v, h, &ld); /* its key/value group's */
        for (size_t t = 0; t < L; t++)
            memcpy(cap->values + v->layer * lc + t * C + h * D, hv + t * ld, D * sizeof(float));
    }
    return NS_OK;
}

/* The analysis input of (layer, head) of a capture (the layout ns_rows hands to the analysis). */
static inline ns_head_input layer_capture_head(const layer_capture *cap, size_t layer, size_t h)
{
    size_t L = cap->L, C = cap->H * cap->D;
    ns_head_input in = {
        .logits = cap->logits + (layer * cap->H + h) * L * L, .logits_ld = L,
        .values = cap->values + layer * L * C + h * cap->D, .values_ld = C,
        .L_max = L, .d = cap->D,
    };
    return in;
}

/* Read tokens [offset, offset + L) of golden/wap_tokens.i32 (raw little-endian int32). */
static inline int read_wap_tokens(const char *golden_dir, size_t offset, size_t L, int32_t *out)
{
    char path[4096];
    snprintf(path, sizeof path, "%s/wap_tokens.i32", golden_dir);
    FILE *f = fopen(path, "rb");
    if (!f)
        return -1;
    int ok = fseek(f, (long)(offset * 4), SEEK_SET) == 0 && fread(out, 4, L, f) == L;
    fclose(f);
    return ok ? 0 : -1;
}

/* The stand-in model ($NS_TEST_MODEL_DIR) over tokens [offset, offset + L) of the War and Peace
 * tokens: every layer captured into cap (initialised here; free with layer_capture_free). */
static inline int standin_capture(size_t offset, size_t L, layer_capture *cap)
{
    const char *model_dir = ns_test_env("NS_TEST_MODEL_DIR");
    const char *golden_dir = ns_test_env("NS_TEST_GOLDEN_DIR");
    ns_model *model = NULL;
    ns_model_workspace *ws = NULL;
    ns_err err;
    int32_t *tokens = malloc(L * sizeof *tokens);
    int rc = -1;
    if (!tokens || read_wap_tokens(golden_dir, offset, L, tokens) != 0)
        goto done;
    if (ns_model_load(model_dir, &model, &err) != NS_OK) {
        fprintf(stderr, "standin_capture: %s\n", err.msg);
        goto done;
    }
    const ns_model_config *c = ns_model_config_of(model);
    if (layer_capture_init(cap, c->n_layer, c->n_head, c->d_head, L) != 0 ||
        ns_model_workspace_new(model, L, NULL, 0, &ws, &err) != NS_OK ||
        ns_model_forward(model, ws, tokens, L, c->n_layer, layer_capture_fn, cap, &err) != NS_OK)
        goto done;
    rc = 0;
done:
    ns_model_workspace_free(ws);
    ns_model_free(model);
    free(tokens);
    return rc;
}

#endif

/* test_models: the forward pass of the Llama layout and GPT-NeoX (random models written by
 * ns_mkdecoder_write, loaded by ns_model_load) -- causality (a change of the last token leaves
 * every earlier row bit for bit), kept rows (a workspace keeping some rows gives exactly the rows
 * of one keeping all), the rotary embedding against a case computed by hand, the new kernels
 * against double formulas and their two forms against each other, and the checkpoint layer
 * (sharded loads equal single-file loads; the index's checks). The comparison with an independent
 * float64 implementation of each architecture is tests/models_ref.sh. */
#include <CUnit/Basic.h>
#include <dirent.h>
#include <float.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/ns_file.h"
#include "common/ns_sha256.h"
#include "model/ns_checkpoint.h"
#include "model/ns_mkmodel.h"
#include "model/ns_model.h"
#include "model/ns_model_kernels.h"
#include "ns_test.h"

/* A small random model of each kind: GQA Llama, Qwen2 (biases), GPT-NeoX (partial rotary,
 * parallel residual). Written into a fresh temporary directory (the caller removes it: ns_test_rm_tree). */
static char *make_model(int kind, size_t shards, ns_st_dtype dtype)
{
    char tmpl[] = "/tmp/ns_test_models_XXXXXX";
    char *dir = mkdtemp(tmpl) ? strdup(tmpl) : NULL;
    CU_ASSERT_FATAL(dir != NULL);
    ns_mkdecoder_opts o;
    ns_mkdecoder_defaults(kind == 2 ? NS_ARCH_GPT_NEOX : NS_ARCH_LLAMA,
                          kind == 1 ? "qwen2" : "llama", &o);
    ns_model_config *c = &o.config;
    c->n_layer = 3;
    c->n_head = 4;
    c->n_kv_head = kind == 2 ? 4 : 2;
    c->n_embd = 32;
    c->n_inner = 48;
    c->n_ctx = 300;
    c->vocab_size = 50;
    o.init_std = 0.3;
    o.init_full = 1;
    o.seed = 5 + (uint64_t)kind;
    o.dtype = dtype;
    o.shards = shards;
    ns_err err;
    ns_err_clear(&err);
    int rc = ns_mkdecoder_write(dir, &o, &err);
    if (rc)
        fprintf(stderr, "\n  mkdecoder: %s\n", err.msg);
    CU_ASSERT_EQUAL_FATAL(rc, NS_OK);
    return dir;
}

typedef struct rows_copy {
    size_t H, L, layers;
    float *z, *w, *v; /* (layers, H, L, L) every row (0 where not kept), values (layers, H, L, D) */
    size_t D;
} rows_copy;

static int copy_layer(void *user, const ns_attn_layer_view *v, ns_err *err)
{
    rows_copy *rc = user;
    (void)err;
    size_t L = rc->L, H = rc->H, D = rc->D;
    for (size_t h = 0; h < H; h++) {
        for (size_t i = 0; i < v->n_rows; i++) {
            size_t m = v->rows[i], at = h * v->head_stride + v->row_slot[m] * v->ld;
            memcpy(rc->z + ((v->layer * H + h) * L + m) * L, v->logits + at, (m + 1) * sizeof(float));
            memcpy(rc->w + ((v->layer * H + h) * L + m) * L, v->weights + at, (m + 1) * sizeof(float));
        }
        size_t ld;
        const float *hv = ns_view_head_values(v, h, &ld);
        for (size_t t = 0; t < L; t++)
            memcpy(rc->v + ((v->layer * H + h) * L + t) * D, hv + t * ld, D * sizeof(float));
    }
    rc->layers++;
    return NS_OK;
}

static void run(const ns_model *m, const int32_t *tok, size_t L, const size_t *rows, size_t nrows,
                rows_copy *out)
{
    const ns_model_config *c = ns_model_config_of(m);
    memset(out, 0, sizeof *out);
    out->H = c->n_head, out->L = L, out->D = c->d_head;
    size_t n = c->n_layer * c->n_head * L * L;
    out->z = calloc(n, sizeof(float));
    out->w = calloc(n, sizeof(float));
    out->v = calloc(c->n_layer * c->n_head * L * c->d_head, sizeof(float));
    CU_ASSERT_FATAL(out->z && out->w && out->v);
    ns_model_workspace *ws = NULL;
    ns_err err;
    CU_ASSERT_EQUAL_FATAL(ns_model_workspace_new(m, L, rows, nrows, &ws, &err), NS_OK);
    CU_ASSERT_EQUAL(ns_model_forward(m, ws, tok, L, c->n_layer, copy_layer, out, &err), NS_OK);
    CU_ASSERT_EQUAL(out->layers, c->n_layer);
    ns_model_workspace_free(ws);
}

static void free_copy(rows_copy *r)
{
    free(r->z);
    free(r->w);
    free(r->v);
}

/* Causality, and kept rows = the same rows of a pass keeping all, over 2.3 attention blocks. */
static void check_kind(int kind)
{
    char *dir = make_model(kind, 1, NS_ST_F32);
    ns_model *m = NULL;
    ns_err err;
    CU_ASSERT_EQUAL_FATAL(ns_model_load(dir, &m, &err), NS_OK);
    const ns_model_config *c = ns_model_config_of(m);
    enum { L = 300 };
    int32_t tok[L], tok2[L];
    uint64_t s = 99;
    for (size_t t = 0; t < L; t++) {
        s = s * 6364136223846793005ull + 1442695040888963407ull;
        tok[t] = tok2[t] = (int32_t)((s >> 33) % c->vocab_size);
    }
    tok2[L - 1] = (tok[L - 1] + 1) % (int32_t)c->vocab_size;
    rows_copy a, b, k;
    run(m, tok, L, NULL, 0, &a);
    run(m, tok2, L, NULL, 0, &b);
    size_t HLL = c->n_head * L * L, diff_before = 0, diff_last = 0;
    for (size_t l = 0; l < c->n_layer; l++)
        for (size_t h = 0; h < c->n_head; h++)
            for (size_t m_ = 0; m_ < L; m_++)
                for (size_t i = 0; i <= m_; i++) {
                    size_t at = l * HLL + (h * L + m_) * L + i;
                    int same = memcmp(&a.z[at], &b.z[at], sizeof(float)) == 0 &&
                               memcmp(&a.w[at], &b.w[at], sizeof(float)) == 0;
                    if (m_ + 1 < L)
                        diff_before += !same;
                    else
                        diff_last += !same;
                }
    printf("\n    %s: entries of rows before the changed token differing: %zu (of the last row: "
           "%zu of %zu) ", c->model_type, diff_before, diff_last, c->n_layer * c->n_head * L);
    CU_ASSERT_EQUAL(diff_before, 0);
    CU_ASSERT(diff_last > 0);
    /* kept rows: the rows of the last two L of a grid, as the rows stage keeps them */
    const size_t rows[] = {5, 6, 127, 128, 129, 250, 299};
    run(m, tok, L, rows, sizeof rows / sizeof rows[0], &k);
    size_t bad = 0;
    for (size_t l = 0; l < c->n_layer; l++)
        for (size_t h = 0; h < c->n_head; h++)
            for (size_t r = 0; r < sizeof rows / sizeof rows[0]; r++) {
                size_t at = l * HLL + (h * L + rows[r]) * L;
                bad += memcmp(a.z + at, k.z + at, (rows[r] + 1) * sizeof(float)) != 0;
                bad += memcmp(a.w + at, k.w + at, (rows[r] + 1) * sizeof(float)) != 0;
            }
    CU_ASSERT_EQUAL(bad, 0);
    CU_ASSERT_EQUAL(memcmp(a.v, k.v, c->n_layer * c->n_head * L * c->d_head * sizeof(float)), 0);
    free_copy(&a);
    free_copy(&b);
    free_copy(&k);
    ns_model_free(m);
    ns_test_rm_tree(dir);
    free(dir);
}

static void test_llama_gqa(void) { check_kind(0); }
static void test_qwen2(void) { check_kind(1); }
static void test_neox(void) { check_kind(2); }

/* The same model written as one BF16 file and as 4 BF16 shards: the loads give the same
 * configuration and the same forward pass bit for bit; the SHA-256s follow their definitions. */
static void test_sharded_equals_single(void)
{
    char *one = make_model(0, 1, NS_ST_BF16), *four = make_model(0, 4, NS_ST_BF16);
    ns_model *a = NULL, *b = NULL;
    ns_err err;
    CU_ASSERT_EQUAL_FATAL(ns_model_load(one, &a, &err), NS_OK);
    int rc = ns_model_load(four, &b, &err);
    if (rc)
        fprintf(stderr, "\n  sharded: %s\n", err.msg);
    CU_ASSERT_EQUAL_FATAL(rc, NS_OK);
    CU_ASSERT_EQUAL(memcmp(ns_model_config_of(a), ns_model_config_of(b), sizeof(ns_model_config)), 0);
    int32_t tok[40];
    for (size_t t = 0; t < 40; t++)
        tok[t] = (int32_t)((t * 7 + 3) % 50);
    rows_copy x, y;
    run(a, tok, 40, NULL, 0, &x);
    run(b, tok, 40, NULL, 0, &y);
    size_t n = 3 * 4 * 40 * 40;
    CU_ASSERT_EQUAL(memcmp(x.w, y.w, n * sizeof(float)), 0);
    CU_ASSERT_EQUAL(memcmp(x.v, y.v, 3 * 4 * 40 * 8 * sizeof(float)), 0);
    char ha[65], hb[65], hf[65];
    CU_ASSERT_EQUAL(ns_model_sha256(a, ha, &err), NS_OK);
    CU_ASSERT_EQUAL(ns_model_sha256(b, hb, &err), NS_OK);
    char *single = ns_path_join(one, "model.safetensors");
    CU_ASSERT_EQUAL(ns_sha256_file(single, hf, &err), NS_OK); /* one file: its own SHA-256 */
    CU_ASSERT_STRING_EQUAL(ha, hf);
    CU_ASSERT_STRING_NOT_EQUAL(ha, hb);
    /* shards: the SHA-256 of "<sha256>  <name>\n" per shard, in name order */
    char text[4 * 128] = "";
    for (int k = 1; k <= 4; k++) {
        char name[64], h[65];
        snprintf(name, sizeof name, "model-%05d-of-00004.safetensors", k);
        char *p = ns_path_join(four, name);
        CU_ASSERT_EQUAL(ns_sha256_file(p, h, &err), NS_OK);
        snprintf(text + strlen(text), sizeof text - strlen(text), "%s  %s\n", h, name);
        free(p);
    }
    CU_ASSERT_EQUAL(ns_sha256_buffer(text, strlen(text), hf, &err), NS_OK);
    CU_ASSERT_STRING_EQUAL(hb, hf);
    CU_ASSERT_PTR_NOT_NULL(strstr(ns_model_weights_path(b), "model.safetensors.index.json"));
    free(single);
    free_copy(&x);
    free_copy(&y);
    ns_model_free(a);
    ns_model_free(b);
    ns_test_rm_tree(one);
    ns_test_rm_tree(four);
    free(one);
    free(four);
}

/* The index's checks: each problem refused with NS_ERR_FORMAT naming the index (or shard). */
static void test_index_errors(void)
{
    char *dir = make_model(2, 2, NS_ST_F32);
    char *index = ns_path_join(dir, NS_CKPT_INDEX);
    char *text = NULL;
    size_t len = 0;
    ns_err err;
    CU_ASSERT_EQUAL_FATAL(ns_file_read_all(index, 0, &text, &len, &err), NS_OK);
    static const struct { const char *from, *to, *says; } cases[] = {
        /* a tensor mapped to the other shard */
        {"\"gpt_neox.embed_in.weight\": \"model-00001-of-00002.safetensors\"",
         "\"gpt_neox.embed_in.weight\": \"model-00002-of-00002.safetensors\"", "maps it to"},
        /* a shard outside the directory */
        {"\"embed_out.weight\": \"model-00002-of-00002.safetensors\"",
         "\"embed_out.weight\": \"../model-00002-of-00002.safetensors\"", "not a file name"},
        /* no weight_map */
        {"\"weight_map\"", "\"weights\"", "weight_map"},
        /* a tensor the index does not name */
        {"\"embed_out.weight\": \"model-00002-of-00002.safetensors\",", "", "not in the index"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char *at = strstr(text, cases[i].from);
        CU_ASSERT_PTR_NOT_NULL_FATAL(at);
        size_t fl = strlen(cases[i].from), tl = strlen(cases[i].to);
        char *edited = malloc(len - fl + tl + 1);
        CU_ASSERT_FATAL(edited != NULL);
        memcpy(edited, text, (size_t)(at - text));
        memcpy(edited + (at - text), cases[i].to, tl);
        strcpy(edited + (at - text) + tl, at + fl);
        CU_ASSERT_EQUAL(ns_file_write_atomic(index, edited, strlen(edited), &err), NS_OK);
        ns_model *m = NULL;
        int rc = ns_model_load(dir, &m, &err);
        CU_ASSERT_EQUAL(rc, NS_ERR_FORMAT);
        CU_ASSERT_PTR_NULL(m);
        CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, cases[i].says));
        CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, dir));
        if (rc == NS_OK)
            ns_model_free(m);
        free(edited);
    }
    free(text);
    free(index);
    ns_test_rm_tree(dir);
    free(dir);
}

/* The rotary kernel against a case computed by hand: head dimension 4, rope_theta 10000,
 * position 1: dimension i is rotated with i + 2 by the angle 1 * 10000^(-2i/4), i.e. 1 rad for
 * the pair (0, 2) and 0.01 rad for (1, 3). x = (1, 2, 3, 4):
 *   x0' = 1 cos 1 - 3 sin 1 = -1.98411...,   x2' = 3 cos 1 + 1 sin 1 = 2.46238...
 *   x1' = 2 cos .01 - 4 sin .01 = 1.95990...,  x3' = 4 cos .01 + 2 sin .01 = 4.01980...
 * (llama2.c's adjacent pairs (0, 1), (2, 3) would give x0' = cos 1 - 2 sin 1 = -1.14.) The
 * values were computed by hand from the cosines and sines; the float kernel is within 2 ulp. */
static void test_rotary_hand(void)
{
    float x[4] = {1, 2, 3, 4};
    const float cs[2] = {(float)cos(1.0), (float)cos(0.01)}, sn[2] = {(float)sin(1.0), (float)sin(0.01)};
    const double want[4] = {-1.9841106230, 1.9599006667, 2.4623779203, 4.0197996667};
    ns_k_rotary(x, cs, sn, 4);
    for (int i = 0; i < 4; i++)
        CU_ASSERT(fabs(x[i] - want[i]) <= 2 * FLT_EPSILON * fabs(want[i]) + 1e-9);
    /* partial rotary (GPT-NeoX): only the first rot dimensions move */
    float y[6] = {1, 2, 3, 4, 5, 6};
    ns_k_rotary(y, cs, sn, 4);
    CU_ASSERT(y[4] == 5.0f && y[5] == 6.0f);
    CU_ASSERT(fabs(y[0] - want[0]) <= 2 * FLT_EPSILON * fabs(want[0]));
}

/* RMSNorm and the SiLU gate against double formulas, and their AVX2 and portable forms against
 * each other. RMSNorm: rstd rounded to float, then two float products: 3 ulp of the output
 * (allowed 4) plus the float rounding of rstd (1 ulp). SiLU gate: expf (<= 3.1 ulp vector, 0.5
 * scalar) and three roundings, with the argument's magnitude |g| < 8 amplifying expf's relative
 * error by at most |g| e^-|g|... by the sigmoid's slope (< 1/4): within 8 ulp. The forms: the same
 * arithmetic apart from expf and, for RMSNorm, the order of a double sum: <= 6 ulp apart. */
static void test_kernels(void)
{
    int simd = ns_k_simd();
    enum { C = 77, R = 3, N = 1001 };
    float x[R * C], w[C], o0[R * C], o1[R * C];
    uint64_t s = 3;
    for (size_t i = 0; i < R * C; i++) {
        s = s * 6364136223846793005ull + 1442695040888963407ull;
        x[i] = (float)((double)(s >> 11) * 0x1.0p-53 * 6.0 - 3.0);
    }
    for (size_t c = 0; c < C; c++)
        w[c] = 0.5f + (float)c / C;
    ns_k_rmsnorm(o0, x, w, R, C, 1e-6, 0);
    if (simd)
        ns_k_rmsnorm(o1, x, w, R, C, 1e-6, 1);
    double e_ref = 0, e_forms = 0;
    for (size_t t = 0; t < R; t++) {
        double ms = 0;
        for (size_t c = 0; c < C; c++)
            ms += (double)x[t * C + c] * x[t * C + c];
        double rstd = 1.0 / sqrt(ms / C + 1e-6);
        for (size_t c = 0; c < C; c++) {
            double r = w[c] * (x[t * C + c] * rstd);
            e_ref = fmax(e_ref, fabs(o0[t * C + c] - r) / (5 * FLT_EPSILON * fabs(r) + 1e-30));
            if (simd) {
                e_ref = fmax(e_ref, fabs(o1[t * C + c] - r) / (5 * FLT_EPSILON * fabs(r) + 1e-30));
                e_forms = fmax(e_forms, fabs(o1[t * C + c] - o0[t * C + c]) /
                                            (fabs(o0[t * C + c]) + 1e-30));
            }
        }
    }
    float g0[N], g1[N], u[N];
    double ref[N];
    for (size_t i = 0; i < N; i++) {
        g0[i] = g1[i] = 16.0f * ((float)i / N - 0.5f);
        u[i] = 1.0f + (float)(i % 7) / 7.0f;
        ref[i] = (double)g0[i] / (1.0 + exp(-(double)g0[i])) * u[i];
    }
    ns_k_silu_mul(g0, u, N, 0);
    if (simd)
        ns_k_silu_mul(g1, u, N - 3, 1); /* a partial last step */
    double e_silu = 0, e_silu_forms = 0;
    for (size_t i = 0; i < N; i++) {
        double tol = 8 * FLT_EPSILON * fabs(ref[i]) + 1e-30;
        e_silu = fmax(e_silu, fabs(g0[i] - ref[i]) / tol);
        if (simd && i < N - 3) {
            e_silu = fmax(e_silu, fabs(g1[i] - ref[i]) / tol);
            e_silu_forms = fmax(e_silu_forms, fabs(g1[i] - g0[i]) / (fabs(g0[i]) + 1e-30));
        }
    }
    if (simd)
        CU_ASSERT(g1[N - 1] == 16.0f * ((float)(N - 1) / N - 0.5f)); /* left alone */
    printf("\n    rmsnorm: vs double %.2f of the tolerance, forms %.2f ulp; silu gate: vs double "
           "%.2f of the tolerance, forms %.2f ulp ", e_ref, e_forms / FLT_EPSILON, e_silu,
           e_silu_forms / FLT_EPSILON);
    CU_ASSERT(e_ref <= 1.0);
    CU_ASSERT(e_silu <= 1.0);
    CU_ASSERT(e_forms <= 6 * FLT_EPSILON);
    CU_ASSERT(e_silu_forms <= 6 * FLT_EPSILON);
    /* the exact GELU against erfc in double over [-8, 8]: erfcf (glibc: within 3 ulp) of an
     * argument rounded twice (its relative error amplified by |d log erfc / d log y| <= 2 y^2 + 1
     * < 130 at y = 8 / sqrt 2 -- allowed as 6 + |x|^2 ulp with the roundings around it) */
    enum { G = 801 };
    float gx[G], gy[G];
    double e_gelu = 0;
    for (int i = 0; i < G; i++)
        gx[i] = gy[i] = -8.0f + 16.0f * (float)i / (G - 1);
    ns_k_gelu_erf(gy, G);
    for (int i = 0; i < G; i++) {
        double r = 0.5 * gx[i] * erfc(-gx[i] / sqrt(2.0));
        double tol = (6.0 + (double)gx[i] * gx[i]) * FLT_EPSILON * fabs(r) + 1e-300;
        e_gelu = fmax(e_gelu, fabs(gy[i] - r) / tol);
    }
    printf("gelu (erf): vs double %.2f of the tolerance ", e_gelu);
    CU_ASSERT(e_gelu <= 1.0);
}


/* Every preset (its sizes reduced to 1 layer, 64 positions, 100 tokens) and a Mistral with its
 * own head_dim load again with exactly the configuration mkmodel meant (the config.json written
 * is read back into the same ns_model_config), and their tensors bind. */
static void test_presets_load(void)
{
    static const char *const presets[] = {"smollm2-135m", "qwen2.5-0.5b", "pythia-70m",
                                          "pythia-160m", NULL};
    for (size_t i = 0; i < 5; i++) {
        ns_mkdecoder_opts o;
        ns_err err;
        ns_err_clear(&err);
        if (presets[i]) {
            CU_ASSERT_EQUAL_FATAL(ns_mkdecoder_preset(presets[i], &o, &err), NS_OK);
        } else {
            ns_mkdecoder_defaults(NS_ARCH_LLAMA, "mistral", &o);
            o.config.n_head = 4, o.config.n_kv_head = 1, o.config.n_embd = 32;
            o.config.d_head = 6, o.config.n_inner = 40, o.sliding_window = 64;
        }
        o.config.n_layer = 1, o.config.n_ctx = 64, o.config.vocab_size = 100;
        CU_ASSERT_EQUAL_FATAL(ns_mkdecoder_check(&o, &err), NS_OK);
        char tmpl[] = "/tmp/ns_test_models_XXXXXX";
        CU_ASSERT_FATAL(mkdtemp(tmpl) != NULL);
        CU_ASSERT_EQUAL_FATAL(ns_mkdecoder_write(tmpl, &o, &err), NS_OK);
        ns_model *m = NULL;
        int rc = ns_model_load(tmpl, &m, &err);
        if (rc)
            fprintf(stderr, "\n  %s: %s\n", presets[i] ? presets[i] : "mistral", err.msg);
        CU_ASSERT_EQUAL_FATAL(rc, NS_OK);
        ns_model_config want = o.config, got = *ns_model_config_of(m);
        want.sliding_window = presets[i] ? 0 : 64; /* qwen2's is off (use_sliding_window false) */
        CU_ASSERT_EQUAL(memcmp(&want, &got, sizeof want), 0);
        CU_ASSERT_STRING_EQUAL(got.model_type, presets[i] ? (i < 1 ? "llama" : i < 2 ? "qwen2"
                                                                               : "gpt_neox")
                                                          : "mistral");
        ns_model_free(m);
        ns_test_rm_tree(tmpl);
    }
}

int main(void)
{
    if (CU_initialize_registry() != CUE_SUCCESS)
        return 1;
    CU_pSuite s = CU_add_suite("models", NULL, NULL);
    if (!s || !CU_add_test(s, "llama GQA: causality, kept rows", test_llama_gqa) ||
        !CU_add_test(s, "qwen2 (q/k/v biases): causality, kept rows", test_qwen2) ||
        !CU_add_test(s, "gpt-neox (partial rotary, parallel residual): causality, kept rows",
                     test_neox) ||
        !CU_add_test(s, "sharded BF16 = single file; SHA-256 definitions", test_sharded_equals_single) ||
        !CU_add_test(s, "index errors", test_index_errors) ||
        !CU_add_test(s, "presets load with the configuration meant", test_presets_load) ||
        !CU_add_test(s, "rotary embedding: a case computed by hand", test_rotary_hand) ||
        !CU_add_test(s, "kernels: RMSNorm, SiLU gate, exact GELU", test_kernels)) {
        CU_cleanup_registry();
        return 1;
    }
    return ns_test_run_all();
}

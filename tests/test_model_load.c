/* test_model_load: ns_gpt2_load on the stand-in model, the "transformer." prefix, mkmodel round
 * trips (F32/F16/BF16) and config.json / model-level errors. */
#include <CUnit/Basic.h>
#include <dirent.h>
#include <fcntl.h>
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "model/ns_gpt2.h"
#include "model/ns_gpt2_internal.h"
#include "model/ns_model_internal.h"
#include "model/ns_mkmodel_internal.h"
#include "model/ns_mkmodel_write_internal.h"
#include "model/ns_safetensors.h"
#include "ns_test.h"

/* ---- helpers ---- */

static char *make_tmpdir(void)
{
    char tmpl[] = "/tmp/ns_test_model_XXXXXX";
    char *d = mkdtemp(tmpl);
    return d ? strdup(d) : NULL;
}

/* Read one little-endian float32 at an absolute file offset. */
static float file_f32(const char *path, size_t off)
{
    float v = NAN;
    int fd = open(path, O_RDONLY);
    if (fd >= 0) {
        if (pread(fd, &v, 4, (off_t)off) != 4)
            v = NAN;
        close(fd);
    }
    return v;
}

/* Data offset of a tensor found by parsing the header independently of the loader. */
static size_t header_offset(const char *path, const char *name)
{
    size_t result = (size_t)-1;
    FILE *f = fopen(path, "rb");
    if (!f)
        return result;
    uint64_t n = 0;
    char *buf = NULL;
    if (fread(&n, 8, 1, f) == 1 && n < (1u << 24) && (buf = malloc(n)) && fread(buf, 1, n, f) == n) {
        json_t *root = json_loadb(buf, n, 0, NULL);
        json_t *offs = json_object_get(json_object_get(root, name), "data_offsets");
        if (offs)
            result = 8 + n + (size_t)json_integer_value(json_array_get(offs, 0));
        json_decref(root);
    }
    free(buf);
    fclose(f);
    return result;
}

static void write_text(const char *dir, const char *name, const char *text)
{
    char *p = ns_path_join(dir, name);
    FILE *f = fopen(p, "w");
    CU_ASSERT_FATAL(f != NULL);
    fputs(text, f);
    fclose(f);
    free(p);
}

static int message_has(const ns_err *e, const char *a, const char *b)
{
    int ok = strstr(e->msg, a) != NULL && (!b || strstr(e->msg, b) != NULL) && !strchr(e->msg, '\n');
    if (!ok)
        fprintf(stderr, "\n  message lacks '%s'/'%s': %s\n", a, b ? b : "", e->msg);
    return ok;
}

/* ---- stand-in model ---- */

static void test_standin_config(void)
{
    ns_model_config c;
    ns_err e;
    ns_err_clear(&e);
    CU_ASSERT_EQUAL_FATAL(ns_model_config_read(ns_test_env("NS_TEST_MODEL_DIR"), &c, &e), NS_OK);
    CU_ASSERT_EQUAL(c.n_layer, 4);
    CU_ASSERT_EQUAL(c.n_head, 4);
    CU_ASSERT_EQUAL(c.n_embd, 128);
    CU_ASSERT_EQUAL(c.n_ctx, 1024);
    CU_ASSERT_EQUAL(c.vocab_size, 50257);
    CU_ASSERT_EQUAL(c.n_inner, 512); /* n_inner absent -> 4 * n_embd */
    CU_ASSERT_EQUAL(c.norm_eps, 1e-5);
    CU_ASSERT(c.arch == NS_ARCH_GPT2 && c.n_kv_head == 4 && c.d_head == 32 && c.rotary_dim == 0);
}

static void test_standin_load(void)
{
    const char *dir = ns_test_env("NS_TEST_MODEL_DIR");
    ns_gpt2_model *m = NULL;
    ns_err e;
    ns_err_clear(&e);
    int rc = ns_gpt2_load(dir, &m, &e);
    if (rc != NS_OK)
        fprintf(stderr, "\n  load failed: %s\n", e.msg);
    CU_ASSERT_EQUAL_FATAL(rc, NS_OK);
    const ns_gpt2_config *c = ns_gpt2_config_of(m);
    CU_ASSERT_EQUAL(c->n_layer, 4);
    CU_ASSERT_EQUAL(c->n_embd, 128);
    CU_ASSERT_PTR_NULL(m->converted); /* all F32 and aligned: used in place */

    /* Every pointer filled and inside the map. */
    const float *p[] = {m->tok_emb, m->pos_emb, m->norm_f_w, m->norm_f_b};
    for (size_t i = 0; i < 4; i++)
        CU_ASSERT(p[i] && (const uint8_t *)p[i] >= m->ckpt.files[0].map.data &&
                  (const uint8_t *)p[i] < m->ckpt.files[0].map.data + m->ckpt.files[0].map.size);
    for (size_t l = 0; l < c->n_layer; l++) {
        const ns_layer_weights *w = &m->layers[l];
        const float *q[] = {w->norm1_w, w->norm1_b, w->qkv[0].w, w->qkv[0].b, w->o.w,
                            w->o.b, w->norm2_w, w->norm2_b, w->up.w, w->up.b,
                            w->down.w, w->down.b};
        for (size_t k = 0; k < 12; k++)
            CU_ASSERT(q[k] && (const uint8_t *)q[k] >= m->ckpt.files[0].map.data &&
                      (const uint8_t *)q[k] < m->ckpt.files[0].map.data + m->ckpt.files[0].map.size);
    }

    /* Values against the file bytes, located by an independent header parse. */
    char *path = ns_path_join(dir, "model.safetensors");
    size_t o_wte = header_offset(path, "wte.weight");
    size_t o_wpe = header_offset(path, "wpe.weight");
    size_t o_fcp = header_offset(path, "h.3.mlp.c_proj.bias");
    size_t o_att = header_offset(path, "h.2.attn.c_attn.weight");
    CU_ASSERT_EQUAL((const uint8_t *)m->tok_emb - m->ckpt.files[0].map.data, o_wte);
    CU_ASSERT_EQUAL((const uint8_t *)m->layers[3].down.b - m->ckpt.files[0].map.data, o_fcp);
    size_t last = 50257 * 128 - 1;
    CU_ASSERT_EQUAL(m->tok_emb[0], file_f32(path, o_wte));
    CU_ASSERT_EQUAL(m->tok_emb[last], file_f32(path, o_wte + 4 * last));
    CU_ASSERT_EQUAL(m->pos_emb[5 * 128 + 7], file_f32(path, o_wpe + 4 * (5 * 128 + 7)));
    CU_ASSERT_EQUAL(m->layers[3].down.b[127], file_f32(path, o_fcp + 4 * 127));
    CU_ASSERT_EQUAL(m->layers[2].qkv[0].w[128 * 384 - 1], file_f32(path, o_att + 4 * (128 * 384 - 1)));
    /* And against values read once with Python's struct module (bit patterns), so the test cannot
     * pass by reading the same wrong bytes twice. */
    CU_ASSERT_EQUAL(m->tok_emb[0], -0.059585925191640854f);
    CU_ASSERT_EQUAL(m->tok_emb[last], 0.02842083014547825f);
    CU_ASSERT_EQUAL(m->pos_emb[5 * 128 + 7], 0.04263516515493393f);
    CU_ASSERT_EQUAL(m->layers[3].down.b[127], 0.0065089026466012f);
    CU_ASSERT_EQUAL(m->layers[0].norm1_w[0], 0.559677004814148f);
    CU_ASSERT_EQUAL(m->layers[2].qkv[0].w[128 * 384 - 1], 0.07289105653762817f);
    free(path);
    ns_gpt2_free(m);
}

static void test_missing_dir(void)
{
    ns_gpt2_model *m = (ns_gpt2_model *)1;
    ns_err e;
    CU_ASSERT_EQUAL(ns_gpt2_load("/nonexistent/model/dir", &m, &e), NS_ERR_IO);
    CU_ASSERT_PTR_NULL(m);
    CU_ASSERT(message_has(&e, "/nonexistent/model/dir/config.json", NULL));
    ns_gpt2_free(NULL);
}

/* ---- mkmodel round trips ---- */

static ns_mkmodel_opts tiny_opts(ns_st_dtype dtype, uint64_t seed)
{
    ns_mkmodel_opts o;
    memset(&o, 0, sizeof o);
    o.config = (ns_gpt2_config){.n_layer = 2, .n_head = 2, .n_embd = 8, .n_ctx = 16, .vocab_size = 32};
    o.dtype = dtype;
    o.seed = seed;
    return o;
}

/* Every (name, pointer, element count) of a loaded model, in loader order. */
typedef struct named_ptr {
    char name[64];
    const float *p;
    size_t n;
} named_ptr;

static size_t model_tensors(const ns_gpt2_model *m, named_ptr *out)
{
    const ns_gpt2_config *c = &m->gpt2;
    size_t C = c->n_embd, F = c->n_inner, k = 0;
#define NP(nm, ptr, cnt) (snprintf(out[k].name, 64, "%s", nm), out[k].p = (ptr), out[k++].n = (cnt))
    NP("wte.weight", m->tok_emb, c->vocab_size * C);
    NP("wpe.weight", m->pos_emb, c->n_ctx * C);
    NP("ln_f.weight", m->norm_f_w, C);
    NP("ln_f.bias", m->norm_f_b, C);
    for (size_t l = 0; l < c->n_layer; l++) {
        const ns_layer_weights *w = &m->layers[l];
        const char *sfx[] = {"ln_1.weight", "ln_1.bias", "attn.c_attn.weight", "attn.c_attn.bias",
                             "attn.c_proj.weight", "attn.c_proj.bias", "ln_2.weight", "ln_2.bias",
                             "mlp.c_fc.weight", "mlp.c_fc.bias", "mlp.c_proj.weight", "mlp.c_proj.bias"};
        const float *ps[] = {w->norm1_w, w->norm1_b, w->qkv[0].w, w->qkv[0].b, w->o.w, w->o.b,
                             w->norm2_w, w->norm2_b, w->up.w, w->up.b, w->down.w, w->down.b};
        size_t ns[] = {C, C, 3 * C * C, 3 * C, C * C, C, C, C, C * F, F, F * C, C};
        for (size_t i = 0; i < 12; i++) {
            char nm[64];
            snprintf(nm, sizeof nm, "h.%zu.%s", l, sfx[i]);
            NP(nm, ps[i], ns[i]);
        }
    }
#undef NP
    return k;
}

static ns_gpt2_model *load_ok(const char *dir)
{
    ns_gpt2_model *m = NULL;
    ns_err e;
    ns_err_clear(&e);
    int rc = ns_gpt2_load(dir, &m, &e);
    if (rc != NS_OK)
        fprintf(stderr, "\n  load %s failed: %s\n", dir, e.msg);
    CU_ASSERT_EQUAL(rc, NS_OK);
    return m;
}

/* Write, load, and compare every element with ns_mkmodel_value rounded to the dtype. Also check
 * the raw file bytes: the stored half-precision bits must equal the rounding of the loaded value
 * (conversion is exact for representable values). */
static void roundtrip(ns_st_dtype dtype)
{
    char *dir = make_tmpdir();
    CU_ASSERT_FATAL(dir != NULL);
    ns_mkmodel_opts o = tiny_opts(dtype, 7);
    ns_err e;
    CU_ASSERT_EQUAL_FATAL(ns_mkmodel_write(dir, &o, &e), NS_OK);
    ns_gpt2_model *m = load_ok(dir);
    CU_ASSERT_FATAL(m != NULL);
    const ns_gpt2_config *c = ns_gpt2_config_of(m);
    CU_ASSERT_EQUAL(c->n_layer, 2);
    CU_ASSERT_EQUAL(c->n_head, 2);
    CU_ASSERT_EQUAL(c->n_embd, 8);
    CU_ASSERT_EQUAL(c->n_ctx, 16);
    CU_ASSERT_EQUAL(c->vocab_size, 32);
    CU_ASSERT_EQUAL(c->n_inner, 32);
    CU_ASSERT_EQUAL(c->ln_eps, 1e-5);
    if (dtype == NS_ST_F32)
        CU_ASSERT_PTR_NULL(m->converted)
    else
        CU_ASSERT_PTR_NOT_NULL(m->converted)

    char *path = ns_path_join(dir, "model.safetensors");
    ns_st_file st;
    CU_ASSERT_EQUAL_FATAL(ns_st_open(path, &st, &e), NS_OK);
    named_ptr t[4 + 12 * 2];
    size_t nt = model_tensors(m, t);
    int bad_value = 0, bad_bits = 0, nonzero = 0;
    for (size_t i = 0; i < nt; i++) {
        const ns_st_tensor *s = ns_st_find(&st, t[i].name);
        CU_ASSERT_FATAL(s != NULL);
        CU_ASSERT_EQUAL(s->dtype, dtype);
        CU_ASSERT_EQUAL(s->numel, t[i].n);
        for (size_t j = 0; j < t[i].n; j++) {
            float want = ns_mkmodel_value(&o, t[i].name, j);
            if (dtype == NS_ST_F16)
                want = ns_f16_to_f32(ns_f32_to_f16(want));
            else if (dtype == NS_ST_BF16)
                want = ns_bf16_to_f32(ns_f32_to_bf16(want));
            bad_value += t[i].p[j] != want;
            nonzero += t[i].p[j] != 0;
            const uint8_t *raw = ns_st_bytes(&st, s) + j * ns_st_dtype_size(dtype);
            if (dtype == NS_ST_F32) {
                bad_bits += memcmp(raw, &t[i].p[j], 4) != 0;
            } else {
                uint16_t h;
                memcpy(&h, raw, 2);
                uint16_t back = dtype == NS_ST_F16 ? ns_f32_to_f16(t[i].p[j]) : ns_f32_to_bf16(t[i].p[j]);
                bad_bits += h != back;
            }
        }
    }
    CU_ASSERT_EQUAL(bad_value, 0);
    CU_ASSERT_EQUAL(bad_bits, 0);
    CU_ASSERT(nonzero > 1000); /* the comparison is not all zeros */
    /* HF layout: Conv1D [in, out] weights and the causal mask buffer (1 on/below the diagonal). */
    const ns_st_tensor *ca = ns_st_find(&st, "h.1.attn.c_attn.weight");
    CU_ASSERT(ca && ca->ndim == 2 && ca->shape[0] == 8 && ca->shape[1] == 24);
    const ns_st_tensor *fc = ns_st_find(&st, "h.0.mlp.c_proj.weight");
    CU_ASSERT(fc && fc->ndim == 2 && fc->shape[0] == 32 && fc->shape[1] == 8);
    const ns_st_tensor *mask = ns_st_find(&st, "h.1.attn.bias");
    CU_ASSERT_FATAL(mask && mask->ndim == 4 && mask->shape[0] == 1 && mask->shape[1] == 1 &&
                    mask->shape[2] == 16 && mask->shape[3] == 16);
    float mv[256];
    CU_ASSERT_EQUAL(ns_st_to_f32(mv, ns_st_bytes(&st, mask), mask->dtype, 256, &e), NS_OK);
    int bad_mask = 0;
    for (size_t r = 0; r < 16; r++)
        for (size_t q = 0; q < 16; q++)
            bad_mask += mv[r * 16 + q] != (q <= r ? 1.0f : 0.0f);
    CU_ASSERT_EQUAL(bad_mask, 0);
    const char *meta_ok = strstr((const char *)st.map.data + 8, "\"__metadata__\":{\"format\":\"pt\"}");
    CU_ASSERT_PTR_NOT_NULL(meta_ok);
    CU_ASSERT_EQUAL(st.data_start % 8, 0);
    ns_st_close(&st);
    free(path);
    ns_gpt2_free(m);
    ns_test_rm_tree(dir);
    free(dir);
}

static void test_roundtrip_f32(void) { roundtrip(NS_ST_F32); }
static void test_roundtrip_f16(void) { roundtrip(NS_ST_F16); }
static void test_roundtrip_bf16(void) { roundtrip(NS_ST_BF16); }

static int files_equal(const char *a, const char *b)
{
    char *x = NULL, *y = NULL;
    size_t nx = 0, ny = 0;
    ns_err e;
    int eq = ns_file_read_all(a, 0, &x, &nx, &e) == NS_OK && ns_file_read_all(b, 0, &y, &ny, &e) == NS_OK &&
             nx == ny && memcmp(x, y, nx) == 0;
    free(x);
    free(y);
    return eq;
}

static void test_deterministic(void)
{
    char *d1 = make_tmpdir(), *d2 = make_tmpdir(), *d3 = make_tmpdir();
    ns_mkmodel_opts o = tiny_opts(NS_ST_F32, 99), o3 = tiny_opts(NS_ST_F32, 100);
    ns_err e;
    CU_ASSERT_EQUAL_FATAL(ns_mkmodel_write(d1, &o, &e), NS_OK);
    CU_ASSERT_EQUAL_FATAL(ns_mkmodel_write(d2, &o, &e), NS_OK);
    CU_ASSERT_EQUAL_FATAL(ns_mkmodel_write(d3, &o3, &e), NS_OK);
    char *a = ns_path_join(d1, "model.safetensors"), *b = ns_path_join(d2, "model.safetensors"),
         *c = ns_path_join(d3, "model.safetensors");
    CU_ASSERT(files_equal(a, b));
    CU_ASSERT(!files_equal(a, c));
    free(a);
    free(b);
    free(c);
    /* Values do not depend on how the generator is chunked or on the layer count. */
    ns_mkmodel_opts big = o;
    big.config.n_layer = 5;
    CU_ASSERT_EQUAL(ns_mkmodel_value(&o, "h.1.mlp.c_fc.weight", 77), ns_mkmodel_value(&big, "h.1.mlp.c_fc.weight", 77));
    CU_ASSERT(isnan(ns_mkmodel_value(&o, "h.2.ln_1.weight", 0))); /* beyond n_layer */
    CU_ASSERT(isnan(ns_mkmodel_value(&o, "wte.weight", 32 * 8)));  /* beyond numel */
    ns_test_rm_tree(d1);
    ns_test_rm_tree(d2);
    ns_test_rm_tree(d3);
    free(d1);
    free(d2);
    free(d3);
}

/* GPT-2 initialisation statistics on a wider model (32768 wte samples).
 * Tolerances: the sample std of N normals has relative sd 1/sqrt(2N) = 0.4%, so 3% is > 7 sigma;
 * the mean has sd std/sqrt(N), allowed 5 sd; the fraction within one std has sd
 * sqrt(0.68*0.32/N) = 0.26%, allowed 1% (about 4 sd). */
static void test_init_statistics(void)
{
    ns_mkmodel_opts o = tiny_opts(NS_ST_F32, 2024);
    o.config.n_layer = 3;
    o.config.n_embd = 64;
    o.config.n_head = 4;
    o.config.vocab_size = 512;
    struct { const char *name; size_t n; double std; } cases[] = {
        {"wte.weight", 512 * 64, 0.02},
        {"h.0.attn.c_attn.weight", 64 * 192, 0.02},
        {"h.2.mlp.c_proj.weight", 256 * 64, 0.02 / sqrt(6.0)},
        {"h.1.attn.c_proj.weight", 64 * 64, 0.02 / sqrt(6.0)},
    };
    for (size_t k = 0; k < 4; k++) {
        double s1 = 0, s2 = 0;
        size_t within = 0, n = cases[k].n;
        for (size_t i = 0; i < n; i++) {
            double v = ns_mkmodel_value(&o, cases[k].name, i);
            s1 += v;
            s2 += v * v;
            within += fabs(v) < cases[k].std;
        }
        double mean = s1 / n, sd = sqrt(s2 / n - mean * mean);
        double tol_sd = n >= 16384 ? 0.03 : 0.06; /* 4096 samples: rel sd 1.1%, 6% > 5 sigma */
        CU_ASSERT(fabs(sd / cases[k].std - 1) < tol_sd);
        CU_ASSERT(fabs(mean) < 5 * cases[k].std / sqrt((double)n));
        CU_ASSERT(fabs((double)within / n - 0.6827) < (n >= 16384 ? 0.01 : 0.03));
        if (!(fabs(sd / cases[k].std - 1) < tol_sd))
            fprintf(stderr, "\n  %s: sd %g want %g\n", cases[k].name, sd, cases[k].std);
    }
    CU_ASSERT_EQUAL(ns_mkmodel_value(&o, "h.0.ln_1.weight", 5), 1.0f);
    CU_ASSERT_EQUAL(ns_mkmodel_value(&o, "h.0.ln_2.bias", 5), 0.0f);
    CU_ASSERT_EQUAL(ns_mkmodel_value(&o, "h.2.mlp.c_fc.bias", 200), 0.0f);
    CU_ASSERT_EQUAL(ns_mkmodel_value(&o, "ln_f.weight", 63), 1.0f);
}

static void test_presets(void)
{
    ns_gpt2_config c;
    ns_err e;
    CU_ASSERT_EQUAL_FATAL(ns_mkmodel_preset("gpt2", &c, &e), NS_OK);
    CU_ASSERT_EQUAL(ns_mkmodel_param_count(&c), 124439808); /* Hugging Face's count for gpt2 */
    CU_ASSERT_EQUAL_FATAL(ns_mkmodel_preset("gpt2-xl", &c, &e), NS_OK);
    CU_ASSERT(c.n_layer == 48 && c.n_head == 25 && c.n_embd == 1600 && c.n_inner == 6400);
    CU_ASSERT_EQUAL(ns_mkmodel_param_count(&c), 1557611200);
    CU_ASSERT_EQUAL_FATAL(ns_mkmodel_preset("gpt2-medium", &c, &e), NS_OK);
    CU_ASSERT(c.n_layer == 24 && c.n_head == 16 && c.n_embd == 1024);
    CU_ASSERT_EQUAL_FATAL(ns_mkmodel_preset("gpt2-large", &c, &e), NS_OK);
    CU_ASSERT(c.n_layer == 36 && c.n_head == 20 && c.n_embd == 1280);
    CU_ASSERT_EQUAL(ns_mkmodel_preset("gpt3", &c, &e), NS_ERR_INVALID);
    CU_ASSERT(message_has(&e, "gpt3", NULL));
    ns_mkmodel_opts o = tiny_opts(NS_ST_F32, 0);
    o.config.n_head = 3;
    CU_ASSERT_EQUAL(ns_mkmodel_write("/tmp/ns_never_written", &o, &e), NS_ERR_INVALID);
    CU_ASSERT(message_has(&e, "n_head", NULL));
    CU_ASSERT(!ns_file_exists("/tmp/ns_never_written"));
    o = tiny_opts(NS_ST_I32, 0);
    CU_ASSERT_EQUAL(ns_mkmodel_write("/tmp/ns_never_written", &o, &e), NS_ERR_INVALID);
    CU_ASSERT(!ns_file_exists("/tmp/ns_never_written"));
}

/* ---- rewritten headers: prefix, alignment, model-level corruption ---- */

/* A model directory made by mkmodel whose safetensors header is then rewritten. */
typedef struct case_dir {
    char *dir;
    char *st_path;
    json_t *header;   /* mutable copy of the mkmodel header */
    uint8_t *data;    /* the data section */
    size_t data_len;
} case_dir;

static void case_open(case_dir *cd, ns_st_dtype dtype)
{
    memset(cd, 0, sizeof *cd);
    cd->dir = make_tmpdir();
    CU_ASSERT_FATAL(cd->dir != NULL);
    ns_mkmodel_opts o = tiny_opts(dtype, 11);
    ns_err e;
    CU_ASSERT_EQUAL_FATAL(ns_mkmodel_write(cd->dir, &o, &e), NS_OK);
    cd->st_path = ns_path_join(cd->dir, "model.safetensors");
    char *bytes;
    size_t len;
    CU_ASSERT_EQUAL_FATAL(ns_file_read_all(cd->st_path, 0, &bytes, &len, &e), NS_OK);
    uint64_t n;
    memcpy(&n, bytes, 8);
    cd->header = json_loadb(bytes + 8, n, 0, NULL);
    CU_ASSERT_FATAL(cd->header != NULL);
    cd->data_len = len - 8 - n;
    cd->data = malloc(cd->data_len + 1);
    memcpy(cd->data, bytes + 8 + n, cd->data_len);
    free(bytes);
}

/* Write header (+ pad spaces) and data (+ extra bytes) as the model file. */
static void case_write(case_dir *cd, size_t pad, const void *extra, size_t extra_len)
{
    char *text = json_dumps(cd->header, JSON_COMPACT);
    size_t tl = strlen(text);
    uint64_t n = tl + pad;
    FILE *f = fopen(cd->st_path, "wb");
    CU_ASSERT_FATAL(f != NULL);
    fwrite(&n, 8, 1, f);
    fwrite(text, 1, tl, f);
    for (size_t i = 0; i < pad; i++)
        fputc(' ', f);
    fwrite(cd->data, 1, cd->data_len, f);
    if (extra_len)
        fwrite(extra, 1, extra_len, f);
    CU_ASSERT_FATAL(fclose(f) == 0);
    free(text);
}

/* Lay the header's tensors out back to back, in the order of their current offsets, as the
 * format requires (no gap, no trailing byte): each keeps the first bytes of what it held (zeros
 * beyond), for cases that drop a tensor or change a tensor's size. */
typedef struct packed {
    const char *name;
    json_int_t begin, end;
} packed;

static int cmp_packed(const void *a, const void *b)
{
    const packed *x = a, *y = b;
    return (x->begin > y->begin) - (x->begin < y->begin);
}

static void case_repack(case_dir *cd)
{
    size_t n = json_object_size(cd->header), k = 0, total = 0;
    packed *t = calloc(n, sizeof *t);
    CU_ASSERT_FATAL(t != NULL);
    const char *key;
    json_t *v;
    json_object_foreach(cd->header, key, v) {
        json_t *o = json_object_get(v, "data_offsets");
        if (!o)
            continue;
        t[k].name = key;
        t[k].begin = json_integer_value(json_array_get(o, 0));
        t[k].end = json_integer_value(json_array_get(o, 1));
        k++;
    }
    qsort(t, k, sizeof *t, cmp_packed);
    uint8_t *data = calloc(cd->data_len + 1, 1); /* (no tensor grows in these cases) */
    for (size_t i = 0; i < k; i++) {
        json_t *e = json_object_get(cd->header, t[i].name);
        ns_st_dtype dt;
        CU_ASSERT_FATAL(ns_st_dtype_parse(json_string_value(json_object_get(e, "dtype")), &dt) == 0);
        size_t bytes = ns_st_dtype_size(dt);
        json_t *shape = json_object_get(e, "shape");
        for (size_t d = 0; d < json_array_size(shape); d++)
            bytes *= (size_t)json_integer_value(json_array_get(shape, d));
        size_t old = (size_t)(t[i].end - t[i].begin);
        CU_ASSERT_FATAL(total + bytes <= cd->data_len);
        memcpy(data + total, cd->data + t[i].begin, old < bytes ? old : bytes);
        json_object_set_new(e, "data_offsets", json_pack("[I,I]", (json_int_t)total,
                                                         (json_int_t)(total + bytes)));
        total += bytes;
    }
    free(cd->data);
    cd->data = data;
    cd->data_len = total;
    free(t);
}

static void case_close(case_dir *cd)
{
    json_decref(cd->header);
    free(cd->data);
    free(cd->st_path);
    ns_test_rm_tree(cd->dir);
    free(cd->dir);
}

static void expect_load_fail(const char *label, const char *dir, int code, const char *a, const char *b)
{
    ns_gpt2_model *m = NULL;
    ns_err e;
    ns_err_clear(&e);
    int rc = ns_gpt2_load(dir, &m, &e);
    int ok = rc == code && m == NULL && message_has(&e, a, b);
    if (!ok)
        fprintf(stderr, "\n  case '%s': rc %d (want %d): %s\n", label, rc, code, e.msg);
    CU_ASSERT(ok);
    ns_gpt2_free(m);
}

static void test_transformer_prefix(void)
{
    case_dir cd;
    case_open(&cd, NS_ST_F32);
    ns_gpt2_model *ref = load_ok(cd.dir);
    CU_ASSERT_FATAL(ref != NULL);
    named_ptr rt[4 + 24];
    size_t nt = model_tensors(ref, rt);
    float *copy = malloc(ref->ckpt.files[0].map.size);
    size_t total = 0;
    for (size_t i = 0; i < nt; i++) {
        memcpy(copy + total, rt[i].p, rt[i].n * 4);
        total += rt[i].n;
    }
    ns_gpt2_free(ref);

    /* Rename every tensor to transformer.<name>; add an lm_head.weight with its own bytes
     * (ignored), as GPT2LMHeadModel exports have. */
    json_t *nh = json_object();
    const char *key;
    json_t *val;
    json_object_foreach(cd.header, key, val) {
        char nm[128];
        snprintf(nm, sizeof nm, "%s%s", strcmp(key, "__metadata__") ? "transformer." : "", key);
        json_object_set(nh, nm, val);
    }
    json_object_set_new(nh, "lm_head.weight",
                        json_pack("{s:s, s:[i,i], s:[I,I]}", "dtype", "F32", "shape", 32, 8, "data_offsets",
                                  (json_int_t)cd.data_len, (json_int_t)cd.data_len + 32 * 8 * 4));
    json_decref(cd.header);
    cd.header = nh;
    float lm[32 * 8];
    for (size_t i = 0; i < 32 * 8; i++)
        lm[i] = 5.0f;
    case_write(&cd, 0, lm, sizeof lm);
    ns_gpt2_model *m = load_ok(cd.dir);
    CU_ASSERT_FATAL(m != NULL);
    named_ptr t[4 + 24];
    model_tensors(m, t);
    size_t off = 0;
    int bad = 0;
    for (size_t i = 0; i < nt; i++) {
        bad += memcmp(copy + off, t[i].p, t[i].n * 4) != 0;
        off += t[i].n;
    }
    CU_ASSERT_EQUAL(bad, 0);
    ns_gpt2_free(m);

    /* The same tensor with and without the prefix is ambiguous. */
    json_t *dup = json_deep_copy(json_object_get(cd.header, "transformer.wpe.weight"));
    json_object_set_new(dup, "data_offsets", json_pack("[I,I]", (json_int_t)cd.data_len,
                                                       (json_int_t)cd.data_len + 16 * 8 * 4));
    json_object_set_new(cd.header, "wpe.weight", dup);
    json_object_del(cd.header, "lm_head.weight");
    float wpe2[16 * 8] = {0};
    case_write(&cd, 0, wpe2, sizeof wpe2);
    expect_load_fail("prefixed and bare", cd.dir, NS_ERR_FORMAT, cd.st_path, "'wpe.weight' present both");
    free(copy);
    case_close(&cd);
}

/* A header length that leaves the data section misaligned: F32 tensors are then copied (never
 * read through a misaligned float pointer) and still load exactly. */
static void test_misaligned_f32(void)
{
    case_dir cd;
    case_open(&cd, NS_ST_F32);
    ns_gpt2_model *ref = load_ok(cd.dir);
    CU_ASSERT_FATAL(ref != NULL);
    float w0 = ref->tok_emb[5], a0 = ref->layers[1].qkv[0].w[100];
    ns_gpt2_free(ref);
    char *text = json_dumps(cd.header, JSON_COMPACT);
    size_t pad = (8 + strlen(text)) % 4 == 1 ? 0 : (4 + 1 - (8 + strlen(text)) % 4) % 4;
    free(text);
    case_write(&cd, pad, NULL, 0); /* data starts at 1 mod 4 */
    ns_gpt2_model *m = load_ok(cd.dir);
    CU_ASSERT_FATAL(m != NULL);
    CU_ASSERT_PTR_NOT_NULL(m->converted);
    CU_ASSERT_EQUAL(((uintptr_t)m->tok_emb) % 4, 0);
    CU_ASSERT_EQUAL(m->tok_emb[5], w0);
    CU_ASSERT_EQUAL(m->layers[1].qkv[0].w[100], a0);
    ns_gpt2_free(m);
    case_close(&cd);
}

static void test_model_errors(void)
{
    case_dir cd;
    case_open(&cd, NS_ST_F32);
    json_t *orig = json_deep_copy(cd.header);
    char *cfg = ns_path_join(cd.dir, "config.json");
    char *cfg_text;
    size_t cfg_len;
    ns_err e;
    CU_ASSERT_EQUAL_FATAL(ns_file_read_all(cfg, 0, &cfg_text, &cfg_len, &e), NS_OK);
    uint8_t *orig_data = malloc(cd.data_len);
    size_t orig_len = cd.data_len;
    CU_ASSERT_FATAL(orig_data != NULL);
    memcpy(orig_data, cd.data, orig_len);
    /* the header and the data as mkmodel wrote them (case_repack changes both) */
#define RESET()                                                                                \
    (json_decref(cd.header), cd.header = json_deep_copy(orig), free(cd.data),                  \
     cd.data = malloc(orig_len), memcpy(cd.data, orig_data, orig_len), cd.data_len = orig_len)

    /* missing tensor (the others packed back to back: a gap would be refused first) */
    json_object_del(cd.header, "h.1.mlp.c_fc.bias");
    case_repack(&cd);
    case_write(&cd, 0, NULL, 0);
    expect_load_fail("missing tensor", cd.dir, NS_ERR_FORMAT, cd.st_path, "'h.1.mlp.c_fc.bias' is missing");
    /* unsupported dtype for a required tensor (I32 has the right byte size) */
    RESET();
    json_object_set_new(json_object_get(cd.header, "h.0.ln_2.weight"), "dtype", json_string("I32"));
    case_write(&cd, 0, NULL, 0);
    expect_load_fail("I32 dtype", cd.dir, NS_ERR_FORMAT, cd.st_path, "'h.0.ln_2.weight': dtype I32 is not supported");
    /* a BOOL mask buffer is fine: ignored tensors may have any known dtype */
    RESET();
    json_t *mb = json_object_get(cd.header, "h.0.attn.bias");
    json_int_t mb0 = json_integer_value(json_array_get(json_object_get(mb, "data_offsets"), 0));
    json_object_set_new(mb, "dtype", json_string("BOOL"));
    json_object_set_new(mb, "shape", json_pack("[i,i,i,i]", 1, 1, 32, 32));
    json_object_set_new(mb, "data_offsets", json_pack("[I,I]", mb0, mb0 + 1024));
    case_repack(&cd);
    case_write(&cd, 0, NULL, 0);
    ns_gpt2_model *m = load_ok(cd.dir);
    ns_gpt2_free(m);
    /* shape disagreeing with config.json: same byte size, transposed */
    RESET();
    json_object_set_new(json_object_get(cd.header, "h.1.attn.c_attn.weight"), "shape", json_pack("[i,i]", 24, 8));
    case_write(&cd, 0, NULL, 0);
    expect_load_fail("transposed", cd.dir, NS_ERR_FORMAT, "'h.1.attn.c_attn.weight': shape [24, 8] disagrees",
                     "expected [8, 24]");
    RESET();
    json_object_set_new(json_object_get(cd.header, "ln_f.bias"), "shape", json_pack("[i,i]", 1, 8));
    case_write(&cd, 0, NULL, 0);
    expect_load_fail("extra dim", cd.dir, NS_ERR_FORMAT, cd.st_path, "'ln_f.bias': shape [1, 8] disagrees");
    /* config.json disagreeing with the file: vocab_size, and fewer layers than the file has */
    RESET();
    case_write(&cd, 0, NULL, 0);
    write_text(cd.dir, "config.json",
               "{\"n_layer\": 2, \"n_head\": 2, \"n_embd\": 8, \"n_positions\": 16, \"vocab_size\": 33,"
               " \"layer_norm_epsilon\": 1e-5}");
    expect_load_fail("vocab mismatch", cd.dir, NS_ERR_FORMAT, "'wte.weight': shape [32, 8]", "vocab_size");
    write_text(cd.dir, "config.json",
               "{\"n_layer\": 1, \"n_head\": 2, \"n_embd\": 8, \"n_positions\": 16, \"vocab_size\": 32,"
               " \"layer_norm_epsilon\": 1e-5}");
    expect_load_fail("extra layer", cd.dir, NS_ERR_FORMAT, cd.st_path, "layer 1 but config.json has n_layer = 1");
    write_text(cd.dir, "config.json",
               "{\"n_layer\": 3, \"n_head\": 2, \"n_embd\": 8, \"n_positions\": 16, \"vocab_size\": 32,"
               " \"layer_norm_epsilon\": 1e-5}");
    expect_load_fail("missing layer", cd.dir, NS_ERR_FORMAT, cd.st_path, "'h.2.ln_1.weight' is missing");
    write_text(cd.dir, "config.json",
               "{\"n_layer\": 2, \"n_head\": 2, \"n_embd\": 8, \"n_positions\": 16, \"vocab_size\": 32,"
               " \"layer_norm_epsilon\": 1e-5, \"n_inner\": 16}");
    expect_load_fail("n_inner mismatch", cd.dir, NS_ERR_FORMAT, "'h.0.mlp.c_fc.weight'", "n_inner");
    /* n_ctx only (no n_positions), n_inner null: loads */
    write_text(cd.dir, "config.json",
               "{\"n_layer\": 2, \"n_head\": 2, \"n_embd\": 8, \"n_ctx\": 16, \"vocab_size\": 32,"
               " \"layer_norm_epsilon\": 1e-5, \"n_inner\": null, \"activation_function\": \"gelu_new\"}");
    m = load_ok(cd.dir);
    CU_ASSERT(m && m->gpt2.n_ctx == 16 && m->gpt2.n_inner == 32);
    ns_gpt2_free(m);
    /* missing model.safetensors */
    unlink(cd.st_path);
    expect_load_fail("no safetensors", cd.dir, NS_ERR_IO, cd.st_path, NULL);
    /* empty model.safetensors */
    write_text(cd.dir, "model.safetensors", "");
    expect_load_fail("empty safetensors", cd.dir, NS_ERR_FORMAT, cd.st_path, "too short");
#undef RESET
    json_decref(orig);
    free(orig_data);
    free(cfg_text);
    free(cfg);
    case_close(&cd);
}

/* ns_mkmodel_fill_fn: element j of tensor t is t + j / 1024 (exact in float for these sizes). */
static int fill_index(void *user, size_t tensor, size_t start, size_t n, float *out, ns_err *err)
{
    (void)user, (void)err;
    for (size_t j = 0; j < n; j++)
        out[j] = (float)tensor + (float)(start + j) / 1024.0f;
    return NS_OK;
}

/* config.json errors: each names the file and the key. */
static void test_config_errors(void)
{
    char *dir = make_tmpdir();
    CU_ASSERT_FATAL(dir != NULL);
    char *path = ns_path_join(dir, "config.json");
    struct { const char *label, *text; int code; const char *what; } cases[] = {
        {"empty file", "", NS_ERR_FORMAT, "not valid JSON"},
        {"not JSON", "{\"n_layer\": 2,", NS_ERR_FORMAT, "not valid JSON"},
        {"array", "[1, 2]", NS_ERR_FORMAT, "top level is an array"},
        {"duplicate key", "{\"n_layer\": 2, \"n_layer\": 3}", NS_ERR_FORMAT, "duplicate"},
        {"missing n_layer", "{\"n_head\": 2, \"n_embd\": 8, \"n_positions\": 16, \"vocab_size\": 32, \"layer_norm_epsilon\": 1e-5}",
         NS_ERR_FORMAT, "\"n_layer\" is missing"},
        {"n_head string", "{\"n_layer\": 2, \"n_head\": \"2\", \"n_embd\": 8, \"n_positions\": 16, \"vocab_size\": 32, \"layer_norm_epsilon\": 1e-5}",
         NS_ERR_FORMAT, "\"n_head\" is a string"},
        {"n_embd real", "{\"n_layer\": 2, \"n_head\": 2, \"n_embd\": 8.0, \"n_positions\": 16, \"vocab_size\": 32, \"layer_norm_epsilon\": 1e-5}",
         NS_ERR_FORMAT, "\"n_embd\" is a real number"},
        {"n_embd zero", "{\"n_layer\": 2, \"n_head\": 2, \"n_embd\": 0, \"n_positions\": 16, \"vocab_size\": 32, \"layer_norm_epsilon\": 1e-5}",
         NS_ERR_INVALID, "\"n_embd\" = 0 is out of range"},
        {"n_layer negative", "{\"n_layer\": -2, \"n_head\": 2, \"n_embd\": 8, \"n_positions\": 16, \"vocab_size\": 32, \"layer_norm_epsilon\": 1e-5}",
         NS_ERR_INVALID, "\"n_layer\" = -2"},
        {"vocab huge", "{\"n_layer\": 2, \"n_head\": 2, \"n_embd\": 8, \"n_positions\": 16, \"vocab_size\": 99999999999999, \"layer_norm_epsilon\": 1e-5}",
         NS_ERR_INVALID, "\"vocab_size\""},
        {"n_embd % n_head", "{\"n_layer\": 2, \"n_head\": 3, \"n_embd\": 8, \"n_positions\": 16, \"vocab_size\": 32, \"layer_norm_epsilon\": 1e-5}",
         NS_ERR_INVALID, "\"n_head\" = 3"},
        {"no positions", "{\"n_layer\": 2, \"n_head\": 2, \"n_embd\": 8, \"vocab_size\": 32, \"layer_norm_epsilon\": 1e-5}",
         NS_ERR_FORMAT, "\"n_positions\" (or \"n_ctx\") is missing"},
        {"n_positions null", "{\"n_layer\": 2, \"n_head\": 2, \"n_embd\": 8, \"n_positions\": null, \"vocab_size\": 32, \"layer_norm_epsilon\": 1e-5}",
         NS_ERR_FORMAT, "\"n_positions\" is null"},
        {"eps missing", "{\"n_layer\": 2, \"n_head\": 2, \"n_embd\": 8, \"n_positions\": 16, \"vocab_size\": 32}",
         NS_ERR_FORMAT, "\"layer_norm_epsilon\" is missing"},
        {"eps string", "{\"n_layer\": 2, \"n_head\": 2, \"n_embd\": 8, \"n_positions\": 16, \"vocab_size\": 32, \"layer_norm_epsilon\": \"1e-5\"}",
         NS_ERR_FORMAT, "\"layer_norm_epsilon\" is a string"},
        {"eps negative", "{\"n_layer\": 2, \"n_head\": 2, \"n_embd\": 8, \"n_positions\": 16, \"vocab_size\": 32, \"layer_norm_epsilon\": -1}",
         NS_ERR_INVALID, "\"layer_norm_epsilon\""},
        {"n_inner real", "{\"n_layer\": 2, \"n_head\": 2, \"n_embd\": 8, \"n_positions\": 16, \"vocab_size\": 32, \"layer_norm_epsilon\": 1e-5, \"n_inner\": 4.5}",
         NS_ERR_FORMAT, "\"n_inner\" is a real number"},
        {"relu", "{\"n_layer\": 2, \"n_head\": 2, \"n_embd\": 8, \"n_positions\": 16, \"vocab_size\": 32, \"layer_norm_epsilon\": 1e-5, \"activation_function\": \"relu\"}",
         NS_ERR_INVALID, "\"activation_function\" = \"relu\" is not supported"},
        {"activation number", "{\"n_layer\": 2, \"n_head\": 2, \"n_embd\": 8, \"n_positions\": 16, \"vocab_size\": 32, \"layer_norm_epsilon\": 1e-5, \"activation_function\": 1}",
         NS_ERR_FORMAT, "\"activation_function\" is an integer"},
        {"attn normalizer number", "{\"n_layer\": 2, \"n_head\": 2, \"n_embd\": 8, \"n_positions\": 16, \"vocab_size\": 32, \"layer_norm_epsilon\": 1e-5, \"normsweep_attn_normalizer\": 1}",
         NS_ERR_FORMAT, "\"normsweep_attn_normalizer\" is an integer"},
        {"attn normalizer unknown", "{\"n_layer\": 2, \"n_head\": 2, \"n_embd\": 8, \"n_positions\": 16, \"vocab_size\": 32, \"layer_norm_epsilon\": 1e-5, \"normsweep_attn_normalizer\": \"relumax\"}",
         NS_ERR_INVALID, "\"normsweep_attn_normalizer\": unknown normalizer 'relumax'"},
        {"attn normalizer sweep-only", "{\"n_layer\": 2, \"n_head\": 2, \"n_embd\": 8, \"n_positions\": 16, \"vocab_size\": 32, \"layer_norm_epsilon\": 1e-5, \"normsweep_attn_normalizer\": \"softpick\"}",
         NS_ERR_INVALID, "normalizer 'softpick' is not yet usable in a model or in training"},
        {"attn temperature string", "{\"n_layer\": 2, \"n_head\": 2, \"n_embd\": 8, \"n_positions\": 16, \"vocab_size\": 32, \"layer_norm_epsilon\": 1e-5, \"normsweep_attn_temperature\": \"1\"}",
         NS_ERR_FORMAT, "\"normsweep_attn_temperature\" is a string"},
        {"attn temperature zero", "{\"n_layer\": 2, \"n_head\": 2, \"n_embd\": 8, \"n_positions\": 16, \"vocab_size\": 32, \"layer_norm_epsilon\": 1e-5, \"normsweep_attn_temperature\": 0}",
         NS_ERR_INVALID, "\"normsweep_attn_temperature\": 0 is out of range [1e-6, 1e6]"},
        {"attn temperature huge", "{\"n_layer\": 2, \"n_head\": 2, \"n_embd\": 8, \"n_positions\": 16, \"vocab_size\": 32, \"layer_norm_epsilon\": 1e-5, \"normsweep_attn_temperature\": 1e300}",
         NS_ERR_INVALID, "\"normsweep_attn_temperature\": 1e300 is out of range"},
        {"ssmax without s", "{\"n_layer\": 2, \"n_head\": 2, \"n_embd\": 8, \"n_positions\": 16, \"vocab_size\": 32, \"layer_norm_epsilon\": 1e-5, \"normsweep_attn_normalizer\": \"ssmax\"}",
         NS_ERR_FORMAT, "\"normsweep_ssmax_s\" is missing"},
        {"s without ssmax", "{\"n_layer\": 2, \"n_head\": 2, \"n_embd\": 8, \"n_positions\": 16, \"vocab_size\": 32, \"layer_norm_epsilon\": 1e-5, \"normsweep_attn_normalizer\": \"sparsemax\", \"normsweep_ssmax_s\": 0.5}",
         NS_ERR_INVALID, "only to the ssmax normalizer, not to sparsemax"},
        {"ssmax s negative", "{\"n_layer\": 2, \"n_head\": 2, \"n_embd\": 8, \"n_positions\": 16, \"vocab_size\": 32, \"layer_norm_epsilon\": 1e-5, \"normsweep_attn_normalizer\": \"ssmax\", \"normsweep_ssmax_s\": -1}",
         NS_ERR_INVALID, "\"normsweep_ssmax_s\": -1 is out of range"},
        {"sigmoid without b", "{\"n_layer\": 2, \"n_head\": 2, \"n_embd\": 8, \"n_positions\": 16, \"vocab_size\": 32, \"layer_norm_epsilon\": 1e-5, \"normsweep_attn_normalizer\": \"sigmoid\"}",
         NS_ERR_FORMAT, "\"normsweep_sigmoid_b\" is missing (required with \"normsweep_attn_normalizer\" = \"sigmoid\")"},
        {"b without sigmoid", "{\"n_layer\": 2, \"n_head\": 2, \"n_embd\": 8, \"n_positions\": 16, \"vocab_size\": 32, \"layer_norm_epsilon\": 1e-5, \"normsweep_attn_normalizer\": \"softmax1\", \"normsweep_sigmoid_b\": -2}",
         NS_ERR_INVALID, "only to the sigmoid normalizer, not to softmax1"},
        {"sigmoid b huge", "{\"n_layer\": 2, \"n_head\": 2, \"n_embd\": 8, \"n_positions\": 16, \"vocab_size\": 32, \"layer_norm_epsilon\": 1e-5, \"normsweep_attn_normalizer\": \"sigmoid\", \"normsweep_sigmoid_b\": -1001}",
         NS_ERR_INVALID, "\"normsweep_sigmoid_b\": -1001 is out of range"},
        {"sigmoid b string", "{\"n_layer\": 2, \"n_head\": 2, \"n_embd\": 8, \"n_positions\": 16, \"vocab_size\": 32, \"layer_norm_epsilon\": 1e-5, \"normsweep_attn_normalizer\": \"sigmoid\", \"normsweep_sigmoid_b\": \"-2\"}",
         NS_ERR_FORMAT, "\"normsweep_sigmoid_b\" is a string"},
        {"sigmoid with s", "{\"n_layer\": 2, \"n_head\": 2, \"n_embd\": 8, \"n_positions\": 16, \"vocab_size\": 32, \"layer_norm_epsilon\": 1e-5, \"normsweep_attn_normalizer\": \"sigmoid\", \"normsweep_sigmoid_b\": -2, \"normsweep_ssmax_s\": 0.5}",
         NS_ERR_INVALID, "only to the ssmax normalizer, not to sigmoid"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        write_text(dir, "config.json", cases[i].text);
        ns_model_config c;
        ns_err e;
        ns_err_clear(&e);
        int rc = ns_model_config_read(dir, &c, &e);
        int ok = rc == cases[i].code && message_has(&e, path, cases[i].what);
        if (!ok)
            fprintf(stderr, "\n  case '%s': rc %d (want %d): %s\n", cases[i].label, rc, cases[i].code, e.msg);
        CU_ASSERT(ok);
        /* ns_gpt2_load fails the same way before touching the (absent) safetensors */
        expect_load_fail(cases[i].label, dir, cases[i].code, path, cases[i].what);
    }
    free(path);
    ns_test_rm_tree(dir);
    free(dir);
}

/* The attention keys: absent = softmax at T = 1; written by ns_mkmodel_write_from with a trained
 * model's values (and read back exactly); ns_gpt2_tensor finds every parameter by name. */
static void test_attention_keys(void)
{
    char *dir = make_tmpdir();
    CU_ASSERT_FATAL(dir != NULL);
    ns_err e;
    ns_err_clear(&e);
    ns_model_config c;
    write_text(dir, "config.json", "{\"n_layer\": 2, \"n_head\": 2, \"n_embd\": 8, \"n_positions\": "
               "16, \"vocab_size\": 32, \"layer_norm_epsilon\": 1e-5}");
    CU_ASSERT_EQUAL_FATAL(ns_model_config_read(dir, &c, &e), NS_OK);
    CU_ASSERT(c.attn_norm_kind == NS_NORM_SOFTMAX && c.attn_temperature == 1.0);
    static const struct { ns_normalizer_kind kind; double s, T; } want[] = {
        {NS_NORM_SSMAX, 0.43, 0.1}, {NS_NORM_SPARSEMAX, 0, 2.5}, {NS_NORM_ENTMAX15, 0, 1e-3},
        {NS_NORM_SOFTMAX, 0, 0.05}};
    for (size_t k = 0; k < sizeof want / sizeof want[0]; k++) {
        ns_mkmodel_opts o = {.seed = 5, .dtype = NS_ST_F32, .extra_json = "{\"normsweep_training\": {\"steps\": 3}}"};
        o.config = (ns_gpt2_config){.n_layer = 2, .n_head = 2, .n_embd = 8, .n_ctx = 16,
                                    .vocab_size = 32, .attn_norm = {.kind = want[k].kind, .s = want[k].s},
                                    .attn_temperature = want[k].T};
        /* the parameters' values come from the caller: element i of tensor t is t + i / 1024 */
        CU_ASSERT_EQUAL_FATAL(ns_mkmodel_write_from(dir, &o, fill_index, NULL, &e), NS_OK);
        CU_ASSERT_EQUAL_FATAL(ns_model_config_read(dir, &c, &e), NS_OK);
        CU_ASSERT_EQUAL(c.attn_norm_kind, (int)want[k].kind);
        CU_ASSERT_EQUAL(c.attn_norm_s, want[k].s);
        CU_ASSERT_EQUAL(c.attn_temperature, want[k].T);
        ns_gpt2_model *m = load_ok(dir);
        CU_ASSERT_FATAL(m != NULL);
        CU_ASSERT_EQUAL(ns_gpt2_config_of(m)->attn_norm.kind, want[k].kind);
        CU_ASSERT_EQUAL(ns_gpt2_attn_is_default(ns_gpt2_config_of(m)),
                        want[k].kind == NS_NORM_SOFTMAX && want[k].T == 1.0);
        ns_mkmodel_tensor *t = NULL;
        size_t n = 0, numel = 0, params = 0;
        CU_ASSERT_EQUAL_FATAL(ns_mkmodel_tensors(&o.config, &t, &n, &e), NS_OK);
        for (size_t i = 0; i < n; i++) {
            const float *d = ns_gpt2_tensor(m, t[i].name, &numel);
            CU_ASSERT_EQUAL(d != NULL, t[i].is_param);
            if (!d)
                continue;
            params++;
            CU_ASSERT_EQUAL(numel, t[i].numel);
            for (size_t j = 0; j < numel; j++)
                if (d[j] != (float)i + (float)j / 1024.0f) {
                    CU_FAIL("a written value differs");
                    break;
                }
        }
        CU_ASSERT_EQUAL(params, 4 + 12 * 2);
        CU_ASSERT_PTR_NULL(ns_gpt2_tensor(m, "h.2.ln_1.weight", &numel));
        free(t);
        ns_gpt2_free(m);
    }
    /* an extra member may not replace a written key; T must survive 10 digits */
    ns_mkmodel_opts o = {.seed = 5, .dtype = NS_ST_F32, .extra_json = "{\"n_layer\": 3}"};
    o.config = (ns_gpt2_config){.n_layer = 2, .n_head = 2, .n_embd = 8, .n_ctx = 16, .vocab_size = 32};
    CU_ASSERT_EQUAL(ns_mkmodel_write(dir, &o, &e), NS_ERR_INVALID);
    CU_ASSERT_PTR_NOT_NULL(strstr(e.msg, "\"n_layer\" would replace"));
    o.extra_json = NULL;
    o.config.attn_temperature = 0.1234567890123;
    CU_ASSERT_EQUAL(ns_mkmodel_write(dir, &o, &e), NS_ERR_INVALID);
    CU_ASSERT_PTR_NOT_NULL(strstr(e.msg, "10 significant digits"));
    ns_test_rm_tree(dir);
    free(dir);
}

int main(void)
{
    if (CU_initialize_registry() != CUE_SUCCESS)
        return 1;
    CU_pSuite s = CU_add_suite("model_load", NULL, NULL);
    CU_add_test(s, "stand-in config.json", test_standin_config);
    CU_add_test(s, "stand-in load, values vs file bytes", test_standin_load);
    CU_add_test(s, "missing directory", test_missing_dir);
    CU_pSuite k = CU_add_suite("mkmodel", NULL, NULL);
    CU_add_test(k, "round trip F32", test_roundtrip_f32);
    CU_add_test(k, "round trip F16 (exact conversion)", test_roundtrip_f16);
    CU_add_test(k, "round trip BF16 (exact conversion)", test_roundtrip_bf16);
    CU_add_test(k, "deterministic for a seed", test_deterministic);
    CU_add_test(k, "GPT-2 initialisation statistics", test_init_statistics);
    CU_add_test(k, "presets and invalid configurations", test_presets);
    CU_pSuite r = CU_add_suite("rewritten files", NULL, NULL);
    CU_add_test(r, "transformer. prefix and lm_head.weight", test_transformer_prefix);
    CU_add_test(r, "misaligned F32 data section", test_misaligned_f32);
    CU_add_test(r, "model-level errors (tensor, shape, config vs file)", test_model_errors);
    CU_add_test(r, "config.json errors name file and key", test_config_errors);
    CU_add_test(r, "attention keys, trained values, tensors by name", test_attention_keys);
    return ns_test_run_all();
}

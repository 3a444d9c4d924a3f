/* test_safetensors: half-precision conversion against a naive reference, header build/parse round
 * trip, and a catalogue of corrupted files each rejected with NS_ERR_FORMAT and a one-line message
 * naming the file and the tensor. */
#include <CUnit/Basic.h>
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "model/ns_mkmodel.h"
#include "model/ns_safetensors.h"
#include "ns_test.h"

/* ---- conversions ---- */

static uint32_t fbits(float f)
{
    uint32_t u;
    memcpy(&u, &f, 4);
    return u;
}

static float bitsf(uint32_t u)
{
    float f;
    memcpy(&f, &u, 4);
    return f;
}

/* Naive reference: decode with integer arithmetic in double (exact). */
static double ref_f16_value(uint16_t h)
{
    int e = (h >> 10) & 31, m = h & 1023;
    double v = e == 0 ? ldexp(m, -24) : e == 31 ? (m ? NAN : INFINITY) : ldexp(1024 + m, e - 25);
    return (h & 0x8000) ? -v : v;
}

/* Naive reference rounding: nearest finite f16 by binary search over positive codes, ties to the
 * even code, overflow to infinity at or above 65520 (half way to the next binade). */
static uint16_t ref_f32_to_f16(float x)
{
    uint16_t sign = signbit(x) ? 0x8000 : 0;
    double a = fabs((double)x);
    if (a >= 65520.0)
        return sign | 0x7c00;
    unsigned lo = 0, hi = 0x7bff; /* largest code with value <= a */
    while (lo < hi) {
        unsigned mid = (lo + hi + 1) / 2;
        if (ref_f16_value((uint16_t)mid) <= a)
            lo = mid;
        else
            hi = mid - 1;
    }
    if (lo == 0x7bff)
        return sign | 0x7bff;
    double d0 = a - ref_f16_value((uint16_t)lo), d1 = ref_f16_value((uint16_t)(lo + 1)) - a;
    unsigned r = d0 < d1 ? lo : d1 < d0 ? lo + 1 : (lo & 1 ? lo + 1 : lo);
    return (uint16_t)(sign | r);
}

static void test_f16_exhaustive(void)
{
    int bad_rt = 0, bad_val = 0, bad_mid = 0;
    for (uint32_t h = 0; h < 0x10000; h++) {
        float f = ns_f16_to_f32((uint16_t)h);
        int is_nan = ((h >> 10) & 31) == 31 && (h & 1023);
        if (is_nan) {
            bad_rt += !isnan(f) || !isnan(ns_f16_to_f32(ns_f32_to_f16(f)));
            continue;
        }
        bad_val += (double)f != ref_f16_value((uint16_t)h) && !(f == 0 && ref_f16_value(h) == 0);
        bad_rt += ns_f32_to_f16(f) != h; /* every f16 value is exact in F32 and comes back */
        /* The midpoint to the next code (exact in F32) must round like the reference. */
        if ((h & 0x7fff) < 0x7bff) {
            float mid = (float)((ref_f16_value((uint16_t)h) + ref_f16_value((uint16_t)(h + 1))) / 2);
            bad_mid += ns_f32_to_f16(mid) != ref_f32_to_f16(mid);
        }
    }
    CU_ASSERT_EQUAL(bad_rt, 0);
    CU_ASSERT_EQUAL(bad_val, 0);
    CU_ASSERT_EQUAL(bad_mid, 0);
    /* Hand-checked anchors. */
    CU_ASSERT_EQUAL(ns_f32_to_f16(1.0f), 0x3c00);
    CU_ASSERT_EQUAL(ns_f32_to_f16(-2.0f), 0xc000);
    CU_ASSERT_EQUAL(ns_f32_to_f16(65504.0f), 0x7bff);
    CU_ASSERT_EQUAL(ns_f32_to_f16(65519.0f), 0x7bff);
    CU_ASSERT_EQUAL(ns_f32_to_f16(65520.0f), 0x7c00);
    CU_ASSERT_EQUAL(ns_f32_to_f16(INFINITY), 0x7c00);
    CU_ASSERT_EQUAL(ns_f32_to_f16(0x1p-24f), 0x0001);
    CU_ASSERT_EQUAL(ns_f32_to_f16(0x1p-25f), 0x0000);         /* tie -> even (0) */
    CU_ASSERT_EQUAL(ns_f32_to_f16(0x3p-25f), 0x0002);         /* tie -> even (2) */
    CU_ASSERT_EQUAL(ns_f32_to_f16(1.0f + 0x1p-11f), 0x3c00);  /* tie -> even */
    CU_ASSERT_EQUAL(ns_f32_to_f16(1.0f + 0x3p-11f), 0x3c02);  /* tie -> even */
    CU_ASSERT_EQUAL(ns_f32_to_f16(-0.0f), 0x8000);
    CU_ASSERT((ns_f32_to_f16(NAN) & 0x7fff) > 0x7c00);
}

static void test_f16_random(void)
{
    /* 200k pseudo-random F32 values across the f16 range (and beyond) against the reference. */
    int bad = 0;
    uint64_t s = 12345;
    for (int i = 0; i < 200000; i++) {
        s = s * 6364136223846793005ull + 1442695040888963407ull;
        uint32_t exp = 90 + (uint32_t)((s >> 40) % 60); /* 2^-37 .. 2^22 */
        float x = bitsf(((uint32_t)(s >> 63) << 31) | (exp << 23) | (uint32_t)((s >> 8) & 0x7fffff));
        bad += ns_f32_to_f16(x) != ref_f32_to_f16(x);
    }
    CU_ASSERT_EQUAL(bad, 0);
}

static void test_bf16(void)
{
    int bad = 0;
    for (uint32_t h = 0; h < 0x10000; h++) {
        float f = ns_bf16_to_f32((uint16_t)h);
        CU_ASSERT_EQUAL_FATAL(fbits(f), h << 16);
        if (isnan(f)) {
            bad += !isnan(ns_bf16_to_f32(ns_f32_to_bf16(f)));
            continue;
        }
        bad += ns_f32_to_bf16(f) != h;
        /* midpoint to the next code: ties to even */
        if ((h & 0x7fff) < 0x7f7f) {
            float mid = bitsf((h << 16) | 0x8000);
            uint16_t want = (h & 1) ? (uint16_t)(h + 1) : (uint16_t)h;
            bad += ns_f32_to_bf16(mid) != want;
            bad += ns_f32_to_bf16(bitsf((h << 16) | 0x8001)) != (uint16_t)(h + 1);
            bad += ns_f32_to_bf16(bitsf((h << 16) | 0x7fff)) != (uint16_t)h;
        }
    }
    CU_ASSERT_EQUAL(bad, 0);
    CU_ASSERT_EQUAL(ns_f32_to_bf16(1.0f), 0x3f80);
    CU_ASSERT_EQUAL(ns_f32_to_bf16(3.4e38f), 0x7f80); /* rounds past the largest finite */
}

static void test_to_f32(void)
{
    uint8_t buf[9];
    uint16_t h = 0x3c00, b = 0x4040; /* 1.0 (F16), 3.0 (BF16) */
    float f = -1.5f, out[1];
    ns_err e;
    memcpy(buf + 1, &h, 2); /* deliberately unaligned */
    CU_ASSERT_EQUAL(ns_st_to_f32(out, buf + 1, NS_ST_F16, 1, &e), NS_OK);
    CU_ASSERT_EQUAL(out[0], 1.0f);
    memcpy(buf + 1, &b, 2);
    CU_ASSERT_EQUAL(ns_st_to_f32(out, buf + 1, NS_ST_BF16, 1, &e), NS_OK);
    CU_ASSERT_EQUAL(out[0], 3.0f);
    memcpy(buf + 1, &f, 4);
    CU_ASSERT_EQUAL(ns_st_to_f32(out, buf + 1, NS_ST_F32, 1, &e), NS_OK);
    CU_ASSERT_EQUAL(out[0], -1.5f);
    CU_ASSERT_EQUAL(ns_st_to_f32(out, buf, NS_ST_I32, 1, &e), NS_ERR_INVALID);
}

/* ---- header build and parse ---- */

static void test_build_parse(void)
{
    ns_st_spec specs[] = {
        {"a", NS_ST_F32, 2, {2, 3}},
        {"b.c", NS_ST_BF16, 1, {5}},
        {"scalar", NS_ST_F16, 0, {0}},
        {"empty", NS_ST_F32, 2, {0, 4}},
        {"mask", NS_ST_BOOL, 4, {1, 1, 3, 3}},
    };
    static const char *const meta[] = {"format", "pt", NULL, NULL};
    uint8_t *hdr = NULL;
    size_t hlen = 0, dlen = 0;
    ns_err e;
    CU_ASSERT_EQUAL_FATAL(ns_st_header_build(specs, 5, meta, &hdr, &hlen, &dlen, &e), NS_OK);
    CU_ASSERT_EQUAL(hlen % 8, 0);
    CU_ASSERT_EQUAL(dlen, 24 + 10 + 2 + 0 + 9);
    uint8_t *file = calloc(1, hlen + dlen);
    memcpy(file, hdr, hlen);
    ns_st_file f;
    CU_ASSERT_EQUAL_FATAL(ns_st_parse("mem.safetensors", file, hlen + dlen, &f, &e), NS_OK);
    CU_ASSERT_EQUAL(f.n_tensors, 5);
    CU_ASSERT_EQUAL(f.data_start, hlen);
    const ns_st_tensor *a = ns_st_find(&f, "a"), *b = ns_st_find(&f, "b.c"), *s = ns_st_find(&f, "scalar");
    const ns_st_tensor *m = ns_st_find(&f, "mask");
    CU_ASSERT_FATAL(a && b && s && m && ns_st_find(&f, "empty"));
    CU_ASSERT_PTR_NULL(ns_st_find(&f, "__metadata__"));
    CU_ASSERT_EQUAL(a->dtype, NS_ST_F32);
    CU_ASSERT_EQUAL(a->ndim, 2);
    CU_ASSERT_EQUAL(a->shape[1], 3);
    CU_ASSERT_EQUAL(a->numel, 6);
    CU_ASSERT_EQUAL(a->offset, hlen);
    CU_ASSERT_EQUAL(b->offset, hlen + 24);
    CU_ASSERT_EQUAL(b->nbytes, 10);
    CU_ASSERT_EQUAL(s->ndim, 0);
    CU_ASSERT_EQUAL(s->numel, 1);
    CU_ASSERT_EQUAL(m->dtype, NS_ST_BOOL);
    CU_ASSERT_EQUAL(m->nbytes, 9);
    CU_ASSERT_PTR_EQUAL(ns_st_bytes(&f, b), file + hlen + 24);
    ns_st_close(&f);
    ns_st_close(&f); /* idempotent */
    free(file);
    free(hdr);
}

/* ---- corrupted files ---- */

typedef struct fixture {
    char dir[64];
    char *path;      /* base: a small valid mkmodel file */
    uint8_t *bytes;
    size_t size;
    size_t hlen;     /* JSON length */
} fixture;

static fixture fx;

static int fixture_setup(void)
{
    strcpy(fx.dir, "/tmp/ns_test_st_XXXXXX");
    if (!mkdtemp(fx.dir))
        return 1;
    ns_mkmodel_opts o;
    memset(&o, 0, sizeof o);
    o.config = (ns_gpt2_config){.n_layer = 2, .n_head = 2, .n_embd = 8, .n_ctx = 16, .vocab_size = 32};
    o.seed = 3;
    o.dtype = NS_ST_F32;
    ns_err e;
    if (ns_mkmodel_write(fx.dir, &o, &e) != NS_OK) {
        fprintf(stderr, "fixture: %s\n", e.msg);
        return 1;
    }
    fx.path = ns_path_join(fx.dir, "model.safetensors");
    char *data;
    size_t len;
    if (ns_file_read_all(fx.path, 0, &data, &len, &e) != NS_OK)
        return 1;
    fx.bytes = (uint8_t *)data;
    fx.size = len;
    memcpy(&fx.hlen, fx.bytes, 8);
    return 0;
}

static int fixture_teardown(void)
{
    const char *names[] = {"model.safetensors", "config.json", "case.safetensors"};
    for (size_t i = 0; i < 3; i++) {
        char *p = ns_path_join(fx.dir, names[i]);
        unlink(p);
        free(p);
    }
    rmdir(fx.dir);
    free(fx.path);
    free(fx.bytes);
    return 0;
}

/* Write prefix/length/header/data as the case file and return its path (static buffer). */
static const char *write_case(const void *head, size_t head_len, const void *data, size_t data_len)
{
    static char path[128];
    snprintf(path, sizeof path, "%s/case.safetensors", fx.dir);
    FILE *f = fopen(path, "wb");
    CU_ASSERT_FATAL(f != NULL);
    if (head_len)
        CU_ASSERT_FATAL(fwrite(head, 1, head_len, f) == head_len);
    if (data_len)
        CU_ASSERT_FATAL(fwrite(data, 1, data_len, f) == data_len);
    CU_ASSERT_FATAL(fclose(f) == 0);
    return path;
}

/* A case built from a header text (its length prefix computed) and the base file's data. */
static const char *write_header_case(const char *json)
{
    size_t jl = strlen(json);
    uint8_t *head = malloc(8 + jl);
    uint64_t n = jl;
    memcpy(head, &n, 8);
    memcpy(head + 8, json, jl);
    const uint8_t *data = fx.bytes + 8 + fx.hlen;
    const char *p = write_case(head, 8 + jl, data, fx.size - 8 - fx.hlen);
    free(head);
    return p;
}

/* The base header as a jansson object (caller decrefs). */
static json_t *base_header(void)
{
    json_t *root = json_loadb((const char *)fx.bytes + 8, fx.hlen, 0, NULL);
    CU_ASSERT_FATAL(root != NULL);
    return root;
}

static const char *write_json_case(json_t *root)
{
    char *text = json_dumps(root, JSON_COMPACT);
    const char *p = write_header_case(text);
    free(text);
    json_decref(root);
    return p;
}

/* Open path, expect code, and a one-line message containing the path and `what`. */
static void expect_fail(const char *label, const char *path, int code, const char *what)
{
    ns_st_file f;
    ns_err e;
    ns_err_clear(&e);
    int rc = ns_st_open(path, &f, &e);
    int ok = rc == code && (code == NS_OK || (strstr(e.msg, path) && (!what || strstr(e.msg, what)) &&
                                              !strchr(e.msg, '\n')));
    if (!ok)
        fprintf(stderr, "\n  case '%s': rc %d (want %d), message: %s\n", label, rc, code, e.msg);
    CU_ASSERT(ok);
    if (rc == NS_OK)
        ns_st_close(&f);
    else
        CU_ASSERT_EQUAL(f.n_tensors, 0);
}

static void set_offsets(json_t *root, const char *name, json_int_t b, json_int_t e)
{
    json_object_set_new(json_object_get(root, name), "data_offsets", json_pack("[II]", b, e));
}

static json_int_t offset_of(json_t *root, const char *name, int which)
{
    return json_integer_value(json_array_get(json_object_get(json_object_get(root, name), "data_offsets"), which));
}

static void test_base_ok(void)
{
    ns_st_file f;
    ns_err e;
    CU_ASSERT_EQUAL_FATAL(ns_st_open(fx.path, &f, &e), NS_OK);
    CU_ASSERT_EQUAL(f.n_tensors, 4 + 13 * 2);
    CU_ASSERT(f.map.data != NULL && f.map.fd >= 0);
    const ns_st_tensor *m = ns_st_find(&f, "h.1.attn.bias");
    CU_ASSERT_FATAL(m != NULL);
    CU_ASSERT_EQUAL(m->ndim, 4);
    CU_ASSERT_EQUAL(m->shape[2], 16);
    ns_st_close(&f);
    /* Rewriting the base header unchanged must still load (the case writer itself is sound). */
    expect_fail("unchanged header", write_json_case(base_header()), NS_OK, NULL);
}

static void test_structure_errors(void)
{
    uint64_t n;
    /* 1. empty file */
    expect_fail("empty file", write_case(NULL, 0, NULL, 0), NS_ERR_FORMAT, "too short");
    /* 2. shorter than the length prefix */
    expect_fail("5-byte file", write_case(fx.bytes, 5, NULL, 0), NS_ERR_FORMAT, "too short");
    /* 3. truncated inside the header */
    expect_fail("truncated in header", write_case(fx.bytes, 8 + fx.hlen / 2, NULL, 0), NS_ERR_FORMAT,
                "header length");
    /* 4. truncated in the data: the last tensor's offsets run past the end */
    expect_fail("truncated data", write_case(fx.bytes, fx.size - 4, NULL, 0), NS_ERR_FORMAT,
                "'h.1.attn.bias'");
    /* 5. header length beyond the file, and 2^64-1 (would wrap 8 + N) */
    uint8_t head[16];
    memcpy(head + 8, fx.bytes + 8, 8);
    n = fx.size;
    memcpy(head, &n, 8);
    expect_fail("header length = file size", write_case(head, 16, NULL, 0), NS_ERR_FORMAT,
                "header length");
    n = UINT64_MAX;
    memcpy(head, &n, 8);
    expect_fail("header length 2^64-1", write_case(head, 16, NULL, 0), NS_ERR_FORMAT, "header length");
    /* 6. header not JSON, or JSON of the wrong type */
    expect_fail("header not JSON", write_header_case("{\"wte.weight\": {\"dtype\": "), NS_ERR_FORMAT,
                "not valid JSON");
    expect_fail("header binary", write_header_case("\x01\x02\x03"), NS_ERR_FORMAT, "not valid JSON");
    expect_fail("header JSON array", write_header_case("[1, 2, 3]"), NS_ERR_FORMAT, "array, not an object");
    expect_fail("header JSON string", write_header_case("\"x\""), NS_ERR_FORMAT, "string, not an object");
    /* 7. duplicate tensor names (jansson rejects duplicate keys) */
    expect_fail("duplicate key",
                write_header_case("{\"x\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[0,4]},"
                                  "\"x\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[4,8]}}"),
                NS_ERR_FORMAT, "duplicate");
    /* 8. __metadata__ not an object */
    json_t *r = base_header();
    json_object_set_new(r, "__metadata__", json_integer(1));
    expect_fail("metadata not object", write_json_case(r), NS_ERR_FORMAT, "'__metadata__'");
}

static void test_tensor_errors(void)
{
    json_t *r;
    /* 9. unknown dtype */
    r = base_header();
    json_object_set_new(json_object_get(r, "wpe.weight"), "dtype", json_string("Q4_K"));
    expect_fail("unknown dtype", write_json_case(r), NS_ERR_FORMAT, "'wpe.weight': unknown dtype 'Q4_K'");
    /* dtype of the wrong JSON type, missing keys, entry not an object */
    r = base_header();
    json_object_set_new(json_object_get(r, "ln_f.bias"), "dtype", json_integer(4));
    expect_fail("dtype integer", write_json_case(r), NS_ERR_FORMAT, "'ln_f.bias'");
    r = base_header();
    json_object_del(json_object_get(r, "ln_f.bias"), "data_offsets");
    expect_fail("no data_offsets", write_json_case(r), NS_ERR_FORMAT, "'ln_f.bias': no \"data_offsets\"");
    r = base_header();
    json_object_del(json_object_get(r, "ln_f.bias"), "shape");
    expect_fail("no shape", write_json_case(r), NS_ERR_FORMAT, "'ln_f.bias': no \"shape\"");
    r = base_header();
    json_object_set_new(r, "ln_f.bias", json_string("F32"));
    expect_fail("entry a string", write_json_case(r), NS_ERR_FORMAT, "'ln_f.bias': header entry is a JSON string");
    /* 10. offsets out of range: past the end of the data section, and near 2^63 (no wrap) */
    r = base_header();
    json_int_t dsz = (json_int_t)(fx.size - 8 - fx.hlen);
    set_offsets(r, "wpe.weight", dsz - 512 + 4, dsz + 4);
    expect_fail("offsets past end", write_json_case(r), NS_ERR_FORMAT, "'wpe.weight': data_offsets");
    r = base_header();
    set_offsets(r, "wpe.weight", INT64_MAX - 511, INT64_MAX);
    expect_fail("offsets near 2^63", write_json_case(r), NS_ERR_FORMAT, "'wpe.weight': data_offsets");
    r = base_header();
    set_offsets(r, "wpe.weight", -512, 0);
    expect_fail("negative offset", write_json_case(r), NS_ERR_FORMAT, "'wpe.weight': \"data_offsets\" must be");
    r = base_header();
    set_offsets(r, "wpe.weight", 1536, 1024);
    expect_fail("end before begin", write_json_case(r), NS_ERR_FORMAT, "'wpe.weight': data_offsets [1536, 1024] end before begin");
    r = base_header();
    json_object_set_new(json_object_get(r, "wpe.weight"), "data_offsets", json_pack("[i]", 0));
    expect_fail("one offset", write_json_case(r), NS_ERR_FORMAT, "'wpe.weight'");
    /* 11. overlapping tensors: ln_1.bias pointed at ln_1.weight's bytes */
    r = base_header();
    set_offsets(r, "h.0.ln_1.bias", offset_of(r, "h.0.ln_1.weight", 0), offset_of(r, "h.0.ln_1.weight", 1));
    expect_fail("overlap (same range)", write_json_case(r), NS_ERR_FORMAT, "'h.0.ln_1.bias'");
    r = base_header();
    json_int_t b = offset_of(r, "h.0.ln_2.bias", 0);
    set_offsets(r, "h.0.ln_2.bias", b - 4, b + 28);
    expect_fail("overlap (partial)", write_json_case(r), NS_ERR_FORMAT, "overlaps tensor");
    /* 12. byte size != numel * dtype size */
    r = base_header();
    json_object_set_new(json_object_get(r, "ln_f.bias"), "shape", json_pack("[i]", 9));
    expect_fail("size/shape mismatch", write_json_case(r), NS_ERR_FORMAT, "'ln_f.bias': data_offsets span 32 bytes but F32 shape [9] needs 36");
    r = base_header();
    json_object_set_new(json_object_get(r, "ln_f.bias"), "dtype", json_string("F16"));
    expect_fail("size/dtype mismatch", write_json_case(r), NS_ERR_FORMAT, "'ln_f.bias'");
    /* 13. shape whose byte size overflows 64 bits, negative dims, too many dims */
    r = base_header();
    json_object_set_new(json_object_get(r, "ln_f.bias"), "shape",
                        json_pack("[II]", (json_int_t)1 << 62, (json_int_t)1 << 62));
    expect_fail("shape overflow", write_json_case(r), NS_ERR_FORMAT, "'ln_f.bias': shape is too large");
    r = base_header();
    json_object_set_new(json_object_get(r, "ln_f.bias"), "shape", json_pack("[I]", (json_int_t)1 << 62));
    expect_fail("byte size overflow", write_json_case(r), NS_ERR_FORMAT, "'ln_f.bias': shape is too large");
    r = base_header();
    json_object_set_new(json_object_get(r, "ln_f.bias"), "shape", json_pack("[i]", -8));
    expect_fail("negative dim", write_json_case(r), NS_ERR_FORMAT, "'ln_f.bias': shape[0]");
    r = base_header();
    json_object_set_new(json_object_get(r, "ln_f.bias"), "shape", json_pack("[iiiiiiiii]", 1, 1, 1, 1, 1, 1, 1, 1, 8));
    expect_fail("9 dims", write_json_case(r), NS_ERR_FORMAT, "'ln_f.bias': shape has 9 dimensions");
    r = base_header();
    json_object_set_new(json_object_get(r, "ln_f.bias"), "shape", json_pack("[f]", 8.0));
    expect_fail("real dim", write_json_case(r), NS_ERR_FORMAT, "'ln_f.bias': shape[0]");
    /* 14. a hostile name with a newline is shown on one line */
    r = base_header();
    json_object_set(r, "evil\nname", json_object_get(r, "ln_f.bias"));
    expect_fail("name with newline", write_json_case(r), NS_ERR_FORMAT, "evil?name");
}

/* The reference implementation's rules beyond each tensor's own entry: the tensors' bytes cover
 * the data section exactly (no gap, no trailing byte, the first at 0), __metadata__ maps strings
 * to strings, the header starts with '{'. */
static const char *write_json_data_case(json_t *root, const void *data, size_t len)
{
    char *text = json_dumps(root, JSON_COMPACT);
    size_t jl = strlen(text);
    uint8_t *head = malloc(8 + jl);
    uint64_t n = jl;
    memcpy(head, &n, 8);
    memcpy(head + 8, text, jl);
    const char *p = write_case(head, 8 + jl, data, len);
    free(head);
    free(text);
    json_decref(root);
    return p;
}

static void test_layout_errors(void)
{
    const uint8_t *data = fx.bytes + 8 + fx.hlen;
    size_t dsz = fx.size - 8 - fx.hlen;
    uint8_t *more = calloc(dsz + 8, 1);
    CU_ASSERT_FATAL(more != NULL);
    memcpy(more, data, dsz);
    /* trailing bytes after the last tensor */
    expect_fail("trailing bytes", write_json_data_case(base_header(), more, dsz + 4), NS_ERR_FORMAT,
                "4 bytes after the last tensor");
    /* a gap: the last tensor moved 4 bytes on (the file 4 bytes longer) */
    json_t *r = base_header();
    const char *last = NULL;
    json_int_t end = -1;
    const char *key;
    json_t *val;
    json_object_foreach(r, key, val) {
        json_int_t e = offset_of(r, key, 1);
        if (json_is_object(val) && json_object_get(val, "data_offsets") && e > end)
            end = e, last = key;
    }
    CU_ASSERT_FATAL(last != NULL && end == (json_int_t)dsz);
    json_int_t b0 = offset_of(r, last, 0);
    set_offsets(r, last, b0 + 4, end + 4);
    expect_fail("gap", write_json_data_case(r, more, dsz + 4), NS_ERR_FORMAT,
                "4 bytes between them belong to no tensor");
    /* the first tensor not at 0: every offset moved 8 bytes on */
    r = base_header();
    json_object_foreach(r, key, val) {
        if (json_is_object(val) && json_object_get(val, "data_offsets"))
            set_offsets(r, key, offset_of(r, key, 0) + 8, offset_of(r, key, 1) + 8);
    }
    uint8_t *shifted = calloc(dsz + 8, 1);
    memcpy(shifted + 8, data, dsz);
    expect_fail("first at 8", write_json_data_case(r, shifted, dsz + 8), NS_ERR_FORMAT,
                "ends at byte 0: 8 bytes between them");
    free(shifted);
    free(more);
    /* __metadata__ with a value that is not a string */
    r = base_header();
    json_object_set_new(r, "__metadata__", json_pack("{s:s, s:i}", "format", "pt", "step", 3));
    expect_fail("metadata integer", write_json_case(r), NS_ERR_FORMAT,
                "__metadata__: the value of 'step' is a JSON integer, not a string");
    r = base_header();
    json_object_set_new(r, "__metadata__", json_pack("{s:{}}", "nested"));
    expect_fail("metadata object", write_json_case(r), NS_ERR_FORMAT, "'nested' is a JSON object");
    /* a header that does not start with '{' (valid JSON after a space) */
    r = base_header();
    char *text = json_dumps(r, JSON_COMPACT);
    json_decref(r);
    char *spaced = malloc(strlen(text) + 2);
    spaced[0] = ' ';
    strcpy(spaced + 1, text);
    expect_fail("leading space", write_header_case(spaced), NS_ERR_FORMAT,
                "the header starts with byte 0x20, not '{'");
    free(text);
    free(spaced);
}

static void test_missing_file(void)
{
    ns_st_file f;
    ns_err e;
    CU_ASSERT_EQUAL(ns_st_open("/nonexistent/x.safetensors", &f, &e), NS_ERR_IO);
    CU_ASSERT(strstr(e.msg, "/nonexistent/x.safetensors") != NULL);
    CU_ASSERT_EQUAL(ns_st_open("/tmp", &f, &e), NS_ERR_IO); /* a directory */
}

int main(void)
{
    if (CU_initialize_registry() != CUE_SUCCESS)
        return 1;
    CU_pSuite s = CU_add_suite("half precision", NULL, NULL);
    CU_add_test(s, "F16 exhaustive round trip, values, ties", test_f16_exhaustive);
    CU_add_test(s, "F16 rounding vs naive reference (random)", test_f16_random);
    CU_add_test(s, "BF16 exhaustive round trip and ties", test_bf16);
    CU_add_test(s, "ns_st_to_f32 (unaligned)", test_to_f32);
    CU_pSuite p = CU_add_suite("parse", NULL, NULL);
    CU_add_test(p, "header build / parse round trip", test_build_parse);
    CU_add_test(p, "missing file", test_missing_file);
    CU_pSuite c = CU_add_suite("corrupted files", fixture_setup, fixture_teardown);
    CU_add_test(c, "base file loads", test_base_ok);
    CU_add_test(c, "file / header structure", test_structure_errors);
    CU_add_test(c, "tensor entries", test_tensor_errors);
    CU_add_test(c, "layout: gaps, trailing bytes, metadata, header start", test_layout_errors);
    return ns_test_run_all();
}

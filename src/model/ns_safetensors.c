/* ns_safetensors: validating safetensors reader (mmap + jansson), half-precision conversion and
 * the header builder for the writer. Every length and offset is checked before it is used. */
#include "model/ns_safetensors.h"

#include <jansson.h>
#include <stdlib.h>
#include <string.h>

#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ != __ORDER_LITTLE_ENDIAN__
#error "ns_safetensors assumes a little-endian host (safetensors data is little-endian)"
#endif

/* The official implementation refuses headers above 100 MB; so do we (no legitimate file is
 * anywhere near it, and it bounds the JSON parse). */
#define NS_ST_HEADER_MAX ((uint64_t)100 * 1000 * 1000)

static const struct {
    const char *name;
    size_t size;
} dtype_table[NS_ST_DTYPE_COUNT] = {
    [NS_ST_F32] = {"F32", 4},   [NS_ST_F16] = {"F16", 2},   [NS_ST_BF16] = {"BF16", 2},
    [NS_ST_F64] = {"F64", 8},   [NS_ST_I64] = {"I64", 8},   [NS_ST_U64] = {"U64", 8},
    [NS_ST_I32] = {"I32", 4},   [NS_ST_U32] = {"U32", 4},   [NS_ST_I16] = {"I16", 2},
    [NS_ST_U16] = {"U16", 2},   [NS_ST_I8] = {"I8", 1},     [NS_ST_U8] = {"U8", 1},
    [NS_ST_BOOL] = {"BOOL", 1}, [NS_ST_F8_E4M3] = {"F8_E4M3", 1},
    [NS_ST_F8_E5M2] = {"F8_E5M2", 1},
};

const char *ns_st_dtype_name(ns_st_dtype dtype)
{
    return (unsigned)dtype < NS_ST_DTYPE_COUNT ? dtype_table[dtype].name : "?";
}

size_t ns_st_dtype_size(ns_st_dtype dtype)
{
    return (unsigned)dtype < NS_ST_DTYPE_COUNT ? dtype_table[dtype].size : 0;
}

int ns_st_dtype_parse(const char *name, ns_st_dtype *dtype)
{
    for (int i = 0; i < NS_ST_DTYPE_COUNT; i++) {
        if (strcmp(name, dtype_table[i].name) == 0) {
            *dtype = (ns_st_dtype)i;
            return 0;
        }
    }
    return -1;
}

/* A printable, bounded copy of a (possibly hostile) tensor name for one-line messages. */
typedef struct {
    char s[160];
} shown_name;

static shown_name show(const char *name)
{
    shown_name out;
    size_t j = 0;
    for (size_t i = 0; name[i] && j + 4 < sizeof out.s; i++) {
        unsigned char c = (unsigned char)name[i];
        out.s[j++] = (c < 0x20 || c == 0x7f) ? '?' : (char)c;
    }
    if (name[0] && j + 4 >= sizeof out.s) {
        memcpy(out.s + j, "...", 3);
        j += 3;
    }
    out.s[j] = '\0';
    return out;
}

static const char *json_type_name(const json_t *v)
{
    switch (json_typeof(v)) {
    case JSON_OBJECT: return "object";
    case JSON_ARRAY: return "array";
    case JSON_STRING: return "string";
    case JSON_INTEGER: return "integer";
    case JSON_REAL: return "real";
    case JSON_TRUE:
    case JSON_FALSE: return "boolean";
    case JSON_NULL: return "null";
    }
    return "value";
}

/* Non-negative JSON integer as uint64; -1 when v is not one. */
static int json_u64(const json_t *v, uint64_t *out)
{
    if (!json_is_integer(v))
        return -1;
    json_int_t x = json_integer_value(v);
    if (x < 0)
        return -1;
    *out = (uint64_t)x;
    return 0;
}

static int parse_tensor(const char *path, const char *name, json_t *val, size_t data_size,
                        ns_st_tensor *t, uint64_t *begin_out, ns_err *err)
{
    shown_name sn = show(name);
    if (!json_is_object(val))
        return ns_fail(err, NS_ERR_FORMAT, "%s: tensor '%s': header entry is a JSON %s, not an object",
                       path, sn.s, json_type_name(val));

    json_t *jd = json_object_get(val, "dtype");
    if (!jd)
        return ns_fail(err, NS_ERR_FORMAT, "%s: tensor '%s': no \"dtype\"", path, sn.s);
    if (!json_is_string(jd))
        return ns_fail(err, NS_ERR_FORMAT, "%s: tensor '%s': \"dtype\" is a JSON %s, not a string",
                       path, sn.s, json_type_name(jd));
    if (ns_st_dtype_parse(json_string_value(jd), &t->dtype) != 0)
        return ns_fail(err, NS_ERR_FORMAT, "%s: tensor '%s': unknown dtype '%s'", path, sn.s,
                       show(json_string_value(jd)).s);

    json_t *js = json_object_get(val, "shape");
    if (!js)
        return ns_fail(err, NS_ERR_FORMAT, "%s: tensor '%s': no \"shape\"", path, sn.s);
    if (!json_is_array(js))
        return ns_fail(err, NS_ERR_FORMAT, "%s: tensor '%s': \"shape\" is a JSON %s, not an array",
                       path, sn.s, json_type_name(js));
    size_t ndim = json_array_size(js);
    if (ndim > NS_ST_MAX_DIMS)
        return ns_fail(err, NS_ERR_FORMAT, "%s: tensor '%s': shape has %zu dimensions (at most %d)",
                       path, sn.s, ndim, NS_ST_MAX_DIMS);
    t->ndim = ndim;
    uint64_t numel = 1;
    int overflow = 0;
    for (size_t i = 0; i < ndim; i++) {
        uint64_t d;
        if (json_u64(json_array_get(js, i), &d) != 0)
            return ns_fail(err, NS_ERR_FORMAT,
                           "%s: tensor '%s': shape[%zu] is not a non-negative integer", path, sn.s, i);
        t->shape[i] = (size_t)d;
        if (__builtin_mul_overflow(numel, d, &numel))
            overflow = 1;
    }
    uint64_t nbytes = 0;
    if (overflow || __builtin_mul_overflow(numel, (uint64_t)ns_st_dtype_size(t->dtype), &nbytes))
        return ns_fail(err, NS_ERR_FORMAT, "%s: tensor '%s': shape is too large (byte size overflows)",
                       path, sn.s);

    json_t *jo = json_object_get(val, "data_offsets");
    if (!jo)
        return ns_fail(err, NS_ERR_FORMAT, "%s: tensor '%s': no \"data_offsets\"", path, sn.s);
    uint64_t begin, end;
    if (!json_is_array(jo) || json_array_size(jo) != 2 || json_u64(json_array_get(jo, 0), &begin) != 0 ||
        json_u64(json_array_get(jo, 1), &end) != 0)
        return ns_fail(err, NS_ERR_FORMAT,
                       "%s: tensor '%s': \"data_offsets\" must be two non-negative integers [begin, end]",
                       path, sn.s);
    if (begin > end)
        return ns_fail(err, NS_ERR_FORMAT, "%s: tensor '%s': data_offsets [%llu, %llu] end before begin",
                       path, sn.s, (unsigned long long)begin, (unsigned long long)end);
    if (end > data_size)
        return ns_fail(err, NS_ERR_FORMAT,
                       "%s: tensor '%s': data_offsets [%llu, %llu] beyond the data section of %zu bytes "
                       "(truncated file?)",
                       path, sn.s, (unsigned long long)begin, (unsigned long long)end, data_size);
    if (end - begin != nbytes) {
        char shape[160];
        size_t k = 0;
        shape[k++] = '[';
        for (size_t i = 0; i < ndim && k < sizeof shape - 24; i++)
            k += (size_t)snprintf(shape + k, sizeof shape - k, "%s%zu", i ? ", " : "", t->shape[i]);
        snprintf(shape + k, sizeof shape - k, "]");
        return ns_fail(err, NS_ERR_FORMAT,
                       "%s: tensor '%s': data_offsets span %llu bytes but %s shape %s needs %llu",
                       path, sn.s, (unsigned long long)(end - begin), ns_st_dtype_name(t->dtype), shape,
                       (unsigned long long)nbytes);
    }
    t->numel = (size_t)numel;
    t->nbytes = (size_t)nbytes;
    *begin_out = begin;
    return NS_OK;
}

static int cmp_by_offset(const void *a, const void *b)
{
    const ns_st_tensor *x = *(ns_st_tensor *const *)a, *y = *(ns_st_tensor *const *)b;
    if (x->offset != y->offset)
        return x->offset < y->offset ? -1 : 1;
    if (x->nbytes != y->nbytes)
        return x->nbytes < y->nbytes ? -1 : 1;
    return strcmp(x->name, y->name); /* (a message names the same pair on every machine) */
}

/* The data section is exactly the tensors' bytes, back to back, as the format's reference
 * implementation requires: sorted by their offsets, the first starts at 0, each where the one
 * before it ends (no overlap, no gap), and the last ends where the file does (no trailing bytes).
 * An empty tensor occupies no bytes. */
static int check_layout(const char *path, ns_st_file *f, size_t data_start, size_t data_size,
                        ns_err *err)
{
    ns_st_tensor **order = malloc((f->n_tensors ? f->n_tensors : 1) * sizeof *order);
    if (!order)
        return ns_fail(err, NS_ERR_NOMEM, "%s: out of memory", path);
    for (size_t i = 0; i < f->n_tensors; i++)
        order[i] = &f->tensors[i];
    qsort(order, f->n_tensors, sizeof *order, cmp_by_offset);
    int rc = NS_OK;
    size_t at = data_start; /* where the next tensor must begin */
    const ns_st_tensor *prev = NULL;
    for (size_t i = 0; i < f->n_tensors && rc == NS_OK; i++) {
        const ns_st_tensor *t = order[i];
        if (t->offset < at && prev)
            rc = ns_fail(err, NS_ERR_FORMAT,
                         "%s: tensor '%s' [%zu, %zu) overlaps tensor '%s' [%zu, %zu)", path,
                         show(t->name).s, t->offset - data_start, t->offset - data_start + t->nbytes,
                         show(prev->name).s, prev->offset - data_start,
                         prev->offset - data_start + prev->nbytes);
        else if (t->offset > at)
            rc = ns_fail(err, NS_ERR_FORMAT,
                         "%s: tensor '%s' starts at byte %zu of the data, but %s ends at byte %zu: "
                         "%zu bytes between them belong to no tensor (the format has no gaps)",
                         path, show(t->name).s, t->offset - data_start,
                         prev ? "the tensor before it" : "nothing before it", at - data_start,
                         t->offset - at);
        at = t->offset + t->nbytes;
        prev = t;
    }
    if (rc == NS_OK && at != data_start + data_size)
        rc = ns_fail(err, NS_ERR_FORMAT,
                     "%s: %zu bytes after the last tensor%s%s%s (the data section is %zu bytes, the "
                     "tensors end at byte %zu): trailing bytes the format does not allow", path,
                     data_start + data_size - at, prev ? " ('" : "", prev ? show(prev->name).s : "",
                     prev ? "')" : "", data_size, at - data_start);
    free(order);
    return rc;
}

/* __metadata__: a map of strings to strings (the format's only free-form part). */
static int check_metadata(const char *path, json_t *meta, ns_err *err)
{
    if (!json_is_object(meta))
        return ns_fail(err, NS_ERR_FORMAT, "%s: tensor '__metadata__': is a JSON %s, not an object",
                       path, json_type_name(meta));
    const char *key;
    json_t *val;
    json_object_foreach(meta, key, val) {
        if (!json_is_string(val))
            return ns_fail(err, NS_ERR_FORMAT, "%s: __metadata__: the value of '%s' is a JSON %s, "
                           "not a string", path, show(key).s, json_type_name(val));
    }
    return NS_OK;
}

int ns_st_parse(const char *path, const uint8_t *data, size_t size, ns_st_file *f, ns_err *err)
{
    memset(f, 0, sizeof *f);
    f->map.fd = -1;
    if (size < 8)
        return ns_fail(err, NS_ERR_FORMAT,
                       "%s: file is %zu bytes, too short for a safetensors header (truncated or empty?)",
                       path, size);
    uint64_t hlen = 0;
    memcpy(&hlen, data, 8);
    if (hlen > size - 8)
        return ns_fail(err, NS_ERR_FORMAT,
                       "%s: header length %llu exceeds the %zu bytes after the length prefix "
                       "(truncated or not a safetensors file)",
                       path, (unsigned long long)hlen, size - 8);
    if (hlen > NS_ST_HEADER_MAX)
        return ns_fail(err, NS_ERR_FORMAT, "%s: header length %llu exceeds the %llu-byte limit", path,
                       (unsigned long long)hlen, (unsigned long long)NS_ST_HEADER_MAX);
    size_t data_start = 8 + (size_t)hlen;
    size_t data_size = size - data_start;

    json_error_t jerr;
    json_t *root = json_loadb((const char *)data + 8, (size_t)hlen,
                              JSON_REJECT_DUPLICATES | JSON_DECODE_ANY, &jerr);
    if (!root)
        return ns_fail(err, NS_ERR_FORMAT, "%s: header is not valid JSON: %s (header byte %d)", path,
                       jerr.text, jerr.position);
    int rc = NS_OK;
    if (!json_is_object(root)) {
        rc = ns_fail(err, NS_ERR_FORMAT, "%s: header is a JSON %s, not an object", path,
                     json_type_name(root));
        goto done;
    }
    if (data[8] != '{') { /* (the reference implementation refuses anything before it) */
        rc = ns_fail(err, NS_ERR_FORMAT, "%s: the header starts with byte 0x%02x, not '{'", path,
                     (unsigned)data[8]);
        goto done;
    }
    size_t n = json_object_size(root);
    json_t *meta = json_object_get(root, "__metadata__");
    if (meta) {
        n--;
        if ((rc = check_metadata(path, meta, err)) != NS_OK)
            goto done;
    }
    f->tensors = calloc(n ? n : 1, sizeof *f->tensors);
    if (!f->tensors) {
        rc = ns_fail(err, NS_ERR_NOMEM, "%s: out of memory", path);
        goto done;
    }
    const char *key;
    json_t *val;
    json_object_foreach(root, key, val)
    {
        if (strcmp(key, "__metadata__") == 0)
            continue;
        ns_st_tensor *t = &f->tensors[f->n_tensors];
        uint64_t begin = 0;
        if ((rc = parse_tensor(path, key, val, data_size, t, &begin, err)) != NS_OK)
            goto done;
        t->offset = data_start + (size_t)begin;
        if (!(t->name = strdup(key))) {
            rc = ns_fail(err, NS_ERR_NOMEM, "%s: out of memory", path);
            goto done;
        }
        f->n_tensors++;
    }
    if ((rc = check_layout(path, f, data_start, data_size, err)) != NS_OK)
        goto done;
    if (!(f->path = strdup(path))) {
        rc = ns_fail(err, NS_ERR_NOMEM, "%s: out of memory", path);
        goto done;
    }
    f->data_start = data_start;
    f->map.data = data;
    f->map.size = size;
done:
    json_decref(root);
    if (rc != NS_OK) {
        ns_st_close(f);
        f->map.fd = -1;
    }
    return rc;
}

int ns_st_open(const char *path, ns_st_file *f, ns_err *err)
{
    ns_mmap map;
    memset(f, 0, sizeof *f);
    f->map.fd = -1;
    NS_TRY(ns_mmap_open(path, &map, err));
    int rc = ns_st_parse(path, map.data, map.size, f, err);
    if (rc != NS_OK) {
        ns_mmap_close(&map);
        return rc;
    }
    f->map = map;
    return NS_OK;
}

void ns_st_close(ns_st_file *f)
{
    if (!f)
        return;
    for (size_t i = 0; i < f->n_tensors; i++)
        free(f->tensors[i].name);
    free(f->tensors);
    free(f->path);
    if (f->map.fd >= 0)
        ns_mmap_close(&f->map); /* only maps opened by ns_st_open own an fd */
    memset(f, 0, sizeof *f);
    f->map.fd = -1;
}

const ns_st_tensor *ns_st_find(const ns_st_file *f, const char *name)
{
    for (size_t i = 0; i < f->n_tensors; i++)
        if (strcmp(f->tensors[i].name, name) == 0)
            return &f->tensors[i];
    return NULL;
}

/* ---- half precision ---- */

static inline float bits_to_f32(uint32_t u)
{
    float f;
    memcpy(&f, &u, 4);
    return f;
}

static inline uint32_t f32_to_bits(float f)
{
    uint32_t u;
    memcpy(&u, &f, 4);
    return u;
}

float ns_f16_to_f32(uint16_t h)
{
    uint32_t sign = (uint32_t)(h & 0x8000u) << 16;
    uint32_t exp = (h >> 10) & 0x1fu, mant = h & 0x3ffu;
    if (exp == 0) {
        /* zero or subnormal: mant * 2^-24, exact in float */
        float v = (float)mant * 0x1p-24f;
        return (h & 0x8000u) ? -v : v;
    }
    if (exp == 31)
        return bits_to_f32(sign | 0x7f800000u | (mant << 13));
    return bits_to_f32(sign | ((exp + 112u) << 23) | (mant << 13));
}

float ns_bf16_to_f32(uint16_t h)
{
    return bits_to_f32((uint32_t)h << 16);
}

uint16_t ns_f32_to_f16(float f)
{
    uint32_t x = f32_to_bits(f);
    uint16_t sign = (uint16_t)((x >> 16) & 0x8000u);
    uint32_t a = x & 0x7fffffffu;
    if (a > 0x7f800000u) /* NaN: keep it quiet and non-zero */
        return (uint16_t)(sign | 0x7e00u | ((a >> 13) & 0x3ffu));
    if (a >= 0x477ff000u) /* >= 65520 rounds (ties to even) to infinity; includes inf */
        return (uint16_t)(sign | 0x7c00u);
    if (a >= 0x38800000u) { /* normal in f16 (>= 2^-14) */
        a += 0xfffu + ((a >> 13) & 1u);
        return (uint16_t)(sign | ((a - (112u << 23)) >> 13));
    }
    /* subnormal or zero in f16: round |f| * 2^24 to an integer, ties to even (exact steps) */
    float v = bits_to_f32(a) * 0x1p24f;
    uint32_t m = (uint32_t)v;
    float frac = v - (float)m;
    if (frac > 0.5f || (frac == 0.5f && (m & 1u)))
        m++;
    return (uint16_t)(sign | m); /* m == 1024 encodes the smallest normal, correctly */
}

uint16_t ns_f32_to_bf16(float f)
{
    uint32_t x = f32_to_bits(f);
    if ((x & 0x7fffffffu) > 0x7f800000u)
        return (uint16_t)((x >> 16) | 0x0040u);
    x += 0x7fffu + ((x >> 16) & 1u);
    return (uint16_t)(x >> 16);
}

int ns_st_to_f32(float *out, const uint8_t *src, ns_st_dtype dtype, size_t n, ns_err *err)
{
    switch (dtype) {
    case NS_ST_F32:
        memcpy(out, src, n * 4);
        return NS_OK;
    case NS_ST_F16:
        for (size_t i = 0; i < n; i++) {
            uint16_t h;
            memcpy(&h, src + 2 * i, 2);
            out[i] = ns_f16_to_f32(h);
        }
        return NS_OK;
    case NS_ST_BF16:
        for (size_t i = 0; i < n; i++) {
            uint16_t h;
            memcpy(&h, src + 2 * i, 2);
            out[i] = ns_bf16_to_f32(h);
        }
        return NS_OK;
    default:
        return ns_fail(err, NS_ERR_INVALID, "dtype %s cannot be converted to F32",
                       ns_st_dtype_name(dtype));
    }
}

/* ---- writer side ---- */

int ns_st_header_build(const ns_st_spec *specs, size_t n, const char *const *metadata,
                       uint8_t **out, size_t *out_len, size_t *data_len, ns_err *err)
{
    *out = NULL;
    *out_len = 0;
    *data_len = 0;
    int rc = NS_OK;
    char *text = NULL;
    json_t *root = json_object();
    if (!root)
        return ns_fail(err, NS_ERR_NOMEM, "out of memory");
    if (metadata) {
        json_t *m = json_object();
        if (!m || json_object_set_new(root, "__metadata__", m) != 0) {
            rc = ns_fail(err, NS_ERR_NOMEM, "out of memory");
            goto done;
        }
        for (size_t i = 0; metadata[i] && metadata[i + 1]; i += 2)
            if (json_object_set_new(m, metadata[i], json_string(metadata[i + 1])) != 0) {
                rc = ns_fail(err, NS_ERR_NOMEM, "out of memory");
                goto done;
            }
    }
    uint64_t off = 0;
    for (size_t i = 0; i < n; i++) {
        const ns_st_spec *s = &specs[i];
        size_t dsz = ns_st_dtype_size(s->dtype);
        if (dsz == 0 || s->ndim > NS_ST_MAX_DIMS) {
            rc = ns_fail(err, NS_ERR_INVALID, "tensor '%s': bad dtype or rank", s->name);
            goto done;
        }
        uint64_t bytes = dsz;
        json_t *shape = json_array();
        json_t *ent = json_object();
        if (!shape || !ent) {
            json_decref(shape);
            json_decref(ent);
            rc = ns_fail(err, NS_ERR_NOMEM, "out of memory");
            goto done;
        }
        int bad = 0;
        for (size_t d = 0; d < s->ndim; d++) {
            bad |= __builtin_mul_overflow(bytes, (uint64_t)s->shape[d], &bytes);
            bad |= s->shape[d] > (size_t)INT64_MAX;
            bad |= json_array_append_new(shape, json_integer((json_int_t)s->shape[d])) != 0;
        }
        uint64_t end;
        bad |= __builtin_add_overflow(off, bytes, &end) || end > (uint64_t)INT64_MAX;
        json_t *offs = bad ? NULL : json_pack("[II]", (json_int_t)off, (json_int_t)end);
        if (bad || !offs || json_object_set_new(ent, "dtype", json_string(ns_st_dtype_name(s->dtype))) ||
            json_object_set_new(ent, "shape", shape) || json_object_set_new(ent, "data_offsets", offs) ||
            json_object_set_new(root, s->name, ent)) {
            rc = ns_fail(err, NS_ERR_INVALID, "tensor '%s': cannot describe (size overflow or no memory)",
                         s->name);
            goto done;
        }
        off = end;
    }
    text = json_dumps(root, JSON_COMPACT);
    if (!text) {
        rc = ns_fail(err, NS_ERR_NOMEM, "out of memory");
        goto done;
    }
    size_t tl = strlen(text);
    size_t pad = (8 - (8 + tl) % 8) % 8;
    size_t hlen = tl + pad;
    uint8_t *buf = malloc(8 + hlen);
    if (!buf) {
        rc = ns_fail(err, NS_ERR_NOMEM, "out of memory");
        goto done;
    }
    uint64_t h64 = hlen;
    memcpy(buf, &h64, 8);
    memcpy(buf + 8, text, tl);
    memset(buf + 8 + tl, ' ', pad);
    *out = buf;
    *out_len = 8 + hlen;
    *data_len = (size_t)off;
done:
    free(text);
    json_decref(root);
    return rc;
}

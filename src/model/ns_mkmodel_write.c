/* ns_mkmodel_write: what every random-model writer shares (ns_mkmodel_write_internal.h): the
 * counter-based generator of tensor values and the writing of a model directory's weights in the
 * Hugging Face layout -- one model.safetensors, or K shards model-0000i-of-0000K.safetensors with
 * model.safetensors.index.json -- each file through a temporary name renamed into place. */
#include "model/ns_mkmodel_write_internal.h"

#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/ns_file.h"
#include "common/ns_tmp.h"
#include "model/ns_checkpoint.h"

#define NS_MK_CHUNK ((size_t)1 << 16) /* elements generated per write (even) */

/* ---- counter-based generator ---- */

static uint64_t mix64(uint64_t z)
{
    z += 0x9e3779b97f4a7c15ull;
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

/* Two independent N(0,1) samples for pair number `pair` of a stream (Box-Muller on the two
 * 32-bit halves of one hash; u in (0, 1) so the log is finite). */
static void normal_pair(uint64_t seed, uint64_t stream, uint64_t pair, double *z0, double *z1)
{
    uint64_t h = mix64(mix64(seed ^ mix64(stream)) + pair);
    double u1 = ((double)(h >> 32) + 0.5) * 0x1p-32;
    double u2 = ((double)(h & 0xffffffffu) + 0.5) * 0x1p-32;
    double r = sqrt(-2.0 * log(u1));
    double a = 2.0 * M_PI * u2;
    *z0 = r * cos(a);
    *z1 = r * sin(a);
}

/* FNV-1a of the tensor name: each tensor has its own stream, independent of the layer count. */
static uint64_t name_stream(const char *s)
{
    uint64_t h = 0xcbf29ce484222325ull;
    for (; *s; s++) {
        h ^= (unsigned char)*s;
        h *= 0x100000001b3ull;
    }
    return h;
}

void ns_mk_values(float *out, const ns_mk_tensor *d, uint64_t seed, size_t start, size_t n)
{
    switch (d->kind) {
    case NS_MK_ZERO:
        memset(out, 0, n * sizeof *out);
        return;
    case NS_MK_ONE:
        for (size_t i = 0; i < n; i++)
            out[i] = 1.0f;
        return;
    case NS_MK_MASK: {
        size_t P = d->shape[3];
        for (size_t i = 0; i < n; i++) {
            size_t e = start + i, col = e % P, row = (e / P) % P;
            out[i] = col <= row ? 1.0f : 0.0f;
        }
        return;
    }
    case NS_MK_NORMAL:
        for (size_t i = 0; i < n;) {
            size_t e = start + i;
            double z0, z1;
            normal_pair(seed, d->stream, e >> 1, &z0, &z1);
            if ((e & 1) == 0) {
                out[i++] = (float)(d->mean + d->std * z0);
                if (i < n)
                    out[i++] = (float)(d->mean + d->std * z1);
            } else {
                out[i++] = (float)(d->mean + d->std * z1);
            }
        }
        return;
    }
}

void ns_mk_tensor_set(ns_mk_tensor *d, const char *name, size_t ndim, const size_t *shape,
                      ns_mk_init kind, double mean, double std)
{
    snprintf(d->name, sizeof d->name, "%s", name);
    d->ndim = ndim;
    d->numel = 1;
    for (size_t i = 0; i < ndim; i++) {
        d->shape[i] = shape[i];
        d->numel *= shape[i];
    }
    d->kind = kind;
    d->mean = mean;
    d->std = std;
    d->stream = name_stream(name);
}

/* ---- writing ---- */

static int write_all(int fd, const void *buf, size_t len, const char *path, ns_err *err)
{
    const char *p = buf;
    while (len > 0) {
        ssize_t w = write(fd, p, len);
        if (w < 0 && errno == EINTR)
            continue;
        if (w < 0)
            return ns_fail(err, NS_ERR_IO, "%s: write failed: %s", path, strerror(errno));
        p += w;
        len -= (size_t)w;
    }
    return NS_OK;
}

/* Convert n floats to dtype bytes in out. */
static size_t encode(uint8_t *out, const float *v, size_t n, ns_st_dtype dtype)
{
    if (dtype == NS_ST_F32) {
        memcpy(out, v, n * 4);
        return n * 4;
    }
    for (size_t i = 0; i < n; i++) {
        uint16_t h = dtype == NS_ST_F16 ? ns_f32_to_f16(v[i]) : ns_f32_to_bf16(v[i]);
        memcpy(out + 2 * i, &h, 2);
    }
    return n * 2;
}

/* The header and data of tensors d[0..n) (indices first.. in the whole list, for the source)
 * into tmp, the temporary of path; stops when w->hooks.stop is set. */
static int write_body(int fd, const char *tmp, const char *path, const ns_mk_weights *w,
                      size_t first, size_t n, ns_err *err)
{
    const ns_mk_tensor *d = w->tensors + first;
    uint8_t *header = NULL, *bytes = malloc(NS_MK_CHUNK * sizeof(float));
    float *vals = malloc(NS_MK_CHUNK * sizeof *vals);
    ns_st_spec *specs = calloc(n, sizeof *specs);
    int rc = vals && bytes && specs ? NS_OK : ns_fail(err, NS_ERR_NOMEM, "out of memory");
    for (size_t i = 0; rc == NS_OK && i < n; i++) {
        specs[i].name = d[i].name;
        specs[i].dtype = w->dtype;
        specs[i].ndim = d[i].ndim;
        memcpy(specs[i].shape, d[i].shape, d[i].ndim * sizeof(size_t));
    }
    static const char *const meta[] = {"format", "pt", NULL, NULL};
    size_t hlen = 0, dlen = 0;
    if (rc == NS_OK && (rc = ns_st_header_build(specs, n, meta, &header, &hlen, &dlen, err)) == NS_OK)
        rc = write_all(fd, header, hlen, tmp, err);
    if (rc == NS_OK && first == 0 && w->hooks.hold) /* test only: NULL but in a test that holds it */
        w->hooks.hold(w->hooks.hold_user, "temp", 0);
    for (size_t i = 0; i < n && rc == NS_OK; i++)
        for (size_t s = 0; s < d[i].numel && rc == NS_OK; s += NS_MK_CHUNK) {
            size_t m = d[i].numel - s < NS_MK_CHUNK ? d[i].numel - s : NS_MK_CHUNK;
            if (w->source && d[i].kind != NS_MK_MASK)
                rc = w->source(w->user, first + i, s, m, vals, err);
            else
                ns_mk_values(vals, &d[i], w->seed, s, m);
            if (rc == NS_OK)
                rc = write_all(fd, bytes, encode(bytes, vals, m, w->dtype), tmp, err);
            if (rc == NS_OK && w->hooks.stop && *w->hooks.stop)
                rc = ns_fail(err, NS_ERR_INTERRUPTED, "interrupted; %s was not written (its "
                             "temporary is removed)", path);
        }
    free(header);
    free(bytes);
    free(vals);
    free(specs);
    return rc;
}

/* path: tensors [first, first + n) as one safetensors file, through a temporary name. */
static int write_file(const char *path, const ns_mk_weights *w, size_t first, size_t n,
                      ns_err *err)
{
    ns_tmp_remove_stale(path, NULL, NULL);
    char *tmp = ns_file_temp_name(path);
    if (!tmp)
        return ns_fail(err, NS_ERR_NOMEM, "out of memory");
    int rc = NS_OK, fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (fd < 0)
        rc = ns_fail(err, NS_ERR_IO, "%s: cannot create: %s", tmp, strerror(errno));
    if (rc == NS_OK)
        rc = write_body(fd, tmp, path, w, first, n, err);
    if (rc == NS_OK && fsync(fd) != 0)
        rc = ns_fail(err, NS_ERR_IO, "%s: fsync failed: %s", tmp, strerror(errno));
    if (fd >= 0 && close(fd) != 0 && rc == NS_OK)
        rc = ns_fail(err, NS_ERR_IO, "%s: close failed: %s", tmp, strerror(errno));
    if (rc == NS_OK && rename(tmp, path) != 0)
        rc = ns_fail(err, NS_ERR_IO, "rename %s -> %s: %s", tmp, path, strerror(errno));
    if (rc != NS_OK)
        unlink(tmp);
    free(tmp);
    return rc == NS_OK ? ns_file_sync_parent_dir(path, err) : rc;
}

/* The first tensor of each of the K shards: contiguous runs in file order, balanced by bytes
 * (shard k starts at the first tensor whose start is at or past k/K of the total), at least one
 * tensor each. */
static void shard_starts(const ns_mk_tensor *d, size_t n, size_t K, size_t *start)
{
    double total = 0.0, at = 0.0;
    for (size_t i = 0; i < n; i++)
        total += (double)d[i].numel;
    size_t k = 1;
    start[0] = 0;
    for (size_t i = 0; i < n && k < K; i++) {
        if (i > start[k - 1] && (at >= total * (double)k / (double)K || n - i == K - k))
            start[k++] = i;
        at += (double)d[i].numel;
    }
    start[K] = n;
}

static int write_index(const char *dir, const ns_mk_weights *w, const size_t *start,
                       char names[][48], ns_err *err)
{
    json_t *map = json_object(), *root = NULL;
    double bytes = 0.0;
    int rc = map ? NS_OK : ns_fail(err, NS_ERR_NOMEM, "out of memory");
    for (size_t k = 0; rc == NS_OK && k < w->shards; k++)
        for (size_t i = start[k]; i < start[k + 1]; i++) {
            bytes += (double)w->tensors[i].numel * (double)ns_st_dtype_size(w->dtype);
            if (json_object_set_new(map, w->tensors[i].name, json_string(names[k])))
                rc = ns_fail(err, NS_ERR_NOMEM, "out of memory");
        }
    if (rc == NS_OK && !(root = json_pack("{s:{s:I}, s:O}", "metadata", "total_size",
                                          (json_int_t)bytes, "weight_map", map)))
        rc = ns_fail(err, NS_ERR_NOMEM, "out of memory");
    char *text = root ? json_dumps(root, JSON_INDENT(2) | JSON_SORT_KEYS) : NULL;
    char *path = ns_path_join(dir, NS_CKPT_INDEX);
    if (rc == NS_OK && (!text || !path))
        rc = ns_fail(err, NS_ERR_NOMEM, "out of memory");
    if (rc == NS_OK)
        ns_tmp_remove_stale(path, NULL, NULL);
    if (rc == NS_OK)
        rc = ns_file_write_atomic(path, text, strlen(text), err);
    free(path);
    free(text);
    json_decref(root);
    json_decref(map);
    return rc;
}

/* Remove dir/name if present (a stale file of the other layout, which a loader would read). */
static int remove_stale(const char *dir, const char *name, ns_err *err)
{
    char *p = ns_path_join(dir, name);
    if (!p)
        return ns_fail(err, NS_ERR_NOMEM, "out of memory");
    int rc = NS_OK;
    if (unlink(p) != 0 && errno != ENOENT)
        rc = ns_fail(err, NS_ERR_IO, "%s: cannot remove the stale file: %s", p, strerror(errno));
    free(p);
    return rc;
}

void ns_mk_shard_name(size_t k, size_t K, char name[48])
{
    snprintf(name, 48, "model-%05u-of-%05u.safetensors", (unsigned)(k + 1) % 100000u,
             (unsigned)K % 100000u);
}

int ns_mk_write_weights(const char *dir, const ns_mk_weights *w, ns_err *err)
{
    if (w->shards <= 1) {
        char *p = ns_path_join(dir, NS_CKPT_SINGLE);
        int rc = p ? write_file(p, w, 0, w->n, err) : ns_fail(err, NS_ERR_NOMEM, "out of memory");
        free(p);
        NS_TRY(rc);
        return remove_stale(dir, NS_CKPT_INDEX, err);
    }
    if (w->shards > w->n || w->shards > NS_CKPT_MAX_SHARDS)
        return ns_fail(err, NS_ERR_INVALID, "%zu shards for %zu tensors (at most one shard per "
                       "tensor and %d shards)", w->shards, w->n, NS_CKPT_MAX_SHARDS);
    size_t *start = malloc((w->shards + 1) * sizeof *start);
    char(*names)[48] = malloc(w->shards * sizeof *names);
    int rc = start && names ? NS_OK : ns_fail(err, NS_ERR_NOMEM, "out of memory");
    size_t done = 0; /* shards renamed into place */
    if (rc == NS_OK)
        shard_starts(w->tensors, w->n, w->shards, start);
    for (size_t k = 0; rc == NS_OK && k < w->shards; k++) {
        ns_mk_shard_name(k, w->shards, names[k]);
        char *p = ns_path_join(dir, names[k]);
        rc = p ? write_file(p, w, start[k], start[k + 1] - start[k], err)
               : ns_fail(err, NS_ERR_NOMEM, "out of memory");
        free(p);
        done = rc == NS_OK ? k + 1 : done;
    }
    if (rc == NS_OK)
        rc = write_index(dir, w, start, names, err);
    if (rc == NS_OK)
        rc = remove_stale(dir, NS_CKPT_SINGLE, err);
    for (size_t k = 0; rc != NS_OK && k < done; k++) {
        /* a stopped or failed write leaves no shard of this model: only the whole set is one */
        char *p = ns_path_join(dir, names[k]);
        if (p)
            unlink(p);
        free(p);
    }
    free(start);
    free(names);
    return rc;
}

int ns_mk_write_config(const char *dir, json_t *root, ns_err *err)
{
    /* 10 significant digits: what the writers' checks allow a number to need */
    char *text = json_dumps(root, JSON_INDENT(2) | JSON_REAL_PRECISION(10));
    char *path = ns_path_join(dir, "config.json");
    int rc = NS_OK;
    if (!text || !path) {
        rc = ns_fail(err, NS_ERR_NOMEM, "out of memory building config.json");
    } else {
        size_t tl = strlen(text);
        char *line = realloc(text, tl + 2);
        if (!line) {
            rc = ns_fail(err, NS_ERR_NOMEM, "out of memory");
        } else {
            text = line;
            memcpy(text + tl, "\n", 2);
            ns_tmp_remove_stale(path, NULL, NULL);
            rc = ns_file_write_atomic(path, text, tl + 1, err);
        }
    }
    free(text);
    free(path);
    return rc;
}

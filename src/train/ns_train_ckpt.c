/* ns_train_ckpt: writing and reading the trainer's checkpoint (see ns_train_ckpt.h). */
#include "train/ns_train_ckpt.h"

#include <errno.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/ns_file.h"
#include "common/ns_sha256.h"

#define NS_TRAIN_CKPT_MAGIC "NSTRCKP1"
#define NS_TRAIN_CKPT_SEAL "\nsha256 "
#define NS_TRAIN_CKPT_SEAL_LEN (8 + NS_SHA256_HEX_LEN)

static int put(FILE *f, const void *p, size_t len, const char *tmp, ns_err *err)
{
    if (len && fwrite(p, 1, len, f) != len)
        return ns_fail(err, NS_ERR_IO, "%s: write failed: %s", tmp, strerror(errno));
    return NS_OK;
}

/* The body: magic, header, arrays. */
static int write_body(FILE *f, const char *tmp, const char *header, size_t n, const float *params,
                      const float *m, const float *v, const ns_train_log *log, ns_err *err)
{
    uint64_t hl = strlen(header);
    static const char zeros[8] = {0};
    NS_TRY(put(f, NS_TRAIN_CKPT_MAGIC, 8, tmp, err));
    NS_TRY(put(f, &hl, 8, tmp, err));
    NS_TRY(put(f, header, hl, tmp, err));
    NS_TRY(put(f, zeros, (8 - hl % 8) % 8, tmp, err));
    NS_TRY(put(f, params, n * sizeof(float), tmp, err));
    NS_TRY(put(f, m, n * sizeof(float), tmp, err));
    NS_TRY(put(f, v, n * sizeof(float), tmp, err));
    NS_TRY(put(f, log->rows, log->n_steps * log->col.width * sizeof(double), tmp, err));
    return put(f, log->evals, log->n_evals * 2 * sizeof(double), tmp, err);
}

static int close_synced(FILE *f, const char *tmp, ns_err *err)
{
    int bad = fflush(f) != 0 || fsync(fileno(f)) != 0;
    int e = errno;
    if (fclose(f) != 0 && !bad)
        bad = 1, e = errno;
    if (bad)
        return ns_fail(err, NS_ERR_IO, "%s: write failed: %s", tmp, strerror(e));
    return NS_OK;
}

int ns_train_ckpt_save(const char *path, const char *options_json, uint64_t step, size_t n,
                       const float *params, const float *m, const float *v, const ns_train_log *log,
                       ns_err *err)
{
    char *header = ns_str_printf("{\"format\": 1, \"step\": %llu, \"floats\": %zu, \"log_width\": "
                                 "%zu, \"log_steps\": %zu, \"log_evals\": %zu, \"options\": %s}",
                                 (unsigned long long)step, n, log->col.width, log->n_steps,
                                 log->n_evals, options_json);
    char *tmp = ns_file_temp_name(path);
    int rc = NS_OK;
    FILE *f = NULL;
    if (!header || !tmp) {
        rc = ns_fail(err, NS_ERR_NOMEM, "checkpoint: out of memory");
        goto done;
    }
    if (!(f = fopen(tmp, "wb"))) {
        rc = ns_fail(err, NS_ERR_IO, "%s: cannot create: %s", tmp, strerror(errno));
        goto done;
    }
    rc = write_body(f, tmp, header, n, params, m, v, log, err);
    FILE *g = f;
    f = NULL;
    if (rc != NS_OK) {
        fclose(g);
        goto done;
    }
    char hex[NS_SHA256_HEX_LEN + 1];
    if ((rc = close_synced(g, tmp, err)) || (rc = ns_sha256_file(tmp, hex, err)))
        goto done;
    if (!(f = fopen(tmp, "ab"))) {
        rc = ns_fail(err, NS_ERR_IO, "%s: cannot reopen: %s", tmp, strerror(errno));
        goto done;
    }
    rc = put(f, NS_TRAIN_CKPT_SEAL, 8, tmp, err);
    if (rc == NS_OK)
        rc = put(f, hex, NS_SHA256_HEX_LEN, tmp, err);
    g = f;
    f = NULL;
    if (rc != NS_OK) {
        fclose(g);
        goto done;
    }
    if ((rc = close_synced(g, tmp, err)))
        goto done;
    if (rename(tmp, path) != 0) {
        rc = ns_fail(err, NS_ERR_IO, "rename %s -> %s: %s", tmp, path, strerror(errno));
        goto done;
    }
    rc = ns_file_sync_parent_dir(path, err);
done:
    if (rc != NS_OK && tmp)
        unlink(tmp);
    free(tmp);
    free(header);
    return rc;
}

/* The first option whose value differs between two option objects, or NULL. */
static const char *first_difference(json_t *a, json_t *b)
{
    const char *key;
    json_t *va;
    json_object_foreach(a, key, va) {
        if (!json_equal(va, json_object_get(b, key)))
            return key;
    }
    json_object_foreach(b, key, va) {
        if (!json_object_get(a, key))
            return key;
    }
    return NULL;
}

/* Check the header against the caller's options and sizes; fills *step and the log's counts. */
static int check_header(const char *path, const char *text, size_t len, const char *options_json,
                        size_t n, uint64_t *step, size_t *steps, size_t *evals, size_t width,
                        ns_err *err)
{
    json_error_t je;
    json_t *h = json_loadb(text, len, 0, &je), *want = json_loads(options_json, 0, &je);
    json_int_t st = -1, fl = -1, w = -1, ls = -1, le = -1, fmt = -1;
    json_t *opts = NULL;
    int rc = NS_OK;
    if (!h || !want ||
        json_unpack(h, "{s:I, s:I, s:I, s:I, s:I, s:I, s:o}", "format", &fmt, "step", &st,
                    "floats", &fl, "log_width", &w, "log_steps", &ls, "log_evals", &le, "options",
                    &opts) != 0 || fmt != 1 || st < 0 || ls < 0 || le < 0) {
        rc = ns_fail(err, NS_ERR_FORMAT, "%s: not a normsweep training checkpoint (bad header)", path);
    } else if ((size_t)fl != n || (size_t)w != width) {
        rc = ns_fail(err, NS_ERR_INVALID, "%s: made for a model with %lld parameters and %lld log "
                     "columns, not %zu and %zu", path, (long long)fl, (long long)w, n, width);
    } else {
        const char *d = first_difference(opts, want);
        if (d)
            rc = ns_fail(err, NS_ERR_INVALID, "%s: made by a run with another '%s' (resume with "
                         "the same options, or start afresh in another --out)", path, d);
    }
    if (rc == NS_OK) {
        *step = (uint64_t)st;
        *steps = (size_t)ls;
        *evals = (size_t)le;
    }
    json_decref(h);
    json_decref(want);
    return rc;
}

/* Copy `bytes` from the body at *off, refusing to read past end. */
static int take(const char *path, const char *data, size_t end, size_t *off, void *dst,
                size_t bytes, ns_err *err)
{
    if (bytes > end - *off)
        return ns_fail(err, NS_ERR_FORMAT, "%s: truncated checkpoint", path);
    memcpy(dst, data + *off, bytes);
    *off += bytes;
    return NS_OK;
}

static int read_arrays(const char *path, const char *data, size_t end, size_t off, size_t n,
                       float *params, float *m, float *v, ns_train_log *log, size_t steps,
                       size_t evals, ns_err *err)
{
    NS_TRY(take(path, data, end, &off, params, n * sizeof(float), err));
    NS_TRY(take(path, data, end, &off, m, n * sizeof(float), err));
    NS_TRY(take(path, data, end, &off, v, n * sizeof(float), err));
    for (size_t s = 0; s < steps; s++) {
        double *row = ns_train_log_new_row(log);
        if (!row)
            return ns_fail(err, NS_ERR_NOMEM, "checkpoint: out of memory");
        NS_TRY(take(path, data, end, &off, row, log->col.width * sizeof(double), err));
    }
    for (size_t e = 0; e < evals; e++) {
        double ev[2];
        NS_TRY(take(path, data, end, &off, ev, sizeof ev, err));
        NS_TRY(ns_train_log_add_eval(log, ev[0], ev[1], err));
    }
    if (off != end)
        return ns_fail(err, NS_ERR_FORMAT, "%s: %zu unexpected bytes at the end", path, end - off);
    return NS_OK;
}

int ns_train_ckpt_load(const char *path, const char *options_json, uint64_t *step, size_t n,
                       float *params, float *m, float *v, ns_train_log *log, ns_err *err)
{
    char *data = NULL;
    size_t len = 0, steps = 0, evals = 0;
    NS_TRY(ns_file_read_all(path, 0, &data, &len, err));
    int rc = NS_OK;
    char hex[NS_SHA256_HEX_LEN + 1];
    uint64_t hl = 0;
    if (len < 16 + NS_TRAIN_CKPT_SEAL_LEN || memcmp(data, NS_TRAIN_CKPT_MAGIC, 8) != 0 ||
        memcmp(data + len - NS_TRAIN_CKPT_SEAL_LEN, NS_TRAIN_CKPT_SEAL, 8) != 0) {
        rc = ns_fail(err, NS_ERR_FORMAT, "%s: not a complete normsweep training checkpoint", path);
        goto done;
    }
    size_t end = len - NS_TRAIN_CKPT_SEAL_LEN;
    if ((rc = ns_sha256_buffer(data, end, hex, err)) != NS_OK)
        goto done;
    if (memcmp(hex, data + end + 8, NS_SHA256_HEX_LEN) != 0) {
        rc = ns_fail(err, NS_ERR_FORMAT, "%s: damaged (its SHA-256 does not match its content)",
                     path);
        goto done;
    }
    memcpy(&hl, data + 8, 8);
    if (hl > end - 16) {
        rc = ns_fail(err, NS_ERR_FORMAT, "%s: truncated checkpoint header", path);
        goto done;
    }
    if ((rc = check_header(path, data + 16, (size_t)hl, options_json, n, step, &steps, &evals,
                           log->col.width, err)) != NS_OK)
        goto done;
    size_t off = 16 + (size_t)hl + (8 - hl % 8) % 8;
    if (off > end) {
        rc = ns_fail(err, NS_ERR_FORMAT, "%s: truncated checkpoint", path);
        goto done;
    }
    rc = read_arrays(path, data, end, off, n, params, m, v, log, steps, evals, err);
done:
    free(data);
    return rc;
}

/* ns_checkpoint: a model directory's weights, single or sharded (see ns_checkpoint.h). */
#include "model/ns_checkpoint.h"

#include <dirent.h>
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/ns_file.h"
#include "common/ns_sha256.h"
#include "model/ns_model_json.h"

/* An index is a list of names; anything above this is not an index. */
#define NS_CKPT_INDEX_MAX_BYTES ((size_t)64 << 20)

void ns_ckpt_close(ns_ckpt *ck)
{
    for (size_t i = 0; ck->files && i < ck->n_files; i++)
        ns_st_close(&ck->files[i]);
    for (size_t i = 0; ck->names && i < ck->n_files; i++)
        free(ck->names[i]);
    free(ck->files);
    free(ck->names);
    free(ck->dir);
    free(ck->weights_path);
    memset(ck, 0, sizeof *ck);
}

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* A shard's name as the index gives it: a plain file name in the directory. */
static const char *bad_shard_name(const char *s)
{
    size_t n = strlen(s);
    if (n == 0 || n > 255)
        return "is empty or longer than 255 bytes";
    if (strchr(s, '/') || strcmp(s, ".") == 0 || strcmp(s, "..") == 0)
        return "is not a file name in the model directory";
    for (const char *c = s; *c; c++)
        if ((unsigned char)*c < 0x20 || *c == 0x7f)
            return "holds a control character";
    if (n < 12 || strcmp(s + n - 12, ".safetensors") != 0)
        return "does not end in .safetensors";
    return NULL;
}

/* The distinct file names of the index's weight_map, sorted, into ck->names. */
static int index_names(const char *path, json_t *map, ns_ckpt *ck, ns_err *err)
{
    size_t n = json_object_size(map);
    if (n == 0)
        return ns_fail(err, NS_ERR_FORMAT, "%s: \"weight_map\" is empty", path);
    char **all = calloc(n, sizeof *all);
    if (!all)
        return ns_fail(err, NS_ERR_NOMEM, "out of memory");
    const char *key;
    json_t *v;
    size_t k = 0;
    int rc = NS_OK;
    json_object_foreach(map, key, v) {
        const char *why = !json_is_string(v) ? "is not a string" : bad_shard_name(json_string_value(v));
        if (why) {
            rc = ns_fail(err, NS_ERR_FORMAT, "%s: \"weight_map\" entry for tensor '%.128s': the "
                         "file name %s", path, key, why);
            break;
        }
        all[k++] = (char *)json_string_value(v);
    }
    size_t m = 0;
    if (rc == NS_OK) {
        qsort(all, k, sizeof *all, cmp_str);
        for (size_t i = 0; i < k; i++)
            if (i == 0 || strcmp(all[i], all[i - 1]) != 0)
                all[m++] = all[i];
        if (m > NS_CKPT_MAX_SHARDS)
            rc = ns_fail(err, NS_ERR_FORMAT, "%s: %zu shards, more than the %d accepted", path, m,
                         NS_CKPT_MAX_SHARDS);
    }
    if (rc == NS_OK && !(ck->names = calloc(m, sizeof *ck->names)))
        rc = ns_fail(err, NS_ERR_NOMEM, "out of memory");
    for (size_t i = 0; rc == NS_OK && i < m; i++) {
        if (!(ck->names[i] = strdup(all[i])))
            rc = ns_fail(err, NS_ERR_NOMEM, "out of memory");
        ck->n_files = i + 1;
    }
    free(all);
    return rc;
}

/* Every tensor of every shard is where the index says, and every indexed tensor is there. */
static int index_agrees(const char *path, json_t *map, const ns_ckpt *ck, ns_err *err)
{
    for (size_t f = 0; f < ck->n_files; f++) {
        const ns_st_file *st = &ck->files[f];
        for (size_t i = 0; i < st->n_tensors; i++) {
            json_t *v = json_object_get(map, st->tensors[i].name);
            if (!v)
                return ns_fail(err, NS_ERR_FORMAT, "%s: tensor '%.128s' is not in the index %s",
                               st->path, st->tensors[i].name, path);
            if (strcmp(json_string_value(v), ck->names[f]) != 0)
                return ns_fail(err, NS_ERR_FORMAT, "%s: tensor '%.128s' is in %s but the index "
                               "maps it to %s", path, st->tensors[i].name, ck->names[f],
                               json_string_value(v));
        }
    }
    const char *key;
    json_t *v;
    json_object_foreach(map, key, v) {
        const ns_st_file *st = NULL;
        for (size_t f = 0; f < ck->n_files && !st; f++)
            if (strcmp(ck->names[f], json_string_value(v)) == 0)
                st = &ck->files[f];
        if (!st || !ns_st_find(st, key))
            return ns_fail(err, NS_ERR_FORMAT, "%s: tensor '%.128s' is mapped to %s, which does "
                           "not hold it", path, key, json_string_value(v));
    }
    return NS_OK;
}

static int open_files(ns_ckpt *ck, ns_err *err)
{
    if (!(ck->files = calloc(ck->n_files, sizeof *ck->files)))
        return ns_fail(err, NS_ERR_NOMEM, "out of memory");
    for (size_t i = 0; i < ck->n_files; i++) {
        char *p = ns_path_join(ck->dir, ck->names[i]);
        if (!p)
            return ns_fail(err, NS_ERR_NOMEM, "out of memory");
        int rc = ns_st_open(p, &ck->files[i], err);
        free(p);
        NS_TRY(rc);
    }
    return NS_OK;
}

static int open_index(ns_ckpt *ck, ns_err *err)
{
    const char *path = ck->weights_path;
    json_t *root = NULL;
    NS_TRY(ns_json_load_object(path, NS_CKPT_INDEX_MAX_BYTES, &root, err));
    int rc = NS_OK;
    json_t *map = json_object_get(root, "weight_map"), *meta = json_object_get(root, "metadata");
    if (!json_is_object(map))
        rc = ns_fail(err, NS_ERR_FORMAT, "%s: key \"weight_map\" is %s, expected an object of "
                     "tensor names to file names", path, map ? "not an object" : "missing");
    else if (meta && !json_is_object(meta) && !json_is_null(meta))
        rc = ns_fail(err, NS_ERR_FORMAT, "%s: key \"metadata\" is not an object", path);
    if (rc == NS_OK)
        rc = index_names(path, map, ck, err);
    if (rc == NS_OK)
        rc = open_files(ck, err);
    if (rc == NS_OK)
        rc = index_agrees(path, map, ck, err);
    json_decref(root);
    return rc;
}

int ns_ckpt_open(const char *dir, ns_ckpt *ck, ns_err *err)
{
    memset(ck, 0, sizeof *ck);
    char *single = ns_path_join(dir, NS_CKPT_SINGLE);
    int rc = NS_OK;
    if (!single || !(ck->dir = strdup(dir))) {
        free(single);
        ns_ckpt_close(ck);
        return ns_fail(err, NS_ERR_NOMEM, "out of memory");
    }
    char *index = ns_path_join(dir, NS_CKPT_INDEX);
    if (!index) {
        rc = ns_fail(err, NS_ERR_NOMEM, "out of memory");
    } else if (ns_file_exists(single) || !ns_file_exists(index)) {
        /* the single file (a missing one is reported as such: the usual layout) */
        ck->weights_path = single;
        single = NULL;
        if (!(ck->names = calloc(1, sizeof *ck->names)) ||
            !(ck->names[0] = strdup(NS_CKPT_SINGLE)))
            rc = ns_fail(err, NS_ERR_NOMEM, "out of memory");
        else
            ck->n_files = 1;
        if (rc == NS_OK)
            rc = open_files(ck, err);
    } else {
        ck->weights_path = index;
        index = NULL;
        ck->sharded = 1;
        rc = open_index(ck, err);
    }
    free(single);
    free(index);
    if (rc != NS_OK)
        ns_ckpt_close(ck);
    return rc;
}

const ns_st_tensor *ns_ckpt_find(const ns_ckpt *ck, const char *name, const ns_st_file **file)
{
    for (size_t f = 0; f < ck->n_files; f++) {
        const ns_st_tensor *t = ns_st_find(&ck->files[f], name);
        if (t) {
            *file = &ck->files[f];
            return t;
        }
    }
    return NULL;
}

int ns_ckpt_sha256(const ns_ckpt *ck, char hex[65], ns_err *err)
{
    if (!ck->sharded)
        return ns_sha256_buffer(ck->files[0].map.data, ck->files[0].map.size, hex, err);
    char (*h)[65] = calloc(ck->n_files, sizeof *h);
    const char **shas = calloc(ck->n_files, sizeof *shas);
    int rc = h && shas ? NS_OK : ns_fail(err, NS_ERR_NOMEM, "out of memory");
    for (size_t f = 0; f < ck->n_files && rc == NS_OK; f++) {
        rc = ns_sha256_buffer(ck->files[f].map.data, ck->files[f].map.size, h[f], err);
        shas[f] = h[f];
    }
    if (rc == NS_OK)
        rc = ns_sha256_listing(ck->n_files, (const char *const *)ck->names, shas, hex, err);
    free(shas);
    free(h);
    return rc;
}

void ns_ckpt_slot_set(ns_ckpt_slot *s, const char *name, size_t d0, size_t d1, const char *why,
                      const float **dst, int optional)
{
    memset(s, 0, sizeof *s);
    snprintf(s->name, sizeof s->name, "%s", name);
    s->ndim = d1 ? 2 : 1;
    s->shape[0] = d0;
    s->shape[1] = d1;
    s->why = why;
    s->dst = dst;
    s->optional = optional;
}

static void fmt_shape(char *buf, size_t cap, const size_t *shape, size_t ndim)
{
    size_t k = (size_t)snprintf(buf, cap, "[");
    for (size_t i = 0; i < ndim && k + 24 < cap; i++)
        k += (size_t)snprintf(buf + k, cap - k, "%s%zu", i ? ", " : "", shape[i]);
    snprintf(buf + k, cap - k, "]");
}

/* Find, and check dtype and shape. *convert: the tensor is copied into the F32 block. */
static int check_slot(const ns_ckpt *ck, ns_ckpt_slot *s, int *convert, ns_err *err)
{
    s->t = ns_ckpt_find(ck, s->name, &s->file);
    *convert = 0;
    if (s->prefix) {
        char pref[sizeof s->name + 32];
        const ns_st_file *pf = NULL;
        snprintf(pref, sizeof pref, "%s%s", s->prefix, s->name);
        const ns_st_tensor *pt = ns_ckpt_find(ck, pref, &pf);
        if (pt && s->t)
            return ns_fail(err, NS_ERR_FORMAT, "%s: tensor '%s' present both with and without "
                           "the \"%s\" prefix", ck->weights_path, s->name, s->prefix);
        if (pt) {
            s->t = pt;
            s->file = pf;
        }
    }
    if (!s->t) {
        if (s->optional)
            return NS_OK;
        return ns_fail(err, NS_ERR_FORMAT, "%s: tensor '%s' is missing (required by config.json)",
                       ck->weights_path, s->name);
    }
    const ns_st_tensor *t = s->t;
    if (t->dtype != NS_ST_F32 && t->dtype != NS_ST_F16 && t->dtype != NS_ST_BF16)
        return ns_fail(err, NS_ERR_FORMAT, "%s: tensor '%s': dtype %s is not supported (F32, F16, "
                       "BF16)", s->file->path, t->name, ns_st_dtype_name(t->dtype));
    int same = t->ndim == s->ndim;
    for (size_t i = 0; same && i < s->ndim; i++)
        same = t->shape[i] == s->shape[i];
    if (!same) {
        char got[96], want[64];
        fmt_shape(got, sizeof got, t->shape, t->ndim);
        fmt_shape(want, sizeof want, s->shape, s->ndim);
        return ns_fail(err, NS_ERR_FORMAT,
                       "%s: tensor '%s': shape %s disagrees with config.json (expected %s from %s)",
                       s->file->path, t->name, got, want, s->why);
    }
    /* F32 is used in place when 4-byte aligned (the map itself is page aligned). */
    *convert = t->dtype != NS_ST_F32 || (t->offset % sizeof(float)) != 0;
    return NS_OK;
}

int ns_ckpt_bind(const ns_ckpt *ck, ns_ckpt_slot *slots, size_t n, float **converted,
                 ns_err *err)
{
    *converted = NULL;
    size_t *conv_off = calloc(n ? n : 1, sizeof *conv_off), n_conv = 0;
    if (!conv_off)
        return ns_fail(err, NS_ERR_NOMEM, "out of memory");
    int rc = NS_OK;
    for (size_t i = 0; i < n && rc == NS_OK; i++) {
        int convert = 0;
        rc = check_slot(ck, &slots[i], &convert, err);
        conv_off[i] = convert ? n_conv : SIZE_MAX;
        if (convert)
            n_conv += slots[i].t->numel; /* bounded by the files' sizes: no overflow */
    }
    if (rc == NS_OK && n_conv > 0 && !(*converted = malloc(n_conv * sizeof(float))))
        rc = ns_fail(err, NS_ERR_NOMEM, "%s: out of memory converting %zu half-precision values",
                     ck->weights_path, n_conv);
    for (size_t i = 0; i < n && rc == NS_OK; i++) {
        ns_ckpt_slot *s = &slots[i];
        if (!s->t) {
            *s->dst = NULL;
        } else if (conv_off[i] == SIZE_MAX) {
            *s->dst = (const float *)(const void *)ns_st_bytes(s->file, s->t);
        } else {
            float *dst = *converted + conv_off[i];
            rc = ns_st_to_f32(dst, ns_st_bytes(s->file, s->t), s->t->dtype, s->t->numel, err);
            *s->dst = dst;
        }
    }
    /* Every weight must be a number: a NaN or infinity would poison every metric downstream, so
     * it is refused here, before any work (one pass over the weights, ~0.1 s for 124M). */
    for (size_t i = 0; i < n && rc == NS_OK; i++) {
        const float *w = *slots[i].dst;
        for (size_t k = 0; w && k < slots[i].t->numel && rc == NS_OK; k++)
            if (!isfinite(w[k]))
                rc = ns_fail(err, NS_ERR_INVALID, "%s: tensor '%s' holds a non-finite value (%g) "
                             "at flat index %zu", slots[i].file->path, slots[i].t->name,
                             (double)w[k], k);
    }
    free(conv_off);
    if (rc != NS_OK) {
        free(*converted);
        *converted = NULL;
    }
    return rc;
}

int ns_ckpt_check_layers(const ns_ckpt *ck, const char *prefix, const char *stem, size_t n_layer,
                         const char *key, ns_err *err)
{
    size_t np = prefix ? strlen(prefix) : 0, ns = strlen(stem);
    for (size_t f = 0; f < ck->n_files; f++)
        for (size_t i = 0; i < ck->files[f].n_tensors; i++) {
            const char *nm = ck->files[f].tensors[i].name;
            if (np && strncmp(nm, prefix, np) == 0)
                nm += np;
            if (strncmp(nm, stem, ns) != 0 || nm[ns] < '0' || nm[ns] > '9')
                continue;
            char *end;
            unsigned long long l = strtoull(nm + ns, &end, 10);
            if (*end == '.' && l >= n_layer)
                return ns_fail(err, NS_ERR_FORMAT,
                               "%s: tensor '%s': layer %llu but config.json has %s = %zu",
                               ck->files[f].path, ck->files[f].tensors[i].name, l, key,
                               n_layer);
        }
    return NS_OK;
}

static int ends_with(const char *s, const char *suffix)
{
    size_t n = strlen(s), m = strlen(suffix);
    return n >= m && strcmp(s + n - m, suffix) == 0;
}

void ns_model_input_files_free(char **paths, size_t n)
{
    for (size_t i = 0; paths && i < n; i++)
        free(paths[i]);
    free(paths);
}

int ns_model_input_files(const char *dir, char ***paths, size_t *n, ns_err *err)
{
    *paths = NULL;
    *n = 0;
    size_t cap = 8, k = 0;
    char **p = calloc(cap, sizeof *p);
    int rc = p ? NS_OK : ns_fail(err, NS_ERR_NOMEM, "out of memory");
    static const char *const fixed[] = {"config.json", NS_CKPT_SINGLE, NS_CKPT_INDEX};
    for (size_t i = 0; rc == NS_OK && i < 3; i++)
        if (!(p[k++] = ns_path_join(dir, fixed[i])))
            rc = ns_fail(err, NS_ERR_NOMEM, "out of memory");
    DIR *d = rc == NS_OK ? opendir(dir) : NULL; /* unreadable: the loader says why */
    for (struct dirent *e; d && rc == NS_OK && (e = readdir(d));) {
        if (!ends_with(e->d_name, ".safetensors") || strcmp(e->d_name, NS_CKPT_SINGLE) == 0)
            continue;
        if (k == cap) {
            char **q = realloc(p, 2 * cap * sizeof *p);
            if (!q) {
                rc = ns_fail(err, NS_ERR_NOMEM, "out of memory");
                break;
            }
            p = q;
            cap *= 2;
        }
        if (!(p[k++] = ns_path_join(dir, e->d_name)))
            rc = ns_fail(err, NS_ERR_NOMEM, "out of memory");
    }
    if (d)
        closedir(d);
    if (rc != NS_OK) {
        ns_model_input_files_free(p, k);
        return rc;
    }
    *paths = p;
    *n = k;
    return NS_OK;
}

/* ns_asset_shards: a sharded model directory's identity (see the header). */
#include "assets/ns_asset_shards.h"

#include <jansson.h>
#include <stdlib.h>
#include <string.h>

#include "common/ns_file.h"
#include "common/ns_sha256.h"

void ns_asset_shards_free(char **names, size_t n)
{
    for (size_t i = 0; names && i < n; i++)
        free(names[i]);
    free(names);
}

static int by_name(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* A shard's name: a plain file name (no directory, not hidden) ending in .safetensors. */
static int plain_shard(const char *s)
{
    size_t n = strlen(s), e = strlen(".safetensors");
    return n > e && s[0] != '.' && !strchr(s, '/') && strcmp(s + n - e, ".safetensors") == 0;
}

int ns_asset_shards_names(const char *index, char ***names, size_t *n, ns_err *err)
{
    *names = NULL;
    *n = 0;
    json_error_t je;
    json_t *root = json_load_file(index, 0, &je);
    if (!root)
        return ns_fail(err, ns_file_exists(index) ? NS_ERR_FORMAT : NS_ERR_IO,
                       "%s: %s (line %d)", index, je.text, je.line);
    json_t *map = json_object_get(root, "weight_map");
    size_t cap = json_is_object(map) ? json_object_size(map) : 0;
    char **all = cap ? calloc(cap, sizeof *all) : NULL;
    int rc = !json_is_object(map) ? ns_fail(err, NS_ERR_FORMAT, "%s: no \"weight_map\" object",
                                            index)
             : !cap ? ns_fail(err, NS_ERR_FORMAT, "%s: \"weight_map\" names no shard", index)
             : !all ? ns_fail(err, NS_ERR_NOMEM, "out of memory") : NS_OK;
    const char *key;
    json_t *v;
    size_t k = 0;
    if (rc == NS_OK)
        json_object_foreach(map, key, v) {
            if (!json_is_string(v) || !plain_shard(json_string_value(v))) {
                rc = ns_fail(err, NS_ERR_FORMAT, "%s: \"weight_map\" entry '%.128s' is not a "
                             "plain file name ending in .safetensors", index, key);
                break;
            }
            all[k++] = (char *)json_string_value(v);
        }
    size_t m = 0;
    if (rc == NS_OK) {
        qsort(all, k, sizeof *all, by_name);
        for (size_t i = 0; i < k; i++)
            if (i == 0 || strcmp(all[i], all[i - 1]) != 0)
                all[m++] = all[i];
    }
    char **out = rc == NS_OK ? calloc(m, sizeof *out) : NULL;
    if (rc == NS_OK && !out)
        rc = ns_fail(err, NS_ERR_NOMEM, "out of memory");
    for (size_t i = 0; rc == NS_OK && i < m; i++)
        if (!(out[i] = strdup(all[i])))
            rc = ns_fail(err, NS_ERR_NOMEM, "out of memory");
    free(all);
    json_decref(root);
    if (rc != NS_OK) {
        ns_asset_shards_free(out, m);
        return rc;
    }
    *names = out;
    *n = m;
    return NS_OK;
}

int ns_asset_shards_identity(const char *dir, const char *index, char hex[65], ns_err *err)
{
    char **names;
    size_t n;
    NS_TRY(ns_asset_shards_names(index, &names, &n, err));
    char (*h)[65] = calloc(n, sizeof *h);
    const char **shas = calloc(n, sizeof *shas);
    int rc = h && shas ? NS_OK : ns_fail(err, NS_ERR_NOMEM, "out of memory");
    for (size_t i = 0; rc == NS_OK && i < n; i++) {
        char *p = ns_path_join(dir, names[i]);
        rc = p ? ns_sha256_file(p, h[i], err) : ns_fail(err, NS_ERR_NOMEM, "out of memory");
        shas[i] = h[i];
        free(p);
    }
    if (rc == NS_OK)
        rc = ns_sha256_listing(n, (const char *const *)names, shas, hex, err);
    free(shas);
    free(h);
    ns_asset_shards_free(names, n);
    return rc;
}

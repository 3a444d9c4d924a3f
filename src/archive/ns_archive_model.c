/* ns_archive_model: the model's files for a rerun and for `archive --with-model` (see header). */
#include "archive/ns_archive_model.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/ns_file.h"
#include "common/ns_sha256.h"

void ns_archive_model_free(ns_model_files *mf)
{
    for (size_t i = 0; i < mf->n; i++) {
        free(mf->items[i].name);
        free(mf->items[i].place);
        free(mf->items[i].member);
    }
    free(mf->items);
    free(mf->used);
    free(mf->requested);
    free(mf->path);
    memset(mf, 0, sizeof *mf);
}

static const char *base_of(const char *p)
{
    size_t n = strlen(p);
    while (n > 1 && p[n - 1] == '/')
        n--;
    const char *s = p + n;
    while (s > p && s[-1] != '/')
        s--;
    return s;
}

/* Append a file (place and member built from the arguments); NS_ERR_NOMEM. */
static int add_file(ns_model_files *mf, const char *name, const char *place, const char *member,
                    const char *sha, long long size, ns_err *err)
{
    ns_model_file *items = realloc(mf->items, (mf->n + 1) * sizeof *items);
    if (!items)
        return ns_fail(err, NS_ERR_NOMEM, "out of memory");
    mf->items = items;
    ns_model_file *f = &items[mf->n];
    memset(f, 0, sizeof *f);
    f->name = strdup(name);
    f->place = strdup(place);
    f->member = ns_str_printf("%s/%s", NS_ARCHIVE_MODEL_DIR, member);
    snprintf(f->sha256, sizeof f->sha256, "%s", sha ? sha : "");
    f->size = size;
    mf->n++;
    if (!f->name || !f->place || !f->member)
        return ns_fail(err, NS_ERR_NOMEM, "out of memory");
    return NS_OK;
}

int ns_archive_model_by_path(const ns_nc_info *info)
{
    const char *given = ns_nc_info_text(info, "model_given_as");
    const char *used = ns_nc_info_text(info, "model_used");
    return given ? strcmp(given, "path") == 0 : used && strcmp(used, "path") == 0;
}

int ns_archive_model_files(const ns_nc_info *info, const ns_manifest *manifest,
                           ns_model_files *out, ns_err *err)
{
    memset(out, 0, sizeof *out);
    const char *used = ns_nc_info_text(info, "model_used"), *sha = ns_nc_info_text(info, "model_sha256");
    const char *req = ns_nc_info_text(info, "model_requested");
    const char *path = ns_nc_info_text(info, "model_path"), *fb = ns_nc_info_text(info, "model_fallback");
    if (!used || !sha)
        return ns_fail(err, NS_ERR_INVALID, "the file records no model (model_used, model_sha256)");
    /* a directory's model is pinned as "path@SHA256" (the pin's word for a model given by path) */
    out->used = strdup(ns_archive_model_by_path(info) ? "path" : used);
    out->requested = strdup(req ? req : used);
    out->fallback = fb && strcmp(fb, "true") == 0;
    snprintf(out->sha256, sizeof out->sha256, "%s", sha);
    if (!out->used || !out->requested)
        return ns_fail(err, NS_ERR_NOMEM, "out of memory");
    if (ns_archive_model_by_path(info)) {
        const char *where = path && *path ? path : out->requested;
        if (!(out->path = strdup(where)))
            return ns_fail(err, NS_ERR_NOMEM, "out of memory");
        char *dir = ns_str_printf("%s/config.json", base_of(where));
        char *w = ns_str_printf("%s/config.json", where);
        int rc = dir && w ? add_file(out, "config.json", w, dir, NULL, -1, err)
                          : ns_fail(err, NS_ERR_NOMEM, "out of memory");
        free(dir), free(w);
        NS_TRY(rc);
        dir = ns_str_printf("%s/model.safetensors", base_of(where));
        w = ns_str_printf("%s/model.safetensors", where);
        rc = dir && w ? add_file(out, "model.safetensors", w, dir, sha, -1, err)
                      : ns_fail(err, NS_ERR_NOMEM, "out of memory");
        free(dir), free(w);
        return rc;
    }
    const ns_asset_set *set = manifest ? ns_manifest_find(manifest, used) : NULL;
    if (!set) {
        char *place = ns_str_printf("%s/model.safetensors", used);
        int rc = place ? add_file(out, "model.safetensors", place, place, sha, -1, err)
                       : ns_fail(err, NS_ERR_NOMEM, "out of memory");
        free(place);
        return rc;
    }
    for (size_t i = 0; i < set->n_files; i++) {
        const ns_asset_file *f = &set->files[i];
        char *place = ns_str_printf("%s/%s", set->dir, f->name);
        int rc = place ? add_file(out, f->name, place, f->mirror_path ? f->mirror_path : place,
                                  f->sha256, f->size, err)
                       : ns_fail(err, NS_ERR_NOMEM, "out of memory");
        free(place);
        NS_TRY(rc);
    }
    return NS_OK;
}

/* A path model's files where the run read them: model.safetensors must still be the one used. */
static int path_sources(const ns_model_files *mf, char **src, ns_err *err)
{
    for (size_t i = 0; i < mf->n; i++) {
        const ns_model_file *f = &mf->items[i];
        char *index = ns_path_join(mf->path, NS_ARCHIVE_MODEL_INDEX);
        int sharded = index && !ns_file_is_regular(f->place) && ns_file_is_regular(index);
        free(index);
        if (sharded)
            return ns_fail(err, NS_ERR_INVALID, "--with-model: the model the run read from %s is "
                           "sharded (%s and its shards, no model.safetensors): packing a sharded "
                           "model given by its directory is not supported; give it to the sweep "
                           "as a set of an asset manifest (docs/ASSETS.md, \"Sharded models\"), "
                           "whose files --with-model packs, or keep a copy of the directory "
                           "beside the archive; nothing written", mf->path, NS_ARCHIVE_MODEL_INDEX);
        if (!ns_file_is_regular(f->place))
            return ns_fail(err, NS_ERR_INVALID, "--with-model: %s is not a file here (the model "
                           "the run read from %s); nothing written", f->place, mf->path);
        if (f->sha256[0]) {
            char hex[65];
            NS_TRY(ns_sha256_file(f->place, hex, err));
            if (strcmp(hex, f->sha256) != 0)
                return ns_fail(err, NS_ERR_INVALID, "--with-model: %s has sha256 %s; the run "
                               "used %s: the model changed since the run; nothing written",
                               f->place, hex, f->sha256);
        }
        if (!(src[i] = strdup(f->place)))
            return ns_fail(err, NS_ERR_NOMEM, "out of memory");
    }
    return NS_OK;
}

int ns_archive_model_sources(const ns_model_files *mf, char ***sources, ns_err *err)
{
    char **src = calloc(mf->n ? mf->n : 1, sizeof *src);
    if (!src)
        return ns_fail(err, NS_ERR_NOMEM, "out of memory");
    *sources = src;
    if (mf->path)
        return path_sources(mf, src, err);
    /* the set from the cache or the mirror, each file checked against the manifest */
    ns_assets_fetch fetch = {.allow = 1};
    ns_asset_ref ref;
    ns_err e;
    if (ns_assets_resolve(mf->used, "model", &fetch, &ref, &e) != NS_OK || ref.is_fallback)
        return ns_fail(err, NS_ERR_INVALID, "--with-model: the model %s cannot be had here to be "
                       "packed: %s; nothing written", mf->used,
                       ref.is_fallback ? "it resolves to its fallback" : e.msg);
    if (strcmp(ref.sha256, mf->sha256) != 0)
        return ns_fail(err, NS_ERR_INVALID, "--with-model: the model %s here (%s) has sha256 %s; "
                       "the run used %s; nothing written", mf->used, ref.main_file, ref.sha256,
                       mf->sha256);
    for (size_t i = 0; i < mf->n; i++) {
        /* a file of the cache may be a link into the mirror (docs/ASSETS.md): the file itself,
         * which the manifest's SHA-256 was checked against, is packed */
        char *p = ns_path_join(ref.path, mf->items[i].name);
        src[i] = p ? realpath(p, NULL) : NULL;
        if (!src[i]) {
            int rc = p ? ns_fail(err, NS_ERR_IO, "%s: %s", p, strerror(errno))
                       : ns_fail(err, NS_ERR_NOMEM, "out of memory");
            free(p);
            return rc;
        }
        free(p);
    }
    return NS_OK;
}

void ns_archive_model_pin(const ns_model_files *mf, char *buf, size_t size)
{
    snprintf(buf, size, "%s@%s", mf->used, mf->sha256);
}

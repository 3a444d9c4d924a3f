/* ns_manifest: locate, parse and validate the asset manifest (assets/manifest.json). */
#include "assets/ns_manifest.h"

#include <ctype.h>
#include <jansson.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/ns_datadir.h"
#include "common/ns_file.h"

int ns_manifest_locate(char *out, size_t out_len, ns_err *err)
{
    const char *env = getenv("NORMSWEEP_MANIFEST");
    if (env && *env) {
        if (!ns_file_exists(env))
            return ns_fail(err, NS_ERR_IO, "NORMSWEEP_MANIFEST=%s: no such file", env);
        snprintf(out, out_len, "%s", env);
        return NS_OK;
    }
    ns_err where;
    if (ns_datadir_find("assets/manifest.json", out, out_len, &where) != NS_OK)
        return ns_fail(err, NS_ERR_IO, "no asset manifest found (NORMSWEEP_MANIFEST unset): %s",
                       where.msg);
    return NS_OK;
}

static void free_set(ns_asset_set *s)
{
    free(s->name);
    free(s->kind);
    free(s->dir);
    free(s->main_file);
    free(s->fallback);
    free(s->description);
    for (size_t i = 0; i < s->n_files; i++) {
        ns_asset_file *f = &s->files[i];
        free(f->name);
        free(f->mirror_path);
        free(f->archive_file);
        free(f->archive_member);
        for (size_t u = 0; u < f->n_urls; u++)
            free(f->urls[u]);
        free(f->urls);
    }
    free(s->files);
}

void ns_manifest_free(ns_manifest *m)
{
    if (!m)
        return;
    for (size_t i = 0; i < m->n_sets; i++)
        free_set(&m->sets[i]);
    free(m->sets);
    free(m->path);
    memset(m, 0, sizeof *m);
}

const ns_asset_set *ns_manifest_find(const ns_manifest *m, const char *name)
{
    for (size_t i = 0; i < m->n_sets; i++)
        if (strcmp(m->sets[i].name, name) == 0)
            return &m->sets[i];
    return NULL;
}

/* A plain file or directory name: no '/', not "." or "..", not empty, no control characters. */
static int is_plain_name(const char *s)
{
    if (!*s || strcmp(s, ".") == 0 || strcmp(s, "..") == 0)
        return 0;
    for (const char *p = s; *p; p++)
        if (*p == '/' || iscntrl((unsigned char)*p) || isspace((unsigned char)*p))
            return 0;
    return 1;
}

/* Relative path without "..": safe to join below the mirror directory. */
static int is_safe_relpath(const char *s)
{
    if (!*s || s[0] == '/')
        return 0;
    const char *p = s;
    while (*p) {
        const char *q = strchr(p, '/');
        size_t n = q ? (size_t)(q - p) : strlen(p);
        if (n == 0 || (n == 2 && p[0] == '.' && p[1] == '.'))
            return 0;
        p += n;
        if (*p == '/')
            p++;
    }
    return 1;
}

/* Copy an optional/required string member into *out (fresh). */
static int get_str(json_t *obj, const char *key, int required, char **out, const char *where,
                   ns_err *err)
{
    *out = NULL;
    json_t *v = json_object_get(obj, key);
    if (!v || json_is_null(v)) {
        if (required)
            return ns_fail(err, NS_ERR_FORMAT, "%s: missing string \"%s\"", where, key);
        return NS_OK;
    }
    if (!json_is_string(v))
        return ns_fail(err, NS_ERR_FORMAT, "%s: \"%s\" must be a string", where, key);
    *out = strdup(json_string_value(v));
    if (!*out)
        return ns_fail(err, NS_ERR_NOMEM, "out of memory");
    return NS_OK;
}

static int parse_sha(json_t *fo, char sha[65], int *unconfirmed, const char *where, ns_err *err)
{
    sha[0] = '\0';
    *unconfirmed = 0;
    json_t *v = json_object_get(fo, "sha256");
    if (!v || json_is_null(v))
        return NS_OK;
    if (!json_is_string(v))
        return ns_fail(err, NS_ERR_FORMAT, "%s: \"sha256\" must be a string", where);
    const char *s = json_string_value(v);
    *unconfirmed = strcmp(s, "unconfirmed") == 0;
    if (strcmp(s, "unknown") == 0 || *unconfirmed || !*s)
        return NS_OK;
    if (strlen(s) != 64)
        return ns_fail(err, NS_ERR_FORMAT, "%s: sha256 \"%s\" is not 64 hex digits", where, s);
    for (size_t i = 0; i < 64; i++) {
        char c = (char)tolower((unsigned char)s[i]);
        if (!isxdigit((unsigned char)c))
            return ns_fail(err, NS_ERR_FORMAT, "%s: sha256 \"%s\" is not 64 hex digits", where, s);
        sha[i] = c;
    }
    sha[64] = '\0';
    return NS_OK;
}

static int parse_file(json_t *fo, ns_asset_file *f, const char *setname, size_t idx, ns_err *err)
{
    char where[256];
    snprintf(where, sizeof where, "set \"%s\" file %zu", setname, idx);
    if (!json_is_object(fo))
        return ns_fail(err, NS_ERR_FORMAT, "%s: must be an object", where);
    NS_TRY(get_str(fo, "name", 1, &f->name, where, err));
    snprintf(where, sizeof where, "set \"%s\" file \"%s\"", setname, f->name);
    if (!is_plain_name(f->name))
        return ns_fail(err, NS_ERR_FORMAT, "%s: name must be a plain file name", where);
    NS_TRY(parse_sha(fo, f->sha256, &f->unconfirmed, where, err));
    f->size = -1;
    json_t *sz = json_object_get(fo, "size");
    if (sz && !json_is_null(sz)) {
        if (!json_is_integer(sz) || json_integer_value(sz) < 0)
            return ns_fail(err, NS_ERR_FORMAT, "%s: \"size\" must be a non-negative integer", where);
        f->size = (long long)json_integer_value(sz);
    }
    NS_TRY(get_str(fo, "mirror_path", 0, &f->mirror_path, where, err));
    if (f->mirror_path && !is_safe_relpath(f->mirror_path))
        return ns_fail(err, NS_ERR_FORMAT,
                       "%s: mirror_path \"%s\" must be relative, without \"..\"", where,
                       f->mirror_path);
    json_t *arc = json_object_get(fo, "from_archive");
    if (arc && !json_is_null(arc)) {
        if (!json_is_object(arc))
            return ns_fail(err, NS_ERR_FORMAT, "%s: \"from_archive\" must be an object with "
                           "\"file\" and \"member\"", where);
        NS_TRY(get_str(arc, "file", 1, &f->archive_file, where, err));
        NS_TRY(get_str(arc, "member", 1, &f->archive_member, where, err));
        if (!is_safe_relpath(f->archive_member))
            return ns_fail(err, NS_ERR_FORMAT, "%s: from_archive member \"%s\" must be a relative "
                           "path without \"..\"", where, f->archive_member);
    }
    json_t *urls = json_object_get(fo, "urls");
    if (urls && !json_is_null(urls)) {
        if (!json_is_array(urls))
            return ns_fail(err, NS_ERR_FORMAT, "%s: \"urls\" must be an array of strings", where);
        size_t n = json_array_size(urls);
        if (n) {
            f->urls = calloc(n, sizeof *f->urls);
            if (!f->urls)
                return ns_fail(err, NS_ERR_NOMEM, "out of memory");
        }
        for (size_t u = 0; u < n; u++) {
            json_t *s = json_array_get(urls, u);
            if (!json_is_string(s))
                return ns_fail(err, NS_ERR_FORMAT, "%s: urls[%zu] must be a string", where, u);
            f->urls[u] = strdup(json_string_value(s));
            if (!f->urls[u])
                return ns_fail(err, NS_ERR_NOMEM, "out of memory");
            f->n_urls = u + 1;
        }
    }
    return NS_OK;
}

static int parse_set(json_t *so, ns_asset_set *s, size_t idx, ns_err *err)
{
    char where[256];
    snprintf(where, sizeof where, "set %zu", idx);
    if (!json_is_object(so))
        return ns_fail(err, NS_ERR_FORMAT, "%s: must be an object", where);
    NS_TRY(get_str(so, "name", 1, &s->name, where, err));
    snprintf(where, sizeof where, "set \"%s\"", s->name);
    if (!is_plain_name(s->name))
        return ns_fail(err, NS_ERR_FORMAT, "%s: name must be a plain word", where);
    NS_TRY(get_str(so, "kind", 1, &s->kind, where, err));
    if (strcmp(s->kind, "tokenizer") && strcmp(s->kind, "corpus") && strcmp(s->kind, "model") &&
        strcmp(s->kind, "data"))
        return ns_fail(err, NS_ERR_FORMAT,
                       "%s: kind \"%s\" is not one of tokenizer, corpus, model, data", where,
                       s->kind);
    NS_TRY(get_str(so, "dir", 0, &s->dir, where, err));
    if (!s->dir && !(s->dir = strdup(s->name)))
        return ns_fail(err, NS_ERR_NOMEM, "out of memory");
    if (!is_plain_name(s->dir))
        return ns_fail(err, NS_ERR_FORMAT, "%s: dir \"%s\" must be a plain directory name", where,
                       s->dir);
    NS_TRY(get_str(so, "main_file", 1, &s->main_file, where, err));
    NS_TRY(get_str(so, "fallback", 0, &s->fallback, where, err));
    NS_TRY(get_str(so, "description", 0, &s->description, where, err));
    char *fetch = NULL;
    NS_TRY(get_str(so, "fetch", 0, &fetch, where, err));
    if (fetch && strcmp(fetch, "always") && strcmp(fetch, "if-available")) {
        int rc = ns_fail(err, NS_ERR_FORMAT, "%s: fetch \"%s\" is not \"always\" or \"if-available\"",
                         where, fetch);
        free(fetch);
        return rc;
    }
    s->if_available = fetch && strcmp(fetch, "if-available") == 0;
    free(fetch);
    json_t *files = json_object_get(so, "files");
    if (!json_is_array(files) || json_array_size(files) == 0)
        return ns_fail(err, NS_ERR_FORMAT, "%s: \"files\" must be a non-empty array", where);
    size_t n = json_array_size(files);
    s->files = calloc(n, sizeof *s->files);
    if (!s->files)
        return ns_fail(err, NS_ERR_NOMEM, "out of memory");
    for (size_t i = 0; i < n; i++) {
        s->n_files = i + 1;
        NS_TRY(parse_file(json_array_get(files, i), &s->files[i], s->name, i, err));
        for (size_t j = 0; j < i; j++)
            if (strcmp(s->files[j].name, s->files[i].name) == 0)
                return ns_fail(err, NS_ERR_FORMAT, "%s: file \"%s\" listed twice", where,
                               s->files[i].name);
        const char *arc = s->files[i].archive_file;
        int arc_ok = !arc;
        for (size_t j = 0; j < i && !arc_ok; j++)
            arc_ok = strcmp(s->files[j].name, arc) == 0 && !s->files[j].archive_file;
        if (!arc_ok)
            return ns_fail(err, NS_ERR_FORMAT, "%s: file \"%s\": from_archive file \"%s\" must be "
                           "an earlier file of the set (not itself extracted)", where,
                           s->files[i].name, arc);
    }
    int has_main = 0;
    for (size_t i = 0; i < n; i++)
        has_main |= strcmp(s->files[i].name, s->main_file) == 0;
    if (!has_main)
        return ns_fail(err, NS_ERR_FORMAT, "%s: main_file \"%s\" is not one of its files", where,
                       s->main_file);
    return NS_OK;
}

static int parse_manifest(json_t *root, ns_manifest *m, ns_err *err)
{
    if (!json_is_object(root))
        return ns_fail(err, NS_ERR_FORMAT, "top level must be an object");
    json_t *fmt = json_object_get(root, "format");
    if (!json_is_string(fmt) || strcmp(json_string_value(fmt), "normsweep-assets-1") != 0)
        return ns_fail(err, NS_ERR_FORMAT, "\"format\" must be \"normsweep-assets-1\"");
    json_t *sets = json_object_get(root, "sets");
    if (!json_is_array(sets))
        return ns_fail(err, NS_ERR_FORMAT, "\"sets\" must be an array");
    size_t n = json_array_size(sets);
    if (n) {
        m->sets = calloc(n, sizeof *m->sets);
        if (!m->sets)
            return ns_fail(err, NS_ERR_NOMEM, "out of memory");
    }
    for (size_t i = 0; i < n; i++) {
        m->n_sets = i + 1;
        NS_TRY(parse_set(json_array_get(sets, i), &m->sets[i], i, err));
        for (size_t j = 0; j < i; j++) {
            if (strcmp(m->sets[j].name, m->sets[i].name) == 0)
                return ns_fail(err, NS_ERR_FORMAT, "set \"%s\" defined twice", m->sets[i].name);
        }
    }
    for (size_t i = 0; i < n; i++) {
        const ns_asset_set *s = &m->sets[i];
        if (!s->fallback)
            continue;
        const ns_asset_set *fb = ns_manifest_find(m, s->fallback);
        if (!fb)
            return ns_fail(err, NS_ERR_FORMAT, "set \"%s\": fallback \"%s\" is not a set", s->name,
                           s->fallback);
        if (strcmp(fb->kind, s->kind) != 0)
            return ns_fail(err, NS_ERR_FORMAT, "set \"%s\": fallback \"%s\" is of another kind",
                           s->name, s->fallback);
        if (fb->fallback)
            return ns_fail(err, NS_ERR_FORMAT,
                           "set \"%s\": fallback \"%s\" has a fallback itself (one level only)",
                           s->name, s->fallback);
    }
    return NS_OK;
}

int ns_manifest_load(const char *path, ns_manifest *m, ns_err *err)
{
    memset(m, 0, sizeof *m);
    if (!ns_file_exists(path))
        return ns_fail(err, NS_ERR_IO, "%s: no such manifest file", path);
    json_error_t jerr;
    json_t *root = json_load_file(path, JSON_REJECT_DUPLICATES, &jerr);
    if (!root)
        return ns_fail(err, NS_ERR_FORMAT, "%s:%d:%d: %s", path, jerr.line, jerr.column, jerr.text);
    int rc = parse_manifest(root, m, err);
    json_decref(root);
    if (rc == NS_OK && !(m->path = strdup(path)))
        rc = ns_fail(err, NS_ERR_NOMEM, "out of memory");
    if (rc != NS_OK) {
        ns_err_prefix(err, "%s", path);
        ns_manifest_free(m);
    }
    return rc;
}

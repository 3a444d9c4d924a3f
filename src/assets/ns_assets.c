/* ns_assets: make manifest asset sets present and verified in the assets directory (from the
 * assets directory itself, a mirror directory, or a download) and resolve names or paths. */
#include "assets/ns_assets.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "assets/ns_asset_shards.h"
#include "assets/ns_asset_stamp.h"
#include "assets/ns_assets_place.h"
#include "assets/ns_assets_util.h"
#include "assets/ns_download.h"
#include "common/ns_file.h"
#include "common/ns_sha256.h"

#ifndef NS_ABS_TOP_SRCDIR
#define NS_ABS_TOP_SRCDIR ""
#endif

/* ------------------------------------------------------------------ context */

int ns_assets_ctx_init(ns_assets_ctx *ctx, const char *assets_dir, const char *mirror_dir,
                       ns_err *err)
{
    memset(ctx, 0, sizeof *ctx);
    ctx->connect_timeout_s = 10;
    const char *env = getenv("NORMSWEEP_ASSETS");
    if (assets_dir) {
        NS_TRY(ns_assets_absolute(assets_dir, ctx->assets_dir, sizeof ctx->assets_dir, err));
    } else if (env && *env) {
        NS_TRY(ns_assets_absolute(env, ctx->assets_dir, sizeof ctx->assets_dir, err));
    } else {
        const char *xdg = getenv("XDG_CACHE_HOME"), *home = getenv("HOME");
        char base[NS_ASSET_PATH_MAX];
        if (xdg && xdg[0] == '/')
            snprintf(base, sizeof base, "%s", xdg);
        else if (home && *home)
            snprintf(base, sizeof base, "%s/.cache", home);
        else
            return ns_fail(err, NS_ERR_INVALID,
                           "no assets directory: set NORMSWEEP_ASSETS (HOME is not set)");
        NS_TRY(ns_assets_join(ctx->assets_dir, sizeof ctx->assets_dir, base, "normsweep/assets", err));
    }
    env = getenv("NORMSWEEP_MIRROR");
    if (mirror_dir) {
        if (*mirror_dir)
            NS_TRY(ns_assets_absolute(mirror_dir, ctx->mirror_dir, sizeof ctx->mirror_dir, err));
    } else if (env) {
        if (*env)
            NS_TRY(ns_assets_absolute(env, ctx->mirror_dir, sizeof ctx->mirror_dir, err));
    } else if (NS_ABS_TOP_SRCDIR[0]) {
        char guess[NS_ASSET_PATH_MAX], real[PATH_MAX];
        NS_TRY(ns_assets_join(guess, sizeof guess, NS_ABS_TOP_SRCDIR, "../shared/data", err));
        if (ns_file_is_dir(guess) && realpath(guess, real))
            snprintf(ctx->mirror_dir, sizeof ctx->mirror_dir, "%s", real);
    }
    env = getenv("NORMSWEEP_OFFLINE");
    ctx->offline = env && *env && strcmp(env, "0") != 0;
    return NS_OK;
}

/* ------------------------------------------------------------------ sets */

static int rank_source(const char *s)
{
    return strcmp(s, "download") == 0 ? 2 : strcmp(s, "mirror") == 0 ? 1 : 0;
}

/* A sharded model set (main file model.safetensors.index.json): its identity is that of the
 * weights the model maps, ns_model_sha256's definition (common/ns_sha256.h, ns_sha256_listing),
 * over the set's files named *.safetensors -- which must be the shards the index names, as the
 * manifest's format says (docs/ASSETS.md): a set with another file of that name gives an identity
 * that the map's does not match, and the run stops before any work. Computed from the files'
 * checksums just verified, not from another read. */
static int sharded_identity(const ns_asset_set *set, char (*sha)[65], char out[65], ns_err *err)
{
    const char **names = calloc(set->n_files ? set->n_files : 1, sizeof *names);
    const char **shas = calloc(set->n_files ? set->n_files : 1, sizeof *shas);
    int rc = names && shas ? NS_OK : ns_fail(err, NS_ERR_NOMEM, "out of memory");
    size_t k = 0;
    for (size_t i = 0; rc == NS_OK && i < set->n_files; i++)
        if (ns_str_ends_with(set->files[i].name, ".safetensors")) {
            names[k] = set->files[i].name;
            shas[k++] = sha[i];
        }
    if (rc == NS_OK && !k)
        rc = ns_fail(err, NS_ERR_FORMAT, "manifest set \"%s\": its main file is %s but it lists "
                     "no *.safetensors shard", set->name, set->main_file);
    if (rc == NS_OK)
        rc = ns_sha256_listing(k, names, shas, out, err);
    free(names);
    free(shas);
    return rc;
}

/* fetch_set with an explicit identifying file (a model set used as a tokenizer: merges.txt). */
static int fetch_set_main(ns_assets_ctx *ctx, const ns_asset_set *set, const char *main_name,
                          int allow_fetch, ns_asset_ref *ref, ns_err *err)
{
    char setdir[NS_ASSET_PATH_MAX];
    NS_TRY(ns_assets_set_dir(ctx, set, setdir, sizeof setdir, err));
    ns_stamp stp;
    NS_TRY(ns_stamp_load(setdir, &stp, err));
    const char *overall = "assets-dir";
    char main_sha[65] = "";
    char (*shas)[65] = calloc(set->n_files ? set->n_files : 1, sizeof *shas);
    if (!shas) {
        ns_stamp_free(&stp);
        return ns_fail(err, NS_ERR_NOMEM, "out of memory");
    }
    int rc = NS_OK;
    for (size_t i = 0; i < set->n_files && rc == NS_OK; i++) {
        const char *src = NULL;
        char *sha = shas[i];
        rc = ns_assets_ensure_file(ctx, set, &set->files[i], setdir, &stp, allow_fetch, &src, sha, err);
        if (rc != NS_OK)
            break;
        if (rank_source(src) > rank_source(overall))
            overall = src;
        if (strcmp(set->files[i].name, main_name) == 0)
            snprintf(main_sha, sizeof main_sha, "%s", sha);
    }
    if (stp.dirty && ns_file_is_dir(setdir)) {
        ns_err serr;
        /* a stamp that cannot be written only costs a rehash next time */
        if (ns_stamp_save(setdir, &stp, &serr) != NS_OK)
            ns_assets_log(ctx, "[%s] note: %s\n", set->name, serr.msg);
    }
    ns_stamp_free(&stp);
    if (rc == NS_OK && ref && strcmp(set->kind, "model") == 0 &&
        strcmp(main_name, "model.safetensors.index.json") == 0)
        rc = sharded_identity(set, shas, main_sha, err);
    free(shas);
    if (rc != NS_OK)
        rmdir(setdir); /* only succeeds when the failed fetch left it empty */
    if (rc != NS_OK || !ref)
        return rc;
    snprintf(ref->name, sizeof ref->name, "%s", set->name);
    NS_TRY(ns_assets_join(ref->main_file, sizeof ref->main_file, setdir, main_name, err));
    if (strcmp(set->kind, "corpus") == 0 && set->n_files == 1)
        snprintf(ref->path, sizeof ref->path, "%s", ref->main_file);
    else
        snprintf(ref->path, sizeof ref->path, "%s", setdir);
    snprintf(ref->sha256, sizeof ref->sha256, "%s", main_sha);
    snprintf(ref->source, sizeof ref->source, "%s", overall);
    return NS_OK;
}

int ns_assets_fetch_set(ns_assets_ctx *ctx, const ns_asset_set *set, int allow_fetch,
                        ns_asset_ref *ref, ns_err *err)
{
    return fetch_set_main(ctx, set, set->main_file, allow_fetch, ref, err);
}

int ns_assets_verify_set(ns_assets_ctx *ctx, const ns_asset_set *set, ns_err *err)
{
    char setdir[NS_ASSET_PATH_MAX];
    NS_TRY(ns_assets_set_dir(ctx, set, setdir, sizeof setdir, err));
    ns_stamp stp;
    NS_TRY(ns_stamp_load(setdir, &stp, err));
    int rc = NS_OK;
    size_t bad = 0;
    ns_err first;
    ns_err_clear(&first);
    for (size_t i = 0; i < set->n_files; i++) {
        const ns_asset_file *f = &set->files[i];
        char path[NS_ASSET_PATH_MAX], sha[65];
        ns_err e;
        ns_err_clear(&e);
        struct stat sb;
        int frc = ns_assets_join(path, sizeof path, setdir, f->name, &e);
        if (frc == NS_OK && (stat(path, &sb) != 0 || !S_ISREG(sb.st_mode)))
            frc = ns_fail(&e, NS_ERR_IO, "%s: missing (run `normsweep assets fetch %s`)", path,
                          set->name);
        if (frc == NS_OK)
            frc = ns_sha256_file(path, sha, &e);
        if (frc == NS_OK) {
            const char *want = f->sha256;
            ns_stamp_entry *se = ns_stamp_find(&stp, f->name);
            if (!want[0] && se)
                want = se->sha; /* trusted on first use */
            if (want[0] && strcmp(sha, want) != 0) {
                frc = ns_fail(&e, NS_ERR_CHECKSUM, "%s: sha256 %s, %s expects %s", path, sha,
                              f->sha256[0] ? "the manifest" : "the first download recorded", want);
                ns_stamp_drop(&stp, f->name);
            } else {
                ns_err pe;
                if (ns_stamp_put(&stp, f->name, sha, &sb, &pe) != NS_OK)
                    frc = ns_fail(&e, pe.code, "%s", pe.msg);
                ns_assets_log(ctx, "[%s] %s: ok sha256 %s%s\n", set->name, f->name, sha,
                      f->sha256[0] ? "" : " (not pinned by the manifest)");
            }
        }
        if (frc != NS_OK) {
            ns_assets_log(ctx, "[%s] %s: FAILED: %s\n", set->name, f->name, e.msg);
            if (!bad++)
                first = e;
            if (frc == NS_ERR_CHECKSUM || rc == NS_OK)
                rc = frc;
        }
    }
    if (stp.dirty && ns_file_is_dir(setdir)) {
        ns_err serr;
        if (ns_stamp_save(setdir, &stp, &serr) != NS_OK)
            ns_assets_log(ctx, "[%s] note: %s\n", set->name, serr.msg);
    }
    ns_stamp_free(&stp);
    if (rc != NS_OK) {
        if (bad > 1)
            return ns_fail(err, rc, "%s: %zu of %zu files failed verification (first: %s)",
                           set->name, bad, set->n_files, first.msg);
        return ns_fail(err, rc, "%s", first.msg);
    }
    return NS_OK;
}

int ns_assets_set_available(ns_assets_ctx *ctx, const ns_asset_set *set, char *why, size_t len)
{
    why[0] = '\0';
    const ns_asset_file *net_file = NULL;
    char net_why[NS_ASSET_PATH_MAX + 128] = "";
    for (size_t i = 0; i < set->n_files; i++) {
        const ns_asset_file *f = &set->files[i];
        ns_asset_file_state st;
        ns_err e;
        if (ns_assets_file_state(ctx, set, f, &st, &e) != NS_OK) {
            snprintf(why, len, "%s", e.msg);
            return 0;
        }
        if (st.present)
            continue;
        char mpath[NS_ASSET_PATH_MAX], mwhy[NS_ASSET_PATH_MAX + 128];
        ns_assets_mirror_lookup(ctx, f, mpath, sizeof mpath, mwhy, sizeof mwhy);
        if (mpath[0] || f->archive_file)
            continue; /* an extracted file is available when its archive is (checked itself) */
        if (f->unconfirmed && !ctx->accept_unconfirmed && f->n_urls) {
            snprintf(why, len, "%s: %s, and its SHA-256 is unconfirmed in the manifest: not "
                     "downloaded without `normsweep assets fetch --accept-unconfirmed %s`",
                     f->name, mwhy, set->name);
            return 0;
        }
        if (f->n_urls == 0 || ctx->offline) {
            snprintf(why, len, "%s: %s, and %s", f->name, mwhy,
                     f->n_urls ? "downloads are disabled (offline)" : "it has no download URL");
            return 0;
        }
        if (!net_file) {
            net_file = f;
            snprintf(net_why, sizeof net_why, "%s", mwhy);
        }
    }
    if (!net_file)
        return 1;
    const char *url = net_file->urls[0];
    char host[256];
    ns_download_host(url, host, sizeof host);
    if (ns_assets_host_is_dead(ctx, host)) {
        snprintf(why, len, "%s: %s, and %s was unreachable earlier", net_file->name, net_why, host);
        return 0;
    }
    int unreachable = 0;
    ns_err e;
    ns_err_clear(&e);
    if (ns_download_probe(url, ctx->connect_timeout_s, &unreachable, &e) != NS_OK) {
        if (unreachable)
            ns_assets_mark_dead(ctx, host);
        snprintf(why, len, "%s: %s, and its download failed: %s", net_file->name, net_why, e.msg);
        return 0;
    }
    return 1;
}

/* ------------------------------------------------------------------ resolve */

static int valid_kind(const char *kind)
{
    return strcmp(kind, "model") == 0 || strcmp(kind, "tokenizer") == 0 ||
           strcmp(kind, "corpus") == 0 || strcmp(kind, "data") == 0;
}

/* An existing path: used as is; the checksum of its identifying file is computed (unless hash is
 * 0: left "" for the caller). */
static int resolve_path(const char *path, const char *kind, int hash, ns_asset_ref *out,
                        ns_err *err)
{
    char real[PATH_MAX];
    if (!realpath(path, real))
        return ns_fail(err, NS_ERR_IO, "%s: %s", path, strerror(errno));
    struct stat sb;
    if (stat(real, &sb) != 0)
        return ns_fail(err, NS_ERR_IO, "%s: %s", path, strerror(errno));
    snprintf(out->name, sizeof out->name, "path");
    snprintf(out->source, sizeof out->source, "path");
    snprintf(out->path, sizeof out->path, "%s", real);
    if (strcmp(kind, "corpus") == 0 || (strcmp(kind, "data") == 0 && S_ISREG(sb.st_mode)) ||
        (strcmp(kind, "tokenizer") == 0 && S_ISREG(sb.st_mode) && ns_str_ends_with(real, ".json"))) {
        /* a corpus, a data file, or a tokenizer.json */
        if (!S_ISREG(sb.st_mode))
            return ns_fail(err, NS_ERR_INVALID, "%s: a %s must be a file, this is not a regular file",
                           path, kind);
        snprintf(out->main_file, sizeof out->main_file, "%s", real);
    } else if (strcmp(kind, "data") == 0) {
        if (!S_ISDIR(sb.st_mode))
            return ns_fail(err, NS_ERR_INVALID, "%s: not a file or directory", path);
        return NS_OK; /* a data directory has no single identifying file */
    } else {
        if (!S_ISDIR(sb.st_mode))
            return ns_fail(err, NS_ERR_INVALID, "%s: a %s must be a directory%s, this is not one",
                           path, kind, strcmp(kind, "tokenizer") == 0 ? " or a tokenizer.json file" : "");
        static const char *const model_files[] = {"model.safetensors",
                                                  "model.safetensors.index.json", NULL};
        static const char *const tok_files[] = {"tokenizer.json", "vocab.bpe", "merges.txt", NULL};
        const char *const *cand = strcmp(kind, "model") == 0 ? model_files : tok_files;
        char f[NS_ASSET_PATH_MAX];
        int found = 0;
        for (size_t i = 0; cand[i] && !found; i++) {
            NS_TRY(ns_assets_join(f, sizeof f, real, cand[i], err));
            found = ns_file_exists(f);
        }
        if (!found)
            return ns_fail(err, NS_ERR_INVALID, "%s: %s directory without %s", path, kind,
                           strcmp(kind, "model") == 0 ? "model.safetensors (or its index)"
                                                      : "tokenizer.json, vocab.bpe or merges.txt");
        snprintf(out->main_file, sizeof out->main_file, "%s", f);
        /* a sharded model's identity is its weights', not its index's (docs/MODELS.md) */
        if (hash && strcmp(kind, "model") == 0 && ns_str_ends_with(f, ".index.json"))
            return ns_asset_shards_identity(real, f, out->sha256, err);
    }
    return hash ? ns_sha256_file(out->main_file, out->sha256, err) : NS_OK;
}

static int kind_fits(const ns_asset_set *set, const char *kind)
{
    return strcmp(set->kind, kind) == 0 ||
           (strcmp(kind, "tokenizer") == 0 && strcmp(set->kind, "model") == 0);
}

/* Identifying file of set when used as kind (a model set used as tokenizer: its tokenizer.json,
 * else its merges.txt). */
static const char *main_for_kind(const ns_asset_set *set, const char *kind)
{
    static const char *const tok_files[] = {"tokenizer.json", "merges.txt"};
    if (strcmp(kind, "tokenizer") == 0 && strcmp(set->kind, "model") == 0)
        for (size_t k = 0; k < 2; k++)
            for (size_t i = 0; i < set->n_files; i++)
                if (strcmp(set->files[i].name, tok_files[k]) == 0)
                    return tok_files[k];
    return set->main_file;
}

/* Resolve name_or_path in ctx's assets directory through manifest m (NULL: paths only); a path's
 * checksum is left "" unless hash_path. */
static int resolve_in(ns_assets_ctx *ctx, const ns_manifest *m, const char *name_or_path,
                      const char *kind, int allow_fetch, int hash_path, ns_asset_ref *out,
                      ns_err *err)
{
    memset(out, 0, sizeof *out);
    if (!name_or_path || !*name_or_path)
        return ns_fail(err, NS_ERR_INVALID, "empty asset name");
    if (!kind || !valid_kind(kind))
        return ns_fail(err, NS_ERR_INVALID, "asset kind \"%s\" is not model, tokenizer or corpus",
                       kind ? kind : "(null)");
    snprintf(out->requested, sizeof out->requested, "%s", name_or_path);
    if (ns_file_exists(name_or_path))
        return resolve_path(name_or_path, kind, hash_path, out, err);
    if (strchr(name_or_path, '/'))
        return ns_fail(err, NS_ERR_IO, "%s: no such %s file or directory", name_or_path, kind);
    if (!m)
        return ns_fail(err, NS_ERR_INVALID, "%s: not a path, and no manifest to look it up in",
                       name_or_path);
    const ns_asset_set *set = ns_manifest_find(m, name_or_path);
    if (!set) {
        char known[512] = "";
        size_t k = 0;
        for (size_t i = 0; i < m->n_sets; i++)
            if (kind_fits(&m->sets[i], kind))
                k += (size_t)snprintf(known + k, k < sizeof known ? sizeof known - k : 0, "%s%s",
                                      k ? ", " : "", m->sets[i].name);
        return ns_fail(err, NS_ERR_INVALID,
                       "%s \"%s\" is neither an existing path nor an asset of %s (%s assets: %s)",
                       kind, name_or_path, m->path, kind, k ? known : "none");
    }
    if (!kind_fits(set, kind))
        return ns_fail(err, NS_ERR_INVALID, "asset \"%s\" is a %s, not a %s", set->name, set->kind,
                       kind);
    int rc = fetch_set_main(ctx, set, main_for_kind(set, kind), allow_fetch, out, err);
    if (rc == NS_OK || !set->fallback || rc == NS_ERR_CHECKSUM || rc == NS_ERR_NOMEM ||
        rc == NS_ERR_INVALID) /* (INVALID: it can be had, by `normsweep assets fetch`) */
        return rc;
    const ns_asset_set *fb = ns_manifest_find(m, set->fallback);
    if (!fb)
        return rc; /* the manifest loader guarantees it exists */
    ns_assets_log(ctx, "normsweep: WARNING: ******************************************************");
    ns_assets_log(ctx, "normsweep: WARNING: %s \"%s\" cannot be had: %s", kind, set->name, err->msg);
    ns_assets_log(ctx, "normsweep: WARNING: falling back to \"%s\": results are NOT from \"%s\".",
          fb->name, set->name);
    ns_assets_log(ctx, "normsweep: WARNING: (provenance records requested=%s, used=%s)", set->name,
          fb->name);
    ns_assets_log(ctx, "normsweep: WARNING: ******************************************************");
    char first[NS_ERR_MSG_MAX];
    snprintf(first, sizeof first, "%s", err->msg);
    ns_err_clear(err);
    rc = fetch_set_main(ctx, fb, main_for_kind(fb, kind), allow_fetch, out, err);
    if (rc != NS_OK) {
        char second[NS_ERR_MSG_MAX];
        snprintf(second, sizeof second, "%s", err->msg);
        return ns_fail(err, rc, "neither \"%s\" (%s) nor its fallback \"%s\" (%s) is available",
                       set->name, first, fb->name, second);
    }
    out->is_fallback = 1;
    return NS_OK;
}

/* The context and manifest a resolve by name uses (fetch: where and whether to fetch). */
static int open_assets(const ns_assets_fetch *fetch, ns_assets_ctx *ctx, ns_manifest *m,
                       ns_err *err)
{
    NS_TRY(ns_assets_ctx_init(ctx, fetch ? fetch->assets_dir : NULL,
                              fetch ? fetch->mirror_dir : NULL, err));
    if (fetch)
        ctx->log = fetch->log, ctx->log_user = fetch->log_user;
    ctx->no_download = !fetch || !fetch->download;
    char mpath[NS_ASSET_PATH_MAX];
    if (fetch && fetch->manifest)
        snprintf(mpath, sizeof mpath, "%s", fetch->manifest);
    else
        NS_TRY(ns_manifest_locate(mpath, sizeof mpath, err));
    return ns_manifest_load(mpath, m, err);
}

static int resolve(const char *name_or_path, const char *kind, const ns_assets_fetch *fetch,
                   int hash_path, ns_asset_ref *out, ns_err *err)
{
    int allow_fetch = fetch && fetch->allow;
    if (name_or_path && *name_or_path && ns_file_exists(name_or_path)) {
        ns_assets_ctx pctx;
        memset(&pctx, 0, sizeof pctx); /* a path needs no assets directory */
        return resolve_in(&pctx, NULL, name_or_path, kind, allow_fetch, hash_path, out, err);
    }
    ns_assets_ctx ctx;
    ns_manifest m;
    NS_TRY(open_assets(fetch, &ctx, &m, err));
    int rc = resolve_in(&ctx, &m, name_or_path, kind, allow_fetch, hash_path, out, err);
    ns_manifest_free(&m);
    return rc;
}

int ns_assets_resolve_fallback(const char *requested, const char *used, const char *kind,
                               const ns_assets_fetch *fetch, ns_asset_ref *out, ns_err *err)
{
    memset(out, 0, sizeof *out);
    ns_assets_ctx ctx;
    ns_manifest m;
    NS_TRY(open_assets(fetch, &ctx, &m, err));
    const ns_asset_set *set = ns_manifest_find(&m, requested), *fb = NULL;
    /* its fallback, or that one's (a chain the manifest may not make circular: at most 8) */
    for (size_t i = 0; set && set->fallback && i < 8 && !fb; i++) {
        set = ns_manifest_find(&m, set->fallback);
        if (set && strcmp(set->name, used) == 0)
            fb = set;
    }
    int rc;
    if (!fb) {
        const ns_asset_set *r = ns_manifest_find(&m, requested);
        rc = ns_fail(err, NS_ERR_INVALID, "%s \"%s\" is not the fallback of \"%s\" in %s (%s)",
                     kind, used, requested, m.path,
                     !r ? "which names no such set"
                        : r->fallback ? "whose fallback is another" : "which names no fallback");
    } else if (!kind_fits(fb, kind)) {
        rc = ns_fail(err, NS_ERR_INVALID, "asset \"%s\" is a %s, not a %s", fb->name, fb->kind,
                     kind);
    } else {
        rc = fetch_set_main(&ctx, fb, main_for_kind(fb, kind), fetch && fetch->allow, out, err);
        if (rc == NS_OK) {
            snprintf(out->requested, sizeof out->requested, "%s", requested);
            out->is_fallback = 1;
        }
    }
    ns_manifest_free(&m);
    return rc;
}

int ns_assets_resolve(const char *name_or_path, const char *kind, const ns_assets_fetch *fetch,
                      ns_asset_ref *out, ns_err *err)
{
    return resolve(name_or_path, kind, fetch, 1, out, err);
}

int ns_assets_resolve_unhashed(const char *name_or_path, const char *kind,
                               const ns_assets_fetch *fetch, ns_asset_ref *out, ns_err *err)
{
    return resolve(name_or_path, kind, fetch, 0, out, err);
}

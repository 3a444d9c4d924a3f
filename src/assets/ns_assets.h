/* ns_assets: find the tokenizer, corpus and model files through a manifest of SHA-256 sums:
 * already present in the assets directory, else copied/linked from a mirror directory, else
 * downloaded (machines with internet). Every file is verified before it is used. */
#ifndef NS_ASSETS_H
#define NS_ASSETS_H

#include <stddef.h>
#include <stdio.h>

#include "common/ns_asset_ref.h"
#include "common/ns_error.h"

/* Where fetching tells what it does (copies from the mirror, downloads, the fallback warning):
 * one line at a time (no newline); the CLI prints them. */
typedef void (*ns_assets_log_fn)(void *user, const char *line);

/* Whether and how ns_assets_resolve may fetch missing files. */
typedef struct ns_assets_fetch {
    int allow;              /* 0: only files already in the assets directory */
    ns_assets_log_fn log;   /* NULL: silent */
    void *log_user;
} ns_assets_fetch;

/* Resolve name_or_path for kind "model", "tokenizer" or "corpus".
 * A path that exists is used as is (its checksum computed). Otherwise the name is looked up in the
 * manifest (NORMSWEEP_MANIFEST, else the installed/source manifest), made present in the assets
 * directory (NORMSWEEP_ASSETS, else ~/.cache/normsweep/assets) from NORMSWEEP_MIRROR or by
 * download when fetch->allow (fetch NULL: no fetching), verified, and described in *out. */
int ns_assets_resolve(const char *name_or_path, const char *kind, const ns_assets_fetch *fetch,
                      ns_asset_ref *out, ns_err *err);

/* The same, except that an existing path's identifying file is not hashed: out->sha256 is left ""
 * for a caller that hashes the bytes it actually uses (the sweep hashes the model's mapped file,
 * which a checksum of an earlier read of the path could differ from). Manifest assets are
 * verified exactly as by ns_assets_resolve. */
int ns_assets_resolve_unhashed(const char *name_or_path, const char *kind,
                               const ns_assets_fetch *fetch, ns_asset_ref *out, ns_err *err);

/* ---- The manifest (assets/manifest.json, format "normsweep-assets-1") ---- */

/* One file of an asset set. */
typedef struct ns_asset_file {
    char *name;          /* file name inside the set's local directory */
    char sha256[65];     /* lowercase hex; "" when the manifest does not know it (computed and
                            printed on first fetch, then trusted through the stamp) */
    long long size;      /* bytes; -1 when unknown */
    char *mirror_path;   /* relative to the mirror directory; NULL when none */
    char **urls;         /* download locations, tried in order */
    size_t n_urls;
    char *archive_file;  /* "from_archive": made by extracting archive_member from this earlier
                            file of the set (a package, e.g. an npm tarball); NULL when none */
    char *archive_member;
} ns_asset_file;

/* A named set of files that live together in one directory of the assets directory. */
typedef struct ns_asset_set {
    char *name;          /* "tokenizer", "war_and_peace", "gpt2", ... */
    char *kind;          /* "tokenizer", "corpus", "model" or "data" */
    char *dir;           /* subdirectory of the assets directory */
    char *main_file;     /* the file whose checksum identifies the set */
    char *fallback;      /* set used when this one cannot be had (NULL: none) */
    char *description;   /* one line, may be NULL */
    int if_available;    /* "fetch": "if-available": a default fetch skips it when unavailable */
    ns_asset_file *files;
    size_t n_files;
} ns_asset_set;

typedef struct ns_manifest {
    char *path;          /* the file it was read from */
    ns_asset_set *sets;
    size_t n_sets;
} ns_manifest;

/* The manifest to use: NORMSWEEP_MANIFEST, else the source tree's assets/manifest.json (compiled
 * in), else the installed $(pkgdatadir)/manifest.json. Fails naming every place looked at. */
int ns_manifest_locate(char *out, size_t out_len, ns_err *err);
/* Parse and validate a manifest; on failure *m is left empty and err names the file (and line). */
int ns_manifest_load(const char *path, ns_manifest *m, ns_err *err);
/* Free everything ns_manifest_load allocated; safe on a zeroed manifest. */
void ns_manifest_free(ns_manifest *m);
/* The set called name, or NULL. */
const ns_asset_set *ns_manifest_find(const ns_manifest *m, const char *name);

/* ---- Fetching and verifying sets (used by `normsweep assets` and by ns_assets_resolve) ---- */

#define NS_ASSETS_MAX_DEAD_HOSTS 8

/* Where assets live and how they are obtained. Initialise with ns_assets_ctx_init; the fields may
 * then be changed (e.g. copy, offline, log). Holds a small per-context cache of unreachable hosts
 * so one fetch waits for a dead host at most once. */
typedef struct ns_assets_ctx {
    char assets_dir[NS_ASSET_PATH_MAX]; /* absolute */
    char mirror_dir[NS_ASSET_PATH_MAX]; /* "" when no mirror is configured */
    int offline;             /* never download */
    int copy;                /* copy mirror files instead of symlinking them */
    long connect_timeout_s;  /* per download attempt (default 10) */
    ns_assets_log_fn log;    /* progress lines and warnings; NULL: silent */
    void *log_user;
    int verbose;             /* also log files that were already present (the CLI sets it) */
    char dead_hosts[NS_ASSETS_MAX_DEAD_HOSTS][256];
    size_t n_dead_hosts;
} ns_assets_ctx;

/* Fill ctx. assets_dir NULL: NORMSWEEP_ASSETS, else $XDG_CACHE_HOME or ~/.cache + /normsweep/assets.
 * mirror_dir NULL: NORMSWEEP_MIRROR (empty = none), else ../shared/data beside the source tree
 * when it exists. offline from NORMSWEEP_OFFLINE=1. log NULL (silent). Relative paths are made
 * absolute; nothing is created. */
int ns_assets_ctx_init(ns_assets_ctx *ctx, const char *assets_dir, const char *mirror_dir,
                       ns_err *err);

/* Local directory of a set (assets_dir/dir) into out. */
int ns_assets_set_dir(const ns_assets_ctx *ctx, const ns_asset_set *set, char *out, size_t len,
                      ns_err *err);

/* Make every file of set present in the assets directory and verified (a recorded stamp avoids
 * rehashing unchanged files). Missing files come from the mirror (symlinked, or copied when
 * ctx->copy), else from their URLs unless ctx->offline. A local file with the wrong checksum is
 * replaced. A fetched file whose checksum differs is deleted and NS_ERR_CHECKSUM names the file
 * and both sums. With allow_fetch 0 nothing is placed: a missing file is an NS_ERR_IO error.
 * ref (may be NULL) receives path/main_file/sha256/source of the set. */
int ns_assets_fetch_set(ns_assets_ctx *ctx, const ns_asset_set *set, int allow_fetch,
                        ns_asset_ref *ref, ns_err *err);

/* Rehash every file of set in the assets directory (stamps are not trusted, only refreshed).
 * NS_ERR_IO when a file is missing, NS_ERR_CHECKSUM on a mismatch (the file is left in place). */
int ns_assets_verify_set(ns_assets_ctx *ctx, const ns_asset_set *set, ns_err *err);

/* 1 when every file of set is present locally, in the mirror, or downloadable (a host probe is
 * made only when needed and not offline); else 0 with the reason in why. */
int ns_assets_set_available(ns_assets_ctx *ctx, const ns_asset_set *set, char *why, size_t len);

/* State of one file in the assets directory, without hashing. */
typedef struct ns_asset_file_state {
    char path[NS_ASSET_PATH_MAX];   /* where it is or would be */
    int present;                    /* exists (a symlink counts only if its target exists) */
    int verified;                   /* the stamp records this sha256 for its current size/mtime */
    int is_link;                    /* a symlink (into the mirror) rather than a copy */
    char link_target[NS_ASSET_PATH_MAX];
    char stamp_sha256[65];          /* sha256 recorded in the stamp ("" if none) */
} ns_asset_file_state;

int ns_assets_file_state(const ns_assets_ctx *ctx, const ns_asset_set *set,
                         const ns_asset_file *file, ns_asset_file_state *st, ns_err *err);

#endif

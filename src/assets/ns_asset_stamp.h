/* ns_asset_stamp: what the assets directory holds: a set's directory, a file's state there (without
 * hashing), and the per-directory record of files already verified (".normsweep-verified":
 * "sha256 size mtime_s mtime_ns name" lines), so an unchanged file is not rehashed. A missing or
 * damaged record only means rehashing. */
#ifndef NS_ASSET_STAMP_H
#define NS_ASSET_STAMP_H

#include <stddef.h>
#include <sys/stat.h>

#include "assets/ns_asset_ctx.h"
#include "assets/ns_manifest.h"
#include "common/ns_error.h"

/* Per-directory record of files already verified: "sha256 size mtime_s mtime_ns name" lines. */
#define NS_STAMP_NAME ".normsweep-verified"
#define NS_STAMP_HEADER "# normsweep assets: files verified against the manifest (sha256 size mtime_s mtime_ns name)\n"

typedef struct ns_stamp_entry {
    char name[256];
    char sha[65];
    long long size;
    long long mt_s;
    long mt_ns;
} ns_stamp_entry;

typedef struct ns_stamp {
    ns_stamp_entry *e;
    size_t n, cap;
    int dirty;
} ns_stamp;

void ns_stamp_free(ns_stamp *st);
/* The entry of name, or NULL. */
ns_stamp_entry *ns_stamp_find(ns_stamp *st, const char *name);
void ns_stamp_drop(ns_stamp *st, const char *name);
/* Record name -> sha for the size and mtime in sb (a name too long to record is left out). */
int ns_stamp_put(ns_stamp *st, const char *name, const char *sha, const struct stat *sb,
                 ns_err *err);
/* 1 when e records sb's size and mtime. */
int ns_stamp_matches(const ns_stamp_entry *e, const struct stat *sb);
/* Load setdir's stamp; a missing or unreadable stamp is an empty one (files get rehashed). */
int ns_stamp_load(const char *setdir, ns_stamp *st, ns_err *err);
/* Write it back atomically when it changed. */
int ns_stamp_save(const char *setdir, ns_stamp *st, ns_err *err);

/* Local directory of a set (assets_dir/dir) into out. */
int ns_assets_set_dir(const ns_assets_ctx *ctx, const ns_asset_set *set, char *out, size_t len,
                      ns_err *err);

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

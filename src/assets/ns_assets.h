/* ns_assets: find the tokenizer, corpus and model files through a manifest of SHA-256 sums:
 * already present in the assets directory, else copied/linked from a mirror directory, else
 * downloaded (machines with internet). Every file is verified before it is used. */
#ifndef NS_ASSETS_H
#define NS_ASSETS_H

#include <stddef.h>
#include <stdio.h>

#include "assets/ns_asset_ctx.h"
#include "assets/ns_asset_stamp.h"
#include "assets/ns_manifest.h"
#include "common/ns_asset_ref.h"
#include "common/ns_error.h"

/* Whether and how ns_assets_resolve may fetch missing files. */
typedef struct ns_assets_fetch {
    int allow;              /* 0: only files already in the assets directory */
    ns_line_fn log;         /* NULL: silent */
    void *log_user;
    int download;           /* 0 (run, validate, verify, ...): links and copies from the mirror
                               only; a file only a download could supply is an NS_ERR_INVALID
                               naming `normsweep assets fetch SET` when its host answers (no
                               fallback), an NS_ERR_IO allowing the fallback when it does not.
                               1: download too (docs/ASSETS.md, "Downloads") */
    const char *assets_dir; /* NULL: NORMSWEEP_ASSETS, else the cache (ns_assets_ctx_init) */
    const char *mirror_dir; /* NULL: NORMSWEEP_MIRROR, else ../shared/data; "" none */
    const char *manifest;   /* NULL: ns_manifest_locate's */
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

/* Resolve `used`, a set the manifest names as `requested`'s fallback (or its fallback's), as
 * requested's fallback (out->requested = requested, out->is_fallback = 1) without trying
 * requested itself: a run pinned to the model an earlier run fell back to (`run --model-pin`)
 * records what that run recorded, even where requested could be had. NS_ERR_INVALID when used
 * is not requested's fallback; otherwise as ns_assets_resolve. */
int ns_assets_resolve_fallback(const char *requested, const char *used, const char *kind,
                               const ns_assets_fetch *fetch, ns_asset_ref *out, ns_err *err);

/* ---- Fetching and verifying sets (used by `normsweep assets` and by ns_assets_resolve) ---- */

/* Fill ctx. assets_dir NULL: NORMSWEEP_ASSETS, else $XDG_CACHE_HOME or ~/.cache + /normsweep/assets.
 * mirror_dir NULL: NORMSWEEP_MIRROR (empty = none), else ../shared/data beside the source tree
 * when it exists. offline from NORMSWEEP_OFFLINE=1. log NULL (silent). Relative paths are made
 * absolute; nothing is created. */
int ns_assets_ctx_init(ns_assets_ctx *ctx, const char *assets_dir, const char *mirror_dir,
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

#endif

/* ns_assets: find the tokenizer, corpus and model files through a manifest of SHA-256 sums:
 * already present in the assets directory, else copied/linked from a mirror directory, else
 * downloaded (machines with internet). Every file is verified before it is used. */
#ifndef NS_ASSETS_H
#define NS_ASSETS_H

#include <stddef.h>

#include "common/ns_error.h"

#define NS_ASSET_PATH_MAX 4096

/* Where an asset came from and what it is. */
typedef struct ns_asset_ref {
    char requested[128];   /* what the caller asked for (asset name or path) */
    char name[128];        /* the asset actually used ("gpt2", "gpt2-standin", ..., or "path") */
    char path[NS_ASSET_PATH_MAX]; /* local directory (asset sets) or file (single-file assets) */
    char main_file[NS_ASSET_PATH_MAX]; /* the file whose checksum identifies it (model.safetensors,
                                          vocab.bpe/merges.txt, the corpus text) */
    char sha256[65];       /* SHA-256 of main_file, lowercase hex */
    char source[64];       /* "assets-dir", "mirror", "download" or "path" */
    int is_fallback;       /* 1 if `name` differs from `requested` because the requested one could
                              not be had (e.g. gpt2 offline -> gpt2-standin); a warning was printed */
} ns_asset_ref;

/* Resolve name_or_path for kind "model", "tokenizer" or "corpus".
 * A path that exists is used as is (its checksum computed). Otherwise the name is looked up in the
 * manifest (NORMSWEEP_MANIFEST, else the installed/source manifest), made present in the assets
 * directory (NORMSWEEP_ASSETS, else ~/.cache/normsweep/assets) from NORMSWEEP_MIRROR or by
 * download when allow_fetch, verified, and described in *out. */
int ns_assets_resolve(const char *name_or_path, const char *kind, int allow_fetch,
                      ns_asset_ref *out, ns_err *err);

#endif

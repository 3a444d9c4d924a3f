/* ns_asset_ref: what an asset (model, tokenizer or corpus) resolved to -- its name, local path,
 * identifying file and SHA-256, and where it came from. Filled by assets/ns_assets_resolve, read
 * by whoever records provenance (io, train, archive): a plain type of its own, so that recording
 * an asset needs no part of the assets module. */
#ifndef NS_ASSET_REF_H
#define NS_ASSET_REF_H

#include <stddef.h>

#define NS_ASSET_PATH_MAX 4096

/* Where an asset came from and what it is. */
typedef struct ns_asset_ref {
    char requested[128];   /* what the caller asked for (asset name or path) */
    char name[128];        /* the asset actually used ("gpt2", "gpt2-standin", ..., or "path") */
    char path[NS_ASSET_PATH_MAX]; /* local directory (asset sets) or file (single-file assets) */
    char main_file[NS_ASSET_PATH_MAX]; /* the file whose checksum identifies it (model.safetensors,
                                          vocab.bpe/merges.txt, the corpus text) */
    char sha256[65];       /* SHA-256 of main_file, lowercase hex; for a sharded model (main_file
                              model.safetensors.index.json: a manifest's set or a directory given
                              by path) the weights' identity instead, ns_model_sha256's definition
                              (ns_sha256_listing of its shards), which the mapped model is
                              checked against */
    char source[64];       /* "assets-dir", "mirror", "download" or "path" */
    int is_fallback;       /* 1 if `name` differs from `requested` because the requested one could
                              not be had (e.g. gpt2 offline -> gpt2-standin); a warning was printed */
} ns_asset_ref;

/* How a reader calls the asset: its set's name, or, for one given by its path (name "path"), the
 * path's last component ("gpt2-standin" for /data/gpt2-standin/), never the word "path". Written
 * into buf (size bytes) when derived; returns the text. */
const char *ns_asset_ref_label(const ns_asset_ref *r, char *buf, size_t size);

/* Whether the asset was given by its path (not a set of the manifest). */
int ns_asset_ref_is_path(const ns_asset_ref *r);

#endif

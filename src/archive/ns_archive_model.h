/* ns_archive_model: the model a run used, as the files a rerun of its archive needs and as the
 * archive members that carry them when it is packed (`archive --with-model`, docs/ARCHIVE.md):
 * for a model of the asset manifest, every file of its set with the size and SHA-256 the
 * manifest lists, packed as model/<mirror path> (so that the archive's model/ directory is a
 * mirror `normsweep assets fetch --mirror` reads); for a model given by its directory, its
 * config.json and model.safetensors, packed as model/<directory name>/. archive and verify build
 * the same list from the NetCDF's attributes and the asset manifest, and README.txt states it. */
#ifndef NS_ARCHIVE_MODEL_H
#define NS_ARCHIVE_MODEL_H

#include <stddef.h>

#include "assets/ns_assets.h"
#include "common/ns_error.h"
#include "io/ns_nc_read.h"

#define NS_ARCHIVE_MODEL_DIR "model"
/* A sharded model directory's index (model/ns_checkpoint.h's NS_CKPT_INDEX): --with-model refuses
 * a sharded model given by its directory (its files are not recorded in the NetCDF) */
#define NS_ARCHIVE_MODEL_INDEX "model.safetensors.index.json"

typedef struct ns_model_file {
    char *name;       /* the file's name in the model's directory: config.json */
    char *place;      /* where a rerun needs it, relative to the asset cache (a set: its
                         directory and name, gpt2-standin/config.json) or the path the sweep
                         names (a model given by its directory) */
    char *member;     /* the archive member that carries it: model/gpt2-standin/config.json */
    char sha256[65];  /* "" when not recorded (a path model's config.json) */
    long long size;   /* -1 when not known */
} ns_model_file;

typedef struct ns_model_files {
    char *used;       /* the model used: a set's name, or "path" (given by its directory) */
    char *requested;  /* the model the sweep names (model_requested) */
    char *path;       /* a path model: the directory the run read (model_path); else NULL */
    int fallback;     /* the run used the requested model's fallback */
    char sha256[65];  /* model.safetensors' recorded SHA-256 */
    int packed;       /* the archive carries the files (members under model/) */
    ns_model_file *items;
    size_t n;
} ns_model_files;

/* Whether the file's run was given its model by a directory (model_given_as = "path"; files before
 * it record model_used = "path"), not a set of the manifest: model_used is then only the
 * directory's base name, never a set to look up. */
int ns_archive_model_by_path(const ns_nc_info *info);

/* The files of the model info records (model_used, model_requested, model_path, model_sha256,
 * model_fallback), with sizes and SHA-256 from manifest (NULL: none; then a set is described by
 * its model.safetensors and its recorded SHA-256 alone). NS_ERR_INVALID when info records no
 * model. Free with ns_archive_model_free. */
int ns_archive_model_files(const ns_nc_info *info, const ns_manifest *manifest,
                           ns_model_files *out, ns_err *err);

void ns_archive_model_free(ns_model_files *mf);

/* Where archive reads file i of mf on this machine (caller frees): the set's directory in the
 * asset cache, resolved from the cache or the mirror (never downloaded) and checked against the
 * manifest, or the recorded model path. NS_ERR_INVALID naming what is missing, or a
 * model.safetensors whose SHA-256 is not the recorded one. */
int ns_archive_model_sources(const ns_model_files *mf, char ***sources, ns_err *err);

/* The argument of `run --model-pin` that reruns this model: "NAME@SHA256" (path@SHA256 for a
 * model given by its directory) into buf. */
void ns_archive_model_pin(const ns_model_files *mf, char *buf, size_t size);

#endif

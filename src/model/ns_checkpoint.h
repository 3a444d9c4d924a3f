/* ns_checkpoint: the weights of a Hugging Face model directory as it ships them -- one
 * model.safetensors, or the shards that model.safetensors.index.json names -- mapped and
 * validated (ns_safetensors), looked up by tensor name across shards, bound into F32 pointers
 * (F32 in place, F16/BF16 converted into one private block, every value checked finite), and
 * identified by one SHA-256 over every shard (docs/MODELS.md says how).
 *
 * The index is read as Hugging Face writes it: {"metadata": {...}, "weight_map": {name: file}}.
 * Every shard it names is opened; every tensor of a shard must be mapped to that shard by the
 * index, and every tensor the index maps must be in its shard, so the shards' bytes determine
 * the model (and their checksum identifies it). When model.safetensors exists it is used and the
 * index ignored, as Hugging Face's loader does. */
#ifndef NS_CHECKPOINT_H
#define NS_CHECKPOINT_H

#include <stddef.h>

#include "common/ns_error.h"
#include "model/ns_safetensors.h"

#define NS_CKPT_INDEX "model.safetensors.index.json"
#define NS_CKPT_SINGLE "model.safetensors"
/* Shards accepted in one index (Hugging Face's largest models have a few hundred). */
#define NS_CKPT_MAX_SHARDS 4096

typedef struct ns_ckpt {
    char *dir;
    char *weights_path;   /* DIR/model.safetensors or DIR/model.safetensors.index.json */
    int sharded;
    size_t n_files;
    ns_st_file *files;    /* each mapped; files[i].path is DIR/<name> */
    char **names;         /* (n_files) file names, in byte order */
} ns_ckpt;

/* Open dir's weights (single file or index + shards), validating each file and the index. On
 * failure *ck is left empty. Messages name the file (and the tensor). */
int ns_ckpt_open(const char *dir, ns_ckpt *ck, ns_err *err);
void ns_ckpt_close(ns_ckpt *ck);

/* The tensor called name, or NULL; *file receives its file. */
const ns_st_tensor *ns_ckpt_find(const ns_ckpt *ck, const char *name, const ns_st_file **file);

/* The SHA-256 of the mapped bytes (ns_model_sha256's definition). */
int ns_ckpt_sha256(const ns_ckpt *ck, char hex[65], ns_err *err);

/* One tensor a model needs: its name, the shape config.json implies, and where the F32 data
 * pointer goes. */
typedef struct ns_ckpt_slot {
    char name[128];
    size_t ndim;
    size_t shape[2];
    const char *why;        /* config keys the shape comes from, for messages */
    const float **dst;
    int optional;           /* 1: may be absent (then *dst = NULL) */
    const char *prefix;     /* NULL, or a prefix the name may also carry ("transformer.", "model.",
                               ...: the head model's export); both forms at once is an error */
    /* filled by ns_ckpt_bind */
    const ns_st_tensor *t;
    const ns_st_file *file;
} ns_ckpt_slot;

/* Fill slot s (prefix NULL). d1 = 0 for a vector. */
void ns_ckpt_slot_set(ns_ckpt_slot *s, const char *name, size_t d0, size_t d1, const char *why,
                      const float **dst, int optional);

/* Check every slot (present unless optional, dtype F32/F16/BF16, exact shape), convert what must
 * be converted into *converted (one block the caller frees), check every value finite, and set
 * every *dst. Fails (NS_ERR_FORMAT / NS_ERR_INVALID) naming the file and the tensor. */
int ns_ckpt_bind(const ns_ckpt *ck, ns_ckpt_slot *slots, size_t n, float **converted,
                 ns_err *err);

/* Refuse a tensor of a layer the config does not have: a name (after an optional prefix) of the
 * form <stem><N>.<rest> with N >= n_layer (a config/file mismatch that shapes cannot show);
 * key names n_layer's config key in the message. */
int ns_ckpt_check_layers(const ns_ckpt *ck, const char *prefix, const char *stem, size_t n_layer,
                         const char *key, ns_err *err);

/* The files of model directory dir that a writer must never write over (common/ns_outpath):
 * DIR/config.json, DIR/model.safetensors, DIR/model.safetensors.index.json and every other
 * .safetensors file of DIR (the shards), as fresh paths (free with ns_model_input_files_free). */
int ns_model_input_files(const char *dir, char ***paths, size_t *n, ns_err *err);
void ns_model_input_files_free(char **paths, size_t n);

#endif

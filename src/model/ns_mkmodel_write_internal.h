/* ns_mkmodel_write_internal: what the random-model writers (ns_mkmodel.c, ns_mkdecoder.c) share,
 * from ns_mkmodel_write.c -- the tensor list with each tensor's initialisation, the counter-based
 * generator, the writing of the weights (single file or shards + index) and of config.json. Not
 * for use outside src/model and the tests. */
#ifndef NS_MKMODEL_WRITE_INTERNAL_H
#define NS_MKMODEL_WRITE_INTERNAL_H

#include <jansson.h>
#include <signal.h>
#include <stddef.h>
#include <stdint.h>

#include "common/ns_error.h"
#include "common/ns_hooks.h"
#include "model/ns_safetensors.h"

typedef enum ns_mk_init { NS_MK_NORMAL, NS_MK_ZERO, NS_MK_ONE, NS_MK_MASK } ns_mk_init;

/* One tensor of a file and how its values are made. */
typedef struct ns_mk_tensor {
    char name[96];
    size_t ndim;
    size_t shape[4];
    size_t numel;
    ns_mk_init kind;  /* NORMAL: mean + std N(0, 1); MASK: the causal mask [1, 1, P, P] */
    double mean, std;
    uint64_t stream;  /* the name's hash: each tensor its own stream */
} ns_mk_tensor;

void ns_mk_tensor_set(ns_mk_tensor *d, const char *name, size_t ndim, const size_t *shape,
                      ns_mk_init kind, double mean, double std);

/* Elements [start, start + n) (row-major) of tensor d: element i is a pure function of (seed,
 * d's name, i) (SplitMix64 hashing and Box-Muller), so any chunking gives the same values. */
void ns_mk_values(float *out, const ns_mk_tensor *d, uint64_t seed, size_t start, size_t n);

/* Supplies elements [start, start + n) of tensor number `index` (a trained model's values). */
typedef int (*ns_mk_source_fn)(void *user, size_t index, size_t start, size_t n, float *out,
                               ns_err *err);

/* What ns_mk_write_weights writes. */
typedef struct ns_mk_weights {
    const ns_mk_tensor *tensors;
    size_t n;
    ns_st_dtype dtype;       /* F32, F16 or BF16 (values rounded to nearest, ties to even) */
    size_t shards;           /* 0 or 1: model.safetensors; K: K shards and the index */
    uint64_t seed;
    ns_mk_source_fn source;  /* NULL: the generator; else the values of every non-mask tensor */
    void *user;
    /* stop and hold only: stop non-zero, the writer stops; the test-only hold is called with
     * point "temp" and count 0 once the first weight file's temporary holds its header. */
    ns_hooks hooks;
} ns_mk_weights;

/* dir's weights in the Hugging Face layout: model.safetensors (and a stale index removed), or the
 * shards model-0000k-of-0000K.safetensors (contiguous runs of the tensor list balanced by size)
 * with model.safetensors.index.json (metadata.total_size, weight_map sorted by name) and a stale
 * model.safetensors removed. Every file through a temporary name (FINAL.tmp.<pid>, common/ns_tmp.h;
 * those of dead processes removed first) renamed into place. When w->stop becomes non-zero, or on
 * any failure, the temporary is removed, so are the shards this call already renamed into place,
 * and NS_ERR_INTERRUPTED "interrupted; PATH was not written (its temporary is removed)" returned. */
int ns_mk_write_weights(const char *dir, const ns_mk_weights *w, ns_err *err);

/* dir/config.json from root (indented, reals with 10 significant digits, a final newline),
 * atomically. */
int ns_mk_write_config(const char *dir, json_t *root, ns_err *err);

/* The name of shard k (0-based) of K: model-0000<k+1>-of-0000K.safetensors. */
void ns_mk_shard_name(size_t k, size_t K, char name[48]);

#endif

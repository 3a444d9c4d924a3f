/* ns_sweep_config: the validated contents of a sweep YAML file (plain data, broadcast by rank 0).
 * Parsing: ns_sweep_yaml.c; defaults, packing and the checks against model and corpus:
 * ns_sweep_config.c; grid expansion: ns_grid.c. Schema: docs/SWEEP.md. */
#ifndef NS_SWEEP_CONFIG_H
#define NS_SWEEP_CONFIG_H

#include <stddef.h>
#include <stdint.h>

#include "analysis/ns_normalize.h"
#include "common/ns_error.h"

#define NS_SWEEP_MAX_NORMALIZERS 4

typedef struct ns_sweep_config {
    char *source_path;       /* the YAML file read ("<embedded>" for the built-in default) */
    char *yaml_text;         /* its whole text, recorded in the output */

    char *model;             /* asset name (manifest) or directory; default "gpt2" */
    char *tokenizer;         /* asset name or directory; default "tokenizer" */
    char *corpus;            /* asset name or file; default "war_and_peace" */
    int strip_gutenberg;     /* drop the Project Gutenberg header and licence; default 1 */

    size_t shard_count;      /* number of shards */
    size_t L_max;            /* tokens per shard (one forward pass each) */
    size_t shard_first;      /* token offset of shard 0; default 0 */
    size_t shard_stride;     /* token distance between shard starts; default L_max */

    size_t *L;  size_t nL;   /* context lengths analysed (each <= L_max), ascending */
    size_t *N;  size_t nN;   /* top-N sizes, ascending */
    double *T;  size_t nT;   /* temperatures, ascending */
    double *eps; size_t neps; /* finite-difference steps, ascending */
    size_t *layers; size_t nlayers; /* expanded from `all` once the model is known */
    int layers_all;
    size_t *heads; size_t nheads;
    int heads_all;

    ns_normalizer normalizers[NS_SWEEP_MAX_NORMALIZERS];
    size_t nnormalizers;     /* default: softmax only */

    size_t rows;             /* last `rows` rows of each prefix analysed; default 1 */
    int sphere;              /* default 1 */
    uint64_t seed;           /* default 0 */
    double ks_alpha;         /* default 0.01 */
    unsigned probes;         /* random probe directions for jac_fd; default 8 */
    int keep_samples;        /* write per-row values too; default 0 */

    char *output;            /* NetCDF path */
    char *checkpoint_dir;    /* journal directory */
} ns_sweep_config;

/* Zero cfg and set every documented default (docs/SWEEP.md): model "gpt2", tokenizer "tokenizer",
 * corpus "war_and_peace", strip_gutenberg 1, T {1}, eps {1e-3}, layers/heads all, softmax,
 * rows 1, sphere 1, seed 0, ks_alpha 0.01, probes 8, keep_samples 0. Strings and lists that have
 * defaults are filled in by ns_sweep_parse (they need allocation); this only sets scalars. */
void ns_sweep_config_init(ns_sweep_config *cfg);

/* Release every string and list of cfg and zero it; safe on a zeroed or already-freed config. */
void ns_sweep_config_free(ns_sweep_config *cfg);

/* Serialize cfg to one self-contained byte buffer (*buf, caller frees) and back, for broadcasting
 * the validated configuration from rank 0. Same-machine format (native byte order). unpack fills
 * a fresh cfg (free it with ns_sweep_config_free); a truncated or foreign buffer gives
 * NS_ERR_FORMAT. */
int ns_sweep_config_pack(const ns_sweep_config *cfg, void **buf, size_t *len, ns_err *err);
int ns_sweep_config_unpack(const void *buf, size_t len, ns_sweep_config *cfg, ns_err *err);

#endif

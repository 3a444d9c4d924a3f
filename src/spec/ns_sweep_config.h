/* ns_sweep_config: the contents of a sweep (plain data): every setting of a sweep YAML file
 * (docs/SWEEP.md) with the one definition of each default, packing it into one buffer that rank 0
 * broadcasts after validation, and the analysis grid it describes. Parsing: ns_sweep_yaml;
 * checks: ns_sweep_check; resolving the files it names: ns_sweep_inputs. */
#ifndef NS_SWEEP_CONFIG_H
#define NS_SWEEP_CONFIG_H

#include <stddef.h>
#include <stdint.h>

#include "norm/ns_normalize.h"
#include "common/ns_error.h"
#include "rows/ns_plan.h"

#define NS_SWEEP_MAX_NORMALIZERS NS_PLAN_MAX_NORMALIZERS /* the axis, views included */
#define NS_SWEEP_MAX_LISTED_NORMALIZERS 16               /* what `normalizer:` may list */

/* Defaults (docs/SWEEP.md; `normsweep dump` uses the same). */
#define NS_SWEEP_DEFAULT_MODEL "gpt2"
#define NS_SWEEP_DEFAULT_TOKENIZER "tokenizer"
#define NS_SWEEP_DEFAULT_CORPUS "war_and_peace"
#define NS_SWEEP_DEFAULT_T 1.0
#define NS_SWEEP_DEFAULT_EPS 1e-3
#define NS_SWEEP_DEFAULT_PROBES 8u
#define NS_SWEEP_DEFAULT_KS_ALPHA 0.01

typedef struct ns_sweep_config {
    char *source_path;       /* the YAML file read ("<embedded>" for the built-in default) */
    char *yaml_text;         /* its whole text, recorded in the output */

    char *model;             /* asset name (manifest) or directory */
    char *tokenizer;         /* asset name or directory */
    char *corpus;            /* asset name or file */
    int strip_gutenberg;     /* drop the Project Gutenberg header and licence */

    size_t shard_count;      /* number of shards */
    size_t L_max;            /* tokens per shard (one forward pass each) */
    size_t shard_first;      /* token offset of shard 0 */
    size_t shard_stride;     /* token distance between shard starts (0 until set: L_max) */

    size_t *L;  size_t nL;   /* context lengths analysed (each <= L_max), ascending */
    size_t *N;  size_t nN;   /* top-N sizes, ascending */
    double *T;  size_t nT;   /* temperatures, ascending */
    double *eps; size_t neps; /* finite-difference steps, ascending */
    size_t *layers; size_t nlayers; /* expanded from `all` once the model is known */
    int layers_all;
    size_t *heads; size_t nheads;
    int heads_all;

    ns_normalizer normalizers[NS_SWEEP_MAX_NORMALIZERS]; /* the listed ones, then (sink_view)
                                                           * their sink-excluded views */
    size_t nnormalizers;
    int sink_view;           /* `sink_view: true`: each listed normalizer's sink-excluded view is
                              * an entry of the axis too (ns_sweep_add_sink_views) */

    size_t rows;             /* last `rows` rows of each prefix analysed */
    int sphere;
    uint64_t seed;
    double ks_alpha;
    unsigned probes;         /* random probe directions for jac_fd */
    int keep_samples;        /* write per-row values too */
    size_t bootstrap_resamples; /* B of the shard bootstrap's intervals */

    char *output;            /* NetCDF path */
    char *checkpoint_dir;    /* journal directory */
} ns_sweep_config;

/* Every default of docs/SWEEP.md: model "gpt2", tokenizer "tokenizer", corpus "war_and_peace",
 * strip_gutenberg true, T {1}, eps {1e-3}, layers and heads all, softmax, rows 1, sphere true,
 * seed 0, ks_alpha 0.01, probes 8, keep_samples false, bootstrap.resamples 2000 (output and checkpoint_dir follow from the
 * file name: ns_sweep_config_default_paths). Free with ns_sweep_config_free, also on failure. */
int ns_sweep_config_init(ns_sweep_config *cfg, ns_err *err);

/* Release every string and list of cfg and zero it; safe on a zeroed or already-freed config. */
void ns_sweep_config_free(ns_sweep_config *cfg);

/* output "runs/<stem>/<stem>.nc" and checkpoint_dir "runs/<stem>/checkpoint" where unset, <stem>
 * being the sweep file's name without .yaml ("sweep" for the embedded default). */
int ns_sweep_config_default_paths(ns_sweep_config *cfg, ns_err *err);

/* Expand `layers: all` / `heads: all` to 0..n-1 (no-op for explicit lists). */
int ns_sweep_expand_all(ns_sweep_config *cfg, size_t n_layer, size_t n_head, ns_err *err);

/* `sink_view: true`: append to the listed normalizers their sink-excluded views (labels "NAME,
 * sink excluded"), in the same order, so the listed ones keep their indices 0..n-1. A no-op when
 * cfg->sink_view is 0 or the views are there already. */
void ns_sweep_add_sink_views(ns_sweep_config *cfg);

/* The analysis grid of cfg (borrowing its lists). */
void ns_sweep_config_grid(const ns_sweep_config *cfg, ns_grid *g);

/* Serialize cfg to one self-contained byte buffer (*buf, caller frees) and back: rank 0
 * broadcasts the validated configuration so the other ranks never parse or check it again.
 * Same-machine format (native byte order). unpack fills a fresh cfg (free it with
 * ns_sweep_config_free); a truncated or foreign buffer gives NS_ERR_FORMAT. */
int ns_sweep_config_pack(const ns_sweep_config *cfg, void **buf, size_t *len, ns_err *err);
int ns_sweep_config_unpack(const void *buf, size_t len, ns_sweep_config *cfg, ns_err *err);

#endif

/* ns_sweep_yaml: read a sweep YAML file into an ns_sweep_config, and validate it against the
 * schema (no files), the model's config.json and the tokenized corpus, collecting every problem
 * as a "FILE:LINE:COL: message" diagnostic. The schema is docs/SWEEP.md. */
#ifndef NS_SWEEP_YAML_H
#define NS_SWEEP_YAML_H

#include <stddef.h>

#include "assets/ns_assets.h"
#include "common/ns_error.h"
#include "model/ns_gpt2.h"
#include "corpus/ns_corpus.h"
#include "sweep/ns_sweep_config.h"

/* ---- diagnostics ------------------------------------------------------------------------- */

/* A position in the YAML text, 1-based; line 0 means "not in the file" (a default value). */
typedef struct ns_sweep_mark {
    size_t line, col;
} ns_sweep_mark;

typedef struct ns_sweep_diag {
    ns_sweep_mark mark;
    int is_warning;
    char *text;              /* the whole line: "FILE:LINE:COL: message" ("FILE: message" when
                                the mark is not in the file; "warning: " before warnings' text) */
} ns_sweep_diag;

typedef struct ns_sweep_diags {
    ns_sweep_diag *items;
    size_t n, cap;
    size_t nerrors;
    size_t nwarnings;
} ns_sweep_diags;

/* Append a problem at mark of file source. Returns NS_OK or NS_ERR_NOMEM (the list is unchanged). */
int ns_sweep_diag_add(ns_sweep_diags *d, const char *source, ns_sweep_mark mark, int is_warning,
                      const char *fmt, ...) __attribute__((format(printf, 5, 6)));
/* Sort by position (stable: problems at one position keep their order; unpositioned last). */
void ns_sweep_diags_sort(ns_sweep_diags *d);
void ns_sweep_diags_free(ns_sweep_diags *d);

/* Where each setting was written (for messages of the checks that run after parsing). Item marks
 * are parallel to the config's (sorted, de-duplicated) lists; an item expanded from a range
 * {from, to, step} carries the range's mark. */
typedef struct ns_sweep_marks {
    ns_sweep_mark root;
    ns_sweep_mark model, tokenizer, corpus, strip_gutenberg;
    ns_sweep_mark shards, shard_count, L_max, shard_first, shard_stride;
    ns_sweep_mark grid, L_key, N_key, T_key, eps_key, layers_key, heads_key;
    ns_sweep_mark normalizer, rows, sphere, seed, ks_alpha, probes, keep_samples;
    ns_sweep_mark output, checkpoint_dir;
    ns_sweep_mark *L, *N, *T, *eps, *layers, *heads;
} ns_sweep_marks;

void ns_sweep_marks_free(ns_sweep_marks *m);

/* ---- parsing: the schema alone, no files ---------------------------------------------------- */

/* Parse and validate text[0..len) (a sweep YAML document) named source_name in messages.
 * Fills *cfg (initialised here; free with ns_sweep_config_free even on failure) with every valid
 * setting, plus the defaults, and *marks (may be NULL; free with ns_sweep_marks_free) with their
 * positions. Every problem found is appended to diags: unknown keys, wrong types, empty lists,
 * duplicate keys or values, out-of-range values (T <= 0, eps <= 0, N < 1, L > L_max, ...).
 * `layers: all` / `heads: all` stay unexpanded (layers_all / heads_all, empty lists) until
 * ns_sweep_check_model. Returns NS_OK when no error was found, NS_ERR_INVALID when some were (err
 * says how many), NS_ERR_NOMEM. */
int ns_sweep_parse(const char *text, size_t len, const char *source_name, ns_sweep_config *cfg,
                   ns_sweep_marks *marks, ns_sweep_diags *diags, ns_err *err);

/* The built-in default sweep (the text of sweeps/quick.yaml, compiled in at build time). */
const char *ns_sweep_default_yaml(void);
#define NS_SWEEP_DEFAULT_NAME "<embedded>"

/* ---- checks against the model and the corpus ---------------------------------------------- */

/* Check cfg against a model's configuration (pure, no files): shards.L_max <= n_ctx, layers and
 * heads inside the model; expands `all`. model_desc names the model in messages. Problems go to
 * diags (marks may be NULL: positions then fall back to line 0). NS_OK or NS_ERR_NOMEM. */
int ns_sweep_check_model(ns_sweep_config *cfg, const ns_sweep_marks *marks,
                         const ns_gpt2_config *mc, const char *model_desc, ns_sweep_diags *diags,
                         ns_err *err);

/* Expand `layers: all` / `heads: all` to 0..n-1 (no-op for explicit lists). */
int ns_sweep_expand_all(ns_sweep_config *cfg, size_t n_layer, size_t n_head, ns_err *err);

/* Check that the shards fit in n_tokens tokens (pure). corpus_desc names the corpus. */
int ns_sweep_check_tokens(const ns_sweep_config *cfg, const ns_sweep_marks *marks, size_t n_tokens,
                          const char *corpus_desc, ns_sweep_diags *diags, ns_err *err);

/* What the file-based checks found (for the summary and for the run that follows). */
typedef struct ns_sweep_inputs {
    int have_model;            /* model resolved and its config.json read */
    ns_asset_ref model_ref;
    ns_gpt2_config model_cfg;
    int have_tokenizer;
    ns_asset_ref tokenizer_ref;
    size_t vocab_size;         /* of the tokenizer */
    int have_corpus;           /* corpus read and tokenized */
    ns_asset_ref corpus_ref;
    ns_corpus corpus;          /* the token stream (owned; free with ns_sweep_inputs_free) */
} ns_sweep_inputs;

void ns_sweep_inputs_free(ns_sweep_inputs *in);

/* Resolve the model through ns_assets_resolve (fetching when allow_fetch), read its config.json
 * and run ns_sweep_check_model. Failures to resolve or read become diagnostics at `model:`. */
int ns_sweep_resolve_model(ns_sweep_config *cfg, const ns_sweep_marks *marks, int allow_fetch,
                           ns_sweep_inputs *in, ns_sweep_diags *diags, ns_err *err);

/* Resolve and load the tokenizer, resolve, read, strip and tokenize the corpus, and run
 * ns_sweep_check_tokens (only when the shard settings parsed). Failures become diagnostics at
 * `tokenizer:` / `corpus:` / `strip_gutenberg:`. */
int ns_sweep_resolve_corpus(const ns_sweep_config *cfg, const ns_sweep_marks *marks,
                            int allow_fetch, ns_sweep_inputs *in, ns_sweep_diags *diags,
                            ns_err *err);

enum ns_sweep_load_flags {
    NS_SWEEP_SCHEMA_ONLY = 1, /* parse and check the schema only: no model, no corpus */
    NS_SWEEP_NO_CORPUS = 2    /* resolve the model but do not read or tokenize the corpus */
};

/* Everything `validate` and `run` need before any work: read path (NULL: the embedded default),
 * parse, then (unless flags say otherwise, and only when the text has no syntax or schema errors)
 * resolve the model and the corpus and check the sweep against them. cfg, marks (may be NULL), in (may be NULL with NS_SWEEP_SCHEMA_ONLY) and diags
 * are filled; free them even on failure. Returns NS_OK when no problem was found, NS_ERR_INVALID
 * when diags holds errors (err: "N problems in FILE"), NS_ERR_IO when path cannot be read (err
 * names it; diags empty), NS_ERR_NOMEM. */
int ns_sweep_load(const char *path, int allow_fetch, int flags, ns_sweep_config *cfg,
                  ns_sweep_marks *marks, ns_sweep_inputs *in, ns_sweep_diags *diags, ns_err *err);

#endif

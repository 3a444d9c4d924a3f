/* ns_sweep_inputs: everything `validate` and `run` do before any work: read the sweep file (or
 * the embedded default), parse and check it, resolve the model, tokenizer and corpus it names
 * (asset manifest), tokenize the corpus, and check the sweep against them; every problem a
 * "FILE:LINE:COL: message" diagnostic. */
#ifndef NS_SWEEP_INPUTS_H
#define NS_SWEEP_INPUTS_H

#include <stddef.h>

#include "assets/ns_assets.h"
#include "common/ns_attr.h"
#include "common/ns_error.h"
#include "corpus/ns_corpus.h"
#include "model/ns_model.h"
#include "spec/ns_sweep_config.h"
#include "spec/ns_sweep_diag.h"

/* What the file-based checks found (for the summary and for the run that follows). */
typedef struct ns_sweep_inputs {
    int have_model;            /* model resolved, its config.json read and its weights checked */
    ns_asset_ref model_ref;
    ns_model_config model_cfg;
    ns_model *model;      /* the checked weights, mapped (owned; a run takes them over
                                  instead of loading the model a second time) */
    int model_sha_of_map;      /* model_ref.sha256 was computed from model's mapped bytes (a
                                  model given by its path), not from another read of the file */
    int have_tokenizer;
    ns_asset_ref tokenizer_ref;
    size_t vocab_size;         /* of the tokenizer */
    int have_corpus;           /* corpus read and tokenized */
    ns_asset_ref corpus_ref;
    ns_corpus corpus;          /* the token stream (owned; free with ns_sweep_inputs_free) */
} ns_sweep_inputs;

void ns_sweep_inputs_free(ns_sweep_inputs *in);

/* A pin on the model (`run --model-pin [NAME@]SHA256`, what an archive's README gives to rerun
 * it): the model used must be NAME (a manifest set, or "path" for a model given by its
 * directory; "" any) and its model.safetensors must have this SHA-256. A NAME that is the
 * sweep's model's fallback is resolved as that fallback without trying the sweep's model, so the
 * rerun of a run that fell back records what it recorded (docs/ARCHIVE.md). */
typedef struct ns_model_pin {
    char name[128];
    char sha256[65];          /* lowercase hex */
} ns_model_pin;

/* Parse "[NAME@]SHA256" (64 hex digits, either case) into pin; NS_ERR_INVALID saying why. */
int ns_model_pin_parse(const char *text, ns_model_pin *pin, ns_err *err);

/* The model's architecture as global attributes of an output (ns_provenance.model_attrs): the
 * layout and model_type, sizes (query and key/value heads, head dimension, ...), norm, MLP,
 * residual form, biases, position encoding and rotary settings, sliding window, the attention's
 * normalizer and scale. Up to NS_MODEL_ATTRS of them into a; their texts point into buf (size
 * bytes, which must outlive a). Returns how many. */
#define NS_MODEL_ATTRS 24
size_t ns_sweep_model_attrs(const ns_model_config *mc, ns_nc_attr *a, char *buf, size_t size);

/* Take over the model validation mapped and checked (in->model becomes NULL), making sure its
 * mapped bytes are the ones model_ref.sha256 describes: when that checksum came from another read
 * of the file (a manifest asset), the map is hashed and compared -- NS_ERR_IO "changed during
 * start-up" on a difference, as when the file was replaced between the check and the map. */
int ns_sweep_inputs_take_model(ns_sweep_inputs *in, ns_model **out, ns_err *err);

/* Resolve the model through the asset manifest (fetching as fetch allows; NULL: no fetching),
 * read its config.json, load (map and check) its weights into in->model -- a model given by its
 * path is hashed from those mapped bytes (in->model_sha_of_map) -- and run ns_sweep_check_model.
 * Failures to resolve, read or load become diagnostics at `model:`, as does a model other than
 * the one pin (NULL: none) names. */
int ns_sweep_resolve_model(ns_sweep_config *cfg, const ns_sweep_marks *marks,
                           const ns_assets_fetch *fetch, const ns_model_pin *pin,
                           ns_sweep_inputs *in, ns_sweep_diags *diags, ns_err *err);

/* Resolve and load the tokenizer, resolve, read, strip and tokenize the corpus, and run
 * ns_sweep_check_tokens (only when the shard settings parsed). Failures become diagnostics at
 * `tokenizer:` / `corpus:` / `strip_gutenberg:`. */
int ns_sweep_resolve_corpus(const ns_sweep_config *cfg, const ns_sweep_marks *marks,
                            const ns_assets_fetch *fetch, ns_sweep_inputs *in, ns_sweep_diags *diags,
                            ns_err *err);

/* The output file and the checkpoint directory against what the sweep reads (common/ns_outpath):
 * the output must not be, nor lie inside, the sweep file, the model's config.json and
 * model.safetensors, the tokenizer's files, the corpus or the checkpoint directory (its journal,
 * lock, history); nor may the checkpoint directory's own files be one of those inputs. Paths
 * resolved (links, "..") and compared by device and inode. NS_ERR_INVALID naming both paths, for
 * `validate` (a diagnostic at `output:`) and `run` (after --output / --checkpoint-dir). */
int ns_sweep_check_outputs(const ns_sweep_config *cfg, const ns_sweep_inputs *in, ns_err *err);

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
int ns_sweep_load(const char *path, const ns_assets_fetch *fetch, int flags, ns_sweep_config *cfg,
                  ns_sweep_marks *marks, ns_sweep_inputs *in, ns_sweep_diags *diags, ns_err *err);

/* The same with model (an asset name or a model directory) in place of the file's `model:` (NULL:
 * the file's; `normsweep train-grid` sweeps each model it trained with one sweep file) and the
 * model pinned (NULL: not). */
int ns_sweep_load_model(const char *path, const char *model, const ns_model_pin *pin,
                        const ns_assets_fetch *fetch,
                        int flags, ns_sweep_config *cfg, ns_sweep_marks *marks,
                        ns_sweep_inputs *in, ns_sweep_diags *diags, ns_err *err);

/* The same on a text already read (a campaign's model sweep, spec/ns_campaign.h), named name in
 * messages and recorded as the sweep file. */
int ns_sweep_load_text(const char *text, size_t len, const char *name, const char *model,
                       const ns_model_pin *pin, const ns_assets_fetch *fetch, int flags,
                       ns_sweep_config *cfg, ns_sweep_marks *marks, ns_sweep_inputs *in,
                       ns_sweep_diags *diags, ns_err *err);

#endif

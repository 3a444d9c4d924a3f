/* ns_campaign: a campaign file -- a sweep file whose `models:` lists several models (or revisions
 * of one) -- read into one single-model sweep text per model (docs/SWEEP.md, "Campaigns"): the
 * campaign's text with `models:`, `tokenizer:` and `output_dir:` taken out (their lines left
 * empty, so every other key keeps its line and column) and the model's `model:`, `tokenizer:`,
 * `output:` and `checkpoint_dir:` appended. No files are read or written here. */
#ifndef NS_CAMPAIGN_H
#define NS_CAMPAIGN_H

#include <stddef.h>

#include "common/ns_error.h"
#include "spec/ns_sweep_diag.h"

#define NS_CAMPAIGN_MAX_MODELS 256
#define NS_CAMPAIGN_MAX_ID 64
#define NS_CAMPAIGN_TOKENIZER_MODEL "model" /* tokenizer: the model's own tokenizer files */

typedef struct ns_campaign_model {
    char *id;             /* the output's name: OUTPUT_DIR/<id>/<id>.nc (safe characters) */
    char *model;          /* asset name (`name@revision` too) or model directory */
    char *tokenizer;      /* as the sweep's `tokenizer:` takes it (`model`: the model's own) */
    char *text;           /* the model's sweep text (NUL-terminated) */
    size_t len;
    char *sweep_path;     /* OUTPUT_DIR/<id>/<id>.yaml: where the run keeps that text */
    char *output, *checkpoint_dir;
    ns_sweep_mark mark;   /* the entry in the campaign file */
} ns_campaign_model;

typedef struct ns_campaign {
    char *path;           /* the campaign file, as named in messages */
    char *output_dir;     /* `output_dir:` (default runs/<stem>), or the caller's override */
    size_t n;             /* models; 0: the file is not a campaign (no top-level `models:`) */
    ns_campaign_model *models;
    size_t text_lines;    /* lines of the campaign file (marks beyond them are appended keys) */
} ns_campaign;

/* Read text[0..len) named path. A file without a top-level `models:` key (or one libyaml cannot
 * read: the sweep parser reports it) is not a campaign: NS_OK with c->n == 0. Otherwise every
 * problem of the campaign keys is added to diags (FILE:LINE:COL) and NS_ERR_INVALID returned;
 * on NS_OK every model's sweep text is ready. output_dir (NULL: the file's) overrides
 * `output_dir:`. Free c with ns_campaign_free even on failure. */
int ns_campaign_parse(const char *text, size_t len, const char *path, const char *output_dir,
                      ns_campaign *c, ns_sweep_diags *diags, ns_err *err);

void ns_campaign_free(ns_campaign *c);

/* Model i's diagnostics as the campaign's: a mark on an appended key (`model:`, `tokenizer:`,
 * `output:`, `checkpoint_dir:`) becomes the model's entry in the campaign file, and every message
 * names the model: "FILE:LINE:COL: [ID] message". i >= c->n: left as they are (the problems of
 * the text every model shares). */
int ns_campaign_fix_diags(const ns_campaign *c, size_t i, ns_sweep_diags *diags);

/* The id a model name gives: its last path component, every byte but [A-Za-z0-9._+-] replaced by
 * '_' ("pythia-160m@step1000" -> "pythia-160m_step1000"), a leading '.' too; at most
 * NS_CAMPAIGN_MAX_ID bytes. Returns a new string (NULL: out of memory). */
char *ns_campaign_id_of(const char *model);

#endif

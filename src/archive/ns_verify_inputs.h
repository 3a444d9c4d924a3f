/* ns_verify_inputs: `verify`'s phase 3: the model, tokenizer and corpus the archived run used,
 * resolved as `run` resolves them (a model given in place of the sweep file's by train-grid; the
 * requested model's fallback when the run recorded that it fell back to it, and only then), each
 * SHA-256 compared with the recorded one, and each recorded name checked against the SHA-256 the
 * asset manifests list for it -- so the model's name, its SHA-256 and the manifests agree. */
#ifndef NS_VERIFY_INPUTS_H
#define NS_VERIFY_INPUTS_H

#include "archive/ns_verify_report.h"
#include "io/ns_nc_read.h"
#include "spec/ns_sweep_config.h"
#include "spec/ns_sweep_inputs.h"

/* What the run would have recorded about its model, as verify found it. */
typedef struct ns_verify_model {
    char *requested; /* the model the run asked for (owned) */
    int fallback;    /* the model used is the requested one's fallback */
} ns_verify_model;

/* Resolve and check the inputs of the run info describes (cfg: its parsed sweep; cfg->model
 * becomes the model resolved); dir: the extracted archive (its assets-manifest.json). One line
 * per input; a recorded name its manifest contradicts is a FAIL too. *ok: every input is
 * available with its recorded SHA-256 (the journal and the recomputation can run). */
int ns_verify_inputs(ns_vreport *v, const char *dir, const ns_nc_info *info, ns_sweep_config *cfg,
                     ns_sweep_inputs *in, ns_sweep_diags *diags, ns_verify_model *model, int *ok,
                     ns_err *err);

#endif

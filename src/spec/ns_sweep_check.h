/* ns_sweep_check: the checks of a parsed sweep that need more than one setting -- the grid on its
 * own, the grid against the model's config.json, the shards against the tokenized corpus -- each
 * reported as a diagnostic at the setting's position in the file. The checks themselves are the
 * plan's (rows/ns_plan.h) and the corpus's (corpus/ns_corpus.h): defined once, used here, by
 * `dump` and by the plan. */
#ifndef NS_SWEEP_CHECK_H
#define NS_SWEEP_CHECK_H

#include <stddef.h>

#include "common/ns_error.h"
#include "model/ns_model.h"
#include "spec/ns_sweep_config.h"
#include "spec/ns_sweep_diag.h"

/* The grid alone (every L <= shards.L_max, rows <= the smallest L) and the shard settings
 * (their token range must not overflow). marks may be NULL. NS_OK or NS_ERR_NOMEM. */
int ns_sweep_check_grid(const ns_sweep_config *cfg, const ns_sweep_marks *marks,
                        ns_sweep_diags *diags, ns_err *err);

/* Against a model's configuration (shards.L_max <= n_ctx, layers and heads inside the model);
 * then expands `all`. model_desc names the model in messages. NS_OK or NS_ERR_NOMEM. */
int ns_sweep_check_model(ns_sweep_config *cfg, const ns_sweep_marks *marks,
                         const ns_model_config *mc, const char *model_desc, ns_sweep_diags *diags,
                         ns_err *err);

/* The shards fit in n_tokens tokens. corpus_desc names the corpus. NS_OK or NS_ERR_NOMEM. */
int ns_sweep_check_tokens(const ns_sweep_config *cfg, const ns_sweep_marks *marks, size_t n_tokens,
                          const char *corpus_desc, ns_sweep_diags *diags, ns_err *err);

#endif

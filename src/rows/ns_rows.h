/* ns_rows: the rows stage, the one path from tokens to per-row values that the sweep's tasks,
 * `dump` and `verify` share: one causal forward pass of any model (model/ns_model.h) over a
 * window of tokens (the prefix property lets it serve every L of the plan) and, layer by layer
 * as the forward produces them, the analysis of every planned (layer, query head, normalizer, L,
 * row) into a payload laid out by the plan. No MPI, no files: callers poll between heads through a callback, and may look at each
 * layer's raw attention (dump writes it) before it is analysed. */
#ifndef NS_ROWS_H
#define NS_ROWS_H

#include <stddef.h>
#include <stdint.h>

#include "analysis/ns_row.h"
#include "common/ns_error.h"
#include "model/ns_model.h"
#include "rows/ns_plan.h"

typedef struct ns_rows ns_rows;

/* Called between heads (e.g. to service MPI requests or notice a stop request); a non-zero
 * return abandons the window with that status. */
typedef int (*ns_rows_poll_fn)(void *user, ns_err *err);

typedef struct ns_rows_hooks {
    ns_rows_poll_fn poll;     /* may be NULL */
    void *poll_user;
    ns_attn_layer_fn layer;   /* sees every layer the forward runs, before its analysis; NULL */
    void *layer_user;
} ns_rows_hooks;

/* Workspaces for windows of plan->derived.L_fwd tokens (one allocation set, reused by every
 * window). kernel: NS_KERNEL_FAST for runs, NS_KERNEL_REFERENCE for tests. The forward pass keeps
 * the logits of the plan's analysed rows (plan->fwd_rows) only, unless flags has
 * NS_ROWS_ALL_ROWS: then every row's, for a layer hook that looks at the whole attention (dump). */
enum ns_rows_flags { NS_ROWS_ALL_ROWS = 1 };
int ns_rows_new(const ns_plan *plan, const ns_model *model, ns_kernel kernel, unsigned flags,
                ns_rows **out, ns_err *err);
void ns_rows_free(ns_rows *r);

/* Analyse window `shard` (tokens[0..plan->derived.L_fwd)) into payload[0..plan->payload). The
 * shard index keys the random draws, so a window's values do not depend on who computes them.
 * hooks may be NULL. On error the payload is unspecified. */
int ns_rows_run(ns_rows *r, uint64_t shard, const int32_t *tokens, const ns_rows_hooks *hooks,
                double *payload, ns_err *err);

/* The analysis half alone: analyse one layer's attention, as the forward pass hands it over
 * (a stored copy will do), into payload -- every planned head and normalizer of that layer,
 * nothing when the layer is not planned; hooks->poll (may be NULL) between heads. ns_rows_run
 * does this after each layer; the benchmark times it apart from the forward pass. */
int ns_rows_analyse_layer(ns_rows *r, uint64_t shard, const ns_attn_layer_view *v,
                          const ns_rows_hooks *hooks, double *payload, ns_err *err);

#endif

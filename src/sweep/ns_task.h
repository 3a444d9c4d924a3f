/* ns_task: one sweep task = one shard: a single causal forward pass over the shard's tokens and,
 * layer by layer as the forward produces them, the METRICS.md analysis of every requested
 * (normalizer, layer, head, L, row). The result is one flat array of doubles (the task payload),
 * identical whichever process computes it. No MPI here: callers poll through a callback. */
#ifndef NS_TASK_H
#define NS_TASK_H

#include <stddef.h>
#include <stdint.h>

#include "analysis/ns_analysis.h"
#include "common/ns_error.h"
#include "model/ns_gpt2.h"
#include "sweep/ns_sweep_config.h"

/* The shape of every task's payload, fixed by the (grid-expanded) sweep.
 * Payload order: [layer][head][normalizer][L][row r][metric k], where row r of context length
 * L is prefix row m = L - 1 - r (as ns_grid: r = 0 is the last row, m = L - 1) and
 * k indexes ns_row_layout. */
typedef struct ns_task_plan {
    size_t nnorm, nL, nlayers, nheads, rows;
    const size_t *L, *layers, *heads;      /* borrowed from the config */
    ns_analysis_params params[NS_SWEEP_MAX_NORMALIZERS];
    ns_row_layout layout;
    size_t L_fwd;          /* forward length: the largest L (rows past it are never analysed) */
    size_t n_layer_model;  /* model depth: the forward stops after the deepest requested layer */
    size_t *row_m;         /* (nL * rows) prefix row indices */
    size_t per_head;       /* doubles per (layer, head, normalizer): nL * rows * layout.total */
    size_t payload;        /* doubles per task */
} ns_task_plan;

/* Build the plan from a validated, grid-expanded config (layers/heads explicit) and the model's
 * config. Fails with NS_ERR_INVALID naming the value if a layer/head/L does not fit the model. */
int ns_task_plan_init(ns_task_plan *plan, const ns_sweep_config *cfg, const ns_gpt2_config *mc,
                      ns_err *err);
void ns_task_plan_free(ns_task_plan *plan);

/* Offset of (layer index, head index, normalizer index, L index, row r) inside a payload. */
size_t ns_task_row_offset(const ns_task_plan *plan, size_t li, size_t hi, size_t ni, size_t Li,
                          size_t r);

/* Called between heads and layers while a task runs (e.g. to service MPI requests or notice a
 * stop request). Non-zero return (e.g. NS_ERR_INTERRUPTED) abandons the task with that status. */
typedef int (*ns_task_poll_fn)(void *user, ns_err *err);

typedef struct ns_task_runner ns_task_runner;

/* Workspaces for the forward pass and the analysis (one allocation set, reused by every task). */
int ns_task_runner_new(const ns_task_plan *plan, const ns_gpt2_model *model,
                       ns_task_runner **out, ns_err *err);
void ns_task_runner_free(ns_task_runner *r);

/* Run one task: tokens[0..plan->L_fwd) of shard `shard` -> out[0..plan->payload).
 * poll may be NULL. On error out is unspecified. */
int ns_task_run(ns_task_runner *r, uint64_t shard, const int32_t *tokens, ns_task_poll_fn poll,
                void *poll_user, double *out, ns_err *err);

#endif

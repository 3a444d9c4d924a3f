/* ns_sweep_prepare: rank 0's part before the task loop -- the sweep read, checked and resolved,
 * the plan, the shards' tokens, the model -- and the outputs it opens (the checkpoint directory's
 * lock, the journal, the output's lock) and closes at the end. */
#ifndef NS_SWEEP_PREPARE_H
#define NS_SWEEP_PREPARE_H

#include "sweep/ns_sweep_ctx.h"

/* Rank 0: read, validate and resolve the sweep, build the plan, cut the shards' tokens, load the
 * model (checking its bytes against the checksum validation recorded). Nothing is written. */
int ns_sweep_prepare(sweep_ctx *c, ns_err *err);
/* Rank 0: create the output's directory, take the checkpoint directory's lock, open the journal
 * (loading its results into c->res) and record this run segment; undone on failure. A --resume
 * whose journal holds every task and whose output was written from it (see output_is_current)
 * sets c->complete and records nothing. */
int ns_sweep_open_outputs(sweep_ctx *c, ns_err *err);
/* Rank 0: release what ns_sweep_open_outputs holds; with c->finished the checkpoint directory's
 * lock file is removed too (it protects a journal that a run may still add to). */
void ns_sweep_close_outputs(sweep_ctx *c);
#endif

/* ns_sweep_share: which ranks see rank 0's checkpoint directory -- a worker's own part of the
 * journal, and rank 0's journal attached read-only for the shared reduction. */
#ifndef NS_SWEEP_SHARE_H
#define NS_SWEEP_SHARE_H

#include "sweep/ns_sweep_ctx.h"

/* Every rank, after ns_sweep_open_outputs: the run segment; a worker that sees rank 0's
 * checkpoint directory creates its part of the journal in c->part (none: it sends payloads). */
int ns_sweep_open_part(sweep_ctx *c, ns_err *err);
/* Every rank, for the reduction: on rank 0, checks that the journal holds every shard's record
 * where c->res says (*j: c->journal; an error otherwise: the journal changed under the run);
 * elsewhere *j is rank 0's journal (its parts included) attached read-only when this rank sees
 * the checkpoint directory and finds every shard's record where c->res says, else NULL. */
int ns_sweep_attach_journal(sweep_ctx *c, ns_journal **j, ns_err *err);
#endif

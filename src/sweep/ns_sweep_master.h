/* ns_sweep_master: rank 0's side of the task loop -- hands out tasks, receives and journals
 * results, watches the workers' heartbeats, stops them when asked. */
#ifndef NS_SWEEP_MASTER_H
#define NS_SWEEP_MASTER_H

#include "sweep/ns_sweep_ctx.h"

/* Returns the loop's status (NS_ERR_INTERRUPTED when stopped). */
int ns_sweep_master(sweep_ctx *c, ns_err *err);
#endif

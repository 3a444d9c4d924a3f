/* ns_sweep_worker: a worker's side of the task loop -- asks for tasks, runs each through the rows
 * stage, stores or sends the result, answers the master's stop. */
#ifndef NS_SWEEP_WORKER_H
#define NS_SWEEP_WORKER_H

#include "sweep/ns_sweep_ctx.h"

/* Returns the loop's status (NS_ERR_INTERRUPTED when stopped). */
int ns_sweep_worker(sweep_ctx *c, ns_err *err);
#endif

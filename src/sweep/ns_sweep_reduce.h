/* ns_sweep_reduce: the end of a complete run on every rank -- each reduces its share of the
 * slices, rank 0 writes the NetCDF and the summary. */
#ifndef NS_SWEEP_REDUCE_H
#define NS_SWEEP_REDUCE_H

#include "sweep/ns_sweep_ctx.h"

/* Every rank: reduce a share of the slices; rank 0 writes the NetCDF and the summary. */
int ns_sweep_reduce_write(sweep_ctx *c, ns_sweep_outcome *out, ns_err *err);
#endif

/* ns_sweep_boot: the end-of-run bootstrap intervals (analysis/ns_intervals.h) of a sweep, shared
 * over every rank of its communicator (ns_sweep_boot.c says how). */
#ifndef NS_SWEEP_BOOT_H
#define NS_SWEEP_BOOT_H

#include <mpi.h>
#include <stddef.h>

#include "analysis/ns_intervals.h"
#include "common/ns_error.h"
#include "rows/ns_plan.h"
#include "sweep/ns_sweep_spread.h"

typedef struct ns_sweep_boot {
    MPI_Comm comm;
    int rank, size;
    const ns_plan *plan;
    size_t n_shards;
    double ks_alpha;
    size_t B;               /* resamples (the sweep's bootstrap.resamples) */
} ns_sweep_boot;

/* Every rank, after the reduction. slices: on rank 0 every slice's reduced values (sweep/
 * ns_results.h; elsewhere ignored); sp: the units' owners and the pieces of this rank's units,
 * delivered by the reduction (ns_sweep_spread.h); on rank 0 *iv receives the intervals (free with
 * ns_intervals_free), elsewhere it is left empty. Fails the same way on every rank. */
int ns_sweep_intervals(const ns_sweep_boot *c, const double *slices,
                       const ns_sweep_spread *sp, ns_intervals *iv, ns_err *err);

#endif

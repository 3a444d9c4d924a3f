/* ns_sweep_spread: the bootstrap's per-shard blocks (analysis/ns_boot_shard.h) moved from the
 * ranks that reduce the slices to the ranks that compute the groups (one normalizer and T each;
 * ns_boot_shard_groups_of), so that each rank holds the T parts of its own groups only -- for
 * every slice of their normalizer -- instead of every rank holding every block. The work goes in
 * rounds: each reducing rank reduces a few slices (ns_boot_shard_round), and one MPI_Alltoallv
 * delivers their T parts, sorted by owner, to the owners (counts in pieces an int holds). */
#ifndef NS_SWEEP_SPREAD_H
#define NS_SWEEP_SPREAD_H

#include <mpi.h>
#include <stddef.h>

#include "common/ns_error.h"
#include "rows/ns_plan.h"

typedef struct ns_sweep_spread {
    MPI_Comm comm;
    size_t rank, P;          /* this rank; the ranks sharing the groups (the communicator) */
    size_t Pr;               /* the ranks reducing the slices (the first Pr), contiguous shares */
    size_t nsl, nT, part;    /* slices, T, doubles of one T part */
    size_t round;            /* slices a rank reduces per round */
    size_t *blk;             /* (nsl) each slice's index in ns_ci_input.block's order */
    size_t *owner;           /* (nnorm nT) the rank computing each group */
    size_t *norm;            /* (nsl) each slice's normalizer */
    double *held;            /* this rank's T parts, in arrival order */
    size_t nheld, got;       /* T parts this rank receives in all, and so far */
    const double **parts;    /* (nsl nT) by ns_ci_input.block's order: into held, else NULL */
    double *send;            /* one round's T parts sorted by owner */
    int *cnt;                /* (4 P) send counts, send displacements, receive counts and
                                receive displacements of a round */
} ns_sweep_spread;

/* Set up for a plan of n_shards shards whose slices the first Pr ranks of comm reduce (Pr >= 1),
 * in rounds sized for the limit per rank cap (ns_boot_shard_round). */
int ns_sweep_spread_init(ns_sweep_spread *sp, MPI_Comm comm, const ns_plan *plan,
                         double ks_alpha, size_t n_shards, size_t Pr, double cap, ns_err *err);
/* Rounds every rank takes part in. */
size_t ns_sweep_spread_rounds(const ns_sweep_spread *sp);
/* Slices [*first, *first + *count) this rank reduces in round q. */
void ns_sweep_spread_slices(const ns_sweep_spread *sp, size_t r, size_t q, size_t *first,
                            size_t *count);
/* Round q, on every rank: blocks holds the blocks of this rank's slices of the round
 * (ns_sweep_spread_slices, in slice order); afterwards sp->parts points at every T part of this
 * rank's groups received so far. */
int ns_sweep_spread_round(ns_sweep_spread *sp, size_t q, const double *blocks, ns_err *err);
void ns_sweep_spread_free(ns_sweep_spread *sp);

#endif

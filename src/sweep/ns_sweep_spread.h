/* ns_sweep_spread: the bootstrap's per-shard blocks (analysis/ns_boot_shard.h) moved from the
 * ranks that reduce the slices to the ranks that compute the units of work that read them
 * (analysis/ns_intervals.h: a group's means read the first piece of each of its T parts, its KS
 * tests at one L the KS pieces of that L's slices; the owners come from ns_boot_units_assign),
 * so that each rank holds the pieces of its own units only -- at most ceil(G / P) groups' worth
 * -- instead of every rank holding every block. The work goes in rounds: each reducing rank
 * reduces a few slices (ns_boot_shard_round), and one MPI_Alltoallv delivers their pieces, sorted
 * by owner, to the owners (counts in pieces an int holds). */
#ifndef NS_SWEEP_SPREAD_H
#define NS_SWEEP_SPREAD_H

#include <mpi.h>
#include <stddef.h>

#include "common/ns_error.h"
#include "rows/ns_plan.h"

typedef struct ns_sweep_spread {
    MPI_Comm comm;
    size_t rank, P;          /* this rank; the ranks sharing the units (the communicator) */
    size_t Pr;               /* the ranks reducing the slices (the first Pr), contiguous shares */
    size_t nsl, nT, nL;      /* slices, T, L */
    size_t part, front;      /* doubles of one T part, and of its first piece */
    size_t round;            /* slices a rank reduces per round */
    size_t *blk;             /* (nsl) each slice's index in ns_ci_input.block's order */
    size_t *owner;           /* (ns_intervals_nunits) the rank computing each unit of work */
    size_t *norm, *Li;       /* (nsl) each slice's normalizer and L index */
    double *held;            /* this rank's pieces, in arrival order */
    size_t nheld, got;       /* doubles this rank receives in all, and so far */
    const double **parts;    /* (nsl nT) by ns_ci_input.block's order: the first pieces this
                                rank holds (into held), else NULL */
    const double **ks_parts; /* the same for the KS pieces (ns_ci_input.ks_block) */
    double *send;            /* one round's pieces sorted by owner */
    int *cnt;                /* (4 P) send counts, send displacements, receive counts and
                                receive displacements of a round */
} ns_sweep_spread;

/* Set up for a plan of n_shards shards and B resamples whose slices the first Pr ranks of comm
 * reduce (Pr >= 1), in rounds sized for the limit per rank cap (ns_boot_shard_round); the units'
 * owners from ns_boot_units_assign, the same on every rank. */
int ns_sweep_spread_init(ns_sweep_spread *sp, MPI_Comm comm, const ns_plan *plan,
                         double ks_alpha, size_t n_shards, size_t B, size_t Pr, double cap,
                         ns_err *err);
/* Rounds every rank takes part in. */
size_t ns_sweep_spread_rounds(const ns_sweep_spread *sp);
/* Slices [*first, *first + *count) this rank reduces in round q. */
void ns_sweep_spread_slices(const ns_sweep_spread *sp, size_t r, size_t q, size_t *first,
                            size_t *count);
/* Round q, on every rank: blocks holds the blocks of this rank's slices of the round
 * (ns_sweep_spread_slices, in slice order); afterwards sp->parts and sp->ks_parts point at every
 * piece of this rank's units received so far. */
int ns_sweep_spread_round(ns_sweep_spread *sp, size_t q, const double *blocks, ns_err *err);
void ns_sweep_spread_free(ns_sweep_spread *sp);

#endif

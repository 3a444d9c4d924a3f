/* ns_boot_units: which process computes which unit of the bootstrap's work (analysis/
 * ns_intervals.h: a group's means, or its KS tests at one L), decided from the grid, the shards,
 * B and the process count alone, so that every process derives the same owners: an estimate of
 * each unit's time (heavy at the claims' temperatures, where every replicate is computed) and a
 * greedy longest-processing-time assignment under caps that bound the pieces a process holds
 * (ns_boot_shard_assign, ns_boot_shard_rank_bytes). The owners change who computes a value,
 * never its bits. Pure: no I/O, no MPI. */
#ifndef NS_BOOT_UNITS_H
#define NS_BOOT_UNITS_H

#include <stddef.h>

#include "analysis/ns_intervals.h"
#include "common/ns_error.h"

/* owner[0 .. ns_intervals_nunits(in)): each unit's process among P, at most ceil(G / P) means
 * units and ceil(G / P) nL KS units each (G = nnorm nT groups), by ns_boot_shard_assign on each
 * unit's estimated time (ns_boot_units.c: nanoseconds on one core of the machine its constants
 * were measured on; only their ratios matter). */
int ns_boot_units_assign(const ns_ci_input *in, size_t P, size_t *owner, ns_err *err);

#endif

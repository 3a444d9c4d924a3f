/* ns_results: where every task's payload lies in the journal (its location, ns_journal.h: the
 * file and the byte; the master's store: its memory does
 * not grow with the grid), and the reduction of a range of slices from those payloads -- the
 * unit of work the sweep's ranks share at the end of a run and `verify` repeats. Values are
 * gathered by shard index, then row, never by arrival order, so the result does not depend on
 * the number of ranks, scheduling or resumes. */
#ifndef NS_RESULTS_H
#define NS_RESULTS_H

#include <stddef.h>
#include <stdint.h>

#include "analysis/ns_boot_shard.h"
#include "analysis/ns_intervals.h"
#include "common/ns_error.h"
#include "rows/ns_plan.h"
#include "journal/ns_journal.h"

#define NS_RESULTS_MISSING UINT64_MAX

typedef struct ns_results {
    size_t n_shards;
    uint64_t *offset;          /* (n_shards) payload locations in the journal, NS_RESULTS_MISSING */
    int32_t *forward_count;    /* (n_shards) forward passes run per shard */
    size_t n_done;
} ns_results;

int ns_results_init(ns_results *res, size_t n_shards, ns_err *err);
void ns_results_free(ns_results *res);

/* Record that shard's payload is stored at location payload_offset of the journal. A second result for
 * the same shard is ignored (the first one wins; both are identical by construction) but still
 * counted as a forward pass. */
int ns_results_set(ns_results *res, uint64_t shard, uint64_t payload_offset, ns_err *err);
/* 1 if shard's result is recorded. */
int ns_results_has(const ns_results *res, uint64_t shard);

/* Check that journal holds, at every recorded location, a record of that shard's task (one read
 * of a record head per shard): NS_ERR_INVALID naming the first shard whose location holds another
 * task or no record -- the locations came from other files than these. */
int ns_results_check(const ns_results *res, const ns_journal *journal, ns_err *err);

/* Reduce slices [first, first + count) of the plan (ns_plan_slice) from every shard's payload
 * in the journal into out[0 .. count * plan->derived.slice.total), when samples is not NULL the
 * per-row values into samples[0 .. count * ns_grid_slice_samples(n_shards * rows)), and when
 * boot is not NULL each slice's per-shard block for the bootstrap (analysis/ns_boot_shard.h) into
 * boot[0 .. count * ns_results_boot_size). Every shard must be present (NS_ERR_INVALID
 * otherwise). */
int ns_results_reduce(const ns_results *res, const ns_plan *plan, const ns_journal *journal,
                      double ks_alpha, size_t first, size_t count, double *out, double *samples,
                      double *boot, ns_err *err);

/* ---- the bootstrap intervals (docs/STATISTICS.md, "Uncertainty: the shard bootstrap") ---- */

/* Doubles of one slice's bootstrap block. */
size_t ns_results_boot_size(const ns_plan *plan, size_t n_shards);
/* The most bytes any of `ranks` ranks holds for the intervals when the first `reducing` of them
 * reduce the slices (ns_boot_shard_rank_bytes): the pieces of the T parts its units read (at most
 * ceil(groups / ranks) groups' worth) and a round of the blocks it reduces (sized for the limit
 * cap, <= 0: the default). */
double ns_results_boot_rank_bytes(const ns_plan *plan, size_t n_shards, size_t ranks,
                                  size_t reducing, double cap);
/* The default limit of that: above it a run writes no intervals (the file has no
 * bootstrap_resamples attribute). */
#define NS_RESULTS_BOOT_MAX_BYTES NS_BOOT_SHARD_MAX_BYTES
/* 1 when a run on `ranks` ranks (`reducing` of them reducing) computes the plan's intervals: its
 * largest rank holds at most cap bytes (cap <= 0: NS_RESULTS_BOOT_MAX_BYTES). */
int ns_results_boot_wanted(const ns_plan *plan, size_t n_shards, size_t ranks, size_t reducing,
                           double cap);
/* Index of slice k's block in ns_ci_input.block's (nnorm, nL, layers x heads) order. */
size_t ns_results_boot_index(const ns_plan *plan, double ks_alpha, size_t k);
/* The catalogue's estimates and intervals over B resamples of the sweep's seed, in one process,
 * from every slice's reduced values (slices, for entropy_norm_mean) and bootstrap block (boot),
 * both in slice order. Free *iv with ns_intervals_free. */
int ns_results_intervals(const ns_plan *plan, double ks_alpha, size_t n_shards,
                         const double *slices, const double *boot, size_t B, ns_intervals *iv,
                         ns_err *err);
/* The same in parts, for ranks that share the work (ns_intervals_units): ent (nslices x nT
 * doubles) receives every head's entropy_norm_mean from the reduced slices, in the order
 * ns_ci_input.entropy_mean wants; *in describes the T parts' two pieces (parts, ks_parts:
 * (nnorm, nL, layers x heads, nT) pointers each, ns_intervals.h; NULL for a description of the
 * grid alone, as ns_boot_units_assign needs) and ent, which it points to. */
void ns_results_ci_entropy(const ns_plan *plan, double ks_alpha, const double *slices,
                           double *ent);
void ns_results_ci_input(const ns_plan *plan, double ks_alpha, size_t n_shards,
                         const double *const *parts, const double *const *ks_parts,
                         const double *ent, size_t B, ns_ci_input *in);

#endif

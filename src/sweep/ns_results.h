/* ns_results: the master's store of every task's per-row values, kept by shard index, and the
 * reductions (statistics, KS, n_crit, violation counts) that turn them into the sweep's NetCDF
 * file (docs/OUTPUT.md). Values are always combined by shard index then row, never by arrival
 * order, so the file does not depend on the number of ranks, scheduling or resumes. */
#ifndef NS_RESULTS_H
#define NS_RESULTS_H

#include <stddef.h>
#include <stdint.h>

#include "assets/ns_assets.h"
#include "common/ns_error.h"
#include "sweep/ns_journal.h"
#include "sweep/ns_sweep_config.h"
#include "sweep/ns_task.h"

#define NS_RESULTS_MISSING UINT64_MAX

/* The payloads themselves stay in the journal (they are written there anyway, durably): the
 * master keeps only where each lies, so its memory does not grow with the number of shards. The
 * reduction reads one (layer, head, normalizer) slice of every shard at a time. */
typedef struct ns_results {
    const ns_task_plan *plan;
    size_t n_shards;
    const ns_journal *journal; /* holds the payloads (set before ns_results_write) */
    uint64_t *offset;          /* (n_shards) payload offsets in the journal, NS_RESULTS_MISSING */
    int32_t *forward_count;    /* (n_shards) completed forward passes per shard */
    size_t n_done;
} ns_results;

int ns_results_init(ns_results *res, const ns_task_plan *plan, size_t n_shards, ns_err *err);
void ns_results_free(ns_results *res);

/* Record that shard's payload is stored at payload_offset of the journal. A second result for
 * the same shard is ignored (the first one wins; both are identical by construction) but still
 * counted as a forward pass. */
int ns_results_set(ns_results *res, uint64_t shard, uint64_t payload_offset, ns_err *err);
/* 1 if shard's result is recorded. */
int ns_results_has(const ns_results *res, uint64_t shard);

/* Everything the file records besides the values. Strings may be NULL ("unknown"). */
typedef struct ns_results_provenance {
    const char *command_line;
    const char *start_time, *end_time;   /* ISO 8601 UTC */
    const ns_asset_ref *model, *tokenizer, *corpus;
    long long mpi_size;
    const char *blas;                    /* name + version */
    size_t corpus_tokens;                /* tokens in the (stripped) corpus */
} ns_results_provenance;

/* Reduce and write the NetCDF file cfg->output (atomically). Every shard must be present
 * (NS_ERR_INVALID otherwise). Memory: one slice (n_shards x plan->per_head doubles) plus the
 * output arrays (and, with keep_samples, every per-row value). */
int ns_results_write(const ns_results *res, const ns_sweep_config *cfg,
                     const ns_results_provenance *prov, ns_err *err);

#endif

/* ns_sweep: the MPI sweep on a communicator the caller initialised: rank 0 reads, validates and
 * resolves the sweep and broadcasts the checked configuration, the model's shape and the shards'
 * tokens; then it hands out tasks (one shard each) from a work queue, journals every result and
 * computes tasks itself between servicing the workers; at the end every rank reduces a share of
 * the slices and rank 0 writes the NetCDF file. The only module that talks MPI.
 *
 * It neither initialises MPI, nor installs signal handlers, nor prints, nor exits: the caller
 * (src/cli) passes a stop flag its signal handlers set, and callbacks that show lines. */
#ifndef NS_SWEEP_H
#define NS_SWEEP_H

#include <mpi.h>
#include <signal.h>

#include "common/ns_error.h"
#include "common/ns_hooks.h"

typedef struct ns_sweep_options {
    const char *sweep_path;      /* NULL: the embedded default sweep */
    const char *output;          /* overrides the file's `output` when non-NULL */
    const char *checkpoint_dir;  /* overrides the file's `checkpoint_dir` when non-NULL */
    const char *model;           /* overrides the file's `model` when non-NULL (train-grid) */
    const struct ns_model_pin *model_pin; /* the model must be this one (NULL: any; see
                                             spec/ns_sweep_inputs.h) */
    int resume;                  /* continue from the journal in the checkpoint directory */
    const char *command_line;    /* the exact command (launcher and rank count included) */
    const char *institution;     /* recorded as the CF `institution` (NULL: unknown) */
    const char *segment_info;    /* this run segment's batch facts (Slurm job, nodes, restart) */
    const char *executable_sha256; /* the build that runs (recorded; verify compares it) */
    double stall_timeout;        /* seconds a busy rank may stay silent before the sweep stops
                                    (0: NS_SWEEP_STALL_TIMEOUT) */
    int uncompressed;            /* write the NetCDF file without shuffle and deflate */
    double boot_max_bytes;       /* the bootstrap's per-rank limit in bytes (0:
                                    NS_RESULTS_BOOT_MAX_BYTES; NORMSWEEP_BOOTSTRAP_MAX_BYTES) */
} ns_sweep_options;

#define NS_SWEEP_STALL_TIMEOUT 600.0

typedef struct ns_sweep_outcome {
    int rank, size;
    int unresponsive;            /* a rank stopped answering: MPI cannot be shut down cleanly,
                                    the caller should leave without MPI_Finalize */
    char summary[4096];          /* rank 0, after a complete run: the summary lines (findings
                                    about the bounds, n_crit per L beside the paper's 6 %) */
} ns_sweep_outcome;

/* Run the sweep on comm (every rank calls it). Returns the same status on every rank: NS_OK;
 * NS_ERR_INVALID / NS_ERR_FORMAT / NS_ERR_CHECKSUM for invalid input found before any work
 * (nothing written); NS_ERR_INTERRUPTED after a stop request (or a silent rank) with the journal
 * saved; other codes for runtime failures. Only rank 0 fills err's message. */
/* hooks (common/ns_hooks.h): every field is read. line: one message line (rank 0, diagnostics
 * too); progress: the task progress (rank 0); stop: checkpoint and stop. The test-only hold is
 * called at named points with a count, on the rank that reaches them: "opened" (0; every rank,
 * once rank 0 has locked the checkpoint directory and opened the journal, before the ranks look
 * for its lock record), "journal" (rank 0: the tasks in the journal, at the start of the task
 * loop and after each result recorded), "task" (a worker: the tasks it has reported, 0 before its
 * first; after a report it has not yet read the master's reply), "ready" (0; a worker: its first
 * request sent, the answer not yet read). */
int ns_sweep_run(MPI_Comm comm, const ns_sweep_options *opt, const ns_hooks *hooks,
                 ns_sweep_outcome *out, ns_err *err);

#endif

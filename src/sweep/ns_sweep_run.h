/* ns_sweep_run: the MPI sweep: rank 0 reads and validates the sweep and broadcasts it, then acts
 * as master (dynamic work queue of tasks = shards, journal, progress, merge, NetCDF output) while
 * also computing tasks itself between servicing requests; the other ranks are workers.
 * This is the only module that talks MPI. */
#ifndef NS_SWEEP_RUN_H
#define NS_SWEEP_RUN_H

#include "common/ns_error.h"

typedef struct ns_sweep_options {
    const char *sweep_path;      /* NULL: the embedded default sweep */
    const char *output;          /* overrides the file's `output` when non-NULL */
    const char *checkpoint_dir;  /* overrides the file's `checkpoint_dir` when non-NULL */
    int resume;                  /* continue from the journal in the checkpoint directory */
    const char *command_line;    /* recorded in the output */
} ns_sweep_options;

typedef struct ns_sweep_outcome {
    int rank;                    /* this process's MPI rank */
    int size;
    int finalized;               /* 0 when MPI could not be shut down cleanly (an unresponsive
                                    worker): the caller should exit at once */
} ns_sweep_outcome;

/* Run the whole sweep on this process: MPI_Init ... MPI_Finalize happen inside.
 * Returns the same status on every rank: NS_OK; NS_ERR_INVALID / NS_ERR_FORMAT / NS_ERR_CHECKSUM
 * for invalid input found before any work (nothing written); NS_ERR_INTERRUPTED after SIGTERM /
 * SIGINT with the journal saved; other codes for runtime failures. Only rank 0 fills err's
 * message (and prints validation diagnostics and progress on stderr); on other ranks the message
 * is empty. */
int ns_sweep_main(const ns_sweep_options *opt, ns_sweep_outcome *outcome, ns_err *err);

#endif

/* ns_train_grid_run: `normsweep train-grid` as library functions (docs/TRAIN.md, "Training
 * grids"). A grid is opened (the file read, each cell named and given its `normsweep train`
 * command line), the caller turns each command line into training options (the CLI's option
 * parser), the grid is checked before any work (the sweep file's schema, the models' context,
 * outputs against inputs, the output directory), then every rank runs it: the output directory
 * made and the grid file kept in it, and for each cell a training and a sweep of the model it
 * trained. It neither initialises MPI, nor prints, nor reads the environment: lines go through
 * the caller's hooks (common/ns_hooks.h), errors come back in ns_err. */
#ifndef NS_TRAIN_GRID_RUN_H
#define NS_TRAIN_GRID_RUN_H

#include <mpi.h>
#include <stddef.h>

#include "common/ns_error.h"
#include "common/ns_hooks.h"
#include "spec/ns_sweep_inputs.h"
#include "train/ns_train.h"
#include "traingrid/ns_train_grid.h"

/* The grid's copy of its file, kept in the output directory. */
#define NS_TRAIN_GRID_COPY "training.yaml"

typedef struct ns_train_grid_run {
    ns_train_grid g;            /* the grid file */
    const char *out;            /* the output directory (the caller's, else the file's out:) */
    char *sweep;                /* the sweep file found (NULL: the models are only trained) */
    int resume;                 /* continue a stopped grid */
    size_t n;                   /* cells */
    char **names, **model_dirs; /* per cell: "<normalizer>-T<T>[-s<seed>]", OUT/<name>/model */
    char ***argvs;              /* per cell: its `normsweep train` command line (owned here) */
    int *argcs;
    ns_train_options *opts;     /* per cell: filled by the caller from argvs (strings point into
                                   argvs); opts[i].resume is the grid's */
} ns_train_grid_run;

/* What every cell's training and sweep record about the run (may be NULL each). */
typedef struct ns_train_grid_provenance {
    const char *command_line, *institution, *executable_sha256;
} ns_train_grid_provenance;

/* Read the grid file at path (found by the caller), name its cells and make each cell's
 * `normsweep train` command line: the grid's train: options, then the cell's normalizer (and
 * ssmax's s), temperature and --out. out: the caller's output directory (NULL: the file's out:).
 * NS_ERR_INVALID / NS_ERR_FORMAT for a bad grid file (an unreadable one is NS_ERR_INVALID too:
 * the user named it), NS_ERR_NOMEM. r is zeroed first; free it with ns_train_grid_run_free
 * whatever the result. */
int ns_train_grid_open(ns_train_grid_run *r, const char *path, const char *out, int resume,
                       ns_err *err);

/* Every check that needs no MPI once the cells' options are filled (every rank makes it: they see
 * one file system): the sweep file's schema (its diagnostics appended to diags) and the models'
 * context against its shards.L_max; what the grid writes (its copy of the grid file and every
 * cell's directory) neither is nor holds what it reads (the grid file -- unless --resume names
 * the copy itself --, the sweep file, each cell's corpus, tokenizer and --init-from model given
 * as paths); the output directory new (or without a grid), or with --resume holding this grid.
 * NS_ERR_INVALID with the message to show, NS_ERR_IO, NS_ERR_NOMEM. */
int ns_train_grid_check(ns_train_grid_run *r, ns_sweep_diags *diags, ns_err *err);

/* Run the grid on comm (every rank calls it): rank 0 makes the output directory and keeps the
 * grid file; then each cell in order, "cell I of N: NAME" said first -- a cell whose sweep is
 * already written is kept ("done before, kept"); else its training (a stopped one resumes with
 * --resume), its summary said, then the sweep of its model into OUT/NAME/sweep.nc (checkpoint
 * OUT/NAME/sweep-checkpoint). hooks: as ns_train_run's and ns_sweep_run's (the same hooks serve
 * both). Returns the first failure's status with its message (the same status on every rank, as
 * ns_train_run and ns_sweep_run do): NS_ERR_INTERRUPTED after a stop, the cell's checkpoint
 * saved. *unresponsive (may be NULL) is set to 1 when a sweep found a rank that stopped
 * answering: MPI cannot be shut down cleanly then. */
int ns_train_grid_run_all(MPI_Comm comm, ns_train_grid_run *r, const ns_train_grid_provenance *p,
                          const ns_hooks *hooks, int *unresponsive, ns_err *err);

void ns_train_grid_run_free(ns_train_grid_run *r);

#endif

/* ns_run_archive: reproducibility archives of finished sweeps (`normsweep archive`): the NetCDF,
 * the sweep text, the journal, logs, provenance.json and MANIFEST.sha256. Conventions:
 * docs/ARCHIVE.md. */
#ifndef NS_RUN_ARCHIVE_H
#define NS_RUN_ARCHIVE_H

#include <signal.h>
#include <stdio.h>

#include "common/ns_error.h"
#include "common/ns_hooks.h"

#include "archive/ns_archive_layout.h"

typedef struct ns_run_archive_options {
    const char *run_dir;         /* the run directory (docs/ARCHIVE.md) */
    const char *nc;              /* the sweep's NetCDF file (NULL: the one *.nc in run_dir) */
    const char *checkpoint_dir;  /* NULL: run_dir/checkpoint, else NC.ckpt */
    const char *out;             /* the .tar.gz to write */
    int lean;                    /* leave the journal out: verify recomputes every task */
    int with_model;              /* pack the model's files (model/): a rerun needs no copy */
    /* line (user): one line per member added; NULL: silent. stop non-zero: stop writing, no
     * archive (NS_ERR_INTERRUPTED). The test-only hold: as ns_archive_write's. */
    ns_hooks hooks;
} ns_run_archive_options;

/* Pack a finished run into o->out (atomically). Errors the user can cause (missing run
 * directory, no or several NetCDF files, a file that is not a sweep output, no journal, a
 * half-finished run) give NS_ERR_INVALID with a message naming what is wrong; I/O problems
 * NS_ERR_IO. */
int ns_run_archive(const ns_run_archive_options *o, ns_err *err);

#endif

/* ns_datadir: where normsweep's data files are (the asset manifest, the sweep files, the Slurm
 * script, the docs): the installed $(pkgdatadir) for an installed normsweep, the source tree for
 * one run from its build directory, or NORMSWEEP_DATADIR when set. Both places share one layout:
 * assets/manifest.json, sweeps/, slurm/, docs/. */
#ifndef NS_DATADIR_H
#define NS_DATADIR_H

#include <stddef.h>

#include "common/ns_error.h"

/* Find the data file `rel` (a relative path such as "assets/manifest.json"): in NORMSWEEP_DATADIR
 * alone when that is set; else in the data directory that matches the running executable (the
 * source tree when it runs from its build tree, else the installed one), then in the other.
 * The path found goes to out; NS_ERR_IO names every place looked at when there is none. */
int ns_datadir_find(const char *rel, char *out, size_t out_len, ns_err *err);

/* A sweep file named on the command line: `path` itself when it exists or is absolute, else the
 * first of DATADIR/path and DATADIR/sweeps/path that exists (`normsweep sweeps/ablation.yaml` and
 * `normsweep ablation.yaml` work from any directory with normsweep installed). Returns a fresh
 * string (caller frees; `path` unchanged when nothing else matched), NULL on ENOMEM. */
char *ns_datadir_sweep(const char *path);

#endif

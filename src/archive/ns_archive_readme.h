/* ns_archive_readme: the README.txt a reproducibility archive carries, so that it explains itself
 * years later without this program's documentation: what the run was (model, inputs and their
 * SHA-256, grid, times, ranks), every library version the NetCDF file recorded (MPI, netCDF-C,
 * HDF5, BLAS, compiler, OS), what each member is, how to verify the archive and the exact
 * commands that reproduce the run from the archived sweep file. Text only; no I/O. */
#ifndef NS_ARCHIVE_README_H
#define NS_ARCHIVE_README_H

#include <stddef.h>
#include <stdint.h>

#include "common/ns_error.h"
#include "archive/ns_archive_model.h"
#include "io/ns_nc_read.h"

/* One member as the README lists it. */
typedef struct ns_readme_member {
    const char *name;
    uint64_t bytes;
} ns_readme_member;

/* README.txt for the archive `archive_name` (e.g. run.tar.gz) whose top directory is top, from
 * the NetCDF file's attributes (info) and the members, in the layout of archive format `format`
 * (2: as normsweep wrote it before format 3; 3: the rerun pinned to the model used, whose files
 * mf describes -- packed or needed -- and the lean archive's verification). Caller frees *text. */
int ns_archive_readme(const ns_nc_info *info, const char *archive_name, const char *top,
                      const char *nc_member, const ns_readme_member *members, size_t n,
                      int format, const ns_model_files *mf, char **text, ns_err *err);

/* The launcher part of a recorded command line: everything before the word that names the
 * normsweep executable ("mpirun -np 64 " for "mpirun -np 64 /opt/bin/normsweep run x.yaml"),
 * "" when the command starts with it. Into buf. */
void ns_archive_launcher(const char *command_line, char *buf, size_t size);

#endif

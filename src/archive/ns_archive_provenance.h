/* ns_archive_provenance: provenance.json's fields in one place -- the ones taken from the NetCDF
 * file (`run`, `inputs`) and the name of every field `archive` writes -- so that `archive` builds
 * the file and `verify` checks it from the same code: a field added to one is covered by the
 * other, or fails the check of an honest archive (docs/ARCHIVE.md). */
#ifndef NS_ARCHIVE_PROVENANCE_H
#define NS_ARCHIVE_PROVENANCE_H

#include <jansson.h>
#include <stddef.h>

#include "io/ns_nc_read.h"

/* provenance.json's `run`: what the NetCDF file records about the run (NULL when out of memory). */
json_t *ns_archive_prov_run(const ns_nc_info *info);

/* provenance.json's `inputs`: model, tokenizer and corpus as the NetCDF file records them. */
json_t *ns_archive_prov_inputs(const ns_nc_info *info);

/* The fields of a provenance.json object: section "" (the top level), "archiver", "machine",
 * "files" or "member" (one entry of files.members). NULL-terminated; NULL for another section. */
const char *const *ns_archive_prov_fields(const char *section);

/* One line of a run's history (CHECKPOINT_DIR/history, the NetCDF's `history` attribute): "TIME
 * normsweep VERSION (git SHORT): COMMAND on N rank(s) (host H[, in DIR][, slurm job ...])
 * [ [resumed]]; journal segment S" (", in DIR", the directory the command ran in, since format
 * 3 of the archives; "" when the line lacks it). */
typedef struct ns_history_line {
    char time[64], version[64], git[64];
    char command[4096];
    char cwd[4096];
    long long ranks;
} ns_history_line;

/* The last line of history, parsed; 0 when it has none of that form. */
int ns_archive_history_last(const char *history, ns_history_line *out);

/* The machine that makes an archive (provenance.json's `machine`). */
typedef struct ns_machine_info {
    char sysname[65], nodename[65], release[65], version[128], machine[65];
    char cpu_model[256];    /* /proc/cpuinfo "model name" (or "unknown") */
    long cores;             /* online processors */
    unsigned long long memory_bytes; /* physical memory */
} ns_machine_info;

/* Describe this machine (never fails: unknown fields are "unknown" / 0). */
void ns_machine_describe(ns_machine_info *m);

#endif

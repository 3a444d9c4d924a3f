/* ns_provenance: the global attributes of every file normsweep writes, built in one place: CF-1.8
 * discovery attributes (title, institution, source, history, references, comment), the software
 * and build, the inputs and their SHA-256, the run, and every decision of docs/METRICS.md that the
 * contract leaves open -- so a reader can tell from the file alone what was computed. */
#ifndef NS_PROVENANCE_H
#define NS_PROVENANCE_H

#include <stddef.h>

#include "common/ns_asset_ref.h"
#include "io/ns_nc_write.h"

/* The version of the metric contract (docs/METRICS.md) this build implements. */
#define NS_METRICS_VERSION 2

/* The build and machine a file describes (NULL strings are written as "unknown"). */
typedef struct ns_provenance_build {
    const char *normsweep_version, *git_commit, *compiler, *cflags;
    const char *netcdf_version, *hdf5_version, *os;
} ns_provenance_build;

/* What is known about a run (NULL strings are written as "unknown"). */
typedef struct ns_provenance {
    const char *kind;            /* "sweep" or "dump": the title's subject */
    const char *command_line;    /* the exact command (launcher and rank count included) */
    const char *history;         /* one line per run segment (newline-separated) */
    const char *institution;     /* CF institution (NORMSWEEP_INSTITUTION), NULL: unknown */
    const char *start_time, *end_time; /* ISO 8601 UTC */
    const ns_asset_ref *model, *tokenizer, *corpus;
    const char *model_requested; /* what the sweep or command asked for */
    const ns_nc_attr *model_attrs; /* the model's architecture (written after model_sha256), or
                                      NULL: the caller describes the model (io knows no models) */
    size_t n_model_attrs;
    long long mpi_size;
    const char *mpi_library;     /* MPI_Get_library_version, first line */
    const char *blas;            /* CBLAS name and version */
    const char *executable_sha256; /* SHA-256 of the normsweep executable that wrote the file */
    const char *sweep_file, *sweep_yaml;
    int strip_gutenberg;
    int all_softmax_family;      /* every normalizer ranks keys by logit (ranking_rule text) */
    int training;                /* a training log: the analysis decisions of METRICS.md (and the
                                    ranking rule, the sweep file) do not apply and are left out */
    const ns_provenance_build *build; /* NULL: this build on this machine (what a run writes);
                                         `verify` passes the recorded one to regenerate a file's
                                         attributes */
} ns_provenance;

/* Fill attrs (capacity cap) with the global attributes of prov; returns how many. The texts
 * point into prov's strings, string literals and buf (size bytes, which must outlive attrs). */
size_t ns_provenance_attrs(const ns_provenance *prov, ns_nc_attr *attrs, size_t cap, char *buf,
                           size_t size);

/* Upper bound on the attributes ns_provenance_attrs writes. */
#define NS_PROVENANCE_MAX_ATTRS 110

#endif

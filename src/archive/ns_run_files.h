/* ns_run_files: a finished run's files as archive members (docs/ARCHIVE.md, "The run directory"):
 * where the NetCDF and the checkpoint directory are, and every file of the checkpoint directory,
 * the logs and the report as a member with its permissions. Nothing is lost silently: a symbolic
 * link, a device, FIFO or socket among them, a name no member may have and two files that would
 * be one member are refused, naming them; what the run directory holds besides is listed. */
#ifndef NS_RUN_FILES_H
#define NS_RUN_FILES_H

#include <stddef.h>

#include "archive/ns_archive.h"
#include "common/ns_error.h"

/* The members so far (items[0..n)), with the strings they point to. */
typedef struct ns_run_files {
    ns_archive_source *items;
    char **owned;
    size_t n, cap, nowned, capowned;
} ns_run_files;

void ns_run_files_free(ns_run_files *l);

/* Add member name: the file at path (its permissions kept), or data[0..len) with permissions
 * mode. A name already taken is refused (NS_ERR_INVALID naming both sources). */
int ns_run_files_add(ns_run_files *l, const char *name, const char *path, const void *data,
                     size_t len, unsigned mode, ns_err *err);

/* Every file below dir as member prefix/RELATIVE-PATH, in name order: the entries directly in dir
 * that keep() accepts (NULL: all; the others are left out), and everything below the
 * subdirectories among them when recurse (else those are left out too). A symbolic link, a
 * device, FIFO or socket is refused, as is a name no member may have (NS_ERR_INVALID naming it). */
int ns_run_files_add_tree(ns_run_files *l, const char *dir, const char *prefix,
                          int (*keep)(const char *name), int recurse, ns_err *err);

/* The run's NetCDF: nc_opt (--nc; a link is followed: the user named it), else the one *.nc
 * directly in run_dir (NS_ERR_INVALID when none, several, or a link). *nc: the file to read (caller
 * frees); *member: the member's name (caller frees). */
int ns_run_files_find_nc(const char *run_dir, const char *nc_opt, char **nc, char **member,
                         ns_err *err);

/* The checkpoint directory: ckpt_opt (--checkpoint-dir), else run_dir/checkpoint, else NC.ckpt,
 * the first that holds the journal. Caller frees *dir. */
int ns_run_files_find_ckpt(const char *run_dir, const char *ckpt_opt, const char *nc, char **dir,
                           ns_err *err);

/* What run_dir holds that is not archived (not the NetCDF nc, the checkpoint directory ckpt, a
 * log or logs/, report/): "a, b, c" (at most 8 named, then "and N more") into buf; "" when
 * nothing. */
void ns_run_files_left_out(const char *run_dir, const char *nc, const char *ckpt, char *buf,
                           size_t size);

/* Whether a name directly in the run directory is a log (*.log, *.out, *.err). */
int ns_run_files_is_log(const char *name);

#endif

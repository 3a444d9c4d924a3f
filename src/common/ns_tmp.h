/* ns_tmp: one discipline for temporaries. A file is written as FINAL.tmp.<pid> beside its final
 * path (ns_file_temp_name) and renamed into place when complete; a scratch directory is
 * BASE/PREFIX.<pid>.XXXXXX. The writer removes its temporary on every failure and when it is told
 * to stop; the CLI removes the ones of its own process at exit (src/cli); and whatever a killed
 * process left is removed at the next start of a command that writes the same final path, when
 * it provably belongs to a dead process of ours: the exact name pattern, owned by this user, and
 * its process id no longer alive on this machine. Nothing here keeps global state. */
#ifndef NS_TMP_H
#define NS_TMP_H

#include <stddef.h>
#include <sys/types.h>

#include "common/ns_error.h"

/* Called with each path removed (NULL: silent). */
typedef void (*ns_tmp_removed_fn)(void *user, const char *path);

/* Remove FINAL.tmp.<pid> files of dead processes beside final. Returns how many were removed. */
size_t ns_tmp_remove_stale(const char *final, ns_tmp_removed_fn said, void *user);

/* Remove FINAL.tmp.<pid> of process pid (this process: getpid()), if present: 1 when removed. */
int ns_tmp_remove_own(const char *final, pid_t pid);

/* Create a fresh scratch directory BASE/PREFIX.<pid>.XXXXXX (mode 0700) into *dir (caller frees). */
int ns_tmp_make_dir(const char *base, const char *prefix, char **dir, ns_err *err);

/* Remove every BASE/PREFIX.<pid>.* directory (with its contents) of process pid (own: pid > 0)
 * or, with pid 0, of dead processes. Returns how many were removed. */
size_t ns_tmp_remove_dirs(const char *base, const char *prefix, pid_t pid, ns_tmp_removed_fn said,
                          void *user);

/* rm -r of path (symbolic links are removed, never followed); 0, or -1 when something stayed. */
int ns_tmp_remove_tree(const char *path);

/* The base directory of scratch directories: $TMPDIR, else /tmp. */
const char *ns_tmp_base(void);

#endif

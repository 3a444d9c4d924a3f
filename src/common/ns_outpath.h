/* ns_outpath: no command writes over what it reads. Before any work, every writing command (run,
 * dump, train, train-grid, archive) names what it will write and what it reads or must keep, and
 * this module refuses an output that is one of those paths or lies inside one of those
 * directories (or an input that lies inside an output directory). Paths are compared after
 * resolving symbolic links, "." and ".." (a path that does not exist yet is resolved through its
 * nearest existing ancestor), and by device and inode wherever they exist, so hard links and bind
 * mounts are seen too. */
#ifndef NS_OUTPATH_H
#define NS_OUTPATH_H

#include <stddef.h>

#include "common/ns_error.h"

typedef struct ns_outpath_role {
    const char *what;   /* how the message names it: "the corpus", "the checkpoint directory" */
    const char *path;   /* as the user gave it (NULL: the role is skipped) */
    int tree;           /* 1: a directory, everything inside it counts */
} ns_outpath_role;

/* NS_OK, or NS_ERR_INVALID naming both paths: "OUT.what OUT.path is IN.what IN.path",
 * "... lies inside IN.what IN.path", or "IN.what IN.path lies inside OUT.what OUT.path" (out a
 * tree). NS_ERR_NOMEM. */
int ns_outpath_check(const ns_outpath_role *out, const ns_outpath_role *inputs, size_t n,
                     ns_err *err);

/* The absolute form of path with symbolic links, "." and ".." resolved as far as the path exists
 * (the rest lexically): a fresh string (caller frees), NULL when out of memory or the current
 * directory cannot be named. */
char *ns_outpath_resolve(const char *path);

#endif

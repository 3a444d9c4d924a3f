/* ns_datadir: locate normsweep's data files (manifest, sweeps, Slurm script, docs) in the data
 * directory of this build: configure's $(pkgdatadir) and source tree are compiled in. */
#include "common/ns_datadir.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/ns_file.h"

#ifndef NS_ABS_TOP_SRCDIR
#define NS_ABS_TOP_SRCDIR ""
#endif
#ifndef NS_ABS_TOP_BUILDDIR
#define NS_ABS_TOP_BUILDDIR ""
#endif
#ifndef NS_PKGDATADIR
#define NS_PKGDATADIR ""
#endif

/* 1 when the running executable lies in the build tree it was compiled in. */
static int running_from_build_tree(void)
{
    char exe[PATH_MAX], top[PATH_MAX];
    if (!NS_ABS_TOP_BUILDDIR[0] || !realpath("/proc/self/exe", exe) ||
        !realpath(NS_ABS_TOP_BUILDDIR, top))
        return 0;
    size_t n = strlen(top);
    return strncmp(exe, top, n) == 0 && exe[n] == '/';
}

int ns_datadir_find(const char *rel, char *out, size_t out_len, ns_err *err)
{
    const char *env = getenv("NORMSWEEP_DATADIR");
    const char *dirs[2] = {NS_PKGDATADIR, NS_ABS_TOP_SRCDIR};
    size_t n = 2;
    if (env && *env) {
        dirs[0] = env;
        n = 1;
    } else if (running_from_build_tree()) {
        dirs[0] = NS_ABS_TOP_SRCDIR;
        dirs[1] = NS_PKGDATADIR;
    }
    char looked[2 * PATH_MAX + 64] = "";
    for (size_t i = 0; i < n; i++) {
        if (!dirs[i][0])
            continue;
        char path[PATH_MAX], real[PATH_MAX];
        snprintf(path, sizeof path, "%s/%s", dirs[i], rel);
        if (ns_file_exists(path)) {
            /* abs_top_srcdir of a VPATH build can hold "sub/../.." parts: show the plain path */
            snprintf(out, out_len, "%s", realpath(path, real) ? real : path);
            return NS_OK;
        }
        size_t k = strlen(looked);
        snprintf(looked + k, sizeof looked - k, "%s%s", k ? " nor " : "", path);
    }
    return ns_fail(err, NS_ERR_IO, "%s not found (not at %s%s)", rel, looked[0] ? looked : "-",
                   env && *env ? "; NORMSWEEP_DATADIR is set" : "");
}

char *ns_datadir_sweep(const char *path)
{
    if (path[0] == '/' || ns_file_exists(path))
        return strdup(path);
    char found[PATH_MAX];
    ns_err err;
    if (ns_datadir_find(path, found, sizeof found, &err) == NS_OK)
        return strdup(found);
    char *in_sweeps = ns_str_printf("sweeps/%s", path);
    if (!in_sweeps)
        return NULL;
    int ok = ns_datadir_find(in_sweeps, found, sizeof found, &err) == NS_OK;
    free(in_sweeps);
    return strdup(ok ? found : path);
}

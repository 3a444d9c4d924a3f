/* ns_nc: io's NetCDF error rule (ns_nc_internal.h): the message of a failed NetCDF call, with
 * the likely cause read from the file's directory. */
#include "io/ns_nc_internal.h"

#include <errno.h>
#include <libgen.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/statvfs.h>
#include <unistd.h>

#define NS_NC_LOW_SPACE (1024.0 * 1024.0) /* bytes: below this a failed write is a full disk */

/* The likely cause of a failed write or create, judged from the directory of path: a read-only
 * file system, a directory that cannot be written, less than 1 MiB free, else errno as the
 * library left it when it names a disk problem; "" when nothing is known. */
static void likely_cause(const char *path, int saved_errno, char *why, size_t size)
{
    why[0] = 0;
    char *copy = strdup(path);
    if (!copy)
        return;
    const char *dir = dirname(copy);
    struct statvfs vs;
    int have_vs = statvfs(dir, &vs) == 0;
    if (have_vs && (vs.f_flag & ST_RDONLY)) {
        snprintf(why, size, "%s", strerror(EROFS));
    } else if (access(dir, W_OK | X_OK) != 0) {
        snprintf(why, size, "%s", strerror(errno));
    } else if (have_vs && (double)vs.f_bavail * (double)vs.f_frsize < NS_NC_LOW_SPACE) {
        snprintf(why, size, "%s: %.0f kB free in %s", strerror(ENOSPC),
                 (double)vs.f_bavail * (double)vs.f_frsize / 1024.0, dir);
    } else if (saved_errno == ENOSPC || saved_errno == EDQUOT || saved_errno == EIO ||
               saved_errno == EROFS) {
        snprintf(why, size, "%s", strerror(saved_errno));
    }
    free(copy);
}

int ns_nc_fail(ns_err *err, const char *path, int nc_rc, int saved_errno, const char *fmt, ...)
{
    char what[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(what, sizeof what, fmt, ap);
    va_end(ap);
    int rc = ns_fail(err, NS_ERR_LIBRARY, "%s: %s: %s", path, what, nc_strerror(nc_rc));
    char why[256];
    likely_cause(path, saved_errno, why, sizeof why);
    if (why[0] && !strstr(err->msg, why)) { /* the message may already say it */
        size_t n = strlen(err->msg);
        snprintf(err->msg + n, sizeof err->msg - n, " (probably: %s)", why);
    }
    return rc;
}

/* ns_nc_internal: io's one NetCDF error rule (private to src/io). A failed NetCDF call becomes
 * "PATH: WHAT: nc_strerror", plus " (probably: CAUSE)" when the file's directory shows why
 * (read-only file system, no write permission, under 1 MiB free, or errno naming a disk
 * problem): NetCDF and HDF5 report a full disk only as "HDF error". */
#ifndef NS_NC_INTERNAL_H
#define NS_NC_INTERNAL_H

#include <errno.h>
#include <netcdf.h>

#include "common/ns_error.h"

/* Fill err as above and return NS_ERR_LIBRARY. path: the file being written (its directory is
 * examined; call before the file is removed, which would free its space); nc_rc: the NetCDF
 * status; saved_errno: errno right after the failed call; fmt...: what was being done. */
int ns_nc_fail(ns_err *err, const char *path, int nc_rc, int saved_errno, const char *fmt, ...)
    __attribute__((format(printf, 5, 6)));

/* Run a NetCDF call; on failure return ns_nc_fail(err, path, status, errno, fmt...) from the
 * enclosing function, which has an ns_err *err. */
#define NC_TRY(path, call, ...)                                                           \
    do {                                                                                  \
        errno = 0;                                                                        \
        int nc_rc_ = (call);                                                              \
        if (nc_rc_ != NC_NOERR)                                                           \
            return ns_nc_fail(err, (path), nc_rc_, errno, __VA_ARGS__);                   \
    } while (0)

#endif

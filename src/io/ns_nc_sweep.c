/* ns_nc_sweep: the sweep NetCDF-4 writer (see ns_nc_sweep.h). */
#include "io/ns_nc_sweep.h"

#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <math.h>
#include <netcdf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include "common/ns_file.h"

#define NS_NC_LOW_SPACE (1024.0 * 1024.0) /* bytes: below this a failed write is a full disk */

/* NetCDF/HDF5 report a failed write or create as "NetCDF: HDF error" or a bare errno text: add
 * the likely cause, judged from the directory of path (call before the file is removed, which
 * would free its space): a read-only file system, a directory that cannot be written, less than
 * 1 MiB free, else errno as the library left it when it names a disk problem. */
static void add_likely_cause(ns_err *err, const char *path, int saved_errno)
{
    char *copy = strdup(path);
    if (!copy)
        return;
    const char *dir = dirname(copy);
    char why[256] = "";
    struct statvfs vs;
    int have_vs = statvfs(dir, &vs) == 0;
    if (have_vs && (vs.f_flag & ST_RDONLY)) {
        snprintf(why, sizeof why, "%s", strerror(EROFS));
    } else if (access(dir, W_OK | X_OK) != 0) {
        snprintf(why, sizeof why, "%s", strerror(errno));
    } else if (have_vs && (double)vs.f_bavail * (double)vs.f_frsize < NS_NC_LOW_SPACE) {
        snprintf(why, sizeof why, "%s: %.0f kB free in %s", strerror(ENOSPC),
                 (double)vs.f_bavail * (double)vs.f_frsize / 1024.0, dir);
    } else if (saved_errno == ENOSPC || saved_errno == EDQUOT || saved_errno == EIO ||
               saved_errno == EROFS) {
        snprintf(why, sizeof why, "%s", strerror(saved_errno));
    }
    free(copy);
    if (!why[0] || strstr(err->msg, why))
        return; /* nothing known, or the message already says it */
    size_t n = strlen(err->msg);
    snprintf(err->msg + n, sizeof err->msg - n, " (probably: %s)", why);
}

#define NC_TRY(call, ...)                                                               \
    do {                                                                                \
        errno = 0;                                                                      \
        int nc_rc_ = (call);                                                            \
        if (nc_rc_ != NC_NOERR) {                                                       \
            int errno_ = errno;                                                         \
            char ctx_[512];                                                             \
            snprintf(ctx_, sizeof ctx_, __VA_ARGS__);                                   \
            rc = ns_fail(err, NS_ERR_LIBRARY, "%s: %s: %s", tmp, ctx_, nc_strerror(nc_rc_)); \
            add_likely_cause(err, tmp, errno_);                                         \
            goto fail;                                                                  \
        }                                                                               \
    } while (0)

static int put_text(int ncid, int varid, const char *name, const char *text)
{
    return nc_put_att_text(ncid, varid, name, strlen(text), text);
}

static int sync_file(const char *path, ns_err *err)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return ns_fail(err, NS_ERR_IO, "open %s: %s", path, strerror(errno));
    int bad = fsync(fd) != 0;
    close(fd);
    if (bad)
        return ns_fail(err, NS_ERR_IO, "fsync %s: %s", path, strerror(errno));
    return NS_OK;
}

int ns_nc_sweep_write(const char *path, const ns_nc_sweep_desc *d, ns_err *err)
{
    int rc = NS_OK, ncid = -1;
    int *dimids = NULL, *varids = NULL;
    char *tmp = ns_file_temp_name(path);
    if (!tmp)
        return ns_fail(err, NS_ERR_NOMEM, "out of memory");
    dimids = calloc(d->ndims + 1, sizeof *dimids);
    varids = calloc(d->nvars + 1, sizeof *varids);
    if (!dimids || !varids) {
        rc = ns_fail(err, NS_ERR_NOMEM, "out of memory");
        goto fail;
    }
    NC_TRY(nc_create(tmp, NC_NETCDF4 | NC_CLOBBER, &ncid), "create");
    for (size_t i = 0; i < d->ndims; i++)
        NC_TRY(nc_def_dim(ncid, d->dims[i].name, d->dims[i].len, &dimids[i]), "dimension %s",
               d->dims[i].name);
    for (size_t v = 0; v < d->nvars; v++) {
        const ns_nc_var *var = &d->vars[v];
        int vd[NS_NC_MAX_DIMS];
        if (var->ndims > NS_NC_MAX_DIMS) {
            rc = ns_fail(err, NS_ERR_INVALID, "variable %s: too many dimensions", var->name);
            goto fail;
        }
        for (size_t k = 0; k < var->ndims; k++) {
            size_t i = 0;
            while (i < d->ndims && strcmp(d->dims[i].name, var->dims[k]) != 0)
                i++;
            if (i == d->ndims) {
                rc = ns_fail(err, NS_ERR_INVALID, "variable %s: unknown dimension %s", var->name,
                             var->dims[k]);
                goto fail;
            }
            vd[k] = dimids[i];
        }
        nc_type t = var->type == NS_NC_INT ? NC_INT : var->type == NS_NC_DOUBLE ? NC_DOUBLE : NC_STRING;
        NC_TRY(nc_def_var(ncid, var->name, t, (int)var->ndims, vd, &varids[v]), "variable %s",
               var->name);
        int is_coord = var->ndims == 1 && strcmp(var->dims[0], var->name) == 0;
        if (var->ndims >= 1 && !is_coord && var->type != NS_NC_STRING)
            NC_TRY(nc_def_var_deflate(ncid, varids[v], 1, 1, 1), "deflate %s", var->name);
        if (is_coord) {
            /* coordinates are never missing: no _FillValue (CF) */
        } else if (var->type == NS_NC_DOUBLE) {
            double fill = NAN;
            NC_TRY(nc_def_var_fill(ncid, varids[v], 0, &fill), "_FillValue of %s", var->name);
        } else if (var->type == NS_NC_INT) {
            int fill = -1;
            NC_TRY(nc_def_var_fill(ncid, varids[v], 0, &fill), "_FillValue of %s", var->name);
        }
        if (var->long_name)
            NC_TRY(put_text(ncid, varids[v], "long_name", var->long_name), "long_name of %s",
                   var->name);
        if (var->units)
            NC_TRY(put_text(ncid, varids[v], "units", var->units), "units of %s", var->name);
        if (var->attr_name && var->attr_text)
            NC_TRY(put_text(ncid, varids[v], var->attr_name, var->attr_text), "%s of %s",
                   var->attr_name, var->name);
    }
    for (size_t a = 0; a < d->nattrs; a++) {
        const ns_nc_attr *at = &d->attrs[a];
        if (at->text)
            NC_TRY(put_text(ncid, NC_GLOBAL, at->name, at->text), "attribute %s", at->name);
        else if (at->is_double)
            NC_TRY(nc_put_att_double(ncid, NC_GLOBAL, at->name, NC_DOUBLE, 1, &at->dval),
                   "attribute %s", at->name);
        else
            NC_TRY(nc_put_att_longlong(ncid, NC_GLOBAL, at->name, NC_INT64, 1, &at->ival),
                   "attribute %s", at->name);
    }
    NC_TRY(nc_enddef(ncid), "enddef");
    for (size_t v = 0; v < d->nvars; v++) {
        const ns_nc_var *var = &d->vars[v];
        if (!var->data)
            continue;
        if (var->type == NS_NC_DOUBLE)
            NC_TRY(nc_put_var_double(ncid, varids[v], var->data), "write %s", var->name);
        else if (var->type == NS_NC_INT)
            NC_TRY(nc_put_var_int(ncid, varids[v], var->data), "write %s", var->name);
        else
            NC_TRY(nc_put_var_string(ncid, varids[v], (const char **)var->data), "write %s",
                   var->name);
    }
    errno = 0;
    int c = nc_close(ncid);
    int close_errno = errno;
    ncid = -1;
    if (c != NC_NOERR) {
        rc = ns_fail(err, NS_ERR_LIBRARY, "%s: close: %s", tmp, nc_strerror(c));
        add_likely_cause(err, tmp, close_errno);
        goto fail;
    }
    if ((rc = sync_file(tmp, err)) != NS_OK)
        goto fail;
    if (rename(tmp, path) != 0) {
        rc = ns_fail(err, NS_ERR_IO, "rename %s to %s: %s", tmp, path, strerror(errno));
        goto fail;
    }
    rc = ns_file_sync_parent_dir(path, err);
    free(tmp);
    free(dimids);
    free(varids);
    return rc;
fail:
    if (ncid >= 0)
        nc_close(ncid);
    unlink(tmp);
    free(tmp);
    free(dimids);
    free(varids);
    return rc;
}

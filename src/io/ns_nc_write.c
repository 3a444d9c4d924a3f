/* ns_nc_write: the NetCDF-4 writer (see ns_nc_write.h). */
#include "io/ns_nc_write.h"

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <netcdf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/ns_file.h"
#include "io/ns_nc_internal.h"

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

void ns_nc_var_text(ns_nc_var *v, const char *name, const char *text)
{
    if (v->nattrs < NS_NC_MAX_ATTRS && text)
        v->attrs[v->nattrs++] = (ns_nc_attr){.name = name, .text = text};
}

void ns_nc_var_int(ns_nc_var *v, const char *name, int value)
{
    if (v->nattrs < NS_NC_MAX_ATTRS)
        v->attrs[v->nattrs++] = (ns_nc_attr){.name = name, .ival = value, .is_int32 = 1};
}

void ns_nc_var_ints(ns_nc_var *v, const char *name, const int *values, size_t n)
{
    if (v->nattrs < NS_NC_MAX_ATTRS && n > 0)
        v->attrs[v->nattrs++] = (ns_nc_attr){.name = name, .ints = values, .nints = n};
}

size_t ns_nc_var_len(const ns_nc_desc *d, const ns_nc_var *v)
{
    size_t n = 1;
    for (size_t k = 0; k < v->ndims; k++)
        for (size_t i = 0; i < d->ndims; i++)
            if (strcmp(d->dims[i].name, v->dims[k]) == 0)
                n *= d->dims[i].len;
    return n;
}

int ns_nc_put_attr(int ncid, int varid, const ns_nc_attr *at)
{
    if (at->text)
        return put_text(ncid, varid, at->name, at->text);
    if (at->nints)
        return nc_put_att_int(ncid, varid, at->name, NC_INT, at->nints, at->ints);
    if (at->is_double)
        return nc_put_att_double(ncid, varid, at->name, NC_DOUBLE, 1, &at->dval);
    if (at->is_int32) {
        int v = (int)at->ival;
        return nc_put_att_int(ncid, varid, at->name, NC_INT, 1, &v);
    }
    return nc_put_att_longlong(ncid, varid, at->name, NC_INT64, 1, &at->ival);
}

/* Define one variable (dimensions, compression, fill, attributes) in tmp. */
static int define_var(int ncid, const ns_nc_desc *d, const int *dimids, const ns_nc_var *var,
                      int *varid, const char *tmp, ns_err *err)
{
    int vd[NS_NC_MAX_DIMS];
    if (var->ndims > NS_NC_MAX_DIMS)
        return ns_fail(err, NS_ERR_INVALID, "variable %s: too many dimensions", var->name);
    for (size_t k = 0; k < var->ndims; k++) {
        size_t i = 0;
        while (i < d->ndims && strcmp(d->dims[i].name, var->dims[k]) != 0)
            i++;
        if (i == d->ndims)
            return ns_fail(err, NS_ERR_INVALID, "variable %s: unknown dimension %s", var->name,
                           var->dims[k]);
        vd[k] = dimids[i];
    }
    nc_type t = var->type == NS_NC_INT ? NC_INT : var->type == NS_NC_DOUBLE ? NC_DOUBLE : NC_CHAR;
    NC_TRY(tmp, nc_def_var(ncid, var->name, t, (int)var->ndims, vd, varid), "variable %s",
           var->name);
    int is_coord = var->ndims == 1 && strcmp(var->dims[0], var->name) == 0;
    if (var->ndims >= 1 && !is_coord && var->type != NS_NC_CHAR && !d->uncompressed)
        NC_TRY(tmp, nc_def_var_deflate(ncid, *varid, 1, 1, NS_NC_DEFLATE_LEVEL), "deflate %s",
               var->name);
    if (is_coord || var->fill == NS_FILL_NONE || var->type == NS_NC_CHAR) {
        NC_TRY(tmp, nc_def_var_fill(ncid, *varid, NC_NOFILL, NULL), "fill mode of %s", var->name);
    } else if (var->type == NS_NC_DOUBLE) {
        double fill = NAN;
        NC_TRY(tmp, nc_def_var_fill(ncid, *varid, 0, &fill), "_FillValue of %s", var->name);
    } else {
        int fill = -1;
        NC_TRY(tmp, nc_def_var_fill(ncid, *varid, 0, &fill), "_FillValue of %s", var->name);
    }
    for (size_t a = 0; a < var->nattrs; a++)
        NC_TRY(tmp, ns_nc_put_attr(ncid, *varid, &var->attrs[a]), "%s of %s",
               var->attrs[a].name, var->name);
    return NS_OK;
}

/* Everything of d into the open file ncid (named tmp): dimensions, variables, attributes, the
 * end of define mode, the data. dimids and varids hold d's dimensions and variables. */
static int write_desc(int ncid, const char *tmp, const ns_nc_desc *d, int *dimids, int *varids,
                      ns_err *err)
{
    for (size_t i = 0; i < d->ndims; i++)
        NC_TRY(tmp, nc_def_dim(ncid, d->dims[i].name, d->dims[i].len, &dimids[i]),
               "dimension %s", d->dims[i].name);
    for (size_t v = 0; v < d->nvars; v++)
        NS_TRY(define_var(ncid, d, dimids, &d->vars[v], &varids[v], tmp, err));
    for (size_t a = 0; a < d->nattrs; a++)
        NC_TRY(tmp, ns_nc_put_attr(ncid, NC_GLOBAL, &d->attrs[a]), "attribute %s",
               d->attrs[a].name);
    NC_TRY(tmp, nc_enddef(ncid), "enddef");
    for (size_t v = 0; v < d->nvars; v++) {
        const ns_nc_var *var = &d->vars[v];
        if (!var->data)
            continue;
        if (var->type == NS_NC_DOUBLE)
            NC_TRY(tmp, nc_put_var_double(ncid, varids[v], var->data), "write %s", var->name);
        else if (var->type == NS_NC_INT)
            NC_TRY(tmp, nc_put_var_int(ncid, varids[v], var->data), "write %s", var->name);
        else
            NC_TRY(tmp, nc_put_var_text(ncid, varids[v], var->data), "write %s", var->name);
    }
    return NS_OK;
}

/* Create tmp, write d into it and close it (on failure it is closed, not removed). */
static int write_temp(const char *tmp, const ns_nc_desc *d, ns_err *err)
{
    int ncid = -1;
    int *dimids = calloc(d->ndims + 1, sizeof *dimids);
    int *varids = calloc(d->nvars + 1, sizeof *varids);
    int rc = dimids && varids ? NS_OK : ns_fail(err, NS_ERR_NOMEM, "out of memory");
    if (rc == NS_OK) {
        errno = 0;
        int c = nc_create(tmp, NC_NETCDF4 | NC_CLOBBER, &ncid);
        if (c != NC_NOERR) {
            rc = ns_nc_fail(err, tmp, c, errno, "create");
            ncid = -1;
        }
    }
    if (rc == NS_OK)
        rc = write_desc(ncid, tmp, d, dimids, varids, err);
    free(dimids);
    free(varids);
    if (ncid < 0)
        return rc;
    if (rc != NS_OK) {
        nc_close(ncid);
        return rc;
    }
    errno = 0;
    int c = nc_close(ncid);
    return c == NC_NOERR ? NS_OK : ns_nc_fail(err, tmp, c, errno, "close");
}

int ns_nc_write(const char *path, const ns_nc_desc *d, ns_err *err)
{
    char *tmp = ns_file_temp_name(path);
    if (!tmp)
        return ns_fail(err, NS_ERR_NOMEM, "out of memory");
    int rc = write_temp(tmp, d, err);
    if (rc == NS_OK)
        rc = sync_file(tmp, err);
    if (rc == NS_OK && rename(tmp, path) != 0)
        rc = ns_fail(err, NS_ERR_IO, "rename %s to %s: %s", tmp, path, strerror(errno));
    if (rc == NS_OK) {
        rc = ns_file_sync_parent_dir(path, err);
    } else {
        unlink(tmp);
    }
    free(tmp);
    return rc;
}

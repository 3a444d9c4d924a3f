/* ns_nc_read: global attributes and dimensions of a NetCDF file (see ns_nc_read.h). */
#include "io/ns_nc_read.h"

#include <errno.h>
#include <netcdf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* Names come from the file: NetCDF-C copies them into caller buffers without a length
 * argument, and its HDF5 layer allows a few bytes past NC_MAX_NAME. A buffer far larger than
 * any name the library accepts keeps a hostile file from writing past it. */
#define NS_NC_NAME_BUF (16 * (NC_MAX_NAME + 1))

/* Only NetCDF-4 (HDF5, signature at offset 0) is read: that is what normsweep writes. Classic
 * (CDF-1/2/5) headers are refused before NetCDF-C parses them, because it trusts their counts
 * and name lengths (a few hundred bytes can make it allocate gigabytes). */
static int check_signature(const char *path, ns_err *err)
{
    static const unsigned char hdf5[8] = {0x89, 'H', 'D', 'F', '\r', '\n', 0x1a, '\n'};
    unsigned char head[8];
    FILE *f = fopen(path, "rb");
    if (!f)
        return ns_fail(err, NS_ERR_IO, "%s: %s", path, strerror(errno));
    size_t n = fread(head, 1, sizeof head, f);
    fclose(f);
    if (n == sizeof head && memcmp(head, hdf5, sizeof head) == 0)
        return NS_OK;
    if (n >= 4 && memcmp(head, "CDF", 3) == 0)
        return ns_fail(err, NS_ERR_FORMAT, "%s: classic NetCDF format; normsweep outputs are "
                       "NetCDF-4 (HDF5) files", path);
    return ns_fail(err, NS_ERR_FORMAT, "%s: not a NetCDF-4 (HDF5) file", path);
}

void ns_nc_info_free(ns_nc_info *info)
{
    if (!info)
        return;
    for (size_t i = 0; i < info->nattrs; i++) {
        free(info->attrs[i].name);
        free(info->attrs[i].text);
    }
    for (size_t i = 0; i < info->ndims; i++)
        free(info->dims[i].name);
    free(info->attrs);
    free(info->dims);
    memset(info, 0, sizeof *info);
}

static int nc_err(ns_err *err, int code, const char *path, const char *what)
{
    return ns_fail(err, code == NC_ENOTNC || code == NC_EHDFERR ? NS_ERR_FORMAT : NS_ERR_IO,
                   "%s: %s%s%s", path, what, *what ? ": " : "", nc_strerror(code));
}

/* Read global attribute number i into a. */
static int read_attr(int ncid, int i, ns_nc_info_attr *a, const char *path, ns_err *err)
{
    char name[NS_NC_NAME_BUF];
    nc_type type;
    size_t len;
    int rc;
    if ((rc = nc_inq_attname(ncid, NC_GLOBAL, i, name)) != NC_NOERR ||
        (rc = nc_inq_att(ncid, NC_GLOBAL, name, &type, &len)) != NC_NOERR)
        return nc_err(err, rc, path, "global attribute");
    if (!(a->name = strdup(name)))
        return ns_fail(err, NS_ERR_NOMEM, "out of memory");
    if (type == NC_CHAR) {
        if (!(a->text = malloc(len + 1)))
            return ns_fail(err, NS_ERR_NOMEM, "out of memory");
        if ((rc = nc_get_att_text(ncid, NC_GLOBAL, name, a->text)) != NC_NOERR)
            return nc_err(err, rc, path, name);
        a->text[len] = 0;
    } else if (type == NC_STRING && len == 1) {
        char *s = NULL;
        if ((rc = nc_get_att_string(ncid, NC_GLOBAL, name, &s)) != NC_NOERR)
            return nc_err(err, rc, path, name);
        a->text = strdup(s ? s : "");
        nc_free_string(1, &s);
        if (!a->text)
            return ns_fail(err, NS_ERR_NOMEM, "out of memory");
    } else if (len == 1 && (type == NC_BYTE || type == NC_SHORT || type == NC_INT ||
                            type == NC_INT64 || type == NC_UBYTE || type == NC_USHORT ||
                            type == NC_UINT || type == NC_UINT64)) {
        if ((rc = nc_get_att_longlong(ncid, NC_GLOBAL, name, &a->ival)) != NC_NOERR)
            return nc_err(err, rc, path, name);
        a->is_int = 1;
    } else if (len == 1 && (type == NC_FLOAT || type == NC_DOUBLE)) {
        if ((rc = nc_get_att_double(ncid, NC_GLOBAL, name, &a->dval)) != NC_NOERR)
            return nc_err(err, rc, path, name);
        a->is_double = 1;
    }
    return NS_OK;
}

int ns_nc_info_read(const char *path, ns_nc_info *out, ns_err *err)
{
    memset(out, 0, sizeof *out);
    if (access(path, R_OK) != 0)
        return ns_fail(err, NS_ERR_IO, "%s: %s", path, strerror(errno));
    int ncid, rc, st = NS_OK, natts = 0, ndims = 0;
    int *dimids = NULL;
    NS_TRY(check_signature(path, err));
    if ((rc = nc_open(path, NC_NOWRITE, &ncid)) != NC_NOERR)
        return ns_fail(err, NS_ERR_FORMAT, "%s: not a readable NetCDF file: %s", path,
                       nc_strerror(rc));
    if ((rc = nc_inq(ncid, &ndims, NULL, &natts, NULL)) != NC_NOERR) {
        st = nc_err(err, rc, path, "");
        goto done;
    }
    out->attrs = calloc((size_t)natts + 1, sizeof *out->attrs);
    out->dims = calloc((size_t)ndims + 1, sizeof *out->dims);
    if (!out->attrs || !out->dims) {
        st = ns_fail(err, NS_ERR_NOMEM, "out of memory");
        goto done;
    }
    for (int i = 0; i < natts; i++) {
        out->nattrs++;
        if ((st = read_attr(ncid, i, &out->attrs[i], path, err)) != NS_OK)
            goto done;
    }
    int nd = 0;
    if ((rc = nc_inq_dimids(ncid, &nd, NULL, 0)) != NC_NOERR) {
        st = nc_err(err, rc, path, "dimensions");
        goto done;
    }
    if (!(dimids = malloc(((size_t)nd + 1) * sizeof *dimids))) {
        st = ns_fail(err, NS_ERR_NOMEM, "out of memory");
        goto done;
    }
    if ((rc = nc_inq_dimids(ncid, &nd, dimids, 0)) != NC_NOERR) {
        st = nc_err(err, rc, path, "dimensions");
        goto done;
    }
    for (int i = 0; i < nd && i < ndims; i++) {
        char name[NS_NC_NAME_BUF];
        size_t len;
        if ((rc = nc_inq_dim(ncid, dimids[i], name, &len)) != NC_NOERR) {
            st = nc_err(err, rc, path, "dimension");
            goto done;
        }
        if (!(out->dims[i].name = strdup(name))) {
            st = ns_fail(err, NS_ERR_NOMEM, "out of memory");
            goto done;
        }
        out->dims[i].len = len;
        out->ndims++;
    }
done:
    free(dimids);
    nc_close(ncid);
    if (st != NS_OK)
        ns_nc_info_free(out);
    return st;
}

const char *ns_nc_info_text(const ns_nc_info *info, const char *name)
{
    for (size_t i = 0; i < info->nattrs; i++)
        if (info->attrs[i].name && strcmp(info->attrs[i].name, name) == 0)
            return info->attrs[i].text;
    return NULL;
}

int ns_nc_info_int(const ns_nc_info *info, const char *name, long long *out)
{
    for (size_t i = 0; i < info->nattrs; i++)
        if (info->attrs[i].name && strcmp(info->attrs[i].name, name) == 0 && info->attrs[i].is_int) {
            *out = info->attrs[i].ival;
            return 1;
        }
    return 0;
}

int ns_nc_info_double(const ns_nc_info *info, const char *name, double *out)
{
    for (size_t i = 0; i < info->nattrs; i++)
        if (info->attrs[i].name && strcmp(info->attrs[i].name, name) == 0 &&
            info->attrs[i].is_double) {
            *out = info->attrs[i].dval;
            return 1;
        }
    return 0;
}


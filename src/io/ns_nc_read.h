/* ns_nc_read: read a NetCDF file's global attributes (text and integers) and dimension lengths,
 * e.g. the provenance a sweep file records (docs/OUTPUT.md), for `archive` and `verify`. */
#ifndef NS_NC_READ_H
#define NS_NC_READ_H

#include <stddef.h>

#include "common/ns_error.h"

typedef struct ns_nc_info_attr {
    char *name;
    char *text;          /* text attributes (NC_CHAR or a single NC_STRING); NULL otherwise */
    int is_int;          /* a single integer (any NetCDF integer type) in ival */
    long long ival;
    int is_double;       /* a single float or double in dval */
    double dval;
} ns_nc_info_attr;

typedef struct ns_nc_info_dim {
    char *name;
    size_t len;
} ns_nc_info_dim;

typedef struct ns_nc_info {
    ns_nc_info_attr *attrs;
    size_t nattrs;
    ns_nc_info_dim *dims;
    size_t ndims;
} ns_nc_info;

/* Read every global attribute and dimension of path. Other attribute types (floats, arrays) are
 * listed with text NULL, is_int 0 and is_double 0. A missing or non-NetCDF file gives NS_ERR_IO /
 * NS_ERR_FORMAT naming path. Free with ns_nc_info_free (also safe after a failure). */
int ns_nc_info_read(const char *path, ns_nc_info *out, ns_err *err);
void ns_nc_info_free(ns_nc_info *info);

/* The text of global attribute name, or NULL when absent or not text. */
const char *ns_nc_info_text(const ns_nc_info *info, const char *name);
/* 1 and *out when global attribute name is a single integer, else 0. */
int ns_nc_info_int(const ns_nc_info *info, const char *name, long long *out);
/* 1 and *out when global attribute name is a single float or double, else 0. */
int ns_nc_info_double(const ns_nc_info *info, const char *name, double *out);

#endif

/* ns_nc_write: write a NetCDF-4 file from a plain description of its dimensions, variables (with
 * their attributes) and global attributes, under a temporary name that is fsync'ed and renamed
 * when complete, so a reader never sees a half-written file; and read a written variable back
 * for comparison. Knows nothing of sweeps or MPI: the layouts (ns_nc_results, ns_nc_dump) say
 * what goes in. */
#ifndef NS_NC_WRITE_H
#define NS_NC_WRITE_H

#include <stddef.h>
#include <stdint.h>

#include "common/ns_attr.h"
#include "common/ns_error.h"

#define NS_NC_MAX_DIMS 8
#define NS_NC_MAX_ATTRS 12

typedef enum ns_nc_type { NS_NC_INT = 0, NS_NC_DOUBLE, NS_NC_CHAR } ns_nc_type;

typedef struct ns_nc_dim {
    const char *name;
    size_t len;
} ns_nc_dim;

/* Missing values: NS_FILL_MISSING declares _FillValue (NaN for doubles, -1 for ints); NS_FILL_NONE
 * declares none (coordinates, counts: every value is real, and xarray keeps integers integers). */
typedef enum ns_nc_fill { NS_FILL_MISSING = 0, NS_FILL_NONE = 1 } ns_nc_fill;

/* One variable. data: int32_t[] (NS_NC_INT), double[] (NS_NC_DOUBLE) or char[] (NS_NC_CHAR),
 * row-major over dims, borrowed. */
typedef struct ns_nc_var {
    const char *name;
    ns_nc_type type;
    size_t ndims;
    const char *dims[NS_NC_MAX_DIMS];
    const void *data;
    ns_nc_fill fill;
    ns_nc_attr attrs[NS_NC_MAX_ATTRS];
    size_t nattrs;
} ns_nc_var;

/* Append a text / int32 attribute to a variable (ignored beyond NS_NC_MAX_ATTRS, which the
 * layouts never reach). */
void ns_nc_var_text(ns_nc_var *v, const char *name, const char *text);
void ns_nc_var_int(ns_nc_var *v, const char *name, int value);
void ns_nc_var_ints(ns_nc_var *v, const char *name, const int *values, size_t n);

typedef struct ns_nc_desc {
    const ns_nc_dim *dims;
    size_t ndims;
    const ns_nc_var *vars;
    size_t nvars;
    const ns_nc_attr *attrs;
    size_t nattrs;
    int uncompressed; /* 1: no filter on any variable (the fastest write, about twice the bytes) */
} ns_nc_desc;

/* The filters of every non-coordinate numeric variable unless desc->uncompressed, and how a file
 * names them (the sweep's `compression` attribute). */
#define NS_NC_DEFLATE_LEVEL 1
#define NS_NC_COMPRESSION "shuffle, deflate level 1"

/* Write desc to path (NetCDF-4; NS_NC_COMPRESSION on every non-coordinate numeric variable unless
 * desc->uncompressed). On failure path is untouched, the temporary removed, and err names the
 * variable or attribute (and the likely cause of a failed write: full disk, read-only file
 * system). */
int ns_nc_write(const char *path, const ns_nc_desc *desc, ns_err *err);

/* Put one attribute on an open file's variable (NC_GLOBAL for the file); a NetCDF status. */
int ns_nc_put_attr(int ncid, int varid, const ns_nc_attr *at);

/* Number of elements of v under desc's dimensions. */
size_t ns_nc_var_len(const ns_nc_desc *desc, const ns_nc_var *v);

#endif

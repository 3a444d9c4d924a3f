/* ns_nc_sweep: write a sweep's NetCDF-4 file (docs/OUTPUT.md) from a plain description of its
 * dimensions, variables and global attributes; written to a temporary name, fsync'ed and renamed
 * when complete, so a reader never sees a half-written file. Knows nothing of sweeps or MPI. */
#ifndef NS_NC_SWEEP_H
#define NS_NC_SWEEP_H

#include <stddef.h>
#include <stdint.h>

#include "common/ns_error.h"

#define NS_NC_MAX_DIMS 8

typedef enum ns_nc_type { NS_NC_INT = 0, NS_NC_DOUBLE, NS_NC_STRING } ns_nc_type;

typedef struct ns_nc_dim {
    const char *name;
    size_t len;
} ns_nc_dim;

/* One variable. data: int32_t[] (NS_NC_INT), double[] (NS_NC_DOUBLE) or const char *[]
 * (NS_NC_STRING), row-major over dims, borrowed. Fill values: NaN (double), -1 (int).
 * attr_name/attr_text: one optional extra text attribute (e.g. "normalizer_params"). */
typedef struct ns_nc_var {
    const char *name;
    ns_nc_type type;
    size_t ndims;
    const char *dims[NS_NC_MAX_DIMS];
    const void *data;
    const char *long_name;
    const char *units;
    const char *attr_name;
    const char *attr_text;
} ns_nc_var;

/* A global attribute: text; or (text == NULL) a 64-bit integer ival, or a double dval when
 * is_double. */
typedef struct ns_nc_attr {
    const char *name;
    const char *text;
    long long ival;
    int is_double;
    double dval;
} ns_nc_attr;

typedef struct ns_nc_sweep_desc {
    const ns_nc_dim *dims;
    size_t ndims;
    const ns_nc_var *vars;
    size_t nvars;
    const ns_nc_attr *attrs;
    size_t nattrs;
} ns_nc_sweep_desc;

/* Write desc to path (NetCDF-4, shuffle + deflate level 1 on data variables). On failure path is
 * untouched, the temporary removed, and err names the variable or attribute. */
int ns_nc_sweep_write(const char *path, const ns_nc_sweep_desc *desc, ns_err *err);

#endif

/* ns_nc_check: whether an open NetCDF file holds exactly what a description (ns_nc_write.h) says:
 * the same dimensions and no group or user-defined type besides; every variable of the file
 * described, with the described type, dimensions, _FillValue and filters; and, on the file and on
 * every variable, the described attributes with the described types and values -- nothing
 * missing, nothing added. Every difference is reported by name. Knows nothing of sweeps: a layout
 * (ns_nc_results) passes its description. */
#ifndef NS_NC_CHECK_H
#define NS_NC_CHECK_H

#include <stddef.h>

#include "common/ns_error.h"
#include "io/ns_nc_write.h"

typedef enum ns_nc_check_kind {
    NS_NC_CHECK_DIFFERS = 1, /* an attribute's value or type differs (have, want) */
    NS_NC_CHECK_MISSING,     /* a described attribute or dimension is not in the file (want) */
    NS_NC_CHECK_EXTRA,       /* an attribute, variable, dimension, group or type of the file is
                                not described (have: the attribute's value) */
    NS_NC_CHECK_SHAPE        /* a variable's type, dimensions or filters, or a dimension's
                                length, differ (have, want: descriptions) */
} ns_nc_check_kind;

/* One difference. An attribute's: var (NULL: a global attribute), attr its name, what
 * "attribute". Otherwise attr is NULL and `what` says of what: "variable", "dimension", "group" or
 * "type"; its name is var for NS_NC_CHECK_SHAPE, have for NS_NC_CHECK_EXTRA and want for
 * NS_NC_CHECK_MISSING. Attribute values are text: a text in double quotes, a number as the
 * shortest decimal that reads back exactly; both prefixed with their type ("a 32-bit integer 2")
 * when the types differ. */
typedef struct ns_nc_check_item {
    ns_nc_check_kind kind;
    const char *var, *attr, *what;
    const char *have, *want;
} ns_nc_check_item;

typedef void (*ns_nc_check_fn)(void *user, const ns_nc_check_item *item);

typedef struct ns_nc_check_counts {
    size_t n_diff;       /* differences reported */
    size_t global_attrs; /* global attributes described (and compared) */
    size_t vars;         /* variables of the file compared with their description */
    size_t var_attrs;    /* their attributes described, _FillValue included */
} ns_nc_check_counts;

/* Compare the open file ncid with d (described variables missing from the file are not reported
 * here: the caller's data comparison names them). NS_OK unless the file cannot be read (then
 * NS_ERR_FORMAT naming what) or memory runs out. */
int ns_nc_check_layout(int ncid, const ns_nc_desc *d, ns_nc_check_fn fn, void *user,
                       ns_nc_check_counts *counts, ns_err *err);

#endif

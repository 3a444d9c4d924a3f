/* ns_attr: one named attribute value (text, an integer, a double or an int array), the plain type
 * the NetCDF writer (io/ns_nc_write.h) writes and its producers fill -- a type of its own, like
 * ns_asset_ref, so that describing an attribute (the model's architecture in spec/, training's
 * log) needs no part of io. */
#ifndef NS_ATTR_H
#define NS_ATTR_H

#include <stddef.h>

/* An attribute: text; else one NC_INT (is_int32), NC_INT64 or NC_DOUBLE (is_double) value; or,
 * with nints > 0, the NC_INT array ints[0..nints) (a flag variable's flag_values). */
typedef struct ns_nc_attr {
    const char *name;
    const char *text;
    long long ival;
    int is_double;
    double dval;
    int is_int32;
    const int *ints;
    size_t nints;
} ns_nc_attr;

#endif

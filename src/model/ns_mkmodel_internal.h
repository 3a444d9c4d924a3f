/* ns_mkmodel_internal: the tests' view of the values ns_mkmodel writes. Not for use outside
 * src/model and the tests. */
#ifndef NS_MKMODEL_INTERNAL_H
#define NS_MKMODEL_INTERNAL_H

#include <stddef.h>

#include "model/ns_mkmodel.h"

/* ns_mkmodel_values for one element; NAN for an unknown name or an index beyond the tensor. */
float ns_mkmodel_value(const ns_mkmodel_opts *opts, const char *name, size_t index);

#endif

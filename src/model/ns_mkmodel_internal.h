/* ns_mkmodel_internal: test-only view of the mkmodel generator (src/model and tests). */
#ifndef NS_MKMODEL_INTERNAL_H
#define NS_MKMODEL_INTERNAL_H

#include "model/ns_mkmodel.h"

/* ns_mkmodel_values for one element; NAN for an unknown name or an index beyond the tensor. */
float ns_mkmodel_value(const ns_mkmodel_opts *opts, const char *name, size_t index);

#endif

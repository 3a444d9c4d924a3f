/* ns_normalize_internal: the row check every normalizer of norm/ shares. */
#ifndef NS_NORMALIZE_INTERNAL_H
#define NS_NORMALIZE_INTERNAL_H

#include <stddef.h>

#include "common/ns_error.h"
#include "norm/ns_normalize.h"

/* NS_ERR_INVALID for a row no normalizer takes: L == 0, or T not finite and > 0. */
int ns_normalize_check_row(size_t L, double T, ns_err *err);

#endif

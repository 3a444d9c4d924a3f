/* ns_list: the list rules' one core, shared by the sweep file's lists (spec/ns_yaml: values with
 * FILE:LINE:COL) and dump's comma-separated options (--N, --T, --eps): the values sorted
 * ascending, and each value that repeats one already kept found, handed to the caller (who says
 * it in its own words) and dropped. docs/SWEEP.md (the list rules), docs/DUMP.md. */
#ifndef NS_LIST_H
#define NS_LIST_H

#include <stddef.h>
#include <stdint.h>

#include "common/ns_error.h"
#include "common/ns_range.h"

/* One value of a list: an integer list's in i, a real list's in d; order is where it was written
 * (the caller numbers the values 0, 1, ... as it reads them). */
typedef struct ns_list_item {
    uint64_t i;
    double d;
    size_t order;
} ns_list_item;

/* A repeat: again has the value of kept, which was written earlier (a smaller order). */
typedef void (*ns_list_repeat_fn)(void *user, const ns_list_item *kept, const ns_list_item *again);

/* Sort v[0..n) ascending by value (i, or d when is_real; equal values by order), then drop every
 * item equal to the one kept before it, calling repeat (may be NULL) for each, in ascending order
 * of value. Returns the number kept, which are v[0..kept). */
size_t ns_list_sort_unique(ns_list_item *v, size_t n, int is_real, ns_list_repeat_fn repeat,
                           void *user);

/* An option's list: comma-separated numbers of range r (r->is_real: reals into *dv; else integers
 * into *iv), sorted ascending, without repeats. On success the old *iv (or *dv) is freed and
 * replaced by a fresh array of *n values. NS_ERR_INVALID (messages name opt: an empty list or
 * item, a value out of r, the smallest repeated value "appears more than once"), NS_ERR_NOMEM;
 * *iv, *dv and *n are untouched then. */
int ns_list_parse(const char *opt, const ns_range *r, const char *s, size_t **iv, double **dv,
                  size_t *n, ns_err *err);

#endif

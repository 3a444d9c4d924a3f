/* ns_normalize_internal: every normalizer by name with its default parameter, and sigmoid's
 * bias. Private to norm/ until the sweep can select issue 36's normalizers (they move to
 * ns_normalize.h then); the tests use it. */
#ifndef NS_NORMALIZE_INTERNAL_H
#define NS_NORMALIZE_INTERNAL_H

#include <stddef.h>

#include "common/ns_error.h"
#include "norm/ns_normalize.h"

/* Every normalizer by name (ns_normalizer_parse's four and issue 36's six), with its default
 * parameter (ns_normalizer_default); NS_ERR_INVALID naming the others. */
int ns_normalizer_parse_any(const char *name, ns_normalizer *f, ns_err *err);

/* The defaults: ssmax s = 1, sigmoid b = NaN (-log L), entmax alpha = 1.5; 0 for the rest. */
ns_normalizer ns_normalizer_default(ns_normalizer_kind kind);

/* NS_ERR_INVALID for a row no normalizer takes: L == 0, or T not finite and > 0. */
int ns_normalize_check_row(size_t L, double T, ns_err *err);

/* Sigmoid's bias for a row of L keys: f->b, or -log(L) when f->b is NaN (Ramapuram et al. 2024). */
double ns_normalizer_sigmoid_bias(const ns_normalizer *f, size_t L);

#endif

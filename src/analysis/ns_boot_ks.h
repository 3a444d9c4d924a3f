/* ns_boot_ks: the two-sample KS test of one cell under every resample of the shard bootstrap
 * (docs/STATISTICS.md, "Per-head statistics, to the bit"): the integer statistic
 * k = max over the pooled values v of |c_a(v) n_b - c_b(v) n_a| of the multiplicity-weighted
 * samples, their weighted sizes, and the test's decision (p > alpha) as an integer comparison
 * with the critical h of the sizes (ns_ks_critical_h, kept per pair of sizes). Integers only, so
 * the results do not depend on the order of any sum. Pure: no I/O, no MPI. */
#ifndef NS_BOOT_KS_H
#define NS_BOOT_KS_H

#include <stddef.h>
#include <stdint.h>

#include "common/ns_error.h"

typedef struct ns_boot_ks ns_boot_ks;

/* A workspace for cells of S shards x rows values and R multiplicity rows W (R x S, row 0 the
 * full sample: ns_boot_weights), which it keeps transposed (as 16-bit counts too where S rows
 * fits them: every weighted count is at most S rows). Free with ns_boot_ks_free. */
int ns_boot_ks_new(size_t S, size_t rows, size_t R, const uint32_t *W, ns_boot_ks **out,
                   ns_err *err);
void ns_boot_ks_free(ns_boot_ks *w);

/* For one cell: a and b its two samples (S x rows values each, shard-major; values that are not
 * finite are left out, as docs/STATISTICS.md's reference does). For each row r of W: k[r],
 * na[r], nb[r]. */
void ns_boot_ks_cell(ns_boot_ks *w, const double *a, const double *b, int64_t *k, int64_t *na,
                     int64_t *nb);

/* The decision p > alpha of a statistic k / (na nb), sizes na, nb >= 1, as a threshold on k:
 * pass iff k < *kmax (k / gcd(na, nb) < h* of ns_ks_critical_h, and k is a multiple of the gcd,
 * so k < h* gcd). The critical h of each pair of sizes is computed once per workspace and
 * alpha. */
int ns_boot_ks_threshold(ns_boot_ks *w, int64_t na, int64_t nb, double alpha, int64_t *kmax,
                         ns_err *err);

#endif

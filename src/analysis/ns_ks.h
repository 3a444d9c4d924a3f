/* ns_ks: two-sample Kolmogorov-Smirnov test (scipy.stats.ks_2samp, method='auto', two-sided)
 * and the critical N of METRICS.md section 5. Pure computation: no I/O, no MPI.
 *
 * Agreement with scipy 1.10 (Debian 12): D to the last bit, p to 1e-6 relative for p >= 1e-12
 * (tests/test_ks.c against tests/data/ks/ks_cases.txt). docs/STATISTICS.md has the details.
 *
 * Conventions:
 * - NaN values are dropped from each sample before the test (scipy has no NaN handling; the
 *   sweep uses NaN for "missing"). +-inf are ordinary values (they sort to the ends).
 * - If either sample is empty after dropping NaN, D and p are NaN (missing) and the status is
 *   NS_OK: an empty cell is a normal outcome of a sweep, not an error.
 * - max(na, nb) <= NS_KS_MAX_EXACT_N: exact p-value of the permutation distribution of D
 *   (D is rounded to h / lcm(na, nb) as scipy does); otherwise the asymptotic path:
 *   p = kstwo.sf(D, round(na*nb/(na+nb))), the one-sample two-sided Kolmogorov distribution. */
#ifndef NS_KS_H
#define NS_KS_H

#include <stddef.h>
#include <stdint.h>

#include "common/ns_error.h"

/* scipy's MAX_AUTO_N: exact p-values when max(na, nb) is at most this. */
#define NS_KS_MAX_EXACT_N 10000

/* Which p-value path a test took (for reporting and tests). */
typedef enum ns_ks_method {
    NS_KS_NONE = 0,   /* empty sample: D, p are NaN */
    NS_KS_EXACT = 1,
    NS_KS_ASYMP = 2
} ns_ks_method;

/* Reusable scratch (sorted copies, one DP column, Durbin matrices); grows as needed. */
typedef struct ns_ks_ws ns_ks_ws;

/* Empty workspace (allocates on first use). NS_ERR_NOMEM on failure; *out NULL then. */
int ns_ks_ws_new(ns_ks_ws **out, ns_err *err);
/* Free a workspace; NULL is fine. */
void ns_ks_ws_free(ns_ks_ws *ws);

/* Two-sample, two-sided KS test of a[0..na) against b[0..nb) (inputs are not modified).
 * *D receives the statistic, *p the p-value; method (may be NULL) the path taken.
 * Fails only on allocation (NS_ERR_NOMEM) or NULL data with a non-zero size (NS_ERR_INVALID). */
int ns_ks_2samp_ws(const double *a, size_t na, const double *b, size_t nb, ns_ks_ws *ws, double *D,
                   double *p, ns_ks_method *method, ns_err *err);

/* KS statistic of two ascending, NaN-free samples: max over the pooled values v of
 * |#{a <= v}/na - #{b <= v}/nb| (exactly scipy's floating-point expression). 0 if either is empty. */
double ns_ks_statistic_sorted(const double *a, size_t na, const double *b, size_t nb);

/* Exact P(D_{n1,n2} >= h / lcm(n1, n2)) under the null (two-sided), h in [0, lcm].
 * Equal sizes: alternating reflection series; unequal: lattice-path recursion that carries the
 * fraction of paths that have left the band (no cancellation). col must hold min(n1, n2) + 1
 * doubles (unused when n1 == n2). Returns a value in [0, 1]. */
double ns_ks_exact_pvalue(uint64_t n1, uint64_t n2, uint64_t h, double *col);

/* The test's decision for sizes (na, nb) >= 1 as one integer: *h receives the smallest h in
 * 1 .. lcm(na, nb) + 1 whose p-value (the one ns_ks_2samp_ws takes for these sizes: exact for
 * D = h / lcm up to NS_KS_MAX_EXACT_N, else kstwo.sf(h / lcm, round(na nb / (na + nb)))) is
 * <= alpha, lcm + 1 when none is (the sizes cannot reject). A statistic D = k / (na nb) passes
 * (p > alpha) iff k / gcd(na, nb) < *h. Found by bisection over [1, lcm + 1] (the exact p-value
 * is non-increasing in h), probing as docs/STATISTICS.md's reference does. NS_ERR_NOMEM
 * possible; NS_ERR_INVALID for an empty size. */
int ns_ks_critical_h(uint64_t na, uint64_t nb, double alpha, ns_ks_ws *ws, uint64_t *h,
                     ns_err *err);

/* One-sided Smirnov survival function P(D_n^+ >= x) (scipy.special.smirnov): exact
 * Birnbaum-Tingey sum in extended precision for n <= 1e6, Miller's approximation above. */
double ns_smirnov_sf(uint64_t n, double x);

/* The critical N of METRICS.md section 5, three outcomes kept apart:
 *   the smallest N[i] (>= 1) with p[i] > alpha (strictly) -- found;
 *   NS_NCRIT_NONE (0) when some p[i] are computable (not NaN) but none exceeds alpha;
 *   NS_NCRIT_NOT_COMPUTABLE (-1) when every p[i] is NaN (every N skipped) or alpha is NaN.
 * N need not be sorted; for the ascending N grid this is the first such grid point. */
#define NS_NCRIT_NONE 0
#define NS_NCRIT_NOT_COMPUTABLE (-1)
int64_t ns_n_crit(const double *p, const size_t *N, size_t nN, double alpha);

#endif

/* ns_intervals: the catalogue of docs/STATISTICS.md ("What gets an interval"), computed with
 * the shard bootstrap from each slice's per-shard sums, counts and maxima (ns_boot_shard.h): for
 * every statistic its estimate (the full sample) and its 95 % percentile interval over B
 * resamples, per head set (all, sharp, flat, layer k), the ones built on the KS test
 * (ks_*_statistic_hmedian, n_crit_*_frac*_hmedian) included. Pure: no I/O. */
#ifndef NS_INTERVALS_H
#define NS_INTERVALS_H

#include <stddef.h>
#include <stdint.h>

#include "common/ns_error.h"
#include "norm/ns_normalize.h"

/* Dimensions of a statistic after the leading normalizer and before the trailing head_set. */
typedef enum ns_ci_dims {
    NS_CI_LTN = 0, /* (L, T, N) */
    NS_CI_LT,      /* (L, T) */
    NS_CI_TN,      /* (T, N) */
    NS_CI_L        /* (L) */
} ns_ci_dims;

typedef enum ns_ci_id {
    NS_CI_DISTANCE = 0,   /* the 7 means' medians, in ns_boot_mean_metric's order */
    NS_CI_DISTANCE_EXPECTED,
    NS_CI_DISTANCE_RANDOM,
    NS_CI_DISTANCE_BOUND,
    NS_CI_NS_FRAC,
    NS_CI_NS_UPPER,
    NS_CI_NS_LOWER,
    NS_CI_NS_UPPER_GAP,
    NS_CI_NS_LOWER_GAP,
    NS_CI_ENTROPY,
    NS_CI_JAC_MAX,
    NS_CI_DISTANCE_L_SLOPE,
    NS_CI_DISTANCE_EXPECTED_L_SLOPE,
    NS_CI_PLATEAU,
    NS_CI_BOUND_RATIO,
    NS_CI_JAC_T_SLOPE,
    NS_CI_KS_EXPECTED,        /* ks_expected_statistic_hmedian, then the same against d_random */
    NS_CI_KS_RANDOM,
    NS_CI_NCRIT_EXPECTED,     /* n_crit_expected_frac_hmedian (upper ends), then the lower ends */
    NS_CI_NCRIT_EXPECTED_LOWER,
    NS_CI_NCRIT_RANDOM,
    NS_CI_NCRIT_RANDOM_LOWER,
    NS_CI_COUNT
} ns_ci_id;

typedef struct ns_ci_info {
    const char *name;      /* the NetCDF name of the estimate */
    ns_ci_dims dims;
    const char *meaning;   /* one line for the variable's long_name */
} ns_ci_info;
const ns_ci_info *ns_ci_info_of(ns_ci_id id);

/* Where the intervals are: entropy_norm_mean_hmedian, jac_exact_max_hmax and jac_exact_T_slope
 * at every T; every other statistic (those over N, n_crit, the L slopes, the plateau and the
 * bound ratio) only at the claims' temperatures: T_ref, the grid's T nearest 1 in log (the first
 * of a tie), and its neighbours on the grid (docs/STATISTICS.md, "What gets an interval"). At the
 * other temperatures they have their estimate (the full sample) and no interval (NaN ends):
 * the verdicts read none there, and the resamples there would cost most of the bootstrap. */
#define NS_CI_MAX_T 3
/* The grid indices of the claims' temperatures into t[0..NS_CI_MAX_T); returns how many. */
size_t ns_intervals_claim_T(const double *T, size_t nT, size_t *t);
/* 1 when grid index Ti is one of those temperatures (its statistics get every interval). */
int ns_intervals_is_claim_T(const double *T, size_t nT, size_t Ti);

/* Head sets: 0 all, 1 sharp, 2 flat, 3 + k layer k; a head is sharp at (L, T) when its mean
 * entropy_norm is below NS_CI_SHARP_BELOW, flat when at least that. */
#define NS_CI_SHARP_BELOW 0.5
#define NS_CI_SET_STRLEN 16

typedef struct ns_ci_input {
    size_t nnorm, nL, nT, nN, nlayers, nheads;
    const size_t *L, *N, *layers; /* the grid's values (ascending) */
    const double *T;
    size_t n_shards, rows;        /* shards, and rows per shard (of the KS samples) */
    double ks_alpha;              /* the KS tests' level (n_crit) */
    uint64_t seed;
    size_t B;                     /* resamples */
    const double *const *block;   /* (nnorm, nL, nlayers * nheads, nT): each slice's T parts'
                                     first pieces (ns_boot_shard.h: the means'); only those of
                                     the units computed are read (the others may be NULL) */
    const double *const *ks_block; /* the same order: their KS pieces */
    const double *entropy_mean;   /* (nnorm, nL, nlayers * nheads, nT): entropy_norm_mean */
    const ns_normalizer *norm;    /* (nnorm) the axis' entries, or NULL: a sink-excluded view's
                                     n_crit fraction is of its L - 1 keys (METRICS.md 8.2) */
} ns_ci_input;

typedef struct ns_intervals {
    size_t B, nsets;
    char (*set_name)[NS_CI_SET_STRLEN];
    size_t len[NS_CI_COUNT];      /* values of each array: nnorm x its dims x nsets */
    double *est[NS_CI_COUNT], *lo[NS_CI_COUNT], *hi[NS_CI_COUNT];
    double *jac_reps;             /* (nnorm, nT, nL, nsets, B + 1): jac_exact_max_hmax's
                                     replicates, for the T slopes */
    double ci_T[NS_CI_MAX_T];     /* the claims' temperatures (ns_intervals_claim_T) */
    size_t n_ci_T;
} ns_intervals;

/* Values of a statistic of dims d: nnorm x (its dims) x nsets. */
size_t ns_intervals_len(const ns_ci_input *in, ns_ci_dims d);
/* Compute every statistic of the catalogue into *out (free with ns_intervals_free). */
int ns_intervals_compute(const ns_ci_input *in, ns_intervals *out, ns_err *err);

/* The same in parts, for processes that share the work. The work is cut into units
 * (ns_intervals_nunits): per group g (one normalizer ni and T index Ti: g = ni nT + Ti), unit
 * g (1 + nL) is the group's means (entropy_norm and jac_exact's maximum, the 7 means' medians and
 * Theorem 2's gaps at every (L, N), the L slopes, the plateau and the bound ratio; it reads the T
 * parts' first pieces, block), and unit g (1 + nL) + 1 + Li its KS tests at L index Li (the KS
 * distances' medians at every N and the n_crit ends; it reads the KS pieces, ks_block). Any
 * process computes any units, with the same bytes.
 * ns_boot_units_assign (analysis/ns_boot_units.h) gives each unit an owner among P processes by
 * its estimated time. ns_intervals_init sets up *out (every value NaN); ns_intervals_units
 * computes the units owner gives to process `rank` (owner NULL: every unit); ns_intervals_pack
 * copies every value they produce to buf (from_buf 0) or back from it (from_buf 1), unit by unit
 * in unit order, and returns how many doubles that is (buf NULL: only the count);
 * ns_intervals_finish computes what spans groups (jac_exact_T_slope) once every unit is in
 * *out. */
size_t ns_intervals_nunits(const ns_ci_input *in);
int ns_intervals_init(const ns_ci_input *in, ns_intervals *out, ns_err *err);
int ns_intervals_units(const ns_ci_input *in, const size_t *owner, size_t rank,
                       ns_intervals *out, ns_err *err);
size_t ns_intervals_pack(const ns_ci_input *in, ns_intervals *out, const size_t *owner,
                         size_t rank, double *buf, int from_buf);
int ns_intervals_finish(const ns_ci_input *in, ns_intervals *out, ns_err *err);
void ns_intervals_free(ns_intervals *iv);

#endif

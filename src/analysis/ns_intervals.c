/* ns_intervals: the catalogue's estimates and shard-bootstrap intervals (see ns_intervals.h;
 * every rule is docs/STATISTICS.md's, "Uncertainty: the shard bootstrap"). */
#include "analysis/ns_intervals.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/ns_boot.h"
#include "analysis/ns_boot_ks.h"
#include "analysis/ns_boot_shard.h"

#define PLATEAU_SPLIT 20 /* Fig. 2a: "increasing N beyond 20 yields diminishing returns" */

static const ns_ci_info infos[NS_CI_COUNT] = {
    {"distance_mean_hmedian", NS_CI_LTN, "median over the head set of the heads' mean distance"},
    {"distance_expected_mean_hmedian", NS_CI_LTN,
     "median over the head set of the heads' mean distance_expected"},
    {"distance_random_mean_hmedian", NS_CI_LTN,
     "median over the head set of the heads' mean distance_random"},
    {"distance_bound_mean_hmedian", NS_CI_LTN,
     "median over the head set of the heads' mean distance_bound"},
    {"ns_frac_mean_hmedian", NS_CI_LTN, "median over the head set of the heads' mean ns_frac"},
    {"ns_upper_mean_hmedian", NS_CI_LTN, "median over the head set of the heads' mean ns_upper"},
    {"ns_lower_mean_hmedian", NS_CI_LTN, "median over the head set of the heads' mean ns_lower"},
    {"ns_upper_gap_hmedian", NS_CI_LTN,
     "median over the head set of the heads' mean ns_frac minus mean ns_upper"},
    {"ns_lower_gap_hmedian", NS_CI_LTN,
     "median over the head set of the heads' mean ns_frac minus mean ns_lower"},
    {"entropy_norm_mean_hmedian", NS_CI_LT,
     "median over the head set of the heads' mean entropy_norm"},
    {"jac_exact_max_hmax", NS_CI_LT, "largest jac_exact over the head set's heads and rows"},
    {"distance_L_slope", NS_CI_TN,
     "least-squares slope of log distance_mean_hmedian against log L over the L > N"},
    {"distance_expected_L_slope", NS_CI_TN,
     "least-squares slope of log distance_expected_mean_hmedian against log L over the L > N"},
    {"distance_N_plateau_slope", NS_CI_LT,
     "log-log slope of distance_mean_hmedian between the largest N <= 20 and the largest N > 20 "
     "below L"},
    {"bound_ratio_N_change", NS_CI_LT,
     "change of log(distance_bound / distance) (mean_hmedian) between the same two N"},
    {"jac_exact_T_slope", NS_CI_L,
     "least-squares slope of log jac_exact_max_hmax against log T over the T <= T_ref"},
    {"ks_expected_statistic_hmedian", NS_CI_LTN,
     "median over the head set of the heads' KS distance between distance and distance_expected"},
    {"ks_random_statistic_hmedian", NS_CI_LTN,
     "median over the head set of the heads' KS distance between distance and distance_random"},
    {"n_crit_expected_frac_hmedian", NS_CI_LT,
     "median over the head set of the upper ends of the heads' n_crit_expected / L (none: inf)"},
    {"n_crit_expected_frac_lower_hmedian", NS_CI_LT,
     "median over the head set of the lower ends of the heads' n_crit_expected / L"},
    {"n_crit_random_frac_hmedian", NS_CI_LT,
     "median over the head set of the upper ends of the heads' n_crit_random / L (none: inf)"},
    {"n_crit_random_frac_lower_hmedian", NS_CI_LT,
     "median over the head set of the lower ends of the heads' n_crit_random / L"},
};

const ns_ci_info *ns_ci_info_of(ns_ci_id id)
{
    return &infos[id];
}

size_t ns_intervals_len(const ns_ci_input *in, ns_ci_dims d)
{
    size_t nsets = 3 + in->nlayers, n = in->nnorm * nsets;
    switch (d) {
    case NS_CI_LTN: return n * in->nL * in->nT * in->nN;
    case NS_CI_LT: return n * in->nL * in->nT;
    case NS_CI_TN: return n * in->nT * in->nN;
    case NS_CI_L: return n * in->nL;
    }
    return 0;
}

typedef struct ci_ws {
    const ns_ci_input *in;
    ns_intervals *out;
    const uint32_t *W;       /* (R, n_shards): row 0 the full sample */
    double *Wd;              /* the same as doubles, for ns_boot_wsums */
    size_t R, H, nsets, lo_r, hi_r;
    unsigned char *member;   /* (nsets, H) at the current (L, T) */
    double *head;            /* (NS_BOOT_MEANS + 2, R, H): per-head replicates */
    double *agg;             /* (nsets, R) */
    double *vals;            /* (nsets) */
    size_t *set_idx, *set_start; /* the sets as index lists: (nsets H), (nsets + 1) */
    ns_boot_sets sets;
    ns_boot_set_ws sws;
    double *colx, *coly;     /* (S, C): per-shard columns of one cell, every head and mean
                                (C up to NS_BOOT_MEANS H) */
    double *tot, *num;       /* (R, C): their weighted sums */
    double *mv;              /* (R, C): the means of cell_tn's columns */
    unsigned char *uni;      /* (C): every shard has the same count in column j */
    double *scratch;         /* (3 C) */
    double *tmp;             /* (R) */
    double *keep;            /* (3, nL, nN, nsets, R): distance, distance_expected, bound at T */
    uint32_t *Wown;
    double *u, *v;           /* (max(nL, nT)) */
    unsigned char *sel;      /* (max(nL, nT)) */
    ns_boot_ks *ks, *ks1;    /* the KS tests of B + 1 replicates, and of the estimate alone */
    int64_t *kk, *kna, *knb; /* (R) one cell's KS statistics and sizes */
    double *kd;              /* (R, H) the heads' KS distances of one cell */
    unsigned char *pass;     /* (2, nN, R, H): the test passes (p > alpha) */
    unsigned char *comp;     /* (2, nN, R, H): both samples have values */
    double *nlo, *nhi;       /* (R, H) the heads' n_crit / L ends */
    double *cols;            /* (NS_BOOT_BATCH_MAX, R) the medians' columns */
    double *mid;             /* (H) a large set's values between its pivots */
    size_t *order;           /* (H) a large set's heads in full-sample order */
    size_t *from;            /* (nsets) where each set's network starts */
} ci_ws;

/* Index of (ni, Li, Ti, Ni, set) in a statistic of dims d. */
static size_t at(const ci_ws *w, ns_ci_dims d, size_t ni, size_t Li, size_t Ti, size_t Ni,
                 size_t s)
{
    const ns_ci_input *in = w->in;
    switch (d) {
    case NS_CI_LTN: return (((ni * in->nL + Li) * in->nT + Ti) * in->nN + Ni) * w->nsets + s;
    case NS_CI_LT: return ((ni * in->nL + Li) * in->nT + Ti) * w->nsets + s;
    case NS_CI_TN: return ((ni * in->nT + Ti) * in->nN + Ni) * w->nsets + s;
    case NS_CI_L: return (ni * in->nL + Li) * w->nsets + s;
    }
    return 0;
}

/* jac_exact_max_hmax's replicates at (ni, Ti, Li, set): (nnorm, nT, nL, nsets, R). */
static double *jac_at(const ci_ws *w, size_t ni, size_t Ti, size_t Li, size_t s)
{
    return w->out->jac_reps +
           (((ni * w->in->nT + Ti) * w->in->nL + Li) * w->nsets + s) * (w->in->B + 1);
}

/* Store a statistic's replicates reps[0..R) (0: the estimate) at index i of statistic id; with
 * R = 1 (a temperature without intervals) the estimate alone, its ends left NaN. */
static void put(ci_ws *w, ns_ci_id id, size_t i, const double *reps)
{
    w->out->est[id][i] = reps[0];
    if (w->R == 1)
        return;
    memcpy(w->tmp, reps + 1, (w->R - 1) * sizeof *w->tmp);
    ns_boot_interval(w->tmp, w->R - 1, w->lo_r, w->hi_r, &w->out->lo[id][i], &w->out->hi[id][i]);
}

/* agg[s][b]: the median (or maximum) over set s's heads of head[b][h]. */
static void aggregate(ci_ws *w, const double *head, int use_max)
{
    if (!use_max) {
        ns_boot_batch_ws bws = {w->sws, w->cols, w->mid, w->order, 0, 0, 0, w->from};
        ns_boot_set_medians(head, w->R, w->H, &w->sets, &bws, w->agg);
        return;
    }
    for (size_t b = 0; b < w->R; b++) {
        ns_boot_set_stats(head + b * w->H, w->H, &w->sets, use_max, &w->sws, w->vals);
        for (size_t s = 0; s < w->nsets; s++)
            w->agg[s * w->R + b] = w->vals[s];
    }
}

/* Head h's T part of (ni, Li) at Ti: its first piece (the means'), and its KS piece. */
static const double *part(const ci_ws *w, size_t ni, size_t Li, size_t h, size_t Ti)
{
    return w->in->block[((ni * w->in->nL + Li) * w->H + h) * w->in->nT + Ti];
}

static const double *ks_part(const ci_ws *w, size_t ni, size_t Li, size_t h, size_t Ti)
{
    return w->in->ks_block[((ni * w->in->nL + Li) * w->H + h) * w->in->nT + Ti];
}

/* The per-shard columns at offset off of every head's T part of (ni, Li, Ti) into columns
 * [c0, c0 + H) of (S, C) arrays: x[s][c0 + h] = part[off + s], and when y, y[s][c0 + h] =
 * part[off + S + s]. */
static void columns(ci_ws *w, size_t ni, size_t Li, size_t Ti, size_t off, size_t C, size_t c0,
                    double *x, double *y)
{
    const ns_ci_input *in = w->in;
    size_t S = in->n_shards;
    for (size_t h = 0; h < w->H; h++) {
        const double *blk = part(w, ni, Li, h, Ti) + off;
        for (size_t s = 0; s < S; s++) {
            x[s * C + c0 + h] = blk[s];
            if (y)
                y[s * C + c0 + h] = blk[S + s];
        }
    }
}

/* out[b][j] = the weighted mean of columns j of colx (sums) and coly (counts), (S, C), for
 * every replicate b: ns_boot_wmeans's bits. Finite sums (the rule) go through ns_boot_wsums,
 * every replicate and column at once; a column whose shards all have the same count c_j has
 * the weighted count c_j S exactly, any other the exact integer sum of ns_boot_wsums. A
 * non-finite sum anywhere takes ns_boot_wmeans, replicate by replicate. */
static void means(ci_ws *w, size_t C, double *out)
{
    size_t S = w->in->n_shards, R = w->R;
    const double *x = w->colx, *y = w->coly;
    int finite = 1, uniform = 1;
    for (size_t j = 0; j < S * C && finite; j++)
        finite = isfinite(x[j]);
    for (size_t j = 0; j < C; j++) {
        w->uni[j] = 1;
        for (size_t s = 1; s < S && w->uni[j]; s++)
            w->uni[j] = y[s * C + j] == y[j];
        uniform &= w->uni[j];
        w->scratch[2 * C + j] = y[j] * (double)S;
    }
    if (!finite) {
        for (size_t b = 0; b < R; b++)
            ns_boot_wmeans(w->W + b * S, x, uniform ? NULL : y, S, C, w->scratch, out + b * C);
        return;
    }
    ns_boot_wsums(w->Wd, x, R, S, C, w->tot);
    if (!uniform)
        ns_boot_wsums(w->Wd, y, R, S, C, w->num);
    for (size_t b = 0; b < R; b++)
        for (size_t j = 0; j < C; j++) {
            double n = w->uni[j] ? w->scratch[2 * C + j] : w->num[b * C + j];
            out[b * C + j] = n > 0.0 ? w->tot[b * C + j] / n : NAN;
        }
}

/* The head sets at (ni, Li, Ti): all, sharp, flat (by the file's entropy_norm_mean), layers. */
static void membership(ci_ws *w, size_t ni, size_t Li, size_t Ti)
{
    const ns_ci_input *in = w->in;
    for (size_t h = 0; h < w->H; h++) {
        double e = in->entropy_mean[((ni * in->nL + Li) * w->H + h) * in->nT + Ti];
        w->member[h] = 1;
        w->member[w->H + h] = e < NS_CI_SHARP_BELOW;
        w->member[2 * w->H + h] = e >= NS_CI_SHARP_BELOW;
        for (size_t k = 0; k < in->nlayers; k++)
            w->member[(3 + k) * w->H + h] = h / in->nheads == k;
    }
    size_t k = 0;
    for (size_t s = 0; s < w->nsets; s++) {
        w->set_start[s] = k;
        for (size_t h = 0; h < w->H; h++)
            if (w->member[s * w->H + h])
                w->set_idx[k++] = h;
    }
    w->set_start[w->nsets] = k;
    w->sets = (ns_boot_sets){w->nsets, w->set_idx, w->set_start};
}

/* Entropy and jac_exact's maximum at (ni, Li, Ti). */
static void cell_t(ci_ws *w, size_t ni, size_t Li, size_t Ti)
{
    const ns_ci_input *in = w->in;
    size_t S = in->n_shards;
    double *ent = w->head, *jac = w->head + w->H * w->R;
    columns(w, ni, Li, Ti, ns_boot_shard_entropy(in->nN, S), w->H, 0, w->colx, w->coly);
    means(w, w->H, ent);
    columns(w, ni, Li, Ti, ns_boot_shard_jac(in->nN, S), w->H, 0, w->colx, NULL);
    for (size_t b = 0; b < w->R; b++)
        ns_boot_wmaxes(w->W + b * S, w->colx, S, w->H, jac + b * w->H);
    aggregate(w, ent, 0);
    for (size_t s = 0; s < w->nsets; s++)
        put(w, NS_CI_ENTROPY, at(w, NS_CI_LT, ni, Li, Ti, 0, s), w->agg + s * w->R);
    aggregate(w, jac, 1);
    for (size_t s = 0; s < w->nsets; s++) {
        put(w, NS_CI_JAC_MAX, at(w, NS_CI_LT, ni, Li, Ti, 0, s), w->agg + s * w->R);
        memcpy(jac_at(w, ni, Ti, Li, s), w->agg + s * w->R, w->R * sizeof *w->agg);
    }
}

/* The means' medians and Theorem 2's gaps at (ni, Li, Ti, Ni). */
static void cell_tn(ci_ws *w, size_t ni, size_t Li, size_t Ti, size_t Ni)
{
    const ns_ci_input *in = w->in;
    size_t S = in->n_shards, H = w->H, HR = H * w->R, C = NS_BOOT_MEANS * H;
    for (size_t k = 0; k < NS_BOOT_MEANS; k++)
        columns(w, ni, Li, Ti, ns_boot_shard_mean(in->nN, S, k, Ni), C, k * H, w->colx, w->coly);
    means(w, C, w->mv);
    for (size_t b = 0; b < w->R; b++)
        for (size_t k = 0; k < NS_BOOT_MEANS; k++)
            memcpy(w->head + k * HR + b * H, w->mv + b * C + k * H, H * sizeof *w->head);
    const double *frac = w->head + NS_CI_NS_FRAC * HR;
    for (size_t j = 0; j < HR; j++) {
        w->head[NS_CI_NS_UPPER_GAP * HR + j] = frac[j] - w->head[NS_CI_NS_UPPER * HR + j];
        w->head[NS_CI_NS_LOWER_GAP * HR + j] = frac[j] - w->head[NS_CI_NS_LOWER * HR + j];
    }
    static const ns_ci_id kept[3] = {NS_CI_DISTANCE, NS_CI_DISTANCE_EXPECTED, NS_CI_DISTANCE_BOUND};
    for (int id = NS_CI_DISTANCE; id <= NS_CI_NS_LOWER_GAP; id++) {
        aggregate(w, w->head + (size_t)id * HR, 0);
        for (size_t s = 0; s < w->nsets; s++)
            put(w, (ns_ci_id)id, at(w, NS_CI_LTN, ni, Li, Ti, Ni, s), w->agg + s * w->R);
        for (size_t q = 0; q < 3; q++)
            if (kept[q] == (ns_ci_id)id)
                for (size_t s = 0; s < w->nsets; s++)
                    memcpy(w->keep + (((q * in->nL + Li) * in->nN + Ni) * w->nsets + s) * w->R,
                           w->agg + s * w->R, w->R * sizeof *w->agg);
    }
}

/* The KS distances of both tests at (ni, Li, Ti, Ni), every head and replicate, their medians,
 * and the tests' decisions for n_crit. */
static int cell_ks(ci_ws *w, size_t ni, size_t Li, size_t Ti, size_t Ni, ns_err *err)
{
    const ns_ci_input *in = w->in;
    size_t S = in->n_shards, H = w->H, R = w->R;
    ns_boot_ks *ks = R == 1 ? w->ks1 : w->ks;
    size_t oa = ns_boot_shard_ks(in->nN, S, in->rows, 0, Ni);
    for (size_t q = 0; q < 2; q++) {
        size_t ob = ns_boot_shard_ks(in->nN, S, in->rows, 1 + q, Ni);
        unsigned char *pass = w->pass + (q * in->nN + Ni) * R * H;
        unsigned char *comp = w->comp + (q * in->nN + Ni) * R * H;
        for (size_t h = 0; h < H; h++) {
            const double *blk = ks_part(w, ni, Li, h, Ti);
            ns_boot_ks_cell(ks, blk + oa, blk + ob, w->kk, w->kna, w->knb);
            int64_t na = -1, nb = -1, kmax = 0; /* the threshold of the last sizes seen */
            for (size_t r = 0; r < R; r++) {
                int64_t den = w->kna[r] * w->knb[r];
                if (den > 0 && (w->kna[r] != na || w->knb[r] != nb)) {
                    na = w->kna[r], nb = w->knb[r];
                    NS_TRY(ns_boot_ks_threshold(ks, na, nb, in->ks_alpha, &kmax, err));
                }
                w->kd[r * H + h] = den > 0 ? (double)w->kk[r] / (double)den : NAN;
                pass[r * H + h] = den > 0 && w->kk[r] < kmax;
                comp[r * H + h] = den > 0;
            }
        }
        aggregate(w, w->kd, 0);
        for (size_t s = 0; s < w->nsets; s++)
            put(w, q ? NS_CI_KS_RANDOM : NS_CI_KS_EXPECTED, at(w, NS_CI_LTN, ni, Li, Ti, Ni, s),
                w->agg + s * w->R);
    }
    return NS_OK;
}

/* n_crit read on the grid at (ni, Li, Ti), as (lower, upper] of n_crit / L per head and
 * replicate (docs/STATISTICS.md; L - 1 for a sink-excluded view, the keys its rows have), and the
 * medians of both ends, for both tests. */
static void cell_ncrit(ci_ws *w, size_t ni, size_t Li, size_t Ti)
{
    const ns_ci_input *in = w->in;
    size_t H = w->H, R = w->R, nN = in->nN;
    double L = (double)in->L[Li] - (in->norm && in->norm[ni].view == NS_VIEW_SINK_EXCLUDED);
    for (size_t q = 0; q < 2; q++) {
        const unsigned char *pass = w->pass + q * nN * R * H, *comp = w->comp + q * nN * R * H;
        for (size_t j = 0; j < R * H; j++) {
            size_t first = nN, lastc = nN;
            for (size_t n = 0; n < nN; n++) {
                if (comp[n * R * H + j])
                    lastc = n;
                if (pass[n * R * H + j] && first == nN)
                    first = n;
            }
            if (lastc == nN) {
                w->nlo[j] = w->nhi[j] = NAN;
            } else if (first < nN) {
                w->nhi[j] = (double)in->N[first] / L;
                w->nlo[j] = (first ? (double)in->N[first - 1] : 0.0) / L;
            } else {
                w->nhi[j] = INFINITY;
                w->nlo[j] = (double)in->N[lastc] / L;
            }
        }
        ns_ci_id up = q ? NS_CI_NCRIT_RANDOM : NS_CI_NCRIT_EXPECTED;
        ns_ci_id low = q ? NS_CI_NCRIT_RANDOM_LOWER : NS_CI_NCRIT_EXPECTED_LOWER;
        aggregate(w, w->nhi, 0);
        for (size_t s = 0; s < w->nsets; s++)
            put(w, up, at(w, NS_CI_LT, ni, Li, Ti, 0, s), w->agg + s * w->R);
        aggregate(w, w->nlo, 0);
        for (size_t s = 0; s < w->nsets; s++)
            put(w, low, at(w, NS_CI_LT, ni, Li, Ti, 0, s), w->agg + s * w->R);
    }
}

/* The kept replicates of statistic q (0 distance, 1 distance_expected, 2 distance_bound). */
static const double *kept(const ci_ws *w, size_t q, size_t Li, size_t Ni, size_t s)
{
    return w->keep + (((q * w->in->nL + Li) * w->in->nN + Ni) * w->nsets + s) * w->R;
}

/* distance_L_slope and distance_expected_L_slope at (ni, Ti). */
static void l_slopes(ci_ws *w, size_t ni, size_t Ti)
{
    const ns_ci_input *in = w->in;
    double *reps = w->agg;
    for (size_t Li = 0; Li < in->nL; Li++)
        w->u[Li] = ns_boot_log((double)in->L[Li]);
    for (size_t q = 0; q < 2; q++)
        for (size_t Ni = 0; Ni < in->nN; Ni++)
            for (size_t s = 0; s < w->nsets; s++) {
                for (size_t Li = 0; Li < in->nL; Li++) {
                    double e = kept(w, q, Li, Ni, s)[0];
                    w->sel[Li] = in->L[Li] > in->N[Ni] && isfinite(e) && e > 0.0;
                }
                for (size_t b = 0; b < w->R; b++) {
                    for (size_t Li = 0; Li < in->nL; Li++)
                        w->v[Li] = w->sel[Li] ? ns_boot_log(kept(w, q, Li, Ni, s)[b]) : 0.0;
                    reps[b] = ns_boot_slope(w->u, w->v, w->sel, in->nL);
                }
                put(w, q ? NS_CI_DISTANCE_EXPECTED_L_SLOPE : NS_CI_DISTANCE_L_SLOPE,
                    at(w, NS_CI_TN, ni, 0, Ti, Ni, s), reps);
            }
}

/* distance_N_plateau_slope and bound_ratio_N_change at (ni, Ti), every L. */
static void plateau(ci_ws *w, size_t ni, size_t Ti)
{
    const ns_ci_input *in = w->in;
    double *reps = w->agg, *reps2 = w->agg + w->R;
    for (size_t Li = 0; Li < in->nL; Li++) {
        size_t ka = SIZE_MAX, kb = SIZE_MAX;
        for (size_t k = 0; k < in->nN; k++) {
            if (in->N[k] <= PLATEAU_SPLIT && in->N[k] < in->L[Li])
                ka = k;
            if (in->N[k] > PLATEAU_SPLIT && in->N[k] < in->L[Li])
                kb = k;
        }
        if (ka == SIZE_MAX || kb == SIZE_MAX)
            continue;
        double dn = log((double)in->N[kb]) - log((double)in->N[ka]);
        for (size_t s = 0; s < w->nsets; s++) {
            const double *da = kept(w, 0, Li, ka, s), *db = kept(w, 0, Li, kb, s);
            const double *ba = kept(w, 2, Li, ka, s), *bb = kept(w, 2, Li, kb, s);
            for (size_t b = 0; b < w->R; b++) {
                reps[b] = (ns_boot_log(db[b]) - ns_boot_log(da[b])) / dn;
                reps2[b] = ns_boot_log(bb[b] / db[b]) - ns_boot_log(ba[b] / da[b]);
            }
            put(w, NS_CI_PLATEAU, at(w, NS_CI_LT, ni, Li, Ti, 0, s), reps);
            put(w, NS_CI_BOUND_RATIO, at(w, NS_CI_LT, ni, Li, Ti, 0, s), reps2);
        }
    }
}

/* T_ref: the index of the grid's T nearest 1 in log (the first of a tie); 0 for nT = 0. */
static size_t t_ref(const double *T, size_t nT)
{
    size_t ref = 0;
    for (size_t k = 1; k < nT; k++)
        if (fabs(log(T[k])) < fabs(log(T[ref])))
            ref = k;
    return ref;
}

/* jac_exact_T_slope of normalizer ni, every L: over the T <= T_ref (the T nearest 1 in log). */
static void t_slope(ci_ws *w, size_t ni)
{
    const ns_ci_input *in = w->in;
    size_t tref = t_ref(in->T, in->nT);
    for (size_t t = 0; t < in->nT; t++)
        w->u[t] = ns_boot_log(in->T[t]);
    double *reps = w->agg;
    for (size_t Li = 0; Li < in->nL; Li++)
        for (size_t s = 0; s < w->nsets; s++) {
            for (size_t t = 0; t < in->nT; t++) {
                double e = jac_at(w, ni, t, Li, s)[0];
                w->sel[t] = in->T[t] <= in->T[tref] && isfinite(e) && e > 0.0;
            }
            for (size_t b = 0; b < w->R; b++) {
                for (size_t t = 0; t < in->nT; t++)
                    w->v[t] = w->sel[t]
                        ? ns_boot_log(jac_at(w, ni, t, Li, s)[b]) : 0.0;
                reps[b] = ns_boot_slope(w->u, w->v, w->sel, in->nT);
            }
            put(w, NS_CI_JAC_T_SLOPE, at(w, NS_CI_L, ni, Li, 0, 0, s), reps);
        }
}

void ns_intervals_free(ns_intervals *iv)
{
    if (!iv)
        return;
    free(iv->set_name);
    free(iv->jac_reps);
    for (int i = 0; i < NS_CI_COUNT; i++)
        free(iv->est[i]), free(iv->lo[i]), free(iv->hi[i]);
    memset(iv, 0, sizeof *iv);
}

static void ws_free(ci_ws *w)
{
    free(w->member), free(w->head), free(w->agg), free(w->vals), free(w->tmp);
    free(w->colx), free(w->coly), free(w->scratch);
    free(w->tot), free(w->num), free(w->mv), free(w->uni), free(w->Wd);
    free(w->set_idx), free(w->set_start), free(w->sws.vals);
    free(w->keep), free(w->u), free(w->v), free(w->sel), free(w->Wown);
    free(w->kk), free(w->kna), free(w->knb), free(w->kd), free(w->pass);
    free(w->comp), free(w->nlo), free(w->nhi), free(w->cols), free(w->mid), free(w->order);
    free(w->from);
    ns_boot_ks_free(w->ks);
    ns_boot_ks_free(w->ks1);
}

size_t ns_intervals_claim_T(const double *T, size_t nT, size_t *t)
{
    if (nT == 0)
        return 0;
    size_t ref = t_ref(T, nT), n = 0;
    if (ref > 0)
        t[n++] = ref - 1;
    t[n++] = ref;
    if (ref + 1 < nT)
        t[n++] = ref + 1;
    return n;
}

/* The groups: one normalizer and T each. */
static size_t ngroups(const ns_ci_input *in)
{
    return in->nnorm * in->nT;
}

int ns_intervals_init(const ns_ci_input *in, ns_intervals *out, ns_err *err)
{
    memset(out, 0, sizeof *out);
    out->B = in->B;
    size_t ct[NS_CI_MAX_T];
    out->n_ci_T = ns_intervals_claim_T(in->T, in->nT, ct);
    for (size_t k = 0; k < out->n_ci_T; k++)
        out->ci_T[k] = in->T[ct[k]];
    out->nsets = 3 + in->nlayers;
    size_t lo_r, hi_r;
    NS_TRY(ns_boot_ranks(in->B, &lo_r, &hi_r, err));
    out->set_name = calloc(out->nsets, sizeof *out->set_name);
    out->jac_reps = malloc((ngroups(in) * in->nL * out->nsets * (in->B + 1) + 1) *
                           sizeof *out->jac_reps);
    int bad = !out->set_name || !out->jac_reps;
    for (int i = 0; i < NS_CI_COUNT && !bad; i++) {
        size_t n = out->len[i] = ns_intervals_len(in, infos[i].dims);
        out->est[i] = malloc((n ? n : 1) * sizeof(double));
        out->lo[i] = malloc((n ? n : 1) * sizeof(double));
        out->hi[i] = malloc((n ? n : 1) * sizeof(double));
        bad = !out->est[i] || !out->lo[i] || !out->hi[i];
        for (size_t j = 0; j < n && !bad; j++)
            out->est[i][j] = out->lo[i][j] = out->hi[i][j] = NAN;
    }
    if (bad) {
        ns_intervals_free(out);
        return ns_fail(err, NS_ERR_NOMEM, "bootstrap: out of memory (the intervals)");
    }
    strncpy(out->set_name[0], "all", NS_CI_SET_STRLEN);
    strncpy(out->set_name[1], "sharp", NS_CI_SET_STRLEN);
    strncpy(out->set_name[2], "flat", NS_CI_SET_STRLEN);
    for (size_t k = 0; k < in->nlayers; k++)
        snprintf(out->set_name[3 + k], NS_CI_SET_STRLEN, "layer %zu", in->layers[k]);
    return NS_OK;
}

/* The workspace (and the resamples' multiplicities) for out. */
static int setup(const ns_ci_input *in, ns_intervals *out, ci_ws *w, ns_err *err)
{
    w->nsets = out->nsets;
    w->in = in, w->out = out, w->R = in->B + 1, w->H = in->nlayers * in->nheads;
    NS_TRY(ns_boot_ranks(in->B, &w->lo_r, &w->hi_r, err));
    size_t m = (in->nL > in->nT ? in->nL : in->nT) + 1, H = w->H ? w->H : 1;
    w->member = malloc(w->nsets * H);
    w->head = malloc((NS_BOOT_MEANS + 2) * H * w->R * sizeof(double));
    w->agg = malloc(w->nsets * w->R * sizeof(double));
    w->vals = malloc(w->nsets * sizeof(double));
    w->set_idx = malloc(w->nsets * H * sizeof *w->set_idx);
    w->set_start = malloc((w->nsets + 1) * sizeof *w->set_start);
    w->sws = (ns_boot_set_ws){malloc(H * sizeof(double))};
    size_t C = NS_BOOT_MEANS * H, S1 = in->n_shards ? in->n_shards : 1;
    w->colx = malloc(S1 * C * sizeof(double));
    w->coly = malloc(S1 * C * sizeof(double));
    w->scratch = malloc(3 * C * sizeof(double));
    w->tot = malloc(w->R * C * sizeof(double));
    w->num = malloc(w->R * C * sizeof(double));
    w->mv = malloc(w->R * C * sizeof(double));
    w->uni = malloc(C);
    w->Wd = malloc(w->R * S1 * sizeof(double));
    w->tmp = malloc(w->R * sizeof(double));
    w->keep = malloc((3 * in->nL * in->nN * w->nsets * w->R + 1) * sizeof(double));
    w->u = malloc(m * sizeof(double)), w->v = malloc(m * sizeof(double)), w->sel = malloc(m);
    if (!w->member || !w->head || !w->agg || !w->vals || !w->tmp || !w->keep || !w->u || !w->v ||
        !w->sel || !w->colx || !w->coly || !w->scratch || !w->set_idx || !w->tot || !w->num ||
        !w->mv || !w->uni || !w->Wd ||
        !w->set_start || !w->sws.vals)
        return ns_fail(err, NS_ERR_NOMEM, "bootstrap: out of memory (%zu resamples, %zu heads, "
                       "%zu shards)", in->B, w->H, in->n_shards);
    NS_TRY(ns_boot_weights(in->seed, in->n_shards, in->B, &w->Wown, err));
    for (size_t j = 0; j < w->R * in->n_shards; j++)
        w->Wd[j] = (double)w->Wown[j];
    size_t RH = w->R * H, nN = in->nN ? in->nN : 1;
    w->kk = malloc(w->R * sizeof *w->kk);
    w->kna = malloc(w->R * sizeof *w->kna);
    w->knb = malloc(w->R * sizeof *w->knb);
    w->kd = malloc(RH * sizeof *w->kd);
    w->pass = malloc(2 * nN * RH);
    w->comp = malloc(2 * nN * RH);
    w->nlo = malloc(RH * sizeof *w->nlo);
    w->nhi = malloc(RH * sizeof *w->nhi);
    w->cols = malloc(NS_BOOT_BATCH_MAX * w->R * sizeof *w->cols);
    w->mid = malloc(H * sizeof *w->mid);
    w->order = malloc(H * sizeof *w->order);
    w->from = malloc(w->nsets * sizeof *w->from);
    if (!w->kk || !w->kna || !w->knb || !w->kd || !w->pass || !w->comp || !w->nlo ||
        !w->nhi || !w->cols || !w->mid || !w->order || !w->from)
        return ns_fail(err, NS_ERR_NOMEM, "bootstrap: out of memory (the KS tests of %zu "
                       "resamples, %zu heads)", in->B, w->H);
    NS_TRY(ns_boot_ks_new(in->n_shards, in->rows, 1, w->Wown, &w->ks1, err));
    return ns_boot_ks_new(in->n_shards, in->rows, w->R, w->Wown, &w->ks, err);
}

size_t ns_intervals_nunits(const ns_ci_input *in)
{
    return ngroups(in) * (1 + in->nL);
}

int ns_intervals_is_claim_T(const double *T, size_t nT, size_t Ti)
{
    size_t ct[NS_CI_MAX_T], nct = ns_intervals_claim_T(T, nT, ct);
    for (size_t k = 0; k < nct; k++)
        if (ct[k] == Ti)
            return 1;
    return 0;
}

/* Unit u: the means of group g (entropy and jac_exact at every replicate; the N-dependent ones
 * at every replicate only at the claims' temperatures), or the KS tests of group g at Li. */
static int unit(ci_ws *w, size_t u, ns_err *err)
{
    const ns_ci_input *in = w->in;
    size_t per = 1 + in->nL, g = u / per, ni = g / in->nT, Ti = g % in->nT;
    size_t Rt = ns_intervals_is_claim_T(in->T, in->nT, Ti) ? in->B + 1 : 1;
    int rc = NS_OK;
    if (u % per == 0) {
        for (size_t Li = 0; Li < in->nL; Li++) {
            w->R = in->B + 1;
            membership(w, ni, Li, Ti);
            cell_t(w, ni, Li, Ti);
            w->R = Rt;
            for (size_t Ni = 0; Ni < in->nN; Ni++)
                cell_tn(w, ni, Li, Ti, Ni);
        }
        l_slopes(w, ni, Ti);
        plateau(w, ni, Ti);
    } else {
        size_t Li = u % per - 1;
        w->R = Rt;
        membership(w, ni, Li, Ti);
        for (size_t Ni = 0; rc == NS_OK && Ni < in->nN; Ni++)
            rc = cell_ks(w, ni, Li, Ti, Ni, err);
        if (rc == NS_OK)
            cell_ncrit(w, ni, Li, Ti);
    }
    w->R = in->B + 1;
    return rc;
}

int ns_intervals_units(const ns_ci_input *in, const size_t *owner, size_t rank,
                       ns_intervals *out, ns_err *err)
{
    ci_ws w;
    memset(&w, 0, sizeof w);
    int rc = setup(in, out, &w, err);
    w.W = w.Wown;
    for (size_t u = 0; rc == NS_OK && u < ns_intervals_nunits(in); u++)
        if (!owner || owner[u] == rank)
            rc = unit(&w, u, err);
    ws_free(&w);
    return rc;
}

/* The statistics of the KS units (the others, but jac_exact_T_slope, are the means units'). */
static int ks_stat(int id)
{
    return id >= NS_CI_KS_EXPECTED;
}

/* Copy between buf + k and every value of unit u (est, lo, hi of each statistic it holds in
 * the catalogue's order; a means unit then its jac_exact_max_hmax replicates), in one fixed
 * order: to buf, or from it (buf NULL: count only). Returns k past them. */
static size_t pack_unit(const ns_ci_input *in, ns_intervals *iv, size_t u, double *buf,
                        int from_buf, size_t k)
{
    ci_ws w = {.in = in, .nsets = iv->nsets};
    size_t per = 1 + in->nL, g = u / per, ni = g / in->nT, Ti = g % in->nT;
    size_t R = in->B + 1, blk = in->nL * iv->nsets * R, ks = u % per != 0;
    for (int id = 0; id < NS_CI_COUNT; id++) {
        ns_ci_dims d = infos[id].dims;
        if (d == NS_CI_L || ks_stat(id) != (int)ks)
            continue;
        size_t l0 = ks ? u % per - 1 : 0, l1 = ks ? l0 + 1 : (d == NS_CI_TN ? 1 : in->nL);
        size_t nn = d == NS_CI_LT ? 1 : in->nN;
        if (!buf) { /* the count alone */
            k += (l1 - l0) * nn * iv->nsets * 3;
            continue;
        }
        for (size_t Li = l0; Li < l1; Li++)
            for (size_t Ni = 0; Ni < nn; Ni++)
                for (size_t s = 0; s < iv->nsets; s++) {
                    size_t i = at(&w, d, ni, Li, Ti, Ni, s);
                    double *x[3] = {&iv->est[id][i], &iv->lo[id][i], &iv->hi[id][i]};
                    for (int e = 0; e < 3; e++, k++)
                        if (buf && from_buf)
                            *x[e] = buf[k];
                        else if (buf)
                            buf[k] = *x[e];
                }
    }
    if (ks)
        return k;
    if (buf && from_buf)
        memcpy(iv->jac_reps + g * blk, buf + k, blk * sizeof *buf);
    else if (buf)
        memcpy(buf + k, iv->jac_reps + g * blk, blk * sizeof *buf);
    return k + blk;
}

size_t ns_intervals_pack(const ns_ci_input *in, ns_intervals *iv, const size_t *owner,
                         size_t rank, double *buf, int from_buf)
{
    size_t k = 0;
    for (size_t u = 0; u < ns_intervals_nunits(in); u++)
        if (!owner || owner[u] == rank)
            k = pack_unit(in, iv, u, buf, from_buf, k);
    return k;
}

int ns_intervals_finish(const ns_ci_input *in, ns_intervals *out, ns_err *err)
{
    ci_ws w;
    memset(&w, 0, sizeof w);
    int rc = setup(in, out, &w, err);
    for (size_t ni = 0; rc == NS_OK && ni < in->nnorm; ni++)
        t_slope(&w, ni);
    ws_free(&w);
    return rc;
}

int ns_intervals_compute(const ns_ci_input *in, ns_intervals *out, ns_err *err)
{
    int rc = ns_intervals_init(in, out, err);
    if (rc == NS_OK)
        rc = ns_intervals_units(in, NULL, 0, out, err);
    if (rc == NS_OK)
        rc = ns_intervals_finish(in, out, err);
    if (rc != NS_OK)
        ns_intervals_free(out);
    return rc;
}

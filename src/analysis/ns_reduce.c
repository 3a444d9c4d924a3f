/* ns_reduce: statistics, KS tests, n_crit and counts over one slice of cells (see ns_reduce.h). */
#include "analysis/ns_reduce.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/ns_ks.h"
#include "analysis/ns_stats.h"

static const ns_stat_info ns_stat_table[NS_ST_COUNT_ALL] = {
    {"count", "number of non-missing rows"},
    {"mean", "mean over rows"},
    {"std", "population standard deviation over rows"},
    {"min", "minimum over rows"},
    {"max", "maximum over rows"},
    {"q05", "0.05 quantile over rows"},
    {"q50", "median over rows"},
    {"q95", "0.95 quantile over rows"},
};

const ns_stat_info *ns_stat_info_of(ns_stat_id id)
{
    return (unsigned)id < NS_ST_COUNT_ALL ? &ns_stat_table[id] : NULL;
}

static const ns_count_info ns_count_table[NS_C_COUNT] = {
    [NS_C_SKIPPED_ROWS] = {"skipped_rows", NS_CD_TN, "rows the cell skipped",
        "rows whose N is not below their number of keys (N >= m + 1): no Theorem 1/2 values",
        NS_C_SKIPPED_ROWS},
    [NS_C_THM1_VIOL] = {"thm1_violations", NS_CD_TN, "rows where d exceeds Theorem 1's bound",
        "d > d_bound + 1e-9 |d_bound| (expected 0)", NS_C_THM1_CHECKED},
    [NS_C_THM1_CHECKED] = {"thm1_checked", NS_CD_TN, "rows where Theorem 1's bound was checked",
        "rows with both d and d_bound defined", NS_C_THM1_CHECKED},
    [NS_C_NS_UPPER_VIOL] = {"ns_upper_violations", NS_CD_TN,
        "rows where N_s/N exceeds Theorem 2's upper bound",
        "ns_frac > ns_upper (every N = 1 row is one)", NS_C_NS_UPPER_CHECKED},
    [NS_C_NS_UPPER_CHECKED] = {"ns_upper_checked", NS_CD_TN,
        "rows where Theorem 2's upper bound was checked",
        "rows with both ns_frac and ns_upper defined", NS_C_NS_UPPER_CHECKED},
    [NS_C_NS_LOWER_VIOL] = {"ns_lower_violations", NS_CD_TN,
        "rows where N_s/N is below Theorem 2's lower bound", "ns_frac < ns_lower",
        NS_C_NS_LOWER_CHECKED},
    [NS_C_NS_LOWER_CHECKED] = {"ns_lower_checked", NS_CD_TN,
        "rows where Theorem 2's lower bound was checked",
        "rows with both ns_frac and ns_lower defined (ns_lower is missing when r = 0)",
        NS_C_NS_LOWER_CHECKED},
    [NS_C_NS_LOWER_VACUOUS] = {"ns_lower_vacuous", NS_CD_TN,
        "rows where Theorem 2's lower bound is vacuous", "ns_lower <= 0 (out of ns_lower_checked)",
        NS_C_NS_LOWER_CHECKED},
    [NS_C_NS_UPPER_VACUOUS] = {"ns_upper_vacuous", NS_CD_TN,
        "rows where Theorem 2's upper bound is vacuous",
        "ns_upper >= 1 - 1e-12 (out of ns_upper_checked)", NS_C_NS_UPPER_CHECKED},
    [NS_C_NS_LOWER_UNDEFINED] = {"ns_lower_undefined", NS_CD_TN,
        "rows where ns_lower is undefined because r = 0",
        "ns_frac defined and ns_lower missing (r = 0)", NS_C_NS_UPPER_CHECKED},
    [NS_C_JAC_EXACT_VIOL] = {"jac_exact_violations", NS_CD_T,
        "rows where the exact Jacobian norm exceeds min(1/(4T), sqrt 2)",
        "jac_exact > jac_bound + 1e-6 jac_bound, each row once (the Jacobian does not depend on N; "
        "softmax reaches 1/(2T): violations of the paper's 1/(4T) are expected)",
        NS_C_JAC_EXACT_CHECKED},
    [NS_C_JAC_EXACT_CHECKED] = {"jac_exact_checked", NS_CD_T,
        "rows where jac_exact was checked against min(1/(4T), sqrt 2)",
        "rows with jac_exact defined (each row once)", NS_C_JAC_EXACT_CHECKED},
    [NS_C_LEMMA2_VIOL] = {"lemma2_violations", NS_CD_T,
        "rows where the exact Jacobian norm exceeds Lemma 2's general bound",
        "jac_exact > jac_lemma2 + 1e-6 jac_lemma2 (expected 0)", NS_C_LEMMA2_CHECKED},
    [NS_C_LEMMA2_CHECKED] = {"lemma2_checked", NS_CD_T,
        "rows where Lemma 2's general bound was checked",
        "rows with jac_exact and jac_lemma2 defined (softmax, ssmax; each row once)",
        NS_C_LEMMA2_CHECKED},
    [NS_C_JAC_FD_VIOL] = {"jac_fd_violations", NS_CD_TE,
        "rows where the finite-difference sensitivity exceeds min(1/(4T), sqrt 2)",
        "jac_fd(eps) > jac_bound + 1e-6 jac_bound, each row once",
        NS_C_JAC_FD_CHECKED},
    [NS_C_JAC_FD_CHECKED] = {"jac_fd_checked", NS_CD_TE,
        "rows where jac_fd was checked against min(1/(4T), sqrt 2)",
        "rows with jac_fd defined (each row once)", NS_C_JAC_FD_CHECKED},
    [NS_C_EMPTY_ROWS] = {"empty_rows", NS_CD_T,
        "rows skipped because their mass is 0 (every weight a_j = 0)",
        "rows with mass m = 0 exactly (log m = -inf: softpick or relu with every z_j <= 0): no "
        "shape p = a / m, so every shape metric (Theorem 1 and 2, entropy, sink_mass) is missing "
        "at that T; counted here and not in skipped_rows; always 0 for the normalizers on the "
        "simplex", NS_C_EMPTY_ROWS},
};

const ns_count_info *ns_count_info_of(ns_count_id id)
{
    return (unsigned)id < NS_C_COUNT ? &ns_count_table[id] : NULL;
}

size_t ns_count_cells(ns_count_dims dims, size_t nT, size_t nN, size_t neps)
{
    return dims == NS_CD_TN ? nT * nN : dims == NS_CD_TE ? nT * neps : nT;
}

static size_t cells_of(const ns_slice_shape *sh, ns_metric_dims dims)
{
    switch (dims) {
    case NS_DIMS_TN: return sh->nT * sh->nN;
    case NS_DIMS_T: return sh->nT;
    case NS_DIMS_TE: return sh->nT * sh->neps;
    case NS_DIMS_ROW: break;
    }
    return 1;
}

void ns_slice_layout_init(ns_slice_layout *sl, const ns_slice_shape *sh)
{
    size_t off = 0, tn = sh->nT * sh->nN;
    for (int m = 0; m < NS_M_COUNT; m++) {
        sl->cells[m] = cells_of(sh, ns_metric_info_of((ns_metric_id)m)->dims);
        sl->stats[m] = off;
        off += sl->cells[m] * NS_ST_COUNT_ALL;
    }
    for (int k = 0; k < NS_KS_TESTS; k++) {
        sl->ks_stat[k] = off, off += tn;
        sl->ks_p[k] = off, off += tn;
        sl->n_crit[k] = off, off += sh->nT;
    }
    for (int c = 0; c < NS_C_COUNT; c++) {
        sl->count[c] = off;
        off += ns_count_cells(ns_count_table[c].dims, sh->nT, sh->nN, sh->neps);
    }
    sl->total = off;
}

void ns_slice_gather(const ns_slice_shape *sh, const double *recs, size_t S, size_t stride,
                     ns_metric_id id, size_t t, size_t n, size_t e, double *out)
{
    for (size_t k = 0; k < S; k++)
        out[k] = ns_row_value(sh->lay, recs + k * stride, sh->L, id, t, n, e);
}

struct ns_reduce_ws {
    size_t S;
    double *a, *b, *c, *scratch; /* (S) each */
    ns_ks_ws *ks;
};

int ns_reduce_ws_new(size_t S, ns_reduce_ws **out, ns_err *err)
{
    *out = NULL;
    ns_reduce_ws *ws = calloc(1, sizeof *ws);
    if (!ws)
        return ns_fail(err, NS_ERR_NOMEM, "reduction workspace: out of memory");
    ws->S = S;
    size_t n = S ? S : 1;
    ws->a = malloc(4 * n * sizeof(double));
    if (!ws->a) {
        free(ws);
        return ns_fail(err, NS_ERR_NOMEM, "reduction workspace: out of memory (%zu samples)", S);
    }
    ws->b = ws->a + n, ws->c = ws->b + n, ws->scratch = ws->c + n;
    int rc = ns_ks_ws_new(&ws->ks, err);
    if (rc != NS_OK) {
        ns_reduce_ws_free(ws);
        return rc;
    }
    *out = ws;
    return NS_OK;
}

void ns_reduce_ws_free(ns_reduce_ws *ws)
{
    if (!ws)
        return;
    ns_ks_ws_free(ws->ks);
    free(ws->a);
    free(ws);
}

/* Statistics of every cell of every metric. */
static void reduce_stats(const ns_slice_shape *sh, const ns_slice_layout *sl, const double *recs,
                         size_t S, size_t stride, ns_reduce_ws *ws, double *out)
{
    for (int m = 0; m < NS_M_COUNT; m++) {
        ns_metric_dims dims = ns_metric_info_of((ns_metric_id)m)->dims;
        for (size_t cell = 0; cell < sl->cells[m]; cell++) {
            size_t t = 0, n = 0, e = 0;
            if (dims == NS_DIMS_TN)
                t = cell / sh->nN, n = cell % sh->nN;
            else if (dims == NS_DIMS_T)
                t = cell;
            else if (dims == NS_DIMS_TE)
                t = cell / sh->neps, e = cell % sh->neps;
            ns_slice_gather(sh, recs, S, stride, (ns_metric_id)m, t, n, e, ws->a);
            ns_summary sm;
            ns_summary_compute(&sm, ws->a, S, ws->scratch);
            double *o = out + sl->stats[m] + cell * NS_ST_COUNT_ALL;
            o[NS_ST_COUNT] = (double)sm.count;
            o[NS_ST_MEAN] = sm.mean;
            o[NS_ST_STD] = sm.std;
            o[NS_ST_MIN] = sm.min;
            o[NS_ST_MAX] = sm.max;
            o[NS_ST_Q05] = sm.q05;
            o[NS_ST_Q50] = sm.q50;
            o[NS_ST_Q95] = sm.q95;
        }
    }
}

/* Both KS tests at every (T, N) and their n_crit per T. */
static int reduce_ks(const ns_slice_shape *sh, const ns_slice_layout *sl, const double *recs,
                     size_t S, size_t stride, ns_reduce_ws *ws, double *out, ns_err *err)
{
    static const ns_metric_id ref[NS_KS_TESTS] = {NS_M_DISTANCE_EXPECTED, NS_M_DISTANCE_RANDOM};
    for (size_t t = 0; t < sh->nT; t++)
        for (size_t n = 0; n < sh->nN; n++) {
            size_t cell = t * sh->nN + n;
            ns_slice_gather(sh, recs, S, stride, NS_M_DISTANCE, t, n, 0, ws->a);
            for (int k = 0; k < NS_KS_TESTS; k++) {
                ns_slice_gather(sh, recs, S, stride, ref[k], t, n, 0, ws->b);
                NS_TRY(ns_ks_2samp_ws(ws->a, S, ws->b, S, ws->ks, &out[sl->ks_stat[k] + cell],
                                      &out[sl->ks_p[k] + cell], NULL, err));
            }
        }
    for (int k = 0; k < NS_KS_TESTS; k++)
        for (size_t t = 0; t < sh->nT; t++)
            out[sl->n_crit[k] + t] = (double)ns_n_crit(out + sl->ks_p[k] + t * sh->nN, sh->N,
                                                       sh->nN, sh->ks_alpha);
    return NS_OK;
}

/* 1 when the record's row is empty at t: a mass but no shape (sink_mass is missing exactly then). */
static int row_empty(const ns_slice_shape *sh, const double *row, size_t t)
{
    return !isnan(ns_row_value(sh->lay, row, sh->L, NS_M_MASS, t, 0, 0)) &&
           isnan(ns_row_value(sh->lay, row, sh->L, NS_M_SINK_MASS, t, 0, 0));
}

/* Theorem 1 and 2 counts of one (t, n) cell over the S rows (an empty row is counted in
 * empty_rows, not in skipped_rows). */
static void count_theorems(const ns_slice_shape *sh, const double *recs, size_t S, size_t stride,
                           size_t t, size_t n, double *c /* [NS_C_COUNT] */)
{
    const ns_row_layout *lay = sh->lay;
    for (size_t k = 0; k < S; k++) {
        const double *row = recs + k * stride;
        double d = ns_row_value(lay, row, sh->L, NS_M_DISTANCE, t, n, 0);
        if (isnan(d)) {
            c[NS_C_SKIPPED_ROWS] += !row_empty(sh, row, t);
            continue;
        }
        double db = ns_row_value(lay, row, sh->L, NS_M_DISTANCE_BOUND, t, n, 0);
        double f = ns_row_value(lay, row, sh->L, NS_M_NS_FRAC, t, n, 0);
        double lo = ns_row_value(lay, row, sh->L, NS_M_NS_LOWER, t, n, 0);
        double up = ns_row_value(lay, row, sh->L, NS_M_NS_UPPER, t, n, 0);
        if (!isnan(db)) {
            c[NS_C_THM1_CHECKED]++;
            c[NS_C_THM1_VIOL] += ns_exceeds(d, db, NS_THM1_SLACK);
        }
        if (!isnan(f) && !isnan(up)) {
            c[NS_C_NS_UPPER_CHECKED]++;
            c[NS_C_NS_UPPER_VIOL] += f > up;
            c[NS_C_NS_UPPER_VACUOUS] += up >= 1.0 - NS_UPPER_VACUOUS;
        }
        if (!isnan(f) && isnan(lo))
            c[NS_C_NS_LOWER_UNDEFINED]++;
        if (!isnan(f) && !isnan(lo)) {
            c[NS_C_NS_LOWER_CHECKED]++;
            c[NS_C_NS_LOWER_VIOL] += f < lo;
            c[NS_C_NS_LOWER_VACUOUS] += lo <= 0.0;
        }
    }
}

/* Jacobian counts of one T over the S rows: each row once, wherever its value is defined (a
 * row's Jacobian does not depend on N). */
static void count_jacobians(const ns_slice_shape *sh, const ns_slice_layout *sl,
                            const double *recs, size_t S, size_t stride, size_t t, double *out)
{
    const ns_row_layout *lay = sh->lay;
    double bound = sh->jac_bound[t];
    double *ev = out + sl->count[NS_C_JAC_EXACT_VIOL] + t;
    double *ec = out + sl->count[NS_C_JAC_EXACT_CHECKED] + t;
    double *lv = out + sl->count[NS_C_LEMMA2_VIOL] + t;
    double *lc = out + sl->count[NS_C_LEMMA2_CHECKED] + t;
    double *fv = out + sl->count[NS_C_JAC_FD_VIOL] + t * sh->neps;
    double *fc = out + sl->count[NS_C_JAC_FD_CHECKED] + t * sh->neps;
    double *empty = out + sl->count[NS_C_EMPTY_ROWS] + t;
    for (size_t k = 0; k < S; k++) {
        const double *row = recs + k * stride;
        *empty += row_empty(sh, row, t);
        double je = ns_row_value(lay, row, sh->L, NS_M_JAC_EXACT, t, 0, 0);
        double jl = ns_row_value(lay, row, sh->L, NS_M_JAC_LEMMA2, t, 0, 0);
        if (!isnan(je)) {
            (*ec)++;
            *ev += ns_exceeds(je, bound, NS_JAC_SLACK);
        }
        if (!isnan(je) && !isnan(jl)) {
            (*lc)++;
            *lv += ns_exceeds(je, jl, NS_JAC_SLACK);
        }
        for (size_t e = 0; e < sh->neps; e++) {
            double jf = ns_row_value(lay, row, sh->L, NS_M_JAC_FD, t, 0, e);
            if (isnan(jf))
                continue;
            fc[e]++;
            fv[e] += ns_exceeds(jf, bound, NS_JAC_SLACK);
        }
    }
}

static void reduce_counts(const ns_slice_shape *sh, const ns_slice_layout *sl, const double *recs,
                          size_t S, size_t stride, double *out)
{
    for (int k = 0; k < NS_C_COUNT; k++)
        memset(out + sl->count[k], 0,
               ns_count_cells(ns_count_table[k].dims, sh->nT, sh->nN, sh->neps) * sizeof *out);
    for (size_t t = 0; t < sh->nT; t++) {
        for (size_t n = 0; n < sh->nN; n++) {
            double c[NS_C_COUNT] = {0};
            count_theorems(sh, recs, S, stride, t, n, c);
            for (int k = 0; k < NS_C_COUNT; k++)
                if (ns_count_table[k].dims == NS_CD_TN)
                    out[sl->count[k] + t * sh->nN + n] = c[k];
        }
        count_jacobians(sh, sl, recs, S, stride, t, out);
    }
}

int ns_reduce_slice(const ns_slice_shape *sh, const double *recs, size_t S, size_t stride,
                    ns_reduce_ws *ws, double *out, ns_err *err)
{
    if (S > ws->S)
        return ns_fail(err, NS_ERR_INVALID, "reduction: %zu samples exceed the workspace's %zu",
                       S, ws->S);
    ns_slice_layout sl;
    ns_slice_layout_init(&sl, sh);
    reduce_stats(sh, &sl, recs, S, stride, ws, out);
    NS_TRY(reduce_ks(sh, &sl, recs, S, stride, ws, out, err));
    reduce_counts(sh, &sl, recs, S, stride, out);
    return NS_OK;
}

/* ns_results: the payload store and the slice reduction (see ns_results.h). */
#include "reduce/ns_results.h"

#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/ns_boot_shard.h"
#include "analysis/ns_reduce.h"

int ns_results_init(ns_results *res, size_t n_shards, ns_err *err)
{
    memset(res, 0, sizeof *res);
    res->n_shards = n_shards;
    res->offset = malloc((n_shards ? n_shards : 1) * sizeof *res->offset);
    res->forward_count = calloc(n_shards ? n_shards : 1, sizeof *res->forward_count);
    if (!res->offset || !res->forward_count) {
        ns_results_free(res);
        return ns_fail(err, NS_ERR_NOMEM, "out of memory (%zu shards)", n_shards);
    }
    for (size_t s = 0; s < n_shards; s++)
        res->offset[s] = NS_RESULTS_MISSING;
    return NS_OK;
}

void ns_results_free(ns_results *res)
{
    free(res->offset);
    free(res->forward_count);
    memset(res, 0, sizeof *res);
}

int ns_results_set(ns_results *res, uint64_t shard, uint64_t payload_offset, ns_err *err)
{
    if (shard >= res->n_shards)
        return ns_fail(err, NS_ERR_INVALID, "result for shard %llu, but the sweep has %zu shards",
                       (unsigned long long)shard, res->n_shards);
    res->forward_count[shard]++;
    if (res->offset[shard] != NS_RESULTS_MISSING)
        return NS_OK;
    res->offset[shard] = payload_offset;
    res->n_done++;
    return NS_OK;
}

int ns_results_has(const ns_results *res, uint64_t shard)
{
    return shard < res->n_shards && res->offset[shard] != NS_RESULTS_MISSING;
}

int ns_results_check(const ns_results *res, const ns_journal *journal, ns_err *err)
{
    for (size_t s = 0; s < res->n_shards; s++) {
        uint64_t task = 0;
        if (res->offset[s] == NS_RESULTS_MISSING)
            continue;
        NS_TRY(ns_journal_task_at(journal, res->offset[s], &task, err));
        if (task != s)
            return ns_fail(err, NS_ERR_INVALID, "%s: the record at payload offset %llu holds "
                           "task %llu, not shard %zu's", ns_journal_file(journal, res->offset[s]),
                           (unsigned long long)ns_journal_byte(res->offset[s]),
                           (unsigned long long)task, s);
    }
    return NS_OK;
}

/* One slice's per-row values of every metric, in ns_grid_slice_samples order. */
static void slice_samples(const ns_slice_shape *sh, const double *recs, size_t S, size_t stride,
                          double *out)
{
    ns_slice_layout sl;
    ns_slice_layout_init(&sl, sh);
    for (int m = 0; m < NS_M_COUNT; m++) {
        ns_metric_dims dims = ns_metric_info_of((ns_metric_id)m)->dims;
        for (size_t c = 0; c < sl.cells[m]; c++) {
            size_t t = 0, n = 0, e = 0;
            if (dims == NS_DIMS_TN)
                t = c / sh->nN, n = c % sh->nN;
            else if (dims == NS_DIMS_T)
                t = c;
            else if (dims == NS_DIMS_TE)
                t = c / sh->neps, e = c % sh->neps;
            ns_slice_gather(sh, recs, S, stride, (ns_metric_id)m, t, n, e, out);
            out += S;
        }
    }
}

int ns_results_reduce(const ns_results *res, const ns_plan *plan, const ns_journal *journal,
                      double ks_alpha, size_t first, size_t count, double *out, double *samples,
                      double *boot, ns_err *err)
{
    if (res->n_done != res->n_shards)
        return ns_fail(err, NS_ERR_INVALID, "reduction: %zu of %zu shards are missing",
                       res->n_shards - res->n_done, res->n_shards);
    size_t rows = plan->g.rows, S = res->n_shards * rows;
    size_t total = plan->derived.slice.total, stotal = ns_grid_slice_samples(&plan->derived, S);
    size_t maxrec = 0;
    for (size_t i = 0; i < plan->g.nnormalizers * plan->g.nL; i++)
        if (plan->lay[i].total > maxrec)
            maxrec = plan->lay[i].total;
    double *recs = malloc((S * maxrec > 0 ? S * maxrec : 1) * sizeof *recs);
    double *scratch = malloc((S ? S : 1) * sizeof *scratch);
    size_t btotal = ns_results_boot_size(plan, res->n_shards);
    ns_reduce_ws *ws = NULL;
    int rc = recs && scratch ? ns_reduce_ws_new(S, &ws, err)
                  : ns_fail(err, NS_ERR_NOMEM, "reduction: out of memory (%zu values)", S * maxrec);
    for (size_t k = 0; rc == NS_OK && k < count; k++) {
        size_t li, hi, ni, Li;
        ns_slice_shape sh;
        ns_plan_slice(plan, first + k, ks_alpha, &li, &hi, &ni, &Li, &sh);
        size_t rec = sh.lay->total, off = ns_plan_offset(plan, li, hi, ni, Li, 0);
        for (size_t s = 0; s < res->n_shards && rc == NS_OK; s++)
            rc = ns_journal_read(journal, res->offset[s], off * sizeof(double),
                                 rows * rec * sizeof(double), recs + s * rows * rec, err);
        if (rc == NS_OK)
            rc = ns_reduce_slice(&sh, recs, S, rec, ws, out + k * total, err);
        if (rc == NS_OK && samples)
            slice_samples(&sh, recs, S, rec, samples + k * stotal);
        if (rc == NS_OK && boot)
            ns_boot_shard_slice(&sh, recs, res->n_shards, rows, rec, scratch, boot + k * btotal);
    }
    ns_reduce_ws_free(ws);
    free(recs);
    free(scratch);
    return rc;
}

size_t ns_results_boot_size(const ns_plan *plan, size_t n_shards)
{
    return ns_boot_shard_size(plan->g.nT, plan->g.nN, n_shards, plan->g.rows);
}

double ns_results_boot_rank_bytes(const ns_plan *plan, size_t n_shards, size_t ranks,
                                  size_t reducing, double cap)
{
    const ns_grid *g = &plan->g;
    return ns_boot_shard_rank_bytes(g->nnormalizers, g->nT, g->nN,
                                    g->nL * g->nlayers * g->nheads, n_shards, g->rows, ranks,
                                    reducing, cap);
}

int ns_results_boot_wanted(const ns_plan *plan, size_t n_shards, size_t ranks, size_t reducing,
                           double cap)
{
    double bytes = ns_results_boot_rank_bytes(plan, n_shards, ranks, reducing, cap);
    /* a rank's values travel with int counts (ns_sweep_spread) */
    return bytes <= (cap > 0 ? cap : NS_RESULTS_BOOT_MAX_BYTES) && bytes / sizeof(double) <= INT_MAX;
}

size_t ns_results_boot_index(const ns_plan *plan, double ks_alpha, size_t k)
{
    const ns_grid *g = &plan->g;
    size_t li, hi, ni, Li;
    ns_slice_shape sh;
    ns_plan_slice(plan, k, ks_alpha, &li, &hi, &ni, &Li, &sh);
    return (ni * g->nL + Li) * g->nlayers * g->nheads + li * g->nheads + hi;
}

void ns_results_ci_entropy(const ns_plan *plan, double ks_alpha, const double *slices,
                           double *ent)
{
    const ns_grid *g = &plan->g;
    size_t nsl = plan->derived.nslices, total = plan->derived.slice.total;
    for (size_t k = 0; k < nsl; k++) {
        size_t li, hi, ni, Li;
        ns_slice_shape sh;
        ns_slice_layout sl;
        ns_plan_slice(plan, k, ks_alpha, &li, &hi, &ni, &Li, &sh);
        ns_slice_layout_init(&sl, &sh);
        size_t j = ns_results_boot_index(plan, ks_alpha, k);
        for (size_t t = 0; t < g->nT; t++)
            ent[j * g->nT + t] = slices[k * total + sl.stats[NS_M_ENTROPY_NORM] +
                                        t * NS_ST_COUNT_ALL + NS_ST_MEAN];
    }
}

void ns_results_ci_input(const ns_plan *plan, double ks_alpha, size_t n_shards,
                         const double *const *parts, const double *const *ks_parts,
                         const double *ent, size_t B, ns_ci_input *in)
{
    const ns_grid *g = &plan->g;
    *in = (ns_ci_input){
        .nnorm = g->nnormalizers, .nL = g->nL, .nT = g->nT, .nN = g->nN, .nlayers = g->nlayers,
        .nheads = g->nheads, .L = g->L, .N = g->N, .layers = g->layers, .T = g->T,
        .n_shards = n_shards, .rows = g->rows, .ks_alpha = ks_alpha, .seed = g->seed, .B = B,
        .block = parts, .ks_block = ks_parts, .entropy_mean = ent, .norm = g->normalizers,
    };
}

int ns_results_intervals(const ns_plan *plan, double ks_alpha, size_t n_shards,
                         const double *slices, const double *boot, size_t B, ns_intervals *iv,
                         ns_err *err)
{
    const ns_grid *g = &plan->g;
    size_t nsl = plan->derived.nslices, n = nsl * g->nT;
    size_t btotal = ns_results_boot_size(plan, n_shards), part = btotal / (g->nT ? g->nT : 1);
    size_t front = ns_boot_shard_front(g->nN, n_shards);
    double *ent = malloc((n ? n : 1) * sizeof *ent);
    const double **parts = malloc((n ? n : 1) * sizeof *parts);
    const double **ks_parts = malloc((n ? n : 1) * sizeof *ks_parts);
    if (!ent || !parts || !ks_parts) {
        free(ent), free(parts), free(ks_parts);
        return ns_fail(err, NS_ERR_NOMEM, "bootstrap: out of memory (%zu values)", n);
    }
    ns_results_ci_entropy(plan, ks_alpha, slices, ent);
    for (size_t k = 0; k < nsl; k++) {
        size_t j = ns_results_boot_index(plan, ks_alpha, k);
        for (size_t t = 0; t < g->nT; t++) {
            parts[j * g->nT + t] = boot + k * btotal + t * part;
            ks_parts[j * g->nT + t] = boot + k * btotal + t * part + front;
        }
    }
    ns_ci_input in;
    ns_results_ci_input(plan, ks_alpha, n_shards, parts, ks_parts, ent, B, &in);
    int rc = ns_intervals_compute(&in, iv, err);
    free(parts);
    free(ks_parts);
    free(ent);
    return rc;
}

/* ns_plan: the grid's checks and the payload layout (see ns_plan.h). */
#include "rows/ns_plan.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/ns_boot_shard.h"
#include "analysis/ns_topn.h"
#include "common/ns_sys.h"

const ns_range ns_plan_range_L =
    NS_RANGE_INT(1, NS_MODEL_MAX_CTX, "no model has a longer context");
const ns_range ns_plan_range_rows =
    NS_RANGE_INT(1, NS_MODEL_MAX_CTX, "no model has a longer context");
const ns_range ns_plan_range_N =
    NS_RANGE_INT(1, NS_RANGE_INT32_MAX, "the output stores N as a 32-bit integer");
const ns_range ns_plan_range_scale = NS_RANGE_REAL(NS_PLAN_MIN_SCALE, NS_PLAN_MAX_SCALE, 0, NULL);
const ns_range ns_plan_range_s = NS_RANGE_REAL(NS_PLAN_MIN_SCALE, NS_PLAN_MAX_SCALE, 0, NULL);
const ns_range ns_plan_range_alpha =
    NS_RANGE_REAL(1.0, 1000.0, NS_RANGE_MIN_OPEN, "entmax needs alpha > 1; 1.5 is entmax15");
const ns_range ns_plan_range_b = NS_RANGE_REAL(-1000.0, 1000.0, 0, NULL);
const ns_range ns_plan_range_layer =
    NS_RANGE_INT(0, NS_MODEL_MAX_LAYER - 1, "no model has more layers");
const ns_range ns_plan_range_head =
    NS_RANGE_INT(0, NS_MODEL_MAX_HEAD - 1, "no model has more heads");
const ns_range ns_plan_range_probes = NS_RANGE_INT(0, NS_PLAN_MAX_PROBES, NULL);

/* A problem with formatted text. */
static int reportf(ns_plan_report_fn report, void *user, ns_plan_where where, size_t index,
                   ns_err *err, const char *fmt, ...) __attribute__((format(printf, 6, 7)));
static int reportf(ns_plan_report_fn report, void *user, ns_plan_where where, size_t index,
                   ns_err *err, const char *fmt, ...)
{
    char text[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(text, sizeof text, fmt, ap);
    va_end(ap);
    if (report(user, where, index, text) != NS_OK)
        return ns_fail(err, NS_ERR_NOMEM, "out of memory");
    return NS_OK;
}

int ns_plan_check(const ns_grid *g, ns_plan_report_fn report, void *user, ns_err *err)
{
    for (size_t i = 0; i < g->nL; i++)
        if (g->L_max && g->L[i] > g->L_max)
            NS_TRY(reportf(report, user, NS_PLAN_AT_L, i, err, "L = %zu exceeds shards.L_max = %zu",
                           g->L[i], g->L_max));
    if (g->nL && g->rows > g->L[0])
        NS_TRY(reportf(report, user, NS_PLAN_AT_ROWS, 0, err,
                       "%zu rows per prefix exceed the smallest L = %zu (a prefix of L tokens has "
                       "L rows)", g->rows, g->L[0]));
    return NS_OK;
}

int ns_plan_check_model(const ns_grid *g, const ns_model_config *mc, const char *model_desc,
                        ns_plan_report_fn report, void *user, ns_err *err)
{
    if (g->L_max > mc->n_ctx)
        NS_TRY(reportf(report, user, NS_PLAN_AT_L_MAX, 0, err,
                       "%zu exceeds the context of the model %s (n_ctx = %zu)", g->L_max,
                       model_desc, mc->n_ctx));
    else if (mc->sliding_window && g->L_max > mc->sliding_window)
        NS_TRY(reportf(report, user, NS_PLAN_AT_L_MAX, 0, err,
                       "%zu exceeds the sliding window of the model %s (config.json key "
                       "\"sliding_window\" = %zu): a query would not see every earlier key, which "
                       "normsweep does not implement", g->L_max, model_desc, mc->sliding_window));
    for (size_t i = 0; i < g->nlayers; i++)
        if (g->layers[i] >= mc->n_layer)
            NS_TRY(reportf(report, user, NS_PLAN_AT_LAYER, i, err,
                           "layer %zu is outside the model %s, which has %zu layers (0..%zu)",
                           g->layers[i], model_desc, mc->n_layer, mc->n_layer - 1));
    for (size_t i = 0; i < g->nheads; i++)
        if (g->heads[i] >= mc->n_head)
            NS_TRY(reportf(report, user, NS_PLAN_AT_HEAD, i, err,
                           "head %zu is outside the model %s, which has %zu heads (0..%zu)",
                           g->heads[i], model_desc, mc->n_head, mc->n_head - 1));
    return NS_OK;
}

/* ns_plan_init's report: the first problem becomes the error. */
typedef struct first_problem {
    char text[512];
    int found;
} first_problem;

static int note_first(void *user, ns_plan_where where, size_t index, const char *text)
{
    first_problem *f = user;
    (void)where, (void)index;
    if (!f->found)
        snprintf(f->text, sizeof f->text, "%s", text);
    f->found = 1;
    return NS_OK;
}

/* Copy the grid's lists into one block the plan owns. */
static int own_grid(ns_plan *p, const ns_grid *g, ns_err *err)
{
    size_t nz = g->nL + g->nN + g->nlayers + g->nheads, nd = g->nT + g->neps;
    char *b = malloc(nz * sizeof(size_t) + nd * sizeof(double) + 1);
    if (!b)
        return ns_fail(err, NS_ERR_NOMEM, "plan: out of memory");
    p->own = b;
    p->g = *g;
    size_t *z = (size_t *)b;
    double *d = (double *)(z + nz);
/* (an empty list may come as NULL: memcpy must not see it) */
#define COPY(dst, src, n) ((n) ? memcpy((dst), (src), (n) * sizeof *(dst)) : (dst))
    COPY(z, g->L, g->nL), p->g.L = z, z += g->nL;
    COPY(z, g->N, g->nN), p->g.N = z, z += g->nN;
    COPY(z, g->layers, g->nlayers), p->g.layers = z, z += g->nlayers;
    COPY(z, g->heads, g->nheads), p->g.heads = z;
    COPY(d, g->T, g->nT), p->g.T = d, d += g->nT;
    COPY(d, g->eps, g->neps), p->g.eps = d;
    COPY(p->norm, g->normalizers, g->nnormalizers);
#undef COPY
    p->g.normalizers = p->norm;
    return NS_OK;
}

/* ---- memory ------------------------------------------------------------------------------ */

/* The distinct prefix rows L - 1 - r (r < rows) over the grid's L (ascending), into out (may be
 * NULL) in ascending order; returns how many. */
static size_t fwd_rows(const ns_grid *g, size_t *out)
{
    size_t n = 0, next = 0; /* rows below `next` are taken */
    for (size_t Li = 0; Li < g->nL; Li++) {
        size_t lo = g->L[Li] > g->rows ? g->L[Li] - g->rows : 0;
        lo = lo > next ? lo : next;
        for (size_t m = lo; out && m < g->L[Li]; m++)
            out[n + m - lo] = m;
        n += g->L[Li] > lo ? g->L[Li] - lo : 0;
        if (g->L[Li] > next)
            next = g->L[Li];
    }
    return n;
}

void ns_plan_memory_estimate(const ns_grid *g, const ns_model_config *mc, size_t n_shards,
                             int keep_samples, ns_plan_memory *m)
{
    *m = (ns_plan_memory){0, 0, 0, 0, 0, 0};
    if (!g->nL || !g->nT || !g->nnormalizers)
        return;
    /* Beyond this many cells per (layer, head, L) the layouts' size_t arithmetic could wrap:
     * such a grid cannot fit any machine anyway. */
    double cells = (double)g->nT * (double)g->nN * (double)(g->neps ? g->neps : 1);
    if (cells > 1e12) {
        m->payload = m->task = m->reduce = m->boot = HUGE_VAL;
        m->boot_capped = 1;
        return;
    }
    double rec_sum = 0.0, rec_max = 0.0; /* doubles per row record over (normalizer, L) */
    ns_row_layout lay = {0};
    for (size_t ni = 0; ni < g->nnormalizers; ni++) {
        int t_free = ns_topn_rank_is_T_free(&g->normalizers[ni]);
        size_t nN_L = 0;
        for (size_t Li = 0; Li < g->nL; Li++) {
            while (nN_L < g->nN && g->N[nN_L] < g->L[Li])
                nN_L++;
            ns_row_layout_init(&lay, g->nT, nN_L, g->neps, t_free);
            rec_sum += (double)lay.total;
            rec_max = (double)lay.total > rec_max ? (double)lay.total : rec_max;
        }
    }
    double heads = (double)g->nlayers * (double)g->nheads, rows = (double)g->rows;
    m->payload = sizeof(double) * (2.0 + heads * rows * rec_sum);
    size_t L_fwd = g->L[g->nL - 1], d = mc->d_head;
    m->task = ns_model_workspace_bytes(mc, L_fwd, fwd_rows(g, NULL)) +
              (double)g->nnormalizers * ns_analysis_ws_bytes(g->probes, L_fwd, d) +
              2.0 * m->payload;
    ns_slice_layout sl;
    ns_grid_slice_layout(g, &sl);
    double slice_cells = 0.0;
    for (int k = 0; k < NS_M_COUNT; k++)
        slice_cells += (double)sl.cells[k];
    double nsl = heads * (double)g->nnormalizers * (double)g->nL;
    double S = (double)n_shards * rows;
    m->reduce = sizeof(double) * (2.0 * nsl * (double)sl.total + S * rec_max);
    if (keep_samples)
        m->reduce += sizeof(double) * 2.0 * nsl * slice_cells * S;
    /* the bootstrap's per-shard values: per slice, NS_BOOT_MEANS sums and counts per (T, N),
     * entropy_norm's sums and counts and jac_exact's maxima per T, each for every shard, and
     * the rows of the NS_BOOT_KS_SAMPLES distances per (T, N); on one rank all of them */
    m->boot = ns_plan_boot_rank_bytes(g, n_shards, 1, 0.0);
    m->boot_min_ranks = ns_plan_boot_min_ranks(g, n_shards, NS_BOOT_SHARD_MAX_BYTES);
    m->boot_capped = m->boot_min_ranks != 1;
    if (!m->boot_capped)
        m->reduce += m->boot;
}

double ns_plan_boot_rank_bytes(const ns_grid *g, size_t n_shards, size_t P, double cap)
{
    return ns_boot_shard_rank_bytes(g->nnormalizers, g->nT, g->nN,
                                    g->nL * g->nlayers * g->nheads, n_shards, g->rows, P, P, cap);
}

size_t ns_plan_boot_min_ranks(const ns_grid *g, size_t n_shards, double cap)
{
    return ns_boot_shard_min_ranks(g->nnormalizers, g->nT, g->nN, g->nL * g->nlayers * g->nheads,
                                   n_shards, g->rows, cap);
}

void ns_plan_work_estimate(const ns_grid *g, const ns_model_config *mc, ns_plan_work *w)
{
    *w = (ns_plan_work){0.0, 0.0};
    if (!g->nL || !g->nlayers)
        return;
    size_t deepest = 0;
    for (size_t i = 0; i < g->nlayers; i++)
        deepest = g->layers[i] + 1 > deepest ? g->layers[i] + 1 : deepest;
    double L = (double)g->L[g->nL - 1];
    w->forward_flops = ns_model_forward_flops(mc, g->L[g->nL - 1], deepest);
    w->gram_flops = L * L * (double)mc->d_head * (double)g->nlayers * (double)g->nheads *
                    (double)g->nnormalizers;
}

int ns_plan_check_memory(const ns_grid *g, const ns_model_config *mc, size_t n_shards,
                         int keep_samples, double mem_limit, ns_plan_report_fn report, void *user,
                         ns_err *err)
{
    ns_plan_memory m;
    ns_plan_memory_estimate(g, mc, n_shards, keep_samples, &m);
    if (!isfinite(m.payload)) /* too many cells to lay out (ns_plan_memory_estimate) */
        return reportf(report, user, NS_PLAN_AT_GRID, 0, err,
                       "%.4g cells per layer, head, normalizer and L (T x N x eps) are more than "
                       "any machine can hold; split the grid over several sweeps",
                       (double)g->nT * (double)g->nN * (double)(g->neps ? g->neps : 1));
    char pay[64], task[64], red[64], lim[64];
    ns_sys_format_bytes(m.payload, pay, sizeof pay);
    ns_sys_format_bytes(m.task, task, sizeof task);
    ns_sys_format_bytes(m.reduce, red, sizeof red);
    ns_sys_format_bytes(mem_limit, lim, sizeof lim);
    if (!(m.payload / sizeof(double) <= NS_PLAN_MAX_PAYLOAD))
        return reportf(report, user, NS_PLAN_AT_GRID, 0, err,
                       "one task's results would take %s (layers x heads x normalizers x L x rows "
                       "x N x T), more than one MPI message carries (16 GiB); split the grid over "
                       "several sweeps", pay);
    if (mem_limit > 0.0 && !(m.task <= mem_limit))
        NS_TRY(reportf(report, user, NS_PLAN_AT_GRID, 0, err,
                       "computing one task needs about %s per process (forward, analysis and "
                       "%s of results), more than this machine's %s of memory", task, pay, lim));
    if (mem_limit > 0.0 && !(m.reduce <= mem_limit))
        NS_TRY(reportf(report, user, NS_PLAN_AT_GRID, 0, err,
                       "the reduction needs about %s on rank 0%s, more than this machine's %s of "
                       "memory", red, keep_samples ? " (keep_samples keeps every row's values)" : "",
                       lim));
    return NS_OK;
}

int ns_plan_init(ns_plan *p, const ns_grid *g, const ns_model_config *mc, ns_err *err)
{
    memset(p, 0, sizeof *p);
    first_problem fp = {"", 0};
    NS_TRY(ns_plan_check(g, note_first, &fp, err));
    NS_TRY(ns_plan_check_model(g, mc, "in use", note_first, &fp, err));
    NS_TRY(ns_plan_check_memory(g, mc, 1, 0, 0.0, note_first, &fp, err)); /* no size_t wraps */
    if (!fp.found && (!g->nL || !g->nlayers || !g->nheads || !g->nnormalizers || !g->rows ||
                      !g->nT || g->nnormalizers > NS_PLAN_MAX_NORMALIZERS))
        snprintf(fp.text, sizeof fp.text, "empty grid or too many normalizers"), fp.found = 1;
    if (fp.found)
        return ns_fail(err, NS_ERR_INVALID, "plan: %s", fp.text);
    NS_TRY(own_grid(p, g, err));
    int rc = ns_grid_derive(&p->g, &p->derived, err);
    if (rc != NS_OK) {
        ns_plan_free(p);
        return rc;
    }
    for (size_t i = 0; i < g->nlayers; i++)
        if (g->layers[i] + 1 > p->n_layers_run)
            p->n_layers_run = g->layers[i] + 1;
    size_t nnorm = g->nnormalizers, nL = g->nL, nblocks = g->nlayers * g->nheads * nnorm * nL;
    p->n_fwd_rows = fwd_rows(&p->g, NULL);
    p->fwd_rows = malloc(p->n_fwd_rows * sizeof *p->fwd_rows + 1);
    p->nN_L = malloc(nL * sizeof *p->nN_L);
    p->lay = malloc(nnorm * nL * sizeof *p->lay);
    p->block = malloc(nblocks * sizeof *p->block);
    if (!p->fwd_rows || !p->nN_L || !p->lay || !p->block) {
        ns_plan_free(p);
        return ns_fail(err, NS_ERR_NOMEM, "plan: out of memory");
    }
    fwd_rows(&p->g, p->fwd_rows);
    for (size_t Li = 0; Li < nL; Li++) {
        size_t k = 0;
        while (k < g->nN && g->N[k] < p->g.L[Li])
            k++;
        p->nN_L[Li] = k;
    }
    for (size_t ni = 0; ni < nnorm; ni++) {
        p->params[ni] = (ns_analysis_params){
            .N = p->g.N, .nN = g->nN, .T = p->g.T, .nT = g->nT, .eps = p->g.eps,
            .neps = g->neps, .normalizer = g->normalizers[ni], .sphere = g->sphere,
            .probes = g->probes, .seed = g->seed,
        };
        int t_free = ns_topn_rank_is_T_free(&g->normalizers[ni]);
        for (size_t Li = 0; Li < nL; Li++)
            ns_row_layout_init(&p->lay[ni * nL + Li], g->nT, p->nN_L[Li], g->neps, t_free);
    }
    size_t off = 0, b = 0;
    for (size_t li = 0; li < g->nlayers; li++)
        for (size_t hi = 0; hi < g->nheads; hi++)
            for (size_t ni = 0; ni < nnorm; ni++)
                for (size_t Li = 0; Li < nL; Li++) {
                    p->block[b++] = off;
                    off += g->rows * p->lay[ni * nL + Li].total;
                }
    p->payload = off;
    return NS_OK;
}

void ns_plan_free(ns_plan *p)
{
    ns_grid_derived_free(&p->derived);
    free(p->own);
    free(p->fwd_rows);
    free(p->nN_L);
    free(p->lay);
    free(p->block);
    memset(p, 0, sizeof *p);
}

const ns_row_layout *ns_plan_layout(const ns_plan *p, size_t ni, size_t Li)
{
    return &p->lay[ni * p->g.nL + Li];
}

size_t ns_plan_offset(const ns_plan *p, size_t li, size_t hi, size_t ni, size_t Li, size_t r)
{
    size_t b = ((li * p->g.nheads + hi) * p->g.nnormalizers + ni) * p->g.nL + Li;
    return p->block[b] + r * ns_plan_layout(p, ni, Li)->total;
}

size_t ns_plan_row(const ns_plan *p, size_t Li, size_t r)
{
    return p->g.L[Li] - 1 - r;
}

void ns_plan_slice(const ns_plan *p, size_t k, double ks_alpha, size_t *li, size_t *hi,
                   size_t *ni, size_t *Li, ns_slice_shape *sh)
{
    const ns_grid *g = &p->g;
    ns_grid_slice_index(g, k, li, hi, ni, Li);
    *sh = (ns_slice_shape){
        .lay = ns_plan_layout(p, *ni, *Li), .L = g->L[*Li], .N = g->N, .nN = g->nN,
        .T = g->T, .nT = g->nT, .jac_bound = p->derived.jac_bound, .neps = g->neps,
        .ks_alpha = ks_alpha,
    };
}

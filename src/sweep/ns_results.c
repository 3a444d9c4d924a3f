/* ns_results: per-shard result store, reductions and the NetCDF description (see ns_results.h). */
#include "config.h"

#include "sweep/ns_results.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/ns_analysis.h"
#include "analysis/ns_ks.h"
#include "analysis/ns_reduce.h"
#include "io/ns_nc_sweep.h"
#include "sweep/ns_journal.h"

int ns_results_init(ns_results *res, const ns_task_plan *plan, size_t n_shards, ns_err *err)
{
    memset(res, 0, sizeof *res);
    res->plan = plan;
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

/* ---- metric shapes ---------------------------------------------------------------------- */

enum { SHAPE_TN, SHAPE_1, SHAPE_T, SHAPE_TE };

static int metric_shape(ns_metric_id id)
{
    if (id <= NS_M_NS_UPPER)
        return SHAPE_TN;
    if (id == NS_M_DELTA)
        return SHAPE_1;
    if (id == NS_M_JAC_FD)
        return SHAPE_TE;
    return SHAPE_T;
}

/* Extra (between L and layer) dimension sizes and names of a shape. */
static void shape_dims(const ns_task_plan *p, int shape, size_t *A, size_t *B, const char **da,
                       const char **db)
{
    const ns_row_layout *lay = &p->layout;
    *A = 1, *B = 1, *da = NULL, *db = NULL;
    if (shape == SHAPE_TN)
        *A = lay->nT, *B = lay->nN, *da = "T", *db = "N";
    else if (shape == SHAPE_T)
        *A = lay->nT, *da = "T";
    else if (shape == SHAPE_TE)
        *A = lay->nT, *B = lay->neps, *da = "T", *db = "eps";
}

static size_t metric_k(const ns_task_plan *p, ns_metric_id id, size_t a, size_t b)
{
    switch (metric_shape(id)) {
    case SHAPE_TN: return ns_row_index_tn(&p->layout, id, a, b);
    case SHAPE_T: return ns_row_index_t(&p->layout, id, a);
    case SHAPE_TE: return ns_row_index_te(&p->layout, id, a, b);
    default: return p->layout.offset[id];
    }
}

/* Number of cells of a shape: normalizer x L x A x B x layer x head. */
static size_t shape_cells(const ns_task_plan *p, int shape)
{
    size_t A, B;
    const char *da, *db;
    shape_dims(p, shape, &A, &B, &da, &db);
    return p->nnorm * p->nL * A * B * p->nlayers * p->nheads;
}

/* Gather one cell's sample (shard-major, then row) from a block holding, for every shard, the
 * per_head values of one (layer, head, normalizer): out[n_shards * rows]. */
static void gather(const ns_results *res, const double *block, size_t Li, size_t k, double *out)
{
    const ns_task_plan *p = res->plan;
    for (size_t s = 0; s < res->n_shards; s++) {
        const double *src = block + s * p->per_head + Li * p->rows * p->layout.total + k;
        for (size_t r = 0; r < p->rows; r++)
            out[s * p->rows + r] = src[r * p->layout.total];
    }
}

/* ---- the NetCDF description ------------------------------------------------------------- */

#define N_STATS 8
static const char *const stat_names[N_STATS] = {"count", "mean", "std", "min", "max",
                                                "q05", "q50", "q95"};
static const char *const stat_long[N_STATS] = {
    "number of non-missing rows", "mean over rows", "population standard deviation over rows",
    "minimum over rows", "maximum over rows", "0.05 quantile over rows", "median over rows",
    "0.95 quantile over rows"};

static const char *const metric_long[NS_M_COUNT] = {
    "Theorem 1 distance d between the top-N mixture and the other weighted vectors",
    "Theorem 1 d1: largest distance between a non-selected and a selected vector",
    "Theorem 1 upper bound on d",
    "Theorem 1 expected-distance term (epsilon taken as 0)",
    "Theorem 1 distance d for a uniformly random N-subset",
    "Theorem 2 fraction N_s / N of selected vectors inside radius r",
    "Theorem 2 lower bound on N_s / N",
    "Theorem 2 upper bound on N_s / N",
    "Theorem 2 delta: smallest distance between two vectors of the row",
    "exact spectral norm of the softmax Jacobian at temperature T",
    "Lemma 2 general bound on the Jacobian norm of exp(z/T) normalization",
    "finite-difference sensitivity of the normalizer at step eps",
};

typedef struct desc_builder {
    ns_nc_var *vars;
    size_t nvars, cap;
    char **names;     /* owned strings (names / long names) */
    size_t nnames, names_cap;
    void **blocks;    /* owned data blocks */
    size_t nblocks, blocks_cap;
} desc_builder;

static int grow(void **arr, size_t *cap, size_t need, size_t elem)
{
    if (need <= *cap)
        return 0;
    size_t c = *cap ? *cap * 2 : 64;
    while (c < need)
        c *= 2;
    void *n = realloc(*arr, c * elem);
    if (!n)
        return -1;
    *arr = n;
    *cap = c;
    return 0;
}

static char *own_str(desc_builder *b, const char *s)
{
    if (grow((void **)&b->names, &b->names_cap, b->nnames + 1, sizeof *b->names))
        return NULL;
    char *c = strdup(s);
    if (c)
        b->names[b->nnames++] = c;
    return c;
}

static void *own_block(desc_builder *b, size_t bytes)
{
    if (grow((void **)&b->blocks, &b->blocks_cap, b->nblocks + 1, sizeof *b->blocks))
        return NULL;
    void *p = calloc(1, bytes ? bytes : 1);
    if (p)
        b->blocks[b->nblocks++] = p;
    return p;
}

static ns_nc_var *add_var(desc_builder *b, const char *name, ns_nc_type type, const void *data,
                          const char *long_name, const char *units)
{
    if (grow((void **)&b->vars, &b->cap, b->nvars + 1, sizeof *b->vars))
        return NULL;
    ns_nc_var *v = &b->vars[b->nvars];
    memset(v, 0, sizeof *v);
    v->name = own_str(b, name);
    v->long_name = long_name ? own_str(b, long_name) : NULL;
    if (!v->name || (long_name && !v->long_name))
        return NULL;
    v->type = type;
    v->data = data;
    v->units = units;
    b->nvars++;
    return v;
}

static void builder_free(desc_builder *b)
{
    for (size_t i = 0; i < b->nnames; i++)
        free(b->names[i]);
    for (size_t i = 0; i < b->nblocks; i++)
        free(b->blocks[i]);
    free(b->names);
    free(b->blocks);
    free(b->vars);
}

/* Dims (normalizer, L, [da], [db], layer, head[, sample]). */
static void set_dims(ns_nc_var *v, const char *da, const char *db, int sample)
{
    size_t n = 0;
    v->dims[n++] = "normalizer";
    v->dims[n++] = "L";
    if (da)
        v->dims[n++] = da;
    if (db)
        v->dims[n++] = db;
    v->dims[n++] = "layer";
    v->dims[n++] = "head";
    if (sample)
        v->dims[n++] = "sample";
    v->ndims = n;
}

#define B_TRY(expr)                                                  \
    do {                                                             \
        if (!(expr)) {                                               \
            rc = ns_fail(err, NS_ERR_NOMEM, "out of memory (output)"); \
            goto done;                                               \
        }                                                            \
    } while (0)

static const char *or_unknown(const char *s)
{
    return s && *s ? s : "unknown";
}

int ns_results_write(const ns_results *res, const ns_sweep_config *cfg,
                     const ns_results_provenance *prov, ns_err *err)
{
    const ns_task_plan *p = res->plan;
    int rc = NS_OK;
    desc_builder b = {0};
    ns_ks_ws *ks = NULL;
    double *sample = NULL, *sorted = NULL, *sample2 = NULL, *block = NULL;
    if (res->n_done != res->n_shards)
        return ns_fail(err, NS_ERR_INVALID, "output: %zu of %zu shards are missing",
                       res->n_shards - res->n_done, res->n_shards);
    size_t S = res->n_shards * p->rows;
    sample = malloc((S ? S : 1) * sizeof *sample);
    sample2 = malloc((S ? S : 1) * sizeof *sample2);
    sorted = malloc((S ? S : 1) * sizeof *sorted);
    /* One (layer, head, normalizer) slice of every shard's payload at a time. */
    size_t block_len = res->n_shards * p->per_head;
    block = malloc((block_len > 0 ? block_len : 1) * sizeof *block);
    if (!sample || !sample2 || !sorted || !block) {
        rc = ns_fail(err, NS_ERR_NOMEM, "out of memory (%zu samples, %zu-value blocks)", S,
                     res->n_shards * p->per_head);
        goto done;
    }
    if ((rc = ns_ks_ws_new(&ks, err)) != NS_OK)
        goto done;

    /* Coordinates. */
    const char **norm_names = own_block(&b, p->nnorm * sizeof(char *));
    int32_t *cL = own_block(&b, p->nL * sizeof(int32_t));
    int32_t *cN = own_block(&b, cfg->nN * sizeof(int32_t));
    int32_t *clayer = own_block(&b, p->nlayers * sizeof(int32_t));
    int32_t *chead = own_block(&b, p->nheads * sizeof(int32_t));
    int32_t *cshard = own_block(&b, res->n_shards * sizeof(int32_t));
    int32_t *nsamp = own_block(&b, p->nL * sizeof(int32_t));
    double *jb = own_block(&b, cfg->nT * sizeof(double));
    B_TRY(norm_names && cL && cN && clayer && chead && cshard && nsamp && jb);
    char params_text[512] = "";
    for (size_t i = 0; i < p->nnorm; i++) {
        const ns_normalizer *f = &cfg->normalizers[i];
        norm_names[i] = ns_normalizer_name(f->kind);
        size_t used = strlen(params_text);
        if (f->kind == NS_NORM_SSMAX)
            snprintf(params_text + used, sizeof params_text - used, "%sssmax: s = %.17g",
                     used ? "; " : "", f->s);
        else
            snprintf(params_text + used, sizeof params_text - used, "%s%s: none", used ? "; " : "",
                     norm_names[i]);
    }
    for (size_t i = 0; i < p->nL; i++) {
        cL[i] = (int32_t)p->L[i];
        nsamp[i] = (int32_t)S;
    }
    for (size_t i = 0; i < cfg->nN; i++)
        cN[i] = (int32_t)cfg->N[i];
    for (size_t i = 0; i < p->nlayers; i++)
        clayer[i] = (int32_t)p->layers[i];
    for (size_t i = 0; i < p->nheads; i++)
        chead[i] = (int32_t)p->heads[i];
    for (size_t i = 0; i < res->n_shards; i++)
        cshard[i] = (int32_t)i;
    for (size_t i = 0; i < cfg->nT; i++)
        jb[i] = ns_jac_bound(cfg->T[i]);

    ns_nc_var *v;
    B_TRY(v = add_var(&b, "normalizer", NS_NC_STRING, norm_names, "attention normalizer", NULL));
    v->ndims = 1, v->dims[0] = "normalizer";
    v->attr_name = "normalizer_params", v->attr_text = own_str(&b, params_text);
    B_TRY(v = add_var(&b, "L", NS_NC_INT, cL, "context length (row L-1 of each shard prefix)", "1"));
    v->ndims = 1, v->dims[0] = "L";
    B_TRY(v = add_var(&b, "N", NS_NC_INT, cN, "top-N size", "1"));
    v->ndims = 1, v->dims[0] = "N";
    B_TRY(v = add_var(&b, "T", NS_NC_DOUBLE, cfg->T, "normalization temperature", "1"));
    v->ndims = 1, v->dims[0] = "T";
    B_TRY(v = add_var(&b, "eps", NS_NC_DOUBLE, cfg->eps, "finite-difference step", "1"));
    v->ndims = 1, v->dims[0] = "eps";
    B_TRY(v = add_var(&b, "layer", NS_NC_INT, clayer, "0-based transformer layer", "1"));
    v->ndims = 1, v->dims[0] = "layer";
    B_TRY(v = add_var(&b, "head", NS_NC_INT, chead, "0-based attention head", "1"));
    v->ndims = 1, v->dims[0] = "head";
    B_TRY(v = add_var(&b, "shard", NS_NC_INT, cshard, "0-based shard index", "1"));
    v->ndims = 1, v->dims[0] = "shard";

    /* Output arrays: statistics per metric stem (+ samples), KS, n_crit, counts. */
    size_t skipped_cells = 0;
    void *st[NS_M_COUNT][N_STATS];
    double *keep[NS_M_COUNT];
    for (int id = 0; id < NS_M_COUNT; id++) {
        size_t ncell = shape_cells(p, metric_shape((ns_metric_id)id));
        B_TRY(st[id][0] = own_block(&b, ncell * sizeof(int32_t)));
        for (int k = 1; k < N_STATS; k++)
            B_TRY(st[id][k] = own_block(&b, ncell * sizeof(double)));
        keep[id] = NULL;
        if (cfg->keep_samples)
            B_TRY(keep[id] = own_block(&b, ncell * S * sizeof(double)));
    }
    size_t ntn = shape_cells(p, SHAPE_TN), nt = shape_cells(p, SHAPE_T),
           nte = shape_cells(p, SHAPE_TE);
    double *ksD = own_block(&b, ntn * sizeof(double));
    double *ksP = own_block(&b, ntn * sizeof(double));
    int32_t *undef = own_block(&b, ntn * sizeof(int32_t));
    int32_t *ncrit = own_block(&b, nt * sizeof(int32_t));
    int32_t *viol = own_block(&b, nte * sizeof(int32_t));
    int32_t *viol_ex = own_block(&b, nt * sizeof(int32_t));
    double *pcol = own_block(&b, cfg->nN * sizeof(double));
    B_TRY(ksD && ksP && undef && ncrit && viol && viol_ex && pcol);
    const ns_row_layout *lay = &p->layout;
    size_t nN = lay->nN, nT = lay->nT, nE = lay->neps, nlh = p->nlayers * p->nheads;

    for (size_t li = 0; li < p->nlayers; li++)
        for (size_t hi = 0; hi < p->nheads; hi++)
            for (size_t ni = 0; ni < p->nnorm; ni++) {
                size_t lh = li * p->nheads + hi;
                size_t slice = ns_task_row_offset(p, li, hi, ni, 0, 0) * sizeof(double);
                for (size_t sh = 0; sh < res->n_shards; sh++)
                    if ((rc = ns_journal_read(res->journal, res->offset[sh], slice,
                                              p->per_head * sizeof(double),
                                              block + sh * p->per_head, err)) != NS_OK)
                        goto done;
                /* statistics of every metric's cells in this slice */
                for (int id = 0; id < NS_M_COUNT; id++) {
                    size_t A, B;
                    const char *da, *db;
                    shape_dims(p, metric_shape((ns_metric_id)id), &A, &B, &da, &db);
                    for (size_t Li = 0; Li < p->nL; Li++)
                        for (size_t a = 0; a < A; a++)
                            for (size_t bb = 0; bb < B; bb++) {
                                size_t cell = (((ni * p->nL + Li) * A + a) * B + bb) * nlh + lh;
                                gather(res, block, Li, metric_k(p, (ns_metric_id)id, a, bb), sample);
                                if (keep[id])
                                    memcpy(keep[id] + cell * S, sample, S * sizeof *sample);
                                ns_summary sm;
                                ns_summary_compute(&sm, sample, S, sorted);
                                ((int32_t *)st[id][0])[cell] = (int32_t)sm.count;
                                if (sm.count == 0 && id == NS_M_DISTANCE)
                                    skipped_cells++;
                                ((double *)st[id][1])[cell] = sm.mean;
                                ((double *)st[id][2])[cell] = sm.std;
                                ((double *)st[id][3])[cell] = sm.min;
                                ((double *)st[id][4])[cell] = sm.max;
                                ((double *)st[id][5])[cell] = sm.q05;
                                ((double *)st[id][6])[cell] = sm.q50;
                                ((double *)st[id][7])[cell] = sm.q95;
                            }
                }
                /* KS of distance vs distance_random, n_crit, violations, ns_lower undefined */
                for (size_t Li = 0; Li < p->nL; Li++)
                    for (size_t t = 0; t < nT; t++) {
                        size_t tcell = ((ni * p->nL + Li) * nT + t) * nlh + lh;
                        for (size_t n = 0; n < nN; n++) {
                            size_t c = (((ni * p->nL + Li) * nT + t) * nN + n) * nlh + lh;
                            gather(res, block, Li, ns_row_index_tn(lay, NS_M_DISTANCE, t, n), sample);
                            gather(res, block, Li, ns_row_index_tn(lay, NS_M_DISTANCE_RANDOM, t, n),
                                   sample2);
                            if ((rc = ns_ks_2samp_ws(sample, S, sample2, S, ks, &ksD[c], &ksP[c],
                                                     NULL, err)) != NS_OK)
                                goto done;
                            pcol[n] = ksP[c];
                            gather(res, block, Li, ns_row_index_tn(lay, NS_M_NS_LOWER, t, n), sorted);
                            int32_t u = 0;
                            for (size_t i = 0; i < S; i++)
                                u += !isnan(sample[i]) && isnan(sorted[i]);
                            undef[c] = u;
                        }
                        ncrit[tcell] = (int32_t)ns_n_crit(pcol, cfg->N, nN, cfg->ks_alpha);
                        double bound = ns_jac_bound(cfg->T[t]);
                        gather(res, block, Li, ns_row_index_t(lay, NS_M_JAC_EXACT, t), sample);
                        int32_t ve = 0;
                        for (size_t i = 0; i < S; i++)
                            ve += ns_jac_violates(sample[i], bound);
                        viol_ex[tcell] = ve;
                        for (size_t e = 0; e < nE; e++) {
                            gather(res, block, Li, ns_row_index_te(lay, NS_M_JAC_FD, t, e), sample2);
                            int32_t vv = 0;
                            for (size_t i = 0; i < S; i++)
                                vv += ns_jac_violates(sample[i], bound) ||
                                      ns_jac_violates(sample2[i], bound);
                            viol[(((ni * p->nL + Li) * nT + t) * nE + e) * nlh + lh] = vv;
                        }
                    }
            }

    for (int id = 0; id < NS_M_COUNT; id++) {
        size_t A, B;
        const char *da, *db;
        shape_dims(p, metric_shape((ns_metric_id)id), &A, &B, &da, &db);
        const char *stem = ns_metric_name((ns_metric_id)id);
        for (int k = 0; k < N_STATS; k++) {
            char name[96], ln[512];
            snprintf(name, sizeof name, "%s_%s", stem, stat_names[k]);
            snprintf(ln, sizeof ln, "%s of %s (%s)", stat_long[k], stem, metric_long[id]);
            B_TRY(v = add_var(&b, name, k == 0 ? NS_NC_INT : NS_NC_DOUBLE, st[id][k], ln, "1"));
            set_dims(v, da, db, 0);
        }
        if (keep[id]) {
            char name[96], ln[512];
            snprintf(name, sizeof name, "%s_sample", stem);
            snprintf(ln, sizeof ln, "per-row values of %s (sample = shard-major, then row)", stem);
            B_TRY(v = add_var(&b, name, NS_NC_DOUBLE, keep[id], ln, "1"));
            set_dims(v, da, db, 1);
        }
    }
    B_TRY(v = add_var(&b, "ks_statistic", NS_NC_DOUBLE, ksD,
                      "two-sample Kolmogorov-Smirnov statistic of distance vs distance_random", "1"));
    set_dims(v, "T", "N", 0);
    B_TRY(v = add_var(&b, "ks_pvalue", NS_NC_DOUBLE, ksP,
                      "two-sided KS p-value of distance vs distance_random (scipy method='auto')", "1"));
    set_dims(v, "T", "N", 0);
    B_TRY(v = add_var(&b, "n_crit", NS_NC_INT, ncrit,
                      "smallest N whose KS p-value exceeds ks_alpha (-1: none)", "1"));
    set_dims(v, "T", NULL, 0);
    B_TRY(v = add_var(&b, "n_samples", NS_NC_INT, nsamp, "rows analysed per cell (shards x rows)", "1"));
    v->ndims = 1, v->dims[0] = "L";
    B_TRY(v = add_var(&b, "jac_bound", NS_NC_DOUBLE, jb, "corollary bound min(1/(4T), sqrt(2))", "1"));
    v->ndims = 1, v->dims[0] = "T";
    B_TRY(v = add_var(&b, "violations", NS_NC_INT, viol,
                      "rows where jac_exact or jac_fd(eps) exceeds jac_bound by more than 1e-6 relative", "1"));
    set_dims(v, "T", "eps", 0);
    B_TRY(v = add_var(&b, "violations_exact", NS_NC_INT, viol_ex,
                      "rows where jac_exact exceeds jac_bound by more than 1e-6 relative", "1"));
    set_dims(v, "T", NULL, 0);
    B_TRY(v = add_var(&b, "ns_lower_undefined", NS_NC_INT, undef,
                      "rows where r = 0 made ns_lower undefined", "1"));
    set_dims(v, "T", "N", 0);
    B_TRY(v = add_var(&b, "shard_forward_count", NS_NC_INT, res->forward_count,
                      "forward passes run per shard in this sweep", "1"));
    v->ndims = 1, v->dims[0] = "shard";
    int32_t *s_shard = NULL, *s_row = NULL;
    if (cfg->keep_samples) {
        B_TRY(s_shard = own_block(&b, S * sizeof(int32_t)));
        B_TRY(s_row = own_block(&b, S * sizeof(int32_t)));
        for (size_t i = 0; i < S; i++) {
            s_shard[i] = (int32_t)(i / p->rows);
            s_row[i] = (int32_t)(i % p->rows);
        }
        B_TRY(v = add_var(&b, "sample_shard", NS_NC_INT, s_shard, "shard of each sample", "1"));
        v->ndims = 1, v->dims[0] = "sample";
        B_TRY(v = add_var(&b, "sample_row", NS_NC_INT, s_row,
                          "row offset r of each sample (prefix row m = L - 1 - r)", "1"));
        v->ndims = 1, v->dims[0] = "sample";
    }

    /* Dimensions and global attributes. */
    ns_nc_dim dims[] = {
        {"normalizer", p->nnorm}, {"L", p->nL}, {"N", cfg->nN}, {"T", cfg->nT},
        {"eps", cfg->neps}, {"layer", p->nlayers}, {"head", p->nheads},
        {"shard", res->n_shards}, {"sample", S},
    };
    size_t ndims = sizeof dims / sizeof dims[0] - (cfg->keep_samples ? 0 : 1);
    char strip[8], sphere[8], fwd[32];
    snprintf(strip, sizeof strip, "%s", cfg->strip_gutenberg ? "true" : "false");
    snprintf(sphere, sizeof sphere, "%s", cfg->sphere ? "true" : "false");
    snprintf(fwd, sizeof fwd, "%zu", p->L_fwd);
    int all_softmax = 1;
    for (size_t i = 0; i < p->nnorm; i++)
        all_softmax &= cfg->normalizers[i].kind == NS_NORM_SOFTMAX ||
                       cfg->normalizers[i].kind == NS_NORM_SSMAX;
    const ns_asset_ref *m = prov->model, *tk = prov->tokenizer, *co = prov->corpus;
    ns_nc_attr attrs[] = {
        {"Conventions", "CF-1.8", 0, 0, 0},
        {"title", "normsweep: limits of normalization in attention (arXiv 2508.17821)", 0, 0, 0},
        {"normsweep_version", PACKAGE_VERSION, 0, 0, 0},
        {"git_commit", NS_GIT_COMMIT, 0, 0, 0},
        {"sweep_yaml", or_unknown(cfg->yaml_text), 0, 0, 0},
        {"sweep_file", or_unknown(cfg->source_path), 0, 0, 0},
        {"model_requested", m ? m->requested : or_unknown(cfg->model), 0, 0, 0},
        {"model_used", m ? m->name : "unknown", 0, 0, 0},
        {"model_path", m ? m->path : "unknown", 0, 0, 0},
        {"model_sha256", m ? m->sha256 : "unknown", 0, 0, 0},
        {"tokenizer_used", tk ? tk->name : "unknown", 0, 0, 0},
        {"tokenizer_sha256", tk ? tk->sha256 : "unknown", 0, 0, 0},
        {"corpus_used", co ? co->name : "unknown", 0, 0, 0},
        {"corpus_sha256", co ? co->sha256 : "unknown", 0, 0, 0},
        {"corpus_gutenberg_stripped", strip, 0, 0, 0},
        {"corpus_tokens", NULL, (long long)prov->corpus_tokens, 0, 0},
        {"shard_count", NULL, (long long)res->n_shards, 0, 0},
        {"L_max", NULL, (long long)cfg->L_max, 0, 0},
        {"shard_first", NULL, (long long)cfg->shard_first, 0, 0},
        {"shard_stride", NULL, (long long)cfg->shard_stride, 0, 0},
        {"rows", NULL, (long long)cfg->rows, 0, 0},
        {"seed", NULL, (long long)cfg->seed, 0, 0},
        {"probes", NULL, (long long)cfg->probes, 0, 0},
        {"ks_alpha", NULL, 0, 1, cfg->ks_alpha},
        {"sphere", sphere, 0, 0, 0},
        {"mpi_size", NULL, prov->mpi_size, 0, 0},
        {"blas", or_unknown(prov->blas), 0, 0, 0},
        {"compiler", NS_BUILD_CC, 0, 0, 0},
        {"cflags", NS_BUILD_CFLAGS, 0, 0, 0},
        {"start_time", or_unknown(prov->start_time), 0, 0, 0},
        {"end_time", or_unknown(prov->end_time), 0, 0, 0},
        {"command_line", or_unknown(prov->command_line), 0, 0, 0},
        {"skipped_cells", NULL, (long long)skipped_cells, 0, 0},
        {"skipped_rule", "a (normalizer, L, T, N, layer, head) cell with N >= L is skipped: its "
                         "per-row values are missing; skipped_cells counts such cells", 0, 0, 0},
        {"forward_length", fwd, 0, 0, 0},
        {"forward_rule", "one causal forward per shard over its first max(L) tokens (prefix "
                         "property: row m depends only on tokens 0..m)", 0, 0, 0},
        {"row_rule", "row r of context length L is prefix row m = L - 1 - r, r < rows (m + 1 keys)", 0, 0, 0},
        {"vectors", "x_i = the head's value vectors v_i; sphere: true scales each to norm M = 1, "
                    "false uses them raw with M = max_i ||x_i||", 0, 0, 0},
        {"precision", "logits and values float32 from the model; weights and metrics in double", 0, 0, 0},
        {"tie_rule", "top-N ties broken by the smaller key index", 0, 0, 0},
        {"ranking_rule", all_softmax
             ? "I_N = indices of the N largest alpha_i = F(z/T), ranked by the exact log-weight "
               "c z_i (c = 1/T, or s log(L)/T for ssmax): the order of alpha wherever alpha is "
               "representable, unaffected by underflow at small T"
             : "softmax, ssmax: I_N ranked by the exact log-weight c z_i (c = 1/T, or s log(L)/T); "
               "sparsemax, entmax15: ranked by alpha itself (weights outside the support are 0 "
               "and tie, so they follow by index)", 0, 0, 0},
        {"fd_probes", "jac_fd maximizes over u = (e_a - e_b)/sqrt(2) (a, b the two largest logits) "
                      "and `probes` random unit directions keyed by (seed, shard, row, layer, head, "
                      "T), the same for every eps", 0, 0, 0},
        {"xi_rule", "xi_i^2 = M^2 sum_{j in I_N, j != i} alpha_j^2 + (M^2 - delta^2/2) "
                    "sum_{j != k in I_N, j, k != i} alpha_j alpha_k, clamped at 0", 0, 0, 0},
        {"random_selection", "d_random uses a uniform N-subset from a counter-based generator keyed "
                             "by (seed, shard, row, layer, head, N, T)", 0, 0, 0},
        {"expected_term_rule", "d_expected with the paper's epsilon term taken as 0", 0, 0, 0},
        {"ks_method", "scipy.stats.ks_2samp method='auto', two-sided; NaN rows dropped", 0, 0, 0},
        {"n_crit_rule", "smallest N of the grid with KS p-value > ks_alpha; -1 when none", 0, 0, 0},
        {"quantile_method", "exact over the gathered sample, linear interpolation (numpy "
                            "method='linear')", 0, 0, 0},
        {"std_rule", "population standard deviation (ddof = 0)", 0, 0, 0},
        {"missing_rule", "NaN = missing per-row value (N >= L; ns_lower when r = 0; jac_lemma2 for "
                         "sparsemax/entmax15), excluded from every statistic and from KS; +inf is a "
                         "value (Lemma 2 at tiny T; see docs/STATISTICS.md for means/quantiles "
                         "next to infinities)", 0, 0, 0},
        {"violation_rule", "a row violates when jac_exact or jac_fd exceeds jac_bound = "
                           "min(1/(4T), sqrt 2) by more than a relative 1e-6", 0, 0, 0},
        {"merge_rule", "per-row values combined by shard index then row, independent of MPI "
                       "ranks and scheduling", 0, 0, 0},
    };
    ns_nc_sweep_desc desc = {dims, ndims, b.vars, b.nvars, attrs, sizeof attrs / sizeof attrs[0]};
    rc = ns_nc_sweep_write(cfg->output, &desc, err);
done:
    ns_ks_ws_free(ks);
    free(sample);
    free(sample2);
    free(sorted);
    free(block);
    builder_free(&b);
    return rc;
}

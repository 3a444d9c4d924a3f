/* ns_nc_results: the sweep file's layout (see ns_nc_results.h). */
#include "io/ns_nc_results.h"

#include <math.h>
#include <netcdf.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/ns_ks.h"
#include "analysis/ns_metrics.h"
#include "analysis/ns_reduce.h"
#include "io/ns_nc_intervals.h"
#include "io/ns_nc_results_internal.h"

#define NAME_LEN 32 /* characters of a normalizer's label at least (name_len: more when needed) */
#define NS_SINK_EPSILON 0.3 /* sink_heads_frac's threshold (Gu et al. 2024, METRICS.md 8.1) */

/* The quantiles of every metric (`quantile` coordinate): 0 and 1 are the minimum and maximum. */
static const double quantiles[] = {0.0, 0.05, 0.5, 0.95, 1.0};
static const ns_stat_id quantile_stat[] = {NS_ST_MIN, NS_ST_Q05, NS_ST_Q50, NS_ST_Q95, NS_ST_MAX};
#define NQ (sizeof quantiles / sizeof quantiles[0])

/* n_crit_*_status: what n_crit_* holds (docs/OUTPUT.md) */
static const int ncrit_status_values[] = {0, 1, 2};
#define NCRIT_FOUND 0
#define NCRIT_NONE_PASSES 1
#define NCRIT_NOT_COMPUTABLE 2

/* ---- building ----------------------------------------------------------------------------- */

static void *own(ns_results_desc *rd, size_t bytes)
{
    if (rd->nomem)
        return NULL;
    if (rd->nblocks == rd->blocks_cap) {
        size_t cap = rd->blocks_cap ? 2 * rd->blocks_cap : 64;
        void **b = realloc(rd->blocks, cap * sizeof *b);
        if (!b) {
            rd->nomem = 1;
            return NULL;
        }
        rd->blocks = b, rd->blocks_cap = cap;
    }
    void *p = calloc(1, bytes ? bytes : 1);
    if (!p) {
        rd->nomem = 1;
        return NULL;
    }
    rd->blocks[rd->nblocks++] = p;
    return p;
}

static char *own_str(ns_results_desc *rd, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static char *own_str(ns_results_desc *rd, const char *fmt, ...)
{
    char tmp[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(tmp, sizeof tmp, fmt, ap);
    va_end(ap);
    char *s = own(rd, strlen(tmp) + 1);
    if (s)
        strcpy(s, tmp);
    return s;
}

/* A new zeroed variable at the end of the list (NULL when out of memory). */
static ns_nc_var *new_var(ns_results_desc *rd)
{
    if (rd->nomem)
        return NULL;
    if (rd->nvars == rd->cap) {
        size_t cap = rd->cap ? 2 * rd->cap : 128;
        ns_nc_var *v = realloc(rd->vars, cap * sizeof *v);
        if (!v)
            return rd->nomem = 1, NULL;
        rd->vars = v, rd->cap = cap;
    }
    ns_nc_var *v = &rd->vars[rd->nvars++];
    memset(v, 0, sizeof *v);
    return v;
}

/* A new variable over the comma-separated dimension list dims (NULL when out of memory). */
static ns_nc_var *add_var(ns_results_desc *rd, const char *name, ns_nc_type type,
                          const char *dims, const void *data, const char *long_name,
                          const char *units)
{
    if (rd->nomem || !name || !data)
        return rd->nomem = 1, NULL;
    ns_nc_var *v = new_var(rd);
    if (!v)
        return NULL;
    v->name = name;
    v->type = type;
    v->data = data;
    char *list = own_str(rd, "%s", dims);
    if (!list)
        return NULL;
    for (char *tok = strtok(list, ","); tok && v->ndims < NS_NC_MAX_DIMS; tok = strtok(NULL, ","))
        v->dims[v->ndims++] = tok;
    ns_nc_var_text(v, "long_name", long_name);
    ns_nc_var_text(v, "units", units);
    int by_norm = 0;
    for (size_t k = 0; k < v->ndims; k++)
        by_norm |= strcmp(v->dims[k], "normalizer") == 0;
    if (by_norm && strncmp(name, "normalizer", 10) != 0)
        ns_nc_var_text(v, "coordinates", "normalizer_s"); /* ssmax's s beside the label */
    return v;
}

/* Gather nfield fields of every slice, each into its own array over (normalizer?, L, cell, layer,
 * head, blk): field f of cell c < ncell lies at slice k's values base + c step + f blk .. + blk.
 * with_norm 0 takes normalizer 0 and drops that dimension. outs[f] receive the arrays (NULL when
 * out of memory): allocated here, or, with preset, given by the caller (gather_len values each).
 * The arrays run over (layer, head) fastest while the slices are numbered (layer, head,
 * normalizer, L), so each (normalizer, L) is a transpose: it is done in tiles of GATHER_TILE
 * cells, which read each slice's cells contiguously (every field of them in one pass) and fill
 * the tile's rows of every field in order, so that each cache line read or written is used
 * whole (value by value across the slices it had cost a line per value: 6.1 s for GPT-2 XL's
 * 1.5 GB of output). */
#define GATHER_TILE 8
static void gather_fields(ns_results_desc *rd, const ns_results_data *d, const double *src,
                          size_t total, size_t base, size_t step, size_t nfield, size_t ncell,
                          size_t blk, int with_norm, int preset, double **outs)
{
    const ns_grid *g = d->grid;
    size_t nnorm = with_norm ? g->nnormalizers : 1, nlh = g->nlayers * g->nheads;
    size_t n = nnorm * g->nL * ncell * nlh * blk;
    for (size_t f = 0; f < nfield && !preset; f++)
        outs[f] = NULL;
    if (preset && rd->nomem)
        return;
    size_t nsl = d->derived->nslices;
    /* slice_of[(ni, Li, layer, head)]: the slice holding that (normalizer, L, layer, head) */
    size_t *slice_of = malloc(nnorm * g->nL * nlh * sizeof *slice_of + 1);
    if (!slice_of) {
        rd->nomem = 1;
        return;
    }
    for (size_t k = 0; k < nsl; k++) {
        size_t li, hi, ni, Li;
        ns_grid_slice_index(g, k, &li, &hi, &ni, &Li);
        if (ni < nnorm)
            slice_of[(ni * g->nL + Li) * nlh + li * g->nheads + hi] = k;
    }
    for (size_t f = 0; f < nfield && !preset; f++)
        if (!(outs[f] = own(rd, n * sizeof *outs[f]))) {
            free(slice_of);
            return;
        }
    for (size_t nl = 0; nl < nnorm * g->nL; nl++)
        for (size_t c0 = 0; c0 < ncell; c0 += GATHER_TILE) {
            size_t c1 = c0 + GATHER_TILE < ncell ? c0 + GATHER_TILE : ncell;
            for (size_t j = 0; j < nlh; j++) {
                const double *s = src + slice_of[nl * nlh + j] * total + base;
                for (size_t c = c0; c < c1; c++) {
                    size_t o = ((nl * ncell + c) * nlh + j) * blk;
                    if (blk == 1) /* every statistic: one value per cell, no memcpy call */
                        for (size_t f = 0; f < nfield; f++)
                            outs[f][o] = s[c * step + f];
                    else
                        for (size_t f = 0; f < nfield; f++)
                            memcpy(outs[f] + o, s + c * step + f * blk, blk * sizeof(double));
                }
            }
        }
    free(slice_of);
}

/* One field (gather_fields with nfield 1). */
static double *gather(ns_results_desc *rd, const ns_results_data *d, const double *src,
                      size_t total, size_t base, size_t step, size_t ncell, size_t blk,
                      int with_norm)
{
    double *out;
    gather_fields(rd, d, src, total, base, step, 1, ncell, blk, with_norm, 0, &out);
    return out;
}

/* Values per field of gather_fields. */
static size_t gather_len(const ns_results_data *d, size_t ncell, size_t blk, int with_norm)
{
    const ns_grid *g = d->grid;
    return (with_norm ? g->nnormalizers : 1) * g->nL * ncell * g->nlayers * g->nheads * blk;
}

static int32_t *to_int(ns_results_desc *rd, const double *x, size_t n)
{
    int32_t *out = x ? own(rd, n * sizeof *out) : NULL;
    if (!out)
        return NULL;
    for (size_t i = 0; i < n; i++)
        out[i] = isnan(x[i]) ? -1 : (int32_t)x[i];
    return out;
}

/* The dimension list of a metric's dims: "normalizer,L,T,N,layer,head" and so on. */
static const char *metric_dims(ns_metric_dims dims, int samples)
{
    static const char *const list[4][2] = {
        {"normalizer,L,T,N,layer,head", "normalizer,L,T,N,layer,head,sample"},
        {"normalizer,L,T,layer,head", "normalizer,L,T,layer,head,sample"},
        {"normalizer,L,T,eps,layer,head", "normalizer,L,T,eps,layer,head,sample"},
        {"L,layer,head", "L,layer,head,sample"},
    };
    return list[dims][samples];
}

/* The label of normalizer i (ns_normalizer_label): ssmax's s only when the grid has another
 * ssmax of the same view (two ssmax), entmax's alpha and sigmoid's b always, ", sink excluded"
 * for a view, so labels are unique. */
static int normalizer_label(const ns_grid *g, size_t i, char *buf, size_t size)
{
    const ns_normalizer *f = &g->normalizers[i];
    int twin = 0;
    for (size_t j = 0; j < g->nnormalizers; j++)
        twin |= j != i && g->normalizers[j].kind == f->kind && g->normalizers[j].view == f->view;
    return ns_normalizer_label(f, twin, buf, size);
}

/* The keys a row of L keys has in normalizer ni's view: L, or L - 1 for the sink-excluded one. */
static double view_keys(const ns_grid *g, size_t ni, size_t L)
{
    return (double)L - (g->normalizers[ni].view == NS_VIEW_SINK_EXCLUDED ? 1.0 : 0.0);
}

/* `view` (normalizer), only in a grid with a sink-excluded view (sink_view: true): which keys each
 * entry of the normalizer axis is computed over, and the rule (docs/METRICS.md section 8.2). */
static void add_view_var(ns_results_desc *rd, const ns_grid *g)
{
    int any = 0;
    for (size_t i = 0; i < g->nnormalizers; i++)
        any |= g->normalizers[i].view == NS_VIEW_SINK_EXCLUDED;
    int32_t *view = any ? own(rd, g->nnormalizers * sizeof *view) : NULL;
    if (!view)
        return;
    for (size_t i = 0; i < g->nnormalizers; i++)
        view[i] = g->normalizers[i].view == NS_VIEW_SINK_EXCLUDED;
    ns_nc_var *v = add_var(rd, "view", NS_NC_INT, "normalizer", view,
                           "keys each normalizer entry is computed over", NULL);
    if (!v)
        return;
    v->fill = NS_FILL_NONE;
    ns_nc_var_ints(v, "flag_values", ncrit_status_values, 2);
    ns_nc_var_text(v, "flag_meanings", "all_keys sink_excluded");
    ns_nc_var_text(v, "comment",
        "sink_view: true (issue 36, docs/METRICS.md section 8.2). sink_excluded: a = F(z/T) over "
        "all L keys of the row, key 0 (the window's first token) dropped, the remaining L - 1 "
        "renormalised, p = a_{1..} / m; every metric is computed on those L - 1 keys and their "
        "vectors (N < L - 1, d_random over L - 1 keys, delta and M of keys 1..); mass = m = sum "
        "of the remaining a (1 - p_0 on the simplex); sink_mass = p_0 of the view, the share on "
        "the window's key 1; ranked by log p; jac_exact and jac_fd are of a_{1..} as a function "
        "of z_{1..} with z_0 held fixed (the trailing block of the normalizer's Jacobian; "
        "jac_exact missing for softpick and stickbreaking), jac_lemma2 missing; a view with m = 0 "
        "(or no key: L = 1) is empty; n_crit_*_frac = n_crit / (L - 1)");
}

/* The name_strlen dimension: NAME_LEN, or the longest label when one is longer. */
static size_t name_len(const ns_grid *g)
{
    size_t len = NAME_LEN;
    for (size_t i = 0; i < g->nnormalizers; i++) {
        char tmp[64];
        size_t n = (size_t)normalizer_label(g, i, tmp, sizeof tmp);
        if (n > len)
            len = n;
    }
    return len;
}

/* The per-row sample's coordinates (keep_samples: true only). */
static void add_sample_coords(ns_results_desc *rd, const ns_results_data *d, size_t S)
{
    const ns_grid *g = d->grid;
    int32_t *sample = own(rd, S * sizeof *sample), *s_shard = own(rd, S * sizeof *s_shard);
    int32_t *s_row = own(rd, S * sizeof *s_row);
    if (rd->nomem)
        return;
    for (size_t i = 0; i < S; i++)
        sample[i] = (int32_t)i, s_shard[i] = (int32_t)(i / g->rows), s_row[i] = (int32_t)(i % g->rows);
    ns_nc_var *v;
    add_var(rd, "sample", NS_NC_INT, "sample", sample,
            "row of a cell's sample (shard-major, then row)", NULL);
    if ((v = add_var(rd, "sample_shard", NS_NC_INT, "sample", s_shard, "shard of each sample row",
                     NULL)))
        v->fill = NS_FILL_NONE;
    if ((v = add_var(rd, "sample_row", NS_NC_INT, "sample", s_row,
                     "row offset r of each sample (prefix row m = L - 1 - r)", NULL)))
        v->fill = NS_FILL_NONE;
}

static void add_coords(ns_results_desc *rd, const ns_results_data *d, size_t S)
{
    const ns_grid *g = d->grid;
    size_t nlen = name_len(g);
    char *names = own(rd, g->nnormalizers * nlen);
    double *s = own(rd, g->nnormalizers * sizeof *s);
    int32_t *L = own(rd, g->nL * sizeof *L), *N = own(rd, (g->nN + 1) * sizeof *N);
    int32_t *layer = own(rd, g->nlayers * sizeof *layer), *head = own(rd, g->nheads * sizeof *head);
    int32_t *shard = own(rd, d->n_shards * sizeof *shard), *start = own(rd, d->n_shards * sizeof *start);
    int32_t *nsamp = own(rd, g->nL * sizeof *nsamp);
    double *jb = own(rd, g->nT * sizeof *jb);
    if (rd->nomem)
        return;
    for (size_t i = 0; i < g->nnormalizers; i++) {
        char tmp[64];
        size_t n = (size_t)normalizer_label(g, i, tmp, sizeof tmp);
        memcpy(names + i * nlen, tmp, n < nlen ? n : nlen);
        s[i] = g->normalizers[i].kind == NS_NORM_SSMAX ? g->normalizers[i].s : NAN;
    }
    for (size_t i = 0; i < g->nL; i++)
        L[i] = (int32_t)g->L[i], nsamp[i] = (int32_t)S;
    for (size_t i = 0; i < g->nN; i++)
        N[i] = (int32_t)g->N[i];
    for (size_t i = 0; i < g->nlayers; i++)
        layer[i] = (int32_t)g->layers[i];
    for (size_t i = 0; i < g->nheads; i++)
        head[i] = (int32_t)g->heads[i];
    for (size_t i = 0; i < d->n_shards; i++) {
        shard[i] = (int32_t)i;
        start[i] = (int32_t)(d->shard_first + i * d->shard_stride);
    }
    memcpy(jb, d->derived->jac_bound, g->nT * sizeof *jb);
    ns_nc_var *v;
    if ((v = add_var(rd, "normalizer", NS_NC_CHAR, "normalizer,name_strlen", names,
                     "attention normalizer", NULL))) {
        ns_nc_var_text(v, "_Encoding", "utf-8"); /* read as text, not bytes, by xarray */
        int params = 0;
        for (size_t i = 0; i < g->nnormalizers; i++)
            params |= g->normalizers[i].kind == NS_NORM_ENTMAX ||
                      g->normalizers[i].kind == NS_NORM_SIGMOID;
        ns_nc_var_text(v, "comment",
                       params ? "the normalizer's name with its parameter: \"entmax alpha=VALUE\", "
                                "\"sigmoid b=VALUE\" or \"sigmoid b=-log(L)\" (the default, each "
                                "row's own number of keys L), \"ssmax s=VALUE\" when the grid has "
                                "two ssmax; VALUE the shortest text that reads back as the double; "
                                "select with .sel(normalizer='sigmoid b=-log(L)')"
                              : "the normalizer's name (\"ssmax s=VALUE\" when the grid has two "
                                "ssmax); select with .sel(normalizer='softmax')");
    }
    add_var(rd, "normalizer_s", NS_NC_DOUBLE, "normalizer", s,
            "scalable softmax parameter s (missing for the other normalizers)", "1");
    add_view_var(rd, g);
    if ((v = add_var(rd, "quantile", NS_NC_DOUBLE, "quantile", quantiles,
                     "probability of the quantile over rows (0: minimum, 1: maximum)", "1")))
        ns_nc_var_text(v, "comment", "exact quantiles, linear interpolation between order "
                                     "statistics (numpy's default)");
    add_var(rd, "L", NS_NC_INT, "L", L, "context length (keys of the analysed query row)", NULL);
    add_var(rd, "N", NS_NC_INT, "N", N, "top-N size", NULL);
    add_var(rd, "T", NS_NC_DOUBLE, "T", g->T, "normalization temperature", "1");
    add_var(rd, "eps", NS_NC_DOUBLE, "eps", g->eps, "finite-difference step", "1");
    add_var(rd, "layer", NS_NC_INT, "layer", layer, "0-based transformer layer", NULL);
    add_var(rd, "head", NS_NC_INT, "head", head, "0-based attention head", NULL);
    add_var(rd, "shard", NS_NC_INT, "shard", shard, "0-based shard index", NULL);
    if ((v = add_var(rd, "shard_start", NS_NC_INT, "shard", start,
                     "first token of the shard in the (stripped) corpus", NULL)))
        v->fill = NS_FILL_NONE;
    if (d->samples)
        add_sample_coords(rd, d, S);
    if ((v = add_var(rd, "n_samples", NS_NC_INT, "L", nsamp,
                     "rows per cell before skipping (shards x rows)", "1")))
        v->fill = NS_FILL_NONE;
    add_var(rd, "jac_bound", NS_NC_DOUBLE, "T", jb, "the paper's bound min(1/(4T), sqrt 2)", "1");
    if (d->forward_count &&
        (v = add_var(rd, "shard_forward_count", NS_NC_INT, "shard", d->forward_count,
                     "forward passes run per shard in this sweep (resumes included)", "1")))
        v->fill = NS_FILL_NONE;
}

/* The dimension list of a metric's statistics with the quantile dimension first. */
static const char *quantile_dims(ns_results_desc *rd, ns_metric_dims dims)
{
    return own_str(rd, "quantile,%s", metric_dims(dims, 0));
}

/* A metric's statistics: <stem>_count (int), _mean, _std, and _quantile (quantile first: its
 * 0 and 1 are the minimum and maximum), all gathered in one pass. */
static void add_stats(ns_results_desc *rd, const ns_results_data *d, const ns_slice_layout *sl,
                      size_t total, int m)
{
    const ns_metric_info *mi = ns_metric_info_of((ns_metric_id)m);
    int with_norm = mi->dims != NS_DIMS_ROW;
    size_t ncell = sl->cells[m], n = gather_len(d, ncell, 1, with_norm);
    double *xs[NS_ST_COUNT_ALL];
    double *q = own(rd, NQ * n * sizeof *q);
    for (int st = NS_ST_COUNT; st <= NS_ST_STD; st++)
        xs[st] = own(rd, n * sizeof *xs[st]);
    for (size_t k = 0; k < NQ; k++)
        xs[quantile_stat[k]] = q ? q + k * n : NULL;
    gather_fields(rd, d, d->slices, total, sl->stats[m], NS_ST_COUNT_ALL, NS_ST_COUNT_ALL, ncell,
                  1, with_norm, 1, xs);
    if (rd->nomem)
        return;
    ns_nc_var *v;
    for (int st = NS_ST_COUNT; st <= NS_ST_STD; st++) {
        const ns_stat_info *si = ns_stat_info_of((ns_stat_id)st);
        const char *name = own_str(rd, "%s_%s", mi->name, si->suffix);
        const char *ln = own_str(rd, "%s of %s", si->long_name, mi->long_name);
        if (st == NS_ST_COUNT) {
            v = add_var(rd, name, NS_NC_INT, metric_dims(mi->dims, 0), to_int(rd, xs[st], n), ln,
                        "1");
            if (v)
                v->fill = NS_FILL_NONE;
        } else {
            v = add_var(rd, name, NS_NC_DOUBLE, metric_dims(mi->dims, 0), xs[st], ln, mi->units);
        }
        if (v)
            ns_nc_var_text(v, "comment", mi->meaning);
    }
    v = add_var(rd, own_str(rd, "%s_quantile", mi->name), NS_NC_DOUBLE,
                quantile_dims(rd, mi->dims), q,
                own_str(rd, "quantiles over rows of %s", mi->long_name), mi->units);
    if (v)
        ns_nc_var_text(v, "comment", mi->meaning);
}

static void add_metrics(ns_results_desc *rd, const ns_results_data *d, const ns_slice_layout *sl,
                        size_t total, size_t S, size_t stotal)
{
    size_t soff = 0;
    for (int m = 0; m < NS_M_COUNT; m++) {
        const ns_metric_info *mi = ns_metric_info_of((ns_metric_id)m);
        int with_norm = mi->dims != NS_DIMS_ROW;
        size_t ncell = sl->cells[m];
        add_stats(rd, d, sl, total, m);
        if (d->samples) {
            double *x = gather(rd, d, d->samples, stotal, soff, S, ncell, S, with_norm);
            ns_nc_var *v = add_var(rd, own_str(rd, "%s_sample", mi->name), NS_NC_DOUBLE,
                                   metric_dims(mi->dims, 1), x,
                                   own_str(rd, "per-row values of %s", mi->long_name), mi->units);
            if (v)
                ns_nc_var_text(v, "comment", mi->meaning);
        }
        soff += ncell * S;
    }
}

/* n_crit of one test: the N (missing where none is found), its status (found, none of the grid's
 * N passes, not computable) and n_crit / L (missing where n_crit is). */
static void add_n_crit(ns_results_desc *rd, const ns_results_data *d, const ns_slice_layout *sl,
                       size_t total, int k, const char *stem, const char *against)
{
    const ns_grid *g = d->grid;
    size_t n = g->nnormalizers * g->nL * g->nT * g->nlayers * g->nheads;
    double *nc = gather(rd, d, d->slices, total, sl->n_crit[k], 1, g->nT, 1, 1);
    double *frac = own(rd, n * sizeof *frac);
    int32_t *nci = own(rd, n * sizeof *nci), *status = own(rd, n * sizeof *status);
    if (!nc || !frac || !nci || !status)
        return;
    for (size_t i = 0; i < n; i++) {
        size_t Li = (i / (g->nT * g->nlayers * g->nheads)) % g->nL;
        int found = nc[i] >= 1.0;
        nci[i] = found ? (int32_t)nc[i] : -1;
        status[i] = found ? NCRIT_FOUND : nc[i] == NS_NCRIT_NONE ? NCRIT_NONE_PASSES
                                                                 : NCRIT_NOT_COMPUTABLE;
        size_t ni = i / (g->nL * g->nT * g->nlayers * g->nheads);
        frac[i] = found ? nc[i] / view_keys(g, ni, g->L[Li]) : NAN;
    }
    const char *dims = "normalizer,L,T,layer,head";
    const char *status_name = own_str(rd, "n_crit_%s_status", stem);
    ns_nc_var *v = add_var(rd, own_str(rd, "n_crit_%s", stem), NS_NC_INT, dims, nci,
                           own_str(rd, "critical N: smallest N of the grid whose KS p-value of %s "
                                       "exceeds ks_alpha", against), NULL);
    if (v) {
        ns_nc_var_int(v, "valid_min", 1);
        ns_nc_var_text(v, "ancillary_variables", status_name);
        ns_nc_var_text(v, "comment", own_str(rd, "missing (_FillValue) where no N is found: %s "
                                                 "says why (none of the grid's N passes, or not "
                                                 "computable)", status_name));
    }
    if ((v = add_var(rd, status_name, NS_NC_INT, dims, status,
                     own_str(rd, "status of n_crit_%s", stem), NULL))) {
        v->fill = NS_FILL_NONE;
        ns_nc_var_ints(v, "flag_values", ncrit_status_values, 3);
        ns_nc_var_text(v, "flag_meanings", "found none_of_the_grid_N_passes not_computable");
        ns_nc_var_text(v, "comment", "found: n_crit holds the N; none_of_the_grid_N_passes: every "
                                     "computable N of the grid was tested and none passes (n_crit "
                                     "lies above the grid's largest N below L); not_computable: "
                                     "every N skipped");
    }
    v = add_var(rd, own_str(rd, "n_crit_%s_frac", stem), NS_NC_DOUBLE, dims, frac,
                own_str(rd, "critical N of the %s KS test as a fraction of L", stem), "1");
    if (v) {
        ns_nc_var_text(v, "ancillary_variables", status_name);
        ns_nc_var_text(v, "comment", own_str(rd, "n_crit / L; missing where n_crit is (%s says "
                                                 "why)", status_name));
    }
}

/* sink_heads_frac: per (normalizer, L, T, layer), the fraction of the grid's heads whose mean
 * sink_mass exceeds NS_SINK_EPSILON, over the heads that have a mean (missing when none has). */
static void add_sink_heads(ns_results_desc *rd, const ns_results_data *d,
                           const ns_slice_layout *sl, size_t total)
{
    const ns_grid *g = d->grid;
    size_t H = g->nheads, n = g->nnormalizers * g->nL * g->nT * g->nlayers;
    double *mean = gather(rd, d, d->slices, total, sl->stats[NS_M_SINK_MASS] + NS_ST_MEAN,
                          NS_ST_COUNT_ALL, g->nT, 1, 1);
    double *frac = own(rd, n * sizeof *frac);
    if (!mean || !frac)
        return;
    for (size_t i = 0; i < n; i++) { /* mean runs over (normalizer, L, T, layer, head) */
        size_t with = 0, sinks = 0;
        for (size_t h = 0; h < H; h++) {
            double x = mean[i * H + h];
            with += !isnan(x);
            sinks += x > NS_SINK_EPSILON;
        }
        frac[i] = with ? (double)sinks / (double)with : NAN;
    }
    ns_nc_var *v = add_var(rd, "sink_heads_frac", NS_NC_DOUBLE, "normalizer,L,T,layer", frac,
                           "fraction of heads whose mean sink_mass exceeds 0.3", "1");
    if (!v)
        return;
    ns_nc_var_text(v, "comment",
                   "over the grid's heads of the layer that have a mean sink_mass (sink_mass_mean: "
                   "over every analysed row of every shard), the fraction with mean > 0.3 "
                   "(strictly); the sink criterion epsilon = 0.3 of Gu et al., 'When Attention Sink "
                   "Emerges in Language Models: An Empirical View' (ICLR 2025, arXiv 2410.10781), "
                   "who threshold each sequence's mean over its queries and average the indicator; "
                   "missing when no head has a mean; METRICS.md section 8.1");
}

static void add_ks(ns_results_desc *rd, const ns_results_data *d, const ns_slice_layout *sl,
                   size_t total)
{
    static const char *const stem[NS_KS_TESTS] = {"expected", "random"};
    static const char *const against[NS_KS_TESTS] = {
        "distance against distance_expected (the paper's test)",
        "distance against distance_random (the stricter test)"};
    const ns_grid *g = d->grid;
    size_t tn = g->nT * g->nN;
    for (int k = 0; k < NS_KS_TESTS; k++) {
        ns_nc_var *v;
        v = add_var(rd, own_str(rd, "ks_%s_statistic", stem[k]), NS_NC_DOUBLE,
                    "normalizer,L,T,N,layer,head",
                    gather(rd, d, d->slices, total, sl->ks_stat[k], 1, tn, 1, 1),
                    own_str(rd, "two-sample Kolmogorov-Smirnov statistic D of %s", against[k]), "1");
        if (v)
            ns_nc_var_text(v, "comment", "over all rows of all shards of the cell");
        v = add_var(rd, own_str(rd, "ks_%s_pvalue", stem[k]), NS_NC_DOUBLE,
                    "normalizer,L,T,N,layer,head",
                    gather(rd, d, d->slices, total, sl->ks_p[k], 1, tn, 1, 1),
                    own_str(rd, "two-sided KS p-value of %s (scipy method='auto')", against[k]), "1");
        if (v)
            ns_nc_var_text(v, "comment", "over all rows of all shards of the cell");
        add_n_crit(rd, d, sl, total, k, stem[k], against[k]);
    }
}

static void add_counts(ns_results_desc *rd, const ns_results_data *d, const ns_slice_layout *sl,
                       size_t total)
{
    static const char *const dims[] = {
        [NS_CD_TN] = "normalizer,L,T,N,layer,head", [NS_CD_T] = "normalizer,L,T,layer,head",
        [NS_CD_TE] = "normalizer,L,T,eps,layer,head"};
    const ns_grid *g = d->grid;
    for (int c = 0; c < NS_C_COUNT; c++) {
        const ns_count_info *ci = ns_count_info_of((ns_count_id)c);
        size_t ncell = ns_count_cells(ci->dims, g->nT, g->nN, g->neps);
        double *x = gather(rd, d, d->slices, total, sl->count[c], 1, ncell, 1, 1);
        ns_nc_var *v = add_var(rd, ci->name, NS_NC_INT, dims[ci->dims],
                               to_int(rd, x, gather_len(d, ncell, 1, 1)), ci->long_name, "1");
        if (!v)
            continue;
        v->fill = NS_FILL_NONE;
        ns_nc_var_text(v, "comment", ci->rule);
        if (ci->checked != (ns_count_id)c)
            ns_nc_var_text(v, "denominator", ns_count_info_of(ci->checked)->name);
    }
}

/* The sweep's own global attributes beside the provenance. */
static size_t run_attrs(const ns_results_data *d, ns_nc_attr *a)
{
    const ns_grid *g = d->grid;
    size_t k = 0;
    a[k++] = (ns_nc_attr){.name = "shard_count", .ival = (long long)d->n_shards};
    a[k++] = (ns_nc_attr){.name = "L_max", .ival = (long long)d->L_max};
    a[k++] = (ns_nc_attr){.name = "shard_first", .ival = (long long)d->shard_first};
    a[k++] = (ns_nc_attr){.name = "shard_stride", .ival = (long long)d->shard_stride};
    a[k++] = (ns_nc_attr){.name = "corpus_tokens", .ival = (long long)d->corpus_tokens};
    a[k++] = (ns_nc_attr){.name = "forward_length", .ival = (long long)d->derived->L_fwd};
    a[k++] = (ns_nc_attr){.name = "rows", .ival = (long long)g->rows};
    a[k++] = (ns_nc_attr){.name = "seed", .ival = (long long)g->seed};
    a[k++] = (ns_nc_attr){.name = "probes", .ival = (long long)g->probes};
    a[k++] = (ns_nc_attr){.name = "ks_alpha", .dval = d->ks_alpha, .is_double = 1};
    a[k++] = (ns_nc_attr){.name = "sphere", .text = g->sphere ? "true" : "false"};
    a[k++] = (ns_nc_attr){.name = "keep_samples", .text = d->samples ? "true" : "false"};
    a[k++] = (ns_nc_attr){.name = "output_layout", .ival = NS_OUTPUT_LAYOUT};
    a[k++] = (ns_nc_attr){.name = "compression",
                          .text = d->uncompressed ? "none" : NS_NC_COMPRESSION};
    return k;
}

/* The whole file's description (prov may be NULL: no global attributes, for comparisons). The
 * arrays it points to are allocated here; free with ns_results_desc_free. */
int ns_results_desc_new(const ns_results_data *d, const ns_provenance *prov,
                        ns_results_desc **out, ns_err *err)
{
    *out = NULL;
    ns_results_desc *rd = calloc(1, sizeof *rd);
    if (!rd)
        return ns_fail(err, NS_ERR_NOMEM, "output: out of memory");
    const ns_grid *g = d->grid;
    size_t S = d->n_shards * g->rows, total = d->derived->slice.total;
    size_t stotal = ns_grid_slice_samples(d->derived, S);
    const ns_slice_layout *sl = &d->derived->slice;
    ns_nc_dim dims[] = {
        {"normalizer", g->nnormalizers}, {"name_strlen", name_len(g)}, {"quantile", NQ},
        {"L", g->nL}, {"N", g->nN}, {"T", g->nT}, {"eps", g->neps}, {"layer", g->nlayers},
        {"head", g->nheads}, {"shard", d->n_shards}, {"sample", S},
    };
    memcpy(rd->dims, dims, sizeof dims);
    size_t ndims = sizeof dims / sizeof dims[0] - (d->samples ? 0 : 1); /* sample: kept rows */
    add_coords(rd, d, S);
    add_metrics(rd, d, sl, total, S, stotal);
    add_sink_heads(rd, d, sl, total);
    add_ks(rd, d, sl, total);
    add_counts(rd, d, sl, total);
    if (d->intervals && (rd->iv = own(rd, sizeof *rd->iv))) {
        ns_nc_intervals_describe(d->intervals, rd->iv);
        memcpy(rd->dims + ndims, rd->iv->dims, sizeof rd->iv->dims);
        ndims += 2;
        for (size_t i = 0; i < rd->iv->nvars; i++) {
            ns_nc_var *v = new_var(rd);
            if (v)
                *v = rd->iv->vars[i]; /* strings and data borrowed from rd->iv and d */
        }
    }
    if (rd->nomem) {
        ns_results_desc_free(rd);
        return ns_fail(err, NS_ERR_NOMEM, "output: out of memory");
    }
    size_t na = 0;
    if (prov) {
        na = ns_provenance_attrs(prov, rd->attrs, NS_PROVENANCE_MAX_ATTRS, rd->attr_buf,
                                 sizeof rd->attr_buf);
        na += run_attrs(d, rd->attrs + na);
        for (size_t i = 0; rd->iv && i < NS_NC_INTERVALS_ATTRS; i++)
            rd->attrs[na++] = rd->iv->attrs[i];
    }
    rd->desc = (ns_nc_desc){rd->dims, ndims, rd->vars, rd->nvars,
                            rd->attrs, na, d->uncompressed};
    *out = rd;
    return NS_OK;
}

void ns_results_desc_free(ns_results_desc *rd)
{
    if (!rd)
        return;
    for (size_t i = 0; i < rd->nblocks; i++)
        free(rd->blocks[i]);
    free(rd->blocks);
    free(rd->vars);
    free(rd);
}

int ns_nc_results_write(const char *path, const ns_results_data *d, const ns_provenance *prov,
                        ns_err *err)
{
    ns_results_desc *rd;
    NS_TRY(ns_results_desc_new(d, prov, &rd, err));
    int rc = ns_nc_write(path, &rd->desc, err);
    ns_results_desc_free(rd);
    return rc;
}

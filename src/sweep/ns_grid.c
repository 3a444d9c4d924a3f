/* ns_grid: expansion of a validated sweep into tasks, analysed rows and the (L, N) skip table. */
#include "sweep/ns_grid.h"

#include <stdlib.h>
#include <string.h>

void ns_grid_free(ns_grid *g)
{
    if (!g)
        return;
    free(g->row_m);
    free(g->shard_rows);
    free(g->skip);
    free(g->cell_rows);
    memset(g, 0, sizeof *g);
}

static int cmp_size(const void *a, const void *b)
{
    size_t x = *(const size_t *)a, y = *(const size_t *)b;
    return x < y ? -1 : x > y;
}

/* a * b, or 0 with *ovf set on overflow */
static size_t mul(size_t a, size_t b, int *ovf)
{
    size_t r;
    if (__builtin_mul_overflow(a, b, &r)) {
        *ovf = 1;
        return 0;
    }
    return r;
}

int ns_grid_build(ns_grid *g, const ns_sweep_config *cfg, ns_err *err)
{
    memset(g, 0, sizeof *g);
    if (cfg->layers_all && !cfg->nlayers)
        return ns_fail(err, NS_ERR_INVALID,
                       "grid: `layers: all` is not expanded yet (check the sweep against the model "
                       "first)");
    if (cfg->heads_all && !cfg->nheads)
        return ns_fail(err, NS_ERR_INVALID,
                       "grid: `heads: all` is not expanded yet (check the sweep against the model "
                       "first)");
    if (!cfg->shard_count || !cfg->L_max || !cfg->nL || !cfg->nN || !cfg->nT || !cfg->neps ||
        !cfg->nlayers || !cfg->nheads || !cfg->nnormalizers || !cfg->rows)
        return ns_fail(err, NS_ERR_INVALID,
                       "grid: the sweep has an empty dimension (shards %zu, L %zu, N %zu, T %zu, "
                       "eps %zu, layers %zu, heads %zu, normalizers %zu, rows %zu)",
                       cfg->shard_count, cfg->nL, cfg->nN, cfg->nT, cfg->neps, cfg->nlayers,
                       cfg->nheads, cfg->nnormalizers, cfg->rows);
    for (size_t i = 0; i < cfg->nL; i++) {
        if (cfg->L[i] > cfg->L_max || cfg->L[i] < 1)
            return ns_fail(err, NS_ERR_INVALID, "grid: L = %zu is outside 1..L_max = %zu",
                           cfg->L[i], cfg->L_max);
        if (cfg->rows > cfg->L[i])
            return ns_fail(err, NS_ERR_INVALID, "grid: rows = %zu exceeds L = %zu", cfg->rows,
                           cfg->L[i]);
    }

    int ovf = 0;
    g->n_tasks = cfg->shard_count;
    g->L_max = cfg->L_max;
    g->nL = cfg->nL;
    g->nN = cfg->nN;
    g->nT = cfg->nT;
    g->neps = cfg->neps;
    g->nlayers = cfg->nlayers;
    g->nheads = cfg->nheads;
    g->nnorm = cfg->nnormalizers;
    g->rows = cfg->rows;

    size_t nrows = mul(g->nL, g->rows, &ovf);
    size_t ncells = mul(g->nL, g->nN, &ovf);
    if (ovf)
        return ns_fail(err, NS_ERR_INVALID, "grid: too many rows or cells");
    g->row_m = malloc(nrows * sizeof *g->row_m);
    g->shard_rows = malloc(nrows * sizeof *g->shard_rows);
    g->skip = malloc(ncells);
    g->cell_rows = malloc(ncells * sizeof *g->cell_rows);
    if (!g->row_m || !g->shard_rows || !g->skip || !g->cell_rows) {
        ns_grid_free(g);
        return ns_fail(err, NS_ERR_NOMEM, "grid: out of memory");
    }

    for (size_t iL = 0; iL < g->nL; iL++)
        for (size_t r = 0; r < g->rows; r++)
            g->row_m[iL * g->rows + r] = cfg->L[iL] - 1 - r;
    memcpy(g->shard_rows, g->row_m, nrows * sizeof *g->row_m);
    qsort(g->shard_rows, nrows, sizeof *g->shard_rows, cmp_size);
    size_t distinct = 0;
    for (size_t i = 0; i < nrows; i++)
        if (!distinct || g->shard_rows[i] != g->shard_rows[distinct - 1])
            g->shard_rows[distinct++] = g->shard_rows[i];
    g->n_shard_rows = distinct;

    for (size_t iL = 0; iL < g->nL; iL++) {
        size_t L = cfg->L[iL];
        for (size_t iN = 0; iN < g->nN; iN++) {
            size_t N = cfg->N[iN];
            /* rows m = L-1-r keep N < m + 1 = L - r, i.e. r < L - N */
            size_t kept = N >= L ? 0 : (L - N < g->rows ? L - N : g->rows);
            g->cell_rows[iL * g->nN + iN] = kept;
            g->skip[iL * g->nN + iN] = kept == 0;
            if (kept == 0)
                g->skipped_LN++;
            else if (kept < g->rows)
                g->partial_LN++;
        }
    }

    g->rows_per_shard = nrows;
    g->heads_per_row = mul(g->nlayers, g->nheads, &ovf);
    g->evals_per_shard = mul(mul(mul(nrows, g->heads_per_row, &ovf), g->nnorm, &ovf), g->nT, &ovf);
    size_t per_LN = mul(mul(mul(g->nnorm, g->nT, &ovf), g->nlayers, &ovf), g->nheads, &ovf);
    g->cells = mul(ncells, per_LN, &ovf);
    g->cells_skipped = mul(g->skipped_LN, per_LN, &ovf);
    if (ovf) {
        ns_grid_free(g);
        return ns_fail(err, NS_ERR_INVALID, "grid: the sweep is too large to count");
    }
    return NS_OK;
}

/* ns_grid: the expanded sweep grid: tasks (one forward pass per shard), the analysed rows of each
 * shard, the (L, N) cells skipped because N >= L, and the counts used for progress reports. */
#ifndef NS_GRID_H
#define NS_GRID_H

#include <stddef.h>

#include "common/ns_error.h"
#include "sweep/ns_sweep_config.h"

typedef struct ns_grid {
    size_t n_tasks;          /* = shard_count: task k is shard k, one forward pass each */
    size_t L_max;
    size_t nL, nN, nT, neps, nlayers, nheads, nnorm;
    size_t rows;             /* rows analysed per prefix (cfg->rows) */

    /* Rows of a shard analysed for context length L[iL]: m = L - 1 - r for r in [0, rows),
     * i.e. L-1 down to L-rows; row m has m + 1 keys. */
    size_t *row_m;           /* (nL, rows): row_m[iL * rows + r] = L[iL] - 1 - r */
    size_t *shard_rows;      /* the distinct rows over all L, ascending (what one forward pass
                                must deliver) */
    size_t n_shard_rows;

    /* (L, N) table: a row with m + 1 keys is skipped at N when N >= m + 1. */
    unsigned char *skip;     /* (nL, nN): 1 when N >= L, i.e. every row of the cell is skipped */
    size_t *cell_rows;       /* (nL, nN): rows per shard analysed at (L, N) = min(rows, L - N)
                                (0 when skipped) */
    size_t skipped_LN;       /* (L, N) pairs with N >= L */
    size_t partial_LN;       /* (L, N) pairs where some but not all of the rows are skipped */

    /* Counts for progress and summaries. */
    size_t rows_per_shard;   /* nL * rows (row, L) pairs */
    size_t heads_per_row;    /* nlayers * nheads */
    size_t evals_per_shard;  /* rows_per_shard * heads_per_row * nnorm * nT: normalized rows */
    size_t cells;            /* nnorm * nL * nT * nN * nlayers * nheads: Theorem 1 cells */
    size_t cells_skipped;    /* of those, in skipped (L, N) pairs */
} ns_grid;

/* Expand cfg's grid. layers/heads must be known (an explicit list, or `all` expanded by
 * ns_sweep_check_model / ns_sweep_expand_all): NS_ERR_INVALID otherwise, and when rows exceeds
 * the smallest L or an L exceeds L_max (a config that skipped validation). Free with
 * ns_grid_free. */
int ns_grid_build(ns_grid *g, const ns_sweep_config *cfg, ns_err *err);
void ns_grid_free(ns_grid *g);

/* Row m (m + 1 keys) at top-N size N: 1 when skipped (N >= m + 1). */
static inline int ns_grid_row_skipped(size_t m, size_t N) { return N >= m + 1; }

#endif

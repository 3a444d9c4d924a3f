/* ns_grid_derive: what follows from a grid, computed once, in one place -- the Jacobian bound of
 * METRICS.md section 7 at each T (analysis/ns_metrics.h's ns_jac_bound: the reduction's violation
 * counts and the output's jac_bound coordinate both read it from here), the forward length, and
 * the geometry of the reduction's slices: a slice is one (layer index, head index, normalizer,
 * L index) across every shard and row, the slices are numbered in that order, and every slice's
 * result has the same layout (analysis/ns_reduce.h's ns_slice_layout: it depends on the grid's
 * T, N and eps only). The plan (rows/ns_plan.h) holds one; the NetCDF writer reads it. */
#ifndef NS_GRID_DERIVE_H
#define NS_GRID_DERIVE_H

#include <stddef.h>

#include "analysis/ns_reduce.h"
#include "common/ns_error.h"
#include "grid/ns_grid.h"

typedef struct ns_grid_derived {
    double *jac_bound;     /* (nT): ns_jac_bound(T[t]) */
    size_t L_fwd;          /* the forward length: the largest L */
    size_t nslices;        /* nlayers x nheads x nnormalizers x nL */
    ns_slice_layout slice; /* the layout of every slice's result (slice.total doubles) */
    size_t slice_cells;    /* one slice's metric cells, every metric: its samples per row */
} ns_grid_derived;

/* Derive the values of a grid with at least one L (free with ns_grid_derived_free). Fails only
 * on allocation (NS_ERR_NOMEM). */
int ns_grid_derive(const ns_grid *g, ns_grid_derived *d, ns_err *err);
void ns_grid_derived_free(ns_grid_derived *d);

/* The layout of every slice's result (needs no allocation: the memory estimate of a grid not yet
 * planned uses it too). */
void ns_grid_slice_layout(const ns_grid *g, ns_slice_layout *sl);
/* Slice k's (layer index, head index, normalizer, L index). */
void ns_grid_slice_index(const ns_grid *g, size_t k, size_t *li, size_t *hi, size_t *ni,
                         size_t *Li);
/* Doubles of one slice's samples for S rows per cell: every metric's cells x S, in metric order. */
size_t ns_grid_slice_samples(const ns_grid_derived *d, size_t S);

#endif

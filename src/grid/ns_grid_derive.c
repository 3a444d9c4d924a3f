/* ns_grid_derive: the values derived from a grid (see ns_grid_derive.h). */
#include "grid/ns_grid_derive.h"

#include <stdlib.h>
#include <string.h>

#include "analysis/ns_metrics.h"

int ns_grid_derive(const ns_grid *g, ns_grid_derived *d, ns_err *err)
{
    memset(d, 0, sizeof *d);
    d->jac_bound = malloc(g->nT * sizeof *d->jac_bound + 1);
    if (!d->jac_bound)
        return ns_fail(err, NS_ERR_NOMEM, "grid: out of memory");
    for (size_t t = 0; t < g->nT; t++)
        d->jac_bound[t] = ns_jac_bound(g->T[t]);
    d->L_fwd = g->L[g->nL - 1];
    d->nslices = g->nlayers * g->nheads * g->nnormalizers * g->nL;
    ns_grid_slice_layout(g, &d->slice);
    for (int m = 0; m < NS_M_COUNT; m++)
        d->slice_cells += d->slice.cells[m];
    return NS_OK;
}

void ns_grid_derived_free(ns_grid_derived *d)
{
    free(d->jac_bound);
    memset(d, 0, sizeof *d);
}

void ns_grid_slice_layout(const ns_grid *g, ns_slice_layout *sl)
{
    /* every slice's result has the layout of the largest L's (the grid's N, T and eps) */
    ns_slice_shape sh = {.L = g->L[g->nL - 1], .N = g->N, .nN = g->nN, .T = g->T, .nT = g->nT,
                         .neps = g->neps};
    ns_slice_layout_init(sl, &sh);
}

void ns_grid_slice_index(const ns_grid *g, size_t k, size_t *li, size_t *hi, size_t *ni,
                         size_t *Li)
{
    *Li = k % g->nL;
    k /= g->nL;
    *ni = k % g->nnormalizers;
    k /= g->nnormalizers;
    *hi = k % g->nheads;
    *li = k / g->nheads;
}

size_t ns_grid_slice_samples(const ns_grid_derived *d, size_t S)
{
    return d->slice_cells * S;
}

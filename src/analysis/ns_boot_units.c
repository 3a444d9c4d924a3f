/* ns_boot_units: the units' estimated times and their owners (see ns_boot_units.h). */
#include "analysis/ns_boot_units.h"

#include <math.h>
#include <stdlib.h>

#include "analysis/ns_boot.h"
#include "analysis/ns_boot_shard.h"

/* A unit's time, estimated for the assignment only (it changes no value): the operations of
 * each kernel times a speed in nanoseconds, set from per-unit times measured on the full grid's
 * shape with the stand-in and with GPT-2's shape at -np 2 (2026-12-05, a 2-core machine under
 * load: only the ratios matter; measured over estimated agreed within about a third between the
 * unit kinds). A weighted sum's multiply-add; a shard's maximum of jac_exact (a branch per
 * shard); a value through the head sets' medians (every head is in all, in sharp or flat, and in
 * its layer's set: 3 H values per replicate; sets above NS_BOOT_BATCH_MAX heads cost about 4
 * times as much a value, as the comparators per value of their networks say: 1614 for GPT-2's
 * 144 heads, 11.2 a value, against 35 for a layer of 12, 2.9 a value); a replicate through an
 * interval's two selections; a pooled value of a KS test,
 * sorted once and walked in 16-bit lanes for every replicate (the sort's term, n log2 n, is the
 * comparison sort's that the radix sort replaced on 2026-12-05: an overestimate of the KS units,
 * which changes only which rank computes them). Cells with N >= L hold no value:
 * their medians, intervals and KS tests cost next to nothing, their weighted sums the same. */
#define COST_SUM 0.15
#define COST_MAX 1.0
#define COST_MED 1.0
#define COST_SEL 4.0
#define COST_IV 8.0
#define COST_SORT 7.5
#define COST_KS 0.11

/* The medians and intervals of one statistic over the head sets, R replicates. */
static double cost_stat(const ns_ci_input *in, double R)
{
    double H = (double)(in->nlayers * in->nheads), sets = 3.0 + (double)in->nlayers;
    double big = H > NS_BOOT_BATCH_MAX ? COST_SEL : COST_MED;
    double lay = in->nheads > NS_BOOT_BATCH_MAX ? COST_SEL : COST_MED;
    return R * (2.0 * H * big + H * lay) + (R > 1.0 ? sets * R * COST_IV : 0.0);
}

static double unit_cost(const ns_ci_input *in, size_t u)
{
    size_t per = 1 + in->nL, Ti = (u / per) % in->nT, Li0 = u % per;
    double Rb = (double)in->B + 1.0, R = ns_intervals_is_claim_T(in->T, in->nT, Ti) ? Rb : 1.0;
    double S = (double)in->n_shards, H = (double)(in->nlayers * in->nheads);
    double sets = 3.0 + (double)in->nlayers, rows = (double)in->rows, c = 0.0;
    if (Li0 == 0) { /* the means: cell_t and cell_tn at every (L, N), the slopes and plateau */
        for (size_t Li = 0; Li < in->nL; Li++) {
            c += Rb * S * H * (COST_SUM + COST_MAX) + 2.0 * cost_stat(in, Rb);
            for (size_t Ni = 0; Ni < in->nN; Ni++)
                c += R * S * NS_BOOT_MEANS * H * COST_SUM +
                     (in->N[Ni] < in->L[Li] ? 9.0 * cost_stat(in, R) : 0.0);
        }
        return c + 4.0 * (double)in->nN * sets * R * COST_IV;
    }
    size_t Li = Li0 - 1; /* the KS tests at one L: cell_ks at every N, then cell_ncrit */
    double n = 2.0 * S * rows;
    for (size_t Ni = 0; Ni < in->nN; Ni++)
        if (in->N[Ni] < in->L[Li])
            c += 2.0 * H * n * (log2(n) * COST_SORT + R * COST_KS) + 2.0 * cost_stat(in, R);
    return c + 4.0 * cost_stat(in, R);
}

int ns_boot_units_assign(const ns_ci_input *in, size_t P, size_t *owner, ns_err *err)
{
    size_t U = ns_intervals_nunits(in), G = in->nnorm * in->nT, per = 1 + in->nL;
    double *cost = malloc((U ? U : 1) * sizeof *cost);
    unsigned char *kind = malloc(U ? U : 1);
    if (!cost || !kind) {
        free(cost), free(kind);
        return ns_fail(err, NS_ERR_NOMEM, "bootstrap: out of memory (%zu units of work)", U);
    }
    for (size_t u = 0; u < U; u++) {
        cost[u] = unit_cost(in, u);
        kind[u] = u % per != 0;
    }
    size_t each = P ? (G + P - 1) / P : G, cap[2] = {each, each * in->nL};
    int rc = ns_boot_shard_assign(cost, kind, U, P, cap, owner, err);
    free(cost), free(kind);
    return rc;
}

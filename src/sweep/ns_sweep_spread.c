/* ns_sweep_spread: the per-shard blocks' pieces moved to the ranks that own the units that read
 * them (see ns_sweep_spread.h). */
#include "sweep/ns_sweep_spread.h"

#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/ns_boot_shard.h"
#include "analysis/ns_boot_units.h"
#include "reduce/ns_results.h"
#include "sweep/ns_sweep_mpi.h"

void ns_sweep_spread_free(ns_sweep_spread *sp)
{
    free(sp->blk), free(sp->owner), free(sp->norm), free(sp->Li), free(sp->held);
    free(sp->parts), free(sp->ks_parts), free(sp->send), free(sp->cnt);
    memset(sp, 0, sizeof *sp);
}

void ns_sweep_spread_slices(const ns_sweep_spread *sp, size_t r, size_t q, size_t *first,
                            size_t *count)
{
    size_t f = 0, g = 0;
    if (r < sp->Pr)
        ns_boot_shard_share_of(sp->nsl, r, sp->Pr, &f, &g);
    size_t a = f + q * sp->round;
    *first = a < g ? a : g;
    *count = a < g ? (g - a < sp->round ? g - a : sp->round) : 0;
}

size_t ns_sweep_spread_rounds(const ns_sweep_spread *sp)
{
    size_t most = 0;
    for (size_t r = 0; r < sp->Pr; r++) {
        size_t f, g;
        ns_boot_shard_share_of(sp->nsl, r, sp->Pr, &f, &g);
        most = g - f > most ? g - f : most;
    }
    return (most + sp->round - 1) / sp->round;
}

/* The ranks computing the units that read slice k's T part t: its first piece's (the means of
 * its group) and its KS piece's (the KS tests of its group at its L). */
static size_t own_front(const ns_sweep_spread *sp, size_t k, size_t t)
{
    return sp->owner[(sp->norm[k] * sp->nT + t) * (1 + sp->nL)];
}

static size_t own_ks(const ns_sweep_spread *sp, size_t k, size_t t)
{
    return sp->owner[(sp->norm[k] * sp->nT + t) * (1 + sp->nL) + 1 + sp->Li[k]];
}

/* The owners of the units, on every rank alike. */
static int owners(ns_sweep_spread *sp, const ns_plan *plan, double ks_alpha, size_t n_shards,
                  size_t B, ns_err *err)
{
    ns_ci_input in;
    ns_results_ci_input(plan, ks_alpha, n_shards, NULL, NULL, NULL, B, &in);
    size_t U = ns_intervals_nunits(&in);
    sp->owner = malloc((U ? U : 1) * sizeof *sp->owner);
    if (!sp->owner)
        return ns_fail(err, NS_ERR_NOMEM, "bootstrap: out of memory (%zu units of work)", U);
    return ns_boot_units_assign(&in, sp->P, sp->owner, err);
}

int ns_sweep_spread_init(ns_sweep_spread *sp, MPI_Comm comm, const ns_plan *plan,
                         double ks_alpha, size_t n_shards, size_t B, size_t Pr, double cap,
                         ns_err *err)
{
    int rank = 0, size = 1;
    memset(sp, 0, sizeof *sp);
    MPI_TRY(MPI_Comm_rank(comm, &rank), "rank");
    MPI_TRY(MPI_Comm_size(comm, &size), "size");
    const ns_grid *g = &plan->g;
    size_t btotal = ns_results_boot_size(plan, n_shards);
    *sp = (ns_sweep_spread){
        .comm = comm, .rank = (size_t)rank, .P = (size_t)size, .Pr = Pr ? Pr : 1,
        .nsl = plan->derived.nslices, .nT = g->nT, .nL = g->nL,
        .round = ns_boot_shard_round(btotal, cap),
    };
    sp->part = ns_boot_shard_tsize(g->nN, n_shards, g->rows);
    sp->front = ns_boot_shard_front(g->nN, n_shards);
    size_t n = sp->nsl ? sp->nsl : 1;
    sp->blk = malloc(n * sizeof *sp->blk);
    sp->norm = malloc(n * sizeof *sp->norm);
    sp->Li = malloc(n * sizeof *sp->Li);
    sp->parts = calloc(n * (sp->nT ? sp->nT : 1), sizeof *sp->parts);
    sp->ks_parts = calloc(n * (sp->nT ? sp->nT : 1), sizeof *sp->ks_parts);
    sp->cnt = malloc(4 * sp->P * sizeof *sp->cnt);
    size_t most = sp->round < sp->nsl ? sp->round : sp->nsl;
    /* on one rank the blocks are already in the order they are sent */
    sp->send = sp->P > 1 ? malloc((most * btotal > 0 ? most * btotal : 1) * sizeof *sp->send)
                         : NULL;
    if (!sp->blk || !sp->norm || !sp->Li || !sp->parts || !sp->ks_parts || !sp->cnt ||
        (sp->P > 1 && !sp->send)) {
        ns_sweep_spread_free(sp);
        return ns_fail(err, NS_ERR_NOMEM, "bootstrap: out of memory (%zu slices)", n);
    }
    int rc = owners(sp, plan, ks_alpha, n_shards, B, err);
    if (rc != NS_OK) {
        ns_sweep_spread_free(sp);
        return rc;
    }
    size_t heads = g->nlayers * g->nheads;
    for (size_t k = 0; k < sp->nsl; k++) {
        sp->blk[k] = ns_results_boot_index(plan, ks_alpha, k);
        sp->norm[k] = sp->blk[k] / (g->nL * heads);
        sp->Li[k] = sp->blk[k] / heads % g->nL;
        for (size_t t = 0; t < sp->nT; t++)
            sp->nheld += (own_front(sp, k, t) == sp->rank ? sp->front : 0) +
                         (own_ks(sp, k, t) == sp->rank ? sp->part - sp->front : 0);
    }
    sp->held = malloc((sp->nheld > 0 ? sp->nheld : 1) * sizeof *sp->held);
    if (!sp->held) {
        ns_sweep_spread_free(sp);
        return ns_fail(err, NS_ERR_NOMEM, "bootstrap: out of memory (%zu per-shard values)",
                       n * sp->part);
    }
    return NS_OK;
}

/* The doubles of the pieces of slices [first, first + count) whose units rank `to` owns, and
 * (out not NULL) those pieces copied from blocks (the slices' blocks in order) to out. */
static size_t parts_for(const ns_sweep_spread *sp, size_t first, size_t count, size_t to,
                        const double *blocks, double *out)
{
    size_t m = 0, ks = sp->part - sp->front;
    for (size_t k = first; k < first + count; k++)
        for (size_t t = 0; t < sp->nT; t++) {
            const double *b = blocks + ((k - first) * sp->nT + t) * sp->part;
            if (own_front(sp, k, t) == to) {
                if (out)
                    memcpy(out + m, b, sp->front * sizeof *out);
                m += sp->front;
            }
            if (own_ks(sp, k, t) == to) {
                if (out)
                    memcpy(out + m, b + sp->front, ks * sizeof *out);
                m += ks;
            }
        }
    return m;
}

int ns_sweep_spread_round(ns_sweep_spread *sp, size_t q, const double *blocks, ns_err *err)
{
    size_t P = sp->P, first, count, sent = 0, got = 0;
    int big = 0, any = 0;
    int *scnt = sp->cnt, *sdsp = sp->cnt + P, *rcnt = sp->cnt + 2 * P, *rdsp = sp->cnt + 3 * P;
    ns_sweep_spread_slices(sp, sp->rank, q, &first, &count);
    for (size_t r = 0; r < P; r++) {
        size_t m = parts_for(sp, first, count, r, blocks, sp->send ? sp->send + sent : NULL);
        big |= sent + m > INT_MAX;
        scnt[r] = (int)m, sdsp[r] = (int)sent, sent += m;
    }
    double *to = sp->held + sp->got;
    for (size_t r = 0; r < P; r++) {
        size_t f, c;
        ns_sweep_spread_slices(sp, r, q, &f, &c);
        size_t m = 0;
        for (size_t k = f; k < f + c; k++)
            for (size_t t = 0; t < sp->nT; t++) {
                if (own_front(sp, k, t) == sp->rank) {
                    sp->parts[sp->blk[k] * sp->nT + t] = to + got + m;
                    m += sp->front;
                }
                if (own_ks(sp, k, t) == sp->rank) {
                    sp->ks_parts[sp->blk[k] * sp->nT + t] = to + got + m;
                    m += sp->part - sp->front;
                }
            }
        big |= got + m > INT_MAX;
        rcnt[r] = (int)m, rdsp[r] = (int)got, got += m;
    }
    /* ns_results_boot_wanted keeps a rank's values within an int; checked on every rank alike */
    MPI_TRY(MPI_Allreduce(&big, &any, 1, MPI_INT, MPI_MAX, sp->comm), "agree");
    if (any)
        return ns_fail(err, NS_ERR_INVALID, "bootstrap: a round moves more values than MPI's int "
                       "counts hold");
    sp->got += got;
    MPI_TRY(MPI_Alltoallv(sp->send ? sp->send : blocks, scnt, sdsp, MPI_DOUBLE, to, rcnt, rdsp,
                          MPI_DOUBLE, sp->comm),
            "move the bootstrap's per-shard values to the ranks that use them");
    return NS_OK;
}

/* ns_sweep_boot: the end-of-run bootstrap intervals (analysis/ns_intervals.h), shared over every
 * rank: every rank computes the units of work the spread gave it (a group's means, or its KS
 * tests at one L; ns_boot_units_assign, by estimated time) from the pieces of the per-shard
 * blocks the reduction delivered to it (ns_sweep_spread.h) and each head's entropy_norm_mean
 * (broadcast by rank 0), and rank 0 gathers their values, rank by rank, and computes what spans
 * groups: the T slopes, from the groups' jac_exact_max_hmax replicates alone (no block). A unit's
 * bytes do not depend on the rank that computes it, so the file does not depend on the number of
 * ranks. */
#include "sweep/ns_sweep_boot.h"

#include <limits.h>
#include <stdlib.h>

#include "reduce/ns_results.h"
#include "sweep/ns_sweep_mpi.h"

/* Broadcast n doubles from rank 0 in pieces MPI's int count can hold. */
static int bcast(const ns_sweep_boot *c, double *x, size_t n, ns_err *err)
{
    for (size_t at = 0; at < n; at += (size_t)INT_MAX / 2) {
        size_t k = n - at < (size_t)INT_MAX / 2 ? n - at : (size_t)INT_MAX / 2;
        MPI_TRY(MPI_Bcast(x + at, (int)k, MPI_DOUBLE, 0, c->comm),
                "broadcast the bootstrap's input");
    }
    return NS_OK;
}

/* This rank's units into iv, packed and gathered into rank 0's iv. */
static int share(const ns_sweep_boot *c, const ns_ci_input *in, const size_t *owner,
                 ns_intervals *iv, ns_err *err)
{
    size_t me = (size_t)c->rank;
    int rc = ns_intervals_units(in, owner, me, iv, err);
    size_t mine = ns_intervals_pack(in, iv, owner, me, NULL, 0);
    size_t total = ns_intervals_pack(in, iv, NULL, 0, NULL, 0);
    double *buf = malloc(((c->rank == 0 ? total : mine) + 1) * sizeof *buf);
    int *counts = malloc((size_t)c->size * sizeof *counts);
    int *displs = malloc((size_t)c->size * sizeof *displs);
    if (rc == NS_OK && (!buf || !counts || !displs))
        rc = ns_fail(err, NS_ERR_NOMEM, "bootstrap: out of memory (%zu values)", total);
    int worst = rc, agreed = 0;
    MPI_TRY(MPI_Allreduce(&worst, &agreed, 1, MPI_INT, MPI_MAX, c->comm), "agree");
    if (agreed == NS_OK) {
        size_t at = 0;
        for (int r = 0; r < c->size; r++) {
            size_t n = ns_intervals_pack(in, iv, owner, (size_t)r, NULL, 0);
            counts[r] = (int)n, displs[r] = (int)at, at += n;
        }
        ns_intervals_pack(in, iv, owner, me, buf + (c->rank == 0 ? displs[0] : 0), 0);
        int mrc = MPI_Gatherv(c->rank == 0 ? MPI_IN_PLACE : buf, (int)mine, MPI_DOUBLE, buf,
                              counts, displs, MPI_DOUBLE, 0, c->comm);
        if (mrc != MPI_SUCCESS)
            rc = ns_sweep_mpi_fail(err, mrc, "gather the bootstrap");
        else if (c->rank == 0)
            for (int r = 0; r < c->size; r++)
                ns_intervals_pack(in, iv, owner, (size_t)r, buf + displs[r], 1);
    } else if (rc == NS_OK) {
        rc = ns_fail(err, agreed, "the bootstrap failed on another rank");
    }
    free(buf), free(counts), free(displs);
    return rc;
}

int ns_sweep_intervals(const ns_sweep_boot *c, const double *slices,
                       const ns_sweep_spread *sp, ns_intervals *iv, ns_err *err)
{
    const ns_plan *p = c->plan;
    size_t ne = p->derived.nslices * p->g.nT;
    double *ent = malloc((ne ? ne : 1) * sizeof *ent);
    int rc = ent ? NS_OK : ns_fail(err, NS_ERR_NOMEM, "bootstrap: out of memory (%zu values)", ne);
    int worst = rc, agreed = 0;
    MPI_TRY(MPI_Allreduce(&worst, &agreed, 1, MPI_INT, MPI_MAX, c->comm), "agree");
    if (agreed != NS_OK) {
        free(ent);
        return rc != NS_OK ? rc : ns_fail(err, agreed, "the bootstrap failed on another rank");
    }
    if (c->rank == 0)
        ns_results_ci_entropy(p, c->ks_alpha, slices, ent);
    rc = bcast(c, ent, ne, err);
    ns_ci_input in;
    ns_results_ci_input(p, c->ks_alpha, c->n_shards, sp->parts, sp->ks_parts, ent, c->B, &in);
    if (rc == NS_OK)
        rc = ns_intervals_init(&in, iv, err);
    if (rc == NS_OK) {
        rc = share(c, &in, sp->owner, iv, err);
        if (rc == NS_OK && c->rank == 0)
            rc = ns_intervals_finish(&in, iv, err);
        if (rc != NS_OK || c->rank != 0)
            ns_intervals_free(iv);
    }
    free(ent);
    return rc;
}

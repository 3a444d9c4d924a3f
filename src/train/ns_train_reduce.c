/* ns_train_reduce: the fixed-tree sum of per-unit gradients over MPI (see ns_train_reduce.h). */
#include "train/ns_train_reduce.h"

#include <limits.h>
#include <stdlib.h>
#include <string.h>

#define NS_TRAIN_REDUCE_MAX_DEPTH 64

struct ns_train_reduce {
    MPI_Comm comm;
    int rank, size;
    size_t n, B, width;     /* width: the tree's span, the least power of two >= B */
    float *tmp[NS_TRAIN_REDUCE_MAX_DEPTH]; /* one buffer per depth (allocated as needed) */
    size_t ntmp;
};

size_t ns_train_reduce_first(size_t B, int size, int rank)
{
    return (size_t)((unsigned __int128)B * (unsigned)rank / (unsigned)size);
}

int ns_train_reduce_new(MPI_Comm comm, size_t n, size_t B, ns_train_reduce **out, ns_err *err)
{
    *out = NULL;
    if (n > INT_MAX || B == 0)
        return ns_fail(err, NS_ERR_INVALID, "gradient reduction: %zu floats over %zu units", n, B);
    ns_train_reduce *r = calloc(1, sizeof *r);
    if (!r)
        return ns_fail(err, NS_ERR_NOMEM, "gradient reduction: out of memory");
    r->comm = comm;
    MPI_Comm_rank(comm, &r->rank);
    MPI_Comm_size(comm, &r->size);
    r->n = n;
    r->B = B;
    r->width = 1;
    while (r->width < B)
        r->width *= 2;
    *out = r;
    return NS_OK;
}

void ns_train_reduce_free(ns_train_reduce *r)
{
    if (!r)
        return;
    for (size_t i = 0; i < r->ntmp; i++)
        free(r->tmp[i]);
    free(r);
}

static float *depth_buffer(ns_train_reduce *r, size_t depth, ns_err *err)
{
    while (r->ntmp <= depth) {
        if (r->ntmp == NS_TRAIN_REDUCE_MAX_DEPTH)
            return ns_fail(err, NS_ERR_INVALID, "gradient reduction: tree too deep"), NULL;
        if (!(r->tmp[r->ntmp] = malloc(r->n * sizeof(float))))
            return ns_fail(err, NS_ERR_NOMEM, "gradient reduction: out of memory"), NULL;
        r->ntmp++;
    }
    return r->tmp[depth];
}

/* The rank whose range holds all of node [lo, hi) cut to [0, B), or -1. */
static int owner(const ns_train_reduce *r, size_t lo, size_t hi)
{
    if (hi > r->B)
        hi = r->B;
    for (int q = 0; q < r->size; q++)
        if (ns_train_reduce_first(r->B, r->size, q) <= lo &&
            hi <= ns_train_reduce_first(r->B, r->size, q + 1))
            return q;
    return -1;
}

/* One tree walk. A failing leaf does not stop the walk (its value is taken as 0 and the first
 * failure kept in rc/first), so every send and receive still happens and no rank is left waiting;
 * the ranks then agree that the step failed. */
typedef struct walk {
    ns_train_reduce *r;
    ns_train_reduce_leaf_fn leaf;
    void *user;
    int rc;
    ns_err first;
} walk;

/* out = the sum of node [lo, lo + w) (cut to [0, B), non-empty), computed here. */
static int node_value(walk *k, size_t lo, size_t w, size_t depth, float *out, ns_err *err)
{
    if (w == 1) {
        ns_err e;
        ns_err_clear(&e);
        int rc = k->leaf(k->user, lo, out, &e);
        if (rc != NS_OK) {
            if (k->rc == NS_OK)
                k->rc = rc, k->first = e;
            memset(out, 0, k->r->n * sizeof(float));
        }
        return NS_OK;
    }
    size_t half = w / 2;
    NS_TRY(node_value(k, lo, half, depth + 1, out, err));
    if (lo + half >= k->r->B)
        return NS_OK; /* no right part: the left child's value passes up unchanged */
    float *right = depth_buffer(k->r, depth, err);
    if (!right)
        return err ? err->code : NS_ERR_NOMEM;
    NS_TRY(node_value(k, lo + half, half, depth + 1, right, err));
    for (size_t i = 0; i < k->r->n; i++)
        out[i] = out[i] + right[i];
    return NS_OK;
}

/* Rank 0: out = the sum of node [lo, lo + w), receiving other ranks' subtrees. Other ranks: send
 * the node when it is one of their largest subtrees (out is scratch). */
static int node_total(walk *k, size_t lo, size_t w, size_t depth, float *out, ns_err *err)
{
    ns_train_reduce *r = k->r;
    int q = owner(r, lo, lo + w);
    if (q >= 0) {
        if (q == r->rank) {
            NS_TRY(node_value(k, lo, w, depth, out, err));
            if (r->rank != 0 && MPI_Send(out, (int)r->n, MPI_FLOAT, 0, 0, r->comm) != MPI_SUCCESS)
                return ns_fail(err, NS_ERR_LIBRARY, "gradient reduction: MPI_Send failed");
        } else if (r->rank == 0 &&
                   MPI_Recv(out, (int)r->n, MPI_FLOAT, q, 0, r->comm, MPI_STATUS_IGNORE) !=
                       MPI_SUCCESS) {
            return ns_fail(err, NS_ERR_LIBRARY, "gradient reduction: MPI_Recv from rank %d failed",
                           q);
        }
        return NS_OK;
    }
    size_t half = w / 2;
    NS_TRY(node_total(k, lo, half, depth + 1, out, err));
    if (lo + half >= r->B)
        return NS_OK;
    float *right = depth_buffer(r, depth, err);
    if (!right)
        return err ? err->code : NS_ERR_NOMEM;
    NS_TRY(node_total(k, lo + half, half, depth + 1, right, err));
    if (r->rank == 0)
        for (size_t i = 0; i < r->n; i++)
            out[i] = out[i] + right[i];
    return NS_OK;
}

int ns_train_reduce_sum(ns_train_reduce *r, ns_train_reduce_leaf_fn leaf, void *user, float *sum,
                        ns_err *err)
{
    walk k = {r, leaf, user, NS_OK, {0}};
    int rc = node_total(&k, 0, r->width, 0, sum, err);
    if (rc == NS_OK && k.rc != NS_OK) {
        rc = k.rc;
        if (err)
            *err = k.first;
    }
    /* agree on the outcome before the broadcast, so a failing rank cannot leave the others
     * waiting: each contributes its status */
    int mine = rc, worst = 0;
    if (MPI_Allreduce(&mine, &worst, 1, MPI_INT, MPI_MAX, r->comm) != MPI_SUCCESS)
        return ns_fail(err, NS_ERR_LIBRARY, "gradient reduction: MPI_Allreduce failed");
    if (worst != NS_OK)
        return rc != NS_OK ? rc : ns_fail(err, NS_ERR_LIBRARY, "gradient reduction: another rank "
                                          "failed (its message is on its own output)");
    if (MPI_Bcast(sum, (int)r->n, MPI_FLOAT, 0, r->comm) != MPI_SUCCESS)
        return ns_fail(err, NS_ERR_LIBRARY, "gradient reduction: MPI_Bcast failed");
    return NS_OK;
}

int ns_train_reduce_gather(ns_train_reduce *r, size_t count, const double *mine, size_t k,
                           double *all, ns_err *err)
{
    int *counts = calloc((size_t)r->size, sizeof *counts), *displs = calloc((size_t)r->size, sizeof *displs);
    if (!counts || !displs) {
        free(counts);
        free(displs);
        return ns_fail(err, NS_ERR_NOMEM, "gathering per-unit values: out of memory");
    }
    for (int q = 0; q < r->size; q++) {
        size_t a = ns_train_reduce_first(count, r->size, q),
               b = ns_train_reduce_first(count, r->size, q + 1);
        if ((b - a) * k > INT_MAX || b * k > INT_MAX) {
            free(counts);
            free(displs);
            return ns_fail(err, NS_ERR_INVALID, "gathering per-unit values: too many values");
        }
        counts[q] = (int)((b - a) * k);
        displs[q] = (int)(a * k);
    }
    int rc = MPI_Gatherv(mine, counts[r->rank], MPI_DOUBLE, all, counts, displs, MPI_DOUBLE, 0,
                         r->comm);
    free(counts);
    free(displs);
    if (rc != MPI_SUCCESS)
        return ns_fail(err, NS_ERR_LIBRARY, "gathering per-unit values: MPI_Gatherv failed");
    return NS_OK;
}

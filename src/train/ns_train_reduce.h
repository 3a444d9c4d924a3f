/* ns_train_reduce: the data-parallel sum of a step's per-sequence gradients, in an order that does
 * not depend on the number of ranks. The B sequences ("units") of a step are split into contiguous
 * ranges, one per rank. Their gradients are added along one fixed binary tree over the unit
 * indices (the dyadic tree over [0, 2^k) cut to [0, B)): every rank computes the largest subtrees
 * lying wholly in its range, sends them to rank 0, which completes the tree and broadcasts the
 * total. The additions are the same float additions in the same order whatever the rank count,
 * so -np 1, 2, 3, ... give the same bits (each unit's gradient is itself computed identically on
 * any rank: one BLAS thread, the same shapes). */
#ifndef NS_TRAIN_REDUCE_H
#define NS_TRAIN_REDUCE_H

#include <mpi.h>
#include <stddef.h>

#include "common/ns_error.h"

/* First unit of rank r when B units are split over size ranks (rank r holds
 * [ns_train_reduce_first(B, size, r), ns_train_reduce_first(B, size, r + 1))). */
size_t ns_train_reduce_first(size_t B, int size, int rank);

/* Computes unit's gradient (n floats) into out. */
typedef int (*ns_train_reduce_leaf_fn)(void *user, size_t unit, float *out, ns_err *err);

typedef struct ns_train_reduce ns_train_reduce;

/* A reducer for n-float gradients over B units on comm. */
int ns_train_reduce_new(MPI_Comm comm, size_t n, size_t B, ns_train_reduce **out, ns_err *err);
void ns_train_reduce_free(ns_train_reduce *r);

/* Every rank: call leaf for its own units and take part in the tree; on return sum (n floats)
 * holds the total on every rank. A leaf failure on any rank fails every rank (NS_ERR_LIBRARY
 * naming the rank, the failing rank keeps its own message). */
int ns_train_reduce_sum(ns_train_reduce *r, ns_train_reduce_leaf_fn leaf, void *user, float *sum,
                        ns_err *err);

/* Gather per-item records of k doubles to rank 0: count items split over the ranks as units are
 * (ns_train_reduce_first), mine this rank's records in order, all (count * k doubles, item order)
 * on rank 0 (may be NULL elsewhere). */
int ns_train_reduce_gather(ns_train_reduce *r, size_t count, const double *mine, size_t k,
                           double *all, ns_err *err);

#endif

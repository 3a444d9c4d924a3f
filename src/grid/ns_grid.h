/* ns_grid: what a sweep sweeps, as one plain value -- the normalizers, context lengths L, N, T,
 * eps, layers and heads, the rows of each prefix, the forward window L_max, the sphere, probes and
 * seed. The sweep file's configuration fills it (spec/ns_sweep_config_grid), `dump` fills it from
 * its options; the plan (rows/ns_plan.h) checks it and copies it, and what follows from it is
 * computed once, in ns_grid_derive. */
#ifndef NS_GRID_H
#define NS_GRID_H

#include <stddef.h>
#include <stdint.h>

#include "norm/ns_normalize.h"

/* The grid as a sweep file or `dump`'s options give it (arrays borrowed; lists ascending and
 * free of repeats, as their parsers deliver them). */
typedef struct ns_grid {
    const size_t *L; size_t nL;
    const size_t *N; size_t nN;
    const double *T; size_t nT;
    const double *eps; size_t neps;
    const size_t *layers; size_t nlayers;
    const size_t *heads; size_t nheads;
    const ns_normalizer *normalizers; size_t nnormalizers;
    size_t rows;         /* last `rows` rows of each prefix */
    size_t L_max;        /* tokens of the forward window (shard) */
    int sphere;
    unsigned probes;
    uint64_t seed;
} ns_grid;

#endif

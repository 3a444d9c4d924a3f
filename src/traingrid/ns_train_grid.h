/* ns_train_grid: a training grid file (sweeps/training.yaml; docs/TRAIN.md "Training grids"):
 * the `normsweep train` options every cell shares, the normalizer x temperature (x seed) grid, the
 * sweep
 * each trained model gets, and the output directory. Reads and checks the file; the cells' names
 * and directories. It neither runs anything nor prints: ns_train_grid_run runs a grid. */
#ifndef NS_TRAIN_GRID_H
#define NS_TRAIN_GRID_H

#include <stddef.h>
#include <stdint.h>

#include "common/ns_error.h"

#define NS_TRAIN_GRID_MAX_FILE (64u * 1024u)
#define NS_TRAIN_GRID_MAX_CELLS 256

typedef struct ns_train_grid {
    char *path;              /* the grid file as read */
    char *text;              /* its bytes (copied into the output directory) */
    size_t len;
    char **train_args;       /* "--key", "value" (or a lone flag) from `train:`, file order */
    size_t n_train_args;
    char **normalizers;      /* canonical names, file order */
    size_t n_normalizers;
    double *temperatures;    /* file order */
    size_t n_temperatures;
    uint64_t *seeds;         /* `seeds:` in file order (NULL, 0: no seed axis; train: seed: or
                                train's default seed serves every cell) */
    size_t n_seeds;
    double ssmax_s;          /* `ssmax_s:` (required when ssmax is in the grid, refused otherwise) */
    int have_ssmax_s;
    char *sweep;             /* `sweep:` as written (NULL: the models are only trained) */
    char *out;               /* `out:`, default runs/<stem of the file> */
} ns_train_grid;

/* Read and check path. NS_ERR_IO when it cannot be read, NS_ERR_INVALID / NS_ERR_FORMAT with
 * "PATH:LINE: what is wrong" (the first problem), NS_ERR_NOMEM. g is zeroed first; free it with
 * ns_train_grid_free whatever the result. */
int ns_train_grid_load(const char *path, ns_train_grid *g, ns_err *err);

/* The same on text already in memory (name: what messages call it). */
int ns_train_grid_parse(const char *text, size_t len, const char *name, ns_train_grid *g,
                        ns_err *err);

void ns_train_grid_free(ns_train_grid *g);

/* Cells in row-major order: normalizer (slow), then temperature, then seed (with `seeds:`). */
size_t ns_train_grid_cells(const ns_train_grid *g);

/* Cell i's normalizer and temperature. */
void ns_train_grid_cell(const ns_train_grid *g, size_t i, const char **normalizer, double *T);

/* Cell i's seed: 1 and *seed when the grid has `seeds:`, else 0 (*seed untouched). */
int ns_train_grid_cell_seed(const ns_train_grid *g, size_t i, uint64_t *seed);

/* Cell i's directory name, "<normalizer>-T<T as %.17g shortened to the shortest round trip>",
 * e.g. "sparsemax-T0.1", and with `seeds:` "-s<seed>" after it ("sparsemax-T0.1-s2"). Caller
 * frees; NULL on ENOMEM. */
char *ns_train_grid_cell_name(const ns_train_grid *g, size_t i);

#endif

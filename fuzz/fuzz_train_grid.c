/* fuzz_train_grid: ns_train_grid_parse on arbitrary bytes (a training grid file). A refusal is an
 * expected status with a one-line message naming the file; an accepted grid must satisfy what
 * `normsweep train-grid` relies on: at least one normalizer and one temperature, no repeats, T in
 * [1e-6, 1e6], ssmax listed exactly when ssmax_s is given, the train: options as "--name" [value]
 * pairs without the options the grid sets, seeds without repeats and never beside train's --seed,
 * an output directory, distinct cell names. */
#include <stdint.h>
#include <string.h>

#include "ns_fuzz.h"
#include "traingrid/ns_train_grid.h"

static void check_grid(const ns_train_grid *g)
{
    NS_FUZZ_CHECK(g->n_normalizers > 0 && g->n_temperatures > 0, "empty grid accepted");
    NS_FUZZ_CHECK(ns_train_grid_cells(g) <= NS_TRAIN_GRID_MAX_CELLS, "%zu cells accepted",
                  ns_train_grid_cells(g));
    NS_FUZZ_CHECK(g->out && *g->out, "no output directory");
    int ssmax = 0;
    for (size_t i = 0; i < g->n_normalizers; i++)
        ssmax |= strcmp(g->normalizers[i], "ssmax") == 0;
    NS_FUZZ_CHECK(ssmax == g->have_ssmax_s, "ssmax listed %d, ssmax_s given %d", ssmax,
                  g->have_ssmax_s);
    NS_FUZZ_CHECK(!g->have_ssmax_s || g->ssmax_s > 0, "ssmax_s %g accepted", g->ssmax_s);
    for (size_t i = 0; i < g->n_temperatures; i++)
        NS_FUZZ_CHECK(g->temperatures[i] >= 1e-6 && g->temperatures[i] <= 1e6,
                      "T = %g accepted", g->temperatures[i]);
    for (size_t i = 0; i < g->n_seeds; i++)
        for (size_t j = 0; j < i; j++)
            NS_FUZZ_CHECK(g->seeds[i] != g->seeds[j], "seed %llu accepted twice",
                          (unsigned long long)g->seeds[i]);
    NS_FUZZ_CHECK(ns_train_grid_cells(g) == g->n_normalizers * g->n_temperatures *
                  (g->n_seeds ? g->n_seeds : 1), "%zu cells for a %zu x %zu x %zu grid",
                  ns_train_grid_cells(g), g->n_normalizers, g->n_temperatures, g->n_seeds);
    static const char *const grid_set[] = {"--normalizer", "--s", "--temperature", "--out",
                                           "--resume"};
    for (size_t i = 0; i < g->n_train_args; i++) {
        const char *a = g->train_args[i];
        NS_FUZZ_CHECK(a != NULL, "train argument %zu missing", i);
        if (strncmp(a, "--", 2) != 0)
            continue; /* a value */
        for (size_t k = 0; k < sizeof grid_set / sizeof grid_set[0]; k++)
            NS_FUZZ_CHECK(strcmp(a, grid_set[k]) != 0, "train: sets %s", a);
        NS_FUZZ_CHECK(!g->n_seeds || strcmp(a, "--seed") != 0,
                      "seeds: accepted with train: seed:");
    }
    size_t n = ns_train_grid_cells(g);
    char **names = calloc(n, sizeof *names);
    NS_FUZZ_CHECK(names != NULL, "out of memory");
    for (size_t i = 0; i < n; i++) {
        names[i] = ns_train_grid_cell_name(g, i);
        NS_FUZZ_CHECK(names[i] != NULL, "no name for cell %zu", i);
        for (size_t j = 0; j < i; j++)
            NS_FUZZ_CHECK(strcmp(names[i], names[j]) != 0, "cells %zu and %zu are both %s", j, i,
                          names[i]);
    }
    for (size_t i = 0; i < n; i++)
        free(names[i]);
    free(names);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    ns_train_grid g;
    ns_err err;
    ns_err_clear(&err);
    int rc = ns_train_grid_parse((const char *)data, size, "fuzz.yaml", &g, &err);
    if (rc != NS_OK) {
        ns_fuzz_check_err(rc, &err);
        NS_FUZZ_CHECK(rc == NS_ERR_FORMAT || rc == NS_ERR_INVALID || rc == NS_ERR_NOMEM,
                      "unexpected status %d: %s", rc, err.msg);
        NS_FUZZ_CHECK(strncmp(err.msg, "fuzz.yaml", 9) == 0, "message does not name the file: %s",
                      err.msg);
    } else {
        check_grid(&g);
    }
    ns_train_grid_free(&g);
    return 0;
}

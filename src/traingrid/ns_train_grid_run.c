/* ns_train_grid_run: `normsweep train-grid` as library functions (see the header). */
#include "traingrid/ns_train_grid_run.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/ns_datadir.h"
#include "common/ns_file.h"
#include "common/ns_outpath.h"
#include "sweep/ns_sweep.h"

void ns_train_grid_run_free(ns_train_grid_run *r)
{
    for (size_t i = 0; r->argvs && i < r->n; i++) {
        for (int k = 0; r->argvs[i] && k < r->argcs[i]; k++)
            free(r->argvs[i][k]);
        free(r->argvs[i]);
    }
    for (size_t i = 0; i < r->n; i++) {
        free(r->names ? r->names[i] : NULL);
        free(r->model_dirs ? r->model_dirs[i] : NULL);
    }
    free(r->names);
    free(r->model_dirs);
    free(r->argvs);
    free(r->argcs);
    free(r->opts);
    free(r->sweep);
    ns_train_grid_free(&r->g);
    memset(r, 0, sizeof *r);
}

/* Cell i's `normsweep train` command line: the grid's train: options, then the cell's own. */
static int cell_argv(ns_train_grid_run *r, size_t i)
{
    const char *norm;
    double T;
    uint64_t seed;
    ns_train_grid_cell(&r->g, i, &norm, &T);
    size_t max = r->g.n_train_args + 14;
    char **a = calloc(max, sizeof *a);
    int n = 0;
    if (!a)
        return -1;
    r->argvs[i] = a;
    a[n++] = strdup("train");
    for (size_t k = 0; k < r->g.n_train_args; k++)
        a[n++] = strdup(r->g.train_args[k]);
    a[n++] = strdup("--normalizer");
    a[n++] = strdup(norm);
    if (r->g.have_ssmax_s && strcmp(norm, "ssmax") == 0) {
        a[n++] = strdup("--s");
        a[n++] = ns_str_printf("%.17g", r->g.ssmax_s);
    }
    a[n++] = strdup("--temperature");
    a[n++] = ns_str_printf("%.17g", T);
    if (ns_train_grid_cell_seed(&r->g, i, &seed)) {
        a[n++] = strdup("--seed");
        a[n++] = ns_str_printf("%" PRIu64, seed);
    }
    a[n++] = strdup("--out");
    a[n++] = strdup(r->model_dirs[i]);
    r->argcs[i] = n;
    for (int k = 0; k < n; k++)
        if (!a[k])
            return -1;
    return 0;
}

int ns_train_grid_open(ns_train_grid_run *r, const char *path, const char *out, int resume,
                       ns_err *err)
{
    memset(r, 0, sizeof *r);
    r->resume = resume;
    int rc = ns_train_grid_load(path, &r->g, err);
    if (rc == NS_ERR_IO)
        err->code = rc = NS_ERR_INVALID; /* an unreadable grid file is invalid input */
    if (rc != NS_OK)
        return rc;
    r->out = out ? out : r->g.out;
    r->n = ns_train_grid_cells(&r->g);
    r->names = calloc(r->n, sizeof *r->names);
    r->model_dirs = calloc(r->n, sizeof *r->model_dirs);
    r->argvs = calloc(r->n, sizeof *r->argvs);
    r->argcs = calloc(r->n, sizeof *r->argcs);
    r->opts = calloc(r->n, sizeof *r->opts);
    if (!r->names || !r->model_dirs || !r->argvs || !r->argcs || !r->opts)
        return ns_fail(err, NS_ERR_NOMEM, "out of memory");
    for (size_t i = 0; i < r->n; i++) {
        char *cell = NULL;
        int ok = (r->names[i] = ns_train_grid_cell_name(&r->g, i)) &&
                 (cell = ns_path_join(r->out, r->names[i])) &&
                 (r->model_dirs[i] = ns_path_join(cell, "model")) && cell_argv(r, i) == 0;
        free(cell);
        if (!ok)
            return ns_fail(err, NS_ERR_NOMEM, "out of memory");
    }
    if (r->g.sweep && !(r->sweep = ns_datadir_sweep(r->g.sweep)))
        return ns_fail(err, NS_ERR_NOMEM, "out of memory");
    return NS_OK;
}

/* The sweep file's schema, and its shards.L_max within every trained model's context. */
static int check_sweep(const ns_train_grid_run *r, ns_sweep_diags *diags, ns_err *err)
{
    if (!r->sweep)
        return NS_OK;
    ns_sweep_config cfg;
    int rc = ns_sweep_load(r->sweep, NULL, NS_SWEEP_SCHEMA_ONLY, &cfg, NULL, NULL, diags, err);
    for (size_t i = 0; rc == NS_OK && i < r->n; i++)
        if (cfg.L_max > r->opts[i].model.n_ctx)
            rc = ns_fail(err, NS_ERR_INVALID, "shards.L_max %zu exceeds the context of the "
                         "models trained (n_positions %zu)", cfg.L_max, r->opts[i].model.n_ctx);
    ns_sweep_config_free(&cfg);
    if (rc != NS_OK) {
        char msg[sizeof err->msg];
        snprintf(msg, sizeof msg, "%s", err->msg);
        rc = ns_fail(err, rc == NS_ERR_NOMEM ? rc : NS_ERR_INVALID,
                     "%s: sweep: %s; nothing was written", r->g.path, msg);
    }
    return rc;
}

/* What the grid writes -- its copy of the grid file and every cell's directory -- must not be,
 * nor hold, what it reads (common/ns_outpath). */
static int check_paths(const ns_train_grid_run *r, ns_err *err)
{
    char *copy = ns_path_join(r->out, NS_TRAIN_GRID_COPY);
    size_t cap = 3 + 3 * r->n, n = 0;
    ns_outpath_role *ins = calloc(cap, sizeof *ins);
    int rc = copy && ins ? NS_OK : ns_fail(err, NS_ERR_NOMEM, "out of memory");
    if (rc == NS_OK) {
        char *a = ns_outpath_resolve(copy), *b = ns_outpath_resolve(r->g.path);
        int is_copy = a && b && strcmp(a, b) == 0;
        free(a);
        free(b);
        if (!(is_copy && r->resume))
            ins[n++] = (ns_outpath_role){"the grid file", r->g.path, 0};
        ins[n++] = (ns_outpath_role){"the sweep file", r->sweep, 0};
        for (size_t i = 0; i < r->n; i++) {
            const char *p[3] = {r->opts[i].corpus, r->opts[i].tokenizer, r->opts[i].init_from};
            static const char *const what[3] = {"the corpus", "the tokenizer", "the --init-from model"};
            for (int k = 0; k < 3; k++)
                if (p[k] && ns_file_exists(p[k])) /* (else an asset name) */
                    ins[n++] = (ns_outpath_role){what[k], p[k], 0};
        }
        ns_outpath_role out = {"the grid's copy", copy, 0};
        rc = ns_outpath_check(&out, ins, n, err);
    }
    for (size_t i = 0; rc == NS_OK && i < r->n; i++) {
        char *cell = ns_path_join(r->out, r->names[i]);
        ns_outpath_role out = {"the cell directory", cell, 1};
        rc = cell ? ns_outpath_check(&out, ins, n, err)
                  : ns_fail(err, NS_ERR_NOMEM, "out of memory");
        free(cell);
    }
    free(copy);
    free(ins);
    return rc;
}

/* The output directory: new (or without a grid) without --resume; with it, the grid it holds
 * must be this one. */
static int check_out(const ns_train_grid_run *r, ns_err *err)
{
    char *copy = ns_path_join(r->out, NS_TRAIN_GRID_COPY);
    if (!copy)
        return ns_fail(err, NS_ERR_NOMEM, "out of memory");
    int rc = NS_OK;
    if (ns_file_exists(r->out) && !ns_file_is_dir(r->out)) {
        rc = ns_fail(err, NS_ERR_INVALID, "%s exists and is not a directory", r->out);
    } else if (!r->resume && ns_file_exists(copy)) {
        rc = ns_fail(err, NS_ERR_INVALID, "%s holds a training grid: pass --resume to continue "
                     "it, or choose another --out", r->out);
    } else if (r->resume && ns_file_exists(copy)) {
        char *old = NULL;
        size_t len = 0;
        rc = ns_file_read_all(copy, NS_TRAIN_GRID_MAX_FILE, &old, &len, err);
        if (rc == NS_OK && (len != r->g.len || memcmp(old, r->g.text, len) != 0))
            rc = ns_fail(err, NS_ERR_INVALID, "%s: not the grid %s started with (%s differs); "
                         "--resume continues the same grid only", r->g.path, r->out, copy);
        free(old);
    }
    free(copy);
    return rc;
}

int ns_train_grid_check(ns_train_grid_run *r, ns_sweep_diags *diags, ns_err *err)
{
    for (size_t i = 0; i < r->n; i++)
        r->opts[i].resume = r->resume;
    int rc = check_sweep(r, diags, err);
    if (rc == NS_OK)
        rc = check_paths(r, err);
    if (rc == NS_OK)
        rc = check_out(r, err);
    return rc;
}

/* Rank 0 makes the output directory and keeps the grid file; every rank learns the result. */
static int start_out(MPI_Comm comm, const ns_train_grid_run *r, int rank, ns_err *err)
{
    int rc = NS_OK;
    if (rank == 0) {
        char *copy = ns_path_join(r->out, NS_TRAIN_GRID_COPY);
        rc = copy ? ns_file_mkdirs(r->out, err) : ns_fail(err, NS_ERR_NOMEM, "out of memory");
        if (rc == NS_OK && !ns_file_exists(copy))
            rc = ns_file_write_atomic(copy, r->g.text, r->g.len, err);
        free(copy);
    }
    MPI_Bcast(&rc, 1, MPI_INT, 0, comm);
    if (rc != NS_OK && rank != 0)
        ns_fail(err, rc, "rank 0 could not create the output directory");
    return rc;
}

/* Train cell i and sweep its model. */
static int run_cell(MPI_Comm comm, const ns_train_grid_run *r, size_t i, int rank,
                    const ns_train_grid_provenance *p, const ns_hooks *hooks, int *unresponsive,
                    ns_err *err)
{
    char *cell = ns_path_join(r->out, r->names[i]);
    char *nc = cell ? ns_path_join(cell, "sweep.nc") : NULL;
    char *ck = cell ? ns_path_join(cell, "sweep-checkpoint") : NULL;
    int rc = cell && nc && ck ? NS_OK : ns_fail(err, NS_ERR_NOMEM, "out of memory");
    int done = 0;
    if (rc != NS_OK)
        goto out;
    if (rank == 0)
        done = r->sweep && ns_file_exists(nc);
    MPI_Bcast(&done, 1, MPI_INT, 0, comm);
    if (rank == 0)
        ns_say(hooks->line, hooks->user, "normsweep train-grid: cell %zu of %zu: %s%s", i + 1,
               r->n, r->names[i], done ? ": done before, kept" : "");
    if (done)
        goto out;
    ns_train_options o = r->opts[i];
    o.command_line = p->command_line;
    o.institution = p->institution;
    o.executable_sha256 = p->executable_sha256;
    ns_train_outcome tout;
    if ((rc = ns_train_run(comm, &o, hooks, &tout, err)) != NS_OK)
        goto out;
    if (rank == 0 && tout.summary[0])
        ns_say(hooks->line, hooks->user, "normsweep train-grid: %s: %s", r->names[i],
               tout.summary);
    if (!r->sweep)
        goto out;
    ns_sweep_options so = {.sweep_path = r->sweep, .output = nc, .checkpoint_dir = ck,
                           .model = r->model_dirs[i], .resume = r->resume,
                           .command_line = p->command_line, .institution = p->institution,
                           .executable_sha256 = p->executable_sha256};
    ns_sweep_outcome sout = {0};
    rc = ns_sweep_run(comm, &so, hooks, &sout, err);
    if (sout.unresponsive) {
        *unresponsive = 1;
        if (rc == NS_OK)
            rc = ns_fail(err, NS_ERR_IO, "cell %s: a rank stopped answering during its sweep",
                         r->names[i]);
    }
out:
    free(cell);
    free(nc);
    free(ck);
    return rc;
}

int ns_train_grid_run_all(MPI_Comm comm, ns_train_grid_run *r, const ns_train_grid_provenance *p,
                          const ns_hooks *hooks, int *unresponsive, ns_err *err)
{
    static const ns_train_grid_provenance none = {0};
    static const ns_hooks silent = {0};
    int rank, dummy = 0;
    MPI_Comm_rank(comm, &rank);
    if (!unresponsive)
        unresponsive = &dummy;
    *unresponsive = 0;
    int rc = start_out(comm, r, rank, err);
    for (size_t i = 0; i < r->n && rc == NS_OK; i++)
        rc = run_cell(comm, r, i, rank, p ? p : &none, hooks ? hooks : &silent, unresponsive, err);
    return rc;
}

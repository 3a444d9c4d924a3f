/* cmd_train_grid: the `normsweep train-grid` subcommand: reads a training grid file
 * (src/train/ns_train_grid), checks every cell's training options and the sweep file before any
 * work, initialises MPI once, then for each normalizer x temperature cell trains a model
 * (src/train/ns_train) and sweeps it (src/sweep/ns_sweep) on all ranks; --resume continues an
 * interrupted grid. docs/TRAIN.md, "Training grids". */
#include <mpi.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli/ns_cli.h"
#include "cli/ns_hold.h"
#include "common/ns_datadir.h"
#include "common/ns_file.h"
#include "common/ns_outpath.h"
#include "sweep/ns_sweep.h"
#include "spec/ns_sweep_inputs.h"
#include "train/ns_train.h"
#include "train/ns_train_grid.h"

#define GRID_COPY "training.yaml" /* the grid file's bytes, kept in the output directory */

static void grid_usage(FILE *out)
{
    fprintf(out,
            "Usage: normsweep train-grid [--out DIR] [--resume] GRID.yaml\n"
            "       mpirun -np 2 normsweep train-grid sweeps/training.yaml\n"
            "\n"
            "Test the paper's training claim: train one model per normalizer x temperature of\n"
            "GRID.yaml with the same seed and budget (`normsweep train`, options from its train:\n"
            "section), then sweep each trained model with the grid's sweep file (its model: replaced\n"
            "by the trained one). Every cell's training options and the sweep file are checked\n"
            "before any work. Writes, under the output directory (the file's out:, default\n"
            "runs/<stem>):\n"
            "  training.yaml                    the grid file as run\n"
            "  <normalizer>-T<T>/model/         the model (model.safetensors, config.json), its\n"
            "                                   training log train.nc and checkpoint/\n"
            "  <normalizer>-T<T>/sweep.nc       the sweep of that model\n"
            "  <normalizer>-T<T>/sweep-checkpoint/  the sweep's journal\n"
            "`postprocess/report --training DIR` draws the report's training page from it.\n"
            "\n"
            "Options:\n"
            "  --out DIR      output directory (overrides the file's out:)\n"
            "  --resume       continue a grid that was stopped: finished cells are kept, an\n"
            "                 interrupted training or sweep continues from its checkpoint\n"
            "  -h, --help     show this help\n"
            "\n"
            "GRID.yaml not found from the current directory is looked up in normsweep's data\n"
            "directory, as given and under sweeps/. SIGTERM, SIGINT or SIGUSR1 checkpoint the cell\n"
            "at work and exit 3. See docs/TRAIN.md.\n"
            "\n"
            "Exit status: 0 done, 1 runtime failure, 2 invalid input (nothing written), 3\n"
            "interrupted with the checkpoints saved.\n");
}

typedef struct grid_run {
    ns_train_grid g;
    const char *out;            /* output directory */
    char *sweep;                /* the sweep file found (NULL: no sweep) */
    int resume;
    size_t n;                   /* cells */
    char **names, **model_dirs; /* per cell */
    char ***argvs;              /* per cell: the train argv (strings owned here) */
    int *argcs;
    ns_train_options *opts;     /* per cell (strings point into argvs) */
} grid_run;

static void grid_free(grid_run *r)
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
}

/* Cell i's `normsweep train` command line: the grid's train: options, then the cell's own. */
static int cell_argv(grid_run *r, size_t i)
{
    const char *norm;
    double T;
    ns_train_grid_cell(&r->g, i, &norm, &T);
    size_t max = r->g.n_train_args + 12;
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
    a[n++] = strdup("--out");
    a[n++] = strdup(r->model_dirs[i]);
    r->argcs[i] = n;
    for (int k = 0; k < n; k++)
        if (!a[k])
            return -1;
    return 0;
}

/* Every check that needs no MPI: the grid, every cell's training options, the sweep file's
 * schema, the output directory. Returns NS_EXIT_OK or the exit code (message printed). */
static int prepare(grid_run *r, const char *arg, const char *out_opt)
{
    ns_err err;
    ns_err_clear(&err);
    char *path = ns_datadir_sweep(arg);
    if (!path) {
        fprintf(stderr, "normsweep train-grid: out of memory\n");
        return NS_EXIT_FAILURE;
    }
    int rc = ns_train_grid_load(path, &r->g, &err);
    free(path);
    if (rc == NS_ERR_IO)
        err.code = NS_ERR_INVALID; /* an unreadable grid file is invalid input (exit 2) */
    if (rc != NS_OK)
        return ns_cli_report("train-grid", &err);
    r->out = out_opt ? out_opt : r->g.out;
    r->n = ns_train_grid_cells(&r->g);
    r->names = calloc(r->n, sizeof *r->names);
    r->model_dirs = calloc(r->n, sizeof *r->model_dirs);
    r->argvs = calloc(r->n, sizeof *r->argvs);
    r->argcs = calloc(r->n, sizeof *r->argcs);
    r->opts = calloc(r->n, sizeof *r->opts);
    if (!r->names || !r->model_dirs || !r->argvs || !r->argcs || !r->opts) {
        fprintf(stderr, "normsweep train-grid: out of memory\n");
        return NS_EXIT_FAILURE;
    }
    for (size_t i = 0; i < r->n; i++) {
        char *cell = NULL;
        if (!(r->names[i] = ns_train_grid_cell_name(&r->g, i)) ||
            !(cell = ns_path_join(r->out, r->names[i])) ||
            !(r->model_dirs[i] = ns_path_join(cell, "model")) || cell_argv(r, i) != 0) {
            free(cell);
            fprintf(stderr, "normsweep train-grid: out of memory\n");
            return NS_EXIT_FAILURE;
        }
        free(cell);
        int p = ns_cli_train_options(r->argcs[i], r->argvs[i], &r->opts[i]);
        if (p == NS_EXIT_OK && ns_train_check(&r->opts[i], &err) != NS_OK) {
            fprintf(stderr, "normsweep train: %s\n", err.msg);
            p = NS_EXIT_USAGE;
        }
        if (p != NS_EXIT_OK) {
            fprintf(stderr, "normsweep train-grid: %s: the train: options do not make a valid "
                    "training for cell %s (message above); nothing was written\n", r->g.path,
                    r->names[i]);
            return NS_EXIT_USAGE;
        }
        r->opts[i].resume = r->resume;
    }
    if (r->g.sweep) {
        if (!(r->sweep = ns_datadir_sweep(r->g.sweep))) {
            fprintf(stderr, "normsweep train-grid: out of memory\n");
            return NS_EXIT_FAILURE;
        }
        ns_sweep_config cfg;
        ns_sweep_diags diags = {0};
        rc = ns_sweep_load(r->sweep, NULL, NS_SWEEP_SCHEMA_ONLY, &cfg, NULL, NULL, &diags, &err);
        for (size_t i = 0; i < diags.n; i++)
            fprintf(stderr, "%s\n", diags.items[i].text);
        ns_sweep_diags_free(&diags);
        for (size_t i = 0; rc == NS_OK && i < r->n; i++)
            if (cfg.L_max > r->opts[i].model.n_ctx)
                rc = ns_fail(&err, NS_ERR_INVALID, "shards.L_max %zu exceeds the context of the "
                             "models trained (n_positions %zu)", cfg.L_max,
                             r->opts[i].model.n_ctx);
        ns_sweep_config_free(&cfg);
        if (rc != NS_OK) {
            fprintf(stderr, "normsweep train-grid: %s: sweep: %s; nothing was written\n",
                    r->g.path, err.msg);
            return NS_EXIT_USAGE;
        }
    }
    return NS_EXIT_OK;
}

/* What the grid writes -- its copy of the grid file and every cell's directory -- must not be,
 * nor hold, what it reads: the grid file (but a --resume may name the copy itself), the sweep
 * file, each cell's corpus, tokenizer and --init-from model given as paths (common/ns_outpath).
 * Checked before any work. Returns an exit code (message printed). */
static int check_paths(const grid_run *r)
{
    char *copy = ns_path_join(r->out, GRID_COPY);
    size_t cap = 3 + 3 * r->n, n = 0;
    ns_outpath_role *ins = calloc(cap, sizeof *ins);
    ns_err err;
    int rc = copy && ins ? NS_OK : ns_fail(&err, NS_ERR_NOMEM, "out of memory");
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
        rc = ns_outpath_check(&out, ins, n, &err);
    }
    for (size_t i = 0; rc == NS_OK && i < r->n; i++) {
        char *cell = ns_path_join(r->out, r->names[i]);
        ns_outpath_role out = {"the cell directory", cell, 1};
        rc = cell ? ns_outpath_check(&out, ins, n, &err)
                  : ns_fail(&err, NS_ERR_NOMEM, "out of memory");
        free(cell);
    }
    free(copy);
    free(ins);
    return rc == NS_OK ? NS_EXIT_OK : ns_cli_report("train-grid", &err);
}

/* The output directory: new (or empty) without --resume; with it, the grid it holds must be
 * this one. Checked by every rank (they see one file system). */
static int check_out(const grid_run *r)
{
    char *copy = ns_path_join(r->out, GRID_COPY);
    if (!copy) {
        fprintf(stderr, "normsweep train-grid: out of memory\n");
        return NS_EXIT_FAILURE;
    }
    int code = NS_EXIT_OK;
    if (ns_file_exists(r->out) && !ns_file_is_dir(r->out)) {
        fprintf(stderr, "normsweep train-grid: %s exists and is not a directory\n", r->out);
        code = NS_EXIT_USAGE;
    } else if (!r->resume && ns_file_exists(copy)) {
        fprintf(stderr, "normsweep train-grid: %s holds a training grid: pass --resume to "
                "continue it, or choose another --out\n", r->out);
        code = NS_EXIT_USAGE;
    } else if (r->resume && ns_file_exists(copy)) {
        char *old = NULL;
        size_t len = 0;
        ns_err err;
        if (ns_file_read_all(copy, NS_TRAIN_GRID_MAX_FILE, &old, &len, &err) != NS_OK) {
            fprintf(stderr, "normsweep train-grid: %s\n", err.msg);
            code = NS_EXIT_FAILURE;
        } else if (len != r->g.len || memcmp(old, r->g.text, len) != 0) {
            fprintf(stderr, "normsweep train-grid: %s: not the grid %s started with (%s differs); "
                    "--resume continues the same grid only\n", r->g.path, r->out, copy);
            code = NS_EXIT_USAGE;
        }
        free(old);
    }
    free(copy);
    return code;
}

/* Rank 0 creates the output directory and keeps the grid file; every rank learns the result. */
static int start_out(const grid_run *r, int rank, ns_err *err)
{
    int rc = NS_OK;
    if (rank == 0) {
        char *copy = ns_path_join(r->out, GRID_COPY);
        rc = copy ? ns_file_mkdirs(r->out, err) : ns_fail(err, NS_ERR_NOMEM, "out of memory");
        if (rc == NS_OK && !ns_file_exists(copy))
            rc = ns_file_write_atomic(copy, r->g.text, r->g.len, err);
        free(copy);
    }
    MPI_Bcast(&rc, 1, MPI_INT, 0, MPI_COMM_WORLD);
    if (rc != NS_OK && rank != 0)
        ns_fail(err, rc, "rank 0 could not create the output directory");
    return rc;
}

typedef struct grid_ctx {
    grid_run *r;
    int rank, size;
    ns_cli_show *sh;
    volatile sig_atomic_t *stop;
    const char *cmd, *exe_sha;
    ns_hold *hold;
} grid_ctx;

/* Train cell i and sweep its model. Returns an exit code. */
static int run_cell(grid_ctx *x, size_t i)
{
    grid_run *r = x->r;
    char *cell = ns_path_join(r->out, r->names[i]);
    char *nc = cell ? ns_path_join(cell, "sweep.nc") : NULL;
    char *ck = cell ? ns_path_join(cell, "sweep-checkpoint") : NULL;
    int code = NS_EXIT_OK, done = 0;
    if (!cell || !nc || !ck) {
        fprintf(stderr, "normsweep train-grid: out of memory\n");
        code = NS_EXIT_FAILURE;
        goto out;
    }
    if (x->rank == 0)
        done = r->sweep && ns_file_exists(nc);
    MPI_Bcast(&done, 1, MPI_INT, 0, MPI_COMM_WORLD);
    if (x->rank == 0)
        fprintf(stderr, "normsweep train-grid: cell %zu of %zu: %s%s\n", i + 1, r->n, r->names[i],
                done ? ": done before, kept" : "");
    if (done)
        goto out;
    ns_train_options o = r->opts[i];
    o.command_line = x->cmd;
    o.institution = getenv("NORMSWEEP_INSTITUTION");
    o.executable_sha256 = x->exe_sha;
    ns_hooks th = {.line = ns_cli_show_line, .progress = ns_cli_show_progress,
                         .progress_live = isatty(STDERR_FILENO), .user = x->sh, .stop = x->stop,
                         .hold = ns_hold_hook(x->hold), .hold_user = x->hold};
    ns_train_outcome tout;
    ns_err err;
    ns_err_clear(&err);
    int rc = ns_train_run(MPI_COMM_WORLD, &o, &th, &tout, &err);
    if (x->sh->live_open)
        fputc('\n', stderr), x->sh->live_open = 0;
    if (rc == NS_OK && x->rank == 0 && tout.summary[0])
        fprintf(stderr, "normsweep train-grid: %s: %s\n", r->names[i], tout.summary);
    if ((code = ns_cli_status_exit("train-grid", rc, x->rank, &err)) != NS_EXIT_OK || !r->sweep)
        goto out;
    ns_sweep_options so = {.sweep_path = r->sweep, .output = nc, .checkpoint_dir = ck,
                           .model = r->model_dirs[i], .resume = r->resume,
                           .command_line = x->cmd, .institution = o.institution,
                           .executable_sha256 = x->exe_sha};
    ns_hooks sh = {.line = ns_cli_show_line, .progress = ns_cli_show_progress,
                         .progress_live = isatty(STDERR_FILENO), .user = x->sh, .stop = x->stop,
                         .hold = ns_hold_hook(x->hold), .hold_user = x->hold};
    ns_sweep_outcome sout;
    ns_err_clear(&err);
    rc = ns_sweep_run(MPI_COMM_WORLD, &so, &sh, &sout, &err);
    if (x->sh->live_open)
        fputc('\n', stderr), x->sh->live_open = 0;
    code = ns_cli_status_exit("train-grid", rc, x->rank, &err);
    if (sout.unresponsive && code == NS_EXIT_OK)
        code = NS_EXIT_FAILURE;
out:
    free(cell);
    free(nc);
    free(ck);
    return code;
}

/* Returns -1 for --help, else NS_EXIT_OK or NS_EXIT_USAGE (message printed). */
static int parse(int argc, char **argv, const char **grid, const char **out, int *resume)
{
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (strcmp(a, "-h") == 0 || strcmp(a, "--help") == 0)
            return -1;
        if (strcmp(a, "--resume") == 0) {
            *resume = 1;
        } else if (strncmp(a, "--out", 5) == 0 && (a[5] == 0 || a[5] == '=')) {
            *out = a[5] ? a + 6 : i + 1 < argc ? argv[++i] : NULL;
            if (!*out || !**out) {
                fprintf(stderr, "normsweep train-grid: --out needs a directory\n");
                return NS_EXIT_USAGE;
            }
        } else if (a[0] == '-' && a[1]) {
            fprintf(stderr, "normsweep train-grid: unknown option '%s' (see normsweep train-grid "
                    "--help)\n", a);
            return NS_EXIT_USAGE;
        } else if (*grid) {
            fprintf(stderr, "normsweep train-grid: more than one grid file ('%s' and '%s')\n",
                    *grid, a);
            return NS_EXIT_USAGE;
        } else {
            *grid = a;
        }
    }
    if (!*grid) {
        fprintf(stderr, "normsweep train-grid: no grid file (e.g. normsweep train-grid "
                "sweeps/training.yaml; see --help)\n");
        return NS_EXIT_USAGE;
    }
    return NS_EXIT_OK;
}

int ns_cmd_train_grid(int argc, char **argv)
{
    const char *grid = NULL, *out = NULL;
    grid_run r;
    memset(&r, 0, sizeof r);
    int code = parse(argc, argv, &grid, &out, &r.resume);
    if (code == -1) {
        grid_usage(stdout);
        return NS_EXIT_OK;
    }
    if (code != NS_EXIT_OK || (code = prepare(&r, grid, out)) != NS_EXIT_OK ||
        (code = check_paths(&r)) != NS_EXIT_OK || (code = check_out(&r)) != NS_EXIT_OK) {
        grid_free(&r);
        return code;
    }
    volatile sig_atomic_t *stop;
    int rank, size;
    ns_hold hold;
    if ((code = ns_cli_mpi_start("train-grid", "grid", &hold, &stop, &rank, &size)) != NS_EXIT_OK) {
        grid_free(&r);
        return code;
    }
    char *cmd = ns_cli_command_line(argc, argv, size), exe_sha[65];
    ns_cli_self_sha256(exe_sha);
    ns_cli_show sh = {"normsweep train-grid", 0};
    grid_ctx x = {&r, rank, size, &sh, stop, cmd, exe_sha, &hold};
    ns_err err;
    ns_err_clear(&err);
    code = ns_cli_status_exit("train-grid", start_out(&r, rank, &err), rank, &err);
    for (size_t i = 0; i < r.n && code == NS_EXIT_OK; i++)
        code = run_cell(&x, i);
    if (code == NS_EXIT_OK && rank == 0)
        fprintf(stderr, "normsweep train-grid: %zu cells done in %s; the training page: "
                "postprocess/report --training %s --out DIR\n", r.n, r.out, r.out);
    if (code == NS_EXIT_INTERRUPTED && rank == 0)
        fprintf(stderr, "normsweep train-grid: stopped; normsweep train-grid --resume%s%s %s "
                "continues\n", out ? " --out " : "", out ? out : "", grid);
    free(cmd);
    grid_free(&r);
    if (code == NS_EXIT_FAILURE) {
        fflush(NULL);
        _Exit(code);
    }
    MPI_Finalize();
    return code;
}

/* cmd_train_grid: the `normsweep train-grid` subcommand: parses its options, opens the grid
 * (src/traingrid), parses every cell's training options as `normsweep train` does, has the grid
 * checked before any work, initialises MPI once and runs the grid (ns_train_grid_run_all: for
 * each normalizer x temperature [x seed] cell a training and a sweep of its model, on all ranks);
 * prints
 * and chooses the exit code; --resume continues an interrupted grid. docs/TRAIN.md, "Training
 * grids". */
#include <mpi.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli/ns_cli.h"
#include "cli/ns_hold.h"
#include "common/ns_datadir.h"
#include "traingrid/ns_train_grid_run.h"

static void grid_usage(FILE *out)
{
    fprintf(out,
            "Usage: normsweep train-grid [--out DIR] [--resume] GRID.yaml\n"
            "       mpirun -np 2 normsweep train-grid sweeps/training.yaml\n"
            "\n"
            "Test the paper's training claim: train one model per normalizer x temperature of\n"
            "GRID.yaml with the same seed and budget (`normsweep train`, options from its train:\n"
            "section), or one per normalizer x temperature x seed with the file's seeds: list;\n"
            "then sweep each trained model with the grid's sweep file (its model: replaced by\n"
            "the trained one). Every cell's training options and the sweep file are checked\n"
            "before any work. Writes, under the output directory (the file's out:, default\n"
            "runs/<stem>; CELL is <normalizer>-T<T>, with seeds: <normalizer>-T<T>-s<seed>):\n"
            "  training.yaml          the grid file as run\n"
            "  CELL/model/            the model (model.safetensors, config.json), its training log\n"
            "                         train.nc and checkpoint/\n"
            "  CELL/sweep.nc          the sweep of that model\n"
            "  CELL/sweep-checkpoint/ the sweep's journal\n"
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

/* Every check that needs no MPI: the grid file, every cell's training options (parsed here as
 * `normsweep train` parses its own), then the library's checks (sweep file, paths, output
 * directory). Returns NS_EXIT_OK or the exit code (message printed). */
static int prepare(ns_train_grid_run *r, const char *arg, const char *out_opt, int resume)
{
    ns_err err;
    ns_err_clear(&err);
    char *path = ns_datadir_sweep(arg);
    if (!path) {
        fprintf(stderr, "normsweep train-grid: out of memory\n");
        return NS_EXIT_FAILURE;
    }
    int rc = ns_train_grid_open(r, path, out_opt, resume, &err);
    free(path);
    if (rc != NS_OK)
        return ns_cli_report("train-grid", &err);
    for (size_t i = 0; i < r->n; i++) {
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
    }
    ns_sweep_diags diags = {0};
    rc = ns_train_grid_check(r, &diags, &err);
    for (size_t i = 0; i < diags.n; i++)
        fprintf(stderr, "%s\n", diags.items[i].text);
    ns_sweep_diags_free(&diags);
    return rc == NS_OK ? NS_EXIT_OK : ns_cli_report("train-grid", &err);
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
    int resume = 0;
    ns_train_grid_run r;
    memset(&r, 0, sizeof r);
    int code = parse(argc, argv, &grid, &out, &resume);
    if (code == -1) {
        grid_usage(stdout);
        return NS_EXIT_OK;
    }
    if (code != NS_EXIT_OK || (code = prepare(&r, grid, out, resume)) != NS_EXIT_OK) {
        ns_train_grid_run_free(&r);
        return code;
    }
    volatile sig_atomic_t *stop;
    int rank, size;
    ns_hold hold;
    if ((code = ns_cli_mpi_start("train-grid", "grid", &hold, &stop, &rank, &size)) != NS_EXIT_OK) {
        ns_train_grid_run_free(&r);
        return code;
    }
    char *cmd = ns_cli_command_line(argc, argv, size), exe_sha[65];
    ns_cli_self_sha256(exe_sha);
    ns_cli_show sh = {"normsweep train-grid", 0};
    ns_hooks hooks = {.line = ns_cli_show_line, .progress = ns_cli_show_progress,
                      .progress_live = isatty(STDERR_FILENO), .user = &sh, .stop = stop,
                      .hold = ns_hold_hook(&hold), .hold_user = &hold};
    ns_train_grid_provenance prov = {cmd, getenv("NORMSWEEP_INSTITUTION"), exe_sha};
    ns_err err;
    ns_err_clear(&err);
    int unresponsive = 0;
    int rc = ns_train_grid_run_all(MPI_COMM_WORLD, &r, &prov, &hooks, &unresponsive, &err);
    if (sh.live_open)
        fputc('\n', stderr);
    code = ns_cli_status_exit("train-grid", rc, rank, &err);
    if (unresponsive && code == NS_EXIT_OK)
        code = NS_EXIT_FAILURE;
    if (code == NS_EXIT_OK && rank == 0)
        fprintf(stderr, "normsweep train-grid: %zu cells done in %s; the training page: "
                "postprocess/report --training %s --out DIR\n", r.n, r.out, r.out);
    if (code == NS_EXIT_INTERRUPTED && rank == 0)
        fprintf(stderr, "normsweep train-grid: stopped; normsweep train-grid --resume%s%s %s "
                "continues\n", out ? " --out " : "", out ? out : "", grid);
    free(cmd);
    ns_train_grid_run_free(&r);
    if (code == NS_EXIT_FAILURE) {
        fflush(NULL);
        _Exit(code);
    }
    MPI_Finalize();
    return code;
}

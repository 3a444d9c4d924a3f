/* cmd_run: the `normsweep run` subcommand (also `normsweep SWEEP.yaml`): parses the options,
 * initialises MPI, installs the signal handlers that ask the sweep to checkpoint and stop, shows
 * the sweep's messages and progress, runs the sweep (src/sweep/ns_sweep) and turns its status
 * into the exit code. */
#include <mpi.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli/ns_campaign_cli.h"
#include "cli/ns_cli.h"
#include "cli/ns_hold.h"
#include "common/ns_range.h"
#include "common/ns_blas.h"
#include "common/ns_datadir.h"
#include "sweep/ns_sweep.h"
#include "spec/ns_sweep_inputs.h"

static void run_usage(FILE *out)
{
    fprintf(out,
            "Usage: normsweep [run] [--output PATH] [--checkpoint-dir DIR] [--resume]\n"
            "                       [--stall-timeout SECONDS] [--uncompressed]\n"
            "                       [--model-pin [NAME@]SHA256] [SWEEP.yaml]\n"
            "       mpirun -np 64 normsweep SWEEP.yaml\n"
            "\n"
            "Run a sweep: one forward pass per shard, every metric of docs/METRICS.md, reduced by\n"
            "every rank into one NetCDF-4 file. Without SWEEP.yaml the built-in default sweep\n"
            "(sweeps/quick.yaml) runs. A SWEEP.yaml not found from the current directory is looked\n"
            "up in normsweep's data directory, as given and under sweeps/ (installed:\n"
            "PREFIX/share/normsweep; NORMSWEEP_DATADIR overrides).\n"
            "\n"
            "Options (override the sweep file):\n"
            "  --output PATH          NetCDF file to write (written under a temporary name, renamed\n"
            "                         when complete; default: the file's `output`, else\n"
            "                         runs/<stem>/<stem>.nc)\n"
            "  --checkpoint-dir DIR   directory of the journal of completed tasks (default: the\n"
            "                         file's `checkpoint_dir`, else runs/<stem>/checkpoint); one run\n"
            "                         at a time may use it\n"
            "  --resume               continue from the journal, recomputing nothing already done\n"
            "  --stall-timeout S      stop (checkpointed, exit 3) when a busy rank has sent nothing\n"
            "                         for S seconds (default 600)\n"
            "  --uncompressed         write the NetCDF file without shuffle and deflate: the same\n"
            "                         values, about twice the bytes, and no serial compression\n"
            "                         on rank 0 at the end (most of a large grid's write time);\n"
            "                         `nccopy -d 1 -s` compresses it later\n"
            "  --model-pin [NAME@]SHA256\n"
            "                         run only on this model: NAME (an asset set, or `path`) whose\n"
            "                         model.safetensors has this SHA-256; a NAME that is the\n"
            "                         sweep's model's fallback is used as that fallback (the rerun\n"
            "                         of an archived run that fell back; docs/ARCHIVE.md)\n"
            "  -h, --help             show this help\n"
            "\n"
            "SIGTERM, SIGINT or SIGUSR1 (or a file CHECKPOINT_DIR/STOP) make the sweep save every\n"
            "result and exit 3; --resume continues. Progress goes to stderr.\n"
            "\n"
            "A campaign (a sweep file with models: instead of model:; docs/SWEEP.md, \"Campaigns\")\n"
            "runs the same grid on each model in file order after checking every one: model ID\n"
            "writes OUTPUT_DIR/ID/ID.nc from its sweep file OUTPUT_DIR/ID/ID.yaml, with its journal\n"
            "in OUTPUT_DIR/ID/checkpoint; OUTPUT_DIR/campaign.json gives each model's output,\n"
            "model_sha256 and state. --output names OUTPUT_DIR (default: the file's output_dir,\n"
            "else runs/<stem>); --resume keeps the finished models and continues the others.\n"
            "\n"
            "Assets (docs/ASSETS.md): the model, tokenizer and corpus come from the asset cache\n"
            "(NORMSWEEP_ASSETS, default ~/.cache/normsweep/assets) or a mirror directory\n"
            "(NORMSWEEP_MIRROR). run downloads nothing: `normsweep assets fetch` does. A model\n"
            "its download host could supply stops the run (exit 2) naming that command; one that\n"
            "cannot be had here (no mirror copy, no route to its host, or NORMSWEEP_OFFLINE=1,\n"
            "which also skips the probe of the host) falls back to its fallback with a warning.\n"
            "Environment: NORMSWEEP_OFFLINE=1, NORMSWEEP_ASSETS, NORMSWEEP_MIRROR,\n"
            "NORMSWEEP_MANIFEST, NORMSWEEP_INSTITUTION (recorded as the file's CF institution),\n"
            "NORMSWEEP_BOOTSTRAP_MAX_BYTES (the bootstrap's limit per rank, default 1 GiB).\n"
            "Exit status: 0 done, 1 runtime failure, 2 invalid input (nothing written),\n"
            "3 interrupted with the journal saved. See docs/RUNNING.md; under Slurm docs/SLURM.md.\n");
}



/* ---- the recorded command ---- */


/* Slurm's facts about this run segment, for the history (NULL outside Slurm). */
static char *segment_info(void)
{
    const char *job = getenv("SLURM_JOB_ID");
    if (!job)
        return NULL;
    const char *nodes = getenv("SLURM_JOB_NODELIST"), *restart = getenv("SLURM_RESTART_COUNT");
    char *s = malloc(512);
    if (s)
        snprintf(s, 512, "slurm job %s, nodes %s, restart %s", job, nodes ? nodes : "?",
                 restart ? restart : "0");
    return s;
}

/* ---- options ---- */

/* Returns -1 for --help, else NS_EXIT_OK or NS_EXIT_USAGE (message printed). */
static int parse(int argc, char **argv, ns_sweep_options *opt, ns_model_pin *pin)
{
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *name = NULL, **dst = NULL, *val = NULL;
        if (strcmp(a, "-h") == 0 || strcmp(a, "--help") == 0)
            return -1;
        if (strcmp(a, "--resume") == 0) {
            opt->resume = 1;
            continue;
        }
        if (strcmp(a, "--uncompressed") == 0) {
            opt->uncompressed = 1;
            continue;
        }
        static const char *const valued[] = {"--output", "--checkpoint-dir", "--stall-timeout",
                                             "--model-pin"};
        for (size_t k = 0; k < 4 && !name; k++) {
            size_t n = strlen(valued[k]);
            if (strncmp(a, valued[k], n) == 0 && (a[n] == 0 || a[n] == '='))
                name = valued[k], val = a[n] ? a + n + 1 : NULL;
        }
        if (!name && a[0] == '-' && a[1] != 0) {
            fprintf(stderr, "normsweep run: unknown option '%s' (see normsweep run --help)\n", a);
            return NS_EXIT_USAGE;
        }
        if (!name) {
            if (opt->sweep_path) {
                fprintf(stderr, "normsweep run: more than one sweep file ('%s' and '%s')\n",
                        opt->sweep_path, a);
                return NS_EXIT_USAGE;
            }
            opt->sweep_path = a;
            continue;
        }
        if (!val && i + 1 < argc)
            val = argv[++i];
        if (!val || !*val) {
            fprintf(stderr, "normsweep run: %s needs a%s value\n", name, val ? " non-empty" : "");
            return NS_EXIT_USAGE;
        }
        if (strcmp(name, "--stall-timeout") == 0) {
            static const ns_range r_stall = NS_RANGE_REAL(1.0, 1e9, 0, "seconds");
            ns_err e;
            if (ns_range_parse_real(&r_stall, name, val, &opt->stall_timeout, &e) != NS_OK) {
                fprintf(stderr, "normsweep run: %s\n", e.msg);
                return NS_EXIT_USAGE;
            }
            continue;
        }
        if (strcmp(name, "--model-pin") == 0) {
            ns_err e;
            if (ns_model_pin_parse(val, pin, &e) != NS_OK) {
                fprintf(stderr, "normsweep run: --model-pin: %s\n", e.msg);
                return NS_EXIT_USAGE;
            }
            opt->model_pin = pin;
            continue;
        }
        dst = strcmp(name, "--output") == 0 ? &opt->output : &opt->checkpoint_dir;
        *dst = val;
    }
    return NS_EXIT_OK;
}

int ns_cmd_run(int argc, char **argv)
{
    ns_sweep_options opt = {0};
    ns_model_pin pin;
    int p = parse(argc, argv, &opt, &pin);
    if (p == -1) {
        run_usage(stdout);
        return NS_EXIT_OK;
    }
    if (p != NS_EXIT_OK)
        return p;
    if ((p = ns_cli_boot_max_bytes("run", &opt.boot_max_bytes)) != 0)
        return p;
    /* A sweep not found from here is looked up in the data directory (installed sweeps/). */
    char *sweep_path = opt.sweep_path ? ns_datadir_sweep(opt.sweep_path) : NULL;
    if (opt.sweep_path && !sweep_path) {
        fprintf(stderr, "normsweep run: out of memory\n");
        return NS_EXIT_FAILURE;
    }
    opt.sweep_path = sweep_path;
    if (sweep_path) { /* a campaign (models:) runs model by model */
        ns_campaign camp;
        char *text = NULL;
        size_t len = 0;
        p = ns_cli_campaign_read("run", sweep_path, opt.output, &camp, &text, &len);
        if (p == NS_EXIT_OK && camp.n)
            p = ns_cli_campaign_run(&camp, text, len, &opt, argc, argv);
        int was_campaign = camp.n > 0;
        ns_campaign_free(&camp);
        free(text);
        if (p != NS_EXIT_OK || was_campaign) {
            free(sweep_path);
            return p;
        }
    }
    volatile sig_atomic_t *stop;
    int rank, size;
    ns_hold hold;
    int started = ns_cli_mpi_start("run", "sweep", &hold, &stop, &rank, &size);
    if (started != NS_EXIT_OK) {
        free(sweep_path);
        return started;
    }
    char *cmd = ns_cli_command_line(argc, argv, size), *seg = segment_info();
    opt.command_line = cmd;
    opt.segment_info = seg;
    opt.institution = getenv("NORMSWEEP_INSTITUTION");
    char exe_sha[65];
    ns_cli_self_sha256(exe_sha);
    opt.executable_sha256 = exe_sha;
    ns_cli_show sh = {"normsweep", 0};
    ns_hooks hooks = {
        .line = ns_cli_show_line, .progress = ns_cli_show_progress,
        .progress_live = isatty(STDERR_FILENO), .user = &sh, .stop = stop,
        .hold = ns_hold_hook(&hold), .hold_user = &hold,
    };
    ns_sweep_outcome out;
    ns_err err;
    int rc = ns_sweep_run(MPI_COMM_WORLD, &opt, &hooks, &out, &err);
    if (sh.live_open)
        fputc('\n', stderr);
    if (rc == NS_OK && rank == 0 && out.summary[0])
        fprintf(stderr, "%s", out.summary);
    int code = ns_cli_status_exit("run", rc, out.rank, &err);
    free(cmd);
    free(seg);
    free(sweep_path);
    if (out.unresponsive || code == NS_EXIT_FAILURE) {
        /* MPI cannot be shut down (a silent rank), or a runtime failure (another rank may be
         * gone): leave at once, without MPI_Finalize or the libraries' exit handlers. HDF5's
         * handler, which crashed on a file whose close failed, is off for every command
         * (io/ns_hdf5.h); the temporary file is already removed. */
        fflush(NULL);
        _Exit(code);
    }
    MPI_Finalize();
    return code;
}

/* cmd_run: the `normsweep run` subcommand (also `normsweep SWEEP.yaml`): parses the options and
 * runs the MPI sweep (src/sweep/ns_sweep_run). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/ns_cli.h"
#include "sweep/ns_sweep_run.h"

static void run_usage(FILE *out)
{
    fprintf(out,
            "Usage: normsweep [run] [--output PATH] [--checkpoint-dir DIR] [--resume] [SWEEP.yaml]\n"
            "       mpirun -np 64 normsweep SWEEP.yaml\n"
            "\n"
            "Run a sweep: one forward pass per shard, every requested metric, reduced into one\n"
            "NetCDF-4 file. Without SWEEP.yaml the built-in default sweep runs.\n"
            "\n"
            "Options (override the sweep file):\n"
            "  --output PATH          NetCDF file to write (written under a temporary name, renamed\n"
            "                         when complete)\n"
            "  --checkpoint-dir DIR   directory of the journal of completed tasks\n"
            "                         (default: OUTPUT.ckpt)\n"
            "  --resume               continue from the journal, recomputing nothing already done\n"
            "  -h, --help             this text\n"
            "\n"
            "Progress goes to stderr. Exit codes: 0 done, 1 runtime failure, 2 invalid input\n"
            "(nothing written), 3 interrupted by SIGTERM/SIGINT with the journal saved.\n"
            "See docs/RUNNING.md.\n");
}

/* "normsweep run a b c" with shell-unsafe arguments quoted. Caller frees. */
static char *join_command_line(int argc, char **argv)
{
    size_t n = 16;
    for (int i = 0; i < argc; i++)
        n += 3 + 2 * strlen(argv[i]);
    char *s = malloc(n), *p = s;
    if (!s)
        return NULL;
    p += sprintf(p, "normsweep");
    for (int i = 0; i < argc; i++) {
        const char *a = argv[i];
        int plain = *a != 0 && strspn(a, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
                                         "0123456789-_./=:,+@%") == strlen(a);
        *p++ = ' ';
        if (plain) {
            p += sprintf(p, "%s", a);
            continue;
        }
        *p++ = '\'';
        for (; *a; a++) {
            if (*a == '\'') {
                memcpy(p, "'\\''", 4);
                p += 4;
            } else {
                *p++ = *a;
            }
        }
        *p++ = '\'';
        *p = 0;
    }
    return s;
}

int ns_cmd_run(int argc, char **argv)
{
    ns_sweep_options opt = {0};
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        const char **dst = NULL;
        const char *name = NULL;
        if (strcmp(a, "-h") == 0 || strcmp(a, "--help") == 0) {
            run_usage(stdout);
            return NS_EXIT_OK;
        } else if (strcmp(a, "--resume") == 0) {
            opt.resume = 1;
            continue;
        } else if (strncmp(a, "--output", 8) == 0 && (a[8] == 0 || a[8] == '=')) {
            dst = &opt.output, name = "--output";
        } else if (strncmp(a, "--checkpoint-dir", 16) == 0 && (a[16] == 0 || a[16] == '=')) {
            dst = &opt.checkpoint_dir, name = "--checkpoint-dir";
        } else if (a[0] == '-' && a[1] != 0) {
            fprintf(stderr, "normsweep run: unknown option '%s' (see normsweep run --help)\n", a);
            return NS_EXIT_USAGE;
        } else {
            if (opt.sweep_path) {
                fprintf(stderr, "normsweep run: more than one sweep file ('%s' and '%s')\n",
                        opt.sweep_path, a);
                return NS_EXIT_USAGE;
            }
            opt.sweep_path = a;
            continue;
        }
        const char *eq = strchr(a, '=');
        if (eq) {
            *dst = eq + 1;
        } else if (i + 1 < argc) {
            *dst = argv[++i];
        } else {
            fprintf(stderr, "normsweep run: %s needs a value\n", name);
            return NS_EXIT_USAGE;
        }
        if (!**dst) {
            fprintf(stderr, "normsweep run: %s needs a non-empty value\n", name);
            return NS_EXIT_USAGE;
        }
    }
    char *cmdline = join_command_line(argc, argv);
    opt.command_line = cmdline;
    ns_sweep_outcome outcome = {0};
    ns_err err;
    ns_err_clear(&err);
    int rc = ns_sweep_main(&opt, &outcome, &err);
    free(cmdline);
    int code;
    if (rc == NS_OK)
        code = NS_EXIT_OK;
    else if (outcome.rank == 0)
        code = ns_cli_report("run", &err);
    else
        code = rc == NS_ERR_INVALID || rc == NS_ERR_FORMAT || rc == NS_ERR_CHECKSUM ? NS_EXIT_USAGE
               : rc == NS_ERR_INTERRUPTED ? NS_EXIT_INTERRUPTED : NS_EXIT_FAILURE;
    if (!outcome.finalized || code == NS_EXIT_FAILURE) {
        /* MPI could not be shut down (unresponsive worker), or a runtime failure: leave at once,
         * without the libraries' exit handlers (HDF5's crashes on a file whose close failed,
         * e.g. the NetCDF output on a full disk; the temporary file is already removed). */
        fflush(NULL);
        _Exit(code);
    }
    return code;
}

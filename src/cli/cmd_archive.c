/* cmd_archive: the `normsweep archive` subcommand: pack a finished run directory into a
 * reproducibility archive (src/archive/ns_run_archive, docs/ARCHIVE.md). */
#include <getopt.h>
#include <stdio.h>
#include <string.h>

#include "cli/ns_cli.h"
#include "cli/ns_hold.h"
#include "archive/ns_run_archive.h"

static void usage(FILE *out)
{
    fprintf(out,
            "Usage: normsweep archive RUN_DIR --out X.tar.gz [--nc FILE] [--checkpoint-dir DIR]\n"
            "                         [--lean] [--with-model] [-q]\n"
            "\n"
            "Pack a finished sweep run into a reproducibility archive: the NetCDF output, the sweep\n"
            "file (its exact text, from the NetCDF), the journal of completed tasks, the logs,\n"
            "provenance.json (build, BLAS, input SHA-256s, model used, machine) and MANIFEST.sha256.\n"
            "The archive is written under a temporary name and renamed when complete.\n"
            "\n"
            "RUN_DIR holds the run's one *.nc file, its checkpoint directory (checkpoint/ or\n"
            "NAME.nc.ckpt), its logs (*.log, *.out, *.err, logs/) and report/; see docs/ARCHIVE.md.\n"
            "Members keep their permissions. Refused, before anything is written (exit 2): a\n"
            "journal, journal part, history or report of another run than the NetCDF's, a symbolic\n"
            "link, FIFO or device among those files, two files that would be one member.\n"
            "\n"
            "Options:\n"
            "  --out FILE            the archive to write (must end in .tar.gz)\n"
            "  --nc FILE             the sweep's NetCDF file (default: the one *.nc in RUN_DIR)\n"
            "  --checkpoint-dir DIR  the run's checkpoint directory (default: RUN_DIR/checkpoint,\n"
            "                        else NC.ckpt)\n"
            "  --lean                leave the journal out (a fraction of the size): verify then\n"
            "                        recomputes every task from the model and demands the same\n"
            "                        bytes (as long as the run took on one core; docs/ARCHIVE.md)\n"
            "  --with-model          pack the model's files (model/), for a model a referee cannot\n"
            "                        download (a mirror-only stand-in, a model of your own);\n"
            "                        without it README.txt names each file and its SHA-256\n"
            "  -q, --quiet           do not list the members\n"
            "  -h, --help            show this help\n"
            "\n"
            "Exit status: 0 written, 1 I/O failure, 2 bad options or an unusable run directory,\n"
            "3 interrupted by SIGTERM, SIGINT or SIGUSR1 (nothing written).\n");
}

static void log_line(void *user, const char *line)
{
    (void)user;
    fprintf(stderr, "normsweep archive: %s\n", line);
}

int ns_cmd_archive(int argc, char **argv)
{
    enum { O_OUT = 256, O_NC, O_CKPT, O_LEAN, O_MODEL };
    static const struct option opts[] = {
        {"out", required_argument, NULL, O_OUT},
        {"lean", no_argument, NULL, O_LEAN},
        {"with-model", no_argument, NULL, O_MODEL},
        {"nc", required_argument, NULL, O_NC},
        {"checkpoint-dir", required_argument, NULL, O_CKPT},
        {"quiet", no_argument, NULL, 'q'},
        {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0},
    };
    ns_run_archive_options o = {0};
    int quiet = 0, c;
    opterr = 0;
    optind = 1;
    while ((c = getopt_long(argc, argv, ":qh", opts, NULL)) != -1) {
        switch (c) {
        case O_OUT: o.out = optarg; break;
        case O_NC: o.nc = optarg; break;
        case O_CKPT: o.checkpoint_dir = optarg; break;
        case O_LEAN: o.lean = 1; break;
        case O_MODEL: o.with_model = 1; break;
        case 'q': quiet = 1; break;
        case 'h': usage(stdout); return NS_EXIT_OK;
        case ':':
            fprintf(stderr, "normsweep archive: %s needs a value\n", argv[optind - 1]);
            return NS_EXIT_USAGE;
        default:
            fprintf(stderr, "normsweep archive: unknown option '%s' (see normsweep archive --help)\n",
                    argv[optind - 1]);
            return NS_EXIT_USAGE;
        }
    }
    if (optind + 1 != argc) {
        fprintf(stderr, "normsweep archive: %s (see normsweep archive --help)\n",
                optind >= argc ? "RUN_DIR is required" : "only one RUN_DIR may be given");
        return NS_EXIT_USAGE;
    }
    if (!o.out || !*o.out) {
        fprintf(stderr, "normsweep archive: --out X.tar.gz is required\n");
        return NS_EXIT_USAGE;
    }
    o.run_dir = argv[optind];
    o.hooks.line = quiet ? NULL : log_line;
    volatile sig_atomic_t *stop = ns_cli_catch_stop();
    ns_hold hold; /* test only: NORMSWEEP_TEST_HOLD=temp (cli/ns_hold.h) */
    if (ns_hold_setup(&hold, "archive", stop, &o.hooks) != 0)
        return NS_EXIT_USAGE;
    ns_cli_tmp_watch("archive", o.out);
    ns_err err;
    ns_err_clear(&err);
    if (ns_run_archive(&o, &err) != NS_OK) {
        ns_cli_name_signal(&err, *stop);
        return ns_cli_report("archive", &err);
    }
    fprintf(stderr, "normsweep archive: wrote %s\n", o.out);
    return NS_EXIT_OK;
}

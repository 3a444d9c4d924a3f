/* cmd_verify: the `normsweep verify` subcommand: check a reproducibility archive (manifest, what
 * its members state, inputs, journal, every attribute and number) and recompute sampled tasks
 * (src/archive/ns_verify, docs/ARCHIVE.md). */
#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli/ns_cli.h"
#include "cli/ns_hold.h"
#include "common/ns_range.h"
#include "common/ns_tmp.h"
#include "archive/ns_verify.h"

static void usage(FILE *out)
{
    fprintf(out,
            "Usage: normsweep verify X.tar.gz [--sample K] [--seed S] [--tolerance R] [--tolerant]\n"
            "                        [--offline]\n"
            "\n"
            "Check a reproducibility archive made by `normsweep archive`:\n"
            "  1. MANIFEST.sha256: every member present, every SHA-256 matching, nothing unlisted;\n"
            "  2. provenance.json and README.txt state what the NetCDF file records;\n"
            "  3. the recorded inputs: model, tokenizer and corpus are resolved as the sweep names\n"
            "     them, their SHA-256 compared with the recorded ones and each recorded name with\n"
            "     the SHA-256 the asset manifests list for it;\n"
            "  4. the journal: this sweep's, a whole record for every task;\n"
            "  5. the NetCDF file: every attribute and variable as the run writes them for this\n"
            "     sweep, its inputs and journal, and every number from the journal's reduction;\n"
            "  6. K randomly chosen tasks (shards) are recomputed with the sweep's own code and\n"
            "     compared with the journal's values: byte-identical when git commit, compiler,\n"
            "     flags and BLAS match the recorded build, else within a relative tolerance.\n"
            "One line per check; what cannot be checked (when, where and with which build the run\n"
            "ran) is listed by name; the last line is the verdict.\n"
            "\n"
            "Options:\n"
            "  --sample K      tasks to recompute (default %d; 0 skips the recomputation)\n"
            "  --seed S        seed choosing the tasks (default %u)\n"
            "  --tolerance R   relative tolerance of the tolerance mode (default %g):\n"
            "                  |a - b| <= R * max(|a|, |b|, 1)\n"
            "  --tolerant      use the tolerance even when the build matches\n"
            "  --offline       do not fetch missing assets (use what is present)\n"
            "  -h, --help      show this help\n"
            "\n"
            "Exit status: 0 every check passed, 4 a difference was found, 2 unusable input\n"
            "(bad options, unreadable archive, no NetCDF inside), 1 runtime failure, 3\n"
            "interrupted by SIGTERM, SIGINT or SIGUSR1 (the extraction directory is removed).\n",
            NS_VERIFY_DEFAULT_SAMPLE, NS_VERIFY_DEFAULT_SEED, NS_VERIFY_DEFAULT_TOLERANCE);
}

/* One report line on stdout: "STATUS text". */
static void report_line(void *user, const char *status, const char *text)
{
    (void)user;
    printf("%-4s %s\n", status, text);
}

/* The ranges of the numeric options (common/ns_range.h). */
static const ns_range r_sample =
    NS_RANGE_INT(0, NS_RANGE_INT32_MAX, "at most every task: tasks are numbered by 32-bit integers");
static const ns_range r_seed = NS_RANGE_INT(0, UINT64_MAX, NULL);
static const ns_range r_tol = NS_RANGE_REAL(0.0, 1.0, NS_RANGE_MAX_OPEN, "a relative tolerance");

int ns_cmd_verify(int argc, char **argv)
{
    enum { O_SAMPLE = 256, O_SEED, O_TOL, O_TOLERANT, O_OFFLINE };
    static const struct option opts[] = {
        {"sample", required_argument, NULL, O_SAMPLE},
        {"seed", required_argument, NULL, O_SEED},
        {"tolerance", required_argument, NULL, O_TOL},
        {"tolerant", no_argument, NULL, O_TOLERANT},
        {"offline", no_argument, NULL, O_OFFLINE},
        {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0},
    };
    ns_verify_options o = {0};
    o.sample = NS_VERIFY_DEFAULT_SAMPLE;
    o.seed = NS_VERIFY_DEFAULT_SEED;
    o.tolerance = NS_VERIFY_DEFAULT_TOLERANCE;
    o.allow_fetch = 1;
    o.report = report_line;
    o.fetch_log = ns_cli_log_line;
    int c;
    opterr = 0;
    optind = 1;
    while ((c = getopt_long(argc, argv, ":h", opts, NULL)) != -1) {
        switch (c) {
        case O_SAMPLE:
        case O_SEED:
        case O_TOL: {
            const ns_range *r = c == O_SAMPLE ? &r_sample : c == O_SEED ? &r_seed : &r_tol;
            const char *name = c == O_SAMPLE ? "--sample" : c == O_SEED ? "--seed" : "--tolerance";
            uint64_t u = 0;
            double x = 0;
            ns_err e;
            if (ns_range_parse(r, name, optarg, &u, &x, &e) != NS_OK) {
                fprintf(stderr, "normsweep verify: %s\n", e.msg);
                return NS_EXIT_USAGE;
            }
            if (c == O_SAMPLE)
                o.sample = (size_t)u;
            else if (c == O_SEED)
                o.seed = u;
            else
                o.tolerance = x;
            break;
        }
        case O_TOLERANT: o.force_tolerance = 1; break;
        case O_OFFLINE: o.allow_fetch = 0; break;
        case 'h': usage(stdout); return NS_EXIT_OK;
        case ':':
            fprintf(stderr, "normsweep verify: %s needs a value\n", argv[optind - 1]);
            return NS_EXIT_USAGE;
        default:
            fprintf(stderr, "normsweep verify: unknown option '%s' (see normsweep verify --help)\n",
                    argv[optind - 1]);
            return NS_EXIT_USAGE;
        }
    }
    if (optind + 1 != argc) {
        fprintf(stderr, "normsweep verify: %s (see normsweep verify --help)\n",
                optind >= argc ? "the archive X.tar.gz is required" : "only one archive may be given");
        return NS_EXIT_USAGE;
    }
    o.archive = argv[optind];
    ns_cli_show sh = {"normsweep verify", 0};
    o.hooks.progress = ns_cli_show_progress;
    o.hooks.user = &sh;
    o.hooks.progress_live = isatty(STDERR_FILENO);
    /* a signal stops the verification, which removes its extraction directory (exit 3) */
    volatile sig_atomic_t *stop = ns_cli_catch_stop();
    ns_hold hold; /* test only: NORMSWEEP_TEST_HOLD=temp (cli/ns_hold.h) */
    if (ns_hold_setup(&hold, "verify", stop, &o.hooks) != 0)
        return NS_EXIT_USAGE;
    ns_cli_tmp_watch_dirs("verify", o.tmpdir ? o.tmpdir : ns_tmp_base(), NS_VERIFY_TMP_PREFIX);
    char exe_sha[65];
    ns_cli_self_sha256(exe_sha);
    o.executable_sha256 = exe_sha;
    ns_verify_summary s;
    ns_err err;
    ns_err_clear(&err);
    int rc = ns_verify(&o, &s, &err);
    if (sh.live_open)
        fputc('\n', stderr);
    if (rc == NS_OK)
        printf("verify: %s (%zu passed, %zu failed, %zu skipped)\n", s.failed ? "FAIL" : "PASS",
               s.passed, s.failed, s.skipped);
    fflush(stdout);
    if (rc != NS_OK) {
        ns_cli_name_signal(&err, *stop);
        fprintf(stderr, "normsweep verify: %s\n", err.msg[0] ? err.msg : ns_status_name(rc));
        return rc == NS_ERR_INTERRUPTED                      ? NS_EXIT_INTERRUPTED
               : rc == NS_ERR_NOMEM || rc == NS_ERR_LIBRARY ? NS_EXIT_FAILURE
                                                             : NS_EXIT_USAGE;
    }
    return s.failed ? NS_EXIT_VERIFY_FAILED : NS_EXIT_OK;
}

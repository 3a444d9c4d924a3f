/* ns_cli: the subcommands of the normsweep program and the exit codes they return.
 * Only the CLI decides exit codes; library modules return ns_status values. */
#ifndef NS_CLI_H
#define NS_CLI_H

#include <stddef.h>

#include <signal.h>

#include "common/ns_error.h"

/* Exit codes of the normsweep program (documented in README and the man page). */
enum ns_exit_code {
    NS_EXIT_OK = 0,          /* success */
    NS_EXIT_FAILURE = 1,     /* runtime failure (I/O, library, corrupt input found mid-run) */
    NS_EXIT_USAGE = 2,       /* bad command line or invalid input detected before any work */
    NS_EXIT_INTERRUPTED = 3, /* stopped by SIGTERM/SIGINT after saving the journal: --resume continues */
    NS_EXIT_VERIFY_FAILED = 4, /* `verify` ran and found a difference */
    NS_EXIT_MODELS_MISSING = 5 /* `validate` of a campaign: valid for every model here, some
                                  models cannot be had here (listed) */
};

/* Print "normsweep <cmd>: <message>" on stderr and return the exit code matching err->code
 * (NS_EXIT_USAGE for invalid/format input found before work, NS_EXIT_FAILURE otherwise). */
int ns_cli_report(const char *cmd, const ns_err *err);
/* The bootstrap's per-rank limit in bytes from NORMSWEEP_BOOTSTRAP_MAX_BYTES (unset or empty: 0,
 * the default NS_RESULTS_BOOT_MAX_BYTES): 0 and *out set, or a message naming the variable and
 * NS_EXIT_USAGE when it is not a positive number. */
int ns_cli_boot_max_bytes(const char *cmd, double *out);

/* The exit code of an MPI command's status rc, the same on every rank: rank 0 reports err (as
 * ns_cli_report), another rank prints only its own failure ("normsweep CMD: rank R: ..."). */
int ns_cli_status_exit(const char *cmd, int rc, int rank, const ns_err *err);

/* A library's informational line on stderr (user unused): the log callback of fetching. */
void ns_cli_log_line(void *user, const char *line);

/* SHA-256 (hex) of the running executable (/proc/self/exe) into hex[65]; "unknown" on failure. */
void ns_cli_self_sha256(char hex[65]);

/* The stop request of a long command (run, train): ns_cli_catch_stop() installs handlers of
 * SIGTERM, SIGINT and SIGUSR1 (mpirun forwards SIGUSR1 to every rank; the Slurm script sends it
 * when time is nearly up) that store the signal's number in the flag it returns; the command
 * hands that flag to the library, which checkpoints and stops. */
volatile sig_atomic_t *ns_cli_catch_stop(void);

/* Temporaries of this process (common/ns_tmp): a command registers the final paths it writes
 * (FINAL.tmp.<pid> beside each) and the scratch directories it makes (BASE/PREFIX.<pid>.*).
 * Registering first removes what dead processes left there (a line on stderr names each:
 * "normsweep CMD: removed PATH, left by a normsweep process that no longer runs"); at exit
 * (atexit) whatever of this process's own is still there is removed. The library removes its
 * temporaries itself on failure and when told to stop: this is the net under it. */
void ns_cli_tmp_watch(const char *cmd, const char *final);
void ns_cli_tmp_watch_dirs(const char *cmd, const char *base, const char *prefix);

/* A library's "interrupted; ..." message made to name the signal the stop flag holds:
 * "interrupted by SIGTERM; ...". */
void ns_cli_name_signal(ns_err *err, int sig);

/* The start of an MPI command (run, train): the stop handlers first (a signal during MPI_Init
 * must also stop cleanly), the test-only hold read into *hold (ns_hold.h; its point "mpi-init"
 * is here, before MPI_Init), MPI_Init_thread (FUNNELED), errors returned on MPI_COMM_WORLD, this
 * rank and the size, and one BLAS thread per rank unless the user chose otherwise (the ranks fill
 * the cores; and every rank then computes the same way). Returns NS_EXIT_OK, or the exit code
 * after printing "normsweep CMD: ..." ("interrupted before the WHAT started; nothing was
 * written", "MPI_Init failed", or a bad NORMSWEEP_TEST_HOLD). */
struct ns_hold;
int ns_cli_mpi_start(const char *cmd, const char *what, struct ns_hold *hold,
                     volatile sig_atomic_t **stop, int *rank, int *size);

/* A long command's lines on stderr: whole lines (ns_cli_show_line) and progress lines
 * ("<prefix>: <line>"), rewritten in place when live (a terminal). user: an ns_cli_show. */
typedef struct ns_cli_show {
    const char *prefix;     /* "normsweep", "normsweep train" */
    int live_open;          /* a live progress line is on the terminal */
} ns_cli_show;
void ns_cli_show_line(void *user, const char *text);
void ns_cli_show_progress(void *user, const char *line, int live);

/* The command that started this run, as a shell command (plain words unquoted, others
 * single-quoted): the launcher's own command line when the launcher runs beside this process
 * (mpirun, mpiexec, srun, ... as parent or grandparent, naming this program as it was typed:
 * "mpirun --oversubscribe -np 2 ./normsweep x.yaml"), else this process's command line as typed
 * (/proc/self/cmdline: the program's path and every word), after the launcher as far as it can
 * be known ("srun -n P" from SLURM_JOB_ID + SLURM_STEP_ID, "mpirun -np P" when size > 1 or
 * OMPI_COMM_WORLD_SIZE / PMI_SIZE is set). Without /proc: "normsweep ARGV..." (argv[0] is the
 * subcommand). Caller frees; NULL when out of memory. */
char *ns_cli_command_line(int argc, char **argv, int size);

/* `normsweep train`'s options (argv[0] is the subcommand) into *o, as `train` reads them: the
 * preset, then the single values (o's strings point into argv). Returns -1 for --help, else
 * NS_EXIT_OK or NS_EXIT_USAGE with the message printed ("normsweep train: ..."). */
struct ns_train_options;
int ns_cli_train_options(int argc, char **argv, struct ns_train_options *o);

/* Subcommands: each parses its own options (argv[0] is the subcommand name) and returns an exit code. */
int ns_cmd_run(int argc, char **argv);
int ns_cmd_validate(int argc, char **argv);
int ns_cmd_tokenize(int argc, char **argv);
int ns_cmd_dump(int argc, char **argv);
int ns_cmd_mkmodel(int argc, char **argv);
int ns_cmd_assets(int argc, char **argv);
int ns_cmd_archive(int argc, char **argv);
int ns_cmd_verify(int argc, char **argv);
int ns_cmd_train(int argc, char **argv);
int ns_cmd_train_grid(int argc, char **argv);

#endif

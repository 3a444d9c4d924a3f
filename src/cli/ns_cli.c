/* ns_cli: shared reporting of library errors as one-line messages and exit codes. */
#include "cli/ns_cli.h"
#include "cli/ns_hold.h"

#include "common/ns_blas.h"
#include "common/ns_sha256.h"
#include "common/ns_tmp.h"

#include <errno.h>
#include <math.h>
#include <mpi.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

int ns_cli_boot_max_bytes(const char *cmd, double *out)
{
    const char *v = getenv("NORMSWEEP_BOOTSTRAP_MAX_BYTES");
    char *end = NULL;
    *out = 0.0;
    if (!v || !*v)
        return 0;
    double x = strtod(v, &end);
    if (*end || !(x >= 1.0) || !isfinite(x)) {
        fprintf(stderr, "normsweep %s: NORMSWEEP_BOOTSTRAP_MAX_BYTES is \"%s\", not a positive "
                "number of bytes\n", cmd, v);
        return NS_EXIT_USAGE;
    }
    *out = x;
    return 0;
}

int ns_cli_report(const char *cmd, const ns_err *err)
{
    const char *debug = getenv("NORMSWEEP_DEBUG");
    if (debug && *debug && strcmp(debug, "0") != 0 && err->file)
        fprintf(stderr, "normsweep %s: %s [%s:%d]\n", cmd,
                err->msg[0] ? err->msg : ns_status_name(err->code), err->file, err->line);
    else
        fprintf(stderr, "normsweep %s: %s\n", cmd,
                err->msg[0] ? err->msg : ns_status_name(err->code));
    switch (err->code) {
    case NS_OK: return NS_EXIT_OK;
    case NS_ERR_FORMAT:
    case NS_ERR_INVALID:
    case NS_ERR_CHECKSUM: return NS_EXIT_USAGE;
    case NS_ERR_INTERRUPTED: return NS_EXIT_INTERRUPTED;
    default: return NS_EXIT_FAILURE;
    }
}

int ns_cli_status_exit(const char *cmd, int rc, int rank, const ns_err *err)
{
    if (rc == NS_OK)
        return NS_EXIT_OK;
    if (rank == 0)
        return ns_cli_report(cmd, err);
    if (err->msg[0]) /* this rank's own failure (rank 0 reports the command's) */
        fprintf(stderr, "normsweep %s: rank %d: %s\n", cmd, rank, err->msg);
    return rc == NS_ERR_INVALID || rc == NS_ERR_FORMAT || rc == NS_ERR_CHECKSUM ? NS_EXIT_USAGE
           : rc == NS_ERR_INTERRUPTED ? NS_EXIT_INTERRUPTED : NS_EXIT_FAILURE;
}

void ns_cli_log_line(void *user, const char *line)
{
    (void)user;
    fprintf(stderr, "%s\n", line);
}

void ns_cli_self_sha256(char hex[65])
{
    ns_err err;
    if (ns_sha256_file("/proc/self/exe", hex, &err) != NS_OK)
        snprintf(hex, 65, "unknown");
}

/* The one piece of process state a signal handler can reach: the stop request. */
static volatile sig_atomic_t ns_cli_stop;

static void on_stop_signal(int sig)
{
    ns_cli_stop = sig;
}

volatile sig_atomic_t *ns_cli_catch_stop(void)
{
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_stop_signal;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGTERM, &sa, NULL);
    sigaction(SIGINT, &sa, NULL);
    sigaction(SIGUSR1, &sa, NULL);
    return &ns_cli_stop;
}

void ns_cli_name_signal(ns_err *err, int sig)
{
    const char *name = sig == SIGTERM ? "SIGTERM" : sig == SIGINT ? "SIGINT"
                       : sig == SIGUSR1 ? "SIGUSR1" : NULL;
    size_t k = strlen("interrupted");
    if (!name || err->code != NS_ERR_INTERRUPTED || strncmp(err->msg, "interrupted", k) != 0)
        return;
    char rest[NS_ERR_MSG_MAX];
    snprintf(rest, sizeof rest, "%s", err->msg + k);
    snprintf(err->msg, sizeof err->msg, "interrupted by %s%.900s", name, rest);
}

/* ---- temporaries of this process (see ns_cli.h) ---- */

#define NS_CLI_TMP_MAX 8
static struct {
    char *final[NS_CLI_TMP_MAX];
    size_t n;
    char *dir_base, *dir_prefix;
    int registered;
} ns_cli_tmp;

static void tmp_cleanup(void)
{
    for (size_t i = 0; i < ns_cli_tmp.n; i++) {
        ns_tmp_remove_own(ns_cli_tmp.final[i], getpid());
        free(ns_cli_tmp.final[i]);
    }
    ns_cli_tmp.n = 0;
    if (ns_cli_tmp.dir_base)
        ns_tmp_remove_dirs(ns_cli_tmp.dir_base, ns_cli_tmp.dir_prefix, getpid(), NULL, NULL);
    free(ns_cli_tmp.dir_base);
    free(ns_cli_tmp.dir_prefix);
    ns_cli_tmp.dir_base = ns_cli_tmp.dir_prefix = NULL;
}

static void said_removed(void *user, const char *path)
{
    fprintf(stderr, "normsweep %s: removed %s, left by a normsweep process that no longer runs\n",
            (const char *)user, path);
}

static void tmp_register(void)
{
    if (!ns_cli_tmp.registered)
        ns_cli_tmp.registered = atexit(tmp_cleanup) == 0;
}

void ns_cli_tmp_watch(const char *cmd, const char *final)
{
    ns_tmp_remove_stale(final, said_removed, (void *)cmd);
    tmp_register();
    if (ns_cli_tmp.n < NS_CLI_TMP_MAX && (ns_cli_tmp.final[ns_cli_tmp.n] = strdup(final)))
        ns_cli_tmp.n++;
}

void ns_cli_tmp_watch_dirs(const char *cmd, const char *base, const char *prefix)
{
    ns_tmp_remove_dirs(base, prefix, 0, said_removed, (void *)cmd);
    tmp_register();
    free(ns_cli_tmp.dir_base);
    free(ns_cli_tmp.dir_prefix);
    ns_cli_tmp.dir_base = strdup(base);
    ns_cli_tmp.dir_prefix = strdup(prefix);
}

void ns_cli_show_line(void *user, const char *text)
{
    ns_cli_show *s = user;
    if (s->live_open) {
        fputc('\n', stderr);
        s->live_open = 0;
    }
    fprintf(stderr, "%s\n", text);
}

void ns_cli_show_progress(void *user, const char *line, int live)
{
    ns_cli_show *s = user;
    if (live) {
        fprintf(stderr, "\r%s: %s\033[K", s->prefix, line);
        s->live_open = 1;
    } else {
        fprintf(stderr, "%s: %s\n", s->prefix, line);
    }
    fflush(stderr);
}

/* Append one shell-quoted word to s (capacity cap). */
static void quote_word(char *s, size_t cap, const char *a)
{
    size_t n = strlen(s);
    const char *sep = n ? " " : "";
    int plain = *a != 0 && strspn(a, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
                                     "0123456789-_./=:,+@%") == strlen(a);
    if (plain) {
        snprintf(s + n, cap - n, "%s%s", sep, a);
        return;
    }
    n += (size_t)snprintf(s + n, cap - n, "%s'", sep);
    for (; *a && n + 5 < cap; a++)
        n += (size_t)(*a == '\'' ? snprintf(s + n, cap - n, "'\\''")
                                 : snprintf(s + n, cap - n, "%c", *a));
    snprintf(s + n, cap - n, "'");
}

/* The words of /proc/PID/cmdline (pid 0: this process), as NUL-separated text in *text (caller
 * frees) with *len bytes; 0 when it cannot be read (not Linux, a process gone). */
static int proc_cmdline(long pid, char **text, size_t *len)
{
    char path[64];
    if (pid)
        snprintf(path, sizeof path, "/proc/%ld/cmdline", pid);
    else
        snprintf(path, sizeof path, "/proc/self/cmdline");
    FILE *f = fopen(path, "rb");
    *text = NULL;
    *len = 0;
    if (!f)
        return 0;
    size_t cap = 0;
    for (;;) {
        if (*len + 4096 + 1 > cap) {
            char *t = realloc(*text, cap = cap * 2 + 4096 + 1);
            if (!t)
                break;
            *text = t;
        }
        size_t r = fread(*text + *len, 1, 4096, f);
        *len += r;
        if (r < 4096)
            break;
    }
    fclose(f);
    if (*text)
        (*text)[*len] = 0;
    return *text && *len > 0;
}

/* The parent of process pid (/proc/PID/stat's fourth field), 0 when unknown. */
static long parent_of(long pid)
{
    char path[64], buf[1024];
    snprintf(path, sizeof path, "/proc/%ld/stat", pid);
    FILE *f = fopen(path, "r");
    size_t n = f ? fread(buf, 1, sizeof buf - 1, f) : 0;
    if (f)
        fclose(f);
    buf[n] = 0;
    const char *p = strrchr(buf, ')'); /* after the command name, which may hold anything */
    long ppid = 0;
    char state;
    if (!p || sscanf(p + 1, " %c %ld", &state, &ppid) != 2)
        return 0;
    return ppid;
}

static const char *base_name(const char *p)
{
    const char *s = strrchr(p, '/');
    return s ? s + 1 : p;
}

/* Whether a program (its argv[0]) launches MPI jobs. */
static int is_launcher(const char *argv0)
{
    static const char *const names[] = {"mpirun", "mpiexec", "orterun", "prterun", "prun",
                                        "mpiexec.hydra", "mpiexec.mpich", "mpirun.mpich",
                                        "mpiexec.openmpi", "mpirun.openmpi", "srun", NULL};
    const char *b = base_name(argv0);
    for (size_t i = 0; names[i]; i++)
        if (strcmp(b, names[i]) == 0)
            return 1;
    return 0;
}

/* words (NUL-separated, len bytes) as one shell command, each word quoted as needed. */
static char *join_words(const char *words, size_t len, const char *prefix)
{
    size_t cap = strlen(prefix) + 4 * len + 16;
    char *s = malloc(cap);
    if (!s)
        return NULL;
    snprintf(s, cap, "%s", prefix);
    for (const char *w = words; w < words + len; w += strlen(w) + 1)
        quote_word(s, cap, w);
    return s;
}

/* The launcher that started this process, when it runs beside it (Open MPI's mpirun is the
 * parent of its local ranks, MPICH's mpiexec the grandparent, through hydra_pmi_proxy) and its
 * command names this program as typed (self, the first word of this process's command line):
 * its whole command line. NULL otherwise. */
static char *launcher_line(const char *self)
{
    long pid = parent_of((long)getpid());
    for (int up = 0; pid > 1 && up < 3; up++, pid = parent_of(pid)) {
        char *words;
        size_t len;
        if (!proc_cmdline(pid, &words, &len))
            return NULL;
        int found = 0;
        if (is_launcher(words))
            for (const char *w = words; w < words + len && !found; w += strlen(w) + 1)
                found = strcmp(w, self) == 0;
        char *line = found ? join_words(words, len, "") : NULL;
        free(words);
        if (line || found)
            return line;
    }
    return NULL;
}

char *ns_cli_command_line(int argc, char **argv, int size)
{
    char *words = NULL, *line = NULL;
    size_t len = 0;
    int mine = proc_cmdline(0, &words, &len); /* argv as typed: the program's path included */
    if (mine && (line = launcher_line(words)) != NULL) {
        free(words);
        return line;
    }
    char prefix[128];
    if (getenv("SLURM_JOB_ID") && getenv("SLURM_STEP_ID"))
        snprintf(prefix, sizeof prefix, "srun -n %d", size);
    else if (size > 1 || getenv("OMPI_COMM_WORLD_SIZE") || getenv("PMI_SIZE"))
        snprintf(prefix, sizeof prefix, "mpirun -np %d", size);
    else
        prefix[0] = 0;
    if (mine) {
        line = join_words(words, len, prefix);
        free(words);
        return line;
    }
    free(words);
    size_t cap = sizeof prefix + 32;
    for (int i = 0; i < argc; i++)
        cap += 3 + 4 * strlen(argv[i]);
    if (!(line = malloc(cap)))
        return NULL;
    snprintf(line, cap, "%s%snormsweep", prefix, prefix[0] ? " " : "");
    for (int i = 0; i < argc; i++)
        quote_word(line, cap, argv[i]);
    return line;
}

int ns_cli_mpi_start(const char *cmd, const char *what, ns_hold *hold,
                     volatile sig_atomic_t **stop, int *rank, int *size)
{
    *stop = ns_cli_catch_stop();
    int provided = 0;
    *rank = 0;
    *size = 1;
    if (ns_hold_init(hold, cmd, *stop) != 0)
        return NS_EXIT_USAGE;
    ns_hold_at(hold, "mpi-init", 0);
    if (MPI_Init_thread(NULL, NULL, MPI_THREAD_FUNNELED, &provided) != MPI_SUCCESS) {
        if (**stop)
            fprintf(stderr, "normsweep %s: interrupted before the %s started; nothing was "
                    "written\n", cmd, what);
        else
            fprintf(stderr, "normsweep %s: MPI_Init failed\n", cmd);
        return **stop ? NS_EXIT_INTERRUPTED : NS_EXIT_FAILURE;
    }
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    MPI_Comm_rank(MPI_COMM_WORLD, rank);
    MPI_Comm_size(MPI_COMM_WORLD, size);
    hold->rank = *rank;
    ns_blas_single_thread();
    return NS_EXIT_OK;
}

/* ns_sweep_run: MPI master/worker sweep with journal, progress and NetCDF output (see header). */
#include "config.h"

#include "sweep/ns_sweep_run.h"

#include <cblas.h>
#include <errno.h>
#include <libgen.h>
#include <math.h>
#include <mpi.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "common/ns_file.h"
#include "common/ns_sha256.h"
#include "model/ns_gpt2.h"
#include "model/ns_gpt2_internal.h" /* the model's mapping (map.fd), for its file identity */
#include "corpus/ns_corpus.h"
#include "sweep/ns_journal.h"
#include "sweep/ns_progress.h"
#include "sweep/ns_results.h"
#include "sweep/ns_sweep_yaml.h"
#include "sweep/ns_task.h"

/* The one piece of process-global state: set by the SIGTERM/SIGINT handler, read by the loops.
 * A signal handler cannot reach anything else. */
static volatile sig_atomic_t ns_sweep_stop_signal;

static void on_signal(int sig)
{
    ns_sweep_stop_signal = sig;
}

enum {
    TAG_READY = 1,   /* worker -> master: ready for a first task (no data) */
    TAG_RESULT = 2,  /* worker -> master: doubles [task, seconds, payload...] */
    TAG_ABANDON = 3, /* worker -> master: doubles [task, 0]: stopped before finishing */
    TAG_FAIL = 4,    /* worker -> master: chars: an error message */
    TAG_TASK = 10,   /* master -> worker: int64 task */
    TAG_STOP = 11,   /* master -> worker: no more tasks, leave the loop */
    TAG_ABORT = 12   /* master -> worker: abandon the current task (interrupt or failure) */
};

#define WORKER_DRAIN_TIMEOUT 30.0 /* seconds the master waits for workers to report when stopping */

/* Everything every rank shares about the sweep. */
typedef struct sweep_ctx {
    int rank, size;
    ns_sweep_config cfg;
    int have_cfg;
    ns_gpt2_config mc;
    ns_task_plan plan;
    int have_plan;
    ns_gpt2_model *model;
    ns_task_runner *runner;
    int32_t *tokens;          /* (shard_count, L_fwd) */
    double *buf;              /* 2 + payload doubles: this rank's task output (+ message head) */
    double *rbuf;             /* rank 0: 2 + payload doubles: workers' results being received
                                 (separate: the master services workers during its own task) */
    /* rank 0 only */
    ns_sweep_inputs in;
    int have_in;
    size_t corpus_tokens;
    int unresponsive;         /* a worker did not answer: MPI cannot be shut down cleanly */
} sweep_ctx;

/* ---- small helpers ------------------------------------------------------------------------ */

static void iso_now(char *buf, size_t size)
{
    time_t t = time(NULL);
    struct tm tm;
    gmtime_r(&t, &tm);
    strftime(buf, size, "%Y-%m-%dT%H:%M:%SZ", &tm);
}

static int mpi_fail(ns_err *err, int code, const char *what)
{
    char s[MPI_MAX_ERROR_STRING];
    int len = 0;
    MPI_Error_string(code, s, &len);
    return ns_fail(err, NS_ERR_LIBRARY, "MPI %s: %s", what, s);
}

#define MPI_TRY(call, what)                                  \
    do {                                                     \
        int mpi_rc_ = (call);                                \
        if (mpi_rc_ != MPI_SUCCESS)                          \
            return mpi_fail(err, mpi_rc_, what);             \
    } while (0)

static int set_str(char **dst, const char *src, ns_err *err)
{
    char *c = strdup(src);
    if (!c)
        return ns_fail(err, NS_ERR_NOMEM, "out of memory");
    free(*dst);
    *dst = c;
    return NS_OK;
}

/* Broadcast a string from rank 0 (NULL allowed) into a fresh copy on every rank. */
static int bcast_str(sweep_ctx *c, const char *in, char **out, ns_err *err)
{
    long long len = c->rank == 0 ? (in ? (long long)strlen(in) : -1) : 0;
    MPI_TRY(MPI_Bcast(&len, 1, MPI_LONG_LONG, 0, MPI_COMM_WORLD), "broadcast");
    *out = NULL;
    if (len < 0)
        return NS_OK;
    char *s = malloc((size_t)len + 1);
    if (!s)
        return ns_fail(err, NS_ERR_NOMEM, "out of memory");
    if (c->rank == 0)
        memcpy(s, in, (size_t)len);
    s[len] = 0;
    if (len > INT32_MAX) {
        free(s);
        return ns_fail(err, NS_ERR_INVALID, "sweep text too large");
    }
    int rc = MPI_Bcast(s, (int)len, MPI_CHAR, 0, MPI_COMM_WORLD);
    if (rc != MPI_SUCCESS) {
        free(s);
        return mpi_fail(err, rc, "broadcast");
    }
    *out = s;
    return NS_OK;
}

/* ---- rank 0: read, validate, resolve ------------------------------------------------------- */

/* Directories this run created (so a setup failure can remove exactly those, and nothing else). */
typedef struct created_dirs {
    char **paths;
    size_t n, cap;
} created_dirs;

/* Remove the directories that were created, deepest first (rmdir: only while they are empty). */
static void created_dirs_undo(created_dirs *cd)
{
    while (cd->n > 0) {
        cd->n--;
        rmdir(cd->paths[cd->n]);
        free(cd->paths[cd->n]);
    }
    free(cd->paths);
    memset(cd, 0, sizeof *cd);
}

/* Forget the list (the directories stay). */
static void created_dirs_keep(created_dirs *cd)
{
    for (size_t i = 0; i < cd->n; i++)
        free(cd->paths[i]);
    free(cd->paths);
    memset(cd, 0, sizeof *cd);
}

/* ns_file_mkdirs (same messages), recording in cd every directory that mkdir really created. */
static int mkdirs_tracked(const char *path, created_dirs *cd, ns_err *err)
{
    char *copy = strdup(path);
    if (!copy)
        return ns_fail(err, NS_ERR_NOMEM, "out of memory");
    int rc = NS_OK;
    size_t n = strlen(copy);
    for (size_t i = 1; i <= n && rc == NS_OK; i++) {
        if (copy[i] != '/' && copy[i] != '\0')
            continue;
        char saved = copy[i];
        copy[i] = '\0';
        if (mkdir(copy, 0755) == 0) {
            if (cd->n == cd->cap) {
                size_t cap = cd->cap ? 2 * cd->cap : 8;
                char **p = realloc(cd->paths, cap * sizeof *p);
                if (!p) {
                    rmdir(copy);
                    rc = ns_fail(err, NS_ERR_NOMEM, "out of memory");
                    break;
                }
                cd->paths = p;
                cd->cap = cap;
            }
            if (!(cd->paths[cd->n] = strdup(copy))) {
                rmdir(copy);
                rc = ns_fail(err, NS_ERR_NOMEM, "out of memory");
                break;
            }
            cd->n++;
        } else if (errno != EEXIST) {
            rc = ns_fail(err, NS_ERR_IO, "mkdir %s: %s", copy, strerror(errno));
        }
        copy[i] = saved;
    }
    free(copy);
    struct stat st;
    if (rc == NS_OK && (stat(path, &st) != 0 || !S_ISDIR(st.st_mode)))
        rc = ns_fail(err, NS_ERR_IO, "%s: exists and is not a directory", path);
    return rc;
}

/* Create the output's directory if needed (only once the sweep is valid and every rank has its
 * model) and check that it is writable. Failures are input errors (exit 2). */
static int make_output_dir(const char *path, created_dirs *cd, ns_err *err)
{
    char *copy = strdup(path);
    if (!copy)
        return ns_fail(err, NS_ERR_NOMEM, "out of memory");
    const char *dir = dirname(copy);
    int rc = mkdirs_tracked(dir, cd, err);
    if (rc == NS_ERR_NOMEM) {
        /* as is */
    } else if (rc != NS_OK) {
        char why[NS_ERR_MSG_MAX]; /* err->msg cannot be an argument of ns_fail into err */
        snprintf(why, sizeof why, "%s", err->msg);
        rc = ns_fail(err, NS_ERR_INVALID, "output %s: cannot create directory %s (%s)", path, dir,
                     why);
    } else if (access(dir, W_OK | X_OK) != 0) {
        rc = ns_fail(err, NS_ERR_INVALID, "output %s: directory %s is not writable: %s", path, dir,
                     strerror(errno));
    }
    free(copy);
    return rc;
}

static int prepare_root(sweep_ctx *c, const ns_sweep_options *opt, ns_err *err)
{
    ns_sweep_diags diags = {0};
    ns_sweep_marks marks;
    memset(&marks, 0, sizeof marks);
    memset(&c->in, 0, sizeof c->in);
    c->have_cfg = c->have_in = 1;
    int rc = ns_sweep_load(opt->sweep_path, 1, 0, &c->cfg, &marks, &c->in, &diags, err);
    ns_sweep_diags_sort(&diags);
    for (size_t i = 0; i < diags.n; i++)
        fprintf(stderr, "%s\n", diags.items[i].text);
    ns_sweep_diags_free(&diags);
    ns_sweep_marks_free(&marks);
    if (rc == NS_ERR_IO)
        rc = err->code = NS_ERR_INVALID; /* an unreadable sweep file is invalid input (exit 2) */
    if (rc != NS_OK)
        return rc;
    if (!c->in.have_model || !c->in.have_corpus)
        return ns_fail(err, NS_ERR_INVALID, "sweep: model or corpus could not be resolved");
    if (opt->output)
        NS_TRY(set_str(&c->cfg.output, opt->output, err));
    if (!c->cfg.output || !*c->cfg.output)
        NS_TRY(set_str(&c->cfg.output, "normsweep.nc", err));
    if (opt->checkpoint_dir)
        NS_TRY(set_str(&c->cfg.checkpoint_dir, opt->checkpoint_dir, err));
    if (!c->cfg.checkpoint_dir || !*c->cfg.checkpoint_dir) {
        size_t n = strlen(c->cfg.output) + 8;
        char *d = malloc(n);
        if (!d)
            return ns_fail(err, NS_ERR_NOMEM, "out of memory");
        snprintf(d, n, "%s.ckpt", c->cfg.output);
        free(c->cfg.checkpoint_dir);
        c->cfg.checkpoint_dir = d;
    }
    c->mc = c->in.model_cfg;
    c->corpus_tokens = c->in.corpus.tokens.n;
    return NS_OK;
}

/* Cut the shards' first L_fwd tokens out of the corpus (rank 0). */
static int cut_tokens(sweep_ctx *c, ns_err *err)
{
    const ns_sweep_config *cfg = &c->cfg;
    size_t Lf = c->plan.L_fwd;
    c->tokens = malloc(cfg->shard_count * Lf * sizeof *c->tokens + 1);
    if (!c->tokens)
        return ns_fail(err, NS_ERR_NOMEM, "out of memory (%zu shards)", cfg->shard_count);
    for (size_t k = 0; k < cfg->shard_count; k++) {
        const int32_t *ids;
        NS_TRY(ns_corpus_shard(&c->in.corpus, cfg->L_max, cfg->shard_first, cfg->shard_stride, k,
                               &ids, err));
        memcpy(c->tokens + k * Lf, ids, Lf * sizeof *ids);
    }
    return NS_OK;
}

/* The journal's identity of this sweep (ns_journal_sweep_hash). */
static int sweep_hash(const sweep_ctx *c, char hex[NS_SHA256_HEX_LEN + 1], ns_err *err)
{
    const ns_sweep_inputs *in = &c->in;
    return ns_journal_sweep_hash(c->cfg.yaml_text, in->model_ref.sha256, in->tokenizer_ref.sha256,
                                 in->corpus_ref.sha256, c->plan.payload, hex, err);
}

/* ---- the model file's identity ------------------------------------------------------------- */

/* Which file a rank mapped: rank 0 broadcasts its own, every other rank compares (so the weights
 * used are the ones whose SHA-256 the output and the journal record). */
typedef struct model_ident {
    long long dev, ino, size, mtime_s, mtime_ns;
    char host[MPI_MAX_PROCESSOR_NAME + 1];
} model_ident;

static int mapped_ident(const ns_gpt2_model *m, const char *dir, model_ident *id, ns_err *err)
{
    struct stat st;
    memset(id, 0, sizeof *id);
    if (fstat(m->map.fd, &st) != 0)
        return ns_fail(err, NS_ERR_IO, "%s/model.safetensors: cannot stat the mapped file: %s", dir,
                       strerror(errno));
    id->dev = (long long)st.st_dev;
    id->ino = (long long)st.st_ino;
    id->size = (long long)st.st_size;
    id->mtime_s = (long long)st.st_mtim.tv_sec;
    id->mtime_ns = (long long)st.st_mtim.tv_nsec;
    int len = 0;
    if (MPI_Get_processor_name(id->host, &len) != MPI_SUCCESS)
        id->host[0] = '\0';
    return NS_OK;
}

/* Rank 0: load (and so fully validate) the model before anything is written, and check that the
 * bytes it mapped are the ones validation hashed: a model.safetensors replaced in between would
 * otherwise be used under the old checksum. */
static int load_model_root(sweep_ctx *c, model_ident *id, ns_err *err)
{
    const ns_asset_ref *ref = &c->in.model_ref;
    NS_TRY(ns_gpt2_load(ref->path, &c->model, err));
    char hex[NS_SHA256_HEX_LEN + 1];
    NS_TRY(ns_sha256_buffer(c->model->map.data, c->model->map.size, hex, err));
    if (strcmp(hex, ref->sha256) != 0)
        return ns_fail(err, NS_ERR_IO,
                       "%s/model.safetensors changed during start-up (sha256 %.12s... when "
                       "checked, %.12s... when loaded); nothing was written: run again",
                       ref->path, ref->sha256, hex);
    return mapped_ident(c->model, ref->path, id, err);
}

/* Other ranks: the file mapped must be rank 0's (device and inode on rank 0's node; size and
 * modification time everywhere, as inode numbers of a shared file system may differ by node). */
static int check_ident(const sweep_ctx *c, const char *dir, const model_ident *root, ns_err *err)
{
    model_ident mine;
    NS_TRY(mapped_ident(c->model, dir, &mine, err));
    int same_node = root->host[0] && strcmp(root->host, mine.host) == 0;
    if (mine.size != root->size || mine.mtime_s != root->mtime_s ||
        mine.mtime_ns != root->mtime_ns ||
        (same_node && (mine.dev != root->dev || mine.ino != root->ino)))
        return ns_fail(err, NS_ERR_IO,
                       "%s/model.safetensors changed during start-up (rank %d mapped another file "
                       "than rank 0 checked); nothing was written: run again",
                       dir, c->rank);
    return NS_OK;
}

/* ---- rank 0: create the output directory and open the journal ------------------------------ */

/* Last step before the sweep: nothing is written before every rank has its model. An existing
 * journal is checked (refused without --resume, or when it is another sweep's) before anything is
 * created; on a failure whatever this created (directories, a new journal) is removed again. */
static int open_outputs(sweep_ctx *c, const ns_sweep_options *opt, void *pre,
                        ns_journal_record_fn fn, ns_journal **journal, ns_err *err)
{
    char hex[NS_SHA256_HEX_LEN + 1];
    size_t torn = 0;
    created_dirs cd = {0};
    char *jpath = NULL;
    int had_journal = 1;
    size_t rec = c->plan.payload * sizeof(double);
    int rc = sweep_hash(c, hex, err);
    if (rc == NS_OK && ns_sweep_stop_signal)
        rc = ns_fail(err, NS_ERR_INTERRUPTED,
                     "interrupted before the sweep started; nothing was written");
    if (rc == NS_OK) {
        if (!(jpath = ns_path_join(c->cfg.checkpoint_dir, NS_JOURNAL_FILE)))
            rc = ns_fail(err, NS_ERR_NOMEM, "out of memory");
        else
            had_journal = ns_file_exists(jpath);
    }
    if (rc == NS_OK && had_journal) /* only reads it (and cuts off a torn last record) */
        rc = ns_journal_open(c->cfg.checkpoint_dir, hex, rec, opt->resume, fn, pre, journal,
                             &torn, err);
    if (rc == NS_OK)
        rc = make_output_dir(c->cfg.output, &cd, err);
    if (rc == NS_OK && !had_journal) {
        rc = mkdirs_tracked(c->cfg.checkpoint_dir, &cd, err);
        if (rc == NS_OK)
            rc = ns_journal_open(c->cfg.checkpoint_dir, hex, rec, opt->resume, fn, pre, journal,
                                 &torn, err);
    }
    if (rc == NS_ERR_IO)
        rc = err->code = NS_ERR_INVALID; /* an unusable --checkpoint-dir: input (exit 2) */
    if (rc != NS_OK) {
        ns_journal_close(*journal);
        *journal = NULL;
        if (jpath && !had_journal)
            unlink(jpath); /* a journal this run started (e.g. a failed header write) */
        created_dirs_undo(&cd);
    } else {
        created_dirs_keep(&cd);
        if (torn)
            fprintf(stderr, "normsweep: ignored a torn record at the end of %s\n",
                    ns_journal_path(*journal));
    }
    free(jpath);
    return rc;
}

/* ---- master ------------------------------------------------------------------------------- */

typedef struct master {
    sweep_ctx *c;
    ns_results res;
    ns_journal *journal;
    ns_progress prog;
    uint64_t *queue;
    size_t nqueue, next;
    int *stopped;           /* per rank (0 unused) */
    long long *busy;        /* per rank: task in progress or -1 */
    int nstopped;
    int interrupted, failed;
    ns_err fail_err;
    size_t from_journal;
    char *stop_file;        /* CHECKPOINT_DIR/STOP: its appearance asks for a checkpointed stop */
    double last_stop_check;
    /* timing */
    double master_seconds, service_seconds, worker_seconds;
    size_t master_tasks, worker_tasks;
} master;

static int journal_record(void *user, uint64_t task, const void *payload, size_t len,
                          uint64_t offset, ns_err *err)
{
    master *m = user;
    if (task >= m->res.n_shards)
        return NS_OK; /* cannot happen for a journal of this sweep; ignore defensively */
    if (ns_results_has(&m->res, task))
        return NS_OK;
    NS_TRY(ns_results_set(&m->res, task, offset, err));
    m->from_journal++;
    return NS_OK;
}

static int record_result(master *m, uint64_t task, const double *payload, ns_err *err)
{
    if (task >= m->res.n_shards)
        return ns_fail(err, NS_ERR_INVALID, "result for unknown task %llu",
                       (unsigned long long)task);
    uint64_t offset = NS_RESULTS_MISSING;
    if (!ns_results_has(&m->res, task))
        NS_TRY(ns_journal_append(m->journal, task, payload, &offset, err));
    NS_TRY(ns_results_set(&m->res, task, offset, err));
    ns_progress_update(&m->prog, m->res.n_done);
    return NS_OK;
}

static void master_set_failed(master *m, const ns_err *e)
{
    if (!m->failed) {
        m->failed = 1;
        m->fail_err = *e;
    }
}

/* Reply to a worker that just reported: a new task, or STOP. */
static int reply(master *m, int w, ns_err *err)
{
    if (!m->interrupted && !m->failed && m->next < m->nqueue) {
        long long t = (long long)m->queue[m->next++];
        m->busy[w] = t;
        MPI_TRY(MPI_Send(&t, 1, MPI_LONG_LONG, w, TAG_TASK, MPI_COMM_WORLD), "send task");
        return NS_OK;
    }
    m->busy[w] = -1;
    MPI_TRY(MPI_Send(NULL, 0, MPI_BYTE, w, TAG_STOP, MPI_COMM_WORLD), "send stop");
    m->stopped[w] = 1;
    m->nstopped++;
    return NS_OK;
}

/* Handle every pending worker message (non-blocking). Returns MPI / journal errors. */
static int service(master *m, ns_err *err)
{
    sweep_ctx *c = m->c;
    double t0 = ns_progress_now();
    if (ns_sweep_stop_signal)
        m->interrupted = 1;
    /* Batch scripts (slurm/full_grid.sh) also ask for a stop through a file, which works
     * whatever the launcher does with signals; looked for at most once a second. */
    if (!m->interrupted && m->stop_file && t0 - m->last_stop_check >= 1.0) {
        m->last_stop_check = t0;
        if (access(m->stop_file, F_OK) == 0) {
            fprintf(stderr, "normsweep: %s exists: checkpointing and stopping\n", m->stop_file);
            m->interrupted = 1;
        }
    }
    for (;;) {
        int flag = 0;
        MPI_Status st;
        MPI_TRY(MPI_Iprobe(MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &flag, &st), "probe");
        if (!flag)
            break;
        int w = st.MPI_SOURCE;
        int count = 0;
        switch (st.MPI_TAG) {
        case TAG_READY:
            MPI_TRY(MPI_Recv(NULL, 0, MPI_BYTE, w, TAG_READY, MPI_COMM_WORLD, MPI_STATUS_IGNORE),
                    "receive");
            break;
        case TAG_RESULT: {
            MPI_TRY(MPI_Recv(c->rbuf, (int)(2 + c->plan.payload), MPI_DOUBLE, w, TAG_RESULT,
                             MPI_COMM_WORLD, MPI_STATUS_IGNORE), "receive result");
            ns_err e;
            ns_err_clear(&e);
            if (record_result(m, (uint64_t)c->rbuf[0], c->rbuf + 2, &e) != NS_OK)
                master_set_failed(m, &e);
            m->worker_seconds += c->rbuf[1];
            m->worker_tasks++;
            break;
        }
        case TAG_ABANDON: {
            double d[2];
            MPI_TRY(MPI_Recv(d, 2, MPI_DOUBLE, w, TAG_ABANDON, MPI_COMM_WORLD, MPI_STATUS_IGNORE),
                    "receive");
            m->interrupted = 1; /* a worker was told to stop (signal): the whole sweep stops */
            break;
        }
        case TAG_FAIL: {
            char msg[NS_ERR_MSG_MAX];
            MPI_Get_count(&st, MPI_CHAR, &count);
            if (count < 0 || count >= (int)sizeof msg)
                count = (int)sizeof msg - 1;
            MPI_TRY(MPI_Recv(msg, (int)sizeof msg, MPI_CHAR, w, TAG_FAIL, MPI_COMM_WORLD,
                             MPI_STATUS_IGNORE), "receive");
            msg[count] = 0;
            ns_err e;
            ns_fail(&e, NS_ERR_IO, "rank %d: %s", w, msg);
            master_set_failed(m, &e);
            break;
        }
        default: {
            /* Unknown tag: consume it so the loop cannot spin. */
            MPI_Get_count(&st, MPI_BYTE, &count);
            char *junk = malloc(count > 0 ? (size_t)count : 1);
            if (!junk)
                return ns_fail(err, NS_ERR_NOMEM, "out of memory");
            MPI_Recv(junk, count, MPI_BYTE, w, st.MPI_TAG, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            free(junk);
            continue;
        }
        }
        NS_TRY(reply(m, w, err));
    }
    m->service_seconds += ns_progress_now() - t0;
    return NS_OK;
}

/* The master's own task polls here: between heads and layers it services the workers. */
static int master_poll(void *user, ns_err *err)
{
    master *m = user;
    NS_TRY(service(m, err));
    if (m->interrupted || m->failed)
        return ns_fail(err, NS_ERR_INTERRUPTED, "stopped");
    return NS_OK;
}

/* Run the master with m->res already holding the journal's results and m->journal open; m's
 * resources are released here. */
static int master_run(sweep_ctx *c, const ns_sweep_options *opt, const char *start_time,
                      master *mp, ns_err *err)
{
    int rc = NS_OK;
    master m = *mp;
    m.c = c;
    size_t nshard = c->cfg.shard_count;
    int nworkers = c->size - 1;
    double t_begin = ns_progress_now();
    m.queue = malloc((nshard + 1) * sizeof *m.queue);
    m.stopped = calloc((size_t)c->size, sizeof *m.stopped);
    m.busy = malloc((size_t)c->size * sizeof *m.busy);
    if (!m.queue || !m.stopped || !m.busy) {
        rc = ns_fail(err, NS_ERR_NOMEM, "out of memory");
        goto done;
    }
    for (int w = 0; w < c->size; w++)
        m.busy[w] = -1;
    m.stop_file = ns_path_join(c->cfg.checkpoint_dir, "STOP");
    if (!m.stop_file) {
        rc = ns_fail(err, NS_ERR_NOMEM, "out of memory");
        goto done;
    }

    m.res.journal = m.journal;
    for (size_t k = 0; k < nshard; k++)
        if (!ns_results_has(&m.res, k))
            m.queue[m.nqueue++] = k;
    ns_progress_init(&m.prog, stderr, nshard, m.res.n_done);
    fprintf(stderr, "normsweep: %zu tasks (one per shard; %zu already in the journal), %d rank%s, "
            "master pid %ld, journal %s\n", nshard, m.res.n_done, c->size,
            c->size == 1 ? "" : "s", (long)getpid(), ns_journal_path(m.journal));

    while (!m.interrupted && !m.failed) {
        if ((rc = service(&m, err)) != NS_OK)
            goto done;
        if (m.interrupted || m.failed)
            break;
        if (m.next < m.nqueue) {
            uint64_t t = m.queue[m.next++];
            double t0 = ns_progress_now(), s0 = m.service_seconds;
            ns_err e;
            ns_err_clear(&e);
            int trc = ns_task_run(c->runner, t, c->tokens + t * c->plan.L_fwd, master_poll, &m,
                                  c->buf + 2, &e);
            if (trc == NS_ERR_INTERRUPTED)
                break;
            if (trc != NS_OK) {
                master_set_failed(&m, &e);
                break;
            }
            m.master_seconds += (ns_progress_now() - t0) - (m.service_seconds - s0);
            m.master_tasks++;
            if (record_result(&m, t, c->buf + 2, &e) != NS_OK)
                master_set_failed(&m, &e);
        } else if (m.nstopped < nworkers) {
            struct timespec ts = {0, 200000}; /* 0.2 ms: idle master waiting for workers */
            nanosleep(&ts, NULL);
        } else {
            break;
        }
    }

    /* Stop the workers: abort running tasks when interrupted or failed, then drain reports. */
    if (m.interrupted || m.failed)
        for (int w = 1; w < c->size; w++)
            if (!m.stopped[w] && m.busy[w] >= 0)
                MPI_Send(NULL, 0, MPI_BYTE, w, TAG_ABORT, MPI_COMM_WORLD);
    double t_drain = ns_progress_now();
    while (m.nstopped < nworkers) {
        if ((rc = service(&m, err)) != NS_OK)
            goto done;
        if ((m.interrupted || m.failed) && ns_progress_now() - t_drain > WORKER_DRAIN_TIMEOUT) {
            rc = ns_fail(err, NS_ERR_INTERRUPTED, "%d worker(s) did not report within %.0f s; "
                         "%zu of %zu tasks saved in %s; continue with --resume",
                         nworkers - m.nstopped, WORKER_DRAIN_TIMEOUT, m.res.n_done, nshard,
                         ns_journal_path(m.journal));
            c->unresponsive = 1;
            goto done;
        }
        struct timespec ts = {0, 200000};
        nanosleep(&ts, NULL);
    }
    ns_progress_finish(&m.prog, NULL);

    double wall = ns_progress_now() - t_begin;
    fprintf(stderr,
            "normsweep: master computed %zu task(s), %.3f s per task (own compute; %.3f s spent "
            "servicing workers); workers computed %zu task(s), %.3f s per task; wall %.2f s\n",
            m.master_tasks, m.master_tasks ? m.master_seconds / (double)m.master_tasks : 0.0,
            m.service_seconds, m.worker_tasks,
            m.worker_tasks ? m.worker_seconds / (double)m.worker_tasks : 0.0, wall);
    fprintf(stderr, "master_seconds_per_task: %.6f\nsweep_wall_seconds: %.6f\n",
            m.master_tasks ? m.master_seconds / (double)m.master_tasks : 0.0, wall);

    if (m.failed) {
        *err = m.fail_err;
        rc = m.fail_err.code ? m.fail_err.code : NS_ERR_IO;
        if (rc == NS_ERR_INVALID || rc == NS_ERR_FORMAT || rc == NS_ERR_CHECKSUM)
            rc = NS_ERR_IO; /* found mid-run: a runtime failure, not an input error (exit 1) */
        err->code = rc;
        goto done;
    }
    if (m.interrupted || m.res.n_done < nshard) {
        rc = ns_fail(err, NS_ERR_INTERRUPTED,
                     "interrupted: %zu of %zu tasks saved in %s; continue with --resume",
                     m.res.n_done, nshard, ns_journal_path(m.journal));
        goto done;
    }
    char end_time[32];
    iso_now(end_time, sizeof end_time);
    ns_results_provenance prov = {
        .command_line = opt->command_line,
        .start_time = start_time,
        .end_time = end_time,
        .model = &c->in.model_ref,
        .tokenizer = &c->in.tokenizer_ref,
        .corpus = &c->in.corpus_ref,
        .mpi_size = c->size,
        .blas = openblas_get_config(),
        .corpus_tokens = c->corpus_tokens,
    };
    if ((rc = ns_results_write(&m.res, &c->cfg, &prov, err)) != NS_OK)
        goto done;
    fprintf(stderr, "normsweep: wrote %s\n", c->cfg.output);
done:
    ns_journal_close(m.journal);
    ns_results_free(&m.res);
    free(m.queue);
    free(m.stopped);
    free(m.busy);
    free(m.stop_file);
    return rc;
}

/* ---- worker ------------------------------------------------------------------------------- */

static int worker_poll(void *user, ns_err *err)
{
    (void)user;
    if (ns_sweep_stop_signal)
        return ns_fail(err, NS_ERR_INTERRUPTED, "stopped by signal");
    int flag = 0;
    if (MPI_Iprobe(0, TAG_ABORT, MPI_COMM_WORLD, &flag, MPI_STATUS_IGNORE) != MPI_SUCCESS)
        return ns_fail(err, NS_ERR_LIBRARY, "MPI probe failed");
    if (flag) {
        MPI_Recv(NULL, 0, MPI_BYTE, 0, TAG_ABORT, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        return ns_fail(err, NS_ERR_INTERRUPTED, "stopped by the master");
    }
    return NS_OK;
}

static int worker_run(sweep_ctx *c, ns_err *err)
{
    MPI_TRY(MPI_Send(NULL, 0, MPI_BYTE, 0, TAG_READY, MPI_COMM_WORLD), "send");
    for (;;) {
        MPI_Status st;
        MPI_TRY(MPI_Probe(0, MPI_ANY_TAG, MPI_COMM_WORLD, &st), "probe");
        if (st.MPI_TAG == TAG_STOP) {
            MPI_TRY(MPI_Recv(NULL, 0, MPI_BYTE, 0, TAG_STOP, MPI_COMM_WORLD, MPI_STATUS_IGNORE),
                    "receive");
            return NS_OK;
        }
        if (st.MPI_TAG == TAG_ABORT) {
            MPI_TRY(MPI_Recv(NULL, 0, MPI_BYTE, 0, TAG_ABORT, MPI_COMM_WORLD, MPI_STATUS_IGNORE),
                    "receive");
            continue;
        }
        long long t;
        MPI_TRY(MPI_Recv(&t, 1, MPI_LONG_LONG, 0, TAG_TASK, MPI_COMM_WORLD, MPI_STATUS_IGNORE),
                "receive task");
        double t0 = ns_progress_now();
        ns_err e;
        ns_err_clear(&e);
        int rc = ns_task_run(c->runner, (uint64_t)t, c->tokens + (size_t)t * c->plan.L_fwd,
                             worker_poll, c, c->buf + 2, &e);
        if (rc == NS_OK) {
            c->buf[0] = (double)t;
            c->buf[1] = ns_progress_now() - t0;
            MPI_TRY(MPI_Send(c->buf, (int)(2 + c->plan.payload), MPI_DOUBLE, 0, TAG_RESULT,
                             MPI_COMM_WORLD), "send result");
        } else if (rc == NS_ERR_INTERRUPTED) {
            double d[2] = {(double)t, 0};
            MPI_TRY(MPI_Send(d, 2, MPI_DOUBLE, 0, TAG_ABANDON, MPI_COMM_WORLD), "send");
        } else {
            MPI_TRY(MPI_Send(e.msg, (int)strlen(e.msg), MPI_CHAR, 0, TAG_FAIL, MPI_COMM_WORLD),
                    "send");
        }
    }
}

/* ---- setup shared by all ranks ------------------------------------------------------------- */

static int agree(sweep_ctx *c, int rc, ns_err *err, const char *what)
{
    int worst = rc, all = 0;
    if (MPI_Allreduce(&worst, &all, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD) != MPI_SUCCESS)
        return ns_fail(err, NS_ERR_LIBRARY, "MPI allreduce failed");
    if (all != NS_OK && rc == NS_OK)
        ns_fail(err, all, "%s failed on another rank", what);
    return all;
}

static void ctx_free(sweep_ctx *c)
{
    ns_task_runner_free(c->runner);
    ns_gpt2_free(c->model);
    if (c->have_plan)
        ns_task_plan_free(&c->plan);
    if (c->have_cfg)
        ns_sweep_config_free(&c->cfg);
    if (c->have_in)
        ns_sweep_inputs_free(&c->in);
    free(c->tokens);
    free(c->buf);
    free(c->rbuf);
}

int ns_sweep_main(const ns_sweep_options *opt, ns_sweep_outcome *out, ns_err *err)
{
    sweep_ctx c;
    memset(&c, 0, sizeof c);
    ns_err_clear(err);
    out->finalized = 1;

    /* The handlers come first: a SIGTERM during MPI_Init_thread (a fraction of a second) must
     * also stop the run cleanly (exit 3, nothing written) rather than kill it. */
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_signal;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGTERM, &sa, NULL);
    sigaction(SIGINT, &sa, NULL);
    sigaction(SIGUSR1, &sa, NULL); /* mpirun forwards SIGUSR1 to every rank; Slurm scripts use it */

    int provided = 0;
    if (MPI_Init_thread(NULL, NULL, MPI_THREAD_FUNNELED, &provided) != MPI_SUCCESS) {
        out->finalized = 0;
        if (ns_sweep_stop_signal)
            return ns_fail(err, NS_ERR_INTERRUPTED,
                           "interrupted before the sweep started; nothing was written");
        return ns_fail(err, NS_ERR_LIBRARY, "MPI_Init failed");
    }
    MPI_Comm_rank(MPI_COMM_WORLD, &c.rank);
    MPI_Comm_size(MPI_COMM_WORLD, &c.size);
    out->rank = c.rank;
    out->size = c.size;
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);

    /* One BLAS thread per rank (ranks fill the cores; also needed for bit-reproducibility),
     * unless the user chose otherwise. */
    if (!getenv("OPENBLAS_NUM_THREADS"))
        openblas_set_num_threads(1);

    char start_time[32];
    iso_now(start_time, sizeof start_time);
    int rc = NS_OK;
    ns_journal *journal = NULL;
    master *pre = NULL; /* results loaded from the journal before the go-ahead */
    model_ident ident;
    memset(&ident, 0, sizeof ident);

    /* 1. Rank 0 reads, validates, resolves and loads the model (all of it validated, and its
     *    bytes checked against the recorded checksum); everyone learns the verdict. Nothing is
     *    written before step 4. */
    if (c.rank == 0) {
        if (ns_sweep_stop_signal)
            rc = ns_fail(err, NS_ERR_INTERRUPTED,
                         "interrupted before the sweep started; nothing was written");
        if (rc == NS_OK)
            rc = prepare_root(&c, opt, err);
        if (rc == NS_OK && (rc = ns_task_plan_init(&c.plan, &c.cfg, &c.mc, err)) == NS_OK)
            c.have_plan = 1;
        if (rc == NS_OK && 2 + c.plan.payload > (size_t)INT32_MAX)
            rc = ns_fail(err, NS_ERR_INVALID, "sweep: one shard's results (%zu values) exceed "
                         "what one MPI message can carry; reduce the grid", c.plan.payload);
        if (rc == NS_OK)
            rc = cut_tokens(&c, err);
        if (rc == NS_OK) {
            pre = calloc(1, sizeof *pre);
            if (!pre)
                rc = ns_fail(err, NS_ERR_NOMEM, "out of memory");
        }
        if (rc == NS_OK)
            rc = ns_results_init(&pre->res, &c.plan, c.cfg.shard_count, err);
        if (rc == NS_OK)
            rc = load_model_root(&c, &ident, err);
    }
    int verdict = rc;
    if (MPI_Bcast(&verdict, 1, MPI_INT, 0, MPI_COMM_WORLD) != MPI_SUCCESS) {
        rc = ns_fail(err, NS_ERR_LIBRARY, "MPI broadcast failed");
        goto finish;
    }
    if (verdict != NS_OK) {
        rc = verdict;
        goto finish;
    }

    /* 2. Broadcast the sweep text, overrides, model directory, the identity of the model file
     *    rank 0 mapped and the shards' tokens. */
    char *text = NULL, *source = NULL, *output = NULL, *ckpt = NULL, *model_dir = NULL;
    if ((rc = bcast_str(&c, c.rank == 0 ? c.cfg.yaml_text : NULL, &text, err)) == NS_OK &&
        (rc = bcast_str(&c, c.rank == 0 ? c.cfg.source_path : NULL, &source, err)) == NS_OK &&
        (rc = bcast_str(&c, c.rank == 0 ? c.cfg.output : NULL, &output, err)) == NS_OK &&
        (rc = bcast_str(&c, c.rank == 0 ? c.cfg.checkpoint_dir : NULL, &ckpt, err)) == NS_OK)
        rc = bcast_str(&c, c.rank == 0 ? c.in.model_ref.path : NULL, &model_dir, err);
    if (rc == NS_OK &&
        MPI_Bcast(&ident, (int)sizeof ident, MPI_BYTE, 0, MPI_COMM_WORLD) != MPI_SUCCESS)
        rc = ns_fail(err, NS_ERR_LIBRARY, "MPI broadcast failed");
    if (rc == NS_OK && c.rank != 0) {
        ns_sweep_diags diags = {0};
        c.have_cfg = 1;
        rc = ns_sweep_parse(text, strlen(text), source ? source : "sweep", &c.cfg, NULL, &diags, err);
        ns_sweep_diags_free(&diags);
        if (rc == NS_OK)
            rc = ns_gpt2_config_read(model_dir, &c.mc, err);
        if (rc == NS_OK)
            rc = ns_sweep_expand_all(&c.cfg, c.mc.n_layer, c.mc.n_head, err);
        if (rc == NS_OK)
            rc = set_str(&c.cfg.output, output, err);
        if (rc == NS_OK)
            rc = set_str(&c.cfg.checkpoint_dir, ckpt, err);
        if (rc == NS_OK && (rc = ns_task_plan_init(&c.plan, &c.cfg, &c.mc, err)) == NS_OK)
            c.have_plan = 1;
        if (rc == NS_OK) {
            c.tokens = malloc(c.cfg.shard_count * c.plan.L_fwd * sizeof *c.tokens + 1);
            if (!c.tokens)
                rc = ns_fail(err, NS_ERR_NOMEM, "out of memory");
        }
    }
    if ((rc = agree(&c, rc, err, "sweep setup")) == NS_OK) {
        size_t n = c.cfg.shard_count * c.plan.L_fwd;
        if (n > (size_t)INT32_MAX)
            rc = ns_fail(err, NS_ERR_INVALID, "too many tokens to broadcast");
        else if (MPI_Bcast(c.tokens, (int)n, MPI_INT32_T, 0, MPI_COMM_WORLD) != MPI_SUCCESS)
            rc = ns_fail(err, NS_ERR_LIBRARY, "MPI broadcast failed");
    }
    free(text);
    free(source);
    free(output);
    free(ckpt);

    /* 3. The other ranks load the model (memory-mapped: ranks on a node share its pages) and
     *    check that they mapped rank 0's file. */
    if (rc == NS_OK) {
        if (c.rank != 0) {
            rc = ns_gpt2_load(model_dir, &c.model, err);
            if (rc == NS_OK)
                rc = check_ident(&c, model_dir, &ident, err);
        }
        if (rc == NS_OK)
            rc = ns_task_runner_new(&c.plan, c.model, &c.runner, err);
        if (rc == NS_OK) {
            c.buf = malloc((2 + c.plan.payload) * sizeof *c.buf);
            if (c.rank == 0)
                c.rbuf = malloc((2 + c.plan.payload) * sizeof *c.rbuf);
            if (!c.buf || (c.rank == 0 && !c.rbuf))
                rc = ns_fail(err, NS_ERR_NOMEM, "out of memory");
        }
        if (rc != NS_OK && c.rank != 0)
            fprintf(stderr, "normsweep run: rank %d: %s\n", c.rank, err->msg);
        rc = agree(&c, rc, err, "model load");
        if (rc == NS_ERR_INVALID || rc == NS_ERR_FORMAT || rc == NS_ERR_CHECKSUM)
            rc = NS_ERR_IO; /* rank 0 validated it: a runtime failure elsewhere (exit 1) */
    }
    free(model_dir);

    /* 4. Rank 0 creates the output directory and the journal (loading its results). */
    if (rc == NS_OK) {
        verdict = c.rank == 0 ? open_outputs(&c, opt, pre, journal_record, &journal, err) : NS_OK;
        if (MPI_Bcast(&verdict, 1, MPI_INT, 0, MPI_COMM_WORLD) != MPI_SUCCESS)
            rc = ns_fail(err, NS_ERR_LIBRARY, "MPI broadcast failed");
        else
            rc = verdict;
    }

    /* 5. Master (with the journal and the results loaded from it) / workers. */
    if (rc == NS_OK) {
        if (c.rank == 0) {
            pre->journal = journal;
            journal = NULL;
            rc = master_run(&c, opt, start_time, pre, err);
            free(pre);
            pre = NULL;
        } else {
            rc = worker_run(&c, err);
        }
    }
    if (c.unresponsive) {
        /* A worker is gone or stuck: a collective would hang. The journal is durable; leave
         * without MPI_Finalize (the launcher then ends the other ranks). */
        out->finalized = 0;
        ctx_free(&c);
        return rc;
    }
    int final = rc;
    MPI_Bcast(&final, 1, MPI_INT, 0, MPI_COMM_WORLD);
    if (c.rank != 0) {
        if (rc != NS_OK && rc != final)
            fprintf(stderr, "normsweep run: rank %d: %s\n", c.rank, err->msg);
        ns_err_clear(err);
        err->code = final;
    }
    rc = final;
finish:
    if (c.rank != 0) {
        ns_err_clear(err);
        err->code = rc;
    }
    ns_journal_close(journal);
    if (pre) {
        ns_results_free(&pre->res);
        free(pre);
    }
    ctx_free(&c);
    MPI_Finalize();
    return rc;
}

/* ns_sweep_master: rank 0's task loop: a dynamic queue of tasks (one shard each) handed to the
 * workers as they report, results journalled as they arrive (the journal synced at most every
 * NS_SWEEP_SYNC_SECONDS, and when the loop ends), tasks computed on rank 0 itself between
 * servicing the workers; a stop request (signal, CHECKPOINT_DIR/STOP) or a worker silent for
 * longer than the stall timeout ends the loop with every result saved. */
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "common/ns_file.h"
#include "common/ns_progress.h"
#include "sweep/ns_sweep_master.h"

typedef struct master {
    sweep_ctx *c;
    ns_progress prog;
    uint64_t *queue;
    size_t nqueue, next;
    int *stopped;           /* per rank (0 unused) */
    long long *busy;        /* per rank: task in progress or -1 */
    double *heard;          /* per rank: when it last sent anything */
    int nstopped;
    int interrupted, failed, stalled;
    ns_err fail_err;
    char *stop_file;        /* CHECKPOINT_DIR/STOP: its appearance asks for a checkpointed stop */
    double last_stop_check, stall_timeout;
    double last_sync;       /* when the journal was last synced */
    double master_seconds, service_seconds, worker_seconds;
    size_t master_tasks, worker_tasks;
    size_t in_parts;        /* results recorded where a worker's own part holds them */
} master;

/* Record a task's result: its payload journalled here (digest: from the rank that computed it,
 * NULL: computed here), or (payload NULL) at part_location of worker w's part. A task already
 * recorded only counts as a forward pass. */
static int record_result(master *m, uint64_t task, const double *payload,
                         const unsigned char *digest, int w, uint64_t part_location, ns_err *err)
{
    sweep_ctx *c = m->c;
    if (task >= c->res.n_shards)
        return ns_fail(err, NS_ERR_INVALID, "result for unknown task %llu",
                       (unsigned long long)task);
    uint64_t location = NS_RESULTS_MISSING;
    int first = !ns_results_has(&c->res, task);
    if (first && !payload) {
        NS_TRY(ns_journal_part_location(c->journal, c->segment, (uint32_t)w, part_location,
                                        &location, err));
        m->in_parts++;
    } else if (first) {
        NS_TRY(ns_journal_append(c->journal, task, payload, digest, &location, err));
        double now = ns_progress_now();
        if (now - m->last_sync >= NS_SWEEP_SYNC_SECONDS) { /* one sync for many records */
            NS_TRY(ns_journal_sync(c->journal, err));
            m->last_sync = now;
        }
    }
    NS_TRY(ns_results_set(&c->res, task, location, err));
    ns_progress_update(&m->prog, c->res.n_done);
    ns_sweep_hold(c, "journal", c->res.n_done);
    return NS_OK;
}

static void set_failed(master *m, const ns_err *e)
{
    if (!m->failed) {
        m->failed = 1;
        m->fail_err = *e;
    }
}

/* Reply to a worker that just reported: a new task, or STOP. */
static int reply(master *m, int w, ns_err *err)
{
    sweep_ctx *c = m->c;
    if (!m->interrupted && !m->failed && m->next < m->nqueue) {
        long long t = (long long)m->queue[m->next++];
        m->busy[w] = t;
        MPI_TRY(MPI_Send(&t, 1, MPI_LONG_LONG, w, TAG_TASK, c->comm), "send task");
        return NS_OK;
    }
    m->busy[w] = -1;
    MPI_TRY(MPI_Send(NULL, 0, MPI_BYTE, w, TAG_STOP, c->comm), "send stop");
    m->stopped[w] = 1;
    m->nstopped++;
    return NS_OK;
}

/* Receive the text message probed in st into msg (NS_ERR_MSG_MAX bytes; cut to fit). */
static int receive_text(sweep_ctx *c, const MPI_Status *st, char *msg, ns_err *err)
{
    int count = 0;
    MPI_Get_count(st, MPI_CHAR, &count);
    if (count < 0 || count >= NS_ERR_MSG_MAX)
        count = NS_ERR_MSG_MAX - 1;
    MPI_TRY(MPI_Recv(msg, NS_ERR_MSG_MAX, MPI_CHAR, st->MPI_SOURCE, st->MPI_TAG, c->comm,
                     MPI_STATUS_IGNORE), "receive");
    msg[count] = 0;
    return NS_OK;
}

/* Receive one worker message of tag `tag` (probed in st); 1 when the worker wants a reply. */
static int receive(master *m, const MPI_Status *st, int *wants_reply, ns_err *err)
{
    sweep_ctx *c = m->c;
    int w = st->MPI_SOURCE, count = 0;
    *wants_reply = 1;
    switch (st->MPI_TAG) {
    case TAG_READY:
        MPI_TRY(MPI_Recv(NULL, 0, MPI_BYTE, w, TAG_READY, c->comm, MPI_STATUS_IGNORE), "receive");
        break;
    case TAG_HEARTBEAT:
        MPI_TRY(MPI_Recv(NULL, 0, MPI_BYTE, w, TAG_HEARTBEAT, c->comm, MPI_STATUS_IGNORE),
                "receive");
        *wants_reply = 0;
        break;
    case TAG_RESULT: {
        MPI_TRY(MPI_Recv(c->rbuf, (int)(NS_SWEEP_RESULT_HEAD + c->plan.payload), MPI_DOUBLE, w,
                         TAG_RESULT, c->comm, MPI_STATUS_IGNORE), "receive result");
        ns_err e;
        ns_err_clear(&e);
        unsigned char digest[NS_JOURNAL_DIGEST_LEN];
        memcpy(digest, c->rbuf + 2, sizeof digest);
        if (record_result(m, (uint64_t)c->rbuf[0], c->rbuf + NS_SWEEP_RESULT_HEAD, digest, w, 0,
                          &e) != NS_OK)
            set_failed(m, &e);
        m->worker_seconds += c->rbuf[1];
        m->worker_tasks++;
        break;
    }
    case TAG_STORED: {
        uint64_t msg[3];
        double seconds;
        MPI_TRY(MPI_Recv(msg, 3, MPI_UINT64_T, w, TAG_STORED, c->comm, MPI_STATUS_IGNORE),
                "receive result");
        memcpy(&seconds, &msg[2], sizeof seconds);
        ns_err e;
        ns_err_clear(&e);
        if (record_result(m, msg[0], NULL, NULL, w, msg[1], &e) != NS_OK)
            set_failed(m, &e);
        m->worker_seconds += seconds;
        m->worker_tasks++;
        break;
    }
    case TAG_ABANDON: {
        double d[2];
        MPI_TRY(MPI_Recv(d, 2, MPI_DOUBLE, w, TAG_ABANDON, c->comm, MPI_STATUS_IGNORE), "receive");
        m->interrupted = 1; /* a worker was told to stop (signal): the whole sweep stops */
        break;
    }
    case TAG_PART_LOST: {
        char msg[NS_ERR_MSG_MAX];
        NS_TRY(receive_text(c, st, msg, err));
        ns_sweep_say(c, "normsweep: rank %d: %s: its results go through rank 0 from now on", w,
                     msg);
        *wants_reply = 0;
        break;
    }
    case TAG_FAIL: {
        char msg[NS_ERR_MSG_MAX];
        NS_TRY(receive_text(c, st, msg, err));
        ns_err e;
        ns_fail(&e, NS_ERR_IO, "rank %d: %s", w, msg);
        set_failed(m, &e);
        break;
    }
    default: { /* unknown tag: consume it so the loop cannot spin */
        MPI_Get_count(st, MPI_BYTE, &count);
        char *junk = malloc(count > 0 ? (size_t)count : 1);
        if (!junk)
            return ns_fail(err, NS_ERR_NOMEM, "out of memory");
        MPI_Recv(junk, count, MPI_BYTE, w, st->MPI_TAG, c->comm, MPI_STATUS_IGNORE);
        free(junk);
        *wants_reply = 0;
    }
    }
    return NS_OK;
}

/* Stop requests (the caller's flag; the STOP file, looked for at most once a second) and
 * silent workers. */
static void watch(master *m, double now)
{
    sweep_ctx *c = m->c;
    if (ns_sweep_stop_requested(c))
        m->interrupted = 1;
    if (!m->interrupted && m->stop_file && now - m->last_stop_check >= 1.0) {
        m->last_stop_check = now;
        if (access(m->stop_file, F_OK) == 0) {
            ns_sweep_say(c, "normsweep: %s exists: checkpointing and stopping", m->stop_file);
            m->interrupted = 1;
        }
    }
    for (int w = 1; w < c->size && !m->stalled; w++)
        if (!m->stopped[w] && m->busy[w] >= 0 && now - m->heard[w] > m->stall_timeout) {
            ns_sweep_say(c, "normsweep: rank %d has not been heard from for %.0f s (task %lld): "
                         "it is stopped or hung; checkpointing and stopping", w, now - m->heard[w],
                         m->busy[w]);
            m->stalled = w;
            m->interrupted = 1;
        }
}

/* Handle every pending worker message (non-blocking). Returns MPI / journal errors. */
static int service(master *m, ns_err *err)
{
    sweep_ctx *c = m->c;
    double t0 = ns_progress_now();
    watch(m, t0);
    for (;;) {
        int flag = 0, wants_reply;
        MPI_Status st;
        MPI_TRY(MPI_Iprobe(MPI_ANY_SOURCE, MPI_ANY_TAG, c->comm, &flag, &st), "probe");
        if (!flag)
            break;
        NS_TRY(receive(m, &st, &wants_reply, err));
        m->heard[st.MPI_SOURCE] = ns_progress_now();
        if (wants_reply)
            NS_TRY(reply(m, st.MPI_SOURCE, err));
    }
    m->service_seconds += ns_progress_now() - t0;
    return NS_OK;
}

/* The master's own task polls here: between heads it services the workers. */
static int master_poll(void *user, ns_err *err)
{
    master *m = user;
    NS_TRY(service(m, err));
    if (m->interrupted || m->failed)
        return ns_fail(err, NS_ERR_INTERRUPTED, "stopped");
    return NS_OK;
}

static void nap(void)
{
    struct timespec ts = {0, 200000}; /* 0.2 ms: an idle master waiting for workers */
    nanosleep(&ts, NULL);
}

/* Compute one task on rank 0. */
static void own_task(master *m)
{
    sweep_ctx *c = m->c;
    uint64_t t = m->queue[m->next++];
    double t0 = ns_progress_now(), s0 = m->service_seconds;
    ns_err e;
    ns_err_clear(&e);
    ns_rows_hooks hk = {.poll = master_poll, .poll_user = m};
    double *out = c->buf + NS_SWEEP_RESULT_HEAD;
    int rc = ns_rows_run(c->rows, t, c->tokens + t * c->plan.derived.L_fwd, &hk, out, &e);
    if (rc == NS_ERR_INTERRUPTED)
        return;
    if (rc != NS_OK) {
        set_failed(m, &e);
        return;
    }
    m->master_seconds += (ns_progress_now() - t0) - (m->service_seconds - s0);
    m->master_tasks++;
    if (record_result(m, t, out, NULL, 0, 0, &e) != NS_OK)
        set_failed(m, &e);
}

/* Stop the workers: abort running tasks when stopping early, then wait for their reports. */
static int drain(master *m, ns_err *err)
{
    sweep_ctx *c = m->c;
    int nworkers = c->size - 1;
    if (m->interrupted || m->failed)
        for (int w = 1; w < c->size; w++)
            if (!m->stopped[w] && m->busy[w] >= 0 && w != m->stalled)
                MPI_Send(NULL, 0, MPI_BYTE, w, TAG_ABORT, c->comm);
    double t_drain = ns_progress_now();
    while (m->nstopped < nworkers) {
        NS_TRY(service(m, err));
        if (m->stalled || ((m->interrupted || m->failed) &&
                           ns_progress_now() - t_drain > NS_SWEEP_DRAIN_TIMEOUT)) {
            c->unresponsive = 1;
            return ns_fail(err, NS_ERR_INTERRUPTED,
                           "%s; %zu of %zu tasks saved in %s; continue with --resume",
                           m->stalled ? "a rank stopped answering" : "workers did not report",
                           c->res.n_done, c->res.n_shards, ns_journal_path(c->journal));
        }
        nap();
    }
    return NS_OK;
}

static int loop(master *m, ns_err *err)
{
    sweep_ctx *c = m->c;
    int nworkers = c->size - 1;
    while (!m->interrupted && !m->failed) {
        NS_TRY(service(m, err));
        if (m->interrupted || m->failed)
            break;
        if (m->next < m->nqueue)
            own_task(m);
        else if (m->nstopped < nworkers)
            nap();
        else
            break;
    }
    return drain(m, err);
}

static void report_timing(master *m, double wall)
{
    sweep_ctx *c = m->c;
    double own = m->master_tasks ? m->master_seconds / (double)m->master_tasks : 0.0;
    ns_sweep_say(c, "normsweep: master computed %zu task(s), %.3f s per task (own compute; %.3f s "
                 "spent servicing workers); workers computed %zu task(s), %.3f s per task (%zu "
                 "journalled in their own files); wall %.2f s", m->master_tasks, own,
                 m->service_seconds, m->worker_tasks,
                 m->worker_tasks ? m->worker_seconds / (double)m->worker_tasks : 0.0, m->in_parts,
                 wall);
    ns_sweep_say(c, "master_seconds_per_task: %.6f", own);
    ns_sweep_say(c, "sweep_wall_seconds: %.6f", wall);
}

int ns_sweep_master(sweep_ctx *c, ns_err *err)
{
    master m;
    memset(&m, 0, sizeof m);
    m.c = c;
    size_t nshard = c->cfg.shard_count;
    double t_begin = ns_progress_now();
    m.stall_timeout = c->opt->stall_timeout > 0 ? c->opt->stall_timeout : NS_SWEEP_STALL_TIMEOUT;
    m.queue = malloc((nshard + 1) * sizeof *m.queue);
    m.stopped = calloc((size_t)c->size, sizeof *m.stopped);
    m.busy = malloc((size_t)c->size * sizeof *m.busy);
    m.heard = malloc((size_t)c->size * sizeof *m.heard);
    m.stop_file = ns_path_join(c->cfg.checkpoint_dir, "STOP");
    int rc = NS_OK;
    if (!m.queue || !m.stopped || !m.busy || !m.heard || !m.stop_file) {
        rc = ns_fail(err, NS_ERR_NOMEM, "out of memory");
        goto done;
    }
    for (int w = 0; w < c->size; w++)
        m.busy[w] = -1, m.heard[w] = t_begin;
    m.last_sync = t_begin;
    for (size_t k = 0; k < nshard; k++)
        if (!ns_results_has(&c->res, k))
            m.queue[m.nqueue++] = k;
    ns_progress_init(&m.prog, c->hooks->progress, c->hooks->user, c->hooks->progress_live, nshard,
                     c->res.n_done);
    ns_sweep_say(c, "normsweep: %zu tasks (one per shard; %zu already in the journal), %d rank%s, "
                 "master pid %ld, journal %s", nshard, c->res.n_done, c->size,
                 c->size == 1 ? "" : "s", (long)getpid(), ns_journal_path(c->journal));
    ns_sweep_hold(c, "journal", c->res.n_done);
    rc = loop(&m, err);
    /* every result received is made durable before anything else reads the journal or the run
     * reports how many tasks it saved (after a failure too, keeping the first error) */
    ns_err se;
    ns_err_clear(&se);
    if (ns_journal_sync(c->journal, &se) != NS_OK && rc == NS_OK) {
        *err = se;
        rc = se.code;
    }
    if (rc != NS_OK)
        goto done;
    ns_progress_finish(&m.prog);
    report_timing(&m, ns_progress_now() - t_begin);
    if (m.failed) {
        *err = m.fail_err;
        rc = m.fail_err.code ? m.fail_err.code : NS_ERR_IO;
        if (rc == NS_ERR_INVALID || rc == NS_ERR_FORMAT || rc == NS_ERR_CHECKSUM)
            rc = NS_ERR_IO; /* found mid-run: a runtime failure, not an input error (exit 1) */
        err->code = rc;
    } else if (m.interrupted || c->res.n_done < nshard) {
        rc = ns_fail(err, NS_ERR_INTERRUPTED,
                     "interrupted: %zu of %zu tasks saved in %s; continue with --resume",
                     c->res.n_done, nshard, ns_journal_path(c->journal));
    }
done:
    free(m.queue);
    free(m.stopped);
    free(m.busy);
    free(m.heard);
    free(m.stop_file);
    return rc;
}

/* ns_sweep_worker: a worker rank's task loop: ask the master for a task, run it through the rows
 * stage, and either append the result to its own part of the journal (synced) and send the
 * master where it lies, or -- without a part, or when appending to it fails -- send the result
 * with its journal checksum (so that rank 0 only writes it); between heads it sends a heartbeat
 * now and then (so the master can tell a slow task from a stopped rank) and looks for an abort
 * or a stop request. */
#include <string.h>

#include "common/ns_progress.h"
#include "sweep/ns_sweep_worker.h"

typedef struct worker {
    sweep_ctx *c;
    double last_beat;
} worker;

static int worker_poll(void *user, ns_err *err)
{
    worker *w = user;
    sweep_ctx *c = w->c;
    if (ns_sweep_stop_requested(c))
        return ns_fail(err, NS_ERR_INTERRUPTED, "stopped by signal");
    double now = ns_progress_now();
    if (now - w->last_beat >= NS_SWEEP_HEARTBEAT) {
        MPI_TRY(MPI_Send(NULL, 0, MPI_BYTE, 0, TAG_HEARTBEAT, c->comm), "send heartbeat");
        w->last_beat = now;
    }
    int flag = 0;
    MPI_TRY(MPI_Iprobe(0, TAG_ABORT, c->comm, &flag, MPI_STATUS_IGNORE), "probe");
    if (flag) {
        MPI_TRY(MPI_Recv(NULL, 0, MPI_BYTE, 0, TAG_ABORT, c->comm, MPI_STATUS_IGNORE), "receive");
        return ns_fail(err, NS_ERR_INTERRUPTED, "stopped by the master");
    }
    return NS_OK;
}

/* Run task t and report it (result, abandon or failure). */
static int run_task(worker *w, long long t, ns_err *err)
{
    sweep_ctx *c = w->c;
    double t0 = ns_progress_now();
    ns_err e;
    ns_err_clear(&e);
    ns_rows_hooks hk = {.poll = worker_poll, .poll_user = w};
    w->last_beat = t0;
    double *out = c->buf + NS_SWEEP_RESULT_HEAD;
    int rc = ns_rows_run(c->rows, (uint64_t)t, c->tokens + (size_t)t * c->plan.derived.L_fwd, &hk,
                         out, &e);
    unsigned char digest[NS_JOURNAL_DIGEST_LEN]; /* the journal's checksum, computed here */
    if (rc == NS_OK)
        rc = ns_journal_digest((uint64_t)t, out, c->plan.payload * sizeof *out, digest, &e);
    if (rc == NS_OK && c->part) {
        /* durable before the master counts it: a part is read by other processes, maybe on
         * other nodes, and never synced by anyone else */
        uint64_t msg[3] = {(uint64_t)t, 0, 0};
        double seconds = ns_progress_now() - t0;
        memcpy(&msg[2], &seconds, sizeof seconds);
        if (ns_journal_append(c->part, (uint64_t)t, out, digest, &msg[1], &e) == NS_OK &&
            ns_journal_sync(c->part, &e) == NS_OK) {
            MPI_TRY(MPI_Send(msg, 3, MPI_UINT64_T, 0, TAG_STORED, c->comm), "send result");
            return NS_OK;
        }
        /* say, its disk is full (the append left no incomplete record): the master is told
         * why and journals this result and the rest */
        ns_journal_close(c->part);
        c->part = NULL;
        MPI_TRY(MPI_Send(e.msg, (int)strlen(e.msg), MPI_CHAR, 0, TAG_PART_LOST, c->comm),
                "send");
        ns_err_clear(&e);
    }
    if (rc == NS_OK) {
        c->buf[0] = (double)t;
        c->buf[1] = ns_progress_now() - t0;
        memcpy(c->buf + 2, digest, sizeof digest);
        MPI_TRY(MPI_Send(c->buf, (int)(NS_SWEEP_RESULT_HEAD + c->plan.payload), MPI_DOUBLE, 0,
                         TAG_RESULT, c->comm), "send result");
    } else if (rc == NS_ERR_INTERRUPTED) {
        double d[2] = {(double)t, 0};
        MPI_TRY(MPI_Send(d, 2, MPI_DOUBLE, 0, TAG_ABANDON, c->comm), "send");
    } else {
        MPI_TRY(MPI_Send(e.msg, (int)strlen(e.msg), MPI_CHAR, 0, TAG_FAIL, c->comm), "send");
    }
    return NS_OK;
}

int ns_sweep_worker(sweep_ctx *c, ns_err *err)
{
    worker w = {c, 0.0};
    uint64_t reported = 0;
    ns_sweep_hold(c, "task", reported);
    MPI_TRY(MPI_Send(NULL, 0, MPI_BYTE, 0, TAG_READY, c->comm), "send");
    ns_sweep_hold(c, "ready", 0); /* the first request sent, its answer not yet read */
    for (;;) {
        MPI_Status st;
        MPI_TRY(MPI_Probe(0, MPI_ANY_TAG, c->comm, &st), "probe");
        if (st.MPI_TAG == TAG_STOP) {
            MPI_TRY(MPI_Recv(NULL, 0, MPI_BYTE, 0, TAG_STOP, c->comm, MPI_STATUS_IGNORE),
                    "receive");
            return NS_OK;
        }
        if (st.MPI_TAG == TAG_ABORT) {
            MPI_TRY(MPI_Recv(NULL, 0, MPI_BYTE, 0, TAG_ABORT, c->comm, MPI_STATUS_IGNORE),
                    "receive");
            continue;
        }
        long long t;
        MPI_TRY(MPI_Recv(&t, 1, MPI_LONG_LONG, 0, TAG_TASK, c->comm, MPI_STATUS_IGNORE),
                "receive task");
        NS_TRY(run_task(&w, t, err));
        ns_sweep_hold(c, "task", ++reported);
    }
}

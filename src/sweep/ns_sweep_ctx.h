/* ns_sweep_ctx: the state the parts of the MPI sweep share, and the three things every part may
 * do with it: say a line (rank 0), ask whether the caller wants to stop, and hold at a test-only
 * point. The parts -- ns_sweep_run.c (setup, broadcast, the order of the steps), ns_sweep_prepare
 * (rank 0's checks and outputs), ns_sweep_share (which ranks see rank 0's checkpoint directory),
 * ns_sweep_master and ns_sweep_worker (the task loop), ns_sweep_reduce (the end-of-run
 * reduction) -- include this and their own headers; nothing here calls back into them. Not for
 * use outside src/sweep. */
#ifndef NS_SWEEP_CTX_H
#define NS_SWEEP_CTX_H

#include <mpi.h>
#include <stdint.h>

#include "common/ns_lock.h"
#include "model/ns_model.h"
#include "rows/ns_plan.h"
#include "rows/ns_rows.h"
#include "journal/ns_journal.h"
#include "reduce/ns_results.h"
#include "sweep/ns_sweep.h"
#include "spec/ns_sweep_config.h"
#include "spec/ns_sweep_inputs.h"
#include "sweep/ns_sweep_mpi.h"

enum {
    TAG_READY = 1,     /* worker -> master: ready for a first task (no data) */
    TAG_RESULT = 2,    /* worker -> master: doubles [task, seconds, payload...] */
    TAG_ABANDON = 3,   /* worker -> master: doubles [task, 0]: stopped before finishing */
    TAG_FAIL = 4,      /* worker -> master: chars: an error message */
    TAG_HEARTBEAT = 5, /* worker -> master: no data; "still working" */
    TAG_STORED = 6,    /* worker -> master: uint64 [task, location in its part, seconds' bits]:
                          the result is in the worker's own part of the journal, synced */
    TAG_PART_LOST = 7, /* worker -> master: chars: why its part can no longer be appended to (its
                          results go through rank 0 from then on); no reply */
    TAG_TASK = 10,     /* master -> worker: int64 task */
    TAG_STOP = 11,     /* master -> worker: no more tasks, leave the loop */
    TAG_ABORT = 12     /* master -> worker: abandon the current task (interrupt or failure) */
};

/* Seconds between a busy worker's heartbeats, and the master's wait for workers to report once
 * it stops. */
#define NS_SWEEP_HEARTBEAT 5.0
#define NS_SWEEP_DRAIN_TIMEOUT 30.0
/* The journal is synced at most this often while results arrive, and always when the loop ends.
 * A killed process loses nothing (its appends are in the page cache); a crash of the machine
 * may lose the results of the last 30 s, which --resume recomputes (records are checksummed and
 * a torn tail is cut off). A sync per record cost rank 0 about 75 ms plus the record's write-back
 * (docs/SCALING.md). */
#define NS_SWEEP_SYNC_SECONDS 30.0

/* A result message: task id, seconds, the journal digest (NS_JOURNAL_DIGEST_LEN bytes in 4
 * doubles' bits), then the payload. */
#define NS_SWEEP_RESULT_HEAD 6

typedef struct sweep_ctx {
    MPI_Comm comm;
    int rank, size;
    const ns_sweep_options *opt;
    const ns_hooks *hooks;
    ns_sweep_config cfg;
    ns_model_config mc;
    ns_plan plan;
    int have_plan;
    ns_model *model;
    ns_rows *rows;
    int32_t *tokens;          /* (shard_count, L_fwd) */
    double *buf;              /* NS_SWEEP_RESULT_HEAD + payload doubles: this rank's task output
                                 after a result message's head */
    double *rbuf;             /* rank 0: the same for workers' results */
    char start_time[32];
    int unresponsive;         /* a worker did not answer: MPI cannot be shut down cleanly */
    /* rank 0 only */
    ns_sweep_inputs in;
    size_t corpus_tokens;
    ns_lock *lock;            /* the checkpoint directory's */
    ns_lock *out_lock;        /* the output file's (OUTPUT.lock) */
    ns_journal *journal;
    ns_results res;
    int have_res;
    size_t from_journal;      /* tasks found in the journal at the start */
    char *history;            /* the checkpoint directory's history, this segment included */
    int complete;             /* --resume found every task journalled and the output written
                                 from this journal: nothing to do (ns_sweep_open_outputs) */
    int finished;             /* the output is written (or already was): the lock file goes */
    /* every rank */
    uint32_t segment;         /* this run segment's number among the journal's parts */
    ns_journal *part;         /* a worker that sees the checkpoint directory: its own part */
} sweep_ctx;

/* A message line for the user (rank 0), printf-style. */
void ns_sweep_say(const sweep_ctx *c, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* 1 when the caller asked to stop. */
int ns_sweep_stop_requested(const sweep_ctx *c);
/* The caller's test-only hold at a named point (ns_hooks.hold); nothing when it has none. */
void ns_sweep_hold(const sweep_ctx *c, const char *point, uint64_t count);

#endif

/* ns_sweep_internal: the state the parts of the MPI sweep share (ns_sweep.c: setup and
 * broadcast; ns_sweep_prepare.c: rank 0's checks and outputs; ns_sweep_share.c: which ranks see
 * rank 0's checkpoint directory; ns_sweep_master.c, ns_sweep_worker.c: the task loop;
 * ns_sweep_reduce.c: the end-of-run reduction). Not for use
 * outside src/sweep. */
#ifndef NS_SWEEP_INTERNAL_H
#define NS_SWEEP_INTERNAL_H

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
/* ISO 8601 UTC now. */
/* 1 when the caller asked to stop. */
int ns_sweep_stop_requested(const sweep_ctx *c);
/* The caller's test-only hold at a named point (ns_hooks.hold); nothing when it has none. */
void ns_sweep_hold(const sweep_ctx *c, const char *point, uint64_t count);

/* Rank 0: read, validate and resolve the sweep, build the plan, cut the shards' tokens, load the
 * model (checking its bytes against the checksum validation recorded). Nothing is written. */
int ns_sweep_prepare(sweep_ctx *c, ns_err *err);
/* Rank 0: create the output's directory, take the checkpoint directory's lock, open the journal
 * (loading its results into c->res) and record this run segment; undone on failure. A --resume
 * whose journal holds every task and whose output was written from it (see output_is_current)
 * sets c->complete and records nothing. */
int ns_sweep_open_outputs(sweep_ctx *c, ns_err *err);
/* Rank 0: release what ns_sweep_open_outputs holds; with c->finished the checkpoint directory's
 * lock file is removed too (it protects a journal that a run may still add to). */
void ns_sweep_close_outputs(sweep_ctx *c);

/* The task loops; both return the loop's status (NS_ERR_INTERRUPTED when stopped). */
int ns_sweep_master(sweep_ctx *c, ns_err *err);
int ns_sweep_worker(sweep_ctx *c, ns_err *err);

/* Every rank, after ns_sweep_open_outputs: the run segment; a worker that sees rank 0's
 * checkpoint directory creates its part of the journal in c->part (none: it sends payloads). */
int ns_sweep_open_part(sweep_ctx *c, ns_err *err);
/* Every rank, for the reduction: on rank 0, checks that the journal holds every shard's record
 * where c->res says (*j: c->journal; an error otherwise: the journal changed under the run);
 * elsewhere *j is rank 0's journal (its parts included) attached read-only when this rank sees
 * the checkpoint directory and finds every shard's record where c->res says, else NULL. */
int ns_sweep_attach_journal(sweep_ctx *c, ns_journal **j, ns_err *err);

/* Every rank: reduce a share of the slices; rank 0 writes the NetCDF and the summary. */
int ns_sweep_reduce_write(sweep_ctx *c, ns_sweep_outcome *out, ns_err *err);

#endif

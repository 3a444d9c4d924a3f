/* ns_progress: progress lines of long work -- the sweep's tasks, a lean archive's recomputation
 * (tasks done/total, shards/s, ETA) -- handed to a callback that shows them (the CLI: a live
 * carriage-return line on a terminal, plain lines in batch logs): every 0.5 s when live, else
 * every 10 s or 5 % of the tasks. Prints nothing itself. */
#ifndef NS_PROGRESS_H
#define NS_PROGRESS_H

#include <stddef.h>

/* Shows one progress line (no newline); live: the caller redraws one line in place. */
typedef void (*ns_progress_emit_fn)(void *user, const char *line, int live);

typedef struct ns_progress {
    ns_progress_emit_fn emit; /* NULL: silent */
    void *user;
    int live;            /* 1: the lines are redrawn in place (a terminal) */
    size_t total;        /* tasks in the sweep */
    size_t done_before;  /* tasks already in the journal when this run started */
    size_t done;         /* tasks done (including done_before) */
    double t_start;      /* monotonic seconds */
    double t_last;       /* last print */
    size_t done_last;    /* done at last print */
} ns_progress;

/* Monotonic clock in seconds. */
double ns_progress_now(void);

void ns_progress_init(ns_progress *p, ns_progress_emit_fn emit, void *user, int live, size_t total,
                      size_t done_before);
/* Record that `done` tasks are complete; prints when due (always at the last task). */
void ns_progress_update(ns_progress *p, size_t done);
/* The last line, if not shown yet. */
void ns_progress_finish(ns_progress *p);

/* Format seconds as "1h02m03s" / "4m05s" / "6s" into buf. */
void ns_progress_fmt_duration(char *buf, size_t size, double seconds);

#endif

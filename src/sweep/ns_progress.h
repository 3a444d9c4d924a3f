/* ns_progress: the sweep's progress report on stderr (tasks done/total, shards/s, ETA): a live
 * carriage-return line on a terminal, plain lines every 10 s or 5 % in batch logs. */
#ifndef NS_PROGRESS_H
#define NS_PROGRESS_H

#include <stddef.h>
#include <stdio.h>

typedef struct ns_progress {
    FILE *out;
    int live;            /* 1: stderr is a terminal (\r line) */
    size_t total;        /* tasks in the sweep */
    size_t done_before;  /* tasks already in the journal when this run started */
    size_t done;         /* tasks done (including done_before) */
    double t_start;      /* monotonic seconds */
    double t_last;       /* last print */
    size_t done_last;    /* done at last print */
} ns_progress;

/* Monotonic clock in seconds. */
double ns_progress_now(void);

void ns_progress_init(ns_progress *p, FILE *out, size_t total, size_t done_before);
/* Record that `done` tasks are complete; prints when due (always at the last task). */
void ns_progress_update(ns_progress *p, size_t done);
/* Final line (ends a live line with a newline). */
void ns_progress_finish(ns_progress *p, const char *what);

/* Format seconds as "1h02m03s" / "4m05s" / "6s" into buf. */
void ns_progress_fmt_duration(char *buf, size_t size, double seconds);

#endif

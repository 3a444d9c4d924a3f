/* ns_progress: live or periodic progress lines for the sweep (see ns_progress.h). */
#include "common/ns_progress.h"

#include <math.h>
#include <stdio.h>
#include <time.h>

double ns_progress_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

void ns_progress_fmt_duration(char *buf, size_t size, double s)
{
    if (!isfinite(s) || s < 0) {
        snprintf(buf, size, "?");
        return;
    }
    unsigned long t = (unsigned long)(s + 0.5);
    if (t >= 3600)
        snprintf(buf, size, "%luh%02lum%02lus", t / 3600, (t / 60) % 60, t % 60);
    else if (t >= 60)
        snprintf(buf, size, "%lum%02lus", t / 60, t % 60);
    else
        snprintf(buf, size, "%lus", t);
}

void ns_progress_init(ns_progress *p, ns_progress_emit_fn emit, void *user, int live, size_t total,
                      size_t done_before)
{
    p->emit = emit;
    p->user = user;
    p->live = live;
    p->total = total;
    p->done_before = done_before;
    p->done = done_before;
    p->t_start = ns_progress_now();
    p->t_last = p->t_start;
    p->done_last = done_before;
}

static void print_line(ns_progress *p, double now)
{
    double el = now - p->t_start;
    size_t new_done = p->done - p->done_before;
    double rate = el > 0 ? (double)new_done / el : 0.0;
    double eta = p->done >= p->total ? 0.0 /* nothing left (a resume of a finished journal) */
               : rate > 0 ? (double)(p->total - p->done) / rate : NAN;
    char eta_s[32], el_s[32];
    ns_progress_fmt_duration(eta_s, sizeof eta_s, eta);
    ns_progress_fmt_duration(el_s, sizeof el_s, el);
    double pct = p->total ? 100.0 * (double)p->done / (double)p->total : 100.0;
    char line[256];
    snprintf(line, sizeof line, "%zu/%zu tasks (%.1f%%), %.3g shards/s, elapsed %s, ETA %s",
             p->done, p->total, pct, rate, el_s, eta_s);
    p->emit(p->user, line, p->live);
    p->t_last = now;
    p->done_last = p->done;
}

void ns_progress_update(ns_progress *p, size_t done)
{
    if (!p->emit)
        return;
    p->done = done;
    double now = ns_progress_now();
    int due;
    if (p->live)
        due = now - p->t_last >= 0.5 || done == p->total;
    else
        due = now - p->t_last >= 10.0 || done == p->total ||
              (p->total && (double)(done - p->done_last) >= 0.05 * (double)p->total);
    if (due)
        print_line(p, now);
}

void ns_progress_finish(ns_progress *p)
{
    if (p->emit && (p->done_last != p->done || p->done == p->done_before))
        print_line(p, ns_progress_now());
}

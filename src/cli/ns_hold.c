/* ns_hold: the test-only hold point (see ns_hold.h). */
#include "cli/ns_hold.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

static const char *const points[] = {"mpi-init", "opened", "journal", "task", "ready", "step",
                                     "temp"};

/* The n characters at s as a decimal count: 1 to 9 digits, nothing else. 0, or -1. */
static int parse_count(const char *s, size_t n, unsigned long long *out)
{
    if (n == 0 || n > 9 || strspn(s, "0123456789") < n)
        return -1;
    *out = 0;
    for (size_t i = 0; i < n; i++)
        *out = 10 * *out + (unsigned long long)(s[i] - '0');
    return 0;
}

int ns_hold_launcher_rank(void)
{
    static const char *const vars[] = {"OMPI_COMM_WORLD_RANK", "PMI_RANK", "PMIX_RANK",
                                       "SLURM_PROCID"};
    for (size_t i = 0; i < sizeof vars / sizeof *vars; i++) {
        const char *v = getenv(vars[i]);
        if (v && *v)
            return atoi(v);
    }
    return 0;
}

/* One SPEC of the list, [s, s + len): POINT[:COUNT][@RANK] with a known point. 0, or -1. */
static int parse_spec(const char *s, size_t len, char *point, unsigned long long *count,
                      unsigned long long *rank)
{
    size_t n = strcspn(s, ":@,");
    int known = 0;
    for (size_t i = 0; n <= len && i < sizeof points / sizeof *points; i++)
        known |= strlen(points[i]) == n && strncmp(s, points[i], n) == 0;
    if (!known)
        return -1;
    memcpy(point, s, n);
    point[n] = 0;
    *count = 0, *rank = 0;
    const char *p = s + n, *end = s + len;
    if (p < end && *p == ':') {
        size_t k = strcspn(p + 1, "@,");
        if (p + 1 + k > end || parse_count(p + 1, k, count) != 0)
            return -1;
        p += 1 + k;
    }
    if (p < end && *p == '@') {
        size_t k = (size_t)(end - (p + 1));
        if (parse_count(p + 1, k, rank) != 0)
            return -1;
        p = end;
    }
    return p == end ? 0 : -1;
}

int ns_hold_init(ns_hold *h, const char *cmd, volatile sig_atomic_t *stop)
{
    memset(h, 0, sizeof *h);
    h->stop = stop;
    h->rank = ns_hold_launcher_rank();
    const char *spec = getenv("NORMSWEEP_TEST_HOLD");
    if (!spec || !*spec)
        return 0;
    /* SPEC[,SPEC...]: at most one per rank; this process keeps the one naming its rank */
    int ok = 1;
    unsigned long long ranks_seen[16];
    size_t nseen = 0;
    for (const char *s = spec; ok;) {
        size_t len = strcspn(s, ",");
        char point[sizeof h->point];
        unsigned long long count, rank;
        ok = len < sizeof point && parse_spec(s, len, point, &count, &rank) == 0 &&
             nseen < sizeof ranks_seen / sizeof *ranks_seen;
        for (size_t i = 0; ok && i < nseen; i++)
            ok = ranks_seen[i] != rank;
        if (!ok)
            break;
        ranks_seen[nseen++] = rank;
        if (rank == (unsigned long long)h->rank) {
            memcpy(h->point, point, sizeof point);
            h->count = count;
            h->want_rank = h->rank;
        }
        if (!s[len])
            break;
        s += len + 1;
    }
    if (!ok) {
        fprintf(stderr, "normsweep %s: NORMSWEEP_TEST_HOLD='%s': expected POINT[:COUNT][@RANK], "
                "or several separated by commas with distinct ranks, with POINT one of mpi-init, "
                "opened, journal, task, ready, step, temp\n", cmd, spec);
        memset(h->point, 0, sizeof h->point);
        return -1;
    }
    h->dir = getenv("NORMSWEEP_TEST_HOLD_DIR");
    struct stat sb;
    if (!h->dir || !*h->dir || stat(h->dir, &sb) != 0 || !S_ISDIR(sb.st_mode)) {
        fprintf(stderr, "normsweep %s: NORMSWEEP_TEST_HOLD is set, but NORMSWEEP_TEST_HOLD_DIR "
                "is not an existing directory\n", cmd);
        memset(h->point, 0, sizeof h->point);
        return -1;
    }
    return 0;
}

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* DIR/NAME, written under a temporary name and renamed: a reader sees all of it or nothing. */
static int write_one(const ns_hold *h, const char *name, const char *point,
                     unsigned long long count)
{
    char tmp[4096], path[4096];
    snprintf(path, sizeof path, "%s/%s", h->dir, name);
    snprintf(tmp, sizeof tmp, "%s/.%s.%ld", h->dir, name, (long)getpid());
    FILE *f = fopen(tmp, "w");
    if (!f)
        return -1;
    fprintf(f, "%ld %d %s %llu\n", (long)getpid(), h->rank, point, count);
    if (fclose(f) != 0 || rename(tmp, path) != 0) {
        unlink(tmp);
        return -1;
    }
    return 0;
}

/* DIR/held.RANK, then DIR/held (with several holds, the last process held writes DIR/held). */
static int write_marker(const ns_hold *h, const char *point, unsigned long long count)
{
    char name[32];
    snprintf(name, sizeof name, "held.%d", h->rank);
    return write_one(h, name, point, count) == 0 && write_one(h, "held", point, count) == 0 ? 0
                                                                                            : -1;
}

void ns_hold_at(void *user, const char *point, unsigned long long count)
{
    ns_hold *h = user;
    if (!h->point[0] || h->done || h->rank != h->want_rank || count < h->count ||
        strcmp(point, h->point) != 0)
        return;
    h->done = 1;
    char release[4096];
    snprintf(release, sizeof release, "%s/release", h->dir);
    if (write_marker(h, point, count) != 0) {
        fprintf(stderr, "normsweep: test hold at %s %llu: cannot write %s/held: not held\n", point,
                count, h->dir);
        return;
    }
    struct timespec nap = {0, 2000000}; /* 2 ms; a signal ends it early */
    for (double t0 = now(); !(h->stop && *h->stop) && access(release, F_OK) != 0;
         nanosleep(&nap, NULL))
        if (now() - t0 > NS_HOLD_MAX_SECONDS) {
            fprintf(stderr, "normsweep: test hold at %s %llu: no %s after %.0f s: going on\n",
                    point, count, release, NS_HOLD_MAX_SECONDS);
            return;
        }
}

ns_hold_fn ns_hold_hook(const ns_hold *h)
{
    return h->point[0] ? ns_hold_at : NULL;
}

int ns_hold_setup(ns_hold *h, const char *cmd, volatile sig_atomic_t *stop, ns_hooks *hooks)
{
    if (ns_hold_init(h, cmd, stop) != 0)
        return -1;
    hooks->stop = stop;
    hooks->hold = ns_hold_hook(h);
    hooks->hold_user = h;
    return 0;
}

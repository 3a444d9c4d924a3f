/* ns_hold: the test-only hold point (see ns_hold.h). */
#include "cli/ns_hold.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

static const char *const points[] = {"mpi-init", "opened", "journal", "task", "step"};

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

/* The launcher's rank of this process (before MPI_Init), else 0. */
static int launcher_rank(void)
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

int ns_hold_init(ns_hold *h, const char *cmd, volatile sig_atomic_t *stop)
{
    memset(h, 0, sizeof *h);
    h->stop = stop;
    h->rank = launcher_rank();
    const char *spec = getenv("NORMSWEEP_TEST_HOLD");
    if (!spec || !*spec)
        return 0;
    size_t n = strcspn(spec, ":@");
    int known = 0;
    for (size_t i = 0; i < sizeof points / sizeof *points; i++)
        known |= strlen(points[i]) == n && strncmp(spec, points[i], n) == 0;
    const char *p = spec + n;
    unsigned long long rank = 0;
    int ok = known;
    if (ok && *p == ':') {
        size_t k = strcspn(p + 1, "@");
        ok = parse_count(p + 1, k, &h->count) == 0;
        p += 1 + k;
    }
    if (ok && *p == '@') {
        ok = parse_count(p + 1, strlen(p + 1), &rank) == 0;
        p += strlen(p);
    }
    if (!ok || *p) {
        fprintf(stderr, "normsweep %s: NORMSWEEP_TEST_HOLD='%s': expected POINT[:COUNT][@RANK] "
                "with POINT one of mpi-init, opened, journal, task, step\n", cmd, spec);
        return -1;
    }
    h->dir = getenv("NORMSWEEP_TEST_HOLD_DIR");
    struct stat sb;
    if (!h->dir || !*h->dir || stat(h->dir, &sb) != 0 || !S_ISDIR(sb.st_mode)) {
        fprintf(stderr, "normsweep %s: NORMSWEEP_TEST_HOLD is set, but NORMSWEEP_TEST_HOLD_DIR "
                "is not an existing directory\n", cmd);
        return -1;
    }
    memcpy(h->point, spec, n);
    h->want_rank = (int)rank;
    return 0;
}

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* DIR/held, written under a temporary name and renamed: a reader sees all of it or nothing. */
static int write_marker(const ns_hold *h, const char *point, unsigned long long count)
{
    char tmp[4096], path[4096];
    snprintf(path, sizeof path, "%s/held", h->dir);
    snprintf(tmp, sizeof tmp, "%s/.held.%ld", h->dir, (long)getpid());
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

void (*ns_hold_hook(const ns_hold *h))(void *, const char *, unsigned long long)
{
    return h->point[0] ? ns_hold_at : NULL;
}

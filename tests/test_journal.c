/* test_journal: the sweep journal: records round-trip in order, a torn or corrupt tail is
 * ignored and cut off, a producer's digest is the journal's own (a wrong one marks the record
 * damaged), appends are visible before a sync, a journal of another sweep (or record size) is
 * refused, the task id at a payload offset is read back and checked against the shards; parts
 * (a worker's own file) are read where their locations say, by the writer and by an attached
 * journal, scanned on resume after journal.nsj and never cut; an append that fails part-way
 * leaves no incomplete record; more parts than are held open at once are all read right. */
#include <dirent.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include "ns_test.h"
#include "common/ns_lock.h"
#include "journal/ns_journal.h"
#include "reduce/ns_results.h"

#define NPAY 5
static const char *HASH_A = "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa";
static const char *HASH_B = "bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb";

typedef struct seen {
    size_t n;
    uint64_t task[16];
    double first[16];
    uint64_t offset[16];
} seen;

static int collect(void *user, uint64_t task, const void *payload, size_t len, uint64_t offset,
                   ns_err *err)
{
    seen *s = user;
    s->offset[s->n < 16 ? s->n : 15] = offset;
    CU_ASSERT_EQUAL(len, NPAY * sizeof(double));
    if (s->n < 16) {
        s->task[s->n] = task;
        memcpy(&s->first[s->n], payload, sizeof(double));
        /* every payload is task + 0.25 * i */
        const double *d = payload;
        for (int i = 0; i < NPAY; i++)
            CU_ASSERT_EQUAL(d[i], (double)task + 0.25 * i);
    }
    s->n++;
    return NS_OK;
}

static char dir[64];

static void fresh_dir(void)
{
    snprintf(dir, sizeof dir, "/tmp/ns_journal_XXXXXX");
    CU_ASSERT_PTR_NOT_NULL_FATAL(mkdtemp(dir));
}

static void remove_dir(void)
{
    DIR *d = opendir(dir);
    struct dirent *e;
    while (d && (e = readdir(d))) {
        char p[512];
        snprintf(p, sizeof p, "%s/%s", dir, e->d_name);
        if (e->d_name[0] != '.')
            unlink(p);
    }
    if (d)
        closedir(d);
    rmdir(dir);
}

/* rank's part of segment 1, opened for appending */
static int open_part_fd(int rank)
{
    char p[256];
    snprintf(p, sizeof p, "%s/journal.s1.r%d.nsj", dir, rank);
    return open(p, O_WRONLY | O_APPEND);
}

static off_t size_of(const char *name)
{
    char p[256];
    struct stat st;
    snprintf(p, sizeof p, "%s/%s", dir, name);
    return stat(p, &st) == 0 ? st.st_size : -1;
}

/* Append a record for each of tasks[0..n) (payload task + 0.25 i); its payload offset into
 * off[k] when off is not NULL. */
static void append_tasks(ns_journal *j, const uint64_t *tasks, size_t n, uint64_t *off)
{
    for (size_t k = 0; k < n; k++) {
        double d[NPAY];
        for (int i = 0; i < NPAY; i++)
            d[i] = (double)tasks[k] + 0.25 * i;
        ns_err err;
        CU_ASSERT_EQUAL(ns_journal_append(j, tasks[k], d, NULL, off ? &off[k] : NULL, &err), NS_OK);
    }
}

static off_t file_size(void)
{
    char p[128];
    struct stat st;
    snprintf(p, sizeof p, "%s/%s", dir, NS_JOURNAL_FILE);
    return stat(p, &st) == 0 ? st.st_size : -1;
}

static void test_roundtrip(void)
{
    fresh_dir();
    ns_journal *j = NULL;
    ns_err err;
    ns_journal_scan sc;
    seen s = {0};
    CU_ASSERT_EQUAL_FATAL(ns_journal_open(dir, HASH_A, NPAY * sizeof(double), 0, collect, &s, &j,
                                          &sc, &err), NS_OK);
    CU_ASSERT_EQUAL(s.n, 0);
    CU_ASSERT_EQUAL(sc.n_records, 0);
    uint64_t t[] = {7, 2, 11};
    append_tasks(j, t, 3, NULL);
    ns_journal_close(j);
    /* reopen without --resume: refused, nothing changed */
    off_t before = file_size();
    CU_ASSERT_EQUAL(ns_journal_open(dir, HASH_A, NPAY * sizeof(double), 0, collect, &s, &j, &sc,
                                    &err), NS_ERR_INVALID);
    CU_ASSERT_PTR_NULL(j);
    CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "--resume"));
    CU_ASSERT_EQUAL(file_size(), before);
    /* resume: the three records in file order */
    CU_ASSERT_EQUAL_FATAL(ns_journal_open(dir, HASH_A, NPAY * sizeof(double), 1, collect, &s, &j,
                                          &sc, &err), NS_OK);
    CU_ASSERT_EQUAL(s.n, 3);
    CU_ASSERT_EQUAL(s.task[0], 7);
    CU_ASSERT_EQUAL(s.task[1], 2);
    CU_ASSERT_EQUAL(s.task[2], 11);
    CU_ASSERT_EQUAL(sc.n_records, 3);
    CU_ASSERT_EQUAL(sc.n_damaged, 0);
    CU_ASSERT_EQUAL(sc.torn_bytes, 0);
    /* random access to a stored payload: values 2..3 of task 2's record are 2.5, 2.75 */
    double two[2] = {0, 0};
    CU_ASSERT_EQUAL(ns_journal_read(j, s.offset[1], 2 * sizeof(double), sizeof two, two, &err), NS_OK);
    CU_ASSERT_EQUAL(two[0], 2.5);
    CU_ASSERT_EQUAL(two[1], 2.75);
    CU_ASSERT_EQUAL(ns_journal_read(j, s.offset[1], 4 * sizeof(double), sizeof two, two, &err),
                    NS_ERR_INVALID); /* past the record's end */
    /* an append reports where its payload lies */
    double d[NPAY] = {9, 9.25, 9.5, 9.75, 10};
    uint64_t off = 0;
    CU_ASSERT_EQUAL(ns_journal_append(j, 9, d, NULL, &off, &err), NS_OK);
    double back = 0;
    CU_ASSERT_EQUAL(ns_journal_read(j, off, 4 * sizeof(double), sizeof back, &back, &err), NS_OK);
    CU_ASSERT_EQUAL(back, 10.0);
    ns_journal_close(j);
    remove_dir();
}

/* ns_journal_task_at reads the task of the record at a payload offset and refuses offsets where
 * no record's payload starts; ns_results_check finds offsets that hold another shard's record. */
static void test_task_at(void)
{
    fresh_dir();
    ns_journal *j = NULL;
    ns_err err;
    seen s = {0};
    CU_ASSERT_EQUAL_FATAL(ns_journal_open(dir, HASH_A, NPAY * sizeof(double), 0, collect, &s, &j,
                                          NULL, &err), NS_OK);
    uint64_t t[] = {1, 0, 2}, off[3] = {0, 0, 0};
    append_tasks(j, t, 3, off);
    for (size_t k = 0; k < 3; k++) {
        uint64_t task = 99;
        CU_ASSERT_EQUAL(ns_journal_task_at(j, off[k], &task, &err), NS_OK);
        CU_ASSERT_EQUAL(task, t[k]);
    }
    uint64_t task = 99;
    /* inside a payload, before the first record, past the end: no record there */
    CU_ASSERT_EQUAL(ns_journal_task_at(j, off[1] + 8, &task, &err), NS_ERR_INVALID);
    CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "no record starts at byte"));
    CU_ASSERT_EQUAL(ns_journal_task_at(j, 16, &task, &err), NS_ERR_INVALID);
    CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "no record's payload at byte 16"));
    CU_ASSERT_NOT_EQUAL(ns_journal_task_at(j, off[2] + NPAY * sizeof(double) + 88, &task, &err),
                        NS_OK);
    CU_ASSERT_EQUAL(task, 99);

    /* the results store: right offsets pass; two swapped ones name the first wrong shard */
    ns_results res;
    CU_ASSERT_EQUAL_FATAL(ns_results_init(&res, 3, &err), NS_OK);
    CU_ASSERT_EQUAL(ns_results_check(&res, j, &err), NS_OK); /* nothing recorded yet */
    for (size_t k = 0; k < 3; k++)
        CU_ASSERT_EQUAL(ns_results_set(&res, t[k], off[k], &err), NS_OK);
    CU_ASSERT_EQUAL(ns_results_check(&res, j, &err), NS_OK);
    uint64_t keep = res.offset[0];
    res.offset[0] = res.offset[2];
    res.offset[2] = keep;
    CU_ASSERT_EQUAL(ns_results_check(&res, j, &err), NS_ERR_INVALID);
    CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "holds task 2, not shard 0's"));
    res.offset[2] = res.offset[0] + 8;
    res.offset[0] = keep;
    CU_ASSERT_EQUAL(ns_results_check(&res, j, &err), NS_ERR_INVALID);
    CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "no record starts at byte"));
    ns_results_free(&res);
    ns_journal_close(j);
    remove_dir();
}

/* Parts: records appended to a worker's own file are found where ns_journal_part_location says,
 * through the writer's journal and through one attached with its parts; ns_journal_check_part
 * refuses a part that is not there; an existing part refuses a fresh start; a resumed open scans
 * journal.nsj, then the parts in (segment, rank) order, numbers the next segment past them and
 * leaves a part's torn tail as it is; a part of another sweep is refused. */
static void test_parts(void)
{
    fresh_dir();
    ns_journal *j = NULL, *p1 = NULL, *p2 = NULL, *a = NULL, *again = NULL;
    ns_err err;
    seen s = {0};
    size_t len = NPAY * sizeof(double);
    CU_ASSERT_EQUAL_FATAL(ns_journal_open(dir, HASH_A, len, 0, collect, &s, &j, NULL, &err), NS_OK);
    CU_ASSERT_EQUAL(ns_journal_next_segment(j), 1);
    /* written in the order rank 2, rank 1: the scan orders by name, not by creation */
    CU_ASSERT_EQUAL_FATAL(ns_journal_create_part(dir, HASH_A, len, 1, 2, &p2, &err), NS_OK);
    CU_ASSERT_EQUAL_FATAL(ns_journal_create_part(dir, HASH_A, len, 1, 1, &p1, &err), NS_OK);
    CU_ASSERT_EQUAL(ns_journal_create_part(dir, HASH_A, len, 1, 2, &again, &err), NS_ERR_IO);
    CU_ASSERT_PTR_NULL(again); /* O_EXCL: a part is never opened for writing twice */
    CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "journal.s1.r2.nsj"));
    CU_ASSERT_EQUAL(ns_journal_check_part(j, 1, 2, &err), NS_OK);
    CU_ASSERT_EQUAL(ns_journal_check_part(j, 1, 3, &err), NS_ERR_IO); /* no such file */
    CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "journal.s1.r3.nsj"));
    uint64_t t0[] = {0}, t1[] = {1, 3}, t2[] = {2}, o0[1], o1[2], o2[1], loc[4];
    append_tasks(j, t0, 1, o0);
    append_tasks(p2, t2, 1, o2);
    append_tasks(p1, t1, 2, o1);
    loc[0] = o0[0];
    CU_ASSERT_EQUAL(ns_journal_part_location(j, 1, 1, o1[0], &loc[1], &err), NS_OK);
    CU_ASSERT_EQUAL(ns_journal_part_location(j, 1, 1, o1[1], &loc[3], &err), NS_OK);
    CU_ASSERT_EQUAL(ns_journal_part_location(j, 1, 2, o2[0], &loc[2], &err), NS_OK);
    CU_ASSERT_EQUAL(o0[0], o1[0]); /* the same byte of two files ... */
    CU_ASSERT_NOT_EQUAL(loc[0], loc[1]); /* ... are two locations */
    CU_ASSERT_STRING_EQUAL(ns_journal_file(j, loc[3]) + strlen(dir), "/journal.s1.r1.nsj");
    CU_ASSERT_EQUAL(ns_journal_byte(loc[3]), o1[1]);
    const uint32_t *ids = NULL;
    CU_ASSERT_EQUAL_FATAL(ns_journal_parts(j, &ids), 2); /* the missing rank 3 was not kept */
    CU_ASSERT(ids[0] == 1 && ids[1] == 2 && ids[2] == 1 && ids[3] == 1); /* order of first use */
    CU_ASSERT_EQUAL(ns_journal_sync(p1, &err), NS_OK);
    CU_ASSERT_EQUAL(ns_journal_sync(p2, &err), NS_OK);
    CU_ASSERT_EQUAL_FATAL(ns_journal_attach(dir, len, ids, 2, &a, &err), NS_OK);
    ns_results res;
    CU_ASSERT_EQUAL_FATAL(ns_results_init(&res, 4, &err), NS_OK);
    for (uint64_t t = 0; t < 4; t++) {
        double v[2] = {0, 0};
        uint64_t task = 99;
        CU_ASSERT_EQUAL(ns_journal_read(j, loc[t], sizeof(double), sizeof(double), &v[0], &err),
                        NS_OK);
        CU_ASSERT_EQUAL(ns_journal_read(a, loc[t], sizeof(double), sizeof(double), &v[1], &err),
                        NS_OK);
        CU_ASSERT_EQUAL(v[0], (double)t + 0.25);
        CU_ASSERT_EQUAL(v[1], (double)t + 0.25);
        CU_ASSERT_EQUAL(ns_journal_task_at(a, loc[t], &task, &err), NS_OK);
        CU_ASSERT_EQUAL(task, t);
        CU_ASSERT_EQUAL(ns_results_set(&res, t, loc[t], &err), NS_OK);
    }
    CU_ASSERT_EQUAL(ns_results_check(&res, a, &err), NS_OK);
    res.offset[1] = loc[3]; /* task 3's record, in the same part */
    CU_ASSERT_EQUAL(ns_results_check(&res, a, &err), NS_ERR_INVALID);
    CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "journal.s1.r1.nsj: the record at payload offset"));
    ns_results_free(&res);
    /* a location of a part the attached journal was not given */
    double unread;
    CU_ASSERT_EQUAL(ns_journal_read(a, loc[3] + (UINT64_C(4) << 40), 0, 8, &unread, &err),
                    NS_ERR_INVALID);
    ns_journal_close(a);
    ns_journal_close(p1);
    ns_journal_close(j);
    /* a stopped writer's incomplete record at the end of rank 2's part */
    int fd = open_part_fd(2);
    CU_ASSERT_EQUAL(write(fd, "torn", 4), 4);
    close(fd);
    off_t torn_size = size_of("journal.s1.r2.nsj");
    ns_journal_close(p2);
    CU_ASSERT_EQUAL(ns_journal_open(dir, HASH_A, len, 0, collect, &s, &j, NULL, &err),
                    NS_ERR_INVALID);
    CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "exists: pass --resume"));
    char main_path[256];
    snprintf(main_path, sizeof main_path, "%s/%s", dir, NS_JOURNAL_FILE);
    rename(main_path, "/tmp/ns_journal_main.moved"); /* a part alone refuses a fresh start too */
    CU_ASSERT_EQUAL(ns_journal_open(dir, HASH_A, len, 0, collect, &s, &j, NULL, &err),
                    NS_ERR_INVALID);
    CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "journal.s1.r1.nsj exists: pass --resume"));
    CU_ASSERT_EQUAL(size_of(NS_JOURNAL_FILE), -1);
    rename("/tmp/ns_journal_main.moved", main_path);
    /* a part its worker created but never wrote a header to: nothing, not an incomplete record,
     * but its segment counts */
    char empty[256];
    snprintf(empty, sizeof empty, "%s/journal.s3.r5.nsj", dir);
    fd = open(empty, O_WRONLY | O_CREAT | O_EXCL, 0644);
    CU_ASSERT(fd >= 0);
    close(fd);
    ns_journal_scan sc;
    memset(&s, 0, sizeof s);
    CU_ASSERT_EQUAL_FATAL(ns_journal_open(dir, HASH_A, len, 1, collect, &s, &j, &sc, &err), NS_OK);
    CU_ASSERT_EQUAL(s.n, 4);
    CU_ASSERT(s.task[0] == 0 && s.task[1] == 1 && s.task[2] == 3 && s.task[3] == 2);
    CU_ASSERT_EQUAL(sc.n_records, 4);
    CU_ASSERT_EQUAL(sc.n_parts, 3);
    CU_ASSERT_EQUAL(sc.torn_parts, 1);
    CU_ASSERT_EQUAL(sc.torn_bytes, 0);
    CU_ASSERT_EQUAL(ns_journal_next_segment(j), 4);
    CU_ASSERT_EQUAL(size_of("journal.s1.r2.nsj"), torn_size); /* left as it is */
    for (size_t k = 0; k < 4; k++) { /* the scan's locations read the same records */
        uint64_t task = 99;
        CU_ASSERT_EQUAL(ns_journal_task_at(j, s.offset[k], &task, &err), NS_OK);
        CU_ASSERT_EQUAL(task, s.task[k]);
    }
    ns_journal_close(j);
    /* a part of another sweep is refused, naming it */
    CU_ASSERT_EQUAL_FATAL(ns_journal_create_part(dir, HASH_B, len, 7, 1, &again, &err), NS_OK);
    ns_journal_close(again);
    CU_ASSERT_EQUAL(ns_journal_open(dir, HASH_A, len, 1, collect, &s, &j, NULL, &err),
                    NS_ERR_INVALID);
    CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "journal.s7.r1.nsj belongs to a different sweep"));
    remove_dir();
}

/* More parts than the journal holds open at once (256, J_MAX_OPEN): 600 parts of one record each
 * (task = rank), found by a resume in (segment, rank) order, read back through the scanning journal
 * and through an attached one in an order that alternates between the first and the last parts,
 * so that files are closed and reopened all along. */
#define MANY_PARTS 600
typedef struct many {
    size_t n;
    uint64_t task[MANY_PARTS + 1], loc[MANY_PARTS + 1];
} many;

static int collect_many(void *user, uint64_t task, const void *payload, size_t len,
                        uint64_t offset, ns_err *err)
{
    (void)payload, (void)len, (void)err;
    many *m = user;
    if (m->n <= MANY_PARTS)
        m->task[m->n] = task, m->loc[m->n] = offset;
    m->n++;
    return NS_OK;
}

static void test_many_parts(void)
{
    fresh_dir();
    ns_journal *j = NULL, *a = NULL;
    ns_err err;
    ns_journal_scan sc;
    size_t len = NPAY * sizeof(double);
    static many m;
    memset(&m, 0, sizeof m);
    CU_ASSERT_EQUAL_FATAL(ns_journal_open(dir, HASH_A, len, 0, NULL, NULL, &j, NULL, &err), NS_OK);
    ns_journal_close(j);
    for (uint32_t r = 1; r <= MANY_PARTS; r++) {
        ns_journal *p = NULL;
        uint64_t t[] = {r};
        CU_ASSERT_EQUAL_FATAL(ns_journal_create_part(dir, HASH_A, len, 1, r, &p, &err), NS_OK);
        append_tasks(p, t, 1, NULL);
        ns_journal_close(p);
    }
    CU_ASSERT_EQUAL_FATAL(ns_journal_open(dir, HASH_A, len, 1, collect_many, &m, &j, &sc, &err),
                          NS_OK);
    CU_ASSERT_EQUAL_FATAL(m.n, MANY_PARTS);
    CU_ASSERT_EQUAL(sc.n_parts, MANY_PARTS);
    int in_order = 1;
    for (size_t k = 0; k < MANY_PARTS; k++)
        in_order &= m.task[k] == k + 1; /* rank order, not name order (r10 after r1) */
    CU_ASSERT(in_order);
    const uint32_t *ids = NULL;
    CU_ASSERT_EQUAL_FATAL(ns_journal_parts(j, &ids), MANY_PARTS);
    CU_ASSERT_EQUAL_FATAL(ns_journal_attach(dir, len, ids, MANY_PARTS, &a, &err), NS_OK);
    size_t right = 0;
    for (int pass = 0; pass < 2; pass++)
        for (size_t q = 0; q < MANY_PARTS; q++) {
            size_t k = q % 2 ? MANY_PARTS - 1 - q / 2 : q / 2; /* 0, 599, 1, 598, ... */
            double v[2] = {-1, -1};
            uint64_t task = 0;
            int ok = ns_journal_read(j, m.loc[k], 2 * sizeof(double), sizeof(double), &v[0],
                                     &err) == NS_OK &&
                     ns_journal_read(a, m.loc[k], 2 * sizeof(double), sizeof(double), &v[1],
                                     &err) == NS_OK &&
                     ns_journal_task_at(a, m.loc[k], &task, &err) == NS_OK;
            right += ok && v[0] == (double)m.task[k] + 0.5 && v[1] == v[0] && task == m.task[k];
        }
    CU_ASSERT_EQUAL(right, 2 * MANY_PARTS);
    ns_journal_close(a);
    ns_journal_close(j);
    remove_dir();
}

static void test_torn_tail(void)
{
    fresh_dir();
    ns_journal *j = NULL;
    ns_err err;
    ns_journal_scan sc;
    seen s = {0};
    CU_ASSERT_EQUAL_FATAL(ns_journal_open(dir, HASH_A, NPAY * sizeof(double), 0, NULL, NULL, &j,
                                          &sc, &err), NS_OK);
    uint64_t t[] = {0, 1};
    append_tasks(j, t, 2, NULL);
    ns_journal_close(j);
    off_t good = file_size();
    /* a torn record: the first 50 bytes of a third one */
    char p[128];
    snprintf(p, sizeof p, "%s/%s", dir, NS_JOURNAL_FILE);
    FILE *f = fopen(p, "ab");
    CU_ASSERT_PTR_NOT_NULL_FATAL(f);
    unsigned char junk[50];
    memset(junk, 0x4e, sizeof junk);
    fwrite(junk, 1, sizeof junk, f);
    fclose(f);
    CU_ASSERT_EQUAL_FATAL(ns_journal_open(dir, HASH_A, NPAY * sizeof(double), 1, collect, &s, &j,
                                          &sc, &err), NS_OK);
    CU_ASSERT_EQUAL(s.n, 2);
    CU_ASSERT_EQUAL(sc.torn_bytes, 50);
    CU_ASSERT_EQUAL(sc.n_damaged, 0);
    CU_ASSERT_EQUAL(file_size(), good); /* cut off */
    uint64_t t2[] = {5};
    append_tasks(j, t2, 1, NULL);
    ns_journal_close(j);
    memset(&s, 0, sizeof s);
    CU_ASSERT_EQUAL_FATAL(ns_journal_open(dir, HASH_A, NPAY * sizeof(double), 1, collect, &s, &j,
                                          &sc, &err), NS_OK);
    CU_ASSERT_EQUAL(s.n, 3);
    CU_ASSERT_EQUAL(s.task[2], 5);
    CU_ASSERT_EQUAL(sc.torn_bytes, 0);
    ns_journal_close(j);

    /* flip one payload byte of the MIDDLE record: only that record is skipped (reported with
     * its offset), the one after it is kept */
    off_t end = file_size(), rec = (end - 128) / 3;
    int fd = open(p, O_RDWR);
    CU_ASSERT_FATAL(fd >= 0);
    unsigned char b;
    off_t at = 128 + rec + rec - 3; /* a payload byte of record 1 */
    CU_ASSERT_EQUAL(pread(fd, &b, 1, at), 1);
    b ^= 0x01;
    CU_ASSERT_EQUAL(pwrite(fd, &b, 1, at), 1);
    close(fd);
    memset(&s, 0, sizeof s);
    CU_ASSERT_EQUAL_FATAL(ns_journal_open(dir, HASH_A, NPAY * sizeof(double), 1, collect, &s, &j,
                                          &sc, &err), NS_OK);
    CU_ASSERT_EQUAL(s.n, 2);
    CU_ASSERT_EQUAL(s.task[0], 0);
    CU_ASSERT_EQUAL(s.task[1], 5); /* the record after the damaged one */
    CU_ASSERT_EQUAL(sc.n_damaged, 1);
    CU_ASSERT_EQUAL(sc.first_damaged, (uint64_t)(128 + rec));
    CU_ASSERT_EQUAL(sc.torn_bytes, 0);
    CU_ASSERT_EQUAL(file_size(), end); /* nothing cut: the damaged slot stays, skipped */
    /* the recomputed task is appended after the last record and found on the next open */
    uint64_t t3[] = {1};
    append_tasks(j, t3, 1, NULL);
    ns_journal_close(j);
    memset(&s, 0, sizeof s);
    CU_ASSERT_EQUAL_FATAL(ns_journal_open(dir, HASH_A, NPAY * sizeof(double), 1, collect, &s, &j,
                                          &sc, &err), NS_OK);
    CU_ASSERT_EQUAL(s.n, 3);
    CU_ASSERT_EQUAL(s.task[2], 1);
    CU_ASSERT_EQUAL(sc.n_damaged, 1);
    ns_journal_close(j);
    remove_dir();
}

/* A journal of normsweep 0.1 (format 1) is refused with a message saying so, not misread. */
/* The producer's digest (what a worker sends with its result) is the one the journal computes
 * itself; a record stored with a wrong one is damaged on --resume (skipped, its task recomputed)
 * while its neighbours stay. Appends are visible to another open before any sync, and records
 * whose pages left the page cache (each append drops the one before) read back the same. */
/* An append that fails part-way (a file size limit here; a full disk alike) leaves no incomplete
 * record: the file is cut back to where the record began, a later append goes where it would
 * have, and the next scan finds every record and nothing torn -- in a worker's part, which no
 * resume would cut. */
static void test_failed_append(void)
{
    fresh_dir();
    ns_journal *j = NULL, *p = NULL;
    ns_err err;
    ns_journal_scan sc;
    seen s = {0};
    size_t len = NPAY * sizeof(double);
    CU_ASSERT_EQUAL_FATAL(ns_journal_open(dir, HASH_A, len, 0, NULL, NULL, &j, NULL, &err), NS_OK);
    CU_ASSERT_EQUAL_FATAL(ns_journal_create_part(dir, HASH_A, len, 1, 1, &p, &err), NS_OK);
    uint64_t t0[] = {0}, t1[] = {1};
    append_tasks(p, t0, 1, NULL);
    off_t good = size_of("journal.s1.r1.nsj");
    /* room for the record's 88-byte head and 12 of its 40 payload bytes: the payload's write
     * stops at the limit, then fails (EFBIG; SIGXFSZ ignored) */
    struct rlimit old_lim, lim;
    CU_ASSERT_EQUAL_FATAL(getrlimit(RLIMIT_FSIZE, &old_lim), 0);
    void (*old_handler)(int) = signal(SIGXFSZ, SIG_IGN);
    lim = old_lim;
    lim.rlim_cur = (rlim_t)good + 100;
    CU_ASSERT_EQUAL_FATAL(setrlimit(RLIMIT_FSIZE, &lim), 0);
    double d[NPAY] = {1.0, 1.25, 1.5, 1.75, 2.0};
    int rc = ns_journal_append(p, 1, d, NULL, NULL, &err);
    setrlimit(RLIMIT_FSIZE, &old_lim);
    signal(SIGXFSZ, old_handler);
    CU_ASSERT_EQUAL(rc, NS_ERR_IO);
    CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "journal.s1.r1.nsj: File too large"));
    CU_ASSERT_EQUAL(size_of("journal.s1.r1.nsj"), good); /* cut back: no incomplete record */
    append_tasks(p, t1, 1, NULL); /* the limit lifted: the same append succeeds, in place */
    CU_ASSERT_EQUAL(size_of("journal.s1.r1.nsj"), good + (off_t)(88 + len));
    ns_journal_close(p);
    ns_journal_close(j);
    CU_ASSERT_EQUAL_FATAL(ns_journal_open(dir, HASH_A, len, 1, collect, &s, &j, &sc, &err), NS_OK);
    CU_ASSERT_EQUAL(s.n, 2);
    CU_ASSERT_EQUAL(s.task[0], 0);
    CU_ASSERT_EQUAL(s.task[1], 1);
    CU_ASSERT_EQUAL(sc.torn_parts, 0);
    CU_ASSERT_EQUAL(sc.n_damaged, 0);
    ns_journal_close(j);
    remove_dir();
}

static void test_digest_and_sync(void)
{
    fresh_dir();
    ns_journal *j = NULL;
    ns_err err;
    ns_journal_scan sc;
    CU_ASSERT_EQUAL_FATAL(ns_journal_open(dir, HASH_A, NPAY * sizeof(double), 0, NULL, NULL, &j,
                                          &sc, &err), NS_OK);
    double d[3][NPAY];
    unsigned char md[3][NS_JOURNAL_DIGEST_LEN];
    for (int k = 0; k < 3; k++) {
        for (int i = 0; i < NPAY; i++)
            d[k][i] = (double)(20 + k) + 0.25 * i;
        CU_ASSERT_EQUAL(ns_journal_digest((uint64_t)(20 + k), d[k], sizeof d[k], md[k], &err),
                        NS_OK);
    }
    CU_ASSERT(memcmp(md[0], md[1], sizeof md[0]) != 0);
    md[1][5] ^= 1; /* task 21's digest does not match its payload */
    for (int k = 0; k < 3; k++)
        CU_ASSERT_EQUAL(ns_journal_append(j, (uint64_t)(20 + k), d[k], md[k], NULL, &err), NS_OK);
    /* not synced yet: a second open of the file (as --resume would) sees every record */
    ns_journal *r = NULL;
    seen s = {0};
    CU_ASSERT_EQUAL_FATAL(ns_journal_open(dir, HASH_A, NPAY * sizeof(double), 1, collect, &s, &r,
                                          &sc, &err), NS_OK);
    CU_ASSERT_EQUAL(s.n, 2);
    CU_ASSERT_EQUAL(s.task[0], 20);
    CU_ASSERT_EQUAL(s.task[1], 22);
    CU_ASSERT_EQUAL(sc.n_damaged, 1);
    /* the second record: after the 128-byte header and one record of 80 + 8 + 40 bytes */
    CU_ASSERT_EQUAL(sc.first_damaged, 256u);
    ns_journal_close(r);
    CU_ASSERT_EQUAL(ns_journal_sync(j, &err), NS_OK);
    CU_ASSERT_EQUAL(ns_journal_sync(j, &err), NS_OK); /* nothing new: no-op */
    ns_journal_close(j);
    seen s2 = {0};
    CU_ASSERT_EQUAL_FATAL(ns_journal_open(dir, HASH_A, NPAY * sizeof(double), 1, collect, &s2, &j,
                                          &sc, &err), NS_OK);
    CU_ASSERT_EQUAL(s2.n, 2);
    CU_ASSERT_EQUAL(sc.n_damaged, 1);
    ns_journal_close(j);
    remove_dir();
}

static void test_format1_refused(void)
{
    fresh_dir();
    char p[128];
    snprintf(p, sizeof p, "%s/%s", dir, NS_JOURNAL_FILE);
    unsigned char h[128];
    memset(h, 0, sizeof h);
    memcpy(h, "NSJOURN1", 8);
    FILE *f = fopen(p, "wb");
    CU_ASSERT_PTR_NOT_NULL_FATAL(f);
    fwrite(h, 1, sizeof h, f);
    fclose(f);
    ns_journal *j = NULL;
    ns_err err;
    CU_ASSERT_EQUAL(ns_journal_open(dir, HASH_A, NPAY * sizeof(double), 1, NULL, NULL, &j, NULL,
                                    &err), NS_ERR_INVALID);
    CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "journal format 1"));
    CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "METRICS version 2"));
    remove_dir();
}

/* One writer per directory: a second lock is refused naming the holder; released, it is free. */
static void test_lock(void)
{
    fresh_dir();
    ns_lock *a = NULL, *b = NULL;
    ns_err err;
    CU_ASSERT_EQUAL_FATAL(ns_lock_acquire(dir, "first run", &a, &err), NS_OK);
    char holder[256] = "";
    CU_ASSERT_TRUE(ns_lock_held_elsewhere(dir, holder, sizeof holder)); /* seen from another open */
    CU_ASSERT_PTR_NOT_NULL(strstr(holder, "first run"));
    CU_ASSERT_EQUAL(ns_lock_acquire(dir, "second run", &b, &err), NS_ERR_INVALID);
    CU_ASSERT_PTR_NULL(b);
    CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "in use by another normsweep run"));
    CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "first run"));
    char pid[32];
    snprintf(pid, sizeof pid, "pid %ld", (long)getpid());
    CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, pid));
    /* ns_lock_peek reads the record whether or not the lock is held: the holder's line, which
     * differs from the next holder's (how other ranks tell rank 0's directory from a copy) */
    char rec1[1024], rec3[1024], small[8];
    CU_ASSERT_EQUAL(ns_lock_peek(dir, rec1, sizeof rec1), 0);
    CU_ASSERT_STRING_EQUAL(rec1, holder);
    CU_ASSERT_PTR_NULL(strchr(rec1, '\n'));
    CU_ASSERT_EQUAL(ns_lock_peek(dir, small, sizeof small), 0); /* cut to the buffer */
    CU_ASSERT_EQUAL(strlen(small), sizeof small - 1);
    CU_ASSERT_EQUAL(strncmp(small, rec1, sizeof small - 1), 0);
    ns_lock_release(a);
    CU_ASSERT_EQUAL_FATAL(ns_lock_acquire(dir, "third run", &b, &err), NS_OK);
    ns_lock_release(b);
    CU_ASSERT_FALSE(ns_lock_held_elsewhere(dir, holder, sizeof holder));
    CU_ASSERT_EQUAL(ns_lock_peek(dir, rec3, sizeof rec3), 0); /* released: the record stays */
    CU_ASSERT_PTR_NOT_NULL(strstr(rec3, "third run"));
    CU_ASSERT(strcmp(rec1, rec3) != 0);
    char lp[128];
    snprintf(lp, sizeof lp, "%s/%s", dir, NS_LOCK_FILE);
    unlink(lp);
    CU_ASSERT_EQUAL(ns_lock_peek(dir, rec3, sizeof rec3), -1); /* no lock file */
    CU_ASSERT_STRING_EQUAL(rec3, "");
    FILE *f = fopen(lp, "w"); /* an empty record */
    CU_ASSERT_PTR_NOT_NULL_FATAL(f);
    fclose(f);
    CU_ASSERT_EQUAL(ns_lock_peek(dir, rec3, sizeof rec3), -1);
    unlink(lp);
    remove_dir();
}

static void test_other_sweep_refused(void)
{
    fresh_dir();
    ns_journal *j = NULL;
    ns_err err;
    CU_ASSERT_EQUAL_FATAL(ns_journal_open(dir, HASH_A, NPAY * sizeof(double), 0, NULL, NULL, &j,
                                          NULL, &err), NS_OK);
    uint64_t t[] = {3};
    append_tasks(j, t, 1, NULL);
    ns_journal_close(j);
    CU_ASSERT_EQUAL(ns_journal_open(dir, HASH_B, NPAY * sizeof(double), 1, NULL, NULL, &j, NULL,
                                    &err), NS_ERR_INVALID);
    CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "different sweep"));
    CU_ASSERT_EQUAL(ns_journal_open(dir, HASH_A, (NPAY + 1) * sizeof(double), 1, NULL, NULL, &j,
                                    NULL, &err), NS_ERR_INVALID);
    CU_ASSERT_EQUAL(ns_journal_open(dir, "short", NPAY * sizeof(double), 1, NULL, NULL, &j, NULL,
                                    &err), NS_ERR_INVALID);
    remove_dir();
}

static void test_sweep_hash(void)
{
    char a[65], b[65], c[65], d[65];
    ns_err err;
    CU_ASSERT_EQUAL(ns_journal_sweep_hash("seed: 1\n", "m", "t", "c", 10, a, &err), NS_OK);
    CU_ASSERT_EQUAL(ns_journal_sweep_hash("seed: 2\n", "m", "t", "c", 10, b, &err), NS_OK);
    CU_ASSERT_EQUAL(ns_journal_sweep_hash("seed: 1\n", "M", "t", "c", 10, c, &err), NS_OK);
    CU_ASSERT_EQUAL(ns_journal_sweep_hash("seed: 1\n", "m", "t", "c", 11, d, &err), NS_OK);
    CU_ASSERT_EQUAL(strlen(a), 64);
    CU_ASSERT(strcmp(a, b) != 0); /* sweep text */
    CU_ASSERT(strcmp(a, c) != 0); /* model checksum */
    CU_ASSERT(strcmp(a, d) != 0); /* record size */
    char again[65];
    ns_journal_sweep_hash("seed: 1\n", "m", "t", "c", 10, again, &err);
    CU_ASSERT_STRING_EQUAL(a, again);
}

int main(void)
{
    if (CU_initialize_registry() != CUE_SUCCESS)
        return 1;
    CU_pSuite s = CU_add_suite("journal", NULL, NULL);
    CU_add_test(s, "append and resume round trip", test_roundtrip);
    CU_add_test(s, "task id at a payload offset, checked against the shards", test_task_at);
    CU_add_test(s, "torn tail cut, damaged middle record skipped", test_torn_tail);
    CU_add_test(s, "parts: written by one rank, read by location, scanned, never cut",
                test_parts);
    CU_add_test(s, "a failed append leaves no incomplete record", test_failed_append);
    CU_add_test(s, "more parts than are held open at once", test_many_parts);
    CU_add_test(s, "producer digests, damaged record, appends visible before sync",
                test_digest_and_sync);
    CU_add_test(s, "format 1 journals refused", test_format1_refused);
    CU_add_test(s, "one writer per directory (lock)", test_lock);
    CU_add_test(s, "other sweep or record size refused", test_other_sweep_refused);
    CU_add_test(s, "sweep hash covers text, inputs and record size", test_sweep_hash);
    return ns_test_run_all();
}

/* ns_journal: append-only, checksummed record of completed tasks, synced in groups (see
 * ns_journal.h). */
#include "journal/ns_journal.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/ns_file.h"
#include "common/ns_sha256.h"

/* File layout (native byte order):
 *   header (128 bytes): "NSJOURN2" | u32 version | u32 header size | u64 payload_len |
 *                       double 1.0 (format probe) | char sweep_hash[64] | pad | u64 FNV-1a of
 *                       bytes [0, 120)
 *   record:             u32 "NSR2" | u32 0 | u64 payload_len | char sha256[64] of (task, payload)
 *                       | u64 task | payload
 * Every record has the same size, so record k starts at 128 + k * size whatever the others hold:
 * a damaged record is skipped without losing the ones after it. Format 1 ("NSJOURN1", normsweep
 * 0.1, METRICS version 1) held other values and is refused. */
#define J_MAGIC "NSJOURN2"
#define J_MAGIC_V1 "NSJOURN1"
#define J_VERSION 2u
#define J_HEADER_SIZE 128u
#define J_REC_MAGIC 0x3252534eu /* "NSR2" */
#define J_REC_HEAD 80u          /* magic, pad, len, sha: the bytes before the task id */

/* A location (ns_journal.h) packs a file number and a byte offset: file 0 is the journal's own
 * file, file k >= 1 its k-th part. */
#define J_OFFSET_BITS 40
#define J_OFFSET_MASK ((UINT64_C(1) << J_OFFSET_BITS) - 1)
#define J_MAX_FILES (UINT64_C(1) << (64 - J_OFFSET_BITS))
/* Part files held open at once for reading; more are closed and reopened as needed. */
#define J_MAX_OPEN 256

typedef struct jpart {
    char *path;
    int fd; /* -1 while closed */
} jpart;

/* The parts: another rank's files, read only. Separately allocated, so that reads through a
 * const journal may open and close them. */
typedef struct jparts {
    jpart *p;
    uint32_t *ids; /* (segment, rank) per part, in part order */
    size_t n, cap, nopen;
} jparts;

struct ns_journal {
    int fd;
    char *path, *dir;
    char hash[65];      /* the sweep's, as every file's header records it */
    size_t payload_len;
    unsigned char *buf; /* one record: head + task + payload (for reading) */
    int dirty;          /* appended since the last sync */
    off_t prev_at, prev_len; /* the last record, its write-back started (prev_len 0: none) */
    uint32_t next_segment;   /* 1 + the highest run segment of any part file found */
    jparts *parts;
};

int ns_journal_sweep_hash(const char *yaml_text, const char *model_sha256,
                          const char *tokenizer_sha256, const char *corpus_sha256,
                          size_t payload_doubles, char hex[65], ns_err *err)
{
    size_t n = strlen(yaml_text) + strlen(model_sha256) + strlen(tokenizer_sha256) +
               strlen(corpus_sha256) + 128;
    char *s = malloc(n);
    if (!s)
        return ns_fail(err, NS_ERR_NOMEM, "out of memory");
    int len = snprintf(s, n, "%s\n--\nmodel %s\ntokenizer %s\ncorpus %s\npayload %zu\n", yaml_text,
                       model_sha256, tokenizer_sha256, corpus_sha256, payload_doubles);
    int rc = ns_sha256_buffer(s, (size_t)len, hex, err);
    free(s);
    return rc;
}

static uint64_t fnv1a(const unsigned char *p, size_t n)
{
    uint64_t h = 1469598103934665603ull;
    for (size_t i = 0; i < n; i++) {
        h ^= p[i];
        h *= 1099511628211ull;
    }
    return h;
}

static void make_header(unsigned char *h, const char *hash, size_t payload_len)
{
    memset(h, 0, J_HEADER_SIZE);
    uint32_t v = J_VERSION, hs = J_HEADER_SIZE;
    uint64_t pl = payload_len;
    double one = 1.0;
    memcpy(h, J_MAGIC, 8);
    memcpy(h + 8, &v, 4);
    memcpy(h + 12, &hs, 4);
    memcpy(h + 16, &pl, 8);
    memcpy(h + 24, &one, 8);
    memcpy(h + 32, hash, 64);
    uint64_t c = fnv1a(h, 120);
    memcpy(h + 120, &c, 8);
}

static int write_full(int fd, const void *data, size_t len, const char *path, ns_err *err)
{
    const unsigned char *p = data;
    while (len > 0) {
        ssize_t w = write(fd, p, len);
        if (w < 0) {
            if (errno == EINTR)
                continue;
            return ns_fail(err, NS_ERR_IO, "write %s: %s", path, strerror(errno));
        }
        p += w;
        len -= (size_t)w;
    }
    return NS_OK;
}

static int read_full(int fd, void *data, size_t len, size_t *got)
{
    unsigned char *p = data;
    size_t n = 0;
    while (n < len) {
        ssize_t r = read(fd, p + n, len - n);
        if (r < 0) {
            if (errno == EINTR)
                continue;
            return -1;
        }
        if (r == 0)
            break;
        n += (size_t)r;
    }
    *got = n;
    return 0;
}

/* Read the records of an open file (fd, path; file number `file` in locations) from start:
 * fixed-size slots; a complete slot whose magic, length or checksum is wrong is damaged and
 * skipped (counted in scan); an incomplete last slot is a torn tail (*torn its bytes). *good_end
 * receives the end of the last complete slot. */
static int scan_records(ns_journal *j, int fd, const char *path, uint64_t file, off_t start,
                        ns_journal_record_fn fn, void *user, off_t *good_end, size_t *torn,
                        ns_journal_scan *scan, ns_err *err)
{
    size_t rec_size = J_REC_HEAD + 8 + j->payload_len;
    off_t pos = start;
    *torn = 0;
    if (lseek(fd, start, SEEK_SET) < 0)
        return ns_fail(err, NS_ERR_IO, "seek %s: %s", path, strerror(errno));
    for (;;) {
        size_t got = 0;
        if (read_full(fd, j->buf, rec_size, &got) != 0)
            return ns_fail(err, NS_ERR_IO, "read %s: %s", path, strerror(errno));
        if (got < rec_size) {
            *torn = got; /* an append that never completed */
            break;
        }
        if ((uint64_t)pos + rec_size > J_OFFSET_MASK)
            return ns_fail(err, NS_ERR_INVALID, "%s: larger than a journal file may be (%llu "
                           "bytes)", path, (unsigned long long)J_OFFSET_MASK);
        uint32_t magic;
        uint64_t len;
        memcpy(&magic, j->buf, 4);
        memcpy(&len, j->buf + 8, 8);
        int ok = magic == J_REC_MAGIC && len == j->payload_len;
        if (ok) {
            char hex[NS_SHA256_HEX_LEN + 1];
            NS_TRY(ns_sha256_buffer(j->buf + J_REC_HEAD, 8 + j->payload_len, hex, err));
            ok = memcmp(hex, j->buf + 16, 64) == 0;
        }
        if (!ok) {
            if (scan->n_damaged++ == 0) {
                scan->first_damaged = (uint64_t)pos;
                scan->first_damaged_file = path;
            }
        } else {
            uint64_t task;
            memcpy(&task, j->buf + J_REC_HEAD, 8);
            scan->n_records++;
            if (fn)
                NS_TRY(fn(user, task, j->buf + J_REC_HEAD + 8, j->payload_len,
                          file << J_OFFSET_BITS | ((uint64_t)pos + J_REC_HEAD + 8), err));
        }
        pos += (off_t)rec_size;
    }
    *good_end = pos;
    return NS_OK;
}

/* The header of an existing journal against the one wanted; NS_OK or NS_ERR_INVALID saying why. */
static int check_header(const char *path, const unsigned char *have, const unsigned char *want,
                        const char *sweep_hash, ns_err *err)
{
    if (memcmp(have, J_MAGIC_V1, 8) == 0)
        return ns_fail(err, NS_ERR_INVALID,
                       "%s was written by normsweep 0.1 (journal format 1, METRICS version 1): "
                       "its values are not those of METRICS version 2 and cannot be resumed; "
                       "remove it (or choose another --checkpoint-dir) to start afresh", path);
    uint64_t have_check;
    memcpy(&have_check, have + 120, 8);
    if (memcmp(have, J_MAGIC, 8) != 0 || fnv1a(have, 120) != have_check)
        return ns_fail(err, NS_ERR_INVALID, "%s is not a normsweep journal (bad header); remove "
                       "it to start afresh", path);
    if (memcmp(have + 8, want + 8, 24) != 0 || memcmp(have + 32, sweep_hash, 64) != 0)
        return ns_fail(err, NS_ERR_INVALID,
                       "%s belongs to a different sweep (sweep text, model or record size "
                       "changed); refusing to resume from it", path);
    return NS_OK;
}

static int open_checked(const char *path, size_t payload_len, const char *hash, int *fd,
                        unsigned char *have, ns_err *err);

/* A new journal object for dir whose records hold payload_len bytes; path is set by the caller. */
static ns_journal *journal_new(const char *dir, size_t payload_len, ns_err *err)
{
    ns_journal *j = calloc(1, sizeof *j);
    if (j) {
        j->fd = -1;
        j->payload_len = payload_len;
        j->next_segment = 1;
        j->dir = strdup(dir);
        j->buf = malloc(J_REC_HEAD + 8 + payload_len);
        j->parts = calloc(1, sizeof *j->parts);
    }
    if (!j || !j->dir || !j->buf || !j->parts) {
        ns_journal_close(j);
        ns_fail(err, NS_ERR_NOMEM, "journal: out of memory (%zu-byte records)", payload_len);
        return NULL;
    }
    return j;
}

static char *part_name(uint32_t segment, uint32_t rank)
{
    return ns_str_printf(NS_JOURNAL_PART_PREFIX "%u.r%u.nsj", segment, rank);
}

/* Add part (segment, rank) to j's parts, closed; *file receives its file number. */
static int add_part(ns_journal *j, uint32_t segment, uint32_t rank, uint64_t *file, ns_err *err)
{
    jparts *ps = j->parts;
    if (ps->n + 1 >= J_MAX_FILES)
        return ns_fail(err, NS_ERR_INVALID, "journal %s: more than %llu files", j->dir,
                       (unsigned long long)J_MAX_FILES - 1);
    if (ps->n == ps->cap) {
        size_t cap = ps->cap ? 2 * ps->cap : 16;
        jpart *p = realloc(ps->p, cap * sizeof *p);
        if (p)
            ps->p = p;
        uint32_t *ids = realloc(ps->ids, 2 * cap * sizeof *ids);
        if (ids)
            ps->ids = ids;
        if (!p || !ids)
            return ns_fail(err, NS_ERR_NOMEM, "journal: out of memory");
        ps->cap = cap;
    }
    char *name = part_name(segment, rank);
    char *path = name ? ns_path_join(j->dir, name) : NULL;
    free(name);
    if (!path)
        return ns_fail(err, NS_ERR_NOMEM, "journal: out of memory");
    ps->p[ps->n] = (jpart){path, -1};
    ps->ids[2 * ps->n] = segment;
    ps->ids[2 * ps->n + 1] = rank;
    *file = ++ps->n;
    if (segment >= j->next_segment)
        j->next_segment = segment + 1;
    return NS_OK;
}

static int cmp_ids(const void *a, const void *b)
{
    const uint32_t *x = a, *y = b;
    return x[0] != y[0] ? (x[0] > y[0]) - (x[0] < y[0]) : (x[1] > y[1]) - (x[1] < y[1]);
}

/* The part files in dir: (segment, rank) pairs in that order, by name "journal.s<S>.r<R>.nsj"
 * exactly as part_name writes it (*ids: caller frees). */
static int list_parts(const char *dir, uint32_t **ids, size_t *n, ns_err *err)
{
    *ids = NULL;
    *n = 0;
    DIR *d = opendir(dir);
    if (!d)
        return ns_fail(err, NS_ERR_IO, "read directory %s: %s", dir, strerror(errno));
    size_t cap = 0;
    int rc = NS_OK;
    struct dirent *e;
    while (rc == NS_OK && (e = readdir(d))) {
        unsigned s, r;
        if (strncmp(e->d_name, NS_JOURNAL_PART_PREFIX, strlen(NS_JOURNAL_PART_PREFIX)) != 0 ||
            sscanf(e->d_name, NS_JOURNAL_PART_PREFIX "%u.r%u.nsj", &s, &r) != 2)
            continue;
        char *canon = part_name(s, r);
        int same = canon && strcmp(canon, e->d_name) == 0;
        free(canon);
        if (!same)
            continue;
        if (*n == cap) {
            cap = cap ? 2 * cap : 16;
            uint32_t *p = realloc(*ids, 2 * cap * sizeof *p);
            if (!p) {
                rc = ns_fail(err, NS_ERR_NOMEM, "journal: out of memory");
                break;
            }
            *ids = p;
        }
        (*ids)[2 * *n] = s;
        (*ids)[2 * *n + 1] = r;
        (*n)++;
    }
    closedir(d);
    if (rc == NS_OK && *n)
        qsort(*ids, *n, 2 * sizeof **ids, cmp_ids);
    return rc;
}

/* Scan part `file` of j read-only (another run segment's file: never truncated or written). A
 * file shorter than a header (its creator was stopped while writing it) holds nothing: an empty
 * one is fine, a part of a header counts as an incomplete record. */
static int scan_part(ns_journal *j, uint64_t file, const unsigned char *want,
                     ns_journal_record_fn fn, void *user, ns_journal_scan *scan, ns_err *err)
{
    const char *path = j->parts->p[file - 1].path;
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return ns_fail(err, NS_ERR_IO, "open %s: %s", path, strerror(errno));
    unsigned char have[J_HEADER_SIZE];
    size_t got = 0, torn = 0;
    off_t end;
    int rc = read_full(fd, have, sizeof have, &got) == 0
                 ? NS_OK
                 : ns_fail(err, NS_ERR_IO, "read %s: %s", path, strerror(errno));
    if (rc == NS_OK && got < sizeof have)
        torn = got;
    else if (rc == NS_OK && (rc = check_header(path, have, want, j->hash, err)) == NS_OK)
        rc = scan_records(j, fd, path, file, J_HEADER_SIZE, fn, user, &end, &torn, scan, err);
    close(fd);
    if (rc == NS_OK && torn)
        scan->torn_parts++;
    return rc;
}

/* The parts in j's directory into j (any of them is an error unless resuming, as an existing
 * journal is). */
static int find_parts(ns_journal *j, int resume, ns_err *err)
{
    uint32_t *ids = NULL;
    size_t n = 0;
    NS_TRY(list_parts(j->dir, &ids, &n, err));
    int rc = NS_OK;
    for (size_t i = 0; rc == NS_OK && i < n; i++) {
        uint64_t file;
        if ((rc = add_part(j, ids[2 * i], ids[2 * i + 1], &file, err)) == NS_OK && !resume)
            rc = ns_fail(err, NS_ERR_INVALID,
                         "%s exists: pass --resume to continue that sweep, or remove it (or "
                         "choose another --checkpoint-dir) to start afresh",
                         j->parts->p[file - 1].path);
    }
    free(ids);
    return rc;
}

int ns_journal_open(const char *dir, const char *sweep_hash, size_t payload_len, int resume,
                    ns_journal_record_fn fn, void *user, ns_journal **out, ns_journal_scan *scan,
                    ns_err *err)
{
    int rc = NS_OK;
    ns_journal_scan local;
    if (!scan)
        scan = &local;
    memset(scan, 0, sizeof *scan);
    *out = NULL;
    if (strlen(sweep_hash) != 64)
        return ns_fail(err, NS_ERR_INVALID, "journal: sweep hash must be 64 hex characters");
    NS_TRY(ns_file_mkdirs(dir, err));
    ns_journal *j = journal_new(dir, payload_len, err);
    if (!j)
        return NS_ERR_NOMEM;
    memcpy(j->hash, sweep_hash, 65);
    j->path = ns_path_join(dir, NS_JOURNAL_FILE);
    if (!j->path) {
        rc = ns_fail(err, NS_ERR_NOMEM, "journal: out of memory");
        goto fail;
    }
    unsigned char want[J_HEADER_SIZE];
    make_header(want, sweep_hash, payload_len);
    int exists = ns_file_exists(j->path);
    if (exists && !resume) {
        rc = ns_fail(err, NS_ERR_INVALID,
                     "%s exists: pass --resume to continue that sweep, or remove it (or choose "
                     "another --checkpoint-dir) to start afresh", j->path);
        goto fail;
    }
    if ((rc = find_parts(j, resume, err)) != NS_OK)
        goto fail;
    j->fd = open(j->path, O_RDWR | O_CREAT | O_CLOEXEC, 0644);
    if (j->fd < 0) {
        rc = ns_fail(err, NS_ERR_IO, "open %s: %s", j->path, strerror(errno));
        goto fail;
    }
    struct stat st;
    if (fstat(j->fd, &st) != 0) {
        rc = ns_fail(err, NS_ERR_IO, "stat %s: %s", j->path, strerror(errno));
        goto fail;
    }
    off_t end = J_HEADER_SIZE;
    if (st.st_size < (off_t)J_HEADER_SIZE) {
        /* New (or a torn header: nothing was ever recorded after it). */
        if (ftruncate(j->fd, 0) != 0 || lseek(j->fd, 0, SEEK_SET) != 0) {
            rc = ns_fail(err, NS_ERR_IO, "truncate %s: %s", j->path, strerror(errno));
            goto fail;
        }
        if ((rc = write_full(j->fd, want, sizeof want, j->path, err)) != NS_OK)
            goto fail;
        if (fsync(j->fd) != 0) {
            rc = ns_fail(err, NS_ERR_IO, "fsync %s: %s", j->path, strerror(errno));
            goto fail;
        }
        if ((rc = ns_file_sync_parent_dir(j->path, err)) != NS_OK)
            goto fail;
    } else {
        unsigned char have[J_HEADER_SIZE];
        size_t got = 0;
        if (read_full(j->fd, have, sizeof have, &got) != 0 || got != sizeof have) {
            rc = ns_fail(err, NS_ERR_IO, "read %s: %s", j->path, strerror(errno));
            goto fail;
        }
        if ((rc = check_header(j->path, have, want, sweep_hash, err)) != NS_OK)
            goto fail;
        if ((rc = scan_records(j, j->fd, j->path, 0, J_HEADER_SIZE, fn, user, &end,
                               &scan->torn_bytes, scan, err)) != NS_OK)
            goto fail;
        if (scan->torn_bytes) {
            if (ftruncate(j->fd, end) != 0 || fsync(j->fd) != 0) {
                rc = ns_fail(err, NS_ERR_IO, "truncate %s: %s", j->path, strerror(errno));
                goto fail;
            }
        }
    }
    if (lseek(j->fd, end, SEEK_SET) < 0) {
        rc = ns_fail(err, NS_ERR_IO, "seek %s: %s", j->path, strerror(errno));
        goto fail;
    }
    /* then the parts, in (segment, rank) order: the first valid record of a task wins (all of a
     * task's records are identical by construction) */
    for (uint64_t file = 1; file <= j->parts->n; file++)
        if ((rc = scan_part(j, file, want, fn, user, scan, err)) != NS_OK)
            goto fail;
    scan->n_parts = j->parts->n;
    *out = j;
    return NS_OK;
fail:
    ns_journal_close(j);
    return rc;
}

int ns_journal_create_part(const char *dir, const char *sweep_hash, size_t payload_len,
                           uint32_t segment, uint32_t rank, ns_journal **out, ns_err *err)
{
    *out = NULL;
    if (strlen(sweep_hash) != 64)
        return ns_fail(err, NS_ERR_INVALID, "journal: sweep hash must be 64 hex characters");
    ns_journal *j = journal_new(dir, payload_len, err);
    if (!j)
        return NS_ERR_NOMEM;
    memcpy(j->hash, sweep_hash, 65);
    char *name = part_name(segment, rank);
    j->path = name ? ns_path_join(dir, name) : NULL;
    free(name);
    int rc = NS_OK;
    unsigned char want[J_HEADER_SIZE];
    make_header(want, sweep_hash, payload_len);
    if (!j->path)
        rc = ns_fail(err, NS_ERR_NOMEM, "journal: out of memory");
    else if ((j->fd = open(j->path, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0644)) < 0)
        rc = ns_fail(err, NS_ERR_IO, "create %s: %s", j->path, strerror(errno));
    else if ((rc = write_full(j->fd, want, sizeof want, j->path, err)) == NS_OK &&
             fsync(j->fd) != 0)
        rc = ns_fail(err, NS_ERR_IO, "fsync %s: %s", j->path, strerror(errno));
    if (rc == NS_OK)
        rc = ns_file_sync_parent_dir(j->path, err);
    if (rc != NS_OK) {
        ns_journal_close(j);
        return rc;
    }
    *out = j;
    return NS_OK;
}

const char *ns_journal_hash(const ns_journal *j)
{
    return j->hash;
}

uint32_t ns_journal_next_segment(const ns_journal *j)
{
    return j->next_segment;
}

int ns_journal_part_location(ns_journal *j, uint32_t segment, uint32_t rank,
                             uint64_t part_location, uint64_t *location, ns_err *err)
{
    jparts *ps = j->parts;
    uint64_t file = 0;
    for (size_t i = ps->n; i-- > 0 && !file;)
        if (ps->ids[2 * i] == segment && ps->ids[2 * i + 1] == rank)
            file = i + 1;
    if (!file)
        NS_TRY(add_part(j, segment, rank, &file, err));
    if (part_location >> J_OFFSET_BITS)
        return ns_fail(err, NS_ERR_INVALID, "journal: location %llu is not one of a part's own",
                       (unsigned long long)part_location);
    *location = file << J_OFFSET_BITS | part_location;
    return NS_OK;
}

int ns_journal_check_part(ns_journal *j, uint32_t segment, uint32_t rank, ns_err *err)
{
    uint64_t loc;
    size_t had = j->parts->n;
    NS_TRY(ns_journal_part_location(j, segment, rank, 0, &loc, err));
    jparts *ps = j->parts;
    /* opened only to check its header, and closed again: the part's writer has only begun, and a
     * file kept open now might show a network file system's cached view of it later; reads open
     * it afresh (file_of) */
    int fd = -1;
    unsigned char have[J_HEADER_SIZE];
    int rc = open_checked(ps->p[(loc >> J_OFFSET_BITS) - 1].path, j->payload_len, j->hash, &fd,
                          have, err);
    if (rc == NS_OK)
        close(fd);
    else if (ps->n > had) /* not a part of j after all */
        free(ps->p[--ps->n].path);
    return rc;
}

size_t ns_journal_parts(const ns_journal *j, const uint32_t **ids)
{
    *ids = j->parts->ids;
    return j->parts->n;
}

/* Page-cache hygiene for a write-once log (Linux; elsewhere the kernel's defaults): each record's
 * write-back starts as soon as it is written, without waiting, and before the next record is
 * written the previous one's write-back is waited for (it had a whole task's time) and its pages
 * dropped. So a journal of many GB does not crowd the node's memory, the periodic sync finds
 * little left to write, and each record reuses the pages of the one before, which on a virtual
 * machine is several times faster than fresh memory (60 ms -> 7 ms for a 16.7 MB record here).
 * Advice only: a failure changes nothing that was written. */
static void writeback_start(ns_journal *j, off_t at, off_t len)
{
#ifdef SYNC_FILE_RANGE_WRITE
    (void)sync_file_range(j->fd, at, len, SYNC_FILE_RANGE_WRITE);
    j->prev_at = at;
    j->prev_len = len;
#else
    (void)j, (void)at, (void)len;
#endif
}

static void writeback_previous(ns_journal *j)
{
#ifdef SYNC_FILE_RANGE_WRITE
    if (j->prev_len == 0)
        return;
    (void)sync_file_range(j->fd, j->prev_at, j->prev_len,
                          SYNC_FILE_RANGE_WAIT_BEFORE | SYNC_FILE_RANGE_WRITE |
                              SYNC_FILE_RANGE_WAIT_AFTER);
    (void)posix_fadvise(j->fd, j->prev_at, j->prev_len, POSIX_FADV_DONTNEED);
    j->prev_len = 0;
#else
    (void)j;
#endif
}

int ns_journal_digest(uint64_t task, const void *payload, size_t payload_len,
                      unsigned char digest[NS_JOURNAL_DIGEST_LEN], ns_err *err)
{
    return ns_sha256_two(&task, 8, payload, payload_len, digest, err);
}

int ns_journal_append(ns_journal *j, uint64_t task, const void *payload,
                      const unsigned char *digest, uint64_t *payload_offset, ns_err *err)
{
    off_t at = lseek(j->fd, 0, SEEK_CUR);
    if (at < 0)
        return ns_fail(err, NS_ERR_IO, "seek %s: %s", j->path, strerror(errno));
    if ((uint64_t)at + J_REC_HEAD + 8 + j->payload_len > J_OFFSET_MASK)
        return ns_fail(err, NS_ERR_IO, "write %s: a journal file may not grow beyond %llu bytes",
                       j->path, (unsigned long long)J_OFFSET_MASK);
    unsigned char head[J_REC_HEAD + 8], md[NS_JOURNAL_DIGEST_LEN]; /* the payload follows head */
    uint32_t magic = J_REC_MAGIC, pad = 0;
    uint64_t len = j->payload_len;
    memcpy(head, &magic, 4);
    memcpy(head + 4, &pad, 4);
    memcpy(head + 8, &len, 8);
    memcpy(head + J_REC_HEAD, &task, 8);
    if (!digest) {
        NS_TRY(ns_journal_digest(task, payload, j->payload_len, md, err));
        digest = md;
    }
    char hex[NS_SHA256_HEX_LEN + 1];
    ns_sha256_hex(digest, hex);
    memcpy(head + 16, hex, 64);
    writeback_previous(j);
    j->dirty = 1;
    int rc = write_full(j->fd, head, sizeof head, j->path, err);
    if (rc == NS_OK)
        rc = write_full(j->fd, payload, j->payload_len, j->path, err);
    if (rc != NS_OK) {
        /* leave no incomplete record behind (a full disk, a file size limit): cut the file back
         * to where this record began; if even that fails, a later scan reports it as torn */
        if (ftruncate(j->fd, at) == 0)
            (void)lseek(j->fd, at, SEEK_SET);
        return rc;
    }
    writeback_start(j, at, (off_t)(sizeof head + j->payload_len));
    if (payload_offset)
        *payload_offset = (uint64_t)at + J_REC_HEAD + 8;
    return NS_OK;
}

int ns_journal_sync(ns_journal *j, ns_err *err)
{
    if (!j->dirty)
        return NS_OK;
    if (fdatasync(j->fd) != 0)
        return ns_fail(err, NS_ERR_IO, "fsync %s: %s", j->path, strerror(errno));
    j->dirty = 0;
    return NS_OK;
}

int ns_journal_identity(const char *path, char hash[65], size_t *payload_len, ns_err *err)
{
    unsigned char have[J_HEADER_SIZE];
    size_t got = 0;
    int f = open(path, O_RDONLY | O_CLOEXEC);
    if (f < 0 || read_full(f, have, J_HEADER_SIZE, &got) != 0) {
        int e = errno;
        if (f >= 0)
            close(f);
        return ns_fail(err, NS_ERR_IO, "read %s: %s", path, strerror(e));
    }
    close(f);
    uint64_t check, len;
    memcpy(&check, have + 120, 8);
    memcpy(&len, have + 16, 8);
    if (got == J_HEADER_SIZE && memcmp(have, J_MAGIC_V1, 8) == 0)
        return ns_fail(err, NS_ERR_INVALID, "%s was written by normsweep 0.1 (journal format 1, "
                       "METRICS version 1)", path);
    if (got < J_HEADER_SIZE || memcmp(have, J_MAGIC, 8) != 0 || fnv1a(have, 120) != check)
        return ns_fail(err, NS_ERR_INVALID, "%s is not a normsweep journal (%s)", path,
                       got < J_HEADER_SIZE ? "shorter than a header" : "bad header");
    memcpy(hash, have + 32, 64);
    hash[64] = 0;
    *payload_len = (size_t)len;
    return NS_OK;
}

/* Check a header read from path: this format, record size and (hash non-empty) sweep. */
static int check_read_header(const char *path, const unsigned char *have, size_t payload_len,
                             const char *hash, ns_err *err)
{
    uint64_t len = 0;
    memcpy(&len, have + 16, 8);
    if (memcmp(have, J_MAGIC, 8) != 0 || len != payload_len ||
        (hash[0] && memcmp(have + 32, hash, 64) != 0))
        return ns_fail(err, NS_ERR_INVALID, "%s: not this sweep's journal", path);
    return NS_OK;
}

/* Open path read-only into *fd with its header in have (J_HEADER_SIZE bytes), checked by
 * check_read_header; on failure *fd is -1 and nothing stays open. */
static int open_checked(const char *path, size_t payload_len, const char *hash, int *fd,
                        unsigned char *have, ns_err *err)
{
    size_t got = 0;
    int f = open(path, O_RDONLY | O_CLOEXEC), rc = NS_OK;
    if (f < 0 || read_full(f, have, J_HEADER_SIZE, &got) != 0 || got != J_HEADER_SIZE)
        rc = ns_fail(err, NS_ERR_IO, "read %s: %s", path,
                     f < 0 || got == 0 ? strerror(errno) : "truncated header");
    else
        rc = check_read_header(path, have, payload_len, hash, err);
    if (rc != NS_OK && f >= 0) {
        close(f);
        f = -1;
    }
    *fd = f;
    return rc;
}

/* The descriptor and path of the file that holds location loc (a part is opened, and its header
 * checked, when first read; at most J_MAX_OPEN parts are open at once). */
static int file_of(const ns_journal *j, uint64_t loc, int *fd, const char **path, ns_err *err)
{
    uint64_t file = loc >> J_OFFSET_BITS;
    jparts *ps = j->parts;
    if (file == 0) {
        *fd = j->fd;
        *path = j->path;
        return NS_OK;
    }
    if (file > ps->n)
        return ns_fail(err, NS_ERR_INVALID, "%s: no journal file %llu for location %llu", j->dir,
                       (unsigned long long)file, (unsigned long long)loc);
    jpart *p = &ps->p[file - 1];
    *path = p->path;
    if (p->fd < 0) {
        if (ps->nopen >= J_MAX_OPEN) {
            for (size_t i = 0; i < ps->n; i++)
                if (ps->p[i].fd >= 0)
                    close(ps->p[i].fd), ps->p[i].fd = -1;
            ps->nopen = 0;
        }
        unsigned char have[J_HEADER_SIZE];
        NS_TRY(open_checked(p->path, j->payload_len, j->hash, &p->fd, have, err));
        ps->nopen++;
    }
    *fd = p->fd;
    return NS_OK;
}

/* len bytes at byte at of the file; NS_ERR_IO naming the file and the offset when they cannot be
 * read (end of file included). */
static int pread_all(int fd, const char *path, off_t at, void *out, size_t len, ns_err *err)
{
    unsigned char *p = out;
    while (len > 0) {
        ssize_t r = pread(fd, p, len, at);
        if (r < 0 && errno == EINTR)
            continue;
        if (r <= 0)
            return ns_fail(err, NS_ERR_IO, "read %s at %lld: %s", path, (long long)at,
                           r == 0 ? "unexpected end of file" : strerror(errno));
        p += r;
        at += r;
        len -= (size_t)r;
    }
    return NS_OK;
}

int ns_journal_read(const ns_journal *j, uint64_t payload_offset, size_t byte_offset, size_t len,
                    void *out, ns_err *err)
{
    int fd;
    const char *path;
    NS_TRY(file_of(j, payload_offset, &fd, &path, err));
    if (byte_offset > j->payload_len || len > j->payload_len - byte_offset)
        return ns_fail(err, NS_ERR_INVALID, "read %s: range outside a record", path);
    return pread_all(fd, path, (off_t)((payload_offset & J_OFFSET_MASK) + byte_offset), out, len,
                     err);
}

int ns_journal_task_at(const ns_journal *j, uint64_t payload_offset, uint64_t *task, ns_err *err)
{
    int fd;
    const char *path;
    NS_TRY(file_of(j, payload_offset, &fd, &path, err));
    unsigned char head[J_REC_HEAD + 8];
    uint64_t off = payload_offset & J_OFFSET_MASK;
    if (off < J_HEADER_SIZE + sizeof head)
        return ns_fail(err, NS_ERR_INVALID, "%s: no record's payload at byte %llu", path,
                       (unsigned long long)off);
    off_t at = (off_t)(off - sizeof head);
    NS_TRY(pread_all(fd, path, at, head, sizeof head, err));
    uint32_t magic;
    uint64_t len;
    memcpy(&magic, head, 4);
    memcpy(&len, head + 8, 8);
    if (magic != J_REC_MAGIC || len != j->payload_len)
        return ns_fail(err, NS_ERR_INVALID, "%s: no record starts at byte %lld", path,
                       (long long)at);
    memcpy(task, head + J_REC_HEAD, 8);
    return NS_OK;
}

const char *ns_journal_file(const ns_journal *j, uint64_t location)
{
    uint64_t file = location >> J_OFFSET_BITS;
    return file >= 1 && file <= j->parts->n ? j->parts->p[file - 1].path : j->path;
}

uint64_t ns_journal_byte(uint64_t location)
{
    return location & J_OFFSET_MASK;
}

int ns_journal_attach(const char *dir, size_t payload_len, const uint32_t *ids, size_t nparts,
                      ns_journal **out, ns_err *err)
{
    *out = NULL;
    ns_journal *j = journal_new(dir, payload_len, err);
    if (!j)
        return NS_ERR_NOMEM;
    int rc = NS_OK;
    j->path = ns_path_join(dir, NS_JOURNAL_FILE);
    if (!j->path)
        rc = ns_fail(err, NS_ERR_NOMEM, "journal: out of memory");
    for (size_t i = 0; rc == NS_OK && i < nparts; i++) {
        uint64_t file;
        rc = add_part(j, ids[2 * i], ids[2 * i + 1], &file, err);
    }
    unsigned char have[J_HEADER_SIZE];
    if (rc == NS_OK && (rc = open_checked(j->path, payload_len, "", &j->fd, have, err)) == NS_OK)
        memcpy(j->hash, have + 32, 64); /* every part must carry the same sweep */
    if (rc != NS_OK) {
        ns_journal_close(j);
        return rc;
    }
    *out = j;
    return NS_OK;
}

const char *ns_journal_path(const ns_journal *j)
{
    return j->path;
}

void ns_journal_close(ns_journal *j)
{
    if (!j)
        return;
    if (j->fd >= 0) {
        if (j->dirty) /* best effort: callers that must know sync first */
            (void)fdatasync(j->fd);
        close(j->fd);
    }
    if (j->parts) {
        for (size_t i = 0; i < j->parts->n; i++) {
            if (j->parts->p[i].fd >= 0)
                close(j->parts->p[i].fd);
            free(j->parts->p[i].path);
        }
        free(j->parts->p);
        free(j->parts->ids);
        free(j->parts);
    }
    free(j->path);
    free(j->dir);
    free(j->buf);
    free(j);
}

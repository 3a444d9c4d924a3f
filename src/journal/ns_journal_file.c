/* ns_journal_file: the journal's primitives on one file (ns_journal_file_internal.h): its
 * header, whole reads and writes, the scan of its records, the checked opening of another rank's
 * file, reading a record's bytes back, and the identity `verify` reads from a header. */
#include "journal/ns_journal_file_internal.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/ns_sha256.h"

static uint64_t fnv1a(const unsigned char *p, size_t n)
{
    uint64_t h = 1469598103934665603ull;
    for (size_t i = 0; i < n; i++) {
        h ^= p[i];
        h *= 1099511628211ull;
    }
    return h;
}

void ns_journal_make_header(unsigned char *h, const char *hash, size_t payload_len)
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

int ns_journal_write_full(int fd, const void *data, size_t len, const char *path, ns_err *err)
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

int ns_journal_read_full(int fd, void *data, size_t len, size_t *got)
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

int ns_journal_scan_records(ns_journal *j, int fd, const char *path, uint64_t file, off_t start,
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
        if (ns_journal_read_full(fd, j->buf, rec_size, &got) != 0)
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

int ns_journal_check_header(const char *path, const unsigned char *have,
                            const unsigned char *want, const char *sweep_hash, ns_err *err)
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

ns_journal *ns_journal_new(const char *dir, size_t payload_len, ns_err *err)
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

int ns_journal_identity(const char *path, char hash[65], size_t *payload_len, ns_err *err)
{
    unsigned char have[J_HEADER_SIZE];
    size_t got = 0;
    int f = open(path, O_RDONLY | O_CLOEXEC);
    if (f < 0 || ns_journal_read_full(f, have, J_HEADER_SIZE, &got) != 0) {
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

int ns_journal_open_checked(const char *path, size_t payload_len, const char *hash, int *fd,
                            unsigned char *have, ns_err *err)
{
    size_t got = 0;
    int f = open(path, O_RDONLY | O_CLOEXEC), rc = NS_OK;
    if (f < 0 || ns_journal_read_full(f, have, J_HEADER_SIZE, &got) != 0 || got != J_HEADER_SIZE)
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

int ns_journal_file_of(const ns_journal *j, uint64_t loc, int *fd, const char **path,
                       ns_err *err)
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
        NS_TRY(ns_journal_open_checked(p->path, j->payload_len, j->hash, &p->fd, have, err));
        ps->nopen++;
    }
    *fd = p->fd;
    return NS_OK;
}

int ns_journal_pread_all(int fd, const char *path, off_t at, void *out, size_t len,
                         ns_err *err)
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

/* ns_journal_log: the journal as an append-only, checksummed log of completed tasks, synced in
 * groups (see ns_journal.h): the sweep's hash, opening (and scanning) a journal, appending,
 * syncing, reading records back. The file layout and the primitives on one file are in
 * ns_journal_file.c, the part files in ns_journal_parts.c; ns_journal.h declares all three. */
#include "journal/ns_journal.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/ns_file.h"
#include "common/ns_sha256.h"
#include "journal/ns_journal_file_internal.h"
#include "journal/ns_journal_parts_internal.h"

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
    ns_journal *j = ns_journal_new(dir, payload_len, err);
    if (!j)
        return NS_ERR_NOMEM;
    memcpy(j->hash, sweep_hash, 65);
    j->path = ns_path_join(dir, NS_JOURNAL_FILE);
    if (!j->path) {
        rc = ns_fail(err, NS_ERR_NOMEM, "journal: out of memory");
        goto fail;
    }
    unsigned char want[J_HEADER_SIZE];
    ns_journal_make_header(want, sweep_hash, payload_len);
    int exists = ns_file_exists(j->path);
    if (exists && !resume) {
        rc = ns_fail(err, NS_ERR_INVALID,
                     "%s exists: pass --resume to continue that sweep, or remove it (or choose "
                     "another --checkpoint-dir) to start afresh", j->path);
        goto fail;
    }
    if ((rc = ns_journal_find_parts(j, resume, err)) != NS_OK)
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
        if ((rc = ns_journal_write_full(j->fd, want, sizeof want, j->path, err)) != NS_OK)
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
        if (ns_journal_read_full(j->fd, have, sizeof have, &got) != 0 || got != sizeof have) {
            rc = ns_fail(err, NS_ERR_IO, "read %s: %s", j->path, strerror(errno));
            goto fail;
        }
        if ((rc = ns_journal_check_header(j->path, have, want, sweep_hash, err)) != NS_OK)
            goto fail;
        if ((rc = ns_journal_scan_records(j, j->fd, j->path, 0, J_HEADER_SIZE, fn, user, &end,
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
        if ((rc = ns_journal_scan_part(j, file, want, fn, user, scan, err)) != NS_OK)
            goto fail;
    scan->n_parts = j->parts->n;
    *out = j;
    return NS_OK;
fail:
    ns_journal_close(j);
    return rc;
}

const char *ns_journal_hash(const ns_journal *j)
{
    return j->hash;
}

uint32_t ns_journal_next_segment(const ns_journal *j)
{
    return j->next_segment;
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
    int rc = ns_journal_write_full(j->fd, head, sizeof head, j->path, err);
    if (rc == NS_OK)
        rc = ns_journal_write_full(j->fd, payload, j->payload_len, j->path, err);
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

int ns_journal_read(const ns_journal *j, uint64_t payload_offset, size_t byte_offset, size_t len,
                    void *out, ns_err *err)
{
    int fd;
    const char *path;
    NS_TRY(ns_journal_file_of(j, payload_offset, &fd, &path, err));
    if (byte_offset > j->payload_len || len > j->payload_len - byte_offset)
        return ns_fail(err, NS_ERR_INVALID, "read %s: range outside a record", path);
    return ns_journal_pread_all(fd, path,
                                (off_t)((payload_offset & J_OFFSET_MASK) + byte_offset), out,
                                len, err);
}

int ns_journal_task_at(const ns_journal *j, uint64_t payload_offset, uint64_t *task, ns_err *err)
{
    int fd;
    const char *path;
    NS_TRY(ns_journal_file_of(j, payload_offset, &fd, &path, err));
    unsigned char head[J_REC_HEAD + 8];
    uint64_t off = payload_offset & J_OFFSET_MASK;
    if (off < J_HEADER_SIZE + sizeof head)
        return ns_fail(err, NS_ERR_INVALID, "%s: no record's payload at byte %llu", path,
                       (unsigned long long)off);
    off_t at = (off_t)(off - sizeof head);
    NS_TRY(ns_journal_pread_all(fd, path, at, head, sizeof head, err));
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

const char *ns_journal_path(const ns_journal *j)
{
    return j->path;
}

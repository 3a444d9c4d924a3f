/* ns_journal_file_internal: what the journal's three files share (journal/ only): the file
 * layout, the journal object, and the primitives on one file -- header, whole reads and writes,
 * the scan of a file's records, the checked opening of a file written by another rank, the
 * object's creation and release -- which ns_journal_file.c defines and ns_journal_log.c (the
 * journal proper: open, append, sync, read) and ns_journal_parts.c (the part files) call. */
#ifndef NS_JOURNAL_FILE_INTERNAL_H
#define NS_JOURNAL_FILE_INTERNAL_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "journal/ns_journal.h"

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

/* The header of a journal file of this sweep (hash) and record size, J_HEADER_SIZE bytes. */
void ns_journal_make_header(unsigned char *h, const char *hash, size_t payload_len);
/* write(2) until all of data is written (EINTR retried); NS_ERR_IO naming path. */
int ns_journal_write_full(int fd, const void *data, size_t len, const char *path, ns_err *err);
/* read(2) until len bytes or the end of the file (*got: how many); -1 with errno on an error. */
int ns_journal_read_full(int fd, void *data, size_t len, size_t *got);
/* Read the records of an open file (fd, path; file number `file` in locations) from start:
 * fixed-size slots; a complete slot whose magic, length or checksum is wrong is damaged and
 * skipped (counted in scan); an incomplete last slot is a torn tail (*torn its bytes). *good_end
 * receives the end of the last complete slot. */
int ns_journal_scan_records(ns_journal *j, int fd, const char *path, uint64_t file, off_t start,
                            ns_journal_record_fn fn, void *user, off_t *good_end, size_t *torn,
                            ns_journal_scan *scan, ns_err *err);
/* The header of an existing journal file against the one wanted; NS_OK or NS_ERR_INVALID saying
 * why. */
int ns_journal_check_header(const char *path, const unsigned char *have,
                            const unsigned char *want, const char *sweep_hash, ns_err *err);
/* A new journal object for dir whose records hold payload_len bytes; path is set by the caller
 * (NULL, after filling *err, when out of memory). */
ns_journal *ns_journal_new(const char *dir, size_t payload_len, ns_err *err);
/* Open path read-only into *fd with its header in have (J_HEADER_SIZE bytes), checked: this
 * format, record size and (hash non-empty) sweep; on failure *fd is -1 and nothing stays open. */
int ns_journal_open_checked(const char *path, size_t payload_len, const char *hash, int *fd,
                            unsigned char *have, ns_err *err);
/* The descriptor and path of the file that holds location loc (a part is opened, and its header
 * checked, when first read; at most J_MAX_OPEN parts are open at once). */
int ns_journal_file_of(const ns_journal *j, uint64_t loc, int *fd, const char **path,
                       ns_err *err);
/* len bytes at byte at of the file; NS_ERR_IO naming the file and the offset when they cannot be
 * read (end of file included). */
int ns_journal_pread_all(int fd, const char *path, off_t at, void *out, size_t len,
                         ns_err *err);

#endif

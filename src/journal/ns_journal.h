/* ns_journal: the durable (see ns_journal_sync), append-only record of completed sweep tasks (one
 * shard's per-row results each), used by --resume and by the end-of-run reduction. Records all
 * have one size and carry a SHA-256: a damaged record is skipped (its task is recomputed) without
 * losing the ones after it, and a torn tail is cut off before the next append; the header pins
 * the sweep and the format (format 1 of normsweep 0.1 is refused). The files are machine-local
 * (native byte order and double format).
 *
 * A checkpoint directory's journal is a set of files: journal.nsj, which rank 0 appends to while
 * it holds the directory's ns_lock, and the parts journal.s<S>.r<R>.nsj, each appended to by one
 * rank R during one run segment S (its own records: what a worker that sees the directory writes
 * instead of sending them to rank 0) and never written again after that segment: a late write of
 * a stopped segment lands in a file no later segment appends to. Where a payload lies is a
 * location: an opaque number (file and byte) valid for the journal object that produced it and
 * for any attached with the same parts in the same order. */
#ifndef NS_JOURNAL_H
#define NS_JOURNAL_H

#include <stddef.h>
#include <stdint.h>

#include "common/ns_error.h"

#define NS_JOURNAL_FILE "journal.nsj"
/* Part files are named NS_JOURNAL_PART_PREFIX "<segment>.r<rank>.nsj" (decimal, no padding). */
#define NS_JOURNAL_PART_PREFIX "journal.s"

typedef struct ns_journal ns_journal;

/* The identity of a sweep that its journal's header records: SHA-256 (hex) of the sweep text,
 * the model, tokenizer and corpus checksums and the record size in doubles. Output and checkpoint
 * paths are not part of it (they may change between runs). hex holds 65 bytes. */
int ns_journal_sweep_hash(const char *yaml_text, const char *model_sha256,
                          const char *tokenizer_sha256, const char *corpus_sha256,
                          size_t payload_doubles, char hex[65], ns_err *err);

/* The identity a journal file's header records (journal.nsj or a part): the sweep hash (64 hex
 * characters into hash) and the record's payload size in bytes, read without changing the file.
 * NS_ERR_INVALID saying why when path is not a journal of this format (too short, another format,
 * a damaged header), NS_ERR_IO when it cannot be read; the messages name path and say nothing
 * of resuming (archive and verify read journals they will not continue). */
int ns_journal_identity(const char *path, char hash[65], size_t *payload_len, ns_err *err);

/* Called for each valid record found when opening an existing journal (journal.nsj, then the
 * parts, each in file order). payload holds payload_len bytes, valid only during the call;
 * payload_offset is their location (for ns_journal_read). Non-zero return stops the open. */
typedef int (*ns_journal_record_fn)(void *user, uint64_t task, const void *payload,
                                    size_t payload_len, uint64_t payload_offset, ns_err *err);

/* What opening an existing journal found. */
typedef struct ns_journal_scan {
    size_t n_records;       /* valid records passed to the callback (every file) */
    size_t n_damaged;       /* complete records whose magic, length or checksum was wrong */
    uint64_t first_damaged; /* byte offset of the first damaged record */
    const char *first_damaged_file; /* its file (owned by the journal) */
    size_t torn_bytes;      /* bytes of an incomplete last record of journal.nsj, cut off */
    size_t n_parts;         /* part files found */
    size_t torn_parts;      /* of them, ending in an incomplete record (left as they are) */
} ns_journal_scan;

/* Open (creating if needed) dir/journal.nsj for a sweep identified by sweep_hash (64 lowercase
 * hex chars, e.g. the SHA-256 of the sweep text plus the model checksum) whose records hold
 * payload_len bytes each, with the part files of dir.
 * - resume == 0: an existing journal.nsj or part is an error (NS_ERR_INVALID naming it: pass
 *   --resume or remove it); a fresh journal is created.
 * - resume == 1: every existing file must be of this format and carry the same hash and payload
 *   length, else NS_ERR_INVALID saying which; the valid records of journal.nsj, then of every
 *   part in (segment, rank) order, are passed to fn; damaged records are skipped, a torn tail of
 *   journal.nsj is truncated away and one of a part left as it is (all reported in *scan, which
 *   may be NULL). A missing journal.nsj is created.
 * Caller frees with ns_journal_close. */
int ns_journal_open(const char *dir, const char *sweep_hash, size_t payload_len, int resume,
                    ns_journal_record_fn fn, void *user, ns_journal **out, ns_journal_scan *scan,
                    ns_err *err);

/* The sweep hash every file of j carries (64 hex characters; empty until an attached journal's
 * header is read). */
const char *ns_journal_hash(const ns_journal *j);

/* The run segment number for new parts: 1 + the highest of any part file found by
 * ns_journal_open (1 when none). */
uint32_t ns_journal_next_segment(const ns_journal *j);

/* Create rank's part for run segment `segment` in dir (O_EXCL: never an existing file) and open
 * it for ns_journal_append; locations it returns are its own (ns_journal_part_location turns
 * them into the directory journal's). */
int ns_journal_create_part(const char *dir, const char *sweep_hash, size_t payload_len,
                           uint32_t segment, uint32_t rank, ns_journal **out, ns_err *err);

/* The location in j of what the part (segment, rank) returned as part_location, adding the part
 * to j (not yet opened: that happens when it is first read) if it is not one of j's yet. */
int ns_journal_part_location(ns_journal *j, uint32_t segment, uint32_t rank,
                             uint64_t part_location, uint64_t *location, ns_err *err);

/* Whether the part (segment, rank) is in j's directory, of this sweep (its header read, the file
 * closed again): NS_OK (the part is then one of j's), else an error saying why. */
int ns_journal_check_part(ns_journal *j, uint32_t segment, uint32_t rank, ns_err *err);

/* j's parts as (segment, rank) pairs in j's order (*ids owned by j; valid until j changes). */
size_t ns_journal_parts(const ns_journal *j, const uint32_t **ids);

/* Open dir's journal read-only for ns_journal_read at locations another process found (the ranks
 * of the end-of-run reduction), with that process's parts (ns_journal_parts, nparts pairs):
 * journal.nsj's header is checked now (format and record size), each part's (the same sweep) when
 * it is first read. */
int ns_journal_attach(const char *dir, size_t payload_len, const uint32_t *ids, size_t nparts,
                      ns_journal **out, ns_err *err);

#define NS_JOURNAL_DIGEST_LEN 32

/* The SHA-256 a record carries: of the task id (8 bytes, native order) followed by the payload.
 * The rank that produced a payload computes it, so that rank 0 only writes. */
int ns_journal_digest(uint64_t task, const void *payload, size_t payload_len,
                      unsigned char digest[NS_JOURNAL_DIGEST_LEN], ns_err *err);

/* Append one record (task id + payload_len bytes) with its digest from ns_journal_digest (NULL:
 * computed here). The record is written -- in the kernel's page cache: a killed process loses
 * nothing, and readers on this host see it -- but durable against a crash of the machine only
 * after ns_journal_sync. A wrong digest makes the record damaged (skipped, its task recomputed,
 * on --resume; reported by verify). *payload_offset (may be NULL) receives the payload's
 * location. A file may not grow beyond 2^40 bytes (NS_ERR_IO). When a write fails (NS_ERR_IO: a
 * full disk, a file size limit), the file is cut back to where the record began, so that it does
 * not end in an incomplete record. */
int ns_journal_append(ns_journal *j, uint64_t task, const void *payload,
                      const unsigned char *digest, uint64_t *payload_offset, ns_err *err);

/* Make every record appended so far durable (fdatasync; nothing to do when none was). The sweep
 * syncs at most every NS_SWEEP_SYNC_SECONDS while results arrive and always before anything reads
 * the journal from another process or the run ends: a sync per 16.7 MB record had cost rank 0
 * about 75 ms. Between syncs each record's write-back is started as it is written and its pages
 * leave the page cache once written (docs/RUNNING.md, "Journal"). */
int ns_journal_sync(ns_journal *j, ns_err *err);

/* Read len bytes starting byte_offset bytes into the payload stored at location payload_offset
 * (as given by the record callback, ns_journal_append or ns_journal_part_location). */
int ns_journal_read(const ns_journal *j, uint64_t payload_offset, size_t byte_offset, size_t len,
                    void *out, ns_err *err);

/* The task id of the record whose payload lies at payload_offset; NS_ERR_INVALID when no record
 * of this journal's format starts there (the reduction checks every shard's offset with it before
 * it reads: a journal other than the one the offsets came from fails here, not in the data). */
int ns_journal_task_at(const ns_journal *j, uint64_t payload_offset, uint64_t *task, ns_err *err);

/* Path of journal.nsj (owned by j). */
const char *ns_journal_path(const ns_journal *j);
/* The file a location lies in (owned by j; journal.nsj's for an unknown one) and its byte offset
 * there. */
const char *ns_journal_file(const ns_journal *j, uint64_t location);
uint64_t ns_journal_byte(uint64_t location);

/* Close, syncing first (best effort) if records were appended since the last sync. NULL is
 * fine. */
void ns_journal_close(ns_journal *j);

#endif

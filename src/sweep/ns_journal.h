/* ns_journal: the durable, append-only record of completed sweep tasks (one shard's per-row
 * results each), used by --resume. Records carry their length and a SHA-256; a torn tail is
 * ignored (and cut off before the next append); the header pins the sweep so a different sweep
 * cannot resume from it. The file is machine-local (native byte order and double format). */
#ifndef NS_JOURNAL_H
#define NS_JOURNAL_H

#include <stddef.h>
#include <stdint.h>

#include "common/ns_error.h"

#define NS_JOURNAL_FILE "journal.nsj"

typedef struct ns_journal ns_journal;

/* The identity of a sweep that its journal's header records: SHA-256 (hex) of the sweep text,
 * the model, tokenizer and corpus checksums and the record size in doubles. Output and checkpoint
 * paths are not part of it (they may change between runs). hex holds 65 bytes. */
int ns_journal_sweep_hash(const char *yaml_text, const char *model_sha256,
                          const char *tokenizer_sha256, const char *corpus_sha256,
                          size_t payload_doubles, char hex[65], ns_err *err);

/* Called for each valid record found when opening an existing journal (in file order).
 * payload holds payload_len bytes, valid only during the call; payload_offset is where they lie
 * in the file (for ns_journal_read). Non-zero return stops the open. */
typedef int (*ns_journal_record_fn)(void *user, uint64_t task, const void *payload,
                                    size_t payload_len, uint64_t payload_offset, ns_err *err);

/* Open (creating if needed) dir/journal.nsj for a sweep identified by sweep_hash (64 lowercase
 * hex chars, e.g. the SHA-256 of the sweep text plus the model checksum) whose records hold
 * payload_len bytes each.
 * - resume == 0: an existing journal is an error (NS_ERR_INVALID naming it: pass --resume or
 *   remove it); a fresh journal is created.
 * - resume == 1: an existing journal must carry the same hash and payload length, else
 *   NS_ERR_INVALID ("journal ... belongs to a different sweep"); its valid records are passed to
 *   fn; a torn or corrupt tail is truncated away. A missing journal is created.
 * *n_torn counts the discarded tail bytes' records (0 or 1). Caller frees with ns_journal_close. */
int ns_journal_open(const char *dir, const char *sweep_hash, size_t payload_len, int resume,
                    ns_journal_record_fn fn, void *user, ns_journal **out, size_t *n_torn,
                    ns_err *err);

/* Append one record (task id + payload_len bytes) and fsync it before returning.
 * *payload_offset (may be NULL) receives the payload's offset in the file. */
int ns_journal_append(ns_journal *j, uint64_t task, const void *payload, uint64_t *payload_offset,
                      ns_err *err);

/* Read len bytes starting byte_offset bytes into the payload stored at payload_offset (as given
 * by the record callback or ns_journal_append). */
int ns_journal_read(const ns_journal *j, uint64_t payload_offset, size_t byte_offset, size_t len,
                    void *out, ns_err *err);

/* Path of the journal file (owned by j). */
const char *ns_journal_path(const ns_journal *j);

/* Close (no further sync needed: every append was already durable). NULL is fine. */
void ns_journal_close(ns_journal *j);

#endif

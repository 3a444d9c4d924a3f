/* ns_journal_parts_internal: the part files' functions ns_journal_log.c calls when it opens a
 * journal (journal/ only; defined in ns_journal_parts.c). */
#ifndef NS_JOURNAL_PARTS_INTERNAL_H
#define NS_JOURNAL_PARTS_INTERNAL_H

#include <stdint.h>

#include "journal/ns_journal_file_internal.h"

/* Scan part `file` of j read-only (another run segment's file: never truncated or written). A
 * file shorter than a header (its creator was stopped while writing it) holds nothing: an empty
 * one is fine, a part of a header counts as an incomplete record. */
int ns_journal_scan_part(ns_journal *j, uint64_t file, const unsigned char *want,
                         ns_journal_record_fn fn, void *user, ns_journal_scan *scan, ns_err *err);
/* The parts in j's directory into j (any of them is an error unless resuming, as an existing
 * journal is). */
int ns_journal_find_parts(ns_journal *j, int resume, ns_err *err);

#endif

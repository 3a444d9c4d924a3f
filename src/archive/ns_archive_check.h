/* ns_archive_check: check an archive's MANIFEST.sha256 (sha256sum format) against what the
 * archive really holds (the members ns_archive_extract or ns_archive_scan listed): every problem,
 * one record each (missing, mismatched, unlisted, duplicate, malformed line), for ns_verify. */
#ifndef NS_ARCHIVE_CHECK_H
#define NS_ARCHIVE_CHECK_H

#include <stddef.h>

#include "archive/ns_archive.h"
#include "common/ns_error.h"
#include "common/ns_sha256.h"

typedef enum ns_archive_issue_kind {
    NS_ARCHIVE_NO_MANIFEST = 1, /* the archive has no MANIFEST.sha256 */
    NS_ARCHIVE_BAD_LINE,        /* a manifest line is not "<64 hex>  <name>" (name = the line) */
    NS_ARCHIVE_MISSING,         /* listed in the manifest, absent from the archive */
    NS_ARCHIVE_MISMATCH,        /* present, but its SHA-256 differs from the manifest's */
    NS_ARCHIVE_UNLISTED,        /* in the archive, not in the manifest */
    NS_ARCHIVE_DUPLICATE        /* listed twice in the manifest */
} ns_archive_issue_kind;

typedef struct ns_archive_issue {
    ns_archive_issue_kind kind;
    char *name;
    char listed[NS_SHA256_HEX_LEN + 1];  /* the manifest's sum ("" when none) */
    char actual[NS_SHA256_HEX_LEN + 1];  /* the member's sum ("" when absent) */
} ns_archive_issue;

typedef struct ns_archive_check {
    ns_archive_issue *items;
    size_t n, cap;
    size_t n_listed;        /* manifest lines */
    size_t n_members;       /* archive members other than the manifest */
} ns_archive_check;

void ns_archive_check_free(ns_archive_check *c);

/* Compare manifest_text (NULL: the archive had none) with members (which may include the
 * manifest itself; it is not expected to list itself). Fills *out with every problem, in
 * manifest order then archive order; out->n == 0 means the archive is intact. */
int ns_archive_check_manifest(const ns_archive_list *members, const char *manifest_text,
                              size_t len, ns_archive_check *out, ns_err *err);

/* One line describing an issue ("member run.nc: SHA-256 differs (manifest ..., archive ...)"). */
void ns_archive_issue_describe(const ns_archive_issue *issue, char *buf, size_t size);

#endif

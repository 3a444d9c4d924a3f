/* ns_archive: reproducibility archives (tar.gz through libarchive) with a SHA-256 manifest:
 * write a set of members under one top-level directory, extract one safely, and list its
 * MANIFEST.sha256 (sha256sum format); the manifest check is ns_archive_check.h. Knows nothing of
 * sweeps: the run-directory convention and provenance live with the callers. */
#ifndef NS_ARCHIVE_H
#define NS_ARCHIVE_H

#include <signal.h>
#include <stddef.h>
#include <stdint.h>

#include "common/ns_error.h"
#include "common/ns_hooks.h"
#include "common/ns_sha256.h"

#define NS_ARCHIVE_MANIFEST "MANIFEST.sha256"

/* One member to write: the bytes of the file at `path` (a regular file, not a link: its
 * permission bits are the member's), or data[0..len) when path is NULL, with permissions mode
 * (0: 0644). name is the member's path below the archive's top directory ("run.nc",
 * "checkpoint/x"). */
typedef struct ns_archive_source {
    const char *name;
    const char *path;
    const void *data;
    size_t len;
    unsigned mode;
} ns_archive_source;

/* One member as found (or written): name below the top directory, SHA-256 of its bytes, size. */
typedef struct ns_archive_member {
    char *name;
    char sha256[NS_SHA256_HEX_LEN + 1];
    uint64_t size;
} ns_archive_member;

typedef struct ns_archive_list {
    ns_archive_member *items;
    size_t n, cap;
    char *top;              /* the top-level directory of the archive (owned) */
} ns_archive_list;

void ns_archive_list_free(ns_archive_list *l);
/* The member called name, or NULL. */
const ns_archive_member *ns_archive_list_find(const ns_archive_list *l, const char *name);

/* A member name is safe when it is relative, non-empty, has no "." / ".." / empty components and
 * no control characters or backslashes. Returns 1 when safe. */
int ns_archive_name_ok(const char *name);

/* Write a gzip-compressed POSIX tar archive to out: every source as top/NAME (hashed while it is
 * streamed, so the manifest describes exactly the bytes written), then top/MANIFEST.sha256
 * listing "<sha256>  <NAME>" for every source, sorted by name. The archive is written to a
 * temporary name beside out, fsync'ed and renamed; on failure out is untouched. A source file
 * that changes size while it is read is an error, as is one that is a symbolic link. Each member
 * keeps its permission bits; the archive file (and its manifest) is no more readable by group or
 * others than every member is (0644 at most, less by the umask). written (may be NULL) receives
 * the members (without the manifest). Names must be distinct and ns_archive_name_ok, else
 * NS_ERR_INVALID. out must not be one of the files packed, nor lie in the checkpoint directory
 * whose files are packed (NS_ERR_INVALID). hooks (may be NULL; only stop and hold are read): its
 * stop (may be NULL) non-zero: stop between blocks, remove the temporary, NS_ERR_INTERRUPTED; its
 * hold (test only, may be NULL) is called with "temp" and 0 once the temporary is open, before
 * the first member and the first look at stop. */
int ns_archive_write(const char *out, const char *top, const ns_archive_source *src, size_t n,
                     ns_archive_list *written, const ns_hooks *hooks, ns_err *err);

/* Extract the regular files of archive into the existing directory dest (as dest/NAME, NAME with
 * the top directory stripped), hashing each. Every entry must lie under one common top directory
 * and have a safe name; links, devices and duplicate members are refused (NS_ERR_FORMAT naming
 * the entry); directory entries are skipped. Unreadable or non-archive input: NS_ERR_IO /
 * NS_ERR_FORMAT. *out receives every extracted member, the manifest included. */
int ns_archive_extract(const char *archive, const char *dest, ns_archive_list *out, ns_err *err);

/* Read archive's headers without extracting anything: *out receives every regular member (name
 * with the top directory stripped, the size its header declares, sha256 ""), so a caller can
 * refuse an archive before writing a byte. When want is not NULL and a member of that name holds
 * at most want_max bytes, its bytes are returned in *want_data (NUL-terminated, caller frees;
 * NULL when absent or larger) and *want_len. Errors as ns_archive_extract. */
int ns_archive_scan(const char *archive, const char *want, size_t want_max, ns_archive_list *out,
                    char **want_data, size_t *want_len, ns_err *err);

/* Manifest text for members (sorted copy; "<sha256>  <name>\n" lines). Caller frees *text. */
int ns_archive_manifest_text(const ns_archive_list *members, char **text, size_t *len,
                             ns_err *err);

#endif

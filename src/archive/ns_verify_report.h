/* ns_verify_report: what every phase of `verify` (ns_verify, ns_verify_inputs, ns_verify_attrs,
 * ns_verify_members) shares: the options, and the report -- one line per check through the
 * caller's callback ("PASS", "FAIL", "SKIP" or "INFO" and a text), counted in the summary, whose
 * texts name archive members, never the temporary directory they were extracted to. */
#ifndef NS_VERIFY_REPORT_H
#define NS_VERIFY_REPORT_H

#include <signal.h>
#include <stddef.h>
#include <stdint.h>

#include "common/ns_hooks.h"

typedef struct ns_verify_options {
    const char *archive;
    size_t sample;               /* tasks to recompute (capped at the number of tasks) */
    uint64_t seed;               /* chooses the sample */
    double tolerance;            /* relative tolerance of the tolerance mode */
    int force_tolerance;         /* compare within the tolerance even when the build matches */
    int allow_fetch;             /* let asset names be fetched (mirror / download) */
    ns_line_fn fetch_log;        /* what fetching does (user: report_user) */
    const char *tmpdir;          /* where to extract (NULL: $TMPDIR or /tmp) */
    /* the report: one line per check (status "PASS", "FAIL", "SKIP" or "INFO"); NULL: none */
    void (*report)(void *user, const char *status, const char *text);
    void *report_user;
    const char *executable_sha256; /* this build's executable (same as recorded: exact mode) */
    /* progress, user, progress_live: the progress of long work (a lean archive's tasks
     * recomputed); stop non-zero: stop (NS_ERR_INTERRUPTED), the extraction directory removed;
     * the test-only hold is called with point "temp" and count 0 once the extraction directory
     * exists, before the archive is read and the stop flag looked at. line is not read (the
     * report and fetch_log above are verify's lines). */
    ns_hooks hooks;
} ns_verify_options;

typedef struct ns_verify_summary {
    size_t passed, failed, skipped;
} ns_verify_summary;

typedef struct ns_vreport {
    const ns_verify_options *o;
    ns_verify_summary *s;
    const char *dir; /* the extraction directory (removed from texts); NULL before there is one */
} ns_vreport;

/* One report line: status "PASS", "FAIL", "SKIP" or "INFO". */
void ns_vreport_line(ns_vreport *v, const char *status, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* text with every "DIR/" of the extraction directory removed (a member's path becomes its name),
 * into buf. */
void ns_vreport_members(const ns_vreport *v, const char *text, char *buf, size_t size);

#endif

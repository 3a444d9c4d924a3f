/* ns_download: one-shot HTTP(S) downloads and reachability probes with libcurl (internal to assets).
 * Fail fast: a connect timeout, a stall limit, no retries; the caller decides what to try next. */
#ifndef NS_DOWNLOAD_H
#define NS_DOWNLOAD_H

#include <stdio.h>

#include "common/ns_error.h"
#include "common/ns_hooks.h"

/* Download url into the new file dest (created 0644; removed again on failure).
 * *unreachable is set to 1 when the host could not be reached at all (DNS, connect, timeout),
 * so the caller can skip other URLs on the same host. Progress lines (no newline) go to log (may
 * be NULL). */
int ns_download_file(const char *url, const char *dest, long connect_timeout_s,
                     ns_line_fn log, void *log_user, int *unreachable, ns_err *err);

/* HEAD request: NS_OK when the server answers (any status below 400). */
int ns_download_probe(const char *url, long connect_timeout_s, int *unreachable, ns_err *err);

/* The host part of url ("huggingface.co") into out; "" when it has none. */
void ns_download_host(const char *url, char *out, size_t len);

#endif

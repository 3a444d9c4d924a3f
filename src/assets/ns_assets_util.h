/* ns_assets_util: the small helpers of asset fetching: progress lines through the context's
 * callback, joining and absolutising paths, a checksum's short form. */
#ifndef NS_ASSETS_UTIL_H
#define NS_ASSETS_UTIL_H

#include <stddef.h>

#include "assets/ns_asset_ctx.h"
#include "common/ns_error.h"

/* One line (cut at its first newline) to ctx->log; nothing when ctx->log is NULL. */
void ns_assets_log(const ns_assets_ctx *ctx, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* a "/" b into out; NS_ERR_INVALID when it does not fit. */
int ns_assets_join(char *out, size_t len, const char *a, const char *b, ns_err *err);
/* Absolute form of path (not resolving symlinks), without trailing slashes. */
int ns_assets_absolute(const char *path, char *out, size_t len, ns_err *err);
/* The first 12 hex digits of sha and "...", or "(unknown)" for "". */
void ns_assets_short_sha(const char *sha, char out[17]);

#endif

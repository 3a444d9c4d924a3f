/* ns_assets_util: the small helpers of asset fetching (see the header). */
#include "assets/ns_assets_util.h"

#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

void ns_assets_log(const ns_assets_ctx *ctx, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    ns_vsay(ctx->log, ctx->log_user, fmt, ap);
    va_end(ap);
}

int ns_assets_join(char *out, size_t len, const char *a, const char *b, ns_err *err)
{
    int n = snprintf(out, len, "%s%s%s", a, (*a && a[strlen(a) - 1] != '/') ? "/" : "", b);
    if (n < 0 || (size_t)n >= len)
        return ns_fail(err, NS_ERR_INVALID, "path too long: %s/%s", a, b);
    return NS_OK;
}

int ns_assets_absolute(const char *path, char *out, size_t len, ns_err *err)
{
    if (!*path)
        return ns_fail(err, NS_ERR_INVALID, "empty directory name");
    if (path[0] == '/') {
        if (strlen(path) >= len)
            return ns_fail(err, NS_ERR_INVALID, "path too long: %s", path);
        snprintf(out, len, "%s", path);
    } else {
        char cwd[PATH_MAX];
        if (!getcwd(cwd, sizeof cwd))
            return ns_fail(err, NS_ERR_IO, "getcwd: %s", strerror(errno));
        NS_TRY(ns_assets_join(out, len, cwd, path, err));
    }
    size_t n = strlen(out);
    while (n > 1 && out[n - 1] == '/')
        out[--n] = '\0';
    return NS_OK;
}

void ns_assets_short_sha(const char *sha, char out[17])
{
    if (!sha[0]) {
        snprintf(out, 17, "(unknown)");
        return;
    }
    snprintf(out, 17, "%.12s...", sha);
}

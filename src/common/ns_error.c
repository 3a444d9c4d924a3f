/* ns_error: formatting of status codes and error messages. */
#include "common/ns_error.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

/* Messages are one line by contract, but they quote input (JSON parser text, tensor names,
 * manifest lines) that may hold control characters: those become '?' (a tab, a space). */
void ns_text_one_line(char *msg)
{
    for (unsigned char *p = (unsigned char *)msg; *p; p++) {
        if (*p == '\t')
            *p = ' ';
        else if (*p < 0x20 || *p == 0x7f)
            *p = '?';
    }
}

void ns_err_clear(ns_err *err)
{
    if (!err)
        return;
    err->code = NS_OK;
    err->msg[0] = '\0';
    err->file = NULL;
    err->line = 0;
}

int ns_fail_at(ns_err *err, const char *file, int line, int code, const char *fmt, ...)
{
    if (!err)
        return code;
    const char *src = file ? strstr(file, "src/") : NULL;
    err->file = src ? src : file;
    err->line = line;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err->msg, sizeof err->msg, fmt, ap);
    va_end(ap);
    ns_text_one_line(err->msg);
    err->code = code;
    return code;
}

int ns_err_prefix(ns_err *err, const char *fmt, ...)
{
    if (!err)
        return NS_ERR_INVALID;
    char prefix[NS_ERR_MSG_MAX];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(prefix, sizeof prefix, fmt, ap);
    va_end(ap);
    char joined[2 * NS_ERR_MSG_MAX + 2];
    size_t plen = strlen(prefix);
    memcpy(joined, prefix, plen);
    memcpy(joined + plen, ": ", 2);
    memcpy(joined + plen + 2, err->msg, strlen(err->msg) + 1);
    memcpy(err->msg, joined, NS_ERR_MSG_MAX - 1);
    err->msg[NS_ERR_MSG_MAX - 1] = '\0';
    ns_text_one_line(err->msg);
    return err->code;
}

const char *ns_status_name(int code)
{
    switch (code) {
    case NS_OK: return "ok";
    case NS_ERR_IO: return "I/O error";
    case NS_ERR_FORMAT: return "format error";
    case NS_ERR_INVALID: return "invalid input";
    case NS_ERR_NOMEM: return "out of memory";
    case NS_ERR_CHECKSUM: return "checksum mismatch";
    case NS_ERR_LIBRARY: return "library error";
    case NS_ERR_INTERRUPTED: return "interrupted";
    default: return "unknown error";
    }
}

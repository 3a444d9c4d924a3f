/* ns_error: status codes and a context-carrying error message, used by every module.
 *
 * Library functions return an int status (NS_OK on success) and, on failure, fill
 * an ns_err with a one-line message that already names the file, tensor, key or
 * value at fault. Only the CLI turns a status into an exit code. */
#ifndef NS_ERROR_H
#define NS_ERROR_H

#include <stddef.h>

enum ns_status {
    NS_OK = 0,
    NS_ERR_IO = 1,        /* a file could not be opened, read or written */
    NS_ERR_FORMAT = 2,    /* input exists but is malformed (header, JSON, YAML, ...) */
    NS_ERR_INVALID = 3,   /* a value is out of range or inconsistent */
    NS_ERR_NOMEM = 4,     /* allocation failed */
    NS_ERR_CHECKSUM = 5,  /* a SHA-256 did not match */
    NS_ERR_LIBRARY = 6,   /* an external library (MPI, NetCDF, BLAS) reported an error */
    NS_ERR_INTERRUPTED = 7 /* stopped on request (signal); state was saved */
};

#define NS_ERR_MSG_MAX 1024

typedef struct ns_err {
    int code;                   /* one of enum ns_status */
    char msg[NS_ERR_MSG_MAX];   /* one line, no trailing newline */
    const char *file;           /* where the error arose (source file, from "src/"), or NULL */
    int line;
} ns_err;

/* Clear an error record (code NS_OK, empty message). */
void ns_err_clear(ns_err *err);

/* Fill err with code and a printf-style message (control characters, which quoted input may
 * carry, are replaced so the message stays one line) and the source file and line where it
 * arose (PETSc-style: the CLI shows them with NORMSWEEP_DEBUG=1); returns code, so callers can
 * write `return ns_fail(err, NS_ERR_IO, "open %s: %s", path, strerror(errno));`.
 * err may be NULL (the message is then dropped). */
#define ns_fail(err, code, ...) ns_fail_at((err), __FILE__, __LINE__, (code), __VA_ARGS__)
int ns_fail_at(ns_err *err, const char *file, int line, int code, const char *fmt, ...)
    __attribute__((format(printf, 5, 6)));

/* Make text one line in place, as ns_fail does with its message: a tab becomes a space, any
 * other control character '?'. For messages formatted without ns_fail that quote input. */
void ns_text_one_line(char *text);

/* Prepend context to an existing message: "ctx: old message". Returns err->code. */
int ns_err_prefix(ns_err *err, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* A short name for a status code ("I/O error", "format error", ...). */
const char *ns_status_name(int code);

/* Propagate a non-zero status upward (PETSc-style, kept light). */
#define NS_TRY(expr)                  \
    do {                              \
        int ns_try_rc_ = (expr);      \
        if (ns_try_rc_ != NS_OK)      \
            return ns_try_rc_;        \
    } while (0)

#endif

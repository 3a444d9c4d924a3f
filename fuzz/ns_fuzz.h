/* ns_fuzz: helpers shared by the fuzz targets (property checks that abort with a message, so a
 * violated contract is reported like a crash by libFuzzer and by the replay driver). */
#ifndef NS_FUZZ_H
#define NS_FUZZ_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/ns_error.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerInitialize(int *argc, char ***argv);

/* Abort (a finding) when cond is false; the message says which contract was broken. */
#define NS_FUZZ_CHECK(cond, ...)                                                          \
    do {                                                                                  \
        if (!(cond)) {                                                                    \
            fprintf(stderr, "%s:%d: fuzz property violated: %s: ", __FILE__, __LINE__, #cond); \
            fprintf(stderr, __VA_ARGS__);                                                 \
            fputc('\n', stderr);                                                          \
            abort();                                                                      \
        }                                                                                 \
    } while (0)

/* Soft findings: contract breaches that are not memory errors (a message that is not one line)
 * are counted and the first one is printed at exit, so they do not stop a fuzzing run that may
 * still find crashes. Per-process state, like libFuzzer's own. */
static size_t ns_fuzz_soft_count;
static char ns_fuzz_soft_first[NS_ERR_MSG_MAX + 64];

static void ns_fuzz_soft_report(void)
{
    if (ns_fuzz_soft_count)
        fprintf(stderr, "fuzz soft findings: %zu inputs gave a message that is not one line; "
                        "first: %s\n", ns_fuzz_soft_count, ns_fuzz_soft_first);
}

/* Record a soft finding when text (a message meant to be one line) contains a line break. */
static inline void ns_fuzz_soft_line(const char *what, const char *text)
{
    if (strpbrk(text, "\n\r") != NULL && ns_fuzz_soft_count++ == 0) {
        snprintf(ns_fuzz_soft_first, sizeof ns_fuzz_soft_first, "%s: \"%.900s\"", what, text);
        atexit(ns_fuzz_soft_report);
    }
}

/* The contract of ns_err for a failed call: the status is returned and recorded, and the
 * message is one non-empty line (ns_error.h; a line break is a soft finding). */
static inline void ns_fuzz_check_err(int rc, const ns_err *err)
{
    NS_FUZZ_CHECK(err->code == rc, "returned %d but err.code = %d (%s)", rc, err->code, err->msg);
    NS_FUZZ_CHECK(err->msg[0] != '\0', "status %d with an empty message", rc);
    ns_fuzz_soft_line("ns_err", err->msg);
}

#endif

/* ns_fuzz: helpers shared by the fuzz targets (property checks that abort with a message, so a
 * violated contract is reported like a crash by libFuzzer and by the replay driver). */
#ifndef NS_FUZZ_H
#define NS_FUZZ_H

#include <errno.h>
#include <ftw.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

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
        fprintf(stderr, "fuzz soft findings: %zu messages were not one line; "
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

/* Make a private temporary directory ($TMPDIR or /tmp, "ns-fuzz-TAG.XXXXXX") into buf; exits on
 * failure (nothing could be tested). */
static inline void ns_fuzz_make_tmpdir(char *buf, size_t size, const char *tag)
{
    const char *tmp = getenv("TMPDIR");
    snprintf(buf, size, "%s/ns-fuzz-%s.XXXXXX", tmp && *tmp ? tmp : "/tmp", tag);
    if (!mkdtemp(buf)) {
        fprintf(stderr, "fuzz: mkdtemp %s: %s\n", buf, strerror(errno));
        exit(1);
    }
}

/* Write data[0..size) to path (the parsers under test that only read files get it this way);
 * aborts when it cannot (nothing could be tested). */
static inline void ns_fuzz_write_file(const char *path, const uint8_t *data, size_t size)
{
    FILE *fp = fopen(path, "wb");
    if (!fp || (size && fwrite(data, 1, size, fp) != size) || fclose(fp) != 0) {
        fprintf(stderr, "fuzz: cannot write %s: %s\n", path, strerror(errno));
        abort();
    }
}

static inline int ns_fuzz_rm_entry(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
    (void)st;
    (void)ftw;
    return flag == FTW_DP ? rmdir(path) : unlink(path);
}

/* Remove what lies inside directory dir (keeps dir itself). */
static inline void ns_fuzz_empty_dir(const char *dir)
{
    nftw(dir, ns_fuzz_rm_entry, 16, FTW_DEPTH | FTW_PHYS);
    if (mkdir(dir, 0700) != 0 && errno != EEXIST) {
        fprintf(stderr, "fuzz: mkdir %s: %s\n", dir, strerror(errno));
        abort();
    }
}

#endif

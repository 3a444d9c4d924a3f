/* fuzz_driver: a main() that replays files through a fuzz target's LLVMFuzzerTestOneInput, so
 * crash reproducers run in `make check` with the normal compiler (no libFuzzer needed).
 *
 *   replay_NAME [FILE|DIR]...   replay the files (directories: every regular file, sorted)
 *   replay_NAME                 replay $top_srcdir/fuzz/corpus/NAME and fuzz/regressions/NAME
 *
 * Exit 0 when every file was replayed (at least one), 1 on a usage or I/O problem; a bug in the
 * code under test shows up as a crash, an abort from the target's own checks, or (under
 * valgrind / the sanitizers) as their report. NS_FUZZ_NAME is defined by fuzz/local.mk.
 *
 * Like libFuzzer's -malloc_limit_mb, a single allocation above NS_FUZZ_MALLOC_LIMIT_MB (default
 * 2048) is a finding (a small hostile file must not make a parser ask for gigabytes): the driver
 * interposes malloc/calloc/realloc and aborts with a message. Under AddressSanitizer, which owns
 * malloc, ASan's own max_allocation_size_mb does this instead (scripts/check-sanitizers). */
#include <dirent.h>
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#ifndef NS_FUZZ_NAME
#error "compile with -DNS_FUZZ_NAME=\"parser\""
#endif

#if defined(__has_feature)
#if __has_feature(address_sanitizer)
#define NS_FUZZ_HAVE_ASAN 1
#endif
#endif
#if defined(__SANITIZE_ADDRESS__)
#define NS_FUZZ_HAVE_ASAN 1
#endif

#ifndef NS_FUZZ_HAVE_ASAN
/* glibc's allocator entry points (what malloc itself resolves to). */
extern void *__libc_malloc(size_t n);
extern void *__libc_calloc(size_t n, size_t size);
extern void *__libc_realloc(void *p, size_t n);

/* The limit in bytes; 0 until main sets it (allocations before main are not checked). */
static size_t ns_fuzz_malloc_limit;

static void ns_fuzz_too_big(const char *fn, size_t n)
{
    /* No stdio here: it may allocate. */
    char msg[160];
    int len = snprintf(msg, sizeof msg, "replay: %s(%zu): a single allocation above the %zu MB limit "
                       "(NS_FUZZ_MALLOC_LIMIT_MB)\n", fn, n, ns_fuzz_malloc_limit >> 20);
    if (len > 0 && write(2, msg, (size_t)len) < 0)
        _exit(3);
    abort();
}

void *malloc(size_t n)
{
    if (ns_fuzz_malloc_limit && n > ns_fuzz_malloc_limit)
        ns_fuzz_too_big("malloc", n);
    return __libc_malloc(n);
}

void *calloc(size_t n, size_t size)
{
    if (ns_fuzz_malloc_limit && size && n > ns_fuzz_malloc_limit / size)
        ns_fuzz_too_big("calloc", n * size);
    return __libc_calloc(n, size);
}

void *realloc(void *p, size_t n)
{
    if (ns_fuzz_malloc_limit && n > ns_fuzz_malloc_limit)
        ns_fuzz_too_big("realloc", n);
    return __libc_realloc(p, n);
}
#endif

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerInitialize(int *argc, char ***argv) __attribute__((weak));

/* Read path into a fresh buffer of exactly its size (so out-of-bounds reads are caught). */
static int read_file(const char *path, uint8_t **out, size_t *len)
{
    FILE *fp = fopen(path, "rb");
    if (!fp) {
        fprintf(stderr, "replay: open %s: %s\n", path, strerror(errno));
        return -1;
    }
    uint8_t *buf = NULL;
    size_t n = 0, cap = 0;
    int rc = 0;
    for (;;) {
        if (n == cap) {
            size_t ncap = cap ? 2 * cap : 4096;
            uint8_t *nb = realloc(buf, ncap);
            if (!nb) {
                rc = -1;
                break;
            }
            buf = nb;
            cap = ncap;
        }
        size_t got = fread(buf + n, 1, cap - n, fp);
        n += got;
        if (got == 0)
            break;
    }
    if (ferror(fp)) {
        fprintf(stderr, "replay: read %s: %s\n", path, strerror(errno));
        rc = -1;
    }
    fclose(fp);
    if (rc != 0) {
        free(buf);
        return rc;
    }
    /* An exact-size copy: ASan and valgrind then flag any read past the input's end. */
    uint8_t *exact = malloc(n ? n : 1);
    if (!exact) {
        free(buf);
        return -1;
    }
    if (n)
        memcpy(exact, buf, n);
    free(buf);
    *out = exact;
    *len = n;
    return 0;
}

static int replay_file(const char *path, size_t *count)
{
    uint8_t *data = NULL;
    size_t len = 0;
    if (read_file(path, &data, &len) != 0)
        return -1;
    fprintf(stderr, "replay %s: %s (%zu bytes)\n", NS_FUZZ_NAME, path, len);
    fflush(stderr);
    LLVMFuzzerTestOneInput(data, len);
    free(data);
    (*count)++;
    return 0;
}

static int filter_entry(const struct dirent *d)
{
    return d->d_name[0] != '.';
}

/* Replay path: a file, or every regular file of a directory in name order. A missing directory
 * is fine when optional (no regressions recorded yet). */
static int replay_path(const char *path, int optional, size_t *count)
{
    struct stat st;
    if (stat(path, &st) != 0) {
        if (optional && errno == ENOENT)
            return 0;
        fprintf(stderr, "replay: %s: %s\n", path, strerror(errno));
        return -1;
    }
    if (!S_ISDIR(st.st_mode))
        return replay_file(path, count);
    struct dirent **names = NULL;
    int n = scandir(path, &names, filter_entry, alphasort);
    if (n < 0) {
        fprintf(stderr, "replay: scandir %s: %s\n", path, strerror(errno));
        return -1;
    }
    int rc = 0;
    for (int i = 0; i < n; i++) {
        size_t plen = strlen(path) + strlen(names[i]->d_name) + 2;
        char *full = malloc(plen);
        if (!full) {
            rc = -1;
        } else {
            snprintf(full, plen, "%s/%s", path, names[i]->d_name);
            struct stat fst;
            if (rc == 0 && stat(full, &fst) == 0 && S_ISREG(fst.st_mode) &&
                strcmp(names[i]->d_name, "README") != 0 && strcmp(names[i]->d_name, "README.md") != 0)
                rc = replay_file(full, count);
            free(full);
        }
        free(names[i]);
    }
    free(names);
    return rc;
}

int main(int argc, char **argv)
{
#ifndef NS_FUZZ_HAVE_ASAN
    const char *lim = getenv("NS_FUZZ_MALLOC_LIMIT_MB");
    size_t mb = lim && *lim ? (size_t)strtoull(lim, NULL, 10) : 2048;
    ns_fuzz_malloc_limit = mb << 20;
#endif
    if (LLVMFuzzerInitialize)
        LLVMFuzzerInitialize(&argc, &argv);
    size_t count = 0;
    int rc = 0;
    if (argc > 1) {
        for (int i = 1; i < argc && rc == 0; i++)
            rc = replay_path(argv[i], 0, &count);
    } else {
        const char *top = getenv("top_srcdir");
        if (!top || !*top) {
            fprintf(stderr, "replay: give files or directories, or set top_srcdir\n");
            return 1;
        }
        static const char *const subdirs[] = {"fuzz/corpus", "fuzz/regressions"};
        for (size_t i = 0; i < 2 && rc == 0; i++) {
            size_t plen = strlen(top) + strlen(subdirs[i]) + strlen(NS_FUZZ_NAME) + 3;
            char *dir = malloc(plen);
            if (!dir)
                return 1;
            snprintf(dir, plen, "%s/%s/%s", top, subdirs[i], NS_FUZZ_NAME);
            rc = replay_path(dir, i == 1, &count);
            free(dir);
        }
    }
    if (rc != 0)
        return 1;
    if (count == 0) {
        fprintf(stderr, "replay %s: no input files found\n", NS_FUZZ_NAME);
        return 1;
    }
    fprintf(stderr, "replay %s: %zu inputs, no failure\n", NS_FUZZ_NAME, count);
    return 0;
}

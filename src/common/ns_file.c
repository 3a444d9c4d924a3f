/* ns_file: whole-file reads, read-only memory maps, atomic writes, directory creation and the
 * small path/string helpers that go with them. */
#include "common/ns_file.h"

#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

/* Open path for reading only if it is a regular file: a FIFO, device or socket would block or
 * never end (opened without blocking, checked, then switched back to blocking reads). */
static int open_regular(const char *path, int *fd_out, struct stat *st, ns_err *err)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
    if (fd < 0)
        return ns_fail(err, NS_ERR_IO, "%s: cannot open: %s", path, strerror(errno));
    if (fstat(fd, st) != 0) {
        int e = errno;
        close(fd);
        return ns_fail(err, NS_ERR_IO, "%s: cannot stat: %s", path, strerror(e));
    }
    if (S_ISDIR(st->st_mode)) {
        close(fd);
        return ns_fail(err, NS_ERR_IO, "%s: is a directory, expected a file", path);
    }
    if (!S_ISREG(st->st_mode)) {
        close(fd);
        return ns_fail(err, NS_ERR_INVALID, "%s: is not a regular file (a %s)", path,
                       S_ISFIFO(st->st_mode) ? "FIFO" : S_ISSOCK(st->st_mode) ? "socket" : "device");
    }
    int fl = fcntl(fd, F_GETFL);
    if (fl < 0 || fcntl(fd, F_SETFL, fl & ~O_NONBLOCK) != 0) {
        int e = errno;
        close(fd);
        return ns_fail(err, NS_ERR_IO, "%s: fcntl: %s", path, strerror(e));
    }
    *fd_out = fd;
    return NS_OK;
}

int ns_file_open_regular(const char *path, int *fd, ns_err *err)
{
    struct stat st;
    return open_regular(path, fd, &st, err);
}

int ns_file_read_all(const char *path, size_t max_bytes, char **data, size_t *len, ns_err *err)
{
    *data = NULL;
    *len = 0;
    int fd;
    struct stat st;
    NS_TRY(open_regular(path, &fd, &st, err));
    size_t size = (size_t)st.st_size;
    if (max_bytes && size > max_bytes) {
        close(fd);
        return ns_fail(err, NS_ERR_INVALID, "%s: file is %zu bytes, more than the %zu allowed",
                       path, size, max_bytes);
    }
    char *buf = malloc(size + 1);
    if (!buf) {
        close(fd);
        return ns_fail(err, NS_ERR_NOMEM, "%s: cannot allocate %zu bytes", path, size + 1);
    }
    size_t got = 0;
    while (got < size) {
        ssize_t n = read(fd, buf + got, size - got);
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0) {
            int e = errno;
            free(buf);
            close(fd);
            return ns_fail(err, NS_ERR_IO, "%s: read failed: %s", path, strerror(e));
        }
        if (n == 0)
            break; /* file shrank while reading: return what is there */
        got += (size_t)n;
    }
    close(fd);
    buf[got] = '\0';
    *data = buf;
    *len = got;
    return NS_OK;
}

int ns_mmap_open(const char *path, ns_mmap *map, ns_err *err)
{
    map->data = NULL;
    map->size = 0;
    map->fd = -1;
    int fd;
    struct stat st;
    NS_TRY(open_regular(path, &fd, &st, err));
    map->fd = fd;
    map->size = (size_t)st.st_size;
    if (map->size == 0)
        return NS_OK;
    void *p = mmap(NULL, map->size, PROT_READ, MAP_SHARED, fd, 0);
    if (p == MAP_FAILED) {
        int e = errno;
        close(fd);
        map->fd = -1;
        map->size = 0;
        return ns_fail(err, NS_ERR_IO, "%s: mmap failed: %s", path, strerror(e));
    }
    map->data = p;
    return NS_OK;
}

void ns_mmap_close(ns_mmap *map)
{
    if (!map)
        return;
    if (map->data && map->size)
        munmap((void *)map->data, map->size);
    if (map->fd >= 0)
        close(map->fd);
    map->data = NULL;
    map->size = 0;
    map->fd = -1;
}

char *ns_file_temp_name(const char *path)
{
    size_t n = strlen(path) + 32;
    char *tmp = malloc(n);
    if (tmp)
        snprintf(tmp, n, "%s.tmp.%ld", path, (long)getpid());
    return tmp;
}

int ns_file_sync_parent_dir(const char *path, ns_err *err)
{
    char *copy = strdup(path);
    if (!copy)
        return ns_fail(err, NS_ERR_NOMEM, "out of memory");
    const char *dir = dirname(copy);
    int fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (fd < 0) {
        int e = errno;
        int rc = ns_fail(err, NS_ERR_IO, "%s: cannot open directory: %s", dir, strerror(e));
        free(copy);
        return rc;
    }
    int rc = NS_OK;
    if (fsync(fd) != 0 && errno != EINVAL)
        rc = ns_fail(err, NS_ERR_IO, "%s: fsync of directory failed: %s", dir, strerror(errno));
    close(fd);
    free(copy);
    return rc;
}

int ns_file_write_atomic(const char *path, const void *data, size_t len, ns_err *err)
{
    char *tmp = ns_file_temp_name(path);
    if (!tmp)
        return ns_fail(err, NS_ERR_NOMEM, "out of memory");
    int rc = NS_OK;
    int fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (fd < 0) {
        rc = ns_fail(err, NS_ERR_IO, "%s: cannot create: %s", tmp, strerror(errno));
        free(tmp);
        return rc;
    }
    const char *p = data;
    size_t left = len;
    while (left > 0) {
        ssize_t n = write(fd, p, left);
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0) {
            rc = ns_fail(err, NS_ERR_IO, "%s: write failed: %s", tmp, strerror(errno));
            goto fail;
        }
        p += n;
        left -= (size_t)n;
    }
    if (fsync(fd) != 0) {
        rc = ns_fail(err, NS_ERR_IO, "%s: fsync failed: %s", tmp, strerror(errno));
        goto fail;
    }
    if (close(fd) != 0) {
        fd = -1;
        rc = ns_fail(err, NS_ERR_IO, "%s: close failed: %s", tmp, strerror(errno));
        goto fail;
    }
    fd = -1;
    if (rename(tmp, path) != 0) {
        rc = ns_fail(err, NS_ERR_IO, "rename %s -> %s: %s", tmp, path, strerror(errno));
        goto fail;
    }
    free(tmp);
    return ns_file_sync_parent_dir(path, err);
fail:
    if (fd >= 0)
        close(fd);
    unlink(tmp);
    free(tmp);
    return rc;
}

int ns_file_mkdirs(const char *path, ns_err *err)
{
    char *copy = strdup(path);
    if (!copy)
        return ns_fail(err, NS_ERR_NOMEM, "out of memory");
    size_t n = strlen(copy);
    for (size_t i = 1; i <= n; i++) {
        if (copy[i] == '/' || copy[i] == '\0') {
            char saved = copy[i];
            copy[i] = '\0';
            if (mkdir(copy, 0755) != 0 && errno != EEXIST) {
                int e = errno;
                int rc = ns_fail(err, NS_ERR_IO, "mkdir %s: %s", copy, strerror(e));
                free(copy);
                return rc;
            }
            copy[i] = saved;
        }
    }
    free(copy);
    struct stat st;
    if (stat(path, &st) != 0 || !S_ISDIR(st.st_mode))
        return ns_fail(err, NS_ERR_IO, "%s: exists and is not a directory", path);
    return NS_OK;
}

int ns_file_exists(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0;
}

int ns_file_is_dir(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0 && S_ISDIR(st.st_mode);
}

int ns_file_is_regular(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0 && S_ISREG(st.st_mode);
}

int ns_str_ends_with(const char *s, const char *suffix)
{
    size_t a = strlen(s), b = strlen(suffix);
    return a >= b && strcmp(s + a - b, suffix) == 0;
}

char *ns_str_printf(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    char *s = NULL;
    if (vasprintf(&s, fmt, ap) < 0)
        s = NULL;
    va_end(ap);
    return s;
}

char *ns_path_join(const char *dir, const char *name)
{
    size_t a = strlen(dir), b = strlen(name);
    char *out = malloc(a + b + 2);
    if (!out)
        return NULL;
    memcpy(out, dir, a);
    size_t pos = a;
    if (a > 0 && dir[a - 1] != '/')
        out[pos++] = '/';
    memcpy(out + pos, name, b + 1);
    return out;
}

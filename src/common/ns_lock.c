/* ns_lock: exclusive directory lock with a named holder (see ns_lock.h). */
#include "common/ns_lock.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "common/ns_file.h"

struct ns_lock {
    int fd;
};

/* An exclusive open-file-description lock on the whole file; 0, or -1 with errno. */
static int try_lock(int fd, int cmd, short type)
{
    struct flock fl;
    memset(&fl, 0, sizeof fl);
    fl.l_type = type;
    fl.l_whence = SEEK_SET;
    return fcntl(fd, cmd, &fl);
}

/* The holder's record (one line) into buf. */
static void read_holder(int fd, char *buf, size_t size)
{
    ssize_t n = pread(fd, buf, size - 1, 0);
    buf[n > 0 ? n : 0] = '\0';
    buf[strcspn(buf, "\n")] = '\0';
    if (!buf[0])
        snprintf(buf, size, "unknown holder");
}

int ns_lock_acquire(const char *dir, const char *what, ns_lock **out, ns_err *err)
{
    *out = NULL;
    char *path = ns_path_join(dir, NS_LOCK_FILE);
    if (!path)
        return ns_fail(err, NS_ERR_NOMEM, "out of memory");
    int fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0644);
    if (fd < 0) {
        int rc = ns_fail(err, NS_ERR_IO, "open %s: %s", path, strerror(errno));
        free(path);
        return rc;
    }
    if (try_lock(fd, F_OFD_SETLK, F_WRLCK) != 0) {
        int e = errno;
        char holder[512];
        read_holder(fd, holder, sizeof holder);
        close(fd);
        int rc = (e == EAGAIN || e == EACCES)
                     ? ns_fail(err, NS_ERR_INVALID,
                               "%s is in use by another normsweep run (%s); wait for it to end, "
                               "stop it (its journal is kept), or choose another checkpoint "
                               "directory", dir, holder)
                     : ns_fail(err, NS_ERR_IO, "lock %s: %s", path, strerror(e));
        free(path);
        return rc;
    }
    char host[256] = "unknown", when[32] = "unknown", rec[1024];
    gethostname(host, sizeof host - 1);
    time_t now = time(NULL);
    struct tm tm;
    if (gmtime_r(&now, &tm))
        strftime(when, sizeof when, "%Y-%m-%dT%H:%M:%SZ", &tm);
    int n = snprintf(rec, sizeof rec, "host %s, pid %ld, since %s: %s\n", host, (long)getpid(),
                     when, what ? what : "normsweep");
    if (n >= (int)sizeof rec)
        n = (int)sizeof rec - 1, rec[n - 1] = '\n';
    if (ftruncate(fd, 0) != 0 || pwrite(fd, rec, (size_t)n, 0) != n) {
        int rc = ns_fail(err, NS_ERR_IO, "write %s: %s", path, strerror(errno));
        close(fd);
        free(path);
        return rc;
    }
    free(path);
    ns_lock *l = malloc(sizeof *l);
    if (!l) {
        close(fd);
        return ns_fail(err, NS_ERR_NOMEM, "out of memory");
    }
    l->fd = fd;
    *out = l;
    return NS_OK;
}

int ns_lock_held_elsewhere(const char *dir, char *holder, size_t size)
{
    char *path = ns_path_join(dir, NS_LOCK_FILE);
    if (!path)
        return 0;
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    free(path);
    if (fd < 0)
        return 0;
    struct flock fl;
    memset(&fl, 0, sizeof fl);
    fl.l_type = F_WRLCK;
    fl.l_whence = SEEK_SET;
    int held = fcntl(fd, F_OFD_GETLK, &fl) == 0 && fl.l_type != F_UNLCK;
    if (held && holder && size)
        read_holder(fd, holder, size);
    close(fd);
    return held;
}

void ns_lock_release(ns_lock *lock)
{
    if (!lock)
        return;
    close(lock->fd); /* closing the description releases its lock */
    free(lock);
}

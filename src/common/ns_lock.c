/* ns_lock: exclusive directory lock with a named holder (see ns_lock.h). */
#include "common/ns_lock.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "common/ns_file.h"
#include "common/ns_time.h"

struct ns_lock {
    int fd;
    int created; /* this acquire created the lock file */
    char *path;
    char *old;   /* the previous holder's record (restored by ns_lock_abandon) */
    ssize_t old_len;
    struct timespec old_times[2]; /* its access and modification times */
    int have_dir_times;
    struct timespec dir_times[2]; /* its directory's, before a created file was added */
};

/* The directory holding path, into *dir (caller frees); 0 when out of memory. */
static int dir_of(const char *path, char **dir)
{
    const char *slash = strrchr(path, '/');
    *dir = slash ? strndup(path, slash == path ? 1 : (size_t)(slash - path)) : strdup(".");
    return *dir != NULL;
}

/* The access and modification times of the directory holding path; 0 when they cannot be read. */
static int get_dir_times(const char *path, struct timespec times[2])
{
    char *dir;
    struct stat st;
    int ok = dir_of(path, &dir) && stat(dir, &st) == 0;
    if (ok) {
        times[0] = st.st_atim;
        times[1] = st.st_mtim;
    }
    free(dir);
    return ok;
}

#define NS_LOCK_RECORD_MAX 4096

/* An exclusive open-file-description lock on the whole file; 0, or -1 with errno. */
static int try_lock(int fd)
{
    struct flock fl;
    memset(&fl, 0, sizeof fl);
    fl.l_type = F_WRLCK;
    fl.l_whence = SEEK_SET;
    return fcntl(fd, F_OFD_SETLK, &fl);
}

/* The record's first line (without its newline, cut to size - 1 bytes) into buf; 1 when it is
 * not empty. */
static int read_record(int fd, char *buf, size_t size)
{
    ssize_t n = pread(fd, buf, size - 1, 0);
    buf[n > 0 ? n : 0] = '\0';
    buf[strcspn(buf, "\n")] = '\0';
    return buf[0] != '\0';
}

/* The holder's record (one line) into buf. The holder writes it right after taking the lock, so
 * an empty record is read again for up to a second before it is reported as not recorded. */
static void read_holder(int fd, char *buf, size_t size)
{
    for (int tries = 0; tries < 100; tries++) {
        if (read_record(fd, buf, size))
            return;
        struct timespec ts = {0, 10 * 1000 * 1000};
        nanosleep(&ts, NULL);
    }
    snprintf(buf, size, "holder not recorded yet");
}

/* Lock path (created when missing) for what; a refusal reads "HEAD (HOLDER)TAIL".
 * retry_gone: the file may be removed by its holder (ns_lock_drop), so after locking, check that
 * the path still names the locked file, and start again when it does not. */
static int acquire(char *path, const char *what, const char *head, const char *tail,
                   int retry_gone, ns_lock **out, ns_err *err);

int ns_lock_acquire(const char *dir, const char *what, ns_lock **out, ns_err *err)
{
    *out = NULL;
    char *path = ns_path_join(dir, NS_LOCK_FILE);
    char *head = ns_str_printf("%s is in use by another normsweep run", dir);
    int rc = path && head ? acquire(path, what, head, "; wait for it to end, stop it (its journal "
                                    "is kept), or choose another checkpoint directory", 1, out, err)
                          : (free(path), ns_fail(err, NS_ERR_NOMEM, "out of memory"));
    free(head);
    return rc;
}

int ns_lock_acquire_output(const char *output, const char *what, ns_lock **out, ns_err *err)
{
    *out = NULL;
    char *path = ns_str_printf("%s%s", output, NS_LOCK_OUTPUT_SUFFIX);
    char *head = ns_str_printf("output %s is being written by another normsweep run", output);
    int rc = path && head ? acquire(path, what, head, "; wait for it to end or choose another "
                                    "output", 1, out, err)
                          : (free(path), ns_fail(err, NS_ERR_NOMEM, "out of memory"));
    free(head);
    return rc;
}

void ns_lock_drop(ns_lock *lock)
{
    if (!lock)
        return;
    unlink(lock->path); /* under the lock: a newcomer that opened it sees it gone and retries */
    ns_lock_release(lock);
}

static int acquire(char *path, const char *what, const char *head, const char *tail,
                   int retry_gone, ns_lock **out, ns_err *err)
{
    int created = 0;
    struct timespec dir_times[2];
    int have_dir_times = get_dir_times(path, dir_times);
    int fd = open(path, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
    if (fd >= 0)
        created = 1;
    else if (errno == EEXIST)
        fd = open(path, O_RDWR | O_CLOEXEC);
    if (fd < 0) {
        int rc = ns_fail(err, NS_ERR_IO, "open %s: %s", path, strerror(errno));
        free(path);
        return rc;
    }
    if (try_lock(fd) != 0) {
        int e = errno;
        char holder[512];
        read_holder(fd, holder, sizeof holder);
        close(fd);
        if (created && !retry_gone) /* (a removable lock's file is its holder's to remove) */
            unlink(path);
        int rc;
        if (e == EAGAIN || e == EACCES) {
            rc = ns_fail(err, NS_ERR_INVALID, "%s (%s)%s", head, holder, tail);
        } else {
            rc = ns_fail(err, NS_ERR_IO, "lock %s: %s", path, strerror(e));
        }
        free(path);
        return rc;
    }
    struct stat fst, pst;
    if (retry_gone && (fstat(fd, &fst) != 0 || stat(path, &pst) != 0 || fst.st_dev != pst.st_dev ||
                       fst.st_ino != pst.st_ino)) {
        close(fd); /* removed (or replaced) by its holder meanwhile: take the new one */
        return acquire(path, what, head, tail, retry_gone, out, err);
    }
    ns_lock *l = malloc(sizeof *l);
    if (!l) {
        close(fd);
        free(path);
        return ns_fail(err, NS_ERR_NOMEM, "out of memory");
    }
    l->fd = fd;
    l->created = created;
    l->have_dir_times = have_dir_times;
    memcpy(l->dir_times, dir_times, sizeof dir_times);
    l->path = path;
    l->old = NULL;
    struct stat st;
    if (!created && fstat(fd, &st) == 0 && (l->old = malloc(NS_LOCK_RECORD_MAX))) {
        l->old_len = pread(fd, l->old, NS_LOCK_RECORD_MAX, 0);
        l->old_times[0] = st.st_atim;
        l->old_times[1] = st.st_mtim;
        if (l->old_len < 0)
            free(l->old), l->old = NULL;
    }
    *out = l;
    /* the holder is named from the first moment, so a runner refused meanwhile can say who */
    int rc = ns_lock_note(l, what ? what : "starting", err);
    if (rc != NS_OK) {
        ns_lock_abandon(l);
        *out = NULL;
    }
    return rc;
}

int ns_lock_note(ns_lock *l, const char *what, ns_err *err)
{
    char host[256] = "unknown", when[32], rec[1024];
    gethostname(host, sizeof host - 1);
    ns_iso_now(when, sizeof when);
    int n = snprintf(rec, sizeof rec, "host %s, pid %ld, since %s: %s\n", host, (long)getpid(),
                     when, what);
    if (n >= (int)sizeof rec)
        n = (int)sizeof rec - 1, rec[n - 1] = '\n';
    /* written over the old record, then cut to length: never empty while held */
    if (pwrite(l->fd, rec, (size_t)n, 0) != n || ftruncate(l->fd, n) != 0)
        return ns_fail(err, NS_ERR_IO, "write %s: %s", l->path, strerror(errno));
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

int ns_lock_peek(const char *dir, char *holder, size_t size)
{
    if (!holder || size == 0)
        return -1;
    holder[0] = '\0';
    char *path = ns_path_join(dir, NS_LOCK_FILE);
    if (!path)
        return -1;
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    free(path);
    if (fd < 0)
        return -1;
    int have = read_record(fd, holder, size);
    close(fd);
    return have ? 0 : -1;
}

void ns_lock_release(ns_lock *lock)
{
    if (!lock)
        return;
    close(lock->fd); /* closing the description releases its lock */
    free(lock->path);
    free(lock->old);
    free(lock);
}

void ns_lock_abandon(ns_lock *lock)
{
    if (!lock)
        return;
    /* before the release, so nobody else can hold it meanwhile: a created file goes, an existing
     * one gets its previous record and times back (a refused run leaves no trace) */
    char *dir;
    if (lock->created) {
        unlink(lock->path);
        if (lock->have_dir_times && dir_of(lock->path, &dir)) { /* its directory's times too */
            utimensat(AT_FDCWD, dir, lock->dir_times, 0);
            free(dir);
        }
    } else if (lock->old && ftruncate(lock->fd, 0) == 0 &&
               pwrite(lock->fd, lock->old, (size_t)lock->old_len, 0) == lock->old_len) {
        futimens(lock->fd, lock->old_times);
    }
    ns_lock_release(lock);
}

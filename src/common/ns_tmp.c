/* ns_tmp: temporaries' names, stale ones of dead processes, scratch directories (see ns_tmp.h). */
#include "common/ns_tmp.h"

#include <dirent.h>
#include <errno.h>
#include <ftw.h>
#include <libgen.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/ns_file.h"

/* The process id written after prefix in name (digits up to the end or to a '.' when dot), or
 * -1 when name is not prefix followed by one. */
static long pid_after(const char *name, const char *prefix, int dot)
{
    size_t k = strlen(prefix);
    if (strncmp(name, prefix, k) != 0)
        return -1;
    const char *d = name + k;
    size_t n = strspn(d, "0123456789");
    if (n == 0 || n > 9 || (dot ? d[n] != '.' || !d[n + 1] : d[n] != '\0'))
        return -1;
    long pid = strtol(d, NULL, 10);
    return pid > 0 ? pid : -1;
}

/* 1 when pid is no process on this machine. */
static int dead(long pid)
{
    return kill((pid_t)pid, 0) != 0 && errno == ESRCH;
}

/* 1 when path (not followed) is owned by this user and of the wanted kind. */
static int ours(const char *path, int want_dir)
{
    struct stat st;
    return lstat(path, &st) == 0 && st.st_uid == getuid() &&
           (want_dir ? S_ISDIR(st.st_mode) : S_ISREG(st.st_mode));
}

/* Visit the entries of dir named prefix<pid>[.suffix]; remove those whose pid is chosen. */
static size_t sweep_dir(const char *dir, const char *prefix, int is_dir, pid_t pid,
                        ns_tmp_removed_fn said, void *user)
{
    DIR *d = opendir(dir);
    size_t removed = 0;
    for (struct dirent *e; d && (e = readdir(d));) {
        long p = pid_after(e->d_name, prefix, is_dir);
        if (p < 0 || (pid > 0 ? p != (long)pid : !dead(p)))
            continue;
        char *path = strcmp(dir, ".") == 0 ? strdup(e->d_name) : ns_path_join(dir, e->d_name);
        if (path && ours(path, is_dir) &&
            (is_dir ? ns_tmp_remove_tree(path) == 0 : unlink(path) == 0)) {
            removed++;
            if (said)
                said(user, path);
        }
        free(path);
    }
    if (d)
        closedir(d);
    return removed;
}

/* final's directory and "BASE.tmp." (fresh strings). */
static int split_final(const char *final, char **dir, char **prefix)
{
    char *a = strdup(final), *b = strdup(final);
    *dir = a ? strdup(dirname(a)) : NULL;
    *prefix = b ? ns_str_printf("%s.tmp.", basename(b)) : NULL;
    free(a);
    free(b);
    if (*dir && *prefix)
        return 0;
    free(*dir);
    free(*prefix);
    return -1;
}

size_t ns_tmp_remove_stale(const char *final, ns_tmp_removed_fn said, void *user)
{
    char *dir, *prefix;
    if (split_final(final, &dir, &prefix) != 0)
        return 0;
    size_t n = sweep_dir(dir, prefix, 0, 0, said, user);
    free(dir);
    free(prefix);
    return n;
}

int ns_tmp_remove_own(const char *final, pid_t pid)
{
    char *tmp = ns_str_printf("%s.tmp.%ld", final, (long)pid);
    int removed = tmp && ours(tmp, 0) && unlink(tmp) == 0;
    free(tmp);
    return removed;
}

const char *ns_tmp_base(void)
{
    const char *t = getenv("TMPDIR");
    return t && *t ? t : "/tmp";
}

int ns_tmp_make_dir(const char *base, const char *prefix, char **dir, ns_err *err)
{
    char *t = ns_str_printf("%s/%s.%ld.XXXXXX", base, prefix, (long)getpid());
    if (!t)
        return ns_fail(err, NS_ERR_NOMEM, "out of memory");
    if (!mkdtemp(t)) {
        int e = errno;
        free(t);
        return ns_fail(err, NS_ERR_IO, "cannot create a directory in %s: %s", base, strerror(e));
    }
    *dir = t;
    return NS_OK;
}

size_t ns_tmp_remove_dirs(const char *base, const char *prefix, pid_t pid, ns_tmp_removed_fn said,
                          void *user)
{
    char *p = ns_str_printf("%s.", prefix);
    size_t n = p ? sweep_dir(base, p, 1, pid, said, user) : 0;
    free(p);
    return n;
}

static int rm_entry(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
    (void)st, (void)ftw;
    if (flag == FTW_DP)
        rmdir(path);
    else
        unlink(path);
    return 0; /* keep going: what stays is seen at the end */
}

int ns_tmp_remove_tree(const char *path)
{
    nftw(path, rm_entry, 16, FTW_DEPTH | FTW_PHYS);
    struct stat st;
    return lstat(path, &st) == 0 ? -1 : 0;
}

/* ns_run_files: a finished run's files as archive members (see ns_run_files.h). */
#include "archive/ns_run_files.h"

#include "archive/ns_archive_provenance.h"

#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "archive/ns_archive_layout.h"
#include "common/ns_file.h"
#include "journal/ns_journal.h"

static int own(ns_run_files *l, char *s, ns_err *err)
{
    if (!s)
        return ns_fail(err, NS_ERR_NOMEM, "out of memory");
    if (l->nowned == l->capowned) {
        size_t cap = l->capowned ? 2 * l->capowned : 32;
        char **p = realloc(l->owned, cap * sizeof *p);
        if (!p) {
            free(s);
            return ns_fail(err, NS_ERR_NOMEM, "out of memory");
        }
        l->owned = p;
        l->capowned = cap;
    }
    l->owned[l->nowned++] = s;
    return NS_OK;
}

int ns_run_files_add(ns_run_files *l, const char *name, const char *path, const void *data,
                     size_t len, unsigned mode, ns_err *err)
{
    for (size_t i = 0; i < l->n; i++)
        if (strcmp(l->items[i].name, name) == 0)
            return ns_fail(err, NS_ERR_INVALID, "%s and %s would both be archived as %s: rename "
                           "or move one of them; nothing written",
                           l->items[i].path ? l->items[i].path : "a member archive makes",
                           path ? path : "a member archive makes", name);
    if (l->n == l->cap) {
        size_t cap = l->cap ? 2 * l->cap : 16;
        ns_archive_source *p = realloc(l->items, cap * sizeof *p);
        if (!p)
            return ns_fail(err, NS_ERR_NOMEM, "out of memory");
        l->items = p;
        l->cap = cap;
    }
    char *n = strdup(name), *pp = path ? strdup(path) : NULL;
    NS_TRY(own(l, n, err));
    if (path)
        NS_TRY(own(l, pp, err));
    l->items[l->n++] = (ns_archive_source){n, pp, data, len, mode};
    return NS_OK;
}

void ns_run_files_free(ns_run_files *l)
{
    for (size_t i = 0; i < l->nowned; i++)
        free(l->owned[i]);
    free(l->owned);
    free(l->items);
    memset(l, 0, sizeof *l);
}

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

static void free_strs(char **s, size_t n)
{
    for (size_t i = 0; i < n; i++)
        free(s[i]);
    free(s);
}

/* The names in dir but "." and "..", sorted (caller frees with free_strs). */
static int names_in(const char *dir, char ***out, size_t *n, ns_err *err)
{
    *out = NULL;
    *n = 0;
    DIR *d = opendir(dir);
    if (!d)
        return ns_fail(err, NS_ERR_IO, "%s: %s", dir, strerror(errno));
    size_t cap = 0;
    int rc = NS_OK;
    for (struct dirent *e; rc == NS_OK && (e = readdir(d));) {
        if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0)
            continue;
        if (*n == cap) {
            cap = cap ? 2 * cap : 16;
            char **q = realloc(*out, cap * sizeof *q);
            if (!q) {
                rc = ns_fail(err, NS_ERR_NOMEM, "out of memory");
                break;
            }
            *out = q;
        }
        if (!((*out)[*n] = strdup(e->d_name)))
            rc = ns_fail(err, NS_ERR_NOMEM, "out of memory");
        else
            (*n)++;
    }
    closedir(d);
    if (rc == NS_OK && *n)
        qsort(*out, *n, sizeof **out, cmp_str);
    return rc;
}

/* Refuse path, which lstat described as st, unless it is a regular file or a directory. */
static int refuse_special(const char *path, const struct stat *st, ns_err *err)
{
    if (S_ISLNK(st->st_mode)) {
        char to[PATH_MAX];
        ssize_t k = readlink(path, to, sizeof to - 1);
        to[k > 0 ? k : 0] = 0;
        return ns_fail(err, NS_ERR_INVALID, "%s is a symbolic link (to %s): an archive holds "
                       "regular files only (a link may lead out of the run, to a private file); "
                       "copy the file into the run directory if it belongs in the archive; "
                       "nothing written", path, to);
    }
    if (!S_ISREG(st->st_mode) && !S_ISDIR(st->st_mode))
        return ns_fail(err, NS_ERR_INVALID, "%s is a %s: an archive holds regular files only; "
                       "move it out of the run directory; nothing written", path,
                       S_ISFIFO(st->st_mode) ? "FIFO" : S_ISSOCK(st->st_mode) ? "socket"
                                                                                : "device");
    return NS_OK;
}

int ns_run_files_add_tree(ns_run_files *l, const char *dir, const char *prefix,
                          int (*keep)(const char *name), int recurse, ns_err *err)
{
    char **names = NULL;
    size_t n = 0;
    int rc = names_in(dir, &names, &n, err);
    for (size_t i = 0; rc == NS_OK && i < n; i++) {
        if (keep && !keep(names[i]))
            continue;
        char *path = ns_path_join(dir, names[i]);
        char *name = ns_str_printf("%s/%s", prefix, names[i]);
        struct stat st;
        if (!path || !name)
            rc = ns_fail(err, NS_ERR_NOMEM, "out of memory");
        else if (lstat(path, &st) != 0)
            rc = ns_fail(err, NS_ERR_IO, "%s: %s", path, strerror(errno));
        else if ((rc = refuse_special(path, &st, err)) != NS_OK)
            ;
        else if (!ns_archive_name_ok(name))
            rc = ns_fail(err, NS_ERR_INVALID, "%s: a name no archive member may have (control "
                         "characters or a backslash): rename it; nothing written", path);
        else if (S_ISDIR(st.st_mode) && recurse)
            rc = ns_run_files_add_tree(l, path, name, NULL, 1, err);
        else if (S_ISREG(st.st_mode))
            rc = ns_run_files_add(l, name, path, NULL, 0, 0, err);
        free(path);
        free(name);
    }
    free_strs(names, n);
    return rc;
}

int ns_run_files_is_log(const char *name)
{
    return ns_str_ends_with(name, ".log") || ns_str_ends_with(name, ".out") ||
           ns_str_ends_with(name, ".err");
}

static const char *base_of(const char *p)
{
    const char *s = strrchr(p, '/');
    return s ? s + 1 : p;
}

/* word for a POSIX shell: as it is when it holds only characters no shell treats specially,
 * else in single quotes (each ' as '\''). Into buf. */
static void shell_word(const char *word, char *buf, size_t size)
{
    if (*word && strspn(word, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"
                              "-_./=:,+@%") == strlen(word)) {
        size_t l = strlen(word) < size ? strlen(word) : size - 1;
        memcpy(buf, word, l);
        buf[l] = 0;
        return;
    }
    size_t n = 0;
    buf[n++] = '\'';
    for (; *word && n + 6 < size; word++) {
        if (*word == '\'') {
            memcpy(buf + n, "'\\''", 4);
            n += 4;
        } else {
            buf[n++] = *word;
        }
    }
    buf[n++] = '\'';
    buf[n] = 0;
}

/* How to continue the run whose checkpoint history (a file) records its last segment: that
 * command with --resume, run from the directory it ran in (a line to paste: `cd DIR && ...`,
 * the command as typed, the sweep file named in it); else what to type. Into buf. */
static void continue_with(const char *history, char *buf, size_t size)
{
    char *text = NULL;
    size_t len = 0;
    ns_err e;
    ns_history_line h;
    if (history && ns_file_read_all(history, 0, &text, &len, &e) == NS_OK &&
        ns_archive_history_last(text, &h)) {
        int resumed = strstr(h.command, " --resume") != NULL;
        char cd[1600] = "";
        if (h.cwd[0]) {
            char dir[1560];
            shell_word(h.cwd, dir, sizeof dir);
            snprintf(cd, sizeof cd, "cd %s && ", dir);
        }
        snprintf(buf, size, "continue it with the command its checkpoint's history records%s, "
                 "from the directory it ran in: %s%.2000s%s", resumed ? "" : " (--resume added)",
                 cd, h.command, resumed ? "" : " --resume");
    } else {
        snprintf(buf, size, "continue it with the command that started it (the same sweep "
                 "file, --output and --checkpoint-dir) and --resume");
    }
    free(text);
}

/* No NetCDF in run_dir: a half-finished run (a checkpoint or an output temporary) or nothing. */
static int no_nc(const char *run_dir, char **names, size_t n, ns_err *err)
{
    char *journal = ns_path_join(run_dir, NS_ARCHIVE_CKPT_DIR "/" NS_JOURNAL_FILE);
    char *history = ns_path_join(run_dir, NS_ARCHIVE_CKPT_DIR "/history");
    int has_ckpt = journal && ns_file_is_regular(journal);
    free(journal);
    for (size_t i = 0; i < n; i++) {
        if (ns_str_ends_with(names[i], ".ckpt") && !has_ckpt && history) {
            free(history); /* a checkpoint beside the output (NC.ckpt) */
            char *d = ns_path_join(run_dir, names[i]);
            history = d ? ns_path_join(d, "history") : NULL;
            free(d);
        }
        if (strstr(names[i], ".nc.tmp") || ns_str_ends_with(names[i], ".ckpt"))
            has_ckpt = 1;
    }
    char how[4096];
    continue_with(history && ns_file_is_regular(history) ? history : NULL, how, sizeof how);
    free(history);
    if (has_ckpt)
        return ns_fail(err, NS_ERR_INVALID, "incomplete run: %s has a checkpoint but no NetCDF "
                       "output: the sweep did not finish; %s", run_dir, how);
    return ns_fail(err, NS_ERR_INVALID, "no NetCDF file (*.nc) in run directory %s (name it "
                   "with --nc)", run_dir);
}

int ns_run_files_find_nc(const char *run_dir, const char *nc_opt, char **nc, char **member,
                         ns_err *err)
{
    *nc = *member = NULL;
    if (nc_opt) {
        if (!ns_file_is_regular(nc_opt))
            return ns_fail(err, NS_ERR_INVALID, "--nc %s: no such file", nc_opt);
        if (!ns_str_ends_with(base_of(nc_opt), ".nc"))
            return ns_fail(err, NS_ERR_INVALID, "--nc %s: the NetCDF file's name must end in .nc "
                           "(verify finds the NetCDF member by it)", nc_opt);
        *nc = realpath(nc_opt, NULL); /* a link the user named: its target is archived */
        *member = strdup(base_of(nc_opt));
        return *nc && *member ? NS_OK : ns_fail(err, NS_ERR_NOMEM, "out of memory");
    }
    char **names = NULL;
    size_t n = 0, count = 0, first = 0, second = 0;
    int rc = names_in(run_dir, &names, &n, err);
    for (size_t i = 0; rc == NS_OK && i < n; i++) {
        char *p = ns_str_ends_with(names[i], ".nc") ? ns_path_join(run_dir, names[i]) : NULL;
        struct stat st;
        if (p && lstat(p, &st) == 0 && (S_ISREG(st.st_mode) || S_ISLNK(st.st_mode))) {
            if (count == 0)
                first = i;
            else if (count == 1)
                second = i;
            count++;
        }
        free(p);
    }
    char *found = rc == NS_OK && count ? ns_path_join(run_dir, names[first]) : NULL;
    struct stat st;
    if (rc != NS_OK)
        ;
    else if (count > 1)
        rc = ns_fail(err, NS_ERR_INVALID, "run directory %s holds %zu NetCDF files (%s/%s, %s/%s%s): "
                     "choose one with --nc", run_dir, count, run_dir, names[first], run_dir,
                     names[second], count > 2 ? ", ..." : "");
    else if (!count)
        rc = no_nc(run_dir, names, n, err);
    else if (!found)
        rc = ns_fail(err, NS_ERR_NOMEM, "out of memory");
    else if (lstat(found, &st) != 0)
        rc = ns_fail(err, NS_ERR_IO, "%s: %s", found, strerror(errno));
    else if (S_ISLNK(st.st_mode))
        rc = ns_fail(err, NS_ERR_INVALID, "%s is a symbolic link: name the NetCDF file with --nc "
                     "to archive it; nothing written", found);
    else
        rc = (*member = strdup(names[first])) ? NS_OK : ns_fail(err, NS_ERR_NOMEM, "out of memory");
    if (rc == NS_OK)
        *nc = found, found = NULL;
    free(found);
    free_strs(names, n);
    return rc;
}

int ns_run_files_find_ckpt(const char *run_dir, const char *ckpt_opt, const char *nc, char **dir,
                           ns_err *err)
{
    *dir = NULL;
    char *cand[2] = {NULL, NULL};
    size_t nc_ = 0;
    if (ckpt_opt) {
        cand[nc_++] = strdup(ckpt_opt);
    } else {
        cand[nc_++] = ns_path_join(run_dir, NS_ARCHIVE_CKPT_DIR);
        cand[nc_++] = ns_str_printf("%s.ckpt", nc);
    }
    int rc = NS_OK;
    for (size_t i = 0; i < nc_; i++)
        if (!cand[i])
            rc = ns_fail(err, NS_ERR_NOMEM, "out of memory");
    for (size_t i = 0; rc == NS_OK && i < nc_ && !*dir; i++) {
        char *j = ns_path_join(cand[i], NS_JOURNAL_FILE);
        if (!j) {
            rc = ns_fail(err, NS_ERR_NOMEM, "out of memory");
            break;
        }
        if (ns_file_is_dir(cand[i]) && ns_file_is_regular(j)) {
            *dir = cand[i];
            cand[i] = NULL;
        }
        free(j);
    }
    if (rc == NS_OK && !*dir) {
        if (ckpt_opt)
            rc = ns_fail(err, NS_ERR_INVALID, "--checkpoint-dir %s: no %s in it", ckpt_opt,
                         NS_JOURNAL_FILE);
        else
            rc = ns_fail(err, NS_ERR_INVALID, "no journal: neither %s nor %s holds %s (name the "
                         "checkpoint directory with --checkpoint-dir)", cand[0], cand[1],
                         NS_JOURNAL_FILE);
    }
    for (size_t i = 0; i < nc_; i++)
        free(cand[i]);
    return rc;
}

/* Whether a and b name the same file or directory. */
static int same_file(const char *a, const char *b)
{
    struct stat x, y;
    return a && b && stat(a, &x) == 0 && stat(b, &y) == 0 && x.st_dev == y.st_dev &&
           x.st_ino == y.st_ino;
}

void ns_run_files_left_out(const char *run_dir, const char *nc, const char *ckpt, char *buf,
                           size_t size)
{
    char **names = NULL;
    size_t n = 0, shown = 0, more = 0, at = 0;
    ns_err e;
    buf[0] = 0;
    if (names_in(run_dir, &names, &n, &e) != NS_OK)
        return;
    for (size_t i = 0; i < n; i++) {
        char *p = ns_path_join(run_dir, names[i]);
        struct stat st;
        int kept = !p || lstat(p, &st) != 0 || same_file(p, nc) || same_file(p, ckpt) ||
                   ((strcmp(names[i], NS_ARCHIVE_LOG_DIR) == 0 ||
                     strcmp(names[i], NS_ARCHIVE_REPORT_DIR) == 0) && S_ISDIR(st.st_mode)) ||
                   (ns_run_files_is_log(names[i]) && S_ISREG(st.st_mode));
        if (!kept && shown < 8 && at < size) {
            at += (size_t)snprintf(buf + at, size - at, "%s%s%s", shown ? ", " : "", p,
                                   S_ISDIR(st.st_mode) ? "/" : "");
            shown++;
        } else if (!kept) {
            more++;
        }
        free(p);
    }
    if (more && at < size)
        snprintf(buf + at, size - at, " and %zu more", more);
    free_strs(names, n);
}

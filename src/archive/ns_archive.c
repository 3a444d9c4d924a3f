/* ns_archive: tar.gz reproducibility archives with a SHA-256 manifest (see ns_archive.h). */
#include "archive/ns_archive.h"

#include <archive.h>
#include <archive_entry.h>
#include <errno.h>
#include <fcntl.h>
#include <openssl/evp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "common/ns_file.h"
#include "common/ns_outpath.h"
#include "common/ns_sys.h"
#include "archive/ns_archive_layout.h"

#define BLOCK (1u << 20)

/* ---- small helpers ------------------------------------------------------------------------ */

static void hex_of(const unsigned char *d, char hex[NS_SHA256_HEX_LEN + 1])
{
    static const char digits[] = "0123456789abcdef";
    for (size_t i = 0; i < 32; i++) {
        hex[2 * i] = digits[d[i] >> 4];
        hex[2 * i + 1] = digits[d[i] & 15];
    }
    hex[NS_SHA256_HEX_LEN] = 0;
}

/* Incremental SHA-256 (the streaming counterpart of ns_sha256_buffer). */
static int hash_begin(EVP_MD_CTX **ctx, ns_err *err)
{
    *ctx = EVP_MD_CTX_new();
    if (!*ctx || EVP_DigestInit_ex(*ctx, EVP_sha256(), NULL) != 1) {
        EVP_MD_CTX_free(*ctx);
        *ctx = NULL;
        return ns_fail(err, NS_ERR_LIBRARY, "SHA-256: cannot initialise libcrypto digest");
    }
    return NS_OK;
}

static int hash_end(EVP_MD_CTX *ctx, char hex[NS_SHA256_HEX_LEN + 1], ns_err *err)
{
    unsigned char d[EVP_MAX_MD_SIZE];
    unsigned int n = 0;
    int ok = EVP_DigestFinal_ex(ctx, d, &n) == 1 && n == 32;
    EVP_MD_CTX_free(ctx);
    if (!ok)
        return ns_fail(err, NS_ERR_LIBRARY, "SHA-256: digest failed");
    hex_of(d, hex);
    return NS_OK;
}

void ns_archive_list_free(ns_archive_list *l)
{
    if (!l)
        return;
    for (size_t i = 0; i < l->n; i++)
        free(l->items[i].name);
    free(l->items);
    free(l->top);
    memset(l, 0, sizeof *l);
}

static int list_add(ns_archive_list *l, const char *name, const char *sha, uint64_t size,
                    ns_err *err)
{
    if (l->n == l->cap) {
        size_t cap = l->cap ? 2 * l->cap : 16;
        ns_archive_member *p = realloc(l->items, cap * sizeof *p);
        if (!p)
            return ns_fail(err, NS_ERR_NOMEM, "out of memory");
        l->items = p;
        l->cap = cap;
    }
    ns_archive_member *m = &l->items[l->n];
    if (!(m->name = strdup(name)))
        return ns_fail(err, NS_ERR_NOMEM, "out of memory");
    snprintf(m->sha256, sizeof m->sha256, "%s", sha);
    m->size = size;
    l->n++;
    return NS_OK;
}

const ns_archive_member *ns_archive_list_find(const ns_archive_list *l, const char *name)
{
    for (size_t i = 0; i < l->n; i++)
        if (strcmp(l->items[i].name, name) == 0)
            return &l->items[i];
    return NULL;
}

int ns_archive_name_ok(const char *name)
{
    if (!name || !*name || name[0] == '/')
        return 0;
    for (const char *p = name; *p; p++)
        if ((unsigned char)*p < 0x20 || *p == 0x7f || *p == '\\')
            return 0;
    const char *c = name;
    for (;;) {
        const char *slash = strchr(c, '/');
        size_t len = slash ? (size_t)(slash - c) : strlen(c);
        if (len == 0 || (len == 1 && c[0] == '.') || (len == 2 && c[0] == '.' && c[1] == '.'))
            return 0;
        if (!slash)
            return 1;
        c = slash + 1;
    }
}

static int cmp_member(const void *a, const void *b)
{
    return strcmp(((const ns_archive_member *)a)->name, ((const ns_archive_member *)b)->name);
}

int ns_archive_manifest_text(const ns_archive_list *members, char **text, size_t *len,
                             ns_err *err)
{
    *text = NULL;
    *len = 0;
    ns_archive_member *sorted = malloc((members->n + 1) * sizeof *sorted);
    size_t cap = 1;
    for (size_t i = 0; i < members->n; i++)
        cap += NS_SHA256_HEX_LEN + 3 + strlen(members->items[i].name);
    char *t = malloc(cap);
    if (!sorted || !t) {
        free(sorted);
        free(t);
        return ns_fail(err, NS_ERR_NOMEM, "out of memory");
    }
    if (members->n)
        memcpy(sorted, members->items, members->n * sizeof *sorted);
    qsort(sorted, members->n, sizeof *sorted, cmp_member);
    size_t at = 0;
    t[0] = 0;
    for (size_t i = 0; i < members->n; i++)
        at += (size_t)snprintf(t + at, cap - at, "%s  %s\n", sorted[i].sha256, sorted[i].name);
    free(sorted);
    *text = t;
    *len = at;
    return NS_OK;
}

/* ---- writing -------------------------------------------------------------------------------- */

static int ar_fail(ns_err *err, struct archive *a, const char *what, const char *path)
{
    const char *m = archive_error_string(a);
    return ns_fail(err, NS_ERR_IO, "%s %s: %s", what, path, m ? m : "libarchive error");
}

/* Write one entry header for top/name of size bytes. */
static int put_header(struct archive *a, const char *top, const char *name, uint64_t size,
                      time_t mtime, unsigned perm, const char *out, ns_err *err)
{
    size_t n = strlen(top) + strlen(name) + 2;
    char *full = malloc(n);
    struct archive_entry *e = archive_entry_new();
    int rc = NS_OK;
    if (!full || !e) {
        rc = ns_fail(err, NS_ERR_NOMEM, "out of memory");
        goto done;
    }
    snprintf(full, n, "%s/%s", top, name);
    archive_entry_set_pathname(e, full);
    archive_entry_set_filetype(e, AE_IFREG);
    archive_entry_set_perm(e, perm & 0777);
    archive_entry_set_size(e, (la_int64_t)size);
    archive_entry_set_mtime(e, mtime, 0);
    if (archive_write_header(a, e) != ARCHIVE_OK)
        rc = ar_fail(err, a, "write", out);
done:
    archive_entry_free(e);
    free(full);
    return rc;
}

static int put_data(struct archive *a, const void *data, size_t len, const char *out, ns_err *err)
{
    const char *p = data;
    while (len > 0) {
        la_ssize_t w = archive_write_data(a, p, len);
        if (w <= 0)
            return ar_fail(err, a, "write", out);
        p += w;
        len -= (size_t)w;
    }
    return NS_OK;
}

/* Stream one file into the archive, hashing it on the way. */
/* The stop request (NULL: none), as an error naming what was not written. */
static int stopped(const volatile sig_atomic_t *stop, const char *out, ns_err *err)
{
    if (!stop || !*stop)
        return NS_OK;
    return ns_fail(err, NS_ERR_INTERRUPTED, "interrupted; %s was not written (its temporary is "
                   "removed)", out);
}

static int put_file(struct archive *a, const char *top, const ns_archive_source *s,
                    unsigned char *buf, const char *out, char hex[NS_SHA256_HEX_LEN + 1],
                    uint64_t *size, const volatile sig_atomic_t *stop, ns_err *err)
{
    int rc = NS_OK;
    EVP_MD_CTX *ctx = NULL;
    int fd = open(s->path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
    if (fd < 0)
        return errno == ELOOP ? ns_fail(err, NS_ERR_INVALID, "%s is a symbolic link: an archive "
                                        "holds regular files only", s->path)
                              : ns_fail(err, NS_ERR_IO, "open %s: %s", s->path, strerror(errno));
    struct stat st;
    if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
        rc = ns_fail(err, NS_ERR_IO, "%s: not a regular file", s->path);
        goto done;
    }
    *size = (uint64_t)st.st_size;
    if ((rc = put_header(a, top, s->name, *size, st.st_mtime, (unsigned)st.st_mode, out, err)) !=
        NS_OK)
        goto done;
    if ((rc = hash_begin(&ctx, err)) != NS_OK)
        goto done;
    uint64_t total = 0;
    for (;;) {
        ssize_t r = read(fd, buf, BLOCK);
        if (r < 0 && errno == EINTR)
            continue;
        if (r < 0) {
            rc = ns_fail(err, NS_ERR_IO, "read %s: %s", s->path, strerror(errno));
            goto done;
        }
        if (r == 0)
            break;
        total += (uint64_t)r;
        if (total > *size)
            break;
        EVP_DigestUpdate(ctx, buf, (size_t)r);
        if ((rc = put_data(a, buf, (size_t)r, out, err)) != NS_OK ||
            (rc = stopped(stop, out, err)) != NS_OK)
            goto done;
    }
    if (total != *size) {
        rc = ns_fail(err, NS_ERR_IO, "%s changed size while it was archived (%llu bytes, now %llu)",
                     s->path, (unsigned long long)*size, (unsigned long long)total);
        goto done;
    }
    rc = hash_end(ctx, hex, err);
    ctx = NULL;
done:
    EVP_MD_CTX_free(ctx);
    close(fd);
    return rc;
}

/* The archive must not replace a file it packs, nor lie inside the checkpoint directory whose
 * files it packs (common/ns_outpath: links, "..", hard links). */
static int check_out_path(const char *out, const ns_archive_source *src, size_t n, ns_err *err)
{
    ns_outpath_role o = {"the archive", out, 0};
    int rc = NS_OK;
    for (size_t i = 0; rc == NS_OK && i < n; i++) {
        if (!src[i].path)
            continue;
        char what[512];
        snprintf(what, sizeof what, "the file of member %.400s,", src[i].name);
        ns_outpath_role in = {what, src[i].path, 0};
        rc = ns_outpath_check(&o, &in, 1, err);
        if (rc != NS_OK || strncmp(src[i].name, NS_ARCHIVE_CKPT_DIR "/",
                                   strlen(NS_ARCHIVE_CKPT_DIR "/")) != 0)
            continue;
        char *dir = strdup(src[i].path), *slash = dir ? strrchr(dir, '/') : NULL;
        if (slash)
            *slash = '\0';
        ns_outpath_role ck = {"the run's checkpoint directory", slash ? dir : ".", 1};
        rc = dir ? ns_outpath_check(&o, &ck, 1, err) : ns_fail(err, NS_ERR_NOMEM, "out of memory");
        free(dir);
    }
    return rc;
}

int ns_archive_write(const char *out, const char *top, const ns_archive_source *src, size_t n,
                     ns_archive_list *written, const ns_hooks *hooks, ns_err *err)
{
    const volatile sig_atomic_t *stop = hooks ? hooks->stop : NULL;
    int rc = NS_OK;
    ns_archive_list list;
    memset(&list, 0, sizeof list);
    struct archive *a = NULL;
    unsigned char *buf = NULL;
    char *tmp = NULL, *mtext = NULL;
    size_t mlen = 0;
    int fd = -1, opened = 0;

    if (!ns_archive_name_ok(top) || strchr(top, '/'))
        return ns_fail(err, NS_ERR_INVALID, "archive: bad top-level directory name '%s'", top);
    for (size_t i = 0; i < n; i++) {
        if (!ns_archive_name_ok(src[i].name) || strcmp(src[i].name, NS_ARCHIVE_MANIFEST) == 0)
            return ns_fail(err, NS_ERR_INVALID, "archive: bad member name '%s'", src[i].name);
        for (size_t j = 0; j < i; j++)
            if (strcmp(src[i].name, src[j].name) == 0)
                return ns_fail(err, NS_ERR_INVALID, "archive: member '%s' given twice",
                               src[i].name);
    }
    if ((rc = check_out_path(out, src, n, err)) != NS_OK)
        return rc;
    if (!(tmp = ns_file_temp_name(out)) || !(buf = malloc(BLOCK))) {
        rc = ns_fail(err, NS_ERR_NOMEM, "out of memory");
        goto done;
    }
    /* no more readable than the most private member: its group and others bits */
    unsigned perm = 0644;
    for (size_t i = 0; i < n; i++) {
        struct stat st;
        unsigned m = src[i].path ? (stat(src[i].path, &st) == 0 ? (unsigned)st.st_mode : 0600)
                                 : (src[i].mode ? src[i].mode : 0644);
        perm &= (m & 0777) | 0600;
    }
    fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, perm);
    if (fd < 0) {
        rc = ns_fail(err, NS_ERR_IO, "create %s: %s", tmp, strerror(errno));
        goto done;
    }
    if (!(a = archive_write_new())) {
        rc = ns_fail(err, NS_ERR_NOMEM, "out of memory");
        goto done;
    }
    if (archive_write_add_filter_gzip(a) != ARCHIVE_OK ||
        archive_write_set_format_pax_restricted(a) != ARCHIVE_OK ||
        archive_write_open_fd(a, fd) != ARCHIVE_OK) {
        rc = ar_fail(err, a, "open", tmp);
        goto done;
    }
    opened = 1;
    if (hooks && hooks->hold) /* test only: NULL but in a test that holds the writer */
        hooks->hold(hooks->hold_user, "temp", 0);
    time_t now = time(NULL);
    for (size_t i = 0; i < n; i++) {
        char hex[NS_SHA256_HEX_LEN + 1];
        uint64_t size = 0;
        if ((rc = stopped(stop, out, err)) != NS_OK)
            goto done;
        if (src[i].path) {
            rc = put_file(a, top, &src[i], buf, out, hex, &size, stop, err);
        } else {
            size = src[i].len;
            if ((rc = ns_sha256_buffer(src[i].data, src[i].len, hex, err)) == NS_OK &&
                (rc = put_header(a, top, src[i].name, size, now,
                                 src[i].mode ? src[i].mode : 0644, out, err)) == NS_OK)
                rc = put_data(a, src[i].data, src[i].len, out, err);
        }
        if (rc == NS_OK)
            rc = list_add(&list, src[i].name, hex, size, err);
        if (rc != NS_OK)
            goto done;
    }
    if ((rc = ns_archive_manifest_text(&list, &mtext, &mlen, err)) != NS_OK ||
        (rc = put_header(a, top, NS_ARCHIVE_MANIFEST, mlen, now, perm, out, err)) != NS_OK ||
        (rc = put_data(a, mtext, mlen, out, err)) != NS_OK)
        goto done;
    opened = 0;
    if (archive_write_close(a) != ARCHIVE_OK) {
        rc = ar_fail(err, a, "finish", tmp);
        goto done;
    }
    if (fsync(fd) != 0) {
        rc = ns_fail(err, NS_ERR_IO, "fsync %s: %s", tmp, strerror(errno));
        goto done;
    }
    if (close(fd) != 0) {
        fd = -1;
        rc = ns_fail(err, NS_ERR_IO, "close %s: %s", tmp, strerror(errno));
        goto done;
    }
    fd = -1;
    if (rename(tmp, out) != 0) {
        rc = ns_fail(err, NS_ERR_IO, "rename %s to %s: %s", tmp, out, strerror(errno));
        goto done;
    }
    rc = ns_file_sync_parent_dir(out, err);
done:
    if (a) {
        if (opened)
            archive_write_close(a); /* releases the gzip state; the temporary is removed below */
        archive_write_free(a);
    }
    if (fd >= 0)
        close(fd);
    if (rc != NS_OK && tmp)
        unlink(tmp);
    if (rc == NS_OK && written)
        *written = list;
    else
        ns_archive_list_free(&list);
    free(tmp);
    free(buf);
    free(mtext);
    return rc;
}

/* ---- extraction ----------------------------------------------------------------------------- */

/* Split an entry path into its top directory and the rest (both in fresh strings). Leading "./"
 * components are dropped. Returns 0 when the path has no rest (a top-level file or the top
 * directory itself: *rest is then NULL). */
static int split_top(const char *path, char **top, char **rest)
{
    while (path[0] == '.' && path[1] == '/')
        path += 2;
    while (*path == '/')
        path++; /* caught by the safety check of the joined name below */
    const char *slash = strchr(path, '/');
    *rest = NULL;
    if (!slash) {
        *top = strdup(path);
        return 0;
    }
    *top = strndup(path, (size_t)(slash - path));
    const char *r = slash + 1;
    size_t len = strlen(r);
    while (len > 0 && r[len - 1] == '/')
        len--;
    if (len == 0)
        return 0;
    *rest = strndup(r, len);
    return 1;
}

/* Open archive for reading (a regular file; gzip/any filter, tar). *out NULL on failure. */
static int open_reader(const char *archive, struct archive **out, ns_err *err)
{
    *out = NULL;
    struct stat st;
    if (stat(archive, &st) != 0)
        return ns_fail(err, NS_ERR_IO, "%s: %s", archive, strerror(errno));
    if (!S_ISREG(st.st_mode))
        return ns_fail(err, NS_ERR_IO, "%s: not a regular file", archive);
    struct archive *a = archive_read_new();
    if (!a)
        return ns_fail(err, NS_ERR_NOMEM, "out of memory");
    archive_read_support_filter_all(a);
    archive_read_support_format_tar(a);
    if (archive_read_open_filename(a, archive, 65536) != ARCHIVE_OK) {
        const char *m = archive_error_string(a);
        int rc = ns_fail(err, NS_ERR_FORMAT, "%s: not a readable tar.gz archive (%s)", archive,
                         m ? m : "cannot open");
        archive_read_free(a);
        return rc;
    }
    *out = a;
    return NS_OK;
}

static void close_reader(struct archive *a)
{
    if (a) {
        archive_read_close(a);
        archive_read_free(a);
    }
}

/* The next entry: *e, its top directory and the rest of its path (fresh strings, rest NULL for
 * the top itself), *has_rest. Returns NS_OK, or NS_ERR_FORMAT/NOMEM; *e NULL at the end. */
static int next_entry(struct archive *a, const char *archive, struct archive_entry **e,
                      char **top, char **rest, int *has_rest, ns_err *err)
{
    *top = *rest = NULL;
    int r = archive_read_next_header(a, e);
    if (r == ARCHIVE_EOF) {
        *e = NULL;
        return NS_OK;
    }
    if (r != ARCHIVE_OK && r != ARCHIVE_WARN) {
        const char *m = archive_error_string(a);
        return ns_fail(err, NS_ERR_FORMAT, "%s: not a readable tar.gz archive (%s)", archive,
                       m ? m : "bad header");
    }
    const char *p = archive_entry_pathname(*e);
    if (!p)
        return ns_fail(err, NS_ERR_FORMAT, "%s: an entry has no name", archive);
    *has_rest = split_top(p, top, rest);
    if (!*top)
        return ns_fail(err, NS_ERR_NOMEM, "out of memory");
    return NS_OK;
}

static int extract_one(struct archive *a, const char *archive, const char *dest, const char *name,
                       unsigned char *buf, char hex[NS_SHA256_HEX_LEN + 1], uint64_t *size,
                       ns_err *err)
{
    int rc = NS_OK;
    EVP_MD_CTX *ctx = NULL;
    char *path = ns_path_join(dest, name);
    int fd = -1;
    if (!path)
        return ns_fail(err, NS_ERR_NOMEM, "out of memory");
    char *slash = strrchr(path, '/');
    if (slash) {
        *slash = 0;
        rc = ns_file_mkdirs(path, err);
        *slash = '/';
        if (rc != NS_OK)
            goto done;
    }
    fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0644);
    if (fd < 0) {
        rc = errno == EEXIST
                 ? ns_fail(err, NS_ERR_FORMAT, "%s: member %s appears twice", archive, name)
                 : ns_fail(err, NS_ERR_IO, "create %s: %s", path, strerror(errno));
        goto done;
    }
    if ((rc = hash_begin(&ctx, err)) != NS_OK)
        goto done;
    *size = 0;
    for (;;) {
        la_ssize_t r = archive_read_data(a, buf, BLOCK);
        if (r < 0) {
            const char *m = archive_error_string(a);
            rc = ns_fail(err, NS_ERR_FORMAT, "%s: member %s: %s", archive, name,
                         m ? m : "read error");
            goto done;
        }
        if (r == 0)
            break;
        EVP_DigestUpdate(ctx, buf, (size_t)r);
        *size += (uint64_t)r;
        const unsigned char *p = buf;
        size_t left = (size_t)r;
        while (left > 0) {
            ssize_t w = write(fd, p, left);
            if (w < 0 && errno == EINTR)
                continue;
            if (w < 0) {
                rc = ns_fail(err, NS_ERR_IO, "write %s: %s", path, strerror(errno));
                goto done;
            }
            p += w;
            left -= (size_t)w;
        }
    }
    rc = hash_end(ctx, hex, err);
    ctx = NULL;
    if (rc == NS_OK && close(fd) != 0)
        rc = ns_fail(err, NS_ERR_IO, "close %s: %s", path, strerror(errno));
    fd = -1;
done:
    EVP_MD_CTX_free(ctx);
    if (fd >= 0)
        close(fd);
    free(path);
    return rc;
}

int ns_archive_extract(const char *archive, const char *dest, ns_archive_list *out, ns_err *err)
{
    int rc;
    memset(out, 0, sizeof *out);
    unsigned char *buf = malloc(BLOCK);
    struct archive *a = NULL;
    char *top = NULL, *rest = NULL;
    if (!buf) {
        rc = ns_fail(err, NS_ERR_NOMEM, "out of memory");
        goto done;
    }
    if ((rc = open_reader(archive, &a, err)) != NS_OK)
        goto done;
    for (;;) {
        struct archive_entry *e;
        int has_rest = 0;
        if ((rc = next_entry(a, archive, &e, &top, &rest, &has_rest, err)) != NS_OK || !e)
            break;
        const char *p = archive_entry_pathname(e);
        mode_t type = archive_entry_filetype(e);
        if (!ns_archive_name_ok(top) || (has_rest && !ns_archive_name_ok(rest))) {
            rc = ns_fail(err, NS_ERR_FORMAT, "%s: unsafe member name '%s'", archive, p);
            goto done;
        }
        if (out->top && strcmp(out->top, top) != 0) {
            rc = ns_fail(err, NS_ERR_FORMAT, "%s: members lie under two top directories (%s, %s)",
                         archive, out->top, top);
            goto done;
        }
        if (!out->top) {
            out->top = top;
            top = NULL;
        }
        if (type == AE_IFDIR) {
            /* directories are created as needed */
        } else if (type != AE_IFREG || archive_entry_hardlink(e)) {
            rc = ns_fail(err, NS_ERR_FORMAT, "%s: member '%s' is not a regular file", archive, p);
            goto done;
        } else if (!has_rest) {
            rc = ns_fail(err, NS_ERR_FORMAT, "%s: member '%s' is not inside the archive's top "
                         "directory", archive, p);
            goto done;
        } else {
            char hex[NS_SHA256_HEX_LEN + 1];
            uint64_t size = 0;
            if ((rc = extract_one(a, archive, dest, rest, buf, hex, &size, err)) != NS_OK ||
                (rc = list_add(out, rest, hex, size, err)) != NS_OK)
                goto done;
        }
        free(top);
        free(rest);
        top = rest = NULL;
    }
done:
    free(top);
    free(rest);
    close_reader(a);
    free(buf);
    if (rc != NS_OK)
        ns_archive_list_free(out);
    return rc;
}

int ns_archive_scan(const char *archive, const char *want, size_t want_max, ns_archive_list *out,
                    char **want_data, size_t *want_len, ns_err *err)
{
    memset(out, 0, sizeof *out);
    if (want_data)
        *want_data = NULL;
    if (want_len)
        *want_len = 0;
    struct archive *a = NULL;
    char *top = NULL, *rest = NULL;
    int rc = open_reader(archive, &a, err);
    while (rc == NS_OK) {
        struct archive_entry *e;
        int has_rest = 0;
        if ((rc = next_entry(a, archive, &e, &top, &rest, &has_rest, err)) != NS_OK || !e)
            break;
        if (archive_entry_filetype(e) == AE_IFREG && has_rest) {
            la_int64_t sz = archive_entry_size_is_set(e) ? archive_entry_size(e) : 0;
            uint64_t size = sz > 0 ? (uint64_t)sz : 0;
            if ((rc = list_add(out, rest, "", size, err)) != NS_OK)
                break;
            if (want && want_data && !*want_data && strcmp(rest, want) == 0 && size <= want_max) {
                char *d = malloc((size_t)size + 1);
                la_ssize_t got = d ? archive_read_data(a, d, (size_t)size) : -1;
                if (!d || got < 0 || (uint64_t)got != size) {
                    free(d);
                    rc = d ? ns_fail(err, NS_ERR_FORMAT, "%s: member %s: short read", archive, rest)
                           : ns_fail(err, NS_ERR_NOMEM, "out of memory");
                    break;
                }
                d[size] = 0;
                *want_data = d;
                if (want_len)
                    *want_len = (size_t)size;
            }
        }
        if (!out->top) {
            out->top = top;
            top = NULL;
        }
        free(top);
        free(rest);
        top = rest = NULL;
        if (archive_read_data_skip(a) != ARCHIVE_OK) {
            const char *m = archive_error_string(a);
            rc = ns_fail(err, NS_ERR_FORMAT, "%s: not a readable tar.gz archive (%s)", archive,
                         m ? m : "truncated");
        }
    }
    free(top);
    free(rest);
    close_reader(a);
    if (rc != NS_OK) {
        ns_archive_list_free(out);
        if (want_data) {
            free(*want_data);
            *want_data = NULL;
        }
    }
    return rc;
}

/* ns_assets: make manifest asset sets present and verified in the assets directory (from the
 * assets directory itself, a mirror directory, or a download) and resolve names or paths. */
#include "assets/ns_assets.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "assets/ns_asset_member.h"
#include "assets/ns_download.h"
#include "common/ns_file.h"
#include "common/ns_tmp.h"
#include "common/ns_sha256.h"

#ifndef NS_ABS_TOP_SRCDIR
#define NS_ABS_TOP_SRCDIR ""
#endif

/* Per-directory record of files already verified: "sha256 size mtime_s mtime_ns name" lines. */
#define NS_STAMP_NAME ".normsweep-verified"
#define NS_STAMP_HEADER "# normsweep assets: files verified against the manifest (sha256 size mtime_s mtime_ns name)\n"

typedef struct stamp_entry {
    char name[256];
    char sha[65];
    long long size;
    long long mt_s;
    long mt_ns;
} stamp_entry;

typedef struct stamp {
    stamp_entry *e;
    size_t n, cap;
    int dirty;
} stamp;

/* ------------------------------------------------------------------ small helpers */

static void logf_(const ns_assets_ctx *ctx, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void logf_(const ns_assets_ctx *ctx, const char *fmt, ...)
{
    if (!ctx->log)
        return;
    char line[2048];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(line, sizeof line, fmt, ap);
    va_end(ap);
    line[strcspn(line, "\n")] = '\0'; /* one line each */
    ctx->log(ctx->log_user, line);
}

static int join(char *out, size_t len, const char *a, const char *b, ns_err *err)
{
    int n = snprintf(out, len, "%s%s%s", a, (*a && a[strlen(a) - 1] != '/') ? "/" : "", b);
    if (n < 0 || (size_t)n >= len)
        return ns_fail(err, NS_ERR_INVALID, "path too long: %s/%s", a, b);
    return NS_OK;
}

/* Absolute form of path (not resolving symlinks), without trailing slashes. */
static int make_absolute(const char *path, char *out, size_t len, ns_err *err)
{
    if (!*path)
        return ns_fail(err, NS_ERR_INVALID, "empty directory name");
    if (path[0] == '/') {
        if (strlen(path) >= len)
            return ns_fail(err, NS_ERR_INVALID, "path too long: %s", path);
        snprintf(out, len, "%s", path);
    } else {
        char cwd[PATH_MAX];
        if (!getcwd(cwd, sizeof cwd))
            return ns_fail(err, NS_ERR_IO, "getcwd: %s", strerror(errno));
        NS_TRY(join(out, len, cwd, path, err));
    }
    size_t n = strlen(out);
    while (n > 1 && out[n - 1] == '/')
        out[--n] = '\0';
    return NS_OK;
}

static void short_sha(const char *sha, char out[17])
{
    if (!sha[0]) {
        snprintf(out, 17, "(unknown)");
        return;
    }
    snprintf(out, 17, "%.12s...", sha);
}

/* ------------------------------------------------------------------ stamps */

static void stamp_free(stamp *st)
{
    free(st->e);
    memset(st, 0, sizeof *st);
}

static stamp_entry *stamp_find(stamp *st, const char *name)
{
    for (size_t i = 0; i < st->n; i++)
        if (strcmp(st->e[i].name, name) == 0)
            return &st->e[i];
    return NULL;
}

static void stamp_drop(stamp *st, const char *name)
{
    stamp_entry *e = stamp_find(st, name);
    if (!e)
        return;
    *e = st->e[st->n - 1];
    st->n--;
    st->dirty = 1;
}

static int stamp_put(stamp *st, const char *name, const char *sha, const struct stat *sb,
                     ns_err *err)
{
    if (strlen(name) >= sizeof st->e[0].name)
        return NS_OK; /* not recordable: it will simply be rehashed next time */
    stamp_entry *e = stamp_find(st, name);
    if (!e) {
        if (st->n == st->cap) {
            size_t cap = st->cap ? 2 * st->cap : 8;
            stamp_entry *p = realloc(st->e, cap * sizeof *p);
            if (!p)
                return ns_fail(err, NS_ERR_NOMEM, "out of memory");
            st->e = p;
            st->cap = cap;
        }
        e = &st->e[st->n++];
        snprintf(e->name, sizeof e->name, "%s", name);
    }
    snprintf(e->sha, sizeof e->sha, "%s", sha);
    e->size = (long long)sb->st_size;
    e->mt_s = (long long)sb->st_mtim.tv_sec;
    e->mt_ns = sb->st_mtim.tv_nsec;
    st->dirty = 1;
    return NS_OK;
}

static int stamp_matches(const stamp_entry *e, const struct stat *sb)
{
    return e && e->size == (long long)sb->st_size && e->mt_s == (long long)sb->st_mtim.tv_sec &&
           e->mt_ns == sb->st_mtim.tv_nsec;
}

/* Load setdir's stamp; a missing or unreadable stamp is an empty one (files get rehashed). */
static int stamp_load(const char *setdir, stamp *st, ns_err *err)
{
    memset(st, 0, sizeof *st);
    char path[NS_ASSET_PATH_MAX];
    NS_TRY(join(path, sizeof path, setdir, NS_STAMP_NAME, err));
    FILE *f = fopen(path, "r");
    if (!f)
        return NS_OK;
    char line[512];
    int rc = NS_OK;
    while (fgets(line, sizeof line, f)) {
        if (line[0] == '#')
            continue;
        stamp_entry e;
        char name[256];
        if (sscanf(line, "%64s %lld %lld %ld %255[^\n]", e.sha, &e.size, &e.mt_s, &e.mt_ns, name) != 5)
            continue; /* ignore damaged lines: those files are rehashed */
        struct stat sb = {0};
        sb.st_size = (off_t)e.size;
        sb.st_mtim.tv_sec = (time_t)e.mt_s;
        sb.st_mtim.tv_nsec = e.mt_ns;
        if ((rc = stamp_put(st, name, e.sha, &sb, err)) != NS_OK)
            break;
    }
    fclose(f);
    st->dirty = 0;
    return rc;
}

static int stamp_save(const char *setdir, stamp *st, ns_err *err)
{
    if (!st->dirty)
        return NS_OK;
    size_t cap = sizeof NS_STAMP_HEADER + st->n * 400;
    char *buf = malloc(cap);
    if (!buf)
        return ns_fail(err, NS_ERR_NOMEM, "out of memory");
    size_t len = (size_t)snprintf(buf, cap, "%s", NS_STAMP_HEADER);
    for (size_t i = 0; i < st->n; i++)
        len += (size_t)snprintf(buf + len, cap - len, "%s %lld %lld %ld %s\n", st->e[i].sha,
                                st->e[i].size, st->e[i].mt_s, st->e[i].mt_ns, st->e[i].name);
    char path[NS_ASSET_PATH_MAX];
    int rc = join(path, sizeof path, setdir, NS_STAMP_NAME, err);
    if (rc == NS_OK)
        rc = ns_file_write_atomic(path, buf, len, err);
    free(buf);
    if (rc == NS_OK)
        st->dirty = 0;
    return rc;
}

/* ------------------------------------------------------------------ context */

int ns_assets_ctx_init(ns_assets_ctx *ctx, const char *assets_dir, const char *mirror_dir,
                       ns_err *err)
{
    memset(ctx, 0, sizeof *ctx);
    ctx->connect_timeout_s = 10;
    const char *env = getenv("NORMSWEEP_ASSETS");
    if (assets_dir) {
        NS_TRY(make_absolute(assets_dir, ctx->assets_dir, sizeof ctx->assets_dir, err));
    } else if (env && *env) {
        NS_TRY(make_absolute(env, ctx->assets_dir, sizeof ctx->assets_dir, err));
    } else {
        const char *xdg = getenv("XDG_CACHE_HOME"), *home = getenv("HOME");
        char base[NS_ASSET_PATH_MAX];
        if (xdg && xdg[0] == '/')
            snprintf(base, sizeof base, "%s", xdg);
        else if (home && *home)
            snprintf(base, sizeof base, "%s/.cache", home);
        else
            return ns_fail(err, NS_ERR_INVALID,
                           "no assets directory: set NORMSWEEP_ASSETS (HOME is not set)");
        NS_TRY(join(ctx->assets_dir, sizeof ctx->assets_dir, base, "normsweep/assets", err));
    }
    env = getenv("NORMSWEEP_MIRROR");
    if (mirror_dir) {
        if (*mirror_dir)
            NS_TRY(make_absolute(mirror_dir, ctx->mirror_dir, sizeof ctx->mirror_dir, err));
    } else if (env) {
        if (*env)
            NS_TRY(make_absolute(env, ctx->mirror_dir, sizeof ctx->mirror_dir, err));
    } else if (NS_ABS_TOP_SRCDIR[0]) {
        char guess[NS_ASSET_PATH_MAX], real[PATH_MAX];
        NS_TRY(join(guess, sizeof guess, NS_ABS_TOP_SRCDIR, "../shared/data", err));
        if (ns_file_is_dir(guess) && realpath(guess, real))
            snprintf(ctx->mirror_dir, sizeof ctx->mirror_dir, "%s", real);
    }
    env = getenv("NORMSWEEP_OFFLINE");
    ctx->offline = env && *env && strcmp(env, "0") != 0;
    return NS_OK;
}

int ns_assets_set_dir(const ns_assets_ctx *ctx, const ns_asset_set *set, char *out, size_t len,
                      ns_err *err)
{
    return join(out, len, ctx->assets_dir, set->dir, err);
}

int ns_assets_file_state(const ns_assets_ctx *ctx, const ns_asset_set *set,
                         const ns_asset_file *file, ns_asset_file_state *st, ns_err *err)
{
    memset(st, 0, sizeof *st);
    char setdir[NS_ASSET_PATH_MAX];
    NS_TRY(ns_assets_set_dir(ctx, set, setdir, sizeof setdir, err));
    NS_TRY(join(st->path, sizeof st->path, setdir, file->name, err));
    struct stat lsb, sb;
    if (lstat(st->path, &lsb) != 0)
        return NS_OK;
    if (S_ISLNK(lsb.st_mode)) {
        st->is_link = 1;
        ssize_t n = readlink(st->path, st->link_target, sizeof st->link_target - 1);
        st->link_target[n > 0 ? n : 0] = '\0';
    }
    if (stat(st->path, &sb) != 0 || !S_ISREG(sb.st_mode))
        return NS_OK;
    st->present = 1;
    stamp stp;
    NS_TRY(stamp_load(setdir, &stp, err));
    stamp_entry *e = stamp_find(&stp, file->name);
    if (e) {
        snprintf(st->stamp_sha256, sizeof st->stamp_sha256, "%s", e->sha);
        st->verified = stamp_matches(e, &sb) && (!file->sha256[0] || strcmp(e->sha, file->sha256) == 0);
    }
    stamp_free(&stp);
    return NS_OK;
}

/* ------------------------------------------------------------------ placing files */

/* Compare a computed sum with the manifest's; an unknown manifest sum is accepted and printed. */
static int check_sum(const ns_assets_ctx *ctx, const ns_asset_set *set, const ns_asset_file *file,
                     const char *got, const char *what, ns_err *err)
{
    if (!file->sha256[0]) {
        logf_(ctx,
              "[%s] %s: the manifest has no sha256 for this file; computed sha256 %s (%s) -- "
              "recorded locally, add it to the manifest to pin it\n",
              set->name, file->name, got, what);
        return NS_OK;
    }
    if (strcmp(got, file->sha256) == 0)
        return NS_OK;
    return ns_fail(err, NS_ERR_CHECKSUM,
                   "%s/%s: checksum mismatch: %s has sha256 %s, the manifest expects %s; the file "
                   "was not kept",
                   set->name, file->name, what, got, file->sha256);
}

/* Copy src to a temporary beside dest, verify it, rename it over dest. */
static int place_copy(const ns_assets_ctx *ctx, const ns_asset_set *set, const ns_asset_file *file,
                      const char *src, const char *dest, char sha[65], ns_err *err)
{
    int rc = NS_OK, in = -1, out = -1;
    char *buf = NULL;
    ns_tmp_remove_stale(dest, NULL, NULL); /* what a killed fetch left (common/ns_tmp) */
    char *tmp = ns_file_temp_name(dest);
    if (!tmp)
        return ns_fail(err, NS_ERR_NOMEM, "out of memory");
    in = open(src, O_RDONLY | O_CLOEXEC);
    if (in < 0) {
        rc = ns_fail(err, NS_ERR_IO, "%s: cannot open: %s", src, strerror(errno));
        goto done;
    }
    unlink(tmp);
    out = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
    if (out < 0) {
        rc = ns_fail(err, NS_ERR_IO, "%s: cannot create: %s", tmp, strerror(errno));
        goto done;
    }
    size_t bufsz = (size_t)1 << 20;
    buf = malloc(bufsz);
    if (!buf) {
        rc = ns_fail(err, NS_ERR_NOMEM, "out of memory");
        goto done;
    }
    for (;;) {
        ssize_t n = read(in, buf, bufsz);
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0) {
            rc = ns_fail(err, NS_ERR_IO, "%s: read failed: %s", src, strerror(errno));
            goto done;
        }
        if (n == 0)
            break;
        for (ssize_t off = 0; off < n;) {
            ssize_t w = write(out, buf + off, (size_t)(n - off));
            if (w < 0 && errno == EINTR)
                continue;
            if (w < 0) {
                rc = ns_fail(err, NS_ERR_IO, "%s: write failed: %s", tmp, strerror(errno));
                goto done;
            }
            off += w;
        }
    }
    if (fsync(out) != 0) {
        rc = ns_fail(err, NS_ERR_IO, "%s: fsync failed: %s", tmp, strerror(errno));
        goto done;
    }
    int cr = close(out);
    out = -1;
    if (cr != 0) {
        rc = ns_fail(err, NS_ERR_IO, "%s: close failed: %s", tmp, strerror(errno));
        goto done;
    }
    if ((rc = ns_sha256_file(tmp, sha, err)) != NS_OK)
        goto done;
    char what[NS_ASSET_PATH_MAX + 32];
    snprintf(what, sizeof what, "the copy of %s", src);
    if ((rc = check_sum(ctx, set, file, sha, what, err)) != NS_OK)
        goto done;
    if (rename(tmp, dest) != 0) {
        rc = ns_fail(err, NS_ERR_IO, "rename %s -> %s: %s", tmp, dest, strerror(errno));
        goto done;
    }
done:
    if (in >= 0)
        close(in);
    if (out >= 0)
        close(out);
    if (rc != NS_OK)
        unlink(tmp);
    free(tmp);
    free(buf);
    return rc;
}

/* Verify the mirror file, then make dest a symlink to it (atomically, through a temporary). */
static int place_link(const ns_assets_ctx *ctx, const ns_asset_set *set, const ns_asset_file *file,
                      const char *src, const char *dest, char sha[65], ns_err *err)
{
    char real[PATH_MAX];
    if (!realpath(src, real))
        return ns_fail(err, NS_ERR_IO, "%s: %s", src, strerror(errno));
    NS_TRY(ns_sha256_file(real, sha, err));
    char what[NS_ASSET_PATH_MAX + 32];
    snprintf(what, sizeof what, "mirror file %s", real);
    NS_TRY(check_sum(ctx, set, file, sha, what, err));
    ns_tmp_remove_stale(dest, NULL, NULL); /* what a killed fetch left (common/ns_tmp) */
    char *tmp = ns_file_temp_name(dest);
    if (!tmp)
        return ns_fail(err, NS_ERR_NOMEM, "out of memory");
    int rc = NS_OK;
    unlink(tmp);
    if (symlink(real, tmp) != 0)
        rc = ns_fail(err, NS_ERR_IO, "symlink %s -> %s: %s", tmp, real, strerror(errno));
    else if (rename(tmp, dest) != 0)
        rc = ns_fail(err, NS_ERR_IO, "rename %s -> %s: %s", tmp, dest, strerror(errno));
    if (rc != NS_OK)
        unlink(tmp);
    free(tmp);
    return rc;
}

static int host_is_dead(const ns_assets_ctx *ctx, const char *host)
{
    for (size_t i = 0; i < ctx->n_dead_hosts; i++)
        if (strcmp(ctx->dead_hosts[i], host) == 0)
            return 1;
    return 0;
}

static void mark_dead(ns_assets_ctx *ctx, const char *host)
{
    if (!*host || host_is_dead(ctx, host) || ctx->n_dead_hosts >= NS_ASSETS_MAX_DEAD_HOSTS)
        return;
    snprintf(ctx->dead_hosts[ctx->n_dead_hosts++], sizeof ctx->dead_hosts[0], "%s", host);
}

/* Try each URL once; the first verified download is renamed to dest. */
static int place_download(ns_assets_ctx *ctx, const ns_asset_set *set, const ns_asset_file *file,
                          const char *dest, const char *no_mirror, char sha[65], ns_err *err)
{
    ns_tmp_remove_stale(dest, NULL, NULL); /* what a killed fetch left (common/ns_tmp) */
    char *tmp = ns_file_temp_name(dest);
    if (!tmp)
        return ns_fail(err, NS_ERR_NOMEM, "out of memory");
    ns_err last;
    ns_err_clear(&last);
    ns_err sum_err;
    ns_err_clear(&sum_err);
    int rc = NS_ERR_IO;
    for (size_t u = 0; u < file->n_urls; u++) {
        const char *url = file->urls[u];
        char host[256];
        ns_download_host(url, host, sizeof host);
        if (host_is_dead(ctx, host)) {
            if (!last.msg[0])
                ns_fail(&last, NS_ERR_IO, "%s: host %s was unreachable earlier in this run", url, host);
            continue;
        }
        logf_(ctx, "[%s] %s: downloading %s\n", set->name, file->name, url);
        unlink(tmp);
        int unreachable = 0;
        ns_err e;
        ns_err_clear(&e);
        if (ns_download_file(url, tmp, ctx->connect_timeout_s, ctx->log, ctx->log_user, &unreachable,
                             &e) != NS_OK) {
            if (unreachable)
                mark_dead(ctx, host);
            logf_(ctx, "[%s] %s: download failed: %s\n", set->name, file->name, e.msg);
            last = e;
            continue;
        }
        if ((rc = ns_sha256_file(tmp, sha, err)) != NS_OK)
            goto done;
        char what[NS_ASSET_PATH_MAX + 32];
        snprintf(what, sizeof what, "the download from %s", url);
        ns_err_clear(&e);
        if (check_sum(ctx, set, file, sha, what, &e) != NS_OK) {
            unlink(tmp);
            logf_(ctx, "[%s] %s: %s\n", set->name, file->name, e.msg);
            sum_err = e;
            rc = NS_ERR_IO;
            continue;
        }
        if (rename(tmp, dest) != 0) {
            rc = ns_fail(err, NS_ERR_IO, "rename %s -> %s: %s", tmp, dest, strerror(errno));
            goto done;
        }
        rc = NS_OK;
        goto done;
    }
    if (sum_err.code != NS_OK) {
        *err = sum_err;
        rc = NS_ERR_CHECKSUM;
    } else {
        rc = ns_fail(err, NS_ERR_IO, "%s/%s: %s; download failed: %s", set->name, file->name,
                     no_mirror, last.msg[0] ? last.msg : "no URL tried");
    }
done:
    if (rc != NS_OK)
        unlink(tmp);
    free(tmp);
    return rc;
}

/* Why the mirror cannot supply file (for messages), or "" when it can (mpath then set). */
static void mirror_lookup(const ns_assets_ctx *ctx, const ns_asset_file *file, char *mpath,
                          size_t mlen, char *why, size_t wlen)
{
    mpath[0] = why[0] = '\0';
    if (!ctx->mirror_dir[0]) {
        snprintf(why, wlen, "no mirror directory is configured (NORMSWEEP_MIRROR or --mirror)");
        return;
    }
    if (!file->mirror_path) {
        snprintf(why, wlen, "the manifest gives no mirror path for it");
        return;
    }
    ns_err e;
    if (join(mpath, mlen, ctx->mirror_dir, file->mirror_path, &e) != NS_OK) {
        snprintf(why, wlen, "%s", e.msg);
        mpath[0] = '\0';
        return;
    }
    struct stat sb;
    if (stat(mpath, &sb) != 0) {
        snprintf(why, wlen, "not in the mirror (%s: %s)", mpath, strerror(errno));
        mpath[0] = '\0';
    } else if (!S_ISREG(sb.st_mode)) {
        snprintf(why, wlen, "not in the mirror (%s is not a regular file)", mpath);
        mpath[0] = '\0';
    }
}

/* A file only a download could supply (the manifest lists a URL, not offline), when this command
 * downloads nothing (ctx->no_download): NS_ERR_INVALID naming the command that downloads its set
 * when the download host answers a probe (the set can be had: no fallback hides it), else
 * NS_ERR_IO (it cannot be had here; the caller may fall back). */
static int download_declined(ns_assets_ctx *ctx, const ns_asset_set *set,
                             const ns_asset_file *file, const char *why, ns_err *err)
{
    char host[256];
    ns_download_host(file->urls[0], host, sizeof host);
    int unreachable = 0;
    ns_err e;
    ns_err_clear(&e);
    if (host_is_dead(ctx, host))
        return ns_fail(err, NS_ERR_IO, "%s/%s: %s, and %s was unreachable earlier", set->name,
                       file->name, why, host);
    if (ns_download_probe(file->urls[0], ctx->connect_timeout_s, &unreachable, &e) != NS_OK) {
        if (unreachable)
            mark_dead(ctx, host);
        return ns_fail(err, NS_ERR_IO, "%s/%s: %s; download failed: %s", set->name, file->name,
                       why, e.msg);
    }
    long long bytes = 0;
    for (size_t i = 0; i < set->n_files; i++) {
        ns_asset_file_state st;
        if (set->files[i].size > 0 &&
            (ns_assets_file_state(ctx, set, &set->files[i], &st, &e) != NS_OK || !st.present))
            bytes += set->files[i].size;
    }
    char size[32] = "";
    if (bytes >= 1000000)
        snprintf(size, sizeof size, "%.0f MB ", (double)bytes / 1e6);
    else if (bytes > 0)
        snprintf(size, sizeof size, "%.0f kB ", (double)bytes / 1e3);
    return ns_fail(err, NS_ERR_INVALID, "%s \"%s\" is neither in the asset cache (%s) nor in the "
                   "mirror, and only `normsweep assets fetch` downloads: `normsweep assets fetch "
                   "%s` downloads it (%sfrom %s)%s%s%s", set->kind, set->name, ctx->assets_dir,
                   set->name, size, host, set->fallback ? "; NORMSWEEP_OFFLINE=1 uses its "
                   "fallback \"" : "", set->fallback ? set->fallback : "",
                   set->fallback ? "\" instead" : "");
}

/* Make one file present and verified. *source receives "assets-dir", "mirror" or "download". */
static int ensure_file(ns_assets_ctx *ctx, const ns_asset_set *set, const ns_asset_file *file,
                       const char *setdir, stamp *stp, int allow_fetch, const char **source,
                       char sha[65], ns_err *err)
{
    char path[NS_ASSET_PATH_MAX], ss[17];
    NS_TRY(join(path, sizeof path, setdir, file->name, err));
    struct stat lsb, sb;
    *source = "assets-dir";
    if (lstat(path, &lsb) == 0) {
        int is_link = S_ISLNK(lsb.st_mode);
        if (stat(path, &sb) != 0 || !S_ISREG(sb.st_mode)) {
            if (!allow_fetch)
                return ns_fail(err, NS_ERR_IO, "%s: %s (run `normsweep assets fetch %s`)", path,
                               is_link ? "dangling symlink" : "not a regular file", set->name);
            if (!is_link)
                return ns_fail(err, NS_ERR_IO, "%s: exists and is not a regular file", path);
            logf_(ctx, "[%s] %s: removing dangling symlink %s\n", set->name, file->name, path);
            if (unlink(path) != 0)
                return ns_fail(err, NS_ERR_IO, "%s: cannot remove: %s", path, strerror(errno));
            stamp_drop(stp, file->name);
        } else if (is_link && ctx->copy && allow_fetch) {
            /* asked for copies: replace the link by a verified copy of its target */
            char real[PATH_MAX];
            if (!realpath(path, real))
                return ns_fail(err, NS_ERR_IO, "%s: %s", path, strerror(errno));
            NS_TRY(place_copy(ctx, set, file, real, path, sha, err));
            if (stat(path, &sb) != 0)
                return ns_fail(err, NS_ERR_IO, "%s: %s", path, strerror(errno));
            NS_TRY(stamp_put(stp, file->name, sha, &sb, err));
            short_sha(sha, ss);
            logf_(ctx, "[%s] %s: replaced symlink by a copy of %s (sha256 %s verified)\n",
                  set->name, file->name, real, ss);
            *source = "mirror";
            return NS_OK;
        } else {
            stamp_entry *e = stamp_find(stp, file->name);
            if (stamp_matches(e, &sb) && (!file->sha256[0] || strcmp(e->sha, file->sha256) == 0)) {
                snprintf(sha, 65, "%s", e->sha);
            } else {
                NS_TRY(ns_sha256_file(path, sha, err));
                if (file->sha256[0] && strcmp(sha, file->sha256) != 0) {
                    stamp_drop(stp, file->name);
                    if (!allow_fetch)
                        return ns_fail(err, NS_ERR_CHECKSUM,
                                       "%s: sha256 %s, the manifest expects %s (run `normsweep "
                                       "assets fetch %s` to replace it)",
                                       path, sha, file->sha256, set->name);
                    logf_(ctx, "[%s] %s: WARNING: local file %s has sha256 %s, the manifest "
                          "expects %s; replacing it\n", set->name, file->name, path, sha,
                          file->sha256);
                    if (unlink(path) != 0)
                        return ns_fail(err, NS_ERR_IO, "%s: cannot remove: %s", path, strerror(errno));
                    goto acquire;
                }
                if (!file->sha256[0] && e && strcmp(e->sha, sha) != 0)
                    logf_(ctx, "[%s] %s: WARNING: sha256 changed from %s to %s (the manifest "
                          "pins none)\n", set->name, file->name, e->sha, sha);
                NS_TRY(stamp_put(stp, file->name, sha, &sb, err));
            }
            if (ctx->verbose) {
                short_sha(sha, ss);
                logf_(ctx, "[%s] %s: present (sha256 %s, %s)\n", set->name, file->name, ss,
                      is_link ? "symlink" : "copy");
            }
            return NS_OK;
        }
    } else if (!allow_fetch) {
        return ns_fail(err, NS_ERR_IO, "%s: missing (run `normsweep assets fetch %s`)", path,
                       set->name);
    }
acquire:
    NS_TRY(ns_file_mkdirs(setdir, err));
    char mpath[NS_ASSET_PATH_MAX], why[NS_ASSET_PATH_MAX + 128];
    mirror_lookup(ctx, file, mpath, sizeof mpath, why, sizeof why);
    if (mpath[0]) {
        if (ctx->copy)
            NS_TRY(place_copy(ctx, set, file, mpath, path, sha, err));
        else
            NS_TRY(place_link(ctx, set, file, mpath, path, sha, err));
        *source = "mirror";
        short_sha(sha, ss);
        logf_(ctx, "[%s] %s: %s %s (sha256 %s verified)\n", set->name, file->name,
              ctx->copy ? "copied from" : "linked to", mpath, ss);
    } else if (file->archive_file) { /* the archive, an earlier file of the set, is present */
        char arc[NS_ASSET_PATH_MAX], what[512];
        NS_TRY(join(arc, sizeof arc, setdir, file->archive_file, err));
        snprintf(what, sizeof what, "%s/%s", set->name, file->name);
        NS_TRY(ns_assets_place_member(arc, file->archive_member, path, file->sha256, file->size,
                                      what, sha, err));
        short_sha(sha, ss);
        logf_(ctx, "[%s] %s: extracted %s from %s (sha256 %s verified)\n", set->name, file->name,
              file->archive_member, file->archive_file, ss);
    } else {
        if (file->n_urls == 0)
            return ns_fail(err, NS_ERR_IO, "%s/%s: %s, and the manifest lists no download URL",
                           set->name, file->name, why);
        if (ctx->offline)
            return ns_fail(err, NS_ERR_IO, "%s/%s: %s, and downloads are disabled (offline); "
                           "would download %s", set->name, file->name, why, file->urls[0]);
        if (ctx->no_download)
            return download_declined(ctx, set, file, why, err);
        NS_TRY(place_download(ctx, set, file, path, why, sha, err));
        *source = "download";
        short_sha(sha, ss);
        logf_(ctx, "[%s] %s: downloaded (sha256 %s verified)\n", set->name, file->name, ss);
    }
    if (stat(path, &sb) != 0)
        return ns_fail(err, NS_ERR_IO, "%s: %s", path, strerror(errno));
    return stamp_put(stp, file->name, sha, &sb, err);
}

/* ------------------------------------------------------------------ sets */

static int rank_source(const char *s)
{
    return strcmp(s, "download") == 0 ? 2 : strcmp(s, "mirror") == 0 ? 1 : 0;
}

/* fetch_set with an explicit identifying file (a model set used as a tokenizer: merges.txt). */
static int fetch_set_main(ns_assets_ctx *ctx, const ns_asset_set *set, const char *main_name,
                          int allow_fetch, ns_asset_ref *ref, ns_err *err)
{
    char setdir[NS_ASSET_PATH_MAX];
    NS_TRY(ns_assets_set_dir(ctx, set, setdir, sizeof setdir, err));
    stamp stp;
    NS_TRY(stamp_load(setdir, &stp, err));
    const char *overall = "assets-dir";
    char main_sha[65] = "";
    int rc = NS_OK;
    for (size_t i = 0; i < set->n_files && rc == NS_OK; i++) {
        const char *src = NULL;
        char sha[65] = "";
        rc = ensure_file(ctx, set, &set->files[i], setdir, &stp, allow_fetch, &src, sha, err);
        if (rc != NS_OK)
            break;
        if (rank_source(src) > rank_source(overall))
            overall = src;
        if (strcmp(set->files[i].name, main_name) == 0)
            snprintf(main_sha, sizeof main_sha, "%s", sha);
    }
    if (stp.dirty && ns_file_is_dir(setdir)) {
        ns_err serr;
        /* a stamp that cannot be written only costs a rehash next time */
        if (stamp_save(setdir, &stp, &serr) != NS_OK)
            logf_(ctx, "[%s] note: %s\n", set->name, serr.msg);
    }
    stamp_free(&stp);
    if (rc != NS_OK)
        rmdir(setdir); /* only succeeds when the failed fetch left it empty */
    if (rc != NS_OK || !ref)
        return rc;
    snprintf(ref->name, sizeof ref->name, "%s", set->name);
    NS_TRY(join(ref->main_file, sizeof ref->main_file, setdir, main_name, err));
    if (strcmp(set->kind, "corpus") == 0 && set->n_files == 1)
        snprintf(ref->path, sizeof ref->path, "%s", ref->main_file);
    else
        snprintf(ref->path, sizeof ref->path, "%s", setdir);
    snprintf(ref->sha256, sizeof ref->sha256, "%s", main_sha);
    snprintf(ref->source, sizeof ref->source, "%s", overall);
    return NS_OK;
}

int ns_assets_fetch_set(ns_assets_ctx *ctx, const ns_asset_set *set, int allow_fetch,
                        ns_asset_ref *ref, ns_err *err)
{
    return fetch_set_main(ctx, set, set->main_file, allow_fetch, ref, err);
}

int ns_assets_verify_set(ns_assets_ctx *ctx, const ns_asset_set *set, ns_err *err)
{
    char setdir[NS_ASSET_PATH_MAX];
    NS_TRY(ns_assets_set_dir(ctx, set, setdir, sizeof setdir, err));
    stamp stp;
    NS_TRY(stamp_load(setdir, &stp, err));
    int rc = NS_OK;
    size_t bad = 0;
    ns_err first;
    ns_err_clear(&first);
    for (size_t i = 0; i < set->n_files; i++) {
        const ns_asset_file *f = &set->files[i];
        char path[NS_ASSET_PATH_MAX], sha[65];
        ns_err e;
        ns_err_clear(&e);
        struct stat sb;
        int frc = join(path, sizeof path, setdir, f->name, &e);
        if (frc == NS_OK && (stat(path, &sb) != 0 || !S_ISREG(sb.st_mode)))
            frc = ns_fail(&e, NS_ERR_IO, "%s: missing (run `normsweep assets fetch %s`)", path,
                          set->name);
        if (frc == NS_OK)
            frc = ns_sha256_file(path, sha, &e);
        if (frc == NS_OK) {
            const char *want = f->sha256;
            stamp_entry *se = stamp_find(&stp, f->name);
            if (!want[0] && se)
                want = se->sha; /* trusted on first use */
            if (want[0] && strcmp(sha, want) != 0) {
                frc = ns_fail(&e, NS_ERR_CHECKSUM, "%s: sha256 %s, %s expects %s", path, sha,
                              f->sha256[0] ? "the manifest" : "the first download recorded", want);
                stamp_drop(&stp, f->name);
            } else {
                ns_err pe;
                if (stamp_put(&stp, f->name, sha, &sb, &pe) != NS_OK)
                    frc = ns_fail(&e, pe.code, "%s", pe.msg);
                logf_(ctx, "[%s] %s: ok sha256 %s%s\n", set->name, f->name, sha,
                      f->sha256[0] ? "" : " (not pinned by the manifest)");
            }
        }
        if (frc != NS_OK) {
            logf_(ctx, "[%s] %s: FAILED: %s\n", set->name, f->name, e.msg);
            if (!bad++)
                first = e;
            if (frc == NS_ERR_CHECKSUM || rc == NS_OK)
                rc = frc;
        }
    }
    if (stp.dirty && ns_file_is_dir(setdir)) {
        ns_err serr;
        if (stamp_save(setdir, &stp, &serr) != NS_OK)
            logf_(ctx, "[%s] note: %s\n", set->name, serr.msg);
    }
    stamp_free(&stp);
    if (rc != NS_OK) {
        if (bad > 1)
            return ns_fail(err, rc, "%s: %zu of %zu files failed verification (first: %s)",
                           set->name, bad, set->n_files, first.msg);
        return ns_fail(err, rc, "%s", first.msg);
    }
    return NS_OK;
}

int ns_assets_set_available(ns_assets_ctx *ctx, const ns_asset_set *set, char *why, size_t len)
{
    why[0] = '\0';
    const ns_asset_file *net_file = NULL;
    char net_why[NS_ASSET_PATH_MAX + 128] = "";
    for (size_t i = 0; i < set->n_files; i++) {
        const ns_asset_file *f = &set->files[i];
        ns_asset_file_state st;
        ns_err e;
        if (ns_assets_file_state(ctx, set, f, &st, &e) != NS_OK) {
            snprintf(why, len, "%s", e.msg);
            return 0;
        }
        if (st.present)
            continue;
        char mpath[NS_ASSET_PATH_MAX], mwhy[NS_ASSET_PATH_MAX + 128];
        mirror_lookup(ctx, f, mpath, sizeof mpath, mwhy, sizeof mwhy);
        if (mpath[0] || f->archive_file)
            continue; /* an extracted file is available when its archive is (checked itself) */
        if (f->n_urls == 0 || ctx->offline) {
            snprintf(why, len, "%s: %s, and %s", f->name, mwhy,
                     f->n_urls ? "downloads are disabled (offline)" : "it has no download URL");
            return 0;
        }
        if (!net_file) {
            net_file = f;
            snprintf(net_why, sizeof net_why, "%s", mwhy);
        }
    }
    if (!net_file)
        return 1;
    const char *url = net_file->urls[0];
    char host[256];
    ns_download_host(url, host, sizeof host);
    if (host_is_dead(ctx, host)) {
        snprintf(why, len, "%s: %s, and %s was unreachable earlier", net_file->name, net_why, host);
        return 0;
    }
    int unreachable = 0;
    ns_err e;
    ns_err_clear(&e);
    if (ns_download_probe(url, ctx->connect_timeout_s, &unreachable, &e) != NS_OK) {
        if (unreachable)
            mark_dead(ctx, host);
        snprintf(why, len, "%s: %s, and its download failed: %s", net_file->name, net_why, e.msg);
        return 0;
    }
    return 1;
}

/* ------------------------------------------------------------------ resolve */

static int valid_kind(const char *kind)
{
    return strcmp(kind, "model") == 0 || strcmp(kind, "tokenizer") == 0 ||
           strcmp(kind, "corpus") == 0 || strcmp(kind, "data") == 0;
}

/* An existing path: used as is; the checksum of its identifying file is computed (unless hash is
 * 0: left "" for the caller). */
static int resolve_path(const char *path, const char *kind, int hash, ns_asset_ref *out,
                        ns_err *err)
{
    char real[PATH_MAX];
    if (!realpath(path, real))
        return ns_fail(err, NS_ERR_IO, "%s: %s", path, strerror(errno));
    struct stat sb;
    if (stat(real, &sb) != 0)
        return ns_fail(err, NS_ERR_IO, "%s: %s", path, strerror(errno));
    snprintf(out->name, sizeof out->name, "path");
    snprintf(out->source, sizeof out->source, "path");
    snprintf(out->path, sizeof out->path, "%s", real);
    if (strcmp(kind, "corpus") == 0 || (strcmp(kind, "data") == 0 && S_ISREG(sb.st_mode)) ||
        (strcmp(kind, "tokenizer") == 0 && S_ISREG(sb.st_mode) && ns_str_ends_with(real, ".json"))) {
        /* a corpus, a data file, or a tokenizer.json */
        if (!S_ISREG(sb.st_mode))
            return ns_fail(err, NS_ERR_INVALID, "%s: a %s must be a file, this is not a regular file",
                           path, kind);
        snprintf(out->main_file, sizeof out->main_file, "%s", real);
    } else if (strcmp(kind, "data") == 0) {
        if (!S_ISDIR(sb.st_mode))
            return ns_fail(err, NS_ERR_INVALID, "%s: not a file or directory", path);
        return NS_OK; /* a data directory has no single identifying file */
    } else {
        if (!S_ISDIR(sb.st_mode))
            return ns_fail(err, NS_ERR_INVALID, "%s: a %s must be a directory%s, this is not one",
                           path, kind, strcmp(kind, "tokenizer") == 0 ? " or a tokenizer.json file" : "");
        static const char *const model_files[] = {"model.safetensors",
                                                  "model.safetensors.index.json", NULL};
        static const char *const tok_files[] = {"tokenizer.json", "vocab.bpe", "merges.txt", NULL};
        const char *const *cand = strcmp(kind, "model") == 0 ? model_files : tok_files;
        char f[NS_ASSET_PATH_MAX];
        int found = 0;
        for (size_t i = 0; cand[i] && !found; i++) {
            NS_TRY(join(f, sizeof f, real, cand[i], err));
            found = ns_file_exists(f);
        }
        if (!found)
            return ns_fail(err, NS_ERR_INVALID, "%s: %s directory without %s", path, kind,
                           strcmp(kind, "model") == 0 ? "model.safetensors (or its index)"
                                                      : "tokenizer.json, vocab.bpe or merges.txt");
        snprintf(out->main_file, sizeof out->main_file, "%s", f);
    }
    return hash ? ns_sha256_file(out->main_file, out->sha256, err) : NS_OK;
}

static int kind_fits(const ns_asset_set *set, const char *kind)
{
    return strcmp(set->kind, kind) == 0 ||
           (strcmp(kind, "tokenizer") == 0 && strcmp(set->kind, "model") == 0);
}

/* Identifying file of set when used as kind (a model set used as tokenizer: its tokenizer.json,
 * else its merges.txt). */
static const char *main_for_kind(const ns_asset_set *set, const char *kind)
{
    static const char *const tok_files[] = {"tokenizer.json", "merges.txt"};
    if (strcmp(kind, "tokenizer") == 0 && strcmp(set->kind, "model") == 0)
        for (size_t k = 0; k < 2; k++)
            for (size_t i = 0; i < set->n_files; i++)
                if (strcmp(set->files[i].name, tok_files[k]) == 0)
                    return tok_files[k];
    return set->main_file;
}

/* Resolve name_or_path in ctx's assets directory through manifest m (NULL: paths only); a path's
 * checksum is left "" unless hash_path. */
static int resolve_in(ns_assets_ctx *ctx, const ns_manifest *m, const char *name_or_path,
                      const char *kind, int allow_fetch, int hash_path, ns_asset_ref *out,
                      ns_err *err)
{
    memset(out, 0, sizeof *out);
    if (!name_or_path || !*name_or_path)
        return ns_fail(err, NS_ERR_INVALID, "empty asset name");
    if (!kind || !valid_kind(kind))
        return ns_fail(err, NS_ERR_INVALID, "asset kind \"%s\" is not model, tokenizer or corpus",
                       kind ? kind : "(null)");
    snprintf(out->requested, sizeof out->requested, "%s", name_or_path);
    if (ns_file_exists(name_or_path))
        return resolve_path(name_or_path, kind, hash_path, out, err);
    if (strchr(name_or_path, '/'))
        return ns_fail(err, NS_ERR_IO, "%s: no such %s file or directory", name_or_path, kind);
    if (!m)
        return ns_fail(err, NS_ERR_INVALID, "%s: not a path, and no manifest to look it up in",
                       name_or_path);
    const ns_asset_set *set = ns_manifest_find(m, name_or_path);
    if (!set) {
        char known[512] = "";
        size_t k = 0;
        for (size_t i = 0; i < m->n_sets; i++)
            if (kind_fits(&m->sets[i], kind))
                k += (size_t)snprintf(known + k, k < sizeof known ? sizeof known - k : 0, "%s%s",
                                      k ? ", " : "", m->sets[i].name);
        return ns_fail(err, NS_ERR_INVALID,
                       "%s \"%s\" is neither an existing path nor an asset of %s (%s assets: %s)",
                       kind, name_or_path, m->path, kind, k ? known : "none");
    }
    if (!kind_fits(set, kind))
        return ns_fail(err, NS_ERR_INVALID, "asset \"%s\" is a %s, not a %s", set->name, set->kind,
                       kind);
    int rc = fetch_set_main(ctx, set, main_for_kind(set, kind), allow_fetch, out, err);
    if (rc == NS_OK || !set->fallback || rc == NS_ERR_CHECKSUM || rc == NS_ERR_NOMEM ||
        rc == NS_ERR_INVALID) /* (INVALID: it can be had, by `normsweep assets fetch`) */
        return rc;
    const ns_asset_set *fb = ns_manifest_find(m, set->fallback);
    if (!fb)
        return rc; /* the manifest loader guarantees it exists */
    logf_(ctx, "normsweep: WARNING: ******************************************************");
    logf_(ctx, "normsweep: WARNING: %s \"%s\" cannot be had: %s", kind, set->name, err->msg);
    logf_(ctx, "normsweep: WARNING: falling back to \"%s\": results are NOT from \"%s\".",
          fb->name, set->name);
    logf_(ctx, "normsweep: WARNING: (provenance records requested=%s, used=%s)", set->name,
          fb->name);
    logf_(ctx, "normsweep: WARNING: ******************************************************");
    char first[NS_ERR_MSG_MAX];
    snprintf(first, sizeof first, "%s", err->msg);
    ns_err_clear(err);
    rc = fetch_set_main(ctx, fb, main_for_kind(fb, kind), allow_fetch, out, err);
    if (rc != NS_OK) {
        char second[NS_ERR_MSG_MAX];
        snprintf(second, sizeof second, "%s", err->msg);
        return ns_fail(err, rc, "neither \"%s\" (%s) nor its fallback \"%s\" (%s) is available",
                       set->name, first, fb->name, second);
    }
    out->is_fallback = 1;
    return NS_OK;
}

/* The context and manifest a resolve by name uses (fetch: where and whether to fetch). */
static int open_assets(const ns_assets_fetch *fetch, ns_assets_ctx *ctx, ns_manifest *m,
                       ns_err *err)
{
    NS_TRY(ns_assets_ctx_init(ctx, fetch ? fetch->assets_dir : NULL,
                              fetch ? fetch->mirror_dir : NULL, err));
    if (fetch)
        ctx->log = fetch->log, ctx->log_user = fetch->log_user;
    ctx->no_download = !fetch || !fetch->download;
    char mpath[NS_ASSET_PATH_MAX];
    if (fetch && fetch->manifest)
        snprintf(mpath, sizeof mpath, "%s", fetch->manifest);
    else
        NS_TRY(ns_manifest_locate(mpath, sizeof mpath, err));
    return ns_manifest_load(mpath, m, err);
}

static int resolve(const char *name_or_path, const char *kind, const ns_assets_fetch *fetch,
                   int hash_path, ns_asset_ref *out, ns_err *err)
{
    int allow_fetch = fetch && fetch->allow;
    if (name_or_path && *name_or_path && ns_file_exists(name_or_path)) {
        ns_assets_ctx pctx;
        memset(&pctx, 0, sizeof pctx); /* a path needs no assets directory */
        return resolve_in(&pctx, NULL, name_or_path, kind, allow_fetch, hash_path, out, err);
    }
    ns_assets_ctx ctx;
    ns_manifest m;
    NS_TRY(open_assets(fetch, &ctx, &m, err));
    int rc = resolve_in(&ctx, &m, name_or_path, kind, allow_fetch, hash_path, out, err);
    ns_manifest_free(&m);
    return rc;
}

int ns_assets_resolve_fallback(const char *requested, const char *used, const char *kind,
                               const ns_assets_fetch *fetch, ns_asset_ref *out, ns_err *err)
{
    memset(out, 0, sizeof *out);
    ns_assets_ctx ctx;
    ns_manifest m;
    NS_TRY(open_assets(fetch, &ctx, &m, err));
    const ns_asset_set *set = ns_manifest_find(&m, requested), *fb = NULL;
    /* its fallback, or that one's (a chain the manifest may not make circular: at most 8) */
    for (size_t i = 0; set && set->fallback && i < 8 && !fb; i++) {
        set = ns_manifest_find(&m, set->fallback);
        if (set && strcmp(set->name, used) == 0)
            fb = set;
    }
    int rc;
    if (!fb) {
        const ns_asset_set *r = ns_manifest_find(&m, requested);
        rc = ns_fail(err, NS_ERR_INVALID, "%s \"%s\" is not the fallback of \"%s\" in %s (%s)",
                     kind, used, requested, m.path,
                     !r ? "which names no such set"
                        : r->fallback ? "whose fallback is another" : "which names no fallback");
    } else if (!kind_fits(fb, kind)) {
        rc = ns_fail(err, NS_ERR_INVALID, "asset \"%s\" is a %s, not a %s", fb->name, fb->kind,
                     kind);
    } else {
        rc = fetch_set_main(&ctx, fb, main_for_kind(fb, kind), fetch && fetch->allow, out, err);
        if (rc == NS_OK) {
            snprintf(out->requested, sizeof out->requested, "%s", requested);
            out->is_fallback = 1;
        }
    }
    ns_manifest_free(&m);
    return rc;
}

int ns_assets_resolve(const char *name_or_path, const char *kind, const ns_assets_fetch *fetch,
                      ns_asset_ref *out, ns_err *err)
{
    return resolve(name_or_path, kind, fetch, 1, out, err);
}

int ns_assets_resolve_unhashed(const char *name_or_path, const char *kind,
                               const ns_assets_fetch *fetch, ns_asset_ref *out, ns_err *err)
{
    return resolve(name_or_path, kind, fetch, 0, out, err);
}

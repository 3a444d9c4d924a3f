/* ns_assets_place: make one file of an asset set present and verified (see the header). */
#include "assets/ns_assets_place.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "assets/ns_asset_member.h"
#include "assets/ns_assets_util.h"
#include "assets/ns_download.h"
#include "common/ns_file.h"
#include "common/ns_sha256.h"
#include "common/ns_tmp.h"

/* Compare a computed sum with the manifest's; an unknown manifest sum is accepted and printed. */
static int check_sum(const ns_assets_ctx *ctx, const ns_asset_set *set, const ns_asset_file *file,
                     const char *got, const char *what, ns_err *err)
{
    if (!file->sha256[0]) {
        ns_assets_log(ctx,
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

int ns_assets_host_is_dead(const ns_assets_ctx *ctx, const char *host)
{
    for (size_t i = 0; i < ctx->n_dead_hosts; i++)
        if (strcmp(ctx->dead_hosts[i], host) == 0)
            return 1;
    return 0;
}

void ns_assets_mark_dead(ns_assets_ctx *ctx, const char *host)
{
    if (!*host || ns_assets_host_is_dead(ctx, host) || ctx->n_dead_hosts >= NS_ASSETS_MAX_DEAD_HOSTS)
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
        if (ns_assets_host_is_dead(ctx, host)) {
            if (!last.msg[0])
                ns_fail(&last, NS_ERR_IO, "%s: host %s was unreachable earlier in this run", url, host);
            continue;
        }
        ns_assets_log(ctx, "[%s] %s: downloading %s\n", set->name, file->name, url);
        unlink(tmp);
        int unreachable = 0;
        ns_err e;
        ns_err_clear(&e);
        if (ns_download_file(url, tmp, ctx->connect_timeout_s, ctx->log, ctx->log_user, &unreachable,
                             &e) != NS_OK) {
            if (unreachable)
                ns_assets_mark_dead(ctx, host);
            ns_assets_log(ctx, "[%s] %s: download failed: %s\n", set->name, file->name, e.msg);
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
            ns_assets_log(ctx, "[%s] %s: %s\n", set->name, file->name, e.msg);
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

void ns_assets_mirror_lookup(const ns_assets_ctx *ctx, const ns_asset_file *file, char *mpath,
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
    if (ns_assets_join(mpath, mlen, ctx->mirror_dir, file->mirror_path, &e) != NS_OK) {
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
    if (ns_assets_host_is_dead(ctx, host))
        return ns_fail(err, NS_ERR_IO, "%s/%s: %s, and %s was unreachable earlier", set->name,
                       file->name, why, host);
    if (ns_download_probe(file->urls[0], ctx->connect_timeout_s, &unreachable, &e) != NS_OK) {
        if (unreachable)
            ns_assets_mark_dead(ctx, host);
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

int ns_assets_ensure_file(ns_assets_ctx *ctx, const ns_asset_set *set, const ns_asset_file *file,
                       const char *setdir, ns_stamp *stp, int allow_fetch, const char **source,
                       char sha[65], ns_err *err)
{
    char path[NS_ASSET_PATH_MAX], ss[17];
    NS_TRY(ns_assets_join(path, sizeof path, setdir, file->name, err));
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
            ns_assets_log(ctx, "[%s] %s: removing dangling symlink %s\n", set->name, file->name, path);
            if (unlink(path) != 0)
                return ns_fail(err, NS_ERR_IO, "%s: cannot remove: %s", path, strerror(errno));
            ns_stamp_drop(stp, file->name);
        } else if (is_link && ctx->copy && allow_fetch) {
            /* asked for copies: replace the link by a verified copy of its target */
            char real[PATH_MAX];
            if (!realpath(path, real))
                return ns_fail(err, NS_ERR_IO, "%s: %s", path, strerror(errno));
            NS_TRY(place_copy(ctx, set, file, real, path, sha, err));
            if (stat(path, &sb) != 0)
                return ns_fail(err, NS_ERR_IO, "%s: %s", path, strerror(errno));
            NS_TRY(ns_stamp_put(stp, file->name, sha, &sb, err));
            ns_assets_short_sha(sha, ss);
            ns_assets_log(ctx, "[%s] %s: replaced symlink by a copy of %s (sha256 %s verified)\n",
                  set->name, file->name, real, ss);
            *source = "mirror";
            return NS_OK;
        } else {
            ns_stamp_entry *e = ns_stamp_find(stp, file->name);
            if (ns_stamp_matches(e, &sb) && (!file->sha256[0] || strcmp(e->sha, file->sha256) == 0)) {
                snprintf(sha, 65, "%s", e->sha);
            } else {
                NS_TRY(ns_sha256_file(path, sha, err));
                if (file->sha256[0] && strcmp(sha, file->sha256) != 0) {
                    ns_stamp_drop(stp, file->name);
                    if (!allow_fetch)
                        return ns_fail(err, NS_ERR_CHECKSUM,
                                       "%s: sha256 %s, the manifest expects %s (run `normsweep "
                                       "assets fetch %s` to replace it)",
                                       path, sha, file->sha256, set->name);
                    ns_assets_log(ctx, "[%s] %s: WARNING: local file %s has sha256 %s, the manifest "
                          "expects %s; replacing it\n", set->name, file->name, path, sha,
                          file->sha256);
                    if (unlink(path) != 0)
                        return ns_fail(err, NS_ERR_IO, "%s: cannot remove: %s", path, strerror(errno));
                    goto acquire;
                }
                if (!file->sha256[0] && e && strcmp(e->sha, sha) != 0)
                    ns_assets_log(ctx, "[%s] %s: WARNING: sha256 changed from %s to %s (the manifest "
                          "pins none)\n", set->name, file->name, e->sha, sha);
                NS_TRY(ns_stamp_put(stp, file->name, sha, &sb, err));
            }
            if (ctx->verbose) {
                ns_assets_short_sha(sha, ss);
                ns_assets_log(ctx, "[%s] %s: present (sha256 %s, %s)\n", set->name, file->name, ss,
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
    ns_assets_mirror_lookup(ctx, file, mpath, sizeof mpath, why, sizeof why);
    if (mpath[0]) {
        if (ctx->copy)
            NS_TRY(place_copy(ctx, set, file, mpath, path, sha, err));
        else
            NS_TRY(place_link(ctx, set, file, mpath, path, sha, err));
        *source = "mirror";
        ns_assets_short_sha(sha, ss);
        ns_assets_log(ctx, "[%s] %s: %s %s (sha256 %s verified)\n", set->name, file->name,
              ctx->copy ? "copied from" : "linked to", mpath, ss);
    } else if (file->archive_file) { /* the archive, an earlier file of the set, is present */
        char arc[NS_ASSET_PATH_MAX], what[512];
        NS_TRY(ns_assets_join(arc, sizeof arc, setdir, file->archive_file, err));
        snprintf(what, sizeof what, "%s/%s", set->name, file->name);
        NS_TRY(ns_assets_place_member(arc, file->archive_member, path, file->sha256, file->size,
                                      what, sha, err));
        ns_assets_short_sha(sha, ss);
        ns_assets_log(ctx, "[%s] %s: extracted %s from %s (sha256 %s verified)\n", set->name, file->name,
              file->archive_member, file->archive_file, ss);
    } else {
        if (file->n_urls == 0)
            return ns_fail(err, NS_ERR_IO, "%s/%s: %s, and the manifest lists no download URL",
                           set->name, file->name, why);
        if (file->unconfirmed && !ctx->accept_unconfirmed)
            return ns_fail(err, NS_ERR_IO, "%s/%s: %s; its SHA-256 is unconfirmed in the manifest "
                           "(no two independent public sources could be checked), so it is not "
                           "downloaded: `normsweep assets fetch --accept-unconfirmed %s` downloads "
                           "it from %s and prints the SHA-256 to pin", set->name, file->name, why,
                           set->name, file->urls[0]);
        if (ctx->offline)
            return ns_fail(err, NS_ERR_IO, "%s/%s: %s, and downloads are disabled (offline); "
                           "would download %s", set->name, file->name, why, file->urls[0]);
        if (ctx->no_download)
            return download_declined(ctx, set, file, why, err);
        NS_TRY(place_download(ctx, set, file, path, why, sha, err));
        *source = "download";
        ns_assets_short_sha(sha, ss);
        ns_assets_log(ctx, "[%s] %s: downloaded (sha256 %s verified)\n", set->name, file->name, ss);
    }
    if (stat(path, &sb) != 0)
        return ns_fail(err, NS_ERR_IO, "%s: %s", path, strerror(errno));
    return ns_stamp_put(stp, file->name, sha, &sb, err);
}

/* ns_asset_stamp: the per-directory record of verified asset files (see the header). */
#include "assets/ns_asset_stamp.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "assets/ns_assets_util.h"
#include "common/ns_asset_ref.h"
#include "common/ns_file.h"

void ns_stamp_free(ns_stamp *st)
{
    free(st->e);
    memset(st, 0, sizeof *st);
}

ns_stamp_entry *ns_stamp_find(ns_stamp *st, const char *name)
{
    for (size_t i = 0; i < st->n; i++)
        if (strcmp(st->e[i].name, name) == 0)
            return &st->e[i];
    return NULL;
}

void ns_stamp_drop(ns_stamp *st, const char *name)
{
    ns_stamp_entry *e = ns_stamp_find(st, name);
    if (!e)
        return;
    *e = st->e[st->n - 1];
    st->n--;
    st->dirty = 1;
}

int ns_stamp_put(ns_stamp *st, const char *name, const char *sha, const struct stat *sb,
                     ns_err *err)
{
    if (strlen(name) >= sizeof st->e[0].name)
        return NS_OK; /* not recordable: it will simply be rehashed next time */
    ns_stamp_entry *e = ns_stamp_find(st, name);
    if (!e) {
        if (st->n == st->cap) {
            size_t cap = st->cap ? 2 * st->cap : 8;
            ns_stamp_entry *p = realloc(st->e, cap * sizeof *p);
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

int ns_stamp_matches(const ns_stamp_entry *e, const struct stat *sb)
{
    return e && e->size == (long long)sb->st_size && e->mt_s == (long long)sb->st_mtim.tv_sec &&
           e->mt_ns == sb->st_mtim.tv_nsec;
}

int ns_stamp_load(const char *setdir, ns_stamp *st, ns_err *err)
{
    memset(st, 0, sizeof *st);
    char path[NS_ASSET_PATH_MAX];
    NS_TRY(ns_assets_join(path, sizeof path, setdir, NS_STAMP_NAME, err));
    FILE *f = fopen(path, "r");
    if (!f)
        return NS_OK;
    char line[512];
    int rc = NS_OK;
    while (fgets(line, sizeof line, f)) {
        if (line[0] == '#')
            continue;
        ns_stamp_entry e;
        char name[256];
        if (sscanf(line, "%64s %lld %lld %ld %255[^\n]", e.sha, &e.size, &e.mt_s, &e.mt_ns, name) != 5)
            continue; /* ignore damaged lines: those files are rehashed */
        struct stat sb = {0};
        sb.st_size = (off_t)e.size;
        sb.st_mtim.tv_sec = (time_t)e.mt_s;
        sb.st_mtim.tv_nsec = e.mt_ns;
        if ((rc = ns_stamp_put(st, name, e.sha, &sb, err)) != NS_OK)
            break;
    }
    fclose(f);
    st->dirty = 0;
    return rc;
}

int ns_stamp_save(const char *setdir, ns_stamp *st, ns_err *err)
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
    int rc = ns_assets_join(path, sizeof path, setdir, NS_STAMP_NAME, err);
    if (rc == NS_OK)
        rc = ns_file_write_atomic(path, buf, len, err);
    free(buf);
    if (rc == NS_OK)
        st->dirty = 0;
    return rc;
}

int ns_assets_set_dir(const ns_assets_ctx *ctx, const ns_asset_set *set, char *out, size_t len,
                      ns_err *err)
{
    return ns_assets_join(out, len, ctx->assets_dir, set->dir, err);
}

int ns_assets_file_state(const ns_assets_ctx *ctx, const ns_asset_set *set,
                         const ns_asset_file *file, ns_asset_file_state *st, ns_err *err)
{
    memset(st, 0, sizeof *st);
    char setdir[NS_ASSET_PATH_MAX];
    NS_TRY(ns_assets_set_dir(ctx, set, setdir, sizeof setdir, err));
    NS_TRY(ns_assets_join(st->path, sizeof st->path, setdir, file->name, err));
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
    ns_stamp stp;
    NS_TRY(ns_stamp_load(setdir, &stp, err));
    ns_stamp_entry *e = ns_stamp_find(&stp, file->name);
    if (e) {
        snprintf(st->stamp_sha256, sizeof st->stamp_sha256, "%s", e->sha);
        st->verified = ns_stamp_matches(e, &sb) && (!file->sha256[0] || strcmp(e->sha, file->sha256) == 0);
    }
    ns_stamp_free(&stp);
    return NS_OK;
}

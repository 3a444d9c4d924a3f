/* ns_outpath: refuse outputs that are, or lie inside, what a command reads (see ns_outpath.h). */
#include "common/ns_outpath.h"

#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/ns_file.h"

/* An absolute path (no trailing slash) resolved as far as it exists. */
static char *resolve_abs(const char *abs)
{
    char buf[PATH_MAX];
    if (realpath(abs, buf))
        return strdup(buf);
    size_t n = strlen(abs);
    while (n > 1 && abs[n - 1] == '/')
        n--;
    const char *slash = abs + n;
    while (slash > abs && slash[-1] != '/')
        slash--;
    if (slash == abs) /* no slash at all: cannot happen for an absolute path */
        return strndup(abs, n);
    char *parent = slash - 1 == abs ? strdup("/") : strndup(abs, (size_t)(slash - 1 - abs));
    char *base = strndup(slash, (size_t)(abs + n - slash));
    char *up = parent ? resolve_abs(parent) : NULL, *out = NULL;
    if (up && base) {
        if (!*base || strcmp(base, ".") == 0) {
            out = up, up = NULL;
        } else if (strcmp(base, "..") == 0) {
            char *s = strrchr(up, '/');
            if (s == up)
                s[1] = '\0';
            else if (s)
                *s = '\0';
            out = up, up = NULL;
        } else {
            out = ns_path_join(up, base);
        }
    }
    free(parent);
    free(base);
    free(up);
    return out;
}

char *ns_outpath_resolve(const char *path)
{
    if (path[0] == '/')
        return resolve_abs(path);
    char cwd[PATH_MAX];
    if (!getcwd(cwd, sizeof cwd))
        return NULL;
    char *abs = ns_path_join(cwd, path);
    char *out = abs ? resolve_abs(abs) : NULL;
    free(abs);
    return out;
}

/* One path, resolved, with its identity when it exists. */
typedef struct node {
    char *canon;
    int exists;
    struct stat st;
} node;

static int node_of(const char *path, node *n)
{
    n->canon = ns_outpath_resolve(path);
    n->exists = n->canon && stat(n->canon, &n->st) == 0;
    return n->canon ? 0 : -1;
}

static int same_inode(const struct stat *a, const struct stat *b)
{
    return a->st_dev == b->st_dev && a->st_ino == b->st_ino;
}

static int same(const node *a, const node *b)
{
    return strcmp(a->canon, b->canon) == 0 || (a->exists && b->exists && same_inode(&a->st, &b->st));
}

/* 1 when child lies strictly inside directory dir: by name, or through an existing ancestor of
 * child that is dir itself (a bind mount, a second name of the directory). */
static int inside(const node *child, const node *dir)
{
    size_t k = strlen(dir->canon);
    if (strcmp(dir->canon, "/") == 0)
        return strcmp(child->canon, "/") != 0;
    if (strncmp(child->canon, dir->canon, k) == 0 && child->canon[k] == '/')
        return 1;
    if (!dir->exists)
        return 0;
    char *p = strdup(child->canon);
    int found = 0;
    for (char *s = p ? strrchr(p, '/') : NULL; s && !found; s = strrchr(p, '/')) {
        if (s == p)
            s[1] = '\0';
        else
            *s = '\0';
        struct stat st;
        found = stat(p, &st) == 0 && same_inode(&st, &dir->st);
        if (s == p)
            break;
    }
    free(p);
    return found;
}

/* The verdict for one input (NULL: fine), as a message. */
static int judge(const ns_outpath_role *out, const node *o, const ns_outpath_role *in,
                 const node *i, ns_err *err)
{
    const char *hint = out->tree ? "choose another output directory" : "choose another output path";
    if (same(o, i)) /* a second name of one file (hard link, bind mount) is said so */
        return ns_fail(err, NS_ERR_INVALID, "%s %s is %s %s%s; %s", out->what, out->path, in->what,
                       in->path, strcmp(o->canon, i->canon) == 0 ? "" : " (the same file)", hint);
    if (in->tree && inside(o, i))
        return ns_fail(err, NS_ERR_INVALID, "%s %s lies inside %s %s; %s", out->what, out->path,
                       in->what, in->path, hint);
    if (out->tree && inside(i, o))
        return ns_fail(err, NS_ERR_INVALID, "%s %s lies inside %s %s; %s", in->what, in->path,
                       out->what, out->path, hint);
    return NS_OK;
}

int ns_outpath_check(const ns_outpath_role *out, const ns_outpath_role *inputs, size_t n,
                     ns_err *err)
{
    if (!out->path)
        return NS_OK;
    node o;
    if (node_of(out->path, &o) != 0)
        return ns_fail(err, NS_ERR_NOMEM, "%s %s: cannot resolve the path: %s", out->what,
                       out->path, strerror(errno));
    int rc = NS_OK;
    for (size_t k = 0; k < n && rc == NS_OK; k++) {
        if (!inputs[k].path)
            continue;
        node i;
        if (node_of(inputs[k].path, &i) != 0)
            rc = ns_fail(err, NS_ERR_NOMEM, "%s %s: cannot resolve the path: %s", inputs[k].what,
                         inputs[k].path, strerror(errno));
        else
            rc = judge(out, &o, &inputs[k], &i, err);
        free(i.canon);
    }
    free(o.canon);
    return rc;
}

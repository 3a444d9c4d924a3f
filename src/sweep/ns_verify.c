/* ns_verify: archive a finished sweep run and verify such an archive (see ns_verify.h). */
#include "config.h"

#include "sweep/ns_verify.h"

#include <cblas.h>
#include <dirent.h>
#include <errno.h>
#include <ftw.h>
#include <jansson.h>
#include <libgen.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "analysis/ns_rng.h"
#include "common/ns_file.h"
#include "common/ns_sha256.h"
#include "io/ns_archive.h"
#include "io/ns_nc_read.h"
#include "model/ns_gpt2.h"
#include "sweep/ns_corpus.h"
#include "sweep/ns_journal.h"
#include "sweep/ns_sweep_yaml.h"
#include "sweep/ns_task.h"

/* ---- shared helpers ------------------------------------------------------------------------- */

static int ends_with(const char *s, const char *suffix)
{
    size_t a = strlen(s), b = strlen(suffix);
    return a >= b && strcmp(s + a - b, suffix) == 0;
}

static int is_dir(const char *p)
{
    struct stat st;
    return stat(p, &st) == 0 && S_ISDIR(st.st_mode);
}

static int is_file(const char *p)
{
    struct stat st;
    return stat(p, &st) == 0 && S_ISREG(st.st_mode);
}

static char *xasprintf(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static char *xasprintf(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    char *s = NULL;
    if (vasprintf(&s, fmt, ap) < 0)
        s = NULL;
    va_end(ap);
    return s;
}

static const char *or_unknown(const char *s)
{
    return s ? s : "unknown";
}

size_t ns_verify_compare(const double *a, const double *b, size_t n, int exact, double tol,
                         size_t *first)
{
    size_t bad = 0, f = n;
    for (size_t i = 0; i < n; i++) {
        int same;
        if (exact) {
            same = memcmp(&a[i], &b[i], sizeof a[i]) == 0;
        } else if (isnan(a[i]) || isnan(b[i])) {
            same = isnan(a[i]) && isnan(b[i]);
        } else if (isinf(a[i]) || isinf(b[i])) {
            same = a[i] == b[i];
        } else {
            double scale = fmax(fmax(fabs(a[i]), fabs(b[i])), 1.0);
            same = fabs(a[i] - b[i]) <= tol * scale;
        }
        if (!same) {
            if (f == n)
                f = i;
            bad++;
        }
    }
    if (first)
        *first = f;
    return bad;
}

/* ==== archive ================================================================================ */

typedef struct src_list {
    ns_archive_source *items;
    char **owned;          /* strings to free (names and paths) */
    size_t n, cap, nowned, capowned;
} src_list;

static int own(src_list *l, char *s, ns_err *err)
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

static int src_add(src_list *l, const char *name, const char *path, const void *data, size_t len,
                   ns_err *err)
{
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
    l->items[l->n++] = (ns_archive_source){n, pp, data, len};
    return NS_OK;
}

static void src_free(src_list *l)
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

/* Regular files directly in dir whose names pass keep(), sorted (caller frees the list). */
static int list_files(const char *dir, int (*keep)(const char *), char ***out, size_t *n,
                      ns_err *err)
{
    *out = NULL;
    *n = 0;
    DIR *d = opendir(dir);
    if (!d)
        return ns_fail(err, NS_ERR_IO, "%s: %s", dir, strerror(errno));
    size_t cap = 0;
    int rc = NS_OK;
    struct dirent *e;
    while ((e = readdir(d))) {
        if (e->d_name[0] == '.' || (keep && !keep(e->d_name)))
            continue;
        char *p = ns_path_join(dir, e->d_name);
        if (!p) {
            rc = ns_fail(err, NS_ERR_NOMEM, "out of memory");
            break;
        }
        if (!is_file(p)) {
            free(p);
            continue;
        }
        if (*n == cap) {
            cap = cap ? 2 * cap : 16;
            char **q = realloc(*out, cap * sizeof *q);
            if (!q) {
                free(p);
                rc = ns_fail(err, NS_ERR_NOMEM, "out of memory");
                break;
            }
            *out = q;
        }
        (*out)[(*n)++] = p;
    }
    closedir(d);
    if (rc == NS_OK && *n)
        qsort(*out, *n, sizeof **out, cmp_str);
    return rc;
}

static void free_strs(char **s, size_t n)
{
    for (size_t i = 0; i < n; i++)
        free(s[i]);
    free(s);
}

static int keep_nc(const char *name)
{
    return ends_with(name, ".nc");
}

static int keep_log(const char *name)
{
    return ends_with(name, ".log") || ends_with(name, ".out") || ends_with(name, ".err");
}

static int keep_tmp_nc(const char *name)
{
    return strstr(name, ".nc.tmp") != NULL;
}

/* Find the run's NetCDF file (o->nc or the one *.nc of the run directory). */
static int find_nc(const ns_run_archive_options *o, char **nc, ns_err *err)
{
    *nc = NULL;
    if (o->nc) {
        if (!is_file(o->nc))
            return ns_fail(err, NS_ERR_INVALID, "--nc %s: no such file", o->nc);
        *nc = strdup(o->nc);
        return *nc ? NS_OK : ns_fail(err, NS_ERR_NOMEM, "out of memory");
    }
    char **files = NULL;
    size_t n = 0;
    NS_TRY(list_files(o->run_dir, keep_nc, &files, &n, err));
    int rc = NS_OK;
    if (n == 1) {
        *nc = files[0];
        files[0] = NULL;
    } else if (n > 1) {
        rc = ns_fail(err, NS_ERR_INVALID, "run directory %s holds %zu NetCDF files (%s, %s%s): "
                     "choose one with --nc", o->run_dir, n, files[0], files[1],
                     n > 2 ? ", ..." : "");
    } else {
        char **tmp = NULL;
        size_t ntmp = 0;
        char *journal = ns_path_join(o->run_dir, NS_ARCHIVE_CKPT_DIR "/" NS_JOURNAL_FILE);
        int has_ckpt = journal && is_file(journal);
        if (list_files(o->run_dir, keep_tmp_nc, &tmp, &ntmp, err) == NS_OK && ntmp)
            has_ckpt = 1;
        DIR *d = opendir(o->run_dir);
        struct dirent *e;
        while (d && (e = readdir(d)))
            if (ends_with(e->d_name, ".ckpt"))
                has_ckpt = 1;
        if (d)
            closedir(d);
        free_strs(tmp, ntmp);
        free(journal);
        rc = has_ckpt ? ns_fail(err, NS_ERR_INVALID,
                                "incomplete run: %s has a checkpoint but no NetCDF output: the "
                                "sweep did not finish (continue it with `normsweep run --resume`)",
                                o->run_dir)
                      : ns_fail(err, NS_ERR_INVALID, "no NetCDF file (*.nc) in run directory %s "
                                "(name it with --nc)", o->run_dir);
    }
    free_strs(files, n);
    return rc;
}

static int find_ckpt(const ns_run_archive_options *o, const char *nc, char **dir, ns_err *err)
{
    *dir = NULL;
    char *cand[2] = {NULL, NULL};
    size_t nc_ = 0;
    if (o->checkpoint_dir) {
        cand[nc_++] = strdup(o->checkpoint_dir);
    } else {
        cand[nc_++] = ns_path_join(o->run_dir, NS_ARCHIVE_CKPT_DIR);
        cand[nc_++] = xasprintf("%s.ckpt", nc);
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
        if (is_dir(cand[i]) && is_file(j)) {
            *dir = cand[i];
            cand[i] = NULL;
        }
        free(j);
    }
    if (rc == NS_OK && !*dir) {
        if (o->checkpoint_dir)
            rc = ns_fail(err, NS_ERR_INVALID, "--checkpoint-dir %s: no %s in it", o->checkpoint_dir,
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

static json_t *asset_json(const ns_nc_info *info, const char *kind)
{
    char k1[64], k2[64], k3[64];
    snprintf(k1, sizeof k1, "%s_used", kind);
    snprintf(k2, sizeof k2, "%s_sha256", kind);
    snprintf(k3, sizeof k3, "%s_path", kind);
    json_t *o = json_object();
    if (strcmp(kind, "model") == 0)
        json_object_set_new(o, "requested", json_string(or_unknown(ns_nc_info_text(info, "model_requested"))));
    json_object_set_new(o, "used", json_string(or_unknown(ns_nc_info_text(info, k1))));
    if (ns_nc_info_text(info, k3))
        json_object_set_new(o, "path", json_string(ns_nc_info_text(info, k3)));
    json_object_set_new(o, "sha256", json_string(or_unknown(ns_nc_info_text(info, k2))));
    return o;
}

/* provenance.json: the run's build and inputs (from the NetCDF), this build, this machine, and
 * where every member came from. Caller frees *text. */
static int provenance_json(const ns_run_archive_options *o, const ns_nc_info *info,
                           const char *nc_member, const src_list *src, char **text, ns_err *err)
{
    static const char *const run_keys[] = {
        "normsweep_version", "git_commit", "compiler", "cflags", "blas", "mpi_size", "start_time",
        "end_time", "command_line", "sweep_file", "shard_count", "corpus_tokens",
        "corpus_gutenberg_stripped"};
    json_t *root = json_object(), *run = json_object(), *inputs = json_object(),
           *arch = json_object(), *mach = json_object(), *files = json_object(),
           *members = json_array();
    if (!root || !run || !inputs || !arch || !mach || !files || !members) {
        json_decref(root), json_decref(run), json_decref(inputs), json_decref(arch);
        json_decref(mach), json_decref(files), json_decref(members);
        return ns_fail(err, NS_ERR_NOMEM, "out of memory");
    }
    char now[32];
    time_t t = time(NULL);
    struct tm tm;
    gmtime_r(&t, &tm);
    strftime(now, sizeof now, "%Y-%m-%dT%H:%M:%SZ", &tm);
    json_object_set_new(root, "format", json_string(NS_ARCHIVE_FORMAT));
    json_object_set_new(root, "created", json_string(now));

    for (size_t i = 0; i < sizeof run_keys / sizeof run_keys[0]; i++) {
        long long v;
        double d;
        const char *s = ns_nc_info_text(info, run_keys[i]);
        if (s)
            json_object_set_new(run, run_keys[i], json_string(s));
        else if (ns_nc_info_int(info, run_keys[i], &v))
            json_object_set_new(run, run_keys[i], json_integer(v));
        else if (ns_nc_info_double(info, run_keys[i], &d))
            json_object_set_new(run, run_keys[i], json_real(d));
    }
    json_object_set_new(root, "run", run);

    json_object_set_new(inputs, "model", asset_json(info, "model"));
    json_object_set_new(inputs, "tokenizer", asset_json(info, "tokenizer"));
    json_object_set_new(inputs, "corpus", asset_json(info, "corpus"));
    json_object_set_new(root, "inputs", inputs);

    json_object_set_new(arch, "normsweep_version", json_string(PACKAGE_VERSION));
    json_object_set_new(arch, "git_commit", json_string(NS_GIT_COMMIT));
    json_object_set_new(arch, "compiler", json_string(NS_BUILD_CC));
    json_object_set_new(arch, "cflags", json_string(NS_BUILD_CFLAGS));
    json_object_set_new(arch, "blas", json_string(openblas_get_config()));
    json_object_set_new(root, "archiver", arch);

    ns_machine_info m;
    ns_machine_describe(&m);
    char un[600];
    snprintf(un, sizeof un, "%s %s %s %s %s", m.sysname, m.nodename, m.release, m.version,
             m.machine);
    json_object_set_new(mach, "uname", json_string(un));
    json_object_set_new(mach, "hostname", json_string(m.nodename));
    json_object_set_new(mach, "cpu_model", json_string(m.cpu_model));
    json_object_set_new(mach, "cores", json_integer(m.cores));
    json_object_set_new(mach, "memory_bytes", json_integer((json_int_t)m.memory_bytes));
    json_object_set_new(mach, "note", json_string("the machine that made the archive"));
    json_object_set_new(root, "machine", mach);

    json_object_set_new(files, "netcdf", json_string(nc_member));
    json_object_set_new(files, "sweep", json_string(NS_ARCHIVE_SWEEP));
    json_object_set_new(files, "journal", json_string(NS_ARCHIVE_CKPT_DIR "/" NS_JOURNAL_FILE));
    json_object_set_new(files, "run_dir", json_string(o->run_dir));
    for (size_t i = 0; i < src->n; i++) {
        json_t *e = json_object();
        json_object_set_new(e, "member", json_string(src->items[i].name));
        if (src->items[i].path)
            json_object_set_new(e, "source", json_string(src->items[i].path));
        json_array_append_new(members, e);
    }
    json_object_set_new(files, "members", members);
    json_object_set_new(root, "files", files);

    *text = json_dumps(root, JSON_INDENT(2) | JSON_PRESERVE_ORDER);
    json_decref(root);
    if (!*text)
        return ns_fail(err, NS_ERR_NOMEM, "out of memory");
    return NS_OK;
}

static const char *base_of(const char *p)
{
    const char *s = strrchr(p, '/');
    return s ? s + 1 : p;
}

int ns_run_archive(const ns_run_archive_options *o, ns_err *err)
{
    int rc = NS_OK;
    char *nc = NULL, *ckpt = NULL, *prov = NULL, *top = NULL, *logdir = NULL;
    char **ck = NULL, **logs = NULL, **logs2 = NULL;
    size_t nck = 0, nlogs = 0, nlogs2 = 0;
    ns_nc_info info;
    memset(&info, 0, sizeof info);
    src_list src;
    memset(&src, 0, sizeof src);

    if (!is_dir(o->run_dir))
        return ns_fail(err, NS_ERR_INVALID, "run directory %s: %s", o->run_dir,
                       ns_file_exists(o->run_dir) ? "not a directory" : "no such directory");
    if (!ends_with(o->out, ".tar.gz") && !ends_with(o->out, ".tgz"))
        return ns_fail(err, NS_ERR_INVALID, "--out %s: the archive name must end in .tar.gz",
                       o->out);
    if ((rc = find_nc(o, &nc, err)) != NS_OK)
        goto done;
    if ((rc = ns_nc_info_read(nc, &info, err)) != NS_OK) {
        if (rc == NS_ERR_IO || rc == NS_ERR_FORMAT)
            rc = err->code = NS_ERR_INVALID;
        goto done;
    }
    const char *yaml = ns_nc_info_text(&info, "sweep_yaml");
    if (!yaml || !ns_nc_info_text(&info, "model_sha256")) {
        rc = ns_fail(err, NS_ERR_INVALID, "%s is not a normsweep sweep output (no sweep_yaml / "
                     "model_sha256 attribute)", nc);
        goto done;
    }
    if ((rc = find_ckpt(o, nc, &ckpt, err)) != NS_OK)
        goto done;

    /* Members: the NetCDF, the sweep text, the checkpoint files, the logs, provenance.json. */
    const char *nc_member = base_of(nc);
    if ((rc = src_add(&src, nc_member, nc, NULL, 0, err)) != NS_OK ||
        (rc = src_add(&src, NS_ARCHIVE_SWEEP, NULL, yaml, strlen(yaml), err)) != NS_OK ||
        (rc = list_files(ckpt, NULL, &ck, &nck, err)) != NS_OK)
        goto done;
    for (size_t i = 0; i < nck; i++) {
        char *name = xasprintf("%s/%s", NS_ARCHIVE_CKPT_DIR, base_of(ck[i]));
        rc = name ? src_add(&src, name, ck[i], NULL, 0, err)
                  : ns_fail(err, NS_ERR_NOMEM, "out of memory");
        free(name);
        if (rc != NS_OK)
            goto done;
    }
    if ((rc = list_files(o->run_dir, keep_log, &logs, &nlogs, err)) != NS_OK)
        goto done;
    if (!(logdir = ns_path_join(o->run_dir, NS_ARCHIVE_LOG_DIR))) {
        rc = ns_fail(err, NS_ERR_NOMEM, "out of memory");
        goto done;
    }
    if (is_dir(logdir) && (rc = list_files(logdir, NULL, &logs2, &nlogs2, err)) != NS_OK)
        goto done;
    for (size_t k = 0; k < 2; k++) {
        char **l = k ? logs2 : logs;
        size_t nl = k ? nlogs2 : nlogs;
        for (size_t i = 0; i < nl; i++) {
            char *name = xasprintf("%s/%s", NS_ARCHIVE_LOG_DIR, base_of(l[i]));
            if (!name) {
                rc = ns_fail(err, NS_ERR_NOMEM, "out of memory");
                goto done;
            }
            int dup = 0;
            for (size_t j = 0; j < src.n; j++)
                dup |= strcmp(src.items[j].name, name) == 0;
            rc = dup || !ns_archive_name_ok(name) ? NS_OK : src_add(&src, name, l[i], NULL, 0, err);
            free(name);
            if (rc != NS_OK)
                goto done;
        }
    }
    if ((rc = provenance_json(o, &info, nc_member, &src, &prov, err)) != NS_OK ||
        (rc = src_add(&src, NS_ARCHIVE_PROVENANCE, NULL, prov, strlen(prov), err)) != NS_OK)
        goto done;

    /* Top directory: the archive's name without .tar.gz. */
    top = strdup(base_of(o->out));
    if (!top) {
        rc = ns_fail(err, NS_ERR_NOMEM, "out of memory");
        goto done;
    }
    top[strlen(top) - (ends_with(top, ".tgz") ? 4 : 7)] = 0;
    if (!ns_archive_name_ok(top)) {
        rc = ns_fail(err, NS_ERR_INVALID, "--out %s: cannot derive a top directory name", o->out);
        goto done;
    }
    if (o->log)
        for (size_t i = 0; i < src.n; i++)
            fprintf(o->log, "normsweep archive: adding %s/%s%s%s\n", top, src.items[i].name,
                    src.items[i].path ? " <- " : "", src.items[i].path ? src.items[i].path : "");
    rc = ns_archive_write(o->out, top, src.items, src.n, NULL, err);
done:
    free(nc);
    free(ckpt);
    free(prov);
    free(top);
    free(logdir);
    free_strs(ck, nck);
    free_strs(logs, nlogs);
    free_strs(logs2, nlogs2);
    ns_nc_info_free(&info);
    src_free(&src);
    return rc;
}

/* ==== verify ================================================================================= */

typedef struct vctx {
    const ns_verify_options *o;
    ns_verify_summary *s;
    FILE *out;
} vctx;

static void line(vctx *v, const char *tag, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static void line(vctx *v, const char *tag, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fprintf(v->out, "%-4s ", tag);
    vfprintf(v->out, fmt, ap);
    fputc('\n', v->out);
    va_end(ap);
    if (strcmp(tag, "PASS") == 0)
        v->s->passed++;
    else if (strcmp(tag, "FAIL") == 0)
        v->s->failed++;
    else if (strcmp(tag, "SKIP") == 0)
        v->s->skipped++;
}

static int rm_entry(const char *p, const struct stat *st, int flag, struct FTW *ftw)
{
    (void)st, (void)flag, (void)ftw;
    remove(p);
    return 0;
}

/* The manifest check: 1 when the archive is intact. */
static int check_manifest(vctx *v, const char *dir, const ns_archive_list *members, ns_err *err,
                          int *rc)
{
    char *mtext = NULL;
    size_t mlen = 0;
    ns_archive_check chk;
    *rc = NS_OK;
    if (ns_archive_list_find(members, NS_ARCHIVE_MANIFEST)) {
        char *p = ns_path_join(dir, NS_ARCHIVE_MANIFEST);
        if (!p) {
            *rc = ns_fail(err, NS_ERR_NOMEM, "out of memory");
            return 0;
        }
        *rc = ns_file_read_all(p, 0, &mtext, &mlen, err);
        free(p);
        if (*rc != NS_OK)
            return 0;
    }
    if ((*rc = ns_archive_check_manifest(members, mtext, mlen, &chk, err)) != NS_OK) {
        free(mtext);
        return 0;
    }
    free(mtext);
    for (size_t i = 0; i < chk.n; i++) {
        char buf[512];
        ns_archive_issue_describe(&chk.items[i], buf, sizeof buf);
        line(v, "FAIL", "manifest: %s", buf);
    }
    int ok = chk.n == 0;
    if (ok)
        line(v, "PASS", "manifest: %zu members listed, all present with matching SHA-256, none "
             "unlisted", chk.n_listed);
    ns_archive_check_free(&chk);
    return ok;
}

/* The NetCDF member's name: provenance.json's files.netcdf, else the one *.nc member. */
static int nc_member(const char *dir, const ns_archive_list *members, char **name, ns_err *err)
{
    *name = NULL;
    char *p = ns_path_join(dir, NS_ARCHIVE_PROVENANCE);
    if (!p)
        return ns_fail(err, NS_ERR_NOMEM, "out of memory");
    if (is_file(p)) {
        json_error_t je;
        json_t *root = json_load_file(p, 0, &je);
        const char *s = root ? json_string_value(json_object_get(json_object_get(root, "files"),
                                                                 "netcdf"))
                             : NULL;
        if (s && ns_archive_list_find(members, s))
            *name = strdup(s);
        json_decref(root);
    }
    free(p);
    for (size_t i = 0; !*name && i < members->n; i++)
        if (ends_with(members->items[i].name, ".nc") && !strchr(members->items[i].name, '/'))
            *name = strdup(members->items[i].name);
    if (!*name)
        return ns_fail(err, NS_ERR_INVALID, "the archive holds no NetCDF file");
    return NS_OK;
}

/* Compare this build with the one recorded; fills why with the differences. 1 = same. */
static int same_build(const ns_nc_info *info, char *why, size_t size)
{
    const char *keys[4] = {"git_commit", "compiler", "cflags", "blas"};
    const char *mine[4] = {NS_GIT_COMMIT, NS_BUILD_CC, NS_BUILD_CFLAGS, openblas_get_config()};
    size_t at = 0;
    why[0] = 0;
    for (size_t i = 0; i < 4; i++) {
        const char *rec = ns_nc_info_text(info, keys[i]);
        int same = rec && strcmp(rec, mine[i]) == 0 &&
                   !(i == 0 && strcmp(rec, "unknown") == 0);
        if (!same && at < size)
            at += (size_t)snprintf(why + at, size - at, "%s%s recorded '%s', this build '%s'",
                                   at ? "; " : "", keys[i], or_unknown(rec), mine[i]);
    }
    return why[0] == 0;
}

/* Describe payload index i: (layer, head, normalizer, L, row, metric[j]). */
static void describe_index(const ns_task_plan *p, const ns_sweep_config *cfg, size_t i, char *buf,
                           size_t size)
{
    size_t k = i % p->layout.total, rest = i / p->layout.total;
    size_t r = rest % p->rows;
    rest /= p->rows;
    size_t Li = rest % p->nL;
    rest /= p->nL;
    size_t ni = rest % p->nnorm;
    rest /= p->nnorm;
    size_t hi = rest % p->nheads, li = rest / p->nheads;
    const char *metric = "?";
    char at[96] = "";
    for (int id = 0; id < NS_M_COUNT; id++) {
        if (k < p->layout.offset[id] || k >= p->layout.offset[id] + p->layout.size[id])
            continue;
        size_t j = k - p->layout.offset[id];
        metric = ns_metric_name((ns_metric_id)id);
        switch (ns_metric_shape_of((ns_metric_id)id)) {
        case NS_SHAPE_TN:
            snprintf(at, sizeof at, " T=%g N=%zu", cfg->T[j / cfg->nN], cfg->N[j % cfg->nN]);
            break;
        case NS_SHAPE_T:
            snprintf(at, sizeof at, " T=%g", cfg->T[j]);
            break;
        case NS_SHAPE_TE:
            snprintf(at, sizeof at, " T=%g eps=%g", cfg->T[j / cfg->neps], cfg->eps[j % cfg->neps]);
            break;
        default:
            break;
        }
    }
    snprintf(buf, size, "layer %zu head %zu %s L=%zu row %zu (m=%zu): %s%s", p->layers[li],
             p->heads[hi], ns_normalizer_name(cfg->normalizers[ni].kind), p->L[Li], r,
             p->L[Li] - 1 - r, metric, at);
}

typedef struct jrec {
    int64_t *offset;   /* per shard: payload offset in the journal, or -1 */
    size_t n_shards, n_records, n_foreign;
} jrec;

static int on_record(void *user, uint64_t task, const void *payload, size_t len,
                     uint64_t payload_offset, ns_err *err)
{
    (void)payload, (void)len, (void)err;
    jrec *j = user;
    j->n_records++;
    if (task >= j->n_shards) {
        j->n_foreign++;
        return NS_OK;
    }
    if (j->offset[task] < 0)
        j->offset[task] = (int64_t)payload_offset;
    return NS_OK;
}

/* Check one input: resolved (ref filled) and its SHA-256 as recorded. 1 = pass. */
static int check_input(vctx *v, const char *kind, const char *asked, const ns_asset_ref *ref,
                       int resolved, const char *recorded, const ns_sweep_diags *diags)
{
    if (!resolved) {
        const char *why = "not found";
        for (size_t i = 0; i < diags->n; i++)
            if (!diags->items[i].is_warning && strstr(diags->items[i].text, kind)) {
                why = diags->items[i].text;
                break;
            }
        line(v, "FAIL", "%s %s: cannot be resolved (%s); recorded SHA-256 %s", kind, asked, why,
             or_unknown(recorded));
        return 0;
    }
    if (!recorded || strcmp(recorded, ref->sha256) != 0) {
        line(v, "FAIL", "%s %s: SHA-256 differs: recorded %s, now %s (%s)", kind, asked,
             or_unknown(recorded), ref->sha256, ref->main_file);
        return 0;
    }
    line(v, "PASS", "%s %s: SHA-256 matches the recorded %s", kind, asked, recorded);
    return 1;
}

typedef struct vstate {
    char *dir;
    ns_archive_list members;
    ns_nc_info info;
    ns_sweep_config cfg;
    int have_cfg;
    ns_sweep_inputs in;
    ns_sweep_diags diags;
    ns_task_plan plan;
    int have_plan;
    ns_journal *journal;
    jrec jr;
    ns_gpt2_model *model;
    ns_task_runner *runner;
    double *mine, *theirs;
    size_t *chosen;
} vstate;

static void vstate_free(vstate *st)
{
    ns_task_runner_free(st->runner);
    ns_gpt2_free(st->model);
    ns_journal_close(st->journal);
    if (st->have_plan)
        ns_task_plan_free(&st->plan);
    ns_sweep_inputs_free(&st->in);
    ns_sweep_diags_free(&st->diags);
    if (st->have_cfg)
        ns_sweep_config_free(&st->cfg);
    ns_nc_info_free(&st->info);
    ns_archive_list_free(&st->members);
    free(st->jr.offset);
    free(st->mine);
    free(st->theirs);
    free(st->chosen);
    if (st->dir) {
        nftw(st->dir, rm_entry, 16, FTW_DEPTH | FTW_PHYS);
        free(st->dir);
    }
}

/* Recompute the sampled tasks and compare them with the journal. */
static int recompute(vctx *v, vstate *st, int exact, ns_err *err)
{
    const ns_verify_options *o = v->o;
    const ns_sweep_config *cfg = &st->cfg;
    size_t M = cfg->shard_count, K = o->sample < M ? o->sample : M;
    if (K == 0) {
        line(v, "SKIP", "recompute: --sample 0");
        return NS_OK;
    }
    st->chosen = malloc(M * sizeof *st->chosen);
    if (!st->chosen)
        return ns_fail(err, NS_ERR_NOMEM, "out of memory");
    /* A seeded partial Fisher-Yates shuffle: the first K of a random permutation of 0..M-1. */
    for (size_t i = 0; i < M; i++)
        st->chosen[i] = i;
    ns_rng rng;
    ns_rng_init(&rng, ns_rng_mix64(o->seed ^ 0x6e73766572696679ull)); /* "nsverify" */
    for (size_t i = 0; i < K; i++) {
        size_t j = i + (size_t)ns_rng_below(&rng, M - i), t = st->chosen[i];
        st->chosen[i] = st->chosen[j];
        st->chosen[j] = t;
    }
    char list[1024];
    size_t at = 0;
    for (size_t i = 0; i < K && at < sizeof list - 24; i++)
        at += (size_t)snprintf(list + at, sizeof list - at, "%s%zu", i ? ", " : "", st->chosen[i]);
    line(v, "INFO", "sample: %zu of %zu tasks, seed %llu: shards %s", K, M,
         (unsigned long long)o->seed, list);

    if (!getenv("OPENBLAS_NUM_THREADS"))
        openblas_set_num_threads(1); /* as the sweep runs it */
    NS_TRY(ns_gpt2_load(st->in.model_ref.path, &st->model, err));
    NS_TRY(ns_task_runner_new(&st->plan, st->model, &st->runner, err));
    size_t P = st->plan.payload;
    st->mine = malloc(P * sizeof *st->mine);
    st->theirs = malloc(P * sizeof *st->theirs);
    if (!st->mine || !st->theirs)
        return ns_fail(err, NS_ERR_NOMEM, "out of memory (%zu values per task)", P);
    for (size_t i = 0; i < K; i++) {
        size_t k = st->chosen[i];
        const int32_t *ids;
        NS_TRY(ns_corpus_shard(&st->in.corpus, cfg->L_max, cfg->shard_first, cfg->shard_stride,
                               k, &ids, err));
        NS_TRY(ns_task_run(st->runner, k, ids, NULL, NULL, st->mine, err));
        NS_TRY(ns_journal_read(st->journal, (uint64_t)st->jr.offset[k], 0, P * sizeof(double),
                               st->theirs, err));
        size_t first;
        size_t bad = ns_verify_compare(st->theirs, st->mine, P, exact, o->tolerance, &first);
        if (bad == 0) {
            line(v, "PASS", "task %zu (shard %zu): %zu values %s", k, k, P,
                 exact ? "byte-identical" : "within the tolerance");
        } else {
            char where[256];
            describe_index(&st->plan, cfg, first, where, sizeof where);
            line(v, "FAIL", "task %zu (shard %zu): %zu of %zu values differ; first at %s: "
                 "archived %.17g, recomputed %.17g", k, k, bad, P, where, st->theirs[first],
                 st->mine[first]);
        }
    }
    return NS_OK;
}

static int make_workdir(const ns_verify_options *o, char **dir, ns_err *err)
{
    const char *base = o->tmpdir ? o->tmpdir : getenv("TMPDIR");
    if (!base || !*base)
        base = "/tmp";
    char *t = xasprintf("%s/normsweep-verify.XXXXXX", base);
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

int ns_verify(const ns_verify_options *o, ns_verify_summary *s, ns_err *err)
{
    vctx v = {o, s, o->report ? o->report : stdout};
    vstate st;
    memset(&st, 0, sizeof st);
    memset(s, 0, sizeof *s);
    char *ncname = NULL, *path = NULL, *yaml_member = NULL;
    size_t yaml_len = 0;
    int rc;

    /* 1. Extract and check the manifest. */
    if ((rc = make_workdir(o, &st.dir, err)) != NS_OK)
        goto done;
    if ((rc = ns_archive_extract(o->archive, st.dir, &st.members, err)) != NS_OK) {
        if (rc == NS_ERR_IO && !ns_file_exists(o->archive))
            rc = err->code = NS_ERR_INVALID;
        goto done;
    }
    line(&v, "INFO", "archive %s: %zu members under %s/", o->archive, st.members.n,
         st.members.top);
    if (!check_manifest(&v, st.dir, &st.members, err, &rc)) {
        if (rc == NS_OK)
            line(&v, "SKIP", "inputs and recomputation: the archive failed its manifest check");
        goto done;
    }

    /* 2. The recorded provenance and sweep. */
    if ((rc = nc_member(st.dir, &st.members, &ncname, err)) != NS_OK)
        goto done;
    if (!(path = ns_path_join(st.dir, ncname))) {
        rc = ns_fail(err, NS_ERR_NOMEM, "out of memory");
        goto done;
    }
    if ((rc = ns_nc_info_read(path, &st.info, err)) != NS_OK)
        goto done;
    const char *yaml = ns_nc_info_text(&st.info, "sweep_yaml");
    if (!yaml) {
        rc = ns_fail(err, NS_ERR_INVALID, "%s: no sweep_yaml attribute (not a sweep output)",
                     ncname);
        goto done;
    }
    free(path);
    if (!(path = ns_path_join(st.dir, NS_ARCHIVE_SWEEP))) {
        rc = ns_fail(err, NS_ERR_NOMEM, "out of memory");
        goto done;
    }
    if (ns_file_read_all(path, 0, &yaml_member, &yaml_len, err) == NS_OK &&
        yaml_len == strlen(yaml) && memcmp(yaml_member, yaml, yaml_len) == 0)
        line(&v, "PASS", "%s: identical to the sweep_yaml attribute of %s", NS_ARCHIVE_SWEEP,
             ncname);
    else
        line(&v, "FAIL", "%s: %s the sweep_yaml attribute of %s", NS_ARCHIVE_SWEEP,
             yaml_member ? "differs from" : "missing; cannot compare with", ncname);
    ns_err_clear(err);

    char why[2048];
    int exact = same_build(&st.info, why, sizeof why) && !o->force_tolerance;
    if (exact)
        line(&v, "INFO", "mode: byte-identical (git commit, compiler, flags and BLAS match the "
             "recorded build)");
    else
        line(&v, "INFO", "mode: tolerance, |archived - recomputed| <= %g * max(|archived|, "
             "|recomputed|, 1) (%s)", o->tolerance,
             o->force_tolerance && !why[0] ? "--tolerant given" : why);

    const char *sweep_file = or_unknown(ns_nc_info_text(&st.info, "sweep_file"));
    st.have_cfg = 1;
    if ((rc = ns_sweep_parse(yaml, strlen(yaml), sweep_file, &st.cfg, NULL, &st.diags, err)) !=
        NS_OK) {
        if (rc != NS_ERR_NOMEM)
            rc = ns_fail(err, NS_ERR_INVALID, "the archived sweep does not parse: %s",
                         st.diags.n ? st.diags.items[0].text : err->msg);
        goto done;
    }

    /* 3. Inputs: the model actually used (its manifest name when a fallback replaced the
     * requested one), the tokenizer and the corpus, resolved as the run resolves them. */
    const char *used = ns_nc_info_text(&st.info, "model_used");
    if (used && st.cfg.model && strcmp(used, "path") != 0 && strcmp(used, "unknown") != 0 &&
        strcmp(used, st.cfg.model) != 0) {
        char *m = strdup(used);
        if (!m) {
            rc = ns_fail(err, NS_ERR_NOMEM, "out of memory");
            goto done;
        }
        line(&v, "INFO", "model: the sweep asked for %s; the run used %s", st.cfg.model, used);
        free(st.cfg.model);
        st.cfg.model = m;
    }
    if ((rc = ns_sweep_resolve_model(&st.cfg, NULL, o->allow_fetch, &st.in, &st.diags, err)) !=
        NS_OK)
        goto done;
    int inputs_ok = check_input(&v, "model", st.cfg.model, &st.in.model_ref,
                                st.in.model_ref.sha256[0] != 0,
                                ns_nc_info_text(&st.info, "model_sha256"), &st.diags);
    if ((rc = ns_sweep_resolve_corpus(&st.cfg, NULL, o->allow_fetch, &st.in, &st.diags, err)) !=
        NS_OK)
        goto done;
    inputs_ok &= check_input(&v, "tokenizer", st.cfg.tokenizer, &st.in.tokenizer_ref,
                             st.in.tokenizer_ref.sha256[0] != 0,
                             ns_nc_info_text(&st.info, "tokenizer_sha256"), &st.diags);
    if (st.in.have_tokenizer) {
        inputs_ok &= check_input(&v, "corpus", st.cfg.corpus, &st.in.corpus_ref,
                                 st.in.corpus_ref.sha256[0] != 0,
                                 ns_nc_info_text(&st.info, "corpus_sha256"), &st.diags);
    } else {
        line(&v, "SKIP", "corpus %s: not checked without the tokenizer", st.cfg.corpus);
        inputs_ok = 0;
    }
    if (inputs_ok && (st.diags.nerrors || !st.in.have_model || !st.in.have_corpus)) {
        for (size_t i = 0; i < st.diags.n; i++)
            if (!st.diags.items[i].is_warning)
                line(&v, "FAIL", "inputs: %s", st.diags.items[i].text);
        inputs_ok = 0;
    }
    if (!inputs_ok) {
        line(&v, "SKIP", "journal and recomputation: the recorded inputs are not available");
        goto done;
    }

    /* 4. The journal: every task recorded, for this sweep. */
    if ((rc = ns_task_plan_init(&st.plan, &st.cfg, &st.in.model_cfg, err)) != NS_OK)
        goto done;
    st.have_plan = 1;
    char hash[65];
    if ((rc = ns_journal_sweep_hash(yaml, st.in.model_ref.sha256, st.in.tokenizer_ref.sha256,
                                    st.in.corpus_ref.sha256, st.plan.payload, hash, err)) != NS_OK)
        goto done;
    st.jr.n_shards = st.cfg.shard_count;
    st.jr.offset = malloc((st.cfg.shard_count + 1) * sizeof *st.jr.offset);
    if (!st.jr.offset) {
        rc = ns_fail(err, NS_ERR_NOMEM, "out of memory");
        goto done;
    }
    for (size_t i = 0; i < st.cfg.shard_count; i++)
        st.jr.offset[i] = -1;
    free(path);
    if (!(path = ns_path_join(st.dir, NS_ARCHIVE_CKPT_DIR))) {
        rc = ns_fail(err, NS_ERR_NOMEM, "out of memory");
        goto done;
    }
    char *jpath = ns_path_join(path, NS_JOURNAL_FILE);
    int have_journal = jpath && is_file(jpath);
    free(jpath);
    if (!have_journal) {
        line(&v, "FAIL", "journal: %s/%s is not in the archive", NS_ARCHIVE_CKPT_DIR,
             NS_JOURNAL_FILE);
        line(&v, "SKIP", "recomputation: no journal to compare with");
        goto done;
    }
    ns_err je;
    ns_err_clear(&je);
    size_t torn = 0;
    if (ns_journal_open(path, hash, st.plan.payload * sizeof(double), 1, on_record, &st.jr,
                        &st.journal, &torn, &je) != NS_OK) {
        line(&v, "FAIL", "journal: %s", je.msg);
        line(&v, "SKIP", "recomputation: the journal cannot be read for this sweep");
        goto done;
    }
    size_t missing = 0, first_missing = 0;
    for (size_t i = 0; i < st.cfg.shard_count; i++)
        if (st.jr.offset[i] < 0 && missing++ == 0)
            first_missing = i;
    if (missing || torn || st.jr.n_foreign)
        line(&v, "FAIL", "journal: %zu of %zu tasks missing (first: %zu)%s%s", missing,
             st.cfg.shard_count, first_missing, torn ? "; a corrupt record was found" : "",
             st.jr.n_foreign ? "; records of unknown tasks" : "");
    else
        line(&v, "PASS", "journal: all %zu tasks recorded (%zu values each)", st.cfg.shard_count,
             st.plan.payload);
    if (missing) {
        line(&v, "SKIP", "recomputation: the journal is incomplete");
        goto done;
    }

    /* 5. Recompute the sample. */
    rc = recompute(&v, &st, exact, err);
done:
    if (rc == NS_OK)
        fprintf(v.out, "verify: %s (%zu passed, %zu failed, %zu skipped)\n",
                s->failed ? "FAIL" : "PASS", s->passed, s->failed, s->skipped);
    free(ncname);
    free(path);
    free(yaml_member);
    vstate_free(&st);
    return rc;
}

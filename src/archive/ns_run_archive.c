/* ns_run_archive: pack a finished sweep run into a reproducibility archive (see
 * ns_run_archive.h and docs/ARCHIVE.md). */
#include "config.h"

#include "archive/ns_run_archive.h"

#include <dirent.h>
#include <errno.h>
#include <jansson.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <time.h>
#include <unistd.h>

#include "common/ns_blas.h"
#include "common/ns_build.h"
#include "common/ns_file.h"
#include "common/ns_lock.h"
#include "common/ns_sha256.h"
#include "archive/ns_archive.h"
#include "archive/ns_archive_readme.h"
#include "assets/ns_assets.h"
#include "io/ns_nc_read.h"
#include "sweep/ns_journal.h"

#define NS_ASSET_LINE 4096

static const char *or_unknown(const char *s)
{
    return s ? s : "unknown";
}

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
        if (!ns_file_is_regular(p)) {
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
    return ns_str_ends_with(name, ".nc");
}

/* The checkpoint's files, but not the run's lock (runtime state) nor a stop request. */
static int keep_ckpt(const char *name)
{
    return strcmp(name, NS_LOCK_FILE) != 0 && strcmp(name, "STOP") != 0;
}

static int keep_log(const char *name)
{
    return ns_str_ends_with(name, ".log") || ns_str_ends_with(name, ".out") || ns_str_ends_with(name, ".err");
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
        if (!ns_file_is_regular(o->nc))
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
        int has_ckpt = journal && ns_file_is_regular(journal);
        if (list_files(o->run_dir, keep_tmp_nc, &tmp, &ntmp, err) == NS_OK && ntmp)
            has_ckpt = 1;
        DIR *d = opendir(o->run_dir);
        struct dirent *e;
        while (d && (e = readdir(d)))
            if (ns_str_ends_with(e->d_name, ".ckpt"))
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

/* The size of a member: its data's, or its file's now. */
static uint64_t source_bytes(const ns_archive_source *m)
{
    struct stat st;
    if (!m->path)
        return m->len;
    return stat(m->path, &st) == 0 ? (uint64_t)st.st_size : 0;
}

/* provenance.json: the run's build and inputs (from the NetCDF), this build, this machine, and
 * where every member came from. Caller frees *text. */
static int provenance_json(const ns_run_archive_options *o, const ns_nc_info *info,
                           const char *nc_member, const src_list *src, char **text, ns_err *err)
{
    static const char *const run_keys[] = {
        "normsweep_version", "git_commit", "executable_sha256", "compiler", "cflags", "blas",
        "mpi_library", "netcdf_version", "hdf5_version", "os", "mpi_size", "start_time",
        "end_time", "command_line", "history", "sweep_file", "shard_count", "corpus_tokens",
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
    json_object_set_new(arch, "git_commit", json_string(ns_build_git_commit()));
    json_object_set_new(arch, "compiler", json_string(NS_BUILD_CC));
    json_object_set_new(arch, "cflags", json_string(NS_BUILD_CFLAGS));
    char blas[NS_BLAS_ID_MAX];
    ns_blas_identity(blas, sizeof blas);
    json_object_set_new(arch, "blas", json_string(blas));
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
    json_t *parts = json_array(); /* the journal's parts: what workers journalled themselves */
    const char *part_prefix = NS_ARCHIVE_CKPT_DIR "/" NS_JOURNAL_PART_PREFIX;
    for (size_t i = 0; i < src->n; i++)
        if (strncmp(src->items[i].name, part_prefix, strlen(part_prefix)) == 0)
            json_array_append_new(parts, json_string(src->items[i].name));
    json_object_set_new(files, "journal_parts", parts);
    json_object_set_new(files, "run_dir", json_string(o->run_dir));
    for (size_t i = 0; i < src->n; i++) {
        json_t *e = json_object();
        json_object_set_new(e, "member", json_string(src->items[i].name));
        json_object_set_new(e, "bytes", json_integer((json_int_t)source_bytes(&src->items[i])));
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

static int keep_report(const char *name)
{
    return name[0] != '.';
}

/* Every kept file directly in dir as member prefix/NAME (skipping names already present or not
 * safe in an archive). */
static int add_dir(src_list *src, const char *dir, int (*keep)(const char *), const char *prefix,
                   ns_err *err)
{
    char **files = NULL;
    size_t n = 0;
    int rc = list_files(dir, keep, &files, &n, err);
    for (size_t i = 0; rc == NS_OK && i < n; i++) {
        char *name = ns_str_printf("%s/%s", prefix, base_of(files[i]));
        if (!name) {
            rc = ns_fail(err, NS_ERR_NOMEM, "out of memory");
            break;
        }
        int dup = 0;
        for (size_t j = 0; j < src->n; j++)
            dup |= strcmp(src->items[j].name, name) == 0;
        if (!dup && ns_archive_name_ok(name))
            rc = src_add(src, name, files[i], NULL, 0, err);
        free(name);
    }
    free_strs(files, n);
    return rc;
}

/* run_dir/sub's files as sub/NAME, when that directory exists. */
static int add_subdir(src_list *src, const char *run_dir, const char *sub,
                      int (*keep)(const char *), ns_err *err)
{
    char *dir = ns_path_join(run_dir, sub);
    if (!dir)
        return ns_fail(err, NS_ERR_NOMEM, "out of memory");
    int rc = ns_file_is_dir(dir) ? add_dir(src, dir, keep, sub, err) : NS_OK;
    free(dir);
    return rc;
}

/* The asset manifest this build resolves inputs with (where each file comes from, its SHA-256). */
static int add_assets_manifest(src_list *src, ns_err *err)
{
    char path[4096];
    ns_err e;
    if (ns_manifest_locate(path, sizeof path, &e) != NS_OK)
        return NS_OK; /* none known: the README says how to get one */
    return src_add(src, NS_ARCHIVE_ASSETS, path, NULL, 0, err);
}

/* README.txt: every member so far with its size (docs/ARCHIVE.md). */
static int make_readme(const src_list *src, const ns_nc_info *info, const char *archive_name,
                       const char *top, const char *nc_member, char **text, ns_err *err)
{
    ns_readme_member *m = malloc((src->n ? src->n : 1) * sizeof *m);
    if (!m)
        return ns_fail(err, NS_ERR_NOMEM, "out of memory");
    for (size_t i = 0; i < src->n; i++)
        m[i] = (ns_readme_member){src->items[i].name, source_bytes(&src->items[i])};
    int rc = ns_archive_readme(info, archive_name, top, nc_member, m, src->n, text, err);
    free(m);
    return rc;
}

int ns_run_archive(const ns_run_archive_options *o, ns_err *err)
{
    int rc = NS_OK;
    char *nc = NULL, *ckpt = NULL, *prov = NULL, *top = NULL, *readme = NULL;
    ns_nc_info info;
    memset(&info, 0, sizeof info);
    src_list src;
    memset(&src, 0, sizeof src);

    if (!ns_file_is_dir(o->run_dir))
        return ns_fail(err, NS_ERR_INVALID, "run directory %s: %s", o->run_dir,
                       ns_file_exists(o->run_dir) ? "not a directory" : "no such directory");
    if (!ns_str_ends_with(o->out, ".tar.gz") && !ns_str_ends_with(o->out, ".tgz"))
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
    char holder[512];
    if (ns_lock_held_elsewhere(ckpt, holder, sizeof holder)) {
        rc = ns_fail(err, NS_ERR_INVALID, "%s is in use by a running sweep (%s): archive it when "
                     "that run has ended", ckpt, holder);
        goto done;
    }

    /* Members: the NetCDF, the sweep text, the checkpoint files, the logs, the report, the asset
     * manifest, provenance.json and README.txt. */
    const char *nc_member = base_of(nc);
    if ((rc = src_add(&src, nc_member, nc, NULL, 0, err)) != NS_OK ||
        (rc = src_add(&src, NS_ARCHIVE_SWEEP, NULL, yaml, strlen(yaml), err)) != NS_OK ||
        (rc = add_dir(&src, ckpt, keep_ckpt, NS_ARCHIVE_CKPT_DIR, err)) != NS_OK ||
        (rc = add_dir(&src, o->run_dir, keep_log, NS_ARCHIVE_LOG_DIR, err)) != NS_OK ||
        (rc = add_subdir(&src, o->run_dir, NS_ARCHIVE_LOG_DIR, NULL, err)) != NS_OK ||
        (rc = add_subdir(&src, o->run_dir, NS_ARCHIVE_REPORT_DIR, keep_report, err)) != NS_OK ||
        (rc = add_assets_manifest(&src, err)) != NS_OK)
        goto done;
    if ((rc = provenance_json(o, &info, nc_member, &src, &prov, err)) != NS_OK ||
        (rc = src_add(&src, NS_ARCHIVE_PROVENANCE, NULL, prov, strlen(prov), err)) != NS_OK)
        goto done;

    /* Top directory: the archive's name without .tar.gz. */
    top = strdup(base_of(o->out));
    if (!top) {
        rc = ns_fail(err, NS_ERR_NOMEM, "out of memory");
        goto done;
    }
    top[strlen(top) - (ns_str_ends_with(top, ".tgz") ? 4 : 7)] = 0;
    if (!ns_archive_name_ok(top)) {
        rc = ns_fail(err, NS_ERR_INVALID, "--out %s: cannot derive a top directory name", o->out);
        goto done;
    }
    if ((rc = make_readme(&src, &info, base_of(o->out), top, nc_member, &readme, err)) != NS_OK ||
        (rc = src_add(&src, NS_ARCHIVE_README, NULL, readme, strlen(readme), err)) != NS_OK)
        goto done;
    if (o->log)
        for (size_t i = 0; i < src.n; i++) {
            char line[2 * NS_ASSET_LINE];
            snprintf(line, sizeof line, "adding %s/%s%s%s", top, src.items[i].name,
                     src.items[i].path ? " <- " : "", src.items[i].path ? src.items[i].path : "");
            o->log(o->log_user, line);
        }
    rc = ns_archive_write(o->out, top, src.items, src.n, NULL, o->stop, err);
done:
    free(nc);
    free(ckpt);
    free(prov);
    free(top);
    free(readme);
    ns_nc_info_free(&info);
    src_free(&src);
    return rc;
}


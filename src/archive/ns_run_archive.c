/* ns_run_archive: pack a finished sweep run into a reproducibility archive (see
 * ns_run_archive.h and docs/ARCHIVE.md). */
#include "config.h"

#include "archive/ns_run_archive.h"

#include <errno.h>
#include <jansson.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <unistd.h>

#include "common/ns_blas.h"
#include "common/ns_build.h"
#include "common/ns_file.h"
#include "common/ns_lock.h"
#include "common/ns_sha256.h"
#include "common/ns_time.h"
#include "archive/ns_archive.h"
#include "archive/ns_archive_model.h"
#include "archive/ns_archive_provenance.h"
#include "archive/ns_archive_readme.h"
#include "archive/ns_run_files.h"
#include "assets/ns_assets.h"
#include "io/ns_nc_read.h"
#include "journal/ns_journal.h"

#define NS_ASSET_LINE 4096

static const char *or_unknown(const char *s)
{
    return s ? s : "unknown";
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
 * where every member came from (ns_archive_provenance: the fields verify checks). Caller frees
 * *text. */
static int provenance_json(const ns_run_archive_options *o, const ns_nc_info *info,
                           const char *nc_member, const ns_run_files *src,
                           const ns_model_files *mf, char **text, ns_err *err)
{
    json_t *root = json_object(), *run = ns_archive_prov_run(info),
           *inputs = ns_archive_prov_inputs(info), *arch = json_object(), *mach = json_object(),
           *files = json_object(), *members = json_array();
    if (!root || !run || !inputs || !arch || !mach || !files || !members) {
        json_decref(root), json_decref(run), json_decref(inputs), json_decref(arch);
        json_decref(mach), json_decref(files), json_decref(members);
        return ns_fail(err, NS_ERR_NOMEM, "out of memory");
    }
    char now[32];
    ns_iso_now(now, sizeof now);
    json_object_set_new(root, "format", json_string(NS_ARCHIVE_FORMAT));
    json_object_set_new(root, "created", json_string(now));
    json_object_set_new(root, "run", run);
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
    json_object_set_new(files, "journal", o->lean ? json_null()
                                                  : json_string(NS_ARCHIVE_CKPT_DIR "/"
                                                                NS_JOURNAL_FILE));
    json_t *parts = json_array(); /* the journal's parts: what workers journalled themselves */
    const char *part_prefix = NS_ARCHIVE_CKPT_DIR "/" NS_JOURNAL_PART_PREFIX;
    for (size_t i = 0; i < src->n; i++)
        if (strncmp(src->items[i].name, part_prefix, strlen(part_prefix)) == 0)
            json_array_append_new(parts, json_string(src->items[i].name));
    json_object_set_new(files, "journal_parts", parts);
    json_t *model = json_array(); /* the model's files, packed (--with-model) */
    for (size_t i = 0; mf->packed && i < mf->n; i++)
        json_array_append_new(model, json_string(mf->items[i].member));
    json_object_set_new(files, "model_files", model);
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

/* The checkpoint's files, but not the run's lock (runtime state) nor a stop request. */
static int keep_ckpt(const char *name)
{
    return strcmp(name, NS_LOCK_FILE) != 0 && strcmp(name, "STOP") != 0;
}

/* A lean archive's: neither the journal nor its parts (verify recomputes every task). */
static int keep_ckpt_lean(const char *name)
{
    return keep_ckpt(name) && strcmp(name, NS_JOURNAL_FILE) != 0 &&
           strncmp(name, NS_JOURNAL_PART_PREFIX, strlen(NS_JOURNAL_PART_PREFIX)) != 0;
}

/* run_dir/sub's files as sub/NAME, when that directory exists (a link to one is followed: the
 * run directory's owner put it there). */
static int add_subdir(ns_run_files *src, const char *run_dir, const char *sub, ns_err *err)
{
    char *dir = ns_path_join(run_dir, sub);
    if (!dir)
        return ns_fail(err, NS_ERR_NOMEM, "out of memory");
    int rc = ns_file_is_dir(dir) ? ns_run_files_add_tree(src, dir, sub, NULL, 1, err) : NS_OK;
    free(dir);
    return rc;
}

/* The asset manifest this build resolves inputs with (where each file comes from, its SHA-256). */
static int add_assets_manifest(ns_run_files *src, ns_err *err)
{
    char path[4096];
    ns_err e;
    if (ns_manifest_locate(path, sizeof path, &e) != NS_OK)
        return NS_OK; /* none known: the README says how to get one */
    char *real = realpath(path, NULL); /* an installed manifest may be a link */
    int rc = ns_run_files_add(src, NS_ARCHIVE_ASSETS, real ? real : path, NULL, 0, 0, err);
    free(real);
    return rc;
}

/* README.txt: every member so far with its size (docs/ARCHIVE.md). */
static int make_readme(const ns_run_files *src, const ns_nc_info *info, const char *archive_name,
                       const char *top, const char *nc_member, const ns_model_files *mf,
                       char **text, ns_err *err)
{
    ns_readme_member *m = malloc((src->n ? src->n : 1) * sizeof *m);
    if (!m)
        return ns_fail(err, NS_ERR_NOMEM, "out of memory");
    for (size_t i = 0; i < src->n; i++)
        m[i] = (ns_readme_member){src->items[i].name, source_bytes(&src->items[i])};
    int rc = ns_archive_readme(info, archive_name, top, nc_member, m, src->n, 3, mf, text, err);
    free(m);
    return rc;
}

/* ", history: CKPT/history ran '...', NC '...'" when the checkpoint's history and the NetCDF's
 * differ, into buf ("" otherwise). */
static void history_note(const char *ckpt, const char *nc, const ns_nc_info *info, char *buf,
                         size_t size)
{
    char *path = ns_path_join(ckpt, "history"), *text = NULL;
    size_t len = 0;
    ns_err e;
    ns_history_line a, b;
    buf[0] = 0;
    if (path && ns_file_read_all(path, 0, &text, &len, &e) == NS_OK &&
        ns_archive_history_last(text, &a) && ns_archive_history_last(ns_nc_info_text(info, "history"), &b) &&
        strcmp(text, ns_nc_info_text(info, "history")) != 0)
        snprintf(buf, size, "; history: %s ran '%s' (%s), %s '%s' (%s)", path, a.command, a.time,
                 base_of(nc), b.command, b.time);
    free(text);
    free(path);
}

/* The checkpoint directory belongs to the NetCDF's run: journal.nsj and every part carry the
 * sweep identity the NetCDF's sweep text and input checksums give (the journal's own rule), and
 * its history is the one the NetCDF recorded. Refused before anything is written, naming both. */
static int check_ckpt(const char *ckpt, const char *nc, const ns_nc_info *info,
                      const ns_run_files *src, ns_err *err)
{
    const char *yaml = ns_nc_info_text(info, "sweep_yaml");
    const char *shas[3] = {ns_nc_info_text(info, "model_sha256"),
                           ns_nc_info_text(info, "tokenizer_sha256"),
                           ns_nc_info_text(info, "corpus_sha256")};
    char note[8400];
    history_note(ckpt, nc, info, note, sizeof note);
    const char *prefix = NS_ARCHIVE_CKPT_DIR "/" NS_JOURNAL_PART_PREFIX;
    for (size_t i = 0; i < src->n; i++) {
        const ns_archive_source *m = &src->items[i];
        int main_file = strcmp(m->name, NS_ARCHIVE_CKPT_DIR "/" NS_JOURNAL_FILE) == 0;
        if (!m->path || (!main_file && strncmp(m->name, prefix, strlen(prefix)) != 0))
            continue;
        struct stat st;
        if (!main_file && stat(m->path, &st) == 0 && st.st_size < 128)
            continue; /* a part whose writer stopped before its header: it holds nothing */
        char have[65], want[65];
        size_t plen = 0;
        NS_TRY(ns_journal_identity(m->path, have, &plen, err));
        NS_TRY(ns_journal_sweep_hash(yaml, or_unknown(shas[0]), or_unknown(shas[1]),
                                     or_unknown(shas[2]), plen / sizeof(double), want, err));
        if (strcmp(have, want) != 0)
            return ns_fail(err, NS_ERR_INVALID, "the journal%s %s belongs to another sweep than "
                           "%s: the sweep identity in its header is not the one %s's sweep text "
                           "and model, tokenizer and corpus SHA-256 give%s; nothing written",
                           main_file ? "" : " part", m->path, nc, base_of(nc), note);
    }
    if (note[0])
        return ns_fail(err, NS_ERR_INVALID, "the checkpoint directory %s has another history than "
                       "%s%s: archive the NetCDF that run wrote (the later runs' output), or name "
                       "its own checkpoint directory with --checkpoint-dir; nothing written", ckpt,
                       nc, note);
    return NS_OK;
}

/* report/report.json, when the run has one, describes the NetCDF's model (postprocess/report
 * writes the model's requested, used and SHA-256 into it): another run's report is refused. */
static int check_report(const char *run_dir, const char *nc, const ns_nc_info *info, ns_err *err)
{
    char *path = ns_path_join(run_dir, NS_ARCHIVE_REPORT_DIR "/report.json");
    if (!path)
        return ns_fail(err, NS_ERR_NOMEM, "out of memory");
    json_t *root = ns_file_is_regular(path) ? json_load_file(path, 0, NULL) : NULL;
    json_t *model = json_object_get(root, "model");
    static const char *const keys[][2] = {{"requested", "model_requested"},
                                          {"used", "model_used"},
                                          {"sha256", "model_sha256"}};
    int rc = NS_OK;
    for (size_t i = 0; model && rc == NS_OK && i < 3; i++) {
        const char *r = json_string_value(json_object_get(model, keys[i][0]));
        const char *n = or_unknown(ns_nc_info_text(info, keys[i][1]));
        if (!r || strcmp(r, n) != 0)
            rc = ns_fail(err, NS_ERR_INVALID, "%s is the report of another run than %s: its model "
                         "%s is '%s', %s's %s '%s'; make the report again (postprocess/report "
                         "%s --out %s/%s); nothing written", path, nc, keys[i][0],
                         r ? r : "(none)", base_of(nc), keys[i][1], n, nc, run_dir,
                         NS_ARCHIVE_REPORT_DIR);
    }
    json_decref(root);
    free(path);
    return rc;
}

/* The file the asset manifest member (NS_ARCHIVE_ASSETS) comes from; NULL when src has none. */
static const char *assets_source(const ns_run_files *src)
{
    const char *path = NULL;
    for (size_t i = 0; i < src->n; i++)
        if (strcmp(src->items[i].name, NS_ARCHIVE_ASSETS) == 0)
            path = src->items[i].path;
    return path;
}

/* The asset manifest archived (src's member) lists, for each input the NetCDF records by a set's
 * name, the SHA-256 the run recorded: a manifest that says otherwise (another normsweep's, whose
 * sets changed) would make the archive contradict itself, and is refused. */
static int check_assets(const ns_run_files *src, const char *nc, const ns_nc_info *info,
                        ns_err *err)
{
    const char *path = assets_source(src);
    ns_manifest m;
    ns_err e;
    if (!path || ns_manifest_load(path, &m, &e) != NS_OK)
        return NS_OK; /* none, or not one this build reads: verify says so */
    static const char *const kinds[] = {"model", "tokenizer", "corpus"};
    int rc = NS_OK;
    for (size_t k = 0; k < 3 && rc == NS_OK; k++) {
        char a[64], b[64];
        snprintf(a, sizeof a, "%s_used", kinds[k]);
        snprintf(b, sizeof b, "%s_sha256", kinds[k]);
        const char *used = ns_nc_info_text(info, a), *sha = ns_nc_info_text(info, b);
        if (k == 0 && ns_archive_model_by_path(info))
            used = NULL; /* a directory's base name, not a set */
        const ns_asset_set *set = used ? ns_manifest_find(&m, used) : NULL;
        for (size_t i = 0; set && i < set->n_files; i++)
            if (strcmp(set->files[i].name, set->main_file) == 0 && set->files[i].sha256[0] &&
                (!sha || strcmp(set->files[i].sha256, sha) != 0))
                rc = ns_fail(err, NS_ERR_INVALID, "the asset manifest %s lists %s for %s %s, but "
                             "%s records that the run used %s with %s: archive with the manifest "
                             "the run used (NORMSWEEP_MANIFEST=FILE); nothing written", path,
                             set->files[i].sha256, kinds[k], used, nc, used, or_unknown(sha));
    }
    ns_manifest_free(&m);
    return rc;
}

/* The run's NetCDF, read: a sweep output (NS_ERR_INVALID otherwise). */
static int read_nc(const ns_run_archive_options *o, char **nc, char **member, ns_nc_info *info,
                   ns_err *err)
{
    NS_TRY(ns_run_files_find_nc(o->run_dir, o->nc, nc, member, err));
    int rc = ns_nc_info_read(*nc, info, err);
    if (rc == NS_ERR_IO || rc == NS_ERR_FORMAT)
        rc = err->code = NS_ERR_INVALID;
    if (rc == NS_OK && (!ns_nc_info_text(info, "sweep_yaml") ||
                        !ns_nc_info_text(info, "model_sha256")))
        rc = ns_fail(err, NS_ERR_INVALID, "%s is not a normsweep sweep output (no sweep_yaml / "
                     "model_sha256 attribute)", *nc);
    return rc;
}

/* Every member but README.txt, provenance.json and the model: the NetCDF, the sweep text, the
 * checkpoint files (but the journal in a lean archive), the logs, the report and the asset
 * manifest. sweep.yaml has the NetCDF's permissions. */
static int add_members(const ns_run_archive_options *o, const char *nc, const char *nc_member,
                       const char *ckpt, const char *yaml, unsigned mode, ns_run_files *src,
                       ns_err *err)
{
    NS_TRY(ns_run_files_add(src, nc_member, nc, NULL, 0, 0, err));
    NS_TRY(ns_run_files_add(src, NS_ARCHIVE_SWEEP, NULL, yaml, strlen(yaml), mode, err));
    NS_TRY(ns_run_files_add_tree(src, ckpt, NS_ARCHIVE_CKPT_DIR,
                                 o->lean ? keep_ckpt_lean : keep_ckpt, 1, err));
    NS_TRY(ns_run_files_add_tree(src, o->run_dir, NS_ARCHIVE_LOG_DIR, ns_run_files_is_log, 0, err));
    NS_TRY(add_subdir(src, o->run_dir, NS_ARCHIVE_LOG_DIR, err));
    NS_TRY(add_subdir(src, o->run_dir, NS_ARCHIVE_REPORT_DIR, err));
    return add_assets_manifest(src, err);
}

/* The model's files (mf, from the NetCDF and the asset manifest packed) and, with --with-model,
 * the members that carry them. */
static int add_model(const ns_run_archive_options *o, const ns_nc_info *info, ns_run_files *src,
                     ns_model_files *mf, ns_err *err)
{
    const char *mpath = assets_source(src);
    ns_manifest m;
    ns_err e;
    int have = mpath && ns_manifest_load(mpath, &m, &e) == NS_OK;
    int rc = ns_archive_model_files(info, have ? &m : NULL, mf, err);
    if (have)
        ns_manifest_free(&m);
    if (rc != NS_OK || !o->with_model)
        return rc;
    char **from = NULL;
    rc = ns_archive_model_sources(mf, &from, err);
    for (size_t i = 0; rc == NS_OK && i < mf->n; i++)
        rc = ns_run_files_add(src, mf->items[i].member, from[i], NULL, 0, 0, err);
    for (size_t i = 0; from && i < mf->n; i++)
        free(from[i]);
    free(from);
    mf->packed = rc == NS_OK;
    return rc;
}

/* The journal of ckpt belongs to the NetCDF's run (check_ckpt), also when a lean archive leaves
 * it out. */
static int check_journal(const ns_run_archive_options *o, const char *ckpt, const char *nc,
                         const ns_nc_info *info, const ns_run_files *src, ns_err *err)
{
    if (!o->lean)
        return check_ckpt(ckpt, nc, info, src, err);
    ns_run_files all;
    memset(&all, 0, sizeof all);
    int rc = ns_run_files_add_tree(&all, ckpt, NS_ARCHIVE_CKPT_DIR, keep_ckpt, 1, err);
    if (rc == NS_OK)
        rc = check_ckpt(ckpt, nc, info, &all, err);
    ns_run_files_free(&all);
    return rc;
}

int ns_run_archive(const ns_run_archive_options *o, ns_err *err)
{
    int rc = NS_OK;
    char *nc = NULL, *nc_member = NULL, *ckpt = NULL, *prov = NULL, *top = NULL, *readme = NULL;
    ns_nc_info info;
    memset(&info, 0, sizeof info);
    ns_run_files src;
    memset(&src, 0, sizeof src);
    ns_model_files mf;
    memset(&mf, 0, sizeof mf);

    if (!ns_file_is_dir(o->run_dir))
        return ns_fail(err, NS_ERR_INVALID, "run directory %s: %s", o->run_dir,
                       ns_file_exists(o->run_dir) ? "not a directory" : "no such directory");
    if (!ns_str_ends_with(o->out, ".tar.gz") && !ns_str_ends_with(o->out, ".tgz"))
        return ns_fail(err, NS_ERR_INVALID, "--out %s: the archive name must end in .tar.gz",
                       o->out);
    if ((rc = read_nc(o, &nc, &nc_member, &info, err)) != NS_OK ||
        (rc = ns_run_files_find_ckpt(o->run_dir, o->checkpoint_dir, nc, &ckpt, err)) != NS_OK)
        goto done;
    char holder[512];
    if (ns_lock_held_elsewhere(ckpt, holder, sizeof holder)) {
        rc = ns_fail(err, NS_ERR_INVALID, "%s is in use by a running sweep (%s): archive it when "
                     "that run has ended", ckpt, holder);
        goto done;
    }
    struct stat st;
    unsigned mode = stat(nc, &st) == 0 ? (unsigned)st.st_mode & 0777 : 0644;
    const char *yaml = ns_nc_info_text(&info, "sweep_yaml");
    if ((rc = add_members(o, nc, nc_member, ckpt, yaml, mode, &src, err)) != NS_OK ||
        (rc = check_journal(o, ckpt, nc, &info, &src, err)) != NS_OK ||
        (rc = check_report(o->run_dir, nc, &info, err)) != NS_OK ||
        (rc = check_assets(&src, nc, &info, err)) != NS_OK ||
        (rc = add_model(o, &info, &src, &mf, err)) != NS_OK ||
        (rc = provenance_json(o, &info, nc_member, &src, &mf, &prov, err)) != NS_OK ||
        (rc = ns_run_files_add(&src, NS_ARCHIVE_PROVENANCE, NULL, prov, strlen(prov), mode,
                               err)) != NS_OK)
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
    if ((rc = make_readme(&src, &info, base_of(o->out), top, nc_member, &mf, &readme, err)) !=
            NS_OK ||
        (rc = ns_run_files_add(&src, NS_ARCHIVE_README, NULL, readme, strlen(readme), mode,
                               err)) != NS_OK)
        goto done;
    if (o->hooks.line) {
        for (size_t i = 0; i < src.n; i++) {
            char line[2 * NS_ASSET_LINE];
            snprintf(line, sizeof line, "adding %s/%s%s%s", top, src.items[i].name,
                     src.items[i].path ? " <- " : "", src.items[i].path ? src.items[i].path : "");
            o->hooks.line(o->hooks.user, line);
        }
        char left[NS_ASSET_LINE];
        ns_run_files_left_out(o->run_dir, nc, ckpt, left, sizeof left);
        if (left[0]) {
            char line[NS_ASSET_LINE + 128];
            snprintf(line, sizeof line, "left out of the archive (not the NetCDF, its checkpoint, "
                     "a log or the report): %s", left);
            o->hooks.line(o->hooks.user, line);
        }
    }
    rc = ns_archive_write(o->out, top, src.items, src.n, NULL, &o->hooks, err);
done:
    free(nc);
    free(nc_member);
    free(ckpt);
    free(prov);
    free(top);
    free(readme);
    ns_nc_info_free(&info);
    ns_run_files_free(&src);
    ns_archive_model_free(&mf);
    return rc;
}

/* ns_verify_members: provenance.json, README.txt, the report and the asset names against the
 * NetCDF file and the members (see ns_verify_members.h). */
#include "archive/ns_verify_members.h"

#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "archive/ns_archive_layout.h"
#include "archive/ns_archive_model.h"
#include "archive/ns_archive_provenance.h"
#include "archive/ns_archive_readme.h"
#include "common/ns_file.h"
#include "journal/ns_journal.h"

#define SHOWN 200 /* characters of a value shown */

static json_t *load_member(const char *dir, const char *name, json_error_t *je)
{
    char *p = ns_path_join(dir, name);
    /* a key given twice would let two readers see two values: refused */
    json_t *root =
        p && ns_file_is_regular(p) ? json_load_file(p, JSON_REJECT_DUPLICATES, je) : NULL;
    free(p);
    return root;
}

int ns_verify_nc_member(const char *dir, const ns_archive_list *members, char **name, ns_err *err)
{
    *name = NULL;
    size_t count = 0;
    const char *only = NULL;
    for (size_t i = 0; i < members->n; i++)
        if (ns_str_ends_with(members->items[i].name, ".nc") && !strchr(members->items[i].name, '/'))
            count++, only = members->items[i].name;
    if (count > 1) { /* several: the one provenance.json names (its check then names the rest) */
        json_t *root = load_member(dir, NS_ARCHIVE_PROVENANCE, NULL);
        const char *s = json_string_value(json_object_get(json_object_get(root, "files"), "netcdf"));
        only = s && ns_str_ends_with(s, ".nc") && !strchr(s, '/') &&
                       ns_archive_list_find(members, s) ? s : NULL;
        *name = only ? strdup(only) : NULL;
        json_decref(root);
        if (!only)
            return ns_fail(err, NS_ERR_INVALID, "the archive holds %zu NetCDF files and "
                           "provenance.json names none of them", count);
        return *name ? NS_OK : ns_fail(err, NS_ERR_NOMEM, "out of memory");
    }
    if (!count)
        return ns_fail(err, NS_ERR_INVALID, "the archive holds no NetCDF file");
    return (*name = strdup(only)) ? NS_OK : ns_fail(err, NS_ERR_NOMEM, "out of memory");
}

/* A JSON value as compact text (at most SHOWN characters) into buf. */
static void show(const json_t *x, char *buf, size_t size)
{
    char *s = x ? json_dumps(x, JSON_ENCODE_ANY | JSON_COMPACT) : NULL;
    snprintf(buf, size, "%.*s%s", SHOWN, s ? s : "(none)", s && strlen(s) > SHOWN ? "..." : "");
    free(s);
}

/* want (what the NetCDF or the archive gives, according to `who`) against have, under path:
 * objects field by field, anything else whole. One FAIL per difference; returns their number. */
static size_t compare(ns_vreport *v, const json_t *want, json_t *have, const char *path,
                      const char *who)
{
    char a[SHOWN + 8], b[SHOWN + 8], sub[512];
    if (json_is_object(want) && json_is_object(have)) {
        size_t bad = 0;
        const char *k;
        json_t *x;
        json_object_foreach((json_t *)want, k, x) {
            snprintf(sub, sizeof sub, "%s.%s", path, k);
            if (!json_object_get(have, k)) {
                show(x, b, sizeof b);
                ns_vreport_line(v, "FAIL", "%s: %s is missing; %s says %s", NS_ARCHIVE_PROVENANCE,
                                sub, who, b);
                bad++;
            } else {
                bad += compare(v, x, json_object_get(have, k), sub, who);
            }
        }
        json_object_foreach(have, k, x) {
            if (!json_object_get(want, k)) {
                ns_vreport_line(v, "FAIL", "%s: %s.%s is not a field archive writes",
                                NS_ARCHIVE_PROVENANCE, path, k);
                bad++;
            }
        }
        return bad;
    }
    if (json_equal((json_t *)want, have))
        return 0;
    show(have, a, sizeof a);
    show(want, b, sizeof b);
    ns_vreport_line(v, "FAIL", "%s: %s is %s; %s says %s", NS_ARCHIVE_PROVENANCE, path, a, who, b);
    return 1;
}

/* Fields of object o (under path) that archive does not write in `section`. */
static size_t unknown_fields(ns_vreport *v, json_t *o, const char *section, const char *path)
{
    const char *const *known = ns_archive_prov_fields(section);
    size_t bad = 0;
    const char *k;
    json_t *x;
    json_object_foreach(o, k, x) {
        size_t i = 0;
        while (known[i] && strcmp(known[i], k) != 0)
            i++;
        if (!known[i]) {
            ns_vreport_line(v, "FAIL", "%s: %s%s%s is not a field archive writes",
                            NS_ARCHIVE_PROVENANCE, path, *path ? "." : "", k);
            bad++;
        }
    }
    return bad;
}

static int is_part(const char *name)
{
    const char *prefix = NS_ARCHIVE_CKPT_DIR "/" NS_JOURNAL_PART_PREFIX;
    return strncmp(name, prefix, strlen(prefix)) == 0;
}

/* Members provenance.json describes: all but itself, README.txt and the manifest. */
static int described(const char *name)
{
    return strcmp(name, NS_ARCHIVE_PROVENANCE) != 0 && strcmp(name, NS_ARCHIVE_README) != 0 &&
           strcmp(name, NS_ARCHIVE_MANIFEST) != 0;
}

static int is_model_file(const char *name)
{
    return strncmp(name, NS_ARCHIVE_MODEL_DIR "/", strlen(NS_ARCHIVE_MODEL_DIR "/")) == 0;
}

/* files: the NetCDF, sweep and journal members, the journal's parts, the model's files (format
 * 3), and every member with its size, against the archive (sized: format 2 and later record
 * sizes; format 3 may leave the journal out: a lean archive). */
static size_t check_files(ns_vreport *v, json_t *files, const ns_archive_list *members,
                          const char *ncname, int format)
{
    int sized = format >= 2;
    json_t *want = json_object(), *parts = json_array(), *model = json_array();
    for (size_t i = 0; i < members->n; i++) {
        if (is_part(members->items[i].name))
            json_array_append_new(parts, json_string(members->items[i].name));
        if (is_model_file(members->items[i].name))
            json_array_append_new(model, json_string(members->items[i].name));
    }
    int lean = format >= 3 && !ns_archive_list_find(members, NS_ARCHIVE_CKPT_DIR "/"
                                                             NS_JOURNAL_FILE);
    json_object_set_new(want, "netcdf", json_string(ncname));
    json_object_set_new(want, "sweep", json_string(NS_ARCHIVE_SWEEP));
    json_object_set_new(want, "journal", lean ? json_null()
                                              : json_string(NS_ARCHIVE_CKPT_DIR "/"
                                                            NS_JOURNAL_FILE));
    json_object_set_new(want, "journal_parts", parts);
    if (format >= 3)
        json_object_set_new(want, "model_files", model);
    else
        json_decref(model);
    size_t bad = unknown_fields(v, files, "files", "files");
    const char *k;
    json_t *x;
    json_object_foreach(want, k, x) {
        char path[64];
        snprintf(path, sizeof path, "files.%s", k);
        bad += compare(v, x, json_object_get(files, k), path, "the archive");
    }
    json_decref(want);
    json_t *list = json_object_get(files, "members");
    size_t i, seen = 0;
    json_array_foreach(list, i, x) {
        const char *m = json_string_value(json_object_get(x, "member"));
        const ns_archive_member *am = m ? ns_archive_list_find(members, m) : NULL;
        json_t *b = json_object_get(x, "bytes");
        bad += unknown_fields(v, x, "member", "files.members[]");
        if (!am || !described(m)) {
            ns_vreport_line(v, "FAIL", "%s: files.members lists %s, which the archive does not "
                            "hold", NS_ARCHIVE_PROVENANCE, m ? m : "(no name)");
            bad++;
        } else if ((sized || b) && (!json_is_integer(b) ||
                                    (unsigned long long)json_integer_value(b) != am->size)) {
            ns_vreport_line(v, "FAIL", "%s: files.members says %s holds %lld bytes; the archive's "
                            "holds %llu", NS_ARCHIVE_PROVENANCE, m,
                            json_is_integer(b) ? (long long)json_integer_value(b) : -1LL,
                            (unsigned long long)am->size);
            bad++;
        } else {
            seen++;
        }
    }
    for (size_t j = 0; j < members->n; j++) {
        const char *m = members->items[j].name;
        int listed = 0;
        json_array_foreach(list, i, x) {
            const char *s = json_string_value(json_object_get(x, "member"));
            listed += s && strcmp(s, m) == 0;
        }
        if (described(m) && listed != 1) {
            ns_vreport_line(v, "FAIL", "%s: files.members lists %s %d times", NS_ARCHIVE_PROVENANCE,
                            m, listed);
            bad++;
        }
    }
    return bad;
}

int ns_verify_archive_format(const char *dir, const ns_archive_list *members)
{
    if (!ns_archive_list_find(members, NS_ARCHIVE_README))
        return 1;
    json_t *root = load_member(dir, NS_ARCHIVE_PROVENANCE, NULL);
    const char *f = json_string_value(json_object_get(root, "format"));
    int format = f && strcmp(f, NS_ARCHIVE_FORMAT_2) == 0 ? 2 : 3;
    json_decref(root);
    return format;
}

/* provenance.json: every field archive takes from the NetCDF, the archive's files, and no other
 * field (format: the archive's). */
static void check_provenance(ns_vreport *v, const char *dir, const ns_archive_list *members,
                             const ns_nc_info *info, const char *ncname, int format)
{
    json_error_t je;
    json_t *root = load_member(dir, NS_ARCHIVE_PROVENANCE, &je);
    if (!json_is_object(root)) {
        int there = ns_archive_list_find(members, NS_ARCHIVE_PROVENANCE) != NULL;
        ns_vreport_line(v, "FAIL", "%s: %s%s%s", NS_ARCHIVE_PROVENANCE,
                        there ? "not a JSON object: " : "missing from the archive",
                        there && !root ? je.text : "", there && root ? "another value" : "");
        json_decref(root);
        return;
    }
    const char *fmt = json_string_value(json_object_get(root, "format"));
    size_t bad = unknown_fields(v, root, "", "");
    const char *want_format = format == 1 ? NS_ARCHIVE_FORMAT_1
                              : format == 2 ? NS_ARCHIVE_FORMAT_2 : NS_ARCHIVE_FORMAT;
    if (!fmt || strcmp(fmt, want_format) != 0) {
        char have[SHOWN + 8];
        show(json_object_get(root, "format"), have, sizeof have);
        ns_vreport_line(v, "FAIL", "%s: format is %s; the archive gives \"%s\"%s",
                        NS_ARCHIVE_PROVENANCE, have, want_format,
                        format > 1 ? " (it holds README.txt)" : "");
        bad++;
    }
    char who[600];
    snprintf(who, sizeof who, "%s", ncname);
    json_t *run = ns_archive_prov_run(info), *inputs = ns_archive_prov_inputs(info);
    bad += compare(v, run, json_object_get(root, "run") ? json_object_get(root, "run") : json_null(),
                   "run", who);
    bad += compare(v, inputs, json_object_get(root, "inputs") ? json_object_get(root, "inputs")
                                                             : json_null(), "inputs", who);
    json_decref(run);
    json_decref(inputs);
    bad += unknown_fields(v, json_object_get(root, "archiver"), "archiver", "archiver");
    bad += unknown_fields(v, json_object_get(root, "machine"), "machine", "machine");
    bad += check_files(v, json_object_get(root, "files"), members, ncname, format);
    if (!bad)
        ns_vreport_line(v, "PASS", "%s: its run and inputs are those %s records, its files and "
                        "their sizes the archive's", NS_ARCHIVE_PROVENANCE, ncname);
    json_decref(root);
}

/* The member list README.txt describes: files.members' order, the others, then provenance.json. */
static size_t readme_members(const char *dir, const ns_archive_list *members,
                             ns_readme_member *out)
{
    json_t *root = load_member(dir, NS_ARCHIVE_PROVENANCE, NULL);
    json_t *list = json_object_get(json_object_get(root, "files"), "members"), *x;
    size_t n = 0, i;
    json_array_foreach(list, i, x) {
        const ns_archive_member *m =
            ns_archive_list_find(members, json_string_value(json_object_get(x, "member")));
        int dup = 0;
        for (size_t k = 0; m && k < n; k++)
            dup |= strcmp(out[k].name, m->name) == 0;
        if (m && described(m->name) && !dup)
            out[n++] = (ns_readme_member){m->name, m->size};
    }
    for (size_t j = 0; j < members->n; j++) {
        int have = !described(members->items[j].name);
        for (size_t k = 0; k < n && !have; k++)
            have = strcmp(out[k].name, members->items[j].name) == 0;
        if (!have)
            out[n++] = (ns_readme_member){members->items[j].name, members->items[j].size};
    }
    const ns_archive_member *p = ns_archive_list_find(members, NS_ARCHIVE_PROVENANCE);
    if (p)
        out[n++] = (ns_readme_member){p->name, p->size};
    json_decref(root);
    return n;
}

/* Line k (0-based) of text into buf; 0 when text has fewer lines. */
static int line_of(const char *text, size_t k, char *buf, size_t size)
{
    for (; k && text; k--) {
        text = strchr(text, '\n');
        text = text ? text + 1 : NULL;
    }
    if (!text || !*text)
        return 0;
    size_t len = strcspn(text, "\n");
    snprintf(buf, size, "%.*s", (int)(len < SHOWN ? len : SHOWN), text);
    return 1;
}

/* The model's files as README.txt states them: from the NetCDF and the archived asset manifest,
 * packed when the archive holds them. */
static int readme_model(const char *dir, const ns_archive_list *members, const ns_nc_info *info,
                        ns_model_files *mf, ns_err *err)
{
    char *p = ns_path_join(dir, NS_ARCHIVE_ASSETS);
    ns_manifest m;
    ns_err e;
    int have = p && ns_file_is_regular(p) && ns_manifest_load(p, &m, &e) == NS_OK;
    free(p);
    int rc = ns_archive_model_files(info, have ? &m : NULL, mf, err);
    if (have)
        ns_manifest_free(&m);
    for (size_t i = 0; i < members->n; i++)
        mf->packed |= is_model_file(members->items[i].name);
    return rc;
}

/* README.txt against the one archive writes (in the archive's format) for this NetCDF and these
 * members. */
static void check_readme(ns_vreport *v, const char *dir, const ns_archive_list *members,
                         const ns_nc_info *info, const char *ncname, int format)
{
    char *path = ns_path_join(dir, NS_ARCHIVE_README), *have = NULL, *want = NULL;
    ns_readme_member *list = malloc((members->n + 1) * sizeof *list);
    size_t len = 0, n = list ? readme_members(dir, members, list) : 0;
    ns_err e;
    ns_model_files mf;
    memset(&mf, 0, sizeof mf);
    if (!path || !list || ns_file_read_all(path, 0, &have, &len, &e) != NS_OK) {
        ns_vreport_line(v, "FAIL", "%s: cannot be read", NS_ARCHIVE_README);
        goto done;
    }
    if (format >= 3 && readme_model(dir, members, info, &mf, &e) != NS_OK) {
        ns_vreport_line(v, "FAIL", "%s: %s", NS_ARCHIVE_README, e.msg);
        goto done;
    }
    /* archive wrote it for TOP.tar.gz or TOP.tgz: the one its first line names */
    char name[1024];
    snprintf(name, sizeof name, "%s.tgz", members->top);
    int tgz = strncmp(have, "normsweep reproducibility archive ", 34) == 0 &&
              strncmp(have + 34, name, strlen(name)) == 0 && have[34 + strlen(name)] == '\n';
    snprintf(name, sizeof name, "%s%s", members->top, tgz ? ".tgz" : ".tar.gz");
    if (ns_archive_readme(info, name, members->top, ncname, list, n, format,
                          format >= 3 ? &mf : NULL, &want, &e) == NS_OK &&
        strlen(want) == len && memcmp(want, have, len) == 0) {
        ns_vreport_line(v, "PASS", "%s: states what %s records and the members are",
                        NS_ARCHIVE_README, ncname);
        goto done;
    }
    if (!want) {
        ns_vreport_line(v, "FAIL", "%s: %s", NS_ARCHIVE_README, e.msg);
        goto done;
    }
    char a[SHOWN + 8], b[SHOWN + 8];
    size_t shown = 0;
    for (size_t k = 0; shown < 5; k++) {
        int ha = line_of(have, k, a, sizeof a), hb = line_of(want, k, b, sizeof b);
        if (!ha && !hb)
            break;
        if (ha && hb && strcmp(a, b) == 0)
            continue;
        ns_vreport_line(v, "FAIL", "%s: line %zu is %s%s%s; %s and the members give %s%s%s",
                        NS_ARCHIVE_README, k + 1, ha ? "\"" : "", ha ? a : "missing",
                        ha ? "\"" : "", ncname, hb ? "\"" : "", hb ? b : "no such line",
                        hb ? "\"" : "");
        shown++;
    }
done:
    free(path);
    free(have);
    free(want);
    free(list);
    ns_archive_model_free(&mf);
}

/* report/report.json's model (what postprocess/report read from the NetCDF). */
static void check_report(ns_vreport *v, const char *dir, const ns_nc_info *info,
                         const char *ncname)
{
    static const char *const name = NS_ARCHIVE_REPORT_DIR "/report.json";
    static const char *const keys[][2] = {{"requested", "model_requested"},
                                          {"used", "model_used"},
                                          {"sha256", "model_sha256"}};
    char *path = ns_path_join(dir, name);
    if (!path || !ns_file_is_regular(path)) {
        free(path);
        return;
    }
    json_error_t je;
    json_t *root = json_load_file(path, JSON_REJECT_DUPLICATES, &je);
    json_t *model = json_object_get(root, "model");
    if (!root)
        ns_vreport_line(v, "FAIL", "%s: not JSON: %s", name, je.text);
    size_t bad = 0;
    for (size_t i = 0; root && i < 3; i++) {
        const char *r = json_string_value(json_object_get(model, keys[i][0]));
        const char *n = ns_nc_info_text(info, keys[i][1]);
        if (!r || !n || strcmp(r, n) != 0) {
            ns_vreport_line(v, "FAIL", "%s: model.%s is \"%s\"; %s says \"%s\"", name, keys[i][0],
                            r ? r : "(none)", ncname, n ? n : "(none)");
            bad++;
        }
    }
    if (!bad && root)
        ns_vreport_line(v, "PASS", "%s: its model is the one %s records", name, ncname);
    json_decref(root);
    free(path);
}

void ns_verify_members_check(ns_vreport *v, const char *dir, const ns_archive_list *members,
                             const ns_nc_info *info, const char *ncname)
{
    int format = ns_verify_archive_format(dir, members);
    check_provenance(v, dir, members, info, ncname, format);
    if (format > 1)
        check_readme(v, dir, members, info, ncname, format);
    else
        ns_vreport_line(v, "INFO", "%s: none (archive format 1)", NS_ARCHIVE_README);
    check_report(v, dir, info, ncname);
}

void ns_verify_members_unchecked(ns_vreport *v, const ns_archive_list *members,
                                 const char *ncname)
{
    char list[1024];
    size_t at = 0, shown = 0, more = 0;
    list[0] = 0;
    for (size_t i = 0; i < members->n; i++) {
        const char *m = members->items[i].name;
        int checked = strcmp(m, ncname) == 0 || strcmp(m, NS_ARCHIVE_SWEEP) == 0 ||
                      !described(m) ||
                      strcmp(m, NS_ARCHIVE_CKPT_DIR "/" NS_JOURNAL_FILE) == 0 || is_part(m) ||
                      strcmp(m, NS_ARCHIVE_CKPT_DIR "/history") == 0 || is_model_file(m);
        if (checked)
            continue;
        if (shown < 12 && at < sizeof list) {
            at += (size_t)snprintf(list + at, sizeof list - at, "%s%s", shown ? ", " : "", m);
            shown++;
        } else {
            more++;
        }
    }
    char tail[64] = "";
    if (more)
        snprintf(tail, sizeof tail, " and %zu more", more);
    if (shown)
        ns_vreport_line(v, "INFO", "not checked beyond their SHA-256: %s%s (logs; the report, "
                        "but for report.json's model; the asset manifest, but for the SHA-256 of "
                        "the inputs named; other checkpoint files)", list, tail);
    ns_vreport_line(v, "INFO", "not checked: %s: created, archiver, machine, files.run_dir, "
                    "files.members[].source (the making of the archive: when, by which build, on "
                    "which machine, from where)", NS_ARCHIVE_PROVENANCE);
}

void ns_verify_manifests_load(ns_vreport *v, const char *dir, ns_verify_manifests *m)
{
    memset(m, 0, sizeof *m);
    char *p = ns_path_join(dir, NS_ARCHIVE_ASSETS), here[4096];
    ns_err e;
    if (p && ns_file_is_regular(p)) {
        m->have_archived = ns_manifest_load(p, &m->archived, &e) == NS_OK;
        if (!m->have_archived) {
            char clean[1024];
            ns_vreport_members(v, e.msg, clean, sizeof clean);
            ns_vreport_line(v, "FAIL", "%s: %s", NS_ARCHIVE_ASSETS, clean);
        }
    }
    free(p);
    m->have_here = ns_manifest_locate(here, sizeof here, &e) == NS_OK &&
                   ns_manifest_load(here, &m->here, &e) == NS_OK;
}

void ns_verify_manifests_free(ns_verify_manifests *m)
{
    ns_manifest_free(&m->archived);
    ns_manifest_free(&m->here);
}

const char *ns_verify_fallback_of(const ns_verify_manifests *m, const char *name)
{
    const ns_asset_set *s = m->have_archived ? ns_manifest_find(&m->archived, name) : NULL;
    if (!s && m->have_here)
        s = ns_manifest_find(&m->here, name);
    return s ? s->fallback : NULL;
}

/* The SHA-256 manifest m lists for set name's main file ("" when unknown, NULL without the set). */
static const char *listed_sha(const ns_manifest *m, const char *name)
{
    const ns_asset_set *s = ns_manifest_find(m, name);
    for (size_t i = 0; s && i < s->n_files; i++)
        if (strcmp(s->files[i].name, s->main_file) == 0)
            return s->files[i].sha256;
    return s ? "" : NULL;
}

int ns_verify_asset_claim(ns_vreport *v, const ns_verify_manifests *m, const char *kind,
                          const char *name, const char *sha)
{
    if (!name || strcmp(name, "path") == 0 || strcmp(name, "unknown") == 0)
        return 1;
    const char *which[2] = {NS_ARCHIVE_ASSETS, "this build's asset manifest"};
    const ns_manifest *ms[2] = {m->have_archived ? &m->archived : NULL,
                                m->have_here ? &m->here : NULL};
    for (size_t i = 0; i < 2; i++) {
        const char *want = ms[i] ? listed_sha(ms[i], name) : NULL;
        if (!want || !*want || (sha && strcmp(want, sha) == 0))
            continue;
        ns_vreport_line(v, "FAIL", "%s %s: the recorded SHA-256 %s is not %s's: %s lists %s for "
                        "it", kind, name, sha ? sha : "(none)", name, which[i], want);
        return 0;
    }
    return 1;
}

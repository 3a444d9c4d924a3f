/* ns_verify: verify a reproducibility archive: manifest, recorded inputs, recomputation of
 * sampled tasks (see ns_verify.h). */
#include "config.h"

#include "archive/ns_verify.h"

#include <dirent.h>
#include <errno.h>
#include <jansson.h>
#include <libgen.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <time.h>
#include <unistd.h>

#include "analysis/ns_boot.h"
#include "analysis/ns_rng.h"
#include "common/ns_blas.h"
#include "common/ns_build.h"
#include "archive/ns_archive.h"
#include "archive/ns_archive_check.h"
#include "archive/ns_archive_layout.h"
#include "archive/ns_verify_attrs.h"
#include "archive/ns_verify_inputs.h"
#include "archive/ns_verify_lean.h"
#include "archive/ns_verify_members.h"
#include "archive/ns_verify_report.h"
#include "common/ns_file.h"
#include "common/ns_sha256.h"
#include "common/ns_tmp.h"
#include "corpus/ns_corpus.h"
#include "io/ns_nc_read.h"
#include "io/ns_nc_results.h"
#include "io/ns_nc_results_compare.h"
#include "model/ns_model.h"
#include "rows/ns_plan.h"
#include "rows/ns_rows.h"
#include "journal/ns_journal.h"
#include "reduce/ns_results.h"
#include "spec/ns_sweep_inputs.h"
#include "spec/ns_sweep_yaml.h"

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

/* A stop request (o->hooks.stop) as the error that ends the verification; its extraction directory is
 * removed on the way out (vstate_free). */
static int stopped(const ns_verify_options *o, ns_err *err)
{
    if (!o->hooks.stop || !*o->hooks.stop)
        return NS_OK;
    return ns_fail(err, NS_ERR_INTERRUPTED, "interrupted; the verification did not finish (its "
                   "extraction directory is removed)");
}

/* The manifest check: 1 when the archive is intact. */
static int check_manifest(ns_vreport *v, const char *dir, const ns_archive_list *members, ns_err *err,
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
        ns_vreport_line(v, "FAIL", "manifest: %s", buf);
    }
    int ok = chk.n == 0;
    if (ok)
        ns_vreport_line(v, "PASS", "manifest: %zu members listed, all present with matching SHA-256, none "
             "unlisted", chk.n_listed);
    ns_archive_check_free(&chk);
    return ok;
}

/* Largest provenance.json read before extraction, and largest member a format-2 archive may hold
 * that its provenance does not record (README.txt, MANIFEST.sha256, provenance.json itself). */
#define PROVENANCE_MAX (4u << 20)
#define UNRECORDED_MAX (1u << 20)
/* Free space left on the extraction file system after extracting (slack for metadata). */
#define FREE_SLACK (16u << 20)

/* The bytes provenance.json records for member name (files.members[].bytes); -1 when unrecorded. */
static long long recorded_bytes(json_t *root, const char *name)
{
    json_t *mem = json_object_get(json_object_get(root, "files"), "members");
    size_t i;
    json_t *e;
    json_array_foreach(mem, i, e) {
        const char *m = json_string_value(json_object_get(e, "member"));
        json_t *b = json_object_get(e, "bytes");
        if (m && strcmp(m, name) == 0 && json_is_integer(b) && json_integer_value(b) >= 0)
            return (long long)json_integer_value(b);
    }
    return -1;
}

/* Phase 0, before a byte is written: the archive's members are capped by the sizes its
 * provenance records (format 2: no member may hold more than its recorded bytes; an
 * unrecorded member holds at most UNRECORDED_MAX), and their total must fit the free space of
 * dir. A format-1 archive (no sizes recorded) gets the free-space check only. 1 when it may be
 * extracted; FAIL lines name each refused member. */
static int check_sizes(ns_vreport *v, const char *dir, ns_err *err, int *rc)
{
    ns_archive_list hdr;
    char *prov = NULL;
    size_t plen = 0;
    *rc = ns_archive_scan(v->o->archive, NS_ARCHIVE_PROVENANCE, PROVENANCE_MAX, &hdr, &prov,
                          &plen, err);
    if (*rc != NS_OK)
        return 0;
    json_t *root = prov ? json_loadb(prov, plen, 0, NULL) : NULL;
    const char *format = json_string_value(json_object_get(root, "format"));
    int sized = format && strcmp(format, NS_ARCHIVE_FORMAT_1) != 0 &&
                json_is_array(json_object_get(json_object_get(root, "files"), "members"));
    uint64_t total = 0;
    int ok = 1;
    for (size_t i = 0; i < hdr.n; i++) {
        const ns_archive_member *m = &hdr.items[i];
        total += m->size;
        if (!sized)
            continue;
        long long want = recorded_bytes(root, m->name);
        if (want >= 0 && m->size > (uint64_t)want) {
            ns_vreport_line(v, "FAIL", "sizes: member %s holds %llu bytes, more than the %lld that "
                 "provenance.json records; not extracted", m->name, (unsigned long long)m->size, want);
            ok = 0;
        } else if (want < 0 && m->size > UNRECORDED_MAX) {
            ns_vreport_line(v, "FAIL", "sizes: member %s holds %llu bytes and is not recorded in "
                 "provenance.json (at most %u allowed); not extracted", m->name,
                 (unsigned long long)m->size, UNRECORDED_MAX);
            ok = 0;
        }
    }
    struct statvfs fs;
    if (ok && statvfs(dir, &fs) == 0) {
        uint64_t avail = (uint64_t)fs.f_bavail * (uint64_t)fs.f_frsize;
        if (total + FREE_SLACK > avail) {
            ns_vreport_line(v, "FAIL", "sizes: the archive's members need %llu bytes, %s has %llu free; "
                 "not extracted (TMPDIR chooses another place)", (unsigned long long)total,
                 dir, (unsigned long long)avail);
            ok = 0;
        }
    }
    if (ok)
        ns_vreport_line(v, "PASS", "sizes: %zu members, %llu bytes%s", hdr.n, (unsigned long long)total,
             sized ? ", none above what provenance.json records" : " (no sizes recorded: format 1)");
    json_decref(root);
    free(prov);
    ns_archive_list_free(&hdr);
    return ok;
}

/* Compare this build with the one recorded; fills why with the differences. 1 = same: the
 * executable itself is the recorded one (its SHA-256) with the same BLAS kernels, or git commit,
 * compiler, flags and BLAS all match, the commit naming the source exactly (a build from an
 * unknown or "-dirty" tree is identified by its executable only). */
static int same_build(const ns_nc_info *info, const char *self_sha, char *why, size_t size)
{
    const char *exe = ns_nc_info_text(info, "executable_sha256"),
               *blas = ns_nc_info_text(info, "blas");
    char my_blas[NS_BLAS_ID_MAX];
    ns_blas_identity(my_blas, sizeof my_blas);
    if (exe && self_sha && strcmp(exe, self_sha) == 0 && strcmp(exe, "unknown") != 0 && blas &&
        strcmp(blas, my_blas) == 0) {
        why[0] = 0;
        return 1;
    }
    const char *keys[4] = {"git_commit", "compiler", "cflags", "blas"};
    const char *mine[4] = {ns_build_git_commit(), NS_BUILD_CC, NS_BUILD_CFLAGS, my_blas};
    size_t at = 0;
    why[0] = 0;
    for (size_t i = 0; i < 4; i++) {
        const char *rec = ns_nc_info_text(info, keys[i]);
        int same = rec && strcmp(rec, mine[i]) == 0 && (i != 0 || ns_build_git_exact());
        if (!same && at < size)
            at += (size_t)snprintf(why + at, size - at, "%s%s recorded '%s', this build '%s'",
                                   at ? "; " : "", keys[i], or_unknown(rec), mine[i]);
    }
    return why[0] == 0;
}

/* Describe payload index i: (layer, head, normalizer, L, row, metric at (T, N, eps)). */
static void describe_index(const ns_plan *p, size_t i, char *buf, size_t size)
{
    const ns_grid *g = &p->g;
    size_t nsl = p->derived.nslices;
    snprintf(buf, size, "value %zu", i);
    for (size_t k = 0; k < nsl; k++) {
        size_t li, hi, ni, Li;
        ns_slice_shape sh;
        ns_plan_slice(p, k, 0.0, &li, &hi, &ni, &Li, &sh);
        size_t off = ns_plan_offset(p, li, hi, ni, Li, 0), rec = sh.lay->total;
        if (i < off || i >= off + g->rows * rec)
            continue;
        size_t r = (i - off) / rec, j = (i - off) % rec;
        const char *metric = "?";
        char at[96] = "";
        for (int id = NS_M_COUNT - 1; id >= 0; id--) {
            size_t o = sh.lay->offset[id];
            if (o == SIZE_MAX || j < o)
                continue;
            const ns_metric_info *mi = ns_metric_info_of((ns_metric_id)id);
            size_t q = j - o, nN = sh.lay->nN;
            metric = mi->name;
            if (mi->dims == NS_DIMS_TN && id == NS_M_DISTANCE_D1 && sh.lay->t_free_rank)
                snprintf(at, sizeof at, " N=%zu", g->N[q]);
            else if (mi->dims == NS_DIMS_TN)
                snprintf(at, sizeof at, " T=%g N=%zu", g->T[q / nN], g->N[q % nN]);
            else if (mi->dims == NS_DIMS_T)
                snprintf(at, sizeof at, " T=%g", g->T[q]);
            else if (mi->dims == NS_DIMS_TE)
                snprintf(at, sizeof at, " T=%g eps=%g", g->T[q / g->neps], g->eps[q % g->neps]);
            break;
        }
        snprintf(buf, size, "layer %zu head %zu %s L=%zu row %zu (m=%zu): %s%s", g->layers[li],
                 g->heads[hi], ns_normalizer_name(g->normalizers[ni].kind), g->L[Li], r,
                 g->L[Li] - 1 - r, metric, at);
        return;
    }
}

typedef struct jrec {
    ns_results res;    /* where each shard's payload lies */
    size_t n_foreign;  /* records of tasks the sweep does not have */
} jrec;

static int on_record(void *user, uint64_t task, const void *payload, size_t len,
                     uint64_t payload_offset, ns_err *err)
{
    (void)payload, (void)len;
    jrec *j = user;
    if (task >= j->res.n_shards) {
        j->n_foreign++;
        return NS_OK;
    }
    if (!ns_results_has(&j->res, task))
        NS_TRY(ns_results_set(&j->res, task, payload_offset, err));
    return NS_OK;
}

typedef struct vstate {
    char *dir;
    char *ncname;      /* the NetCDF member */
    int exact;         /* compare byte for byte (the recorded build) */
    ns_archive_list members;
    ns_nc_info info;
    ns_sweep_config cfg;
    int have_cfg;
    ns_sweep_inputs in;
    ns_sweep_diags diags;
    ns_verify_model claim; /* the model the run asked for, and whether it fell back */
    ns_plan plan;
    int have_plan;
    int lean;          /* the archive holds no journal: every task was recomputed */
    ns_journal *journal;
    jrec jr;
    ns_model *model;
    ns_rows *rows;
    double *mine, *theirs;
    size_t *chosen;
} vstate;

static void vstate_free(vstate *st)
{
    ns_rows_free(st->rows);
    ns_model_free(st->model);
    ns_journal_close(st->journal);
    if (st->have_plan)
        ns_plan_free(&st->plan);
    ns_sweep_inputs_free(&st->in);
    ns_sweep_diags_free(&st->diags);
    if (st->have_cfg)
        ns_sweep_config_free(&st->cfg);
    ns_nc_info_free(&st->info);
    ns_archive_list_free(&st->members);
    ns_results_free(&st->jr.res);
    free(st->ncname);
    free(st->claim.requested);
    free(st->mine);
    free(st->theirs);
    free(st->chosen);
    if (st->dir) {
        ns_tmp_remove_tree(st->dir);
        free(st->dir);
    }
}

/* Recompute the sampled tasks and compare them with the journal. */
static int recompute(ns_vreport *v, vstate *st, int exact, ns_err *err)
{
    const ns_verify_options *o = v->o;
    const ns_sweep_config *cfg = &st->cfg;
    size_t M = cfg->shard_count, K = o->sample < M ? o->sample : M;
    if (st->lean) {
        ns_vreport_line(v, "INFO", "recompute: every task was (the archive is lean)");
        return NS_OK;
    }
    if (K == 0) {
        ns_vreport_line(v, "SKIP", "recompute: --sample 0");
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
    ns_vreport_line(v, "INFO", "sample: %zu of %zu tasks, seed %llu: shards %s", K, M,
         (unsigned long long)o->seed, list);

    ns_blas_single_thread(); /* as the sweep runs it */
    NS_TRY(ns_sweep_inputs_take_model(&st->in, &st->model, err)); /* validation's checked map */
    NS_TRY(ns_rows_new(&st->plan, st->model, NS_KERNEL_FAST, 0, &st->rows, err));
    size_t P = st->plan.payload;
    st->mine = malloc(P * sizeof *st->mine);
    st->theirs = malloc(P * sizeof *st->theirs);
    if (!st->mine || !st->theirs)
        return ns_fail(err, NS_ERR_NOMEM, "out of memory (%zu values per task)", P);
    for (size_t i = 0; i < K; i++) {
        size_t k = st->chosen[i];
        const int32_t *ids;
        NS_TRY(stopped(o, err));
        NS_TRY(ns_corpus_shard(&st->in.corpus, cfg->L_max, cfg->shard_first, cfg->shard_stride,
                               k, &ids, err));
        NS_TRY(ns_rows_run(st->rows, k, ids, NULL, st->mine, err));
        NS_TRY(ns_journal_read(st->journal, st->jr.res.offset[k], 0, P * sizeof(double),
                               st->theirs, err));
        size_t first;
        size_t bad = ns_verify_compare(st->theirs, st->mine, P, exact, o->tolerance, &first);
        if (bad == 0) {
            ns_vreport_line(v, "PASS", "task %zu (shard %zu): %zu values %s", k, k, P,
                 exact ? "byte-identical" : "within the tolerance");
        } else {
            char where[256];
            describe_index(&st->plan, first, where, sizeof where);
            ns_vreport_line(v, "FAIL", "task %zu (shard %zu): %zu of %zu values differ; first at %s: "
                 "archived %.17g, recomputed %.17g", k, k, bad, P, where, st->theirs[first],
                 st->mine[first]);
        }
    }
    return NS_OK;
}

/* A variable of the file that differs from the reduction of the journal. */
typedef struct diff_ctx {
    ns_vreport *v;
    int exact;
    int lean; /* the journal was recomputed from the model (a lean archive) */
} diff_ctx;

static void on_diff(void *user, const char *var, size_t n_diff, const char *where,
                    double file_value, double expected)
{
    diff_ctx *d = user;
    if (isnan(file_value) && isnan(expected) && !strchr(where, '='))
        ns_vreport_line(d->v, "FAIL", "numbers: %s: %s", var, where); /* missing, unreadable, text */
    else
        ns_vreport_line(d->v, "FAIL", "numbers: %s: %zu value%s differ%s from the reduction of "
                        "the %s; first at %s: file %.17g, %s %.17g", var, n_diff,
                        n_diff == 1 ? "" : "s", n_diff == 1 ? "s" : "",
                        d->lean ? "tasks recomputed from the model" : "journal", where, file_value,
                        d->lean ? "recomputed" : "journal", expected);
}

static void on_layout(void *user, const ns_nc_check_item *item)
{
    diff_ctx *d = user;
    ns_verify_attrs_diff(d->v, item);
}

/* checkpoint/history's text (NULL when the archive has none; caller frees). */
static char *history_member(const vstate *st)
{
    char *p = ns_path_join(st->dir, NS_ARCHIVE_CKPT_DIR "/history"), *text = NULL;
    size_t len = 0;
    ns_err e;
    if (p && ns_file_is_regular(p) && ns_file_read_all(p, 0, &text, &len, &e) != NS_OK)
        text = NULL;
    free(p);
    return text;
}

/* The file's layout and every attribute against what the run writes for this sweep, its inputs
 * and journal (d), and, when with_data, every data variable against the reduction of the journal
 * in d. */
static int compare_file(ns_vreport *v, vstate *st, const char *path, ns_results_data *d,
                        int with_data, ns_err *err)
{
    int32_t *fc = NULL;
    ns_err ce;
    ns_err_clear(&ce);
    if (!ns_verify_attrs_layout(v, &st->info, st->ncname))
        return NS_OK;
    int rc = ns_nc_results_recorded(path, d->n_shards, &fc, &d->uncompressed, &ce);
    d->forward_count = fc;
    ns_verify_expect e;
    ns_verify_expect_init(&e, &st->info, &st->cfg, st->claim.requested, &st->in,
                          st->claim.fallback, &st->plan);
    diff_ctx dc = {v, st->exact, st->lean};
    ns_nc_compare c = {.exact = st->exact, .tol = v->o->tolerance,
                       .diff = with_data ? on_diff : NULL, .prov = &e.prov, .layout = on_layout,
                       .user = &dc};
    if (rc == NS_OK)
        rc = ns_nc_results_compare(path, d, &c, &ce);
    free(fc);
    if (rc == NS_ERR_NOMEM)
        return ns_fail(err, rc, "%s", ce.msg);
    if (rc != NS_OK) {
        ns_vreport_line(v, "FAIL", "numbers and attributes: %s cannot be compared: %s",
                        st->ncname, ce.msg);
        return NS_OK;
    }
    char *hist = history_member(st);
    size_t bad = ns_verify_attrs_history(v, &st->info, hist);
    free(hist);
    if (!bad && !c.checked.n_diff)
        ns_vreport_line(v, "PASS", "attributes: %s holds exactly the %zu global attributes, %zu "
                        "variables and %zu variable attributes normsweep writes for this sweep, "
                        "its inputs and journal", st->ncname, c.checked.global_attrs,
                        c.checked.vars, c.checked.var_attrs);
    ns_verify_attrs_unchecked(v, fc != NULL);
    if (with_data && c.n_bad == 0)
        ns_vreport_line(v, "PASS", "numbers: every variable of %s %s the reduction of the "
                        "%s (%zu slices recomputed)", st->ncname,
                        st->exact ? "is byte-identical to" : "agrees with",
                        st->lean ? "tasks recomputed from the model" : "journal",
                        st->plan.derived.nslices);
    return NS_OK;
}

/* Recompute the whole reduction from the archived journal (with_data; else zeros, for the
 * attributes alone) and compare the archived NetCDF file with what the run writes from it. */
static int check_reduction(ns_vreport *v, vstate *st, int with_data, ns_err *err)
{
    const ns_plan *p = &st->plan;
    const ns_sweep_config *cfg = &st->cfg;
    size_t S = cfg->shard_count * p->g.rows, nsl = p->derived.nslices;
    size_t total = p->derived.slice.total, stotal = ns_grid_slice_samples(&p->derived, S);
    double *all = calloc(nsl * total > 0 ? nsl * total : 1, sizeof *all);
    double *smp = cfg->keep_samples ? calloc(nsl * stotal > 0 ? nsl * stotal : 1, sizeof *smp)
                                    : NULL;
    /* the bootstrap intervals, recomputed from the journal like every other statistic */
    /* as the run decided on its recorded number of ranks with the default limit, or as the file
     * says when it has them (a run under a higher NORMSWEEP_BOOTSTRAP_MAX_BYTES); this single
     * process holds every slice's values */
    size_t btotal = ns_results_boot_size(p, cfg->shard_count);
    long long ranks = 1, file_b = 0;
    ns_nc_info_int(&st->info, "mpi_size", &ranks);
    size_t np = ranks > 0 ? (size_t)ranks : 1;
    int want_boot = ns_results_boot_wanted(p, cfg->shard_count, np, np, 0) ||
                    ns_nc_info_int(&st->info, "bootstrap_resamples", &file_b);
    double *boot = want_boot ? calloc(nsl * btotal > 0 ? nsl * btotal : 1, sizeof *boot) : NULL;
    char *path = ns_path_join(st->dir, st->ncname);
    int rc = all && path && (!cfg->keep_samples || smp) && (!want_boot || boot)
                 ? NS_OK : ns_fail(err, NS_ERR_NOMEM, "out of memory (the reduction)");
    if (rc == NS_OK && with_data)
        rc = ns_results_reduce(&st->jr.res, p, st->journal, cfg->ks_alpha, 0, nsl, all, smp, boot,
                               err);
    ns_intervals iv;
    int have_iv = 0;
    if (rc == NS_OK && want_boot) {
        rc = ns_results_intervals(p, cfg->ks_alpha, cfg->shard_count, all, boot,
                                  cfg->bootstrap_resamples, &iv, err);
        have_iv = rc == NS_OK;
    }
    if (rc == NS_OK) {
        ns_results_data d = {
            .grid = &p->g, .derived = &p->derived, .ks_alpha = cfg->ks_alpha,
            .n_shards = cfg->shard_count, .L_max = cfg->L_max, .shard_first = cfg->shard_first,
            .shard_stride = cfg->shard_stride, .corpus_tokens = st->in.corpus.tokens.n,
            .slices = all, .samples = smp, .intervals = have_iv ? &iv : NULL,
        };
        rc = compare_file(v, st, path, &d, with_data, err);
    }
    if (have_iv)
        ns_intervals_free(&iv);
    free(boot);
    free(all);
    free(smp);
    free(path);
    return rc;
}

static int make_workdir(const ns_verify_options *o, char **dir, ns_err *err)
{
    return ns_tmp_make_dir(o->tmpdir ? o->tmpdir : ns_tmp_base(), NS_VERIFY_TMP_PREFIX, dir, err);
}

/* Phase 2: the recorded provenance and sweep text; the comparison mode. *go = 0 stops. */
static int read_recorded(ns_vreport *v, vstate *st, ns_err *err)
{
    const ns_verify_options *o = v->o;
    char *path = NULL, *yaml_member = NULL;
    size_t yaml_len = 0;
    int rc;
    if ((rc = ns_verify_nc_member(st->dir, &st->members, &st->ncname, err)) != NS_OK)
        return rc;
    if (!(path = ns_path_join(st->dir, st->ncname)))
        return ns_fail(err, NS_ERR_NOMEM, "out of memory");
    rc = ns_nc_info_read(path, &st->info, err);
    free(path);
    NS_TRY(rc);
    const char *yaml = ns_nc_info_text(&st->info, "sweep_yaml");
    if (!yaml)
        return ns_fail(err, NS_ERR_INVALID, "%s: no sweep_yaml attribute (not a sweep output)",
                       st->ncname);
    if (!(path = ns_path_join(st->dir, NS_ARCHIVE_SWEEP)))
        return ns_fail(err, NS_ERR_NOMEM, "out of memory");
    if (ns_file_read_all(path, 0, &yaml_member, &yaml_len, err) == NS_OK &&
        yaml_len == strlen(yaml) && memcmp(yaml_member, yaml, yaml_len) == 0)
        ns_vreport_line(v, "PASS", "%s: identical to the sweep_yaml attribute of %s", NS_ARCHIVE_SWEEP,
             st->ncname);
    else
        ns_vreport_line(v, "FAIL", "%s: %s the sweep_yaml attribute of %s", NS_ARCHIVE_SWEEP,
             yaml_member ? "differs from" : "missing; cannot compare with", st->ncname);
    free(path);
    free(yaml_member);
    ns_err_clear(err);
    ns_verify_members_check(v, st->dir, &st->members, &st->info, st->ncname);
    ns_verify_members_unchecked(v, &st->members, st->ncname);
    char why[2048];
    st->exact = same_build(&st->info, o->executable_sha256, why, sizeof why) && !o->force_tolerance;
    if (st->exact)
        ns_vreport_line(v, "INFO", "mode: byte-identical (the recorded build: same executable, or same git "
             "commit, compiler, flags and BLAS)");
    else
        ns_vreport_line(v, "INFO", "mode: tolerance, |archived - recomputed| <= %g * max(|archived|, "
             "|recomputed|, 1) (%s)", o->tolerance,
             o->force_tolerance && !why[0] ? "--tolerant given" : why);
    const char *sweep_file = or_unknown(ns_nc_info_text(&st->info, "sweep_file"));
    st->have_cfg = 1;
    if ((rc = ns_sweep_parse(yaml, strlen(yaml), sweep_file, &st->cfg, NULL, &st->diags, err)) !=
        NS_OK && rc != NS_ERR_NOMEM)
        rc = ns_fail(err, NS_ERR_INVALID, "the archived sweep does not parse: %s",
                     st->diags.n ? st->diags.items[0].text : err->msg);
    return rc;
}

/* Whether journal.nsj and every part of the archive carry this sweep's identity (hash, from the
 * archived sweep text and the inputs' SHA-256, with this sweep's record size): a FAIL naming the
 * first that does not, and *mine 0. */
static int journal_is_mine(ns_vreport *v, vstate *st, const char *hash, int *mine, ns_err *err)
{
    const char *prefix = NS_ARCHIVE_CKPT_DIR "/" NS_JOURNAL_PART_PREFIX;
    *mine = 1;
    for (size_t i = 0; i < st->members.n && *mine; i++) {
        const ns_archive_member *m = &st->members.items[i];
        int main_file = strcmp(m->name, NS_ARCHIVE_CKPT_DIR "/" NS_JOURNAL_FILE) == 0;
        if (!main_file && (strncmp(m->name, prefix, strlen(prefix)) != 0 || m->size < 128))
            continue; /* not a journal file, or a part stopped before its header (holds nothing) */
        char *path = ns_path_join(st->dir, m->name), have[65];
        size_t plen = 0;
        if (!path)
            return ns_fail(err, NS_ERR_NOMEM, "out of memory");
        ns_err e;
        int rc = ns_journal_identity(path, have, &plen, &e);
        free(path);
        if (rc == NS_ERR_NOMEM)
            return ns_fail(err, rc, "%s", e.msg);
        if (rc != NS_OK) {
            ns_vreport_line(v, "FAIL", "journal: %s", e.msg);
            *mine = 0;
        } else if (strcmp(have, hash) != 0) {
            char sizes[160] = "";
            if (plen != st->plan.payload * sizeof(double))
                snprintf(sizes, sizeof sizes, "; its records hold %zu values, this sweep's %zu",
                         plen / sizeof(double), st->plan.payload);
            ns_vreport_line(v, "FAIL", "journal: %s belongs to another sweep than %s (its "
                            "header's sweep identity is %.16s..., the one %s's sweep text and "
                            "inputs give %.16s...%s)", m->name, st->ncname, have, st->ncname,
                            hash, sizes);
            *mine = 0;
        }
    }
    return NS_OK;
}

static int has_part(const ns_archive_list *members)
{
    const char *prefix = NS_ARCHIVE_CKPT_DIR "/" NS_JOURNAL_PART_PREFIX;
    for (size_t i = 0; i < members->n; i++)
        if (strncmp(members->items[i].name, prefix, strlen(prefix)) == 0)
            return 1;
    return 0;
}

/* A lean archive (format 3 without journal.nsj or a part): every task recomputed from the model
 * into a journal of this sweep's identity; the sample of phase 7 is then redundant. */
static int lean_journal(ns_vreport *v, vstate *st, const char *hash, int *ok, ns_err *err)
{
    ns_blas_single_thread(); /* as the sweep runs it */
    NS_TRY(ns_sweep_inputs_take_model(&st->in, &st->model, err)); /* validation's checked map */
    st->lean = 1;
    return ns_verify_lean_journal(v, st->dir, &st->cfg, &st->plan, st->model, &st->in.corpus,
                                  hash, &st->journal, &st->jr.res, ok, err);
}

/* Phase 4: the plan, and the journal holding every task of this sweep. *ok: complete. */
static int open_journal(ns_vreport *v, vstate *st, int *ok, ns_err *err)
{
    *ok = 0;
    ns_grid grid;
    ns_sweep_config_grid(&st->cfg, &grid);
    NS_TRY(ns_plan_init(&st->plan, &grid, &st->in.model_cfg, err));
    st->have_plan = 1;
    char hash[65];
    const char *yaml = ns_nc_info_text(&st->info, "sweep_yaml");
    NS_TRY(ns_journal_sweep_hash(yaml, st->in.model_ref.sha256, st->in.tokenizer_ref.sha256,
                                 st->in.corpus_ref.sha256, st->plan.payload, hash, err));
    NS_TRY(ns_results_init(&st->jr.res, st->cfg.shard_count, err));
    char *path = ns_path_join(st->dir, NS_ARCHIVE_CKPT_DIR);
    char *jpath = path ? ns_path_join(path, NS_JOURNAL_FILE) : NULL;
    int have_journal = jpath && ns_file_is_regular(jpath);
    free(jpath);
    if (!path)
        return ns_fail(err, NS_ERR_NOMEM, "out of memory");
    if (!have_journal) {
        free(path);
        if (ns_verify_archive_format(st->dir, &st->members) >= 3 && !has_part(&st->members))
            return lean_journal(v, st, hash, ok, err);
        ns_vreport_line(v, "FAIL", "journal: %s/%s is not in the archive", NS_ARCHIVE_CKPT_DIR,
                        NS_JOURNAL_FILE);
        ns_vreport_line(v, "SKIP", "numbers and recomputation: no journal to compare with");
        return NS_OK;
    }
    int mine = 0;
    ns_err je;
    ns_err_clear(&je);
    int jrc = journal_is_mine(v, st, hash, &mine, err);
    ns_journal_scan scan;
    if (jrc == NS_OK && mine)
        jrc = ns_journal_open(path, hash, st->plan.payload * sizeof(double), 1, on_record, &st->jr,
                              &st->journal, &scan, &je);
    free(path);
    if (jrc != NS_OK && jrc != NS_ERR_NOMEM)
        ns_vreport_line(v, "FAIL", "journal: %s", je.msg[0] ? je.msg : err->msg);
    if (jrc != NS_OK || !mine) {
        ns_vreport_line(v, "SKIP", "numbers and recomputation: the journal cannot be read for "
                        "this sweep");
        return jrc == NS_ERR_NOMEM ? jrc : NS_OK;
    }
    size_t missing = 0, first_missing = 0;
    for (size_t i = 0; i < st->cfg.shard_count; i++)
        if (!ns_results_has(&st->jr.res, i) && missing++ == 0)
            first_missing = i;
    /* A part that ends in an incomplete record is not a failure: its worker stopped (was
     * killed) while writing it, before it told rank 0, so rank 0 never took that record and the
     * task was journalled again (a task without a valid record counts as missing). journal.nsj
     * never keeps one: a resume cuts it off. A damaged record is skipped as the run skips it (the
     * run computes its task again and journals it anew): a failure only when a task is left
     * without a whole record. */
    char note[1024] = "";
    size_t at = 0;
    if (scan.n_damaged)
        at += (size_t)snprintf(note + at, sizeof note - at, "; %zu damaged record%s%s, %sat byte "
                               "%llu of %s", scan.n_damaged, scan.n_damaged == 1 ? "" : "s",
                               missing ? "" : " skipped", scan.n_damaged == 1 ? "" : "the first ",
                               (unsigned long long)scan.first_damaged, scan.first_damaged_file);
    if (scan.n_damaged && !missing && at < sizeof note)
        at += (size_t)snprintf(note + at, sizeof note - at, ", as the run skips %s: every task "
                               "has a whole record", scan.n_damaged == 1 ? "it" : "them");
    if (scan.torn_parts && at < sizeof note)
        snprintf(note + at, sizeof note - at, "; %zu of them end%s in an incomplete record "
                 "of a stopped worker, not read", scan.torn_parts, scan.torn_parts == 1 ? "s" : "");
    if (missing || scan.torn_bytes || st->jr.n_foreign) {
        char what[160] = "";
        if (missing)
            snprintf(what, sizeof what, "%zu of %zu tasks missing (first: %zu)", missing,
                     st->cfg.shard_count, first_missing);
        else
            snprintf(what, sizeof what, "every one of the %zu tasks recorded",
                     st->cfg.shard_count);
        ns_vreport_line(v, "FAIL", "journal: %s%s%s%s", what,
                        scan.torn_bytes ? "; " NS_JOURNAL_FILE " ends in an incomplete record" : "",
                        st->jr.n_foreign ? "; records of unknown tasks" : "", note);
    } else {
        ns_vreport_line(v, "PASS", "journal: all %zu tasks recorded (%zu values each; %s and %zu "
                        "part file%s%s)", st->cfg.shard_count, st->plan.payload, NS_JOURNAL_FILE,
                        scan.n_parts, scan.n_parts == 1 ? "" : "s", note);
    }
    if (missing)
        ns_vreport_line(v, "SKIP", "numbers and recomputation: the journal is incomplete");
    *ok = !missing;
    return NS_OK;
}

int ns_verify(const ns_verify_options *o, ns_verify_summary *s, ns_err *err)
{
    ns_vreport v = {o, s, NULL};
    vstate st;
    memset(&st, 0, sizeof st);
    memset(s, 0, sizeof *s);
    int rc, ok = 0;
    /* 1. Extract and check the manifest. */
    if ((rc = make_workdir(o, &st.dir, err)) != NS_OK)
        goto done;
    v.dir = st.dir;
    if (o->hooks.hold) /* test only: NULL but in a test that holds the verification */
        o->hooks.hold(o->hooks.hold_user, "temp", 0);
    if (!check_sizes(&v, st.dir, err, &rc)) {
        if (rc == NS_ERR_IO && !ns_file_exists(o->archive))
            rc = err->code = NS_ERR_INVALID;
        if (rc == NS_OK)
            ns_vreport_line(&v, "SKIP", "manifest, inputs and recomputation: the archive was not extracted");
        goto done;
    }
    if ((rc = stopped(o, err)) != NS_OK ||
        (rc = ns_archive_extract(o->archive, st.dir, &st.members, err)) != NS_OK) {
        if (rc == NS_ERR_IO && !ns_file_exists(o->archive))
            rc = err->code = NS_ERR_INVALID;
        goto done;
    }
    ns_vreport_line(&v, "INFO", "archive %s: %zu members under %s/", o->archive, st.members.n,
         st.members.top);
    if (!check_manifest(&v, st.dir, &st.members, err, &rc)) {
        if (rc == NS_OK)
            ns_vreport_line(&v, "SKIP", "inputs and recomputation: the archive failed its manifest check");
        goto done;
    }
    /* 2.-6. The recorded sweep and what the members state, its inputs, the journal, the file's
     * attributes and every number from the journal, then the sampled tasks recomputed from the
     * model. */
    if ((rc = stopped(o, err)) != NS_OK || (rc = read_recorded(&v, &st, err)) != NS_OK ||
        (rc = stopped(o, err)) != NS_OK ||
        (rc = ns_verify_inputs(&v, st.dir, &st.info, &st.cfg, &st.in, &st.diags, &st.claim,
                               &ok, err)) != NS_OK || !ok ||
        (rc = stopped(o, err)) != NS_OK || (rc = open_journal(&v, &st, &ok, err)) != NS_OK ||
        (rc = check_reduction(&v, &st, ok, err)) != NS_OK || !ok ||
        (rc = stopped(o, err)) != NS_OK)
        goto done;
    rc = recompute(&v, &st, st.exact, err);
done:
    vstate_free(&st);
    return rc;
}

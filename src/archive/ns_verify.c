/* ns_verify: verify a reproducibility archive: manifest, recorded inputs, recomputation of
 * sampled tasks (see ns_verify.h). */
#include "config.h"

#include "archive/ns_verify.h"

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
#include "archive/ns_archive.h"
#include "io/ns_nc_read.h"
#include "model/ns_gpt2.h"
#include "corpus/ns_corpus.h"
#include "sweep/ns_journal.h"
#include "sweep/ns_sweep_yaml.h"
#include "sweep/ns_task.h"

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
    if (ns_file_is_regular(p)) {
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
        if (ns_str_ends_with(members->items[i].name, ".nc") && !strchr(members->items[i].name, '/'))
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
    char *t = ns_str_printf("%s/normsweep-verify.XXXXXX", base);
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
    int have_journal = jpath && ns_file_is_regular(jpath);
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

/* ns_dump_run: `normsweep dump`'s pipeline (ns_dump_run.h) -- the window loaded as a sweep's
 * corpus, the plan of its last row, the model, the file created under its temporary name, the
 * forward pass with each layer's attention written as it comes, the metrics, the rename. */
#include "config.h"

#include "dump/ns_dump_run.h"

#include <errno.h>
#include <libgen.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "analysis/ns_topn.h"
#include "assets/ns_assets.h"
#include "common/ns_file.h"
#include "common/ns_outpath.h"
#include "common/ns_sha256.h"
#include "common/ns_sys.h"
#include "common/ns_time.h"
#include "corpus/ns_corpus.h"
#include "grid/ns_grid.h"
#include "io/ns_nc_dump.h"
#include "model/ns_checkpoint.h"
#include "model/ns_model.h"
#include "rows/ns_rows.h"
#include "spec/ns_sweep_inputs.h"
#include "tokenizer/ns_tokenizer.h"

/* A directory given on the command line is used as is; anything else is an asset name. */
static int dump_resolve(const char *arg, const char *dflt, const char *kind,
                        const ns_hooks *hooks, ns_asset_ref *ref, ns_err *err)
{
    memset(ref, 0, sizeof *ref);
    if (arg && ns_file_exists(arg)) {
        if ((size_t)snprintf(ref->path, sizeof ref->path, "%s", arg) >= sizeof ref->path)
            return ns_fail(err, NS_ERR_INVALID, "--%s: path too long", kind);
        snprintf(ref->requested, sizeof ref->requested, "%.127s", arg);
        snprintf(ref->name, sizeof ref->name, "path");
        return NS_OK;
    }
    ns_assets_fetch fetch = {.allow = 1, .log = hooks->line, .log_user = hooks->user};
    int rc = ns_assets_resolve(arg ? arg : dflt, kind, &fetch, ref, err);
    if (rc != NS_OK)
        ns_err_prefix(err, "--%s %s", kind, arg ? arg : dflt);
    return rc;
}

/* The plan's problems with the window, named by dump's options. */
static int plan_problem(void *user, ns_plan_where where, size_t index, const char *text)
{
    ns_err *first = user;
    (void)index;
    if (!first->code)
        ns_fail(first, NS_ERR_INVALID, "%s: %s",
                where == NS_PLAN_AT_L_MAX || where == NS_PLAN_AT_L ? "--length"
                : where == NS_PLAN_AT_GRID                         ? "the grid (--N, --T, --eps, --probes)"
                                                                   : "--N", text);
    return NS_OK;
}

typedef struct dump_run_state {
    ns_sweep_config cfg;          /* the run's copy of the options' settings */
    ns_asset_ref mref, tref, text_ref;
    ns_model_config mc;
    ns_tokenizer *tok;
    ns_corpus corpus;
    char *text;
    size_t text_len;
    ns_model *model;
    ns_plan plan;
    int have_plan;
    ns_rows *rows;
    double *payload, *slab;
    ns_nc_dump *dump;
    int logits;
    const char *out;
    const volatile sig_atomic_t *stop; /* non-zero: stop (the file's temporary is removed) */
    char norm_label[64];          /* the normalizer with its parameter (ns_normalizer_label) */
} dump_run_state;

static void state_free(dump_run_state *s)
{
    ns_nc_dump_abort(s->dump);
    ns_rows_free(s->rows);
    if (s->have_plan)
        ns_plan_free(&s->plan);
    ns_model_free(s->model);
    ns_corpus_free(&s->corpus);
    ns_tokenizer_free(s->tok);
    free(s->text);
    free(s->payload);
    free(s->slab);
    ns_sweep_config_free(&s->cfg);
}

/* The layer hook: the raw attention into the file. */
static int write_layer(void *user, const ns_attn_layer_view *v, ns_err *err)
{
    dump_run_state *s = user;
    if (s->stop && *s->stop)
        return ns_fail(err, NS_ERR_INTERRUPTED, "interrupted; %s was not written (its temporary "
                       "is removed)", s->out);
    NS_TRY(ns_nc_dump_write_layer(s->dump, v->layer, v->weights, v->values, v->n_kv_head, err));
    if (s->logits)
        NS_TRY(ns_nc_dump_write_logits(s->dump, v->layer, v->logits, err));
    return NS_OK;
}

/* Every metric of every layer from the payload (one row per head) into the file. */
static int write_metrics(dump_run_state *s, ns_err *err)
{
    const ns_grid *g = &s->plan.g;
    const ns_row_layout *lay = ns_plan_layout(&s->plan, 0, 0);
    size_t H = g->nheads, L = g->L[0];
    for (size_t li = 0; li < g->nlayers; li++)
        for (int id = 0; id < NS_M_COUNT; id++) {
            ns_metric_dims dims = ns_metric_info_of((ns_metric_id)id)->dims;
            size_t A = dims == NS_DIMS_ROW ? 1 : g->nT;
            size_t B = dims == NS_DIMS_TN ? g->nN : dims == NS_DIMS_TE ? g->neps : 1;
            for (size_t a = 0; a < A; a++)
                for (size_t b = 0; b < B; b++)
                    for (size_t hi = 0; hi < H; hi++) {
                        const double *rec = s->payload + ns_plan_offset(&s->plan, li, hi, 0, 0, 0);
                        s->slab[(a * B + b) * H + hi] = ns_row_value(
                            lay, rec, L, (ns_metric_id)id, a, b, dims == NS_DIMS_TE ? b : 0);
                    }
            NS_TRY(ns_nc_dump_write_metric(s->dump, (ns_metric_id)id, g->layers[li], s->slab, err));
        }
    return NS_OK;
}

/* Read, check, strip and tokenize the text as a sweep's corpus; the window must fit. */
static int load_window(const ns_dump_options *o, const ns_hooks *hooks, dump_run_state *s,
                       ns_err *err)
{
    int rc = ns_file_read_all(o->text, 0, &s->text, &s->text_len, err);
    if (rc == NS_OK)
        rc = dump_resolve(o->tokenizer, NS_SWEEP_DEFAULT_TOKENIZER, "tokenizer", hooks, &s->tref,
                          err);
    if (rc == NS_OK)
        rc = ns_tokenizer_load(s->tref.path, &s->tok, err);
    if (rc == NS_ERR_IO) /* a missing or unreadable input, found before any work: exit 2 */
        rc = err->code = NS_ERR_INVALID;
    NS_TRY(rc);
    NS_TRY(ns_corpus_from_text(s->text, s->text_len, o->text, s->cfg.strip_gutenberg, s->tok,
                               &s->corpus, err));
    size_t n = s->corpus.tokens.n;
    if (o->offset > n || o->length > n - o->offset)
        return ns_fail(err, NS_ERR_INVALID, "--offset %zu --length %zu: the window ends at token "
                       "%zu but %s has only %zu tokens%s", o->offset, o->length,
                       o->offset + o->length, o->text, n,
                       s->cfg.strip_gutenberg ? " without its Gutenberg header and licence" : "");
    snprintf(s->text_ref.name, sizeof s->text_ref.name, "path");
    snprintf(s->text_ref.path, sizeof s->text_ref.path, "%s", o->text);
    return ns_sha256_buffer(s->text, s->text_len, s->text_ref.sha256, err);
}

/* The plan of the window: L = length, the last row, every layer and head. */
static int make_plan(const ns_dump_options *o, dump_run_state *s, ns_err *err)
{
    ns_sweep_config *cfg = &s->cfg;
    cfg->L_max = o->length;
    cfg->rows = 1;
    free(cfg->L);
    if (!(cfg->L = malloc(sizeof *cfg->L)))
        return ns_fail(err, NS_ERR_NOMEM, "out of memory");
    cfg->L[0] = o->length;
    cfg->nL = 1;
    NS_TRY(ns_sweep_expand_all(cfg, s->mc.n_layer, s->mc.n_head, err));
    ns_grid g;
    ns_sweep_config_grid(cfg, &g);
    ns_err first;
    ns_err_clear(&first);
    NS_TRY(ns_plan_check(&g, plan_problem, &first, err));
    NS_TRY(ns_plan_check_model(&g, &s->mc, s->mref.path, plan_problem, &first, err));
    NS_TRY(ns_plan_check_memory(&g, &s->mc, 1, 0, (double)ns_sys_memory_bytes(), plan_problem,
                                &first, err));
    if (first.code) {
        *err = first;
        return first.code;
    }
    /* dump keeps every row's weights and logits (the plan's estimate counts the analysed row) */
    double need = ns_model_workspace_bytes(&s->mc, o->length, o->length);
    double have = (double)ns_sys_memory_bytes();
    if (have > 0 && need > have) {
        char n[64], h[64];
        ns_sys_format_bytes(need, n, sizeof n);
        ns_sys_format_bytes(have, h, sizeof h);
        return ns_fail(err, NS_ERR_INVALID, "--length: %zu tokens: the dump holds every row's "
                       "attention, about %s, more than this machine's %s of memory", o->length,
                       n, h);
    }
    NS_TRY(ns_plan_init(&s->plan, &g, &s->mc, err));
    s->have_plan = 1;
    return NS_OK;
}

static int create_file(const ns_dump_options *o, dump_run_state *s, ns_err *err)
{
    const ns_grid *g = &s->plan.g;
    char model_sha[NS_SHA256_HEX_LEN + 1], when[32];
    NS_TRY(ns_model_sha256(s->model, model_sha, err)); /* of the mapped bytes used */
    snprintf(s->mref.sha256, sizeof s->mref.sha256, "%s", model_sha);
    ns_iso_now(when, sizeof when);
    ns_nc_attr mattrs[NS_MODEL_ATTRS];
    char mbuf[512];
    size_t nm = ns_sweep_model_attrs(&s->mc, mattrs, mbuf, sizeof mbuf);
    ns_provenance prov = {
        .kind = "dump", .command_line = o->command_line, .start_time = when, .model = &s->mref,
        .tokenizer = &s->tref, .corpus = &s->text_ref,
        .model_requested = o->model ? o->model : NS_SWEEP_DEFAULT_MODEL, .mpi_size = 1,
        .model_attrs = mattrs, .n_model_attrs = nm,
        .strip_gutenberg = s->cfg.strip_gutenberg,
        .all_softmax_family = ns_topn_rank_is_T_free(&g->normalizers[0]), /* no view */
    };
    ns_nc_dump_meta meta = {
        .prov = &prov, .text_file = o->text, .text_sha256 = s->text_ref.sha256,
        .offset = o->offset, .text_tokens = s->corpus.tokens.n, .ln_eps = s->mc.norm_eps,
    };
    ns_normalizer_label(&g->normalizers[0], 0, s->norm_label, sizeof s->norm_label);
    ns_nc_dump_metrics m = {
        .N = g->N, .nN = g->nN, .T = g->T, .nT = g->nT, .eps = g->eps, .neps = g->neps,
        .jac_bound = s->plan.derived.jac_bound, .row = o->length - 1,
        .normalizer = s->norm_label,
        .normalizer_s = g->normalizers[0].kind == NS_NORM_SSMAX ? g->normalizers[0].s : NAN,
        .sphere = g->sphere, .seed = g->seed, .probes = g->probes,
    };
    ns_nc_dump_extras extras = {.logits = o->logits, .metrics = o->metrics ? &m : NULL};
    return ns_nc_dump_create_ext(o->out, &meta, s->mc.n_layer, s->mc.n_head, o->length,
                                 s->mc.d_head, s->corpus.tokens.ids + o->offset, &extras, &s->dump,
                                 err);
}

/* --out's directory must exist and be writable: found before any work, an input error (exit 2).
 * dump does not create directories (the sweep does, for its configured output). */
static int check_out_dir(const char *out, ns_err *err)
{
    char *copy = strdup(out);
    if (!copy)
        return ns_fail(err, NS_ERR_NOMEM, "out of memory");
    const char *dir = dirname(copy);
    struct stat st;
    int rc = NS_OK;
    if (stat(dir, &st) != 0)
        rc = ns_fail(err, NS_ERR_INVALID, "--out %s: directory %s: %s", out, dir, strerror(errno));
    else if (!S_ISDIR(st.st_mode))
        rc = ns_fail(err, NS_ERR_INVALID, "--out %s: %s is not a directory", out, dir);
    else if (access(dir, W_OK | X_OK) != 0)
        rc = ns_fail(err, NS_ERR_INVALID, "--out %s: directory %s is not writable: %s", out, dir,
                     strerror(errno));
    free(copy);
    return rc;
}

/* --out must not be, nor replace, what dump reads: the text, the model's and the tokenizer's
 * files (common/ns_outpath: links, ".." and hard links resolved). */
static int check_out_paths(const ns_dump_options *o, const dump_run_state *s, ns_err *err)
{
    static const char *const files[] = {"encoder.json", "vocab.bpe", "vocab.json", "merges.txt",
                                        "tokenizer.json"};
    enum { NF = sizeof files / sizeof files[0] };
    char *own[NF] = {NULL}, **model_files = NULL;
    size_t nm = 0;
    NS_TRY(ns_model_input_files(s->mref.path, &model_files, &nm, err));
    ns_outpath_role *ins = calloc(NF + 1 + nm, sizeof *ins);
    int rc = ins ? NS_OK : ns_fail(err, NS_ERR_NOMEM, "out of memory");
    for (size_t k = 0; rc == NS_OK && k < NF; k++) {
        ins[1 + k] = (ns_outpath_role){"the tokenizer file", own[k] = ns_path_join(s->tref.path,
                                                                                files[k]), 0};
        if (!own[k])
            rc = ns_fail(err, NS_ERR_NOMEM, "out of memory");
    }
    for (size_t k = 0; rc == NS_OK && k < nm; k++)
        ins[1 + NF + k] = (ns_outpath_role){"the model file", model_files[k], 0};
    ns_outpath_role out = {"--out", o->out, 0};
    if (rc == NS_OK) {
        ins[0] = (ns_outpath_role){"the --text file", o->text, 0};
        rc = ns_outpath_check(&out, ins, NF + 1 + nm, err);
    }
    for (size_t k = 0; k < NF; k++)
        free(own[k]);
    free(ins);
    ns_model_input_files_free(model_files, nm);
    return rc;
}

/* The run's own copy of the settings (the plan sets its L and expands layers and heads). */
static int copy_config(const ns_sweep_config *from, ns_sweep_config *to, ns_err *err)
{
    void *buf = NULL;
    size_t len = 0;
    int rc = ns_sweep_config_pack(from, &buf, &len, err);
    if (rc == NS_OK)
        rc = ns_sweep_config_unpack(buf, len, to, err);
    free(buf);
    return rc;
}

int ns_dump_run(const ns_dump_options *o, const ns_hooks *hooks, ns_err *err)
{
    static const ns_hooks none;
    if (!hooks)
        hooks = &none;
    dump_run_state s;
    memset(&s, 0, sizeof s);
    s.logits = o->logits;
    s.out = o->out;
    s.stop = hooks->stop;
    int rc = copy_config(&o->cfg, &s.cfg, err);
    /* cheap checks first: the model's shape, the text, the window, the grid */
    if (rc || (rc = check_out_dir(o->out, err)) || (rc = load_window(o, hooks, &s, err)) ||
        (rc = dump_resolve(o->model, NS_SWEEP_DEFAULT_MODEL, "model", hooks, &s.mref, err)) ||
        (rc = check_out_paths(o, &s, err)) ||
        (rc = ns_model_config_read(s.mref.path, &s.mc, err)) || (rc = make_plan(o, &s, err)))
        goto done;
    const ns_grid *g = &s.plan.g;
    size_t H = g->nheads, B = g->nN > g->neps ? g->nN : g->neps;
    s.payload = malloc(s.plan.payload * sizeof *s.payload);
    s.slab = malloc((g->nT * (B ? B : 1) * H + H) * sizeof *s.slab);
    if (!s.payload || !s.slab) {
        rc = ns_fail(err, NS_ERR_NOMEM, "out of memory");
        goto done;
    }
    if ((rc = ns_model_load(s.mref.path, &s.model, err)) ||
        (rc = ns_rows_new(&s.plan, s.model, NS_KERNEL_FAST, NS_ROWS_ALL_ROWS, &s.rows, err)) ||
        (rc = create_file(o, &s, err)))
        goto done;
    if (hooks->hold) /* test only */
        hooks->hold(hooks->hold_user, "temp", 0);
    ns_rows_hooks layers = {.layer = write_layer, .layer_user = &s};
    if ((rc = ns_rows_run(s.rows, 0, s.corpus.tokens.ids + o->offset, &layers, s.payload, err)))
        goto done;
    if (o->metrics && (rc = write_metrics(&s, err)))
        goto done;
    rc = ns_nc_dump_close(s.dump, err);
    s.dump = NULL;
done:
    state_free(&s);
    return rc;
}

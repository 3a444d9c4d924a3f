/* cmd_dump: `normsweep dump`: one window of a text through the same stages as a sweep -- the
 * corpus stage (read, check, strip the Gutenberg header as the sweep does, tokenize), the rows
 * stage (one forward pass, every layer's and head's last row analysed with the sweep's defaults
 * and checks) -- written to NetCDF with the window's attention weights and value vectors. */
#include "config.h"

#include <errno.h>
#include <getopt.h>
#include <libgen.h>
#include <math.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "analysis/ns_topn.h"
#include "assets/ns_assets.h"
#include "cli/ns_cli.h"
#include "cli/ns_hold.h"
#include "common/ns_file.h"
#include "common/ns_outpath.h"
#include "common/ns_sha256.h"
#include "common/ns_sys.h"
#include "common/ns_time.h"
#include "corpus/ns_corpus.h"
#include "io/ns_nc_dump.h"
#include "model/ns_checkpoint.h"
#include "model/ns_model.h"
#include "rows/ns_rows.h"
#include "spec/ns_list.h"
#include "spec/ns_sweep_config.h"
#include "spec/ns_sweep_inputs.h"
#include "tokenizer/ns_tokenizer.h"

static void dump_usage(FILE *out)
{
    fprintf(out,
            "Usage: normsweep dump --text FILE --offset TOK --length L --out OUT.nc\n"
            "                      [--model DIR|NAME] [--tokenizer DIR|NAME] [--logits]\n"
            "                      [--strip-gutenberg true|false]\n"
            "                      [--N n1,n2,.. [--T t1,..] [--eps e1,..] [--normalizer NAME]\n"
            "                       [--s S | --b B | --alpha A] [--sphere true|false] [--seed S]\n"
            "                       [--probes P] [--sink-view]]\n"
            "\n"
            "One window through the sweep's own stages: FILE is read and tokenized as a sweep's\n"
            "corpus (the Project Gutenberg header and licence stripped unless\n"
            "--strip-gutenberg false), tokens [TOK, TOK+L) go through one causal forward pass, and\n"
            "OUT.nc (NetCDF-4) receives token_id(position), attention_weight(layer, head, query,\n"
            "key) (0 above the diagonal) and value(layer, head, position, dim) over query heads\n"
            "(with grouped-query attention, each head's values are its key/value group's), with\n"
            "provenance.\n"
            "The file is written under a temporary name and renamed when complete.\n"
            "\n"
            "Options:\n"
            "  --text FILE        text to tokenize (TOK counts tokens of the text the sweep would\n"
            "                     use: after stripping when --strip-gutenberg is true)\n"
            "  --offset TOK       first token of the window (0-based)\n"
            "  --length L         tokens in the window (1 .. the model's context)\n"
            "  --out OUT.nc       output file (replaced if it exists)\n"
            "  --model DIR|NAME   model directory (config.json + model.safetensors, or its shards\n"
            "                     and model.safetensors.index.json) or asset name; GPT-2, Llama\n"
            "                     layout (llama, mistral, qwen2) or GPT-NeoX (docs/MODELS.md)\n"
            "                     (default: gpt2, which falls back to gpt2-standin offline)\n"
            "  --tokenizer DIR|NAME  tokenizer directory or asset name (default: tokenizer)\n"
            "  --strip-gutenberg true|false  as the sweep setting (default true)\n"
            "  --logits           also write logit(layer, head, query, key): the float32 pre-softmax\n"
            "                     scores the metrics start from (NaN above the diagonal)\n"
            "\n"
            "Metrics of docs/METRICS.md for the window's last row (query L-1, L keys) of every\n"
            "(layer, head), written when --N is given, by the sweep's own code with the sweep's\n"
            "defaults: every metric of the table (distance ... jac_fd, entropy, n_eff, mass,\n"
            "sink_mass) over (T, N, layer, head), (T, layer, head), (T, eps, layer, head) or\n"
            "(layer, head); doubles, NaN = missing. Lists are comma-separated, sorted on output.\n"
            "  --N LIST           top-N sizes, each >= 1\n"
            "  --T LIST           temperatures in [1e-100, 1e100] (default 1)\n"
            "  --eps LIST         finite-difference steps for jac_fd in [1e-100, 1e100] (default\n"
            "                     1e-3)\n"
            "  --normalizer NAME  softmax (default), ssmax, sparsemax, entmax15, entmax, softmax1,\n"
            "                     sigmoid, softpick, relu or stickbreaking (docs/METRICS.md 2)\n"
            "  --s S              ssmax parameter (> 0; required by ssmax, only for ssmax)\n"
            "  --b B              sigmoid's bias in [-1000, 1000] (only for sigmoid; default\n"
            "                     -log(L), L the row's keys)\n"
            "  --alpha A          entmax's alpha in (1, 1000] (required by entmax, only for it;\n"
            "                     1.5 is entmax15)\n"
            "  --sphere true|false  scale every value vector to norm 1 (default true)\n"
            "  --seed S           key of the counter-based generator (default 0)\n"
            "  --probes P         random probe directions for jac_fd (default 8, at most 4096)\n"
            "  --sink-view        the normalizer's sink-excluded view: its weights over the\n"
            "                     L keys, key 0 dropped, the other L - 1 renormalised; every\n"
            "                     metric over those L - 1 keys (docs/METRICS.md 8.2; the\n"
            "                     sweep's sink_view)\n"
            "  -h, --help         show this help\n"
            "\n"
            "Exit status: 0 written, 1 runtime failure, 2 bad options or input (nothing written),\n"
            "3 interrupted by SIGTERM, SIGINT or SIGUSR1 (nothing written).\n");
}

/* ---- options ---- */

typedef struct dump_opts {
    const char *model, *tokenizer, *text, *out;
    size_t offset, length;
    int have_offset, have_length, have_N, have_s;
    int have_b, have_alpha;      /* --b, --alpha given (into prm_b, prm_alpha) */
    double prm_b, prm_alpha;
    int logits;                  /* --logits */
    const char *metric_opt;      /* first metric option seen, for "needs --N" */
    ns_sweep_config cfg;         /* the analysis settings: the sweep's defaults, overridden */
} dump_opts;

/* The ranges of dump's own numeric options (common/ns_range.h); the grid's options take theirs
 * from the plan (rows/ns_plan.h), as the sweep file's keys do. */
static const ns_range r_offset =
    NS_RANGE_INT(0, NS_RANGE_INT64_MAX, "the output stores the offset as a 64-bit integer");
static const ns_range r_seed = NS_RANGE_INT(0, UINT64_MAX, NULL);

static int parse_size(const char *opt, const ns_range *r, const char *s, size_t *out, ns_err *err)
{
    uint64_t v;
    NS_TRY(ns_range_parse_u64(r, opt, s, &v, err));
    *out = (size_t)v;
    return NS_OK;
}

static int parse_bool(const char *opt, const char *s, int *out, ns_err *err)
{
    if (strcmp(s, "true") == 0 || strcmp(s, "false") == 0) {
        *out = s[0] == 't';
        return NS_OK;
    }
    return ns_fail(err, NS_ERR_INVALID, "%s: expected true or false, got '%s'", opt, s);
}

/* One metric option (those that need --N). */
static int parse_metric_opt(dump_opts *o, int c, const char *arg, ns_err *err)
{
    ns_sweep_config *cfg = &o->cfg;
    static const char *const names[] = {"--T",    "--eps",  "--normalizer", "--s", "--sphere",
                                        "--seed", "--probes", NULL, "--b", "--alpha"};
    if (!o->metric_opt)
        o->metric_opt = names[c - 258];
    switch (c) {
    case 258:
        return ns_list_parse("--T", &ns_plan_range_scale, arg, NULL, &cfg->T, &cfg->nT, err);
    case 259:
        return ns_list_parse("--eps", &ns_plan_range_scale, arg, NULL, &cfg->eps, &cfg->neps, err);
    case 260: {
        ns_normalizer f;
        ns_err e;
        if (ns_normalizer_parse_any(arg, &f, &e) != NS_OK)
            return ns_fail(err, NS_ERR_INVALID, "--normalizer: %s", e.msg);
        cfg->normalizers[0].kind = f.kind;
        return NS_OK;
    }
    case 266:
        NS_TRY(ns_range_parse_real(&ns_plan_range_b, "--b", arg, &o->prm_b, err));
        o->have_b = 1;
        return NS_OK;
    case 267:
        NS_TRY(ns_range_parse_real(&ns_plan_range_alpha, "--alpha", arg, &o->prm_alpha, err));
        o->have_alpha = 1;
        return NS_OK;
    case 261:
        NS_TRY(ns_range_parse_real(&ns_plan_range_s, "--s", arg, &cfg->normalizers[0].s, err));
        o->have_s = 1;
        return NS_OK;
    case 262: return parse_bool("--sphere", arg, &cfg->sphere, err);
    case 263: return ns_range_parse_u64(&r_seed, "--seed", arg, &cfg->seed, err);
    default: {
        size_t p;
        NS_TRY(parse_size("--probes", &ns_plan_range_probes, arg, &p, err));
        cfg->probes = (unsigned)p;
        return NS_OK;
    }
    }
}

/* After parsing: what is missing or inconsistent. */
static int dump_check(dump_opts *o, ns_err *err)
{
    const char *missing = !o->text ? "--text" : !o->have_offset ? "--offset"
                        : !o->have_length ? "--length" : !o->out ? "--out" : NULL;
    if (missing)
        return ns_fail(err, NS_ERR_INVALID, "missing %s (see normsweep dump --help)", missing);
    if (!o->have_N && o->metric_opt)
        return ns_fail(err, NS_ERR_INVALID,
                       "%s needs --N (metrics are computed only when --N is given)", o->metric_opt);
    ns_normalizer *f = &o->cfg.normalizers[0];
    ns_normalizer_kind k = f->kind;
    if (k == NS_NORM_SSMAX && !o->have_s)
        return ns_fail(err, NS_ERR_INVALID, "--normalizer ssmax needs its parameter --s S");
    if (k != NS_NORM_SSMAX && o->have_s)
        return ns_fail(err, NS_ERR_INVALID, "--s applies only to --normalizer ssmax, not to %s",
                       ns_normalizer_name(k));
    if (k != NS_NORM_SIGMOID && o->have_b)
        return ns_fail(err, NS_ERR_INVALID, "--b applies only to --normalizer sigmoid, not to %s",
                       ns_normalizer_name(k));
    if (k == NS_NORM_ENTMAX && !o->have_alpha)
        return ns_fail(err, NS_ERR_INVALID, "--normalizer entmax needs its parameter --alpha A "
                       "(alpha > 1; 1.5 is entmax15)");
    if (k != NS_NORM_ENTMAX && o->have_alpha)
        return ns_fail(err, NS_ERR_INVALID, "--alpha applies only to --normalizer entmax, not to "
                       "%s", ns_normalizer_name(k));
    if (k == NS_NORM_SIGMOID)
        f->b = o->have_b ? o->prm_b : NAN; /* NaN: -log(L) */
    else if (k == NS_NORM_ENTMAX)
        f->alpha = o->prm_alpha;
    return NS_OK;
}

/* Returns NS_OK, NS_ERR_INVALID / NS_ERR_NOMEM (message in err) or -1 for --help. */
static int dump_parse(int argc, char **argv, dump_opts *o, ns_err *err)
{
    static const struct option longopts[] = {
        {"model", required_argument, NULL, 'm'},  {"tokenizer", required_argument, NULL, 'k'},
        {"text", required_argument, NULL, 't'},   {"offset", required_argument, NULL, 'o'},
        {"length", required_argument, NULL, 'l'}, {"out", required_argument, NULL, 'O'},
        {"help", no_argument, NULL, 'h'},         {"logits", no_argument, NULL, 256},
        {"N", required_argument, NULL, 257},      {"T", required_argument, NULL, 258},
        {"eps", required_argument, NULL, 259},    {"normalizer", required_argument, NULL, 260},
        {"s", required_argument, NULL, 261},      {"sphere", required_argument, NULL, 262},
        {"seed", required_argument, NULL, 263},   {"probes", required_argument, NULL, 264},
        {"strip-gutenberg", required_argument, NULL, 265},
        {"b", required_argument, NULL, 266},      {"alpha", required_argument, NULL, 267},
        {"sink-view", no_argument, NULL, 268},
        {NULL, 0, NULL, 0},
    };
    optind = 1;
    opterr = 0;
    int c;
    while ((c = getopt_long(argc, argv, ":h", longopts, NULL)) != -1) {
        switch (c) {
        case 'm': o->model = optarg; break;
        case 'k': o->tokenizer = optarg; break;
        case 't': o->text = optarg; break;
        case 'O': o->out = optarg; break;
        case 'o':
            NS_TRY(parse_size("--offset", &r_offset, optarg, &o->offset, err));
            o->have_offset = 1;
            break;
        case 'l':
            NS_TRY(parse_size("--length", &ns_plan_range_L, optarg, &o->length, err));
            o->have_length = 1;
            break;
        case 'h': return -1;
        case 256: o->logits = 1; break;
        case 257:
            NS_TRY(ns_list_parse("--N", &ns_plan_range_N, optarg, &o->cfg.N, NULL, &o->cfg.nN,
                                 err));
            o->have_N = 1;
            break;
        case 258: case 259: case 260: case 261: case 262: case 263: case 264: case 266: case 267:
            NS_TRY(parse_metric_opt(o, c, optarg, err));
            break;
        case 265: NS_TRY(parse_bool("--strip-gutenberg", optarg, &o->cfg.strip_gutenberg, err)); break;
        case 268:
            o->cfg.normalizers[0].view = NS_VIEW_SINK_EXCLUDED;
            if (!o->metric_opt)
                o->metric_opt = "--sink-view";
            break;
        case ':':
            return ns_fail(err, NS_ERR_INVALID, "option %s needs a value", argv[optind - 1]);
        default:
            return ns_fail(err, NS_ERR_INVALID, "unknown option '%s' (see normsweep dump --help)",
                           argv[optind - 1]);
        }
    }
    if (optind < argc)
        return ns_fail(err, NS_ERR_INVALID, "unexpected argument '%s' (see normsweep dump --help)",
                       argv[optind]);
    return dump_check(o, err);
}

/* ---- running ---- */

/* A directory given on the command line is used as is; anything else is an asset name. */
static int dump_resolve(const char *arg, const char *dflt, const char *kind, ns_asset_ref *ref,
                        ns_err *err)
{
    memset(ref, 0, sizeof *ref);
    if (arg && ns_file_exists(arg)) {
        if ((size_t)snprintf(ref->path, sizeof ref->path, "%s", arg) >= sizeof ref->path)
            return ns_fail(err, NS_ERR_INVALID, "--%s: path too long", kind);
        snprintf(ref->requested, sizeof ref->requested, "%.127s", arg);
        snprintf(ref->name, sizeof ref->name, "path");
        return NS_OK;
    }
    ns_assets_fetch fetch = {.allow = 1, .log = ns_cli_log_line, .log_user = NULL};
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
    double *payload, *slab, *jac_bound;
    ns_nc_dump *dump;
    int logits;
    const char *out;
    volatile sig_atomic_t *stop;  /* a signal asks to stop: the file's temporary is removed */
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
    free(s->jac_bound);
}

/* The layer hook: the raw attention into the file. */
static int write_layer(void *user, const ns_attn_layer_view *v, ns_err *err)
{
    dump_run_state *s = user;
    if (*s->stop)
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
    const ns_plan_grid *g = &s->plan.g;
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
static int load_window(const dump_opts *o, dump_run_state *s, ns_err *err)
{
    int rc = ns_file_read_all(o->text, 0, &s->text, &s->text_len, err);
    if (rc == NS_OK)
        rc = dump_resolve(o->tokenizer, NS_SWEEP_DEFAULT_TOKENIZER, "tokenizer", &s->tref, err);
    if (rc == NS_OK)
        rc = ns_tokenizer_load(s->tref.path, &s->tok, err);
    if (rc == NS_ERR_IO) /* a missing or unreadable input, found before any work: exit 2 */
        rc = err->code = NS_ERR_INVALID;
    NS_TRY(rc);
    NS_TRY(ns_corpus_from_text(s->text, s->text_len, o->text, o->cfg.strip_gutenberg, s->tok,
                               &s->corpus, err));
    size_t n = s->corpus.tokens.n;
    if (o->offset > n || o->length > n - o->offset)
        return ns_fail(err, NS_ERR_INVALID, "--offset %zu --length %zu: the window ends at token "
                       "%zu but %s has only %zu tokens%s", o->offset, o->length,
                       o->offset + o->length, o->text, n,
                       o->cfg.strip_gutenberg ? " without its Gutenberg header and licence" : "");
    snprintf(s->text_ref.name, sizeof s->text_ref.name, "path");
    snprintf(s->text_ref.path, sizeof s->text_ref.path, "%s", o->text);
    return ns_sha256_buffer(s->text, s->text_len, s->text_ref.sha256, err);
}

/* The plan of the window: L = length, the last row, every layer and head. */
static int make_plan(dump_opts *o, dump_run_state *s, ns_err *err)
{
    ns_sweep_config *cfg = &o->cfg;
    cfg->L_max = o->length;
    cfg->rows = 1;
    free(cfg->L);
    if (!(cfg->L = malloc(sizeof *cfg->L)))
        return ns_fail(err, NS_ERR_NOMEM, "out of memory");
    cfg->L[0] = o->length;
    cfg->nL = 1;
    NS_TRY(ns_sweep_expand_all(cfg, s->mc.n_layer, s->mc.n_head, err));
    ns_plan_grid g;
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

static int create_file(const dump_opts *o, dump_run_state *s, int argc, char **argv, ns_err *err)
{
    const ns_plan_grid *g = &s->plan.g;
    char model_sha[NS_SHA256_HEX_LEN + 1], when[32];
    NS_TRY(ns_model_sha256(s->model, model_sha, err)); /* of the mapped bytes used */
    /* the command as typed (the program's path, every word shell-quoted), as run records it */
    char *cmd = ns_cli_command_line(argc, argv, 1);
    if (!cmd)
        return ns_fail(err, NS_ERR_NOMEM, "out of memory");
    snprintf(s->mref.sha256, sizeof s->mref.sha256, "%s", model_sha);
    ns_iso_now(when, sizeof when);
    ns_nc_attr mattrs[NS_MODEL_ATTRS];
    char mbuf[512];
    size_t nm = ns_sweep_model_attrs(&s->mc, mattrs, mbuf, sizeof mbuf);
    ns_provenance prov = {
        .kind = "dump", .command_line = cmd, .start_time = when, .model = &s->mref,
        .tokenizer = &s->tref, .corpus = &s->text_ref,
        .model_requested = o->model ? o->model : NS_SWEEP_DEFAULT_MODEL, .mpi_size = 1,
        .model_attrs = mattrs, .n_model_attrs = nm,
        .strip_gutenberg = o->cfg.strip_gutenberg,
        .all_softmax_family = ns_topn_rank_is_T_free(&g->normalizers[0]), /* no view */
    };
    ns_nc_dump_meta meta = {
        .prov = &prov, .text_file = o->text, .text_sha256 = s->text_ref.sha256,
        .offset = o->offset, .text_tokens = s->corpus.tokens.n, .ln_eps = s->mc.norm_eps,
    };
    ns_normalizer_label(&g->normalizers[0], 0, s->norm_label, sizeof s->norm_label);
    ns_nc_dump_metrics m = {
        .N = g->N, .nN = g->nN, .T = g->T, .nT = g->nT, .eps = g->eps, .neps = g->neps,
        .jac_bound = s->jac_bound, .row = o->length - 1,
        .normalizer = s->norm_label,
        .normalizer_s = g->normalizers[0].kind == NS_NORM_SSMAX ? g->normalizers[0].s : NAN,
        .sphere = g->sphere, .seed = g->seed, .probes = g->probes,
    };
    ns_nc_dump_extras extras = {.logits = o->logits, .metrics = o->have_N ? &m : NULL};
    int rc = ns_nc_dump_create_ext(o->out, &meta, s->mc.n_layer, s->mc.n_head, o->length,
                                   s->mc.d_head, s->corpus.tokens.ids + o->offset, &extras,
                                   &s->dump, err);
    free(cmd);
    return rc;
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
static int check_out_paths(const dump_opts *o, const dump_run_state *s, ns_err *err)
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

/* The whole command after option parsing; returns an ns_status with err filled. hold: the
 * test-only hold (cli/ns_hold.h), at "temp" once the file's temporary exists. */
static int dump_run(dump_opts *o, ns_hold *hold, int argc, char **argv, ns_err *err)
{
    dump_run_state s;
    memset(&s, 0, sizeof s);
    s.logits = o->logits;
    s.out = o->out;
    s.stop = ns_cli_catch_stop();
    int rc;
    /* cheap checks first: the model's shape, the text, the window, the grid */
    if ((rc = check_out_dir(o->out, err)) || (rc = load_window(o, &s, err)) ||
        (rc = dump_resolve(o->model, NS_SWEEP_DEFAULT_MODEL, "model", &s.mref, err)) ||
        (rc = check_out_paths(o, &s, err)) ||
        (rc = ns_model_config_read(s.mref.path, &s.mc, err)) || (rc = make_plan(o, &s, err)))
        goto done;
    const ns_plan_grid *g = &s.plan.g;
    size_t H = g->nheads, B = g->nN > g->neps ? g->nN : g->neps;
    s.payload = malloc(s.plan.payload * sizeof *s.payload);
    s.slab = malloc((g->nT * (B ? B : 1) * H + H) * sizeof *s.slab);
    s.jac_bound = malloc(g->nT * sizeof *s.jac_bound);
    if (!s.payload || !s.slab || !s.jac_bound) {
        rc = ns_fail(err, NS_ERR_NOMEM, "out of memory");
        goto done;
    }
    for (size_t t = 0; t < g->nT; t++)
        s.jac_bound[t] = ns_jac_bound(g->T[t]);
    if ((rc = ns_model_load(s.mref.path, &s.model, err)) ||
        (rc = ns_rows_new(&s.plan, s.model, NS_KERNEL_FAST, NS_ROWS_ALL_ROWS, &s.rows, err)) ||
        (rc = create_file(o, &s, argc, argv, err)))
        goto done;
    ns_hold_at(hold, "temp", 0); /* test only: returns at once unless a test holds the dump */
    ns_rows_hooks hooks = {.layer = write_layer, .layer_user = &s};
    if ((rc = ns_rows_run(s.rows, 0, s.corpus.tokens.ids + o->offset, &hooks, s.payload, err)))
        goto done;
    if (o->have_N && (rc = write_metrics(&s, err)))
        goto done;
    rc = ns_nc_dump_close(s.dump, err);
    s.dump = NULL;
done:
    state_free(&s);
    return rc;
}

int ns_cmd_dump(int argc, char **argv)
{
    dump_opts o;
    memset(&o, 0, sizeof o);
    ns_err err;
    ns_err_clear(&err);
    int status = NS_EXIT_OK;
    int rc = ns_sweep_config_init(&o.cfg, &err);
    if (rc == NS_OK)
        rc = dump_parse(argc, argv, &o, &err);
    if (rc == -1)
        dump_usage(stdout);
    else if (rc != NS_OK)
        status = ns_cli_report("dump", &err);
    else {
        ns_hold hold; /* test only: NORMSWEEP_TEST_HOLD=temp */
        if (ns_hold_init(&hold, "dump", ns_cli_catch_stop()) != 0) {
            ns_sweep_config_free(&o.cfg);
            return NS_EXIT_USAGE;
        }
        ns_cli_tmp_watch("dump", o.out); /* stale temporaries of --out go; ours at exit */
        if ((rc = dump_run(&o, &hold, argc, argv, &err)) != NS_OK) {
            ns_cli_name_signal(&err, *ns_cli_catch_stop());
            status = ns_cli_report("dump", &err);
        }
    }
    ns_sweep_config_free(&o.cfg);
    return status;
}

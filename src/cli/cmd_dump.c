/* cmd_dump: `normsweep dump`: tokenize a text, run one forward pass over a window of its tokens and
 * write that window's attention weights and value vectors to NetCDF (tokenizer -> model -> io). */
#include "config.h"

#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/ns_analysis.h"
#include "assets/ns_assets.h"
#include "cli/ns_cli.h"
#include "common/ns_file.h"
#include "common/ns_sha256.h"
#include "io/ns_nc_dump.h"
#include "model/ns_gpt2.h"
#include "tokenizer/ns_tokenizer.h"

static void dump_usage(FILE *out)
{
    fprintf(out,
            "Usage: normsweep dump --text FILE --offset TOK --length L --out OUT.nc\n"
            "                      [--model DIR|NAME] [--tokenizer DIR|NAME] [--logits]\n"
            "                      [--N n1,n2,.. [--T t1,..] [--eps e1,..] [--normalizer NAME]\n"
            "                       [--s S] [--sphere true|false] [--seed S] [--probes P]]\n"
            "\n"
            "Tokenizes the whole of FILE (GPT-2 BPE), takes tokens [TOK, TOK+L), runs one causal\n"
            "forward pass and writes OUT.nc (NetCDF-4): token_id(position),\n"
            "attention_weight(layer, head, query, key) (softmax weights, 0 above the diagonal) and\n"
            "value(layer, head, position, dim), with the model, text and window as attributes.\n"
            "The file is written under a temporary name and renamed when complete.\n"
            "\n"
            "  --text FILE        text to tokenize (all of it: TOK counts tokens of the whole file)\n"
            "  --offset TOK       first token of the window (0-based)\n"
            "  --length L         tokens in the window (1 .. the model's n_ctx)\n"
            "  --out OUT.nc       output file (replaced if it exists)\n"
            "  --model DIR|NAME   model directory (config.json + model.safetensors) or asset name\n"
            "                     (default: gpt2, which falls back to gpt2-standin offline)\n"
            "  --tokenizer DIR|NAME  tokenizer directory (encoder.json + vocab.bpe or vocab.json +\n"
            "                     merges.txt) or asset name (default: tokenizer)\n"
            "  --logits           also write logit(layer, head, query, key): the float32 pre-softmax\n"
            "                     scores the metrics start from (NaN above the diagonal)\n"
            "\n"
            "Metrics (METRICS.md) of the last row (query L-1, L keys) of every (layer, head), written\n"
            "when --N is given: distance, distance_d1, distance_bound, distance_expected,\n"
            "distance_random, ns_frac, ns_lower, ns_upper (T, N, layer, head); delta (layer, head);\n"
            "jac_exact, jac_lemma2 (T, layer, head); jac_bound (T); jac_fd (T, eps, layer, head).\n"
            "Doubles, NaN = missing (e.g. N >= L). Lists are comma-separated, sorted on output.\n"
            "  --N LIST           top-N sizes, each >= 1\n"
            "  --T LIST           temperatures, each > 0 (default 1)\n"
            "  --eps LIST         finite-difference steps for jac_fd, each > 0 (default 1e-3)\n"
            "  --normalizer NAME  softmax (default), ssmax, sparsemax or entmax15\n"
            "  --s S              ssmax parameter (> 0; required by ssmax, only for ssmax)\n"
            "  --sphere true|false  scale every value vector to norm 1 (default true)\n"
            "  --seed S           key of the counter-based generator for distance_random and the\n"
            "                     jac_fd probes (default 0)\n"
            "  --probes P         random probe directions for jac_fd (default 8, at most 4096)\n"
            "  -h, --help         this help\n"
            "\n"
            "Exit codes: 0 written, 1 runtime failure, 2 bad options or input (nothing written).\n");
}

/* ---- layer callbacks: the forward pass feeds every sink in order ---- */

/* One consumer of the per-layer attention views (the NetCDF writer; later e.g. metrics). */
typedef struct dump_sink {
    ns_attn_layer_fn fn;
    void *user;
} dump_sink;

#define DUMP_MAX_SINKS 4

typedef struct dump_dispatch {
    dump_sink sinks[DUMP_MAX_SINKS];
    size_t n;
} dump_dispatch;

static void dump_dispatch_add(dump_dispatch *d, ns_attn_layer_fn fn, void *user)
{
    if (d->n < DUMP_MAX_SINKS)
        d->sinks[d->n++] = (dump_sink){fn, user};
}

static int dump_dispatch_layer(void *user, const ns_attn_layer_view *view, ns_err *err)
{
    const dump_dispatch *d = user;
    for (size_t i = 0; i < d->n; i++)
        NS_TRY(d->sinks[i].fn(d->sinks[i].user, view, err));
    return NS_OK;
}

/* Sink: write the layer to the dump file. */
static int dump_write_layer(void *user, const ns_attn_layer_view *view, ns_err *err)
{
    return ns_nc_dump_write_layer(user, view->layer, view->weights, view->values, err);
}

/* Sink: write the layer's logits (--logits). */
static int dump_write_logits(void *user, const ns_attn_layer_view *view, ns_err *err)
{
    return ns_nc_dump_write_logits(user, view->layer, view->logits, err);
}

/* Sink: METRICS.md metrics of the last row of every head of the layer (--N). */
typedef struct dump_metrics {
    const ns_analysis_params *p;
    ns_row_layout lay;
    ns_analysis_ws *ws;
    double *rows;      /* (H, lay.total): one result row per head */
    double *slab;      /* (nT * max(nN, neps) * H): one variable's slab for the layer */
    ns_nc_dump *dump;
} dump_metrics;

static int dump_metrics_layer(void *user, const ns_attn_layer_view *view, ns_err *err)
{
    dump_metrics *dm = user;
    const ns_analysis_params *p = dm->p;
    const ns_row_layout *lay = &dm->lay;
    size_t H = view->n_head, D = view->d_head, L = view->L, C = H * D, m = L - 1;
    for (size_t h = 0; h < H; h++) {
        ns_head_input in = {
            .logits = view->logits + h * L * L, .logits_ld = L,   /* (L, L) of head h */
            .values = view->values + h * D, .values_ld = C,       /* (L, C), head h at h*D */
            .L_max = L, .d = D,
        };
        ns_head_key key = {.shard = 0, .layer = (uint32_t)view->layer, .head = (uint32_t)h};
        NS_TRY(ns_analyze_head(p, &key, &in, &m, 1, dm->ws, dm->rows + h * lay->total, err));
    }
    size_t nvars;
    const ns_nc_dump_metric_var *vars = ns_nc_dump_metric_vars(&nvars);
    for (size_t k = 0; k < nvars; k++) {
        int id = 0;
        while (id < NS_M_COUNT && strcmp(ns_metric_name((ns_metric_id)id), vars[k].name) != 0)
            id++;
        static const ns_nc_dump_shape io_shape[] = {
            [NS_SHAPE_TN] = NS_NC_DUMP_TN, [NS_SHAPE_SCALAR] = NS_NC_DUMP_LH,
            [NS_SHAPE_T] = NS_NC_DUMP_T, [NS_SHAPE_TE] = NS_NC_DUMP_TE,
        };
        if (id == NS_M_COUNT || io_shape[ns_metric_shape_of((ns_metric_id)id)] != vars[k].shape)
            return ns_fail(err, NS_ERR_INVALID,
                           "dump metrics: the analysis has no metric '%s' of the dump's shape",
                           vars[k].name);
        /* analysis row layout (per head) -> the variable's (..., head) slab */
        size_t inner = lay->size[id], off = lay->offset[id];
        for (size_t j = 0; j < inner; j++)
            for (size_t h = 0; h < H; h++)
                dm->slab[j * H + h] = dm->rows[h * lay->total + off + j];
        NS_TRY(ns_nc_dump_write_metric(dm->dump, vars[k].name, view->layer, dm->slab, err));
    }
    return NS_OK;
}

/* ---- options ---- */

typedef struct dump_opts {
    const char *model, *tokenizer, *text, *out;
    size_t offset, length;
    int have_offset, have_length;
    int logits;                  /* --logits */
    /* metrics (--N and friends); lists are owned (free with dump_opts_free) */
    size_t *N;   size_t nN;
    double *T;   size_t nT;
    double *eps; size_t neps;
    const char *metric_opt;      /* first metric option seen, for "needs --N" */
    ns_normalizer normalizer;
    int have_s;
    int sphere;
    unsigned long long seed;
    size_t probes;
} dump_opts;

#define DUMP_MAX_PROBES 4096

static void dump_opts_free(dump_opts *o)
{
    free(o->N);
    free(o->T);
    free(o->eps);
    o->N = NULL;
    o->T = o->eps = NULL;
}

static int parse_size(const char *opt, const char *s, size_t *out, ns_err *err)
{
    char *end = NULL;
    if (!s || !*s || *s == '-' || *s == '+')
        return ns_fail(err, NS_ERR_INVALID, "%s: expected a non-negative integer, got '%s'", opt,
                       s ? s : "");
    unsigned long long v = strtoull(s, &end, 10);
    if (*end != '\0' || v > SIZE_MAX / 2)
        return ns_fail(err, NS_ERR_INVALID, "%s: expected a non-negative integer, got '%s'", opt, s);
    *out = (size_t)v;
    return NS_OK;
}

static int cmp_size(const void *a, const void *b)
{
    size_t x = *(const size_t *)a, y = *(const size_t *)b;
    return (x > y) - (x < y);
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* Split a comma-separated list: count the items; an empty list or an empty item is an error. */
static int list_count(const char *opt, const char *s, size_t *n, ns_err *err)
{
    if (!*s)
        return ns_fail(err, NS_ERR_INVALID, "%s: empty list", opt);
    size_t k = 1;
    for (const char *c = s; *c; c++)
        if (*c == ',') {
            if (c == s || c[1] == ',' || c[1] == '\0')
                return ns_fail(err, NS_ERR_INVALID, "%s: empty item in '%s'", opt, s);
            k++;
        }
    *n = k;
    return NS_OK;
}

/* --N: positive integers, sorted ascending, no repeats. */
static int parse_size_list(const char *opt, const char *s, size_t **out, size_t *nout, ns_err *err)
{
    size_t n;
    NS_TRY(list_count(opt, s, &n, err));
    size_t *v = malloc(n * sizeof *v);
    if (!v)
        return ns_fail(err, NS_ERR_NOMEM, "%s: out of memory", opt);
    const char *c = s;
    for (size_t k = 0; k < n; k++) {
        char *end = NULL;
        unsigned long long x = 0;
        int ok = *c >= '0' && *c <= '9';
        if (ok) {
            x = strtoull(c, &end, 10);
            ok = (*end == ',' || *end == '\0') && x <= SIZE_MAX / 2;
        }
        if (!ok) {
            size_t len = strcspn(c, ",");
            free(v);
            return ns_fail(err, NS_ERR_INVALID, "%s: expected integers >= 1 separated by commas, "
                           "got '%.*s' in '%s'", opt, (int)len, c, s);
        }
        if (x < 1) {
            free(v);
            return ns_fail(err, NS_ERR_INVALID, "%s: every N must be >= 1, got %llu", opt, x);
        }
        v[k] = (size_t)x;
        c = *end ? end + 1 : end;
    }
    qsort(v, n, sizeof *v, cmp_size);
    for (size_t k = 1; k < n; k++)
        if (v[k] == v[k - 1]) {
            size_t dup = v[k];
            free(v);
            return ns_fail(err, NS_ERR_INVALID, "%s: %zu appears more than once", opt, dup);
        }
    free(*out);
    *out = v;
    *nout = n;
    return NS_OK;
}

/* --T, --eps: finite numbers > 0, sorted ascending, no repeats. */
static int parse_double_list(const char *opt, const char *name, const char *s, double **out,
                             size_t *nout, ns_err *err)
{
    size_t n;
    NS_TRY(list_count(opt, s, &n, err));
    double *v = malloc(n * sizeof *v);
    if (!v)
        return ns_fail(err, NS_ERR_NOMEM, "%s: out of memory", opt);
    const char *c = s;
    for (size_t k = 0; k < n; k++) {
        char *end = NULL;
        size_t len = strcspn(c, ",");
        double x = strtod(c, &end);
        if (end == c || (*end != ',' && *end != '\0') || (size_t)(end - c) != len) {
            free(v);
            return ns_fail(err, NS_ERR_INVALID, "%s: expected numbers separated by commas, got "
                           "'%.*s' in '%s'", opt, (int)len, c, s);
        }
        if (!(x > 0.0) || !isfinite(x)) {
            free(v);
            return ns_fail(err, NS_ERR_INVALID, "%s: every %s must be finite and > 0, got '%.*s'",
                           opt, name, (int)len, c);
        }
        v[k] = x;
        c = *end ? end + 1 : end;
    }
    qsort(v, n, sizeof *v, cmp_double);
    for (size_t k = 1; k < n; k++)
        if (v[k] == v[k - 1]) {
            double dup = v[k];
            free(v);
            return ns_fail(err, NS_ERR_INVALID, "%s: %g appears more than once", opt, dup);
        }
    free(*out);
    *out = v;
    *nout = n;
    return NS_OK;
}

static int parse_positive_double(const char *opt, const char *s, double *out, ns_err *err)
{
    char *end = NULL;
    double x = strtod(s, &end);
    if (end == s || *end != '\0' || !(x > 0.0) || !isfinite(x))
        return ns_fail(err, NS_ERR_INVALID, "%s: expected a finite number > 0, got '%s'", opt, s);
    *out = x;
    return NS_OK;
}

/* Defaults of the metric options that the user did not give, and their consistency. */
static int dump_metric_defaults(dump_opts *o, ns_err *err)
{
    if (!o->N) {
        if (o->metric_opt)
            return ns_fail(err, NS_ERR_INVALID,
                           "%s needs --N (metrics are computed only when --N is given)",
                           o->metric_opt);
        return NS_OK;
    }
    if (o->normalizer.kind == NS_NORM_SSMAX && !o->have_s)
        return ns_fail(err, NS_ERR_INVALID, "--normalizer ssmax needs its parameter --s S");
    if (o->normalizer.kind != NS_NORM_SSMAX && o->have_s)
        return ns_fail(err, NS_ERR_INVALID, "--s applies only to --normalizer ssmax, not to %s",
                       ns_normalizer_name(o->normalizer.kind));
    if (!o->T && !(o->T = malloc(sizeof *o->T)))
        return ns_fail(err, NS_ERR_NOMEM, "out of memory");
    if (o->nT == 0) {
        o->T[0] = 1.0;
        o->nT = 1;
    }
    if (!o->eps && !(o->eps = malloc(sizeof *o->eps)))
        return ns_fail(err, NS_ERR_NOMEM, "out of memory");
    if (o->neps == 0) {
        o->eps[0] = 1e-3;
        o->neps = 1;
    }
    return NS_OK;
}

/* Returns NS_OK, NS_ERR_INVALID (message in err) or -1 for --help. */
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
        {NULL, 0, NULL, 0},
    };
    memset(o, 0, sizeof *o);
    o->normalizer.kind = NS_NORM_SOFTMAX;
    o->sphere = 1;
    o->probes = 8;
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
            NS_TRY(parse_size("--offset", optarg, &o->offset, err));
            o->have_offset = 1;
            break;
        case 'l':
            NS_TRY(parse_size("--length", optarg, &o->length, err));
            o->have_length = 1;
            break;
        case 'h': return -1;
        case 256: o->logits = 1; break;
        case 257: NS_TRY(parse_size_list("--N", optarg, &o->N, &o->nN, err)); break;
        case 258:
            NS_TRY(parse_double_list("--T", "T", optarg, &o->T, &o->nT, err));
            o->metric_opt = o->metric_opt ? o->metric_opt : "--T";
            break;
        case 259:
            NS_TRY(parse_double_list("--eps", "eps", optarg, &o->eps, &o->neps, err));
            o->metric_opt = o->metric_opt ? o->metric_opt : "--eps";
            break;
        case 260: {
            ns_err e2;
            if (ns_normalizer_parse(optarg, &o->normalizer.kind, &e2) != NS_OK)
                return ns_fail(err, NS_ERR_INVALID, "--normalizer: unknown normalizer '%s' "
                               "(expected softmax, ssmax, sparsemax or entmax15)", optarg);
            o->metric_opt = o->metric_opt ? o->metric_opt : "--normalizer";
            break;
        }
        case 261:
            NS_TRY(parse_positive_double("--s", optarg, &o->normalizer.s, err));
            o->have_s = 1;
            o->metric_opt = o->metric_opt ? o->metric_opt : "--s";
            break;
        case 262:
            if (strcmp(optarg, "true") == 0)
                o->sphere = 1;
            else if (strcmp(optarg, "false") == 0)
                o->sphere = 0;
            else
                return ns_fail(err, NS_ERR_INVALID, "--sphere: expected true or false, got '%s'",
                               optarg);
            o->metric_opt = o->metric_opt ? o->metric_opt : "--sphere";
            break;
        case 263: {
            char *end = NULL;
            errno = 0;
            o->seed = strtoull(optarg, &end, 10);
            if (*optarg < '0' || *optarg > '9' || *end != '\0' || errno == ERANGE)
                return ns_fail(err, NS_ERR_INVALID,
                               "--seed: expected an integer in [0, 2^64), got '%s'", optarg);
            o->metric_opt = o->metric_opt ? o->metric_opt : "--seed";
            break;
        }
        case 264:
            NS_TRY(parse_size("--probes", optarg, &o->probes, err));
            if (o->probes > DUMP_MAX_PROBES)
                return ns_fail(err, NS_ERR_INVALID, "--probes: at most %d, got %zu",
                               DUMP_MAX_PROBES, o->probes);
            o->metric_opt = o->metric_opt ? o->metric_opt : "--probes";
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
    const char *missing = !o->text ? "--text" : !o->have_offset ? "--offset"
                        : !o->have_length ? "--length" : !o->out ? "--out" : NULL;
    if (missing)
        return ns_fail(err, NS_ERR_INVALID, "missing %s (see normsweep dump --help)", missing);
    if (o->length == 0)
        return ns_fail(err, NS_ERR_INVALID, "--length must be at least 1");
    return dump_metric_defaults(o, err);
}

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
    int rc = ns_assets_resolve(arg ? arg : dflt, kind, 1, ref, err);
    if (rc != NS_OK)
        ns_err_prefix(err, "--%s %s", kind, arg ? arg : dflt);
    return rc;
}

static char *join_argv(int argc, char **argv)
{
    size_t n = sizeof "normsweep";
    for (int i = 0; i < argc; i++)
        n += strlen(argv[i]) + 1;
    char *s = malloc(n);
    if (!s)
        return NULL;
    strcpy(s, "normsweep");
    for (int i = 0; i < argc; i++) {
        strcat(s, " ");
        strcat(s, argv[i]);
    }
    return s;
}

/* The whole command after option parsing; returns an ns_status with err filled. */
static int dump_run(const dump_opts *o, int argc, char **argv, ns_err *err)
{
    int rc = NS_OK;
    ns_asset_ref mref, tref;
    ns_gpt2_config cfg;
    ns_tokenizer *tok = NULL;
    ns_tokens tokens = {0};
    char *text = NULL, *model_file = NULL, *cmdline = NULL;
    size_t text_len = 0;
    ns_gpt2_model *model = NULL;
    ns_gpt2_workspace *ws = NULL;
    ns_nc_dump *dump = NULL;
    char model_sha[NS_SHA256_HEX_LEN + 1], text_sha[NS_SHA256_HEX_LEN + 1];
    /* metrics (--N) */
    ns_analysis_params ap = {0};
    dump_metrics dm = {0};
    double *jac_bound = NULL;

    /* cheap checks first: model shape, text, tokenizer */
    if ((rc = dump_resolve(o->model, "gpt2", "model", &mref, err)))
        goto done;
    if ((rc = ns_gpt2_config_read(mref.path, &cfg, err)))
        goto done;
    if (o->length > cfg.n_ctx) {
        rc = ns_fail(err, NS_ERR_INVALID, "--length %zu exceeds the model's n_ctx=%zu (%s)",
                     o->length, cfg.n_ctx, mref.path);
        goto done;
    }
    if ((rc = ns_file_read_all(o->text, 0, &text, &text_len, err)))
        goto done;
    if ((rc = dump_resolve(o->tokenizer, "tokenizer", "tokenizer", &tref, err)))
        goto done;
    if ((rc = ns_tokenizer_load(tref.path, &tok, err)))
        goto done;
    if ((rc = ns_tokenizer_encode(tok, text, text_len, &tokens, err)))
        goto done;
    if (o->offset > tokens.n || o->length > tokens.n - o->offset) {
        rc = ns_fail(err, NS_ERR_INVALID,
                     "--offset %zu --length %zu: the window ends at token %zu but %s has only %zu "
                     "tokens", o->offset, o->length, o->offset + o->length, o->text, tokens.n);
        goto done;
    }

    /* provenance */
    model_file = ns_path_join(mref.path, "model.safetensors");
    cmdline = join_argv(argc, argv);
    if (!model_file || !cmdline) {
        rc = ns_fail(err, NS_ERR_NOMEM, "out of memory");
        goto done;
    }
    if ((rc = ns_sha256_file(model_file, model_sha, err)))
        goto done;
    if ((rc = ns_sha256_buffer(text, text_len, text_sha, err)))
        goto done;

    /* the forward pass, feeding the dump file layer by layer */
    if ((rc = ns_gpt2_load(mref.path, &model, err)))
        goto done;
    if ((rc = ns_gpt2_workspace_new(model, o->length, &ws, err)))
        goto done;
    size_t H = cfg.n_head, D = cfg.n_embd / cfg.n_head;
    ns_nc_dump_metrics mdesc;
    if (o->N) {
        ap = (ns_analysis_params){
            .N = o->N, .nN = o->nN, .T = o->T, .nT = o->nT, .eps = o->eps, .neps = o->neps,
            .normalizer = o->normalizer, .sphere = o->sphere, .probes = (unsigned)o->probes,
            .seed = o->seed,
        };
        dm.p = &ap;
        ns_row_layout_init(&dm.lay, o->nT, o->nN, o->neps);
        size_t slab = o->nT * (o->nN > o->neps ? o->nN : o->neps) * H;
        dm.rows = malloc(H * dm.lay.total * sizeof *dm.rows);
        dm.slab = malloc(slab * sizeof *dm.slab);
        jac_bound = malloc(o->nT * sizeof *jac_bound);
        if (!dm.rows || !dm.slab || !jac_bound) {
            rc = ns_fail(err, NS_ERR_NOMEM, "out of memory");
            goto done;
        }
        for (size_t t = 0; t < o->nT; t++)
            jac_bound[t] = ns_jac_bound(o->T[t]);
        if ((rc = ns_analysis_ws_new(&ap, o->length, D, &dm.ws, err)))
            goto done;
        int softmax_family =
            o->normalizer.kind == NS_NORM_SOFTMAX || o->normalizer.kind == NS_NORM_SSMAX;
        mdesc = (ns_nc_dump_metrics){
            .N = o->N, .nN = o->nN, .T = o->T, .nT = o->nT, .eps = o->eps, .neps = o->neps,
            .jac_bound = jac_bound, .row = o->length - 1,
            .normalizer = ns_normalizer_name(o->normalizer.kind),
            .normalizer_s = o->normalizer.kind == NS_NORM_SSMAX ? o->normalizer.s : NAN,
            .sphere = o->sphere, .seed = o->seed, .probes = (unsigned)o->probes,
            .ranking_rule = softmax_family
                ? "I_N = indices of the N largest alpha_i = F(z/T), ranked by the exact "
                  "log-weight c z_i (c = 1/T, or s log(L)/T for ssmax): the order of alpha "
                  "wherever alpha is representable, unaffected by underflow at small T"
                : "I_N = indices of the N largest alpha_i = F(z/T), ranked by alpha itself "
                  "(weights outside the support are 0 and tie, so they follow by index)",
        };
    }
    ns_nc_dump_extras extras = {.logits = o->logits, .metrics = o->N ? &mdesc : NULL};
    const int32_t *window = tokens.ids + o->offset;
    ns_nc_dump_meta meta = {
        .model_dir = mref.path, .model_requested = o->model ? o->model : "gpt2",
        .model_used = mref.name[0] ? mref.name : NULL, .model_sha256 = model_sha, .tokenizer_dir = tref.path,
        .text_file = o->text, .text_sha256 = text_sha,
        .software = PACKAGE_VERSION " (git " NS_GIT_COMMIT ")", .command_line = cmdline,
        .offset = o->offset, .text_tokens = tokens.n, .ln_eps = cfg.ln_eps,
    };
    if ((rc = ns_nc_dump_create_ext(o->out, &meta, cfg.n_layer, H, o->length, D, window,
                                    &extras, &dump, err)))
        goto done;
    dump_dispatch dispatch = {.n = 0};
    dump_dispatch_add(&dispatch, dump_write_layer, dump);
    if (o->logits)
        dump_dispatch_add(&dispatch, dump_write_logits, dump);
    if (o->N) {
        dm.dump = dump;
        dump_dispatch_add(&dispatch, dump_metrics_layer, &dm);
    }
    if ((rc = ns_gpt2_forward(model, ws, window, o->length, dump_dispatch_layer, &dispatch, err)))
        goto done;
    rc = ns_nc_dump_close(dump, err);
    dump = NULL;

done:
    ns_nc_dump_abort(dump);
    ns_analysis_ws_free(dm.ws);
    free(dm.rows);
    free(dm.slab);
    free(jac_bound);
    ns_gpt2_workspace_free(ws);
    ns_gpt2_free(model);
    ns_tokens_free(&tokens);
    ns_tokenizer_free(tok);
    free(text);
    free(model_file);
    free(cmdline);
    return rc;
}

int ns_cmd_dump(int argc, char **argv)
{
    dump_opts o;
    ns_err err;
    ns_err_clear(&err);
    int rc = dump_parse(argc, argv, &o, &err);
    int status = NS_EXIT_OK;
    if (rc == -1)
        dump_usage(stdout);
    else if (rc != NS_OK)
        status = ns_cli_report("dump", &err);
    else if ((rc = dump_run(&o, argc, argv, &err)) != NS_OK)
        status = ns_cli_report("dump", &err);
    dump_opts_free(&o);
    return status;
}

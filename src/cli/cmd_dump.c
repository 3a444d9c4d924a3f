/* cmd_dump: `normsweep dump`: its options and --help; the run is one library call
 * (dump/ns_dump_run: one window of a text through the same stages as a sweep, written to NetCDF
 * with the window's attention weights and value vectors), whose error this prints with its exit
 * code. */
#include "config.h"

#include <getopt.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/ns_cli.h"
#include "cli/ns_hold.h"
#include "dump/ns_dump_run.h"
#include "spec/ns_list.h"
#include "spec/ns_sweep_config.h"

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
    ns_dump_options run;         /* what the run is given (run.metrics: --N given) */
    int have_offset, have_length, have_s;
    int have_b, have_alpha;      /* --b, --alpha given (into prm_b, prm_alpha) */
    double prm_b, prm_alpha;
    const char *metric_opt;      /* first metric option seen, for "needs --N" */
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
    ns_sweep_config *cfg = &o->run.cfg;
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
    const char *missing = !o->run.text ? "--text" : !o->have_offset ? "--offset"
                        : !o->have_length ? "--length" : !o->run.out ? "--out" : NULL;
    if (missing)
        return ns_fail(err, NS_ERR_INVALID, "missing %s (see normsweep dump --help)", missing);
    if (!o->run.metrics && o->metric_opt)
        return ns_fail(err, NS_ERR_INVALID,
                       "%s needs --N (metrics are computed only when --N is given)", o->metric_opt);
    ns_normalizer *f = &o->run.cfg.normalizers[0];
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
        case 'm': o->run.model = optarg; break;
        case 'k': o->run.tokenizer = optarg; break;
        case 't': o->run.text = optarg; break;
        case 'O': o->run.out = optarg; break;
        case 'o':
            NS_TRY(parse_size("--offset", &r_offset, optarg, &o->run.offset, err));
            o->have_offset = 1;
            break;
        case 'l':
            NS_TRY(parse_size("--length", &ns_plan_range_L, optarg, &o->run.length, err));
            o->have_length = 1;
            break;
        case 'h': return -1;
        case 256: o->run.logits = 1; break;
        case 257:
            NS_TRY(ns_list_parse("--N", &ns_plan_range_N, optarg, &o->run.cfg.N, NULL,
                                 &o->run.cfg.nN, err));
            o->run.metrics = 1;
            break;
        case 258: case 259: case 260: case 261: case 262: case 263: case 264: case 266: case 267:
            NS_TRY(parse_metric_opt(o, c, optarg, err));
            break;
        case 265:
            NS_TRY(parse_bool("--strip-gutenberg", optarg, &o->run.cfg.strip_gutenberg, err));
            break;
        case 268:
            o->run.cfg.normalizers[0].view = NS_VIEW_SINK_EXCLUDED;
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

int ns_cmd_dump(int argc, char **argv)
{
    dump_opts o;
    memset(&o, 0, sizeof o);
    ns_err err;
    ns_err_clear(&err);
    int status = NS_EXIT_OK;
    int rc = ns_sweep_config_init(&o.run.cfg, &err);
    if (rc == NS_OK)
        rc = dump_parse(argc, argv, &o, &err);
    if (rc == -1)
        dump_usage(stdout);
    else if (rc != NS_OK)
        status = ns_cli_report("dump", &err);
    else {
        ns_hold hold; /* test only: NORMSWEEP_TEST_HOLD=temp */
        ns_hooks hooks = {.line = ns_cli_log_line};
        if (ns_hold_setup(&hold, "dump", ns_cli_catch_stop(), &hooks) != 0) {
            ns_sweep_config_free(&o.run.cfg);
            return NS_EXIT_USAGE;
        }
        ns_cli_tmp_watch("dump", o.run.out); /* stale temporaries of --out go; ours at exit */
        /* the command as typed (the program's path, every word shell-quoted), as run records it */
        char *cmd = ns_cli_command_line(argc, argv, 1);
        o.run.command_line = cmd;
        rc = cmd ? ns_dump_run(&o.run, &hooks, &err)
                 : ns_fail(&err, NS_ERR_NOMEM, "out of memory");
        if (rc != NS_OK) {
            ns_cli_name_signal(&err, *ns_cli_catch_stop());
            status = ns_cli_report("dump", &err);
        }
        free(cmd);
    }
    ns_sweep_config_free(&o.run.cfg);
    return status;
}

/* cmd_dump: `normsweep dump`: tokenize a text, run one forward pass over a window of its tokens and
 * write that window's attention weights and value vectors to NetCDF (tokenizer -> model -> io). */
#include "config.h"

#include <getopt.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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
            "                      [--model DIR|NAME] [--tokenizer DIR|NAME]\n"
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

/* ---- options ---- */

typedef struct dump_opts {
    const char *model, *tokenizer, *text, *out;
    size_t offset, length;
    int have_offset, have_length;
} dump_opts;

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

/* Returns NS_OK, NS_ERR_INVALID (message in err) or -1 for --help. */
static int dump_parse(int argc, char **argv, dump_opts *o, ns_err *err)
{
    static const struct option longopts[] = {
        {"model", required_argument, NULL, 'm'},  {"tokenizer", required_argument, NULL, 'k'},
        {"text", required_argument, NULL, 't'},   {"offset", required_argument, NULL, 'o'},
        {"length", required_argument, NULL, 'l'}, {"out", required_argument, NULL, 'O'},
        {"help", no_argument, NULL, 'h'},         {NULL, 0, NULL, 0},
    };
    memset(o, 0, sizeof *o);
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
    return NS_OK;
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
    const int32_t *window = tokens.ids + o->offset;
    ns_nc_dump_meta meta = {
        .model_dir = mref.path, .model_requested = o->model ? o->model : "gpt2",
        .model_used = mref.name[0] ? mref.name : NULL, .model_sha256 = model_sha, .tokenizer_dir = tref.path,
        .text_file = o->text, .text_sha256 = text_sha,
        .software = PACKAGE_VERSION " (git " NS_GIT_COMMIT ")", .command_line = cmdline,
        .offset = o->offset, .text_tokens = tokens.n, .ln_eps = cfg.ln_eps,
    };
    if ((rc = ns_nc_dump_create(o->out, &meta, cfg.n_layer, cfg.n_head, o->length,
                                cfg.n_embd / cfg.n_head, window, &dump, err)))
        goto done;
    dump_dispatch dispatch = {.n = 0};
    dump_dispatch_add(&dispatch, dump_write_layer, dump);
    /* further sinks (per-row metrics) are added here */
    if ((rc = ns_gpt2_forward(model, ws, window, o->length, dump_dispatch_layer, &dispatch, err)))
        goto done;
    rc = ns_nc_dump_close(dump, err);
    dump = NULL;

done:
    ns_nc_dump_abort(dump);
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
    if (rc == -1) {
        dump_usage(stdout);
        return NS_EXIT_OK;
    }
    if (rc != NS_OK)
        return ns_cli_report("dump", &err);
    rc = dump_run(&o, argc, argv, &err);
    if (rc != NS_OK)
        return ns_cli_report("dump", &err);
    return NS_EXIT_OK;
}

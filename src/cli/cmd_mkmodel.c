/* cmd_mkmodel: the `normsweep mkmodel` subcommand: write a random-weight model directory in the
 * Hugging Face layout -- GPT-2, the Llama layout (llama, qwen2, mistral) or GPT-NeoX. */
#include <ctype.h>
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/ns_cli.h"
#include "cli/ns_hold.h"
#include "common/ns_file.h"
#include "common/ns_range.h"
#include "model/ns_mkmodel.h"

static void usage(FILE *out)
{
    fprintf(out,
            "Usage: normsweep mkmodel [--arch ARCH] (--preset NAME | --layers N --heads N --embd N\n"
            "                         --ctx N --vocab N) [--inner N] [--kv-heads N] [--head-dim N]\n"
            "                         [--seed S] [--dtype f32|f16|bf16] [--shards K] [OPTIONS]\n"
            "                         --out DIR\n"
            "\n"
            "Write DIR/config.json and the weights (DIR/model.safetensors, or --shards K files and\n"
            "DIR/model.safetensors.index.json): a model with random weights in the Hugging Face\n"
            "layout, deterministic for a seed. GPT-2: GPT-2's initialisation (weights N(0, 0.02),\n"
            "c_proj weights scaled by 1/sqrt(2 n_layer), zero biases, LayerNorm weight 1, bias 0).\n"
            "Llama layout and GPT-NeoX: Hugging Face's (weights N(0, initializer_range), zero\n"
            "biases, norm gains 1), or with --init full every bias and norm parameter random too.\n"
            "config.json carries the keys and values the released models' configs carry.\n"
            "\n"
            "Options:\n"
            "  --arch ARCH     gpt2 (default), llama, qwen2, mistral or gpt-neox (the preset's when\n"
            "                  only --preset is given)\n"
            "  --preset NAME   gpt2 | gpt2-medium | gpt2-large | gpt2-xl; smollm2-135m (llama),\n"
            "                  qwen2.5-0.5b (qwen2), pythia-70m | pythia-160m (gpt-neox): the sizes\n"
            "                  of the released models; the size options below override single values\n"
            "  --layers N      number of transformer blocks\n"
            "  --heads N       attention (query) heads per block\n"
            "  --embd N        model width (hidden size)\n"
            "  --ctx N         positions (n_positions / max_position_embeddings)\n"
            "  --vocab N       vocabulary size\n"
            "  --inner N       MLP width (default 4 * embd)\n"
            "  --kv-heads N    key/value heads (grouped-query attention; llama, qwen2, mistral;\n"
            "                  default --heads)\n"
            "  --head-dim N    head dimension (llama, qwen2, mistral; default embd / heads)\n"
            "  --rope-theta X  rotary base (default 10000, presets their own)\n"
            "  --rotary-pct P  gpt-neox: rotated fraction of each head (default 0.25)\n"
            "  --parallel-residual true|false  gpt-neox (default true)\n"
            "  --attention-bias true|false     llama: q/k/v/o biases; gpt-neox: attention biases\n"
            "  --mlp-bias true|false           llama: MLP biases (default false)\n"
            "  --tied true|false               tie_word_embeddings (no lm_head / embed_out tensor)\n"
            "  --init hf|full  full: every bias and norm parameter random too (to validate each\n"
            "                  convention; default hf)\n"
            "  --init-std S    weights N(0, S), written as initializer_range (default 0.02)\n"
            "  --shards K      write K shards and model.safetensors.index.json (default 1: one file)\n"
            "  --seed S        generator seed, 0..2^64-1 (default 0)\n"
            "  --dtype T       f32 (default), f16 or bf16\n"
            "  --out DIR       output directory (created; existing files are replaced atomically)\n"
            "  -h, --help      show this help\n"
            "\n"
            "Exit status: 0 written, 1 runtime failure, 2 bad options (nothing written).\n");
}

enum {
    O_PRESET = 256, O_LAYERS, O_HEADS, O_EMBD, O_CTX, O_VOCAB, O_INNER, O_KV, O_HEAD_DIM, O_SEED,
    O_SHARDS, O_DTYPE, O_OUT, O_ARCH, O_THETA, O_RPCT, O_INIT_STD, O_PARALLEL, O_ATT_BIAS,
    O_MLP_BIAS, O_TIED, O_INIT
};
#define N_DIMS (O_SHARDS - O_LAYERS + 1)

typedef struct mk_args {
    const char *preset, *out, *dtype, *arch, *init;
    uint64_t dims[N_DIMS];   /* layers, heads, embd, ctx, vocab, inner, kv, head_dim, seed,
                                shards (0 = not given, seed: given flag apart) */
    int have_seed;
    const char *ctx;         /* --ctx as typed: its range is the architecture's (parse_ctx) */
    double theta, rotary_pct, init_std;  /* 0: not given */
    int flags[4];                        /* parallel, attention bias, mlp bias, tied: -1 not given */
} mk_args;

static int bad(const char *fmt, const char *opt, const char *val)
{
    fprintf(stderr, "normsweep mkmodel: ");
    fprintf(stderr, fmt, opt, val);
    fprintf(stderr, "\n");
    return NS_EXIT_USAGE;
}

/* One option's value into a; NS_EXIT_OK or NS_EXIT_USAGE (message printed). */
static int take(mk_args *a, int c, const char *name, const char *v)
{
    ns_err err;
    ns_err_clear(&err);
    switch (c) {
    case O_PRESET: a->preset = v; return NS_EXIT_OK;
    case O_OUT: a->out = v; return NS_EXIT_OK;
    case O_DTYPE: a->dtype = v; return NS_EXIT_OK;
    case O_ARCH: a->arch = v; return NS_EXIT_OK;
    case O_INIT:
        if (strcmp(v, "hf") && strcmp(v, "full"))
            return bad("--init '%s%s' is not hf or full", "", v);
        a->init = v;
        return NS_EXIT_OK;
    case O_THETA: case O_RPCT: case O_INIT_STD: {
        const ns_range *r = c == O_THETA ? &ns_mkmodel_range_rope_theta
                            : c == O_RPCT ? &ns_mkmodel_range_rotary_pct : &ns_mkmodel_range_init_std;
        double *x = c == O_THETA ? &a->theta : c == O_RPCT ? &a->rotary_pct : &a->init_std;
        if (ns_range_parse_real(r, name, v, x, &err) != NS_OK)
            return ns_cli_report("mkmodel", &err);
        return NS_EXIT_OK;
    }
    case O_PARALLEL: case O_ATT_BIAS: case O_MLP_BIAS: case O_TIED:
        if (strcmp(v, "true") && strcmp(v, "false"))
            return bad("%s '%s' is not true or false", name, v);
        a->flags[c - O_PARALLEL] = v[0] == 't';
        return NS_EXIT_OK;
    case O_CTX: a->ctx = v; return NS_EXIT_OK;
    default: {
        /* their ranges (model/ns_mkmodel.h): none but --seed's holds 0, "not given" */
        static const ns_range r_seed = NS_RANGE_INT(0, UINT64_MAX, NULL);
        const ns_range *const ranges[N_DIMS] = {
            &ns_mkmodel_range_layers, &ns_mkmodel_range_heads, &ns_mkmodel_range_embd, NULL,
            &ns_mkmodel_range_vocab,  &ns_mkmodel_range_inner, &ns_mkmodel_range_heads,
            &ns_mkmodel_range_embd,   &r_seed,                 &ns_mkmodel_range_shards};
        int k = c - O_LAYERS;
        if (ns_range_parse_u64(ranges[k], name, v, &a->dims[k], &err) != NS_OK)
            return ns_cli_report("mkmodel", &err);
        a->have_seed |= c == O_SEED;
        return NS_EXIT_OK;
    }
    }
}

static int parse(int argc, char **argv, mk_args *a)
{
    static const struct option opts[] = {
        {"preset", required_argument, NULL, O_PRESET}, {"layers", required_argument, NULL, O_LAYERS},
        {"heads", required_argument, NULL, O_HEADS},   {"embd", required_argument, NULL, O_EMBD},
        {"ctx", required_argument, NULL, O_CTX},       {"vocab", required_argument, NULL, O_VOCAB},
        {"inner", required_argument, NULL, O_INNER},   {"kv-heads", required_argument, NULL, O_KV},
        {"head-dim", required_argument, NULL, O_HEAD_DIM},
        {"seed", required_argument, NULL, O_SEED},     {"shards", required_argument, NULL, O_SHARDS},
        {"dtype", required_argument, NULL, O_DTYPE},   {"out", required_argument, NULL, O_OUT},
        {"arch", required_argument, NULL, O_ARCH},     {"rope-theta", required_argument, NULL, O_THETA},
        {"rotary-pct", required_argument, NULL, O_RPCT},
        {"init-std", required_argument, NULL, O_INIT_STD},
        {"parallel-residual", required_argument, NULL, O_PARALLEL},
        {"attention-bias", required_argument, NULL, O_ATT_BIAS},
        {"mlp-bias", required_argument, NULL, O_MLP_BIAS}, {"tied", required_argument, NULL, O_TIED},
        {"init", required_argument, NULL, O_INIT},     {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0},
    };
    optind = 1;
    opterr = 0;
    int c, idx = 0;
    while ((c = getopt_long(argc, argv, ":h", opts, &idx)) != -1) {
        if (c == 'h') {
            usage(stdout);
            return -1;
        }
        if (c == ':')
            return bad("option %s needs a value (see --help)%s", argv[optind - 1], "");
        if (c == '?' || c < O_PRESET)
            return bad("unknown option '%s' (see --help)%s", argv[optind - 1], "");
        char name[40];
        snprintf(name, sizeof name, "--%s", opts[idx].name);
        if (take(a, c, name, optarg) != NS_EXIT_OK)
            return NS_EXIT_USAGE;
    }
    if (optind < argc)
        return bad("unexpected argument '%s' (see --help)%s", argv[optind], "");
    if (!a->out)
        return bad("--out DIR is required (see --help)%s%s", "", "");
    return NS_EXIT_OK;
}

static int parse_dtype(const char *s, ns_st_dtype *dtype)
{
    *dtype = !strcmp(s, "f32") ? NS_ST_F32 : !strcmp(s, "f16") ? NS_ST_F16 : NS_ST_BF16;
    if (strcmp(s, "f32") && strcmp(s, "f16") && strcmp(s, "bf16"))
        return bad("--dtype '%s' is not one of f32, f16, bf16%s", s, "");
    return NS_EXIT_OK;
}

/* --ctx in the architecture's range: a GPT-2 file holds an n_ctx x n_ctx mask per layer. */
static int parse_ctx(mk_args *a, const ns_range *r)
{
    ns_err err;
    ns_err_clear(&err);
    if (a->ctx && ns_range_parse_u64(r, "--ctx", a->ctx, &a->dims[3], &err) != NS_OK)
        return ns_cli_report("mkmodel", &err);
    return NS_EXIT_OK;
}

/* SIGTERM/SIGINT/SIGUSR1 stop the writer, which removes its temporary (exit 3); the files it
 * writes are watched (a temporary of a dead process removed now, this one's at exit). */
static volatile sig_atomic_t *watch_outputs(const char *out, size_t shards)
{
    volatile sig_atomic_t *stop = ns_cli_catch_stop();
    char name[48];
    for (size_t k = 0; k <= (shards > 1 ? shards : 0); k++) {
        if (k == 0)
            snprintf(name, sizeof name, "%s", shards > 1 ? NS_MKMODEL_INDEX : NS_MKMODEL_WEIGHTS);
        else
            ns_mkmodel_shard_name(k - 1, shards, name);
        char *p = ns_path_join(out, name);
        if (p)
            ns_cli_tmp_watch("mkmodel", p);
        free(p);
    }
    char *p = ns_path_join(out, NS_MKMODEL_CONFIG);
    if (p)
        ns_cli_tmp_watch("mkmodel", p);
    free(p);
    return stop;
}

/* Without a preset, the five sizes are required. */
static int need_sizes(const mk_args *a)
{
    static const char *req[] = {"--layers", "--heads", "--embd", "--ctx", "--vocab"};
    for (int k = 0; k < 5 && !a->preset; k++)
        if (!a->dims[k])
            return bad("%s is required without --preset (see --help)%s", req[k], "");
    return NS_EXIT_OK;
}

/* An option that does not apply to the architecture. */
static int refuse_options(const mk_args *a, const char *arch, const char *const *names,
                          const int *given, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (given[i]) {
            fprintf(stderr, "normsweep mkmodel: %s does not apply to --arch %s\n", names[i], arch);
            return NS_EXIT_USAGE;
        }
    (void)a;
    return NS_EXIT_OK;
}

static int make_gpt2(mk_args *a)
{
    static const char *const names[] = {"--kv-heads", "--head-dim", "--rope-theta", "--rotary-pct",
                                        "--parallel-residual", "--attention-bias", "--mlp-bias",
                                        "--tied", "--init", "--init-std"};
    const int given[] = {a->dims[6] != 0, a->dims[7] != 0, a->theta > 0, a->rotary_pct > 0,
                         a->flags[0] >= 0, a->flags[1] >= 0, a->flags[2] >= 0, a->flags[3] >= 0,
                         a->init != NULL, a->init_std > 0};
    NS_TRY(refuse_options(a, "gpt2", names, given, sizeof given / sizeof given[0]));
    ns_err err;
    ns_err_clear(&err);
    ns_mkmodel_opts mo;
    memset(&mo, 0, sizeof mo);
    mo.seed = a->dims[8];
    mo.shards = a->dims[9];
    NS_TRY(parse_dtype(a->dtype, &mo.dtype));
    if (a->preset && ns_mkmodel_preset(a->preset, &mo.config, &err) != NS_OK)
        return ns_cli_report("mkmodel", &err);
    NS_TRY(parse_ctx(a, &ns_mkmodel_range_ctx));
    NS_TRY(need_sizes(a));
    size_t *field[6] = {&mo.config.n_layer, &mo.config.n_head, &mo.config.n_embd, &mo.config.n_ctx,
                        &mo.config.vocab_size, &mo.config.n_inner};
    for (int k = 0; k < 6; k++)
        if (a->dims[k])
            *field[k] = (size_t)a->dims[k];
    if (a->dims[2] && !a->dims[5] && a->preset)
        mo.config.n_inner = 0; /* --embd overrides a preset: MLP width follows it */
    if (mo.config.n_inner == 0)
        mo.config.n_inner = 4 * mo.config.n_embd;
    if (mo.config.ln_eps == 0)
        mo.config.ln_eps = 1e-5;
    if (ns_mkmodel_check(&mo.config, &err) != NS_OK)
        return ns_cli_report("mkmodel", &err);
    volatile sig_atomic_t *stop = watch_outputs(a->out, mo.shards);
    ns_hold hold; /* test only: NORMSWEEP_TEST_HOLD=temp (cli/ns_hold.h) */
    if (ns_hold_setup(&hold, "mkmodel", stop, &mo.hooks) != 0)
        return NS_EXIT_USAGE;
    if (ns_mkmodel_write(a->out, &mo, &err) != NS_OK) {
        ns_cli_name_signal(&err, *stop);
        return ns_cli_report("mkmodel", &err);
    }
    printf("normsweep mkmodel: wrote %s/%s and %s/config.json (n_layer %zu, n_head %zu, "
           "n_embd %zu, n_ctx %zu, vocab %zu, %zu parameters, %s, seed %llu)\n", a->out,
           mo.shards > 1 ? "model-*.safetensors" : "model.safetensors", a->out,
           mo.config.n_layer, mo.config.n_head, mo.config.n_embd, mo.config.n_ctx,
           mo.config.vocab_size, ns_mkmodel_param_count(&mo.config), a->dtype,
           (unsigned long long)a->dims[8]);
    return NS_EXIT_OK;
}

/* --arch (or the preset's) as a layout and model_type; NULL arch: gpt2. */
static int decoder_arch(const mk_args *a, ns_arch *arch, const char **type)
{
    const char *s = a->arch;
    if (!s && a->preset)
        s = !strncmp(a->preset, "pythia", 6) ? "gpt-neox" : !strncmp(a->preset, "qwen", 4) ? "qwen2"
            : !strncmp(a->preset, "smollm", 6) ? "llama" : "gpt2";
    if (!s || !strcmp(s, "gpt2")) {
        *arch = NS_ARCH_GPT2;
        return NS_EXIT_OK;
    }
    *arch = !strcmp(s, "gpt-neox") || !strcmp(s, "gpt_neox") ? NS_ARCH_GPT_NEOX : NS_ARCH_LLAMA;
    *type = *arch == NS_ARCH_GPT_NEOX ? "gpt_neox" : s;
    if (*arch == NS_ARCH_LLAMA && strcmp(s, "llama") && strcmp(s, "qwen2") && strcmp(s, "mistral"))
        return bad("--arch '%s' is not one of gpt2, llama, qwen2, mistral, gpt-neox%s", s, "");
    return NS_EXIT_OK;
}

static int make_decoder(mk_args *a, ns_arch arch, const char *type)
{
    int neox = arch == NS_ARCH_GPT_NEOX;
    static const char *const names[] = {"--kv-heads", "--head-dim", "--mlp-bias", "--rotary-pct",
                                        "--parallel-residual"};
    const int given[] = {neox && a->dims[6], neox && a->dims[7], neox && a->flags[2] >= 0,
                         !neox && a->rotary_pct > 0, !neox && a->flags[0] >= 0};
    NS_TRY(refuse_options(a, type, names, given, sizeof given / sizeof given[0]));
    ns_err err;
    ns_err_clear(&err);
    ns_mkdecoder_opts o;
    ns_mkdecoder_defaults(arch, type, &o);
    if (a->preset && (ns_mkdecoder_preset(a->preset, &o, &err) != NS_OK ||
                      strcmp(o.config.model_type, type) != 0)) {
        if (err.code == NS_OK)
            ns_fail(&err, NS_ERR_INVALID, "--preset %s is a %s model, not --arch %s", a->preset,
                    o.config.model_type, a->arch);
        return ns_cli_report("mkmodel", &err);
    }
    NS_TRY(parse_ctx(a, &ns_mkmodel_range_decoder_ctx));
    NS_TRY(need_sizes(a));
    ns_model_config *c = &o.config;
    size_t *field[8] = {&c->n_layer, &c->n_head, &c->n_embd, &c->n_ctx, &c->vocab_size,
                        &c->n_inner, &c->n_kv_head, &c->d_head};
    for (int k = 0; k < 8; k++)
        if (a->dims[k])
            *field[k] = (size_t)a->dims[k];
    if ((a->dims[1] || a->dims[2]) && !a->dims[7])
        c->d_head = 0; /* follows embd / heads */
    if (a->dims[1] && !a->dims[6])
        c->n_kv_head = 0; /* follows heads */
    if (!c->n_inner || (a->dims[2] && !a->dims[5] && a->preset))
        c->n_inner = 4 * c->n_embd;
    if (a->theta > 0)
        c->rope_theta = a->theta;
    if (a->rotary_pct > 0)
        o.rotary_pct = a->rotary_pct;
    if (a->init_std > 0)
        o.init_std = a->init_std;
    int *flag[4] = {&c->parallel_residual, &c->qkv_bias, &c->mlp_bias, &c->tied_embeddings};
    for (int k = 0; k < 4; k++)
        if (a->flags[k] >= 0)
            *flag[k] = a->flags[k];
    if (a->flags[1] >= 0)
        c->o_bias = a->flags[1];
    o.init_full = a->init && !strcmp(a->init, "full");
    o.seed = a->dims[8];
    o.shards = a->dims[9];
    NS_TRY(parse_dtype(a->dtype, &o.dtype));
    if (ns_mkdecoder_check(&o, &err) != NS_OK)
        return ns_cli_report("mkmodel", &err);
    volatile sig_atomic_t *stop = watch_outputs(a->out, o.shards);
    ns_hold hold; /* test only: NORMSWEEP_TEST_HOLD=temp (cli/ns_hold.h) */
    if (ns_hold_setup(&hold, "mkmodel", stop, &o.hooks) != 0)
        return NS_EXIT_USAGE;
    if (ns_mkdecoder_write(a->out, &o, &err) != NS_OK) {
        ns_cli_name_signal(&err, *stop);
        return ns_cli_report("mkmodel", &err);
    }
    printf("normsweep mkmodel: wrote %s/%s and %s/config.json (%s: %zu layers, %zu heads, %zu "
           "key/value heads, head_dim %zu, hidden %zu, ctx %zu, vocab %zu, %zu parameters, %s, "
           "seed %llu)\n", a->out, o.shards > 1 ? "model-*.safetensors" : "model.safetensors",
           a->out, type, c->n_layer, c->n_head, c->n_kv_head, c->d_head, c->n_embd, c->n_ctx,
           c->vocab_size, ns_mkdecoder_param_count(&o), a->dtype, (unsigned long long)a->dims[8]);
    return NS_EXIT_OK;
}

int ns_cmd_mkmodel(int argc, char **argv)
{
    mk_args a;
    memset(&a, 0, sizeof a);
    a.dtype = "f32";
    for (int k = 0; k < 4; k++)
        a.flags[k] = -1;
    int rc = parse(argc, argv, &a);
    if (rc != NS_EXIT_OK)
        return rc < 0 ? NS_EXIT_OK : rc;
    ns_arch arch = NS_ARCH_GPT2;
    const char *type = NULL;
    NS_TRY(decoder_arch(&a, &arch, &type));
    return arch == NS_ARCH_GPT2 ? make_gpt2(&a) : make_decoder(&a, arch, type);
}

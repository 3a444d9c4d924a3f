/* cmd_mkmodel: the `normsweep mkmodel` subcommand: write a random-weight GPT-2 model directory. */
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
            "Usage: normsweep mkmodel (--preset NAME | --layers N --heads N --embd N --ctx N --vocab N)\n"
            "                         [--inner N] [--seed S] [--dtype f32|f16|bf16] --out DIR\n"
            "\n"
            "Write DIR/config.json and DIR/model.safetensors: a GPT-2 with random weights in the\n"
            "Hugging Face layout (GPT-2 initialisation: weights N(0, 0.02), c_proj weights scaled by\n"
            "1/sqrt(2 n_layer), zero biases, LayerNorm weight 1 and bias 0), deterministic for a seed.\n"
            "\n"
            "Options:\n"
            "  --preset NAME   gpt2 | gpt2-medium | gpt2-large | gpt2-xl (sizes of the released models);\n"
            "                  --layers/--heads/--embd/--ctx/--vocab/--inner then override single values\n"
            "  --layers N      number of transformer blocks (n_layer)\n"
            "  --heads N       attention heads per block (n_head); must divide --embd\n"
            "  --embd N        model width (n_embd)\n"
            "  --ctx N         positions (n_positions)\n"
            "  --vocab N       vocabulary size\n"
            "  --inner N       MLP width (default 4 * embd)\n"
            "  --seed S        generator seed, 0..2^64-1 (default 0)\n"
            "  --dtype T       f32 (default), f16 or bf16\n"
            "  --out DIR       output directory (created; existing files are replaced atomically)\n"
            "  -h, --help      show this help\n"
            "\n"
            "Exit status: 0 written, 1 runtime failure, 2 bad options (nothing written).\n");
}

int ns_cmd_mkmodel(int argc, char **argv)
{
    enum { O_PRESET = 256, O_LAYERS, O_HEADS, O_EMBD, O_CTX, O_VOCAB, O_INNER, O_SEED, O_DTYPE, O_OUT };
    static const struct option opts[] = {
        {"preset", required_argument, NULL, O_PRESET}, {"layers", required_argument, NULL, O_LAYERS},
        {"heads", required_argument, NULL, O_HEADS},   {"embd", required_argument, NULL, O_EMBD},
        {"ctx", required_argument, NULL, O_CTX},       {"vocab", required_argument, NULL, O_VOCAB},
        {"inner", required_argument, NULL, O_INNER},   {"seed", required_argument, NULL, O_SEED},
        {"dtype", required_argument, NULL, O_DTYPE},   {"out", required_argument, NULL, O_OUT},
        {"help", no_argument, NULL, 'h'},              {NULL, 0, NULL, 0},
    };
    const char *preset = NULL, *out = NULL, *dtype_s = "f32";
    /* dims: layers, heads, embd, ctx, vocab, inner (0 = not given) */
    static const char *dim_names[] = {"--layers", "--heads", "--embd", "--ctx", "--vocab", "--inner"};
    /* their ranges (model/ns_mkmodel.h): none holds 0, which stands for "not given" */
    static const ns_range *const dim_ranges[] = {
        &ns_mkmodel_range_layers, &ns_mkmodel_range_heads, &ns_mkmodel_range_embd,
        &ns_mkmodel_range_ctx,    &ns_mkmodel_range_vocab, &ns_mkmodel_range_inner};
    static const ns_range r_seed = NS_RANGE_INT(0, UINT64_MAX, NULL);
    uint64_t dims[6] = {0}, seed = 0;
    ns_err err;
    ns_err_clear(&err);

    optind = 1;
    opterr = 0;
    int c;
    while ((c = getopt_long(argc, argv, ":h", opts, NULL)) != -1) {
        switch (c) {
        case 'h': usage(stdout); return NS_EXIT_OK;
        case O_PRESET: preset = optarg; break;
        case O_OUT: out = optarg; break;
        case O_DTYPE: dtype_s = optarg; break;
        case O_SEED:
            if (ns_range_parse_u64(&r_seed, "--seed", optarg, &seed, &err) != NS_OK)
                return ns_cli_report("mkmodel", &err);
            break;
        case O_LAYERS: case O_HEADS: case O_EMBD: case O_CTX: case O_VOCAB: case O_INNER: {
            int k = c - O_LAYERS;
            if (ns_range_parse_u64(dim_ranges[k], dim_names[k], optarg, &dims[k], &err) != NS_OK)
                return ns_cli_report("mkmodel", &err);
            break;
        }
        case ':':
            fprintf(stderr, "normsweep mkmodel: option %s needs a value (see --help)\n", argv[optind - 1]);
            return NS_EXIT_USAGE;
        default:
            fprintf(stderr, "normsweep mkmodel: unknown option '%s' (see --help)\n", argv[optind - 1]);
            return NS_EXIT_USAGE;
        }
    }
    if (optind < argc) {
        fprintf(stderr, "normsweep mkmodel: unexpected argument '%s' (see --help)\n", argv[optind]);
        return NS_EXIT_USAGE;
    }
    if (!out) {
        fprintf(stderr, "normsweep mkmodel: --out DIR is required (see --help)\n");
        return NS_EXIT_USAGE;
    }
    ns_mkmodel_opts mo;
    memset(&mo, 0, sizeof mo);
    mo.seed = seed;
    if (!strcmp(dtype_s, "f32"))
        mo.dtype = NS_ST_F32;
    else if (!strcmp(dtype_s, "f16"))
        mo.dtype = NS_ST_F16;
    else if (!strcmp(dtype_s, "bf16"))
        mo.dtype = NS_ST_BF16;
    else {
        fprintf(stderr, "normsweep mkmodel: --dtype '%s' is not one of f32, f16, bf16\n", dtype_s);
        return NS_EXIT_USAGE;
    }
    if (preset) {
        if (ns_mkmodel_preset(preset, &mo.config, &err) != NS_OK)
            return ns_cli_report("mkmodel", &err);
    } else {
        for (int k = 0; k < 5; k++) {
            if (!dims[k]) {
                fprintf(stderr, "normsweep mkmodel: %s is required without --preset (see --help)\n",
                        dim_names[k]);
                return NS_EXIT_USAGE;
            }
        }
    }
    size_t *field[6] = {&mo.config.n_layer, &mo.config.n_head, &mo.config.n_embd, &mo.config.n_ctx,
                        &mo.config.vocab_size, &mo.config.n_inner};
    for (int k = 0; k < 6; k++) {
        if (!dims[k])
            continue;
        *field[k] = (size_t)dims[k];
    }
    if (dims[2] && !dims[5] && preset)
        mo.config.n_inner = 0; /* --embd overrides a preset: MLP width follows it */
    if (mo.config.n_inner == 0)
        mo.config.n_inner = 4 * mo.config.n_embd;
    if (mo.config.ln_eps == 0)
        mo.config.ln_eps = 1e-5;
    if (ns_mkmodel_check(&mo.config, &err) != NS_OK)
        return ns_cli_report("mkmodel", &err);
    /* SIGTERM/SIGINT/SIGUSR1 stop the writer, which removes its temporary (exit 3) */
    volatile sig_atomic_t *stop = ns_cli_catch_stop();
    mo.stop = stop;
    ns_hold hold; /* test only: NORMSWEEP_TEST_HOLD=temp (cli/ns_hold.h) */
    if (ns_hold_setup(&hold, "mkmodel", stop, &mo.hold, &mo.hold_user) != 0)
        return NS_EXIT_USAGE;
    char *files[2] = {ns_path_join(out, NS_MKMODEL_WEIGHTS), ns_path_join(out, NS_MKMODEL_CONFIG)};
    for (int k = 0; k < 2; k++)
        if (files[k])
            ns_cli_tmp_watch("mkmodel", files[k]);
    free(files[0]);
    free(files[1]);
    if (ns_mkmodel_write(out, &mo, &err) != NS_OK) {
        ns_cli_name_signal(&err, *mo.stop);
        return ns_cli_report("mkmodel", &err);
    }
    printf("normsweep mkmodel: wrote %s/model.safetensors and %s/config.json "
           "(n_layer %zu, n_head %zu, n_embd %zu, n_ctx %zu, vocab %zu, %zu parameters, %s, seed %llu)\n",
           out, out, mo.config.n_layer, mo.config.n_head, mo.config.n_embd, mo.config.n_ctx,
           mo.config.vocab_size, ns_mkmodel_param_count(&mo.config), dtype_s,
           (unsigned long long)seed);
    return NS_EXIT_OK;
}

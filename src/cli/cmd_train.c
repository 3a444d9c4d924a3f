/* cmd_train: the `normsweep train` subcommand: parses the options (a preset, then single values),
 * initialises MPI, installs the signal handlers that ask training to checkpoint and stop, shows
 * its messages and progress, runs it (src/train/ns_train) and turns its status into the exit
 * code. */
#include <mpi.h>
#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <stddef.h>
#include <stdint.h>
#include <unistd.h>

#include "cli/ns_cli.h"
#include "cli/ns_hold.h"
#include "common/ns_blas.h"
#include "common/ns_range.h"
#include "model/ns_mkmodel.h"
#include "train/ns_train.h"

static void train_usage(FILE *out)
{
    fprintf(out,
            "Usage: normsweep train (--preset NAME | --layers N --heads N --embd N --ctx N)\n"
            "                       [--normalizer NAME] [--s S] [--b B]\n"
            "                       [--temperature T] [--steps K] [--batch B] [--lr LR] [--seed S]\n"
            "                       [OPTIONS] --out DIR\n"
            "       mpirun -np 2 normsweep train --preset standin --out models/standin\n"
            "\n"
            "Train a GPT-2-layout model on the corpus (War and Peace) in C: forward and exact\n"
            "backward through the CBLAS, AdamW, gradient clipping, warmup + cosine schedule, a\n"
            "held-out validation split (every 10th block of 8192 tokens). The attention normalizer\n"
            "and its temperature are part of the model (recorded in config.json; every sweep, dump\n"
            "and verify of DIR attends the same way). Data-parallel over MPI ranks: the result does\n"
            "not depend on the number of ranks. Writes DIR/model.safetensors + DIR/config.json\n"
            "(Hugging Face layout), DIR/train.nc (the training log) and DIR/checkpoint/.\n"
            "\n"
            "Options (model):\n"
            "  --preset NAME        %s (single options below override it)\n"
            "  --layers N --heads N --embd N   shape (n_layer, n_head, n_embd; heads divide embd)\n"
            "  --positions N        position table size n_positions (default: --ctx)\n"
            "  --vocab N            vocabulary size (default 50257, GPT-2's tokenizer)\n"
            "  --normalizer NAME    attention normalizer: softmax (default), ssmax, sparsemax,\n"
            "                       entmax15, softmax1 or sigmoid\n"
            "  --s S                ssmax's parameter (required with ssmax, only with it)\n"
            "  --b B                sigmoid's bias in [-1000, 1000]: weights sigmoid(z / T + b)\n"
            "                       (only with sigmoid; default -log(--ctx) to 10 digits)\n"
            "  --temperature T      attention temperature: weights = F(q.k / sqrt(D) / T) (default 1)\n"
            "  --init-from MODEL    start from a model directory or asset (default: GPT-2's\n"
            "                       initialisation, the weights `mkmodel --seed` writes)\n"
            "Options (training):\n"
            "  --ctx N              tokens per sequence (<= --positions)\n"
            "  --batch B            sequences per step, over all ranks together (default 8)\n"
            "  --steps K            optimisation steps (default 1000; 0: only measure the\n"
            "                       validation loss of the initial model, write nothing)\n"
            "  --warmup W           warmup steps (default steps / 10)\n"
            "  --lr LR              peak learning rate (default 6e-4; presets set their own)\n"
            "  --lr-min F           final learning rate as a fraction of --lr (default 0.1)\n"
            "  --weight-decay WD    AdamW decay of the weight matrices (default 0.1)\n"
            "  --beta1 B --beta2 B  AdamW moments (default 0.9, 0.95)\n"
            "  --clip C             clip the gradient's global norm to C (default 1; 0: never)\n"
            "  --seed S             initialisation and data order, 0..2^64-1 (default 0)\n"
            "  --corpus NAME|FILE   text to train on (default war_and_peace)\n"
            "  --tokenizer NAME|DIR (default tokenizer)\n"
            "  --no-strip-gutenberg keep the Project Gutenberg header and licence\n"
            "Options (logging and output):\n"
            "  --val-every K        validation loss every K steps (default 100; and at 0 and the end)\n"
            "  --val-windows N      validation windows per measurement (default 16; 0: all; the\n"
            "                       final measurement uses all)\n"
            "  --jac-every K        attention Jacobian norms every K steps (default 10; 0: never)\n"
            "  --checkpoint-every K steps between checkpoints (default 100)\n"
            "  --out DIR            the model directory (created; refused if it holds a model)\n"
            "  --resume             continue from DIR/checkpoint (same options required)\n"
            "  -h, --help           show this help\n"
            "\n"
            "SIGTERM, SIGINT or SIGUSR1 checkpoint and exit 3; --resume continues and gives the\n"
            "same bytes as an uninterrupted run. One BLAS thread per rank unless the library's own\n"
            "variable (OPENBLAS_NUM_THREADS, BLIS_NUM_THREADS) is set. See docs/TRAIN.md.\n"
            "\n"
            "Exit status: 0 done, 1 runtime failure, 2 invalid input (nothing written), 3\n"
            "interrupted with the checkpoint saved.\n",
            ns_train_preset_names());
}



/* ---- options ---- */

enum { V_U64, V_SIZE, V_DBL, V_STR };

typedef struct opt_def {
    const char *name;
    int kind;
    size_t off;          /* into the parsed struct */
    const ns_range *r;   /* the value's range (numbers) */
} opt_def;

typedef struct parsed {
    ns_train_options o;
    const char *preset, *normalizer;
    uint64_t layers, heads, embd, positions, vocab, ctx;
    double s, b, temperature;
    int have_s, have_b;
} parsed;

/* Every numeric option's range (common/ns_range.h): the shape's and the attention's as every
 * command that writes a model declares them (model/ns_mkmodel.h, model/ns_gpt2.h), the rest here,
 * by what they mean. The grid file's train: options come through the same table. No range holds 0 where 0 would
 * mean "not given" (a shape, --val-every) and --warmup's automatic value is not typable. */
static const ns_range r_batch = NS_RANGE_INT(1, 1u << 20, NULL);
static const ns_range r_steps = NS_RANGE_INT(0, 1ull << 40, NULL);
static const ns_range r_every = NS_RANGE_INT(1, 1ull << 40, NULL);
static const ns_range r_every0 = NS_RANGE_INT(0, 1ull << 40, "0: never");
static const ns_range r_ckpt = NS_RANGE_INT(0, 1ull << 40, "0: only when stopped");
static const ns_range r_windows = NS_RANGE_INT(0, 1ull << 40, "0: all");
static const ns_range r_seed = NS_RANGE_INT(0, UINT64_MAX, NULL);
static const ns_range r_lr = NS_RANGE_REAL(0.0, 1.0, NS_RANGE_MIN_OPEN, NULL);
static const ns_range r_frac = NS_RANGE_REAL(0.0, 1.0, 0, "a fraction of --lr");
static const ns_range r_beta = NS_RANGE_REAL(0.0, 1.0, NS_RANGE_MAX_OPEN, NULL);
static const ns_range r_decay = NS_RANGE_REAL(0.0, 10.0, 0, NULL);
static const ns_range r_clip = NS_RANGE_REAL(0.0, 1e6, 0, "0: no clipping");

#define P(f) offsetof(parsed, f)
static const opt_def ns_train_opts[] = {
    {"--layers", V_U64, P(layers), &ns_mkmodel_range_layers},
    {"--heads", V_U64, P(heads), &ns_mkmodel_range_heads},
    {"--embd", V_U64, P(embd), &ns_mkmodel_range_embd},
    {"--positions", V_U64, P(positions), &ns_mkmodel_range_ctx},
    {"--vocab", V_U64, P(vocab), &ns_mkmodel_range_vocab},
    {"--ctx", V_U64, P(ctx), &ns_mkmodel_range_ctx},
    {"--normalizer", V_STR, P(normalizer), NULL},
    {"--s", V_DBL, P(s), &ns_gpt2_range_ssmax_s},
    {"--b", V_DBL, P(b), &ns_gpt2_range_sigmoid_b},
    {"--temperature", V_DBL, P(temperature), &ns_gpt2_range_temperature},
    {"--init-from", V_STR, P(o.init_from), NULL},
    {"--batch", V_SIZE, P(o.batch), &r_batch},
    {"--steps", V_U64, P(o.steps), &r_steps},
    {"--warmup", V_U64, P(o.warmup), &r_steps},
    {"--lr", V_DBL, P(o.lr), &r_lr},
    {"--lr-min", V_DBL, P(o.lr_min_frac), &r_frac},
    {"--weight-decay", V_DBL, P(o.weight_decay), &r_decay},
    {"--beta1", V_DBL, P(o.beta1), &r_beta},
    {"--beta2", V_DBL, P(o.beta2), &r_beta},
    {"--clip", V_DBL, P(o.clip), &r_clip},
    {"--seed", V_U64, P(o.seed), &r_seed},
    {"--corpus", V_STR, P(o.corpus), NULL},
    {"--tokenizer", V_STR, P(o.tokenizer), NULL},
    {"--val-every", V_U64, P(o.val_every), &r_every},
    {"--val-windows", V_SIZE, P(o.val_windows), &r_windows},
    {"--jac-every", V_U64, P(o.jac_every), &r_every0},
    {"--checkpoint-every", V_U64, P(o.checkpoint_every), &r_ckpt},
    {"--out", V_STR, P(o.out_dir), NULL},
    {"--preset", V_STR, P(preset), NULL},
};
#undef P

/* Store one option's value; returns NS_EXIT_OK or NS_EXIT_USAGE (message printed). */
static int store(parsed *p, const opt_def *d, const char *val)
{
    void *dst = (char *)p + d->off;
    if (d->kind == V_STR) {
        *(const char **)dst = val;
        return NS_EXIT_OK;
    }
    uint64_t u = 0;
    double x = 0;
    ns_err err;
    if (ns_range_parse(d->r, d->name, val, &u, &x, &err) != NS_OK) {
        fprintf(stderr, "normsweep train: %s\n", err.msg);
        return NS_EXIT_USAGE;
    }
    if (d->kind == V_DBL)
        *(double *)dst = x;
    else if (d->kind == V_SIZE)
        *(size_t *)dst = (size_t)u;
    else
        *(uint64_t *)dst = u;
    if (strcmp(d->name, "--s") == 0)
        p->have_s = 1;
    if (strcmp(d->name, "--b") == 0)
        p->have_b = 1;
    return NS_EXIT_OK;
}

/* Returns -1 for --help, else NS_EXIT_OK or NS_EXIT_USAGE (message printed). */
static int parse(int argc, char **argv, parsed *p)
{
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (strcmp(a, "-h") == 0 || strcmp(a, "--help") == 0)
            return -1;
        if (strcmp(a, "--resume") == 0 || strcmp(a, "--no-strip-gutenberg") == 0) {
            if (a[2] == 'r')
                p->o.resume = 1;
            else
                p->o.strip_gutenberg = 0;
            continue;
        }
        const opt_def *d = NULL;
        const char *val = NULL;
        for (size_t k = 0; k < sizeof ns_train_opts / sizeof ns_train_opts[0] && !d; k++) {
            size_t n = strlen(ns_train_opts[k].name);
            if (strncmp(a, ns_train_opts[k].name, n) == 0 && (a[n] == 0 || a[n] == '='))
                d = &ns_train_opts[k], val = a[n] ? a + n + 1 : NULL;
        }
        if (!d) {
            fprintf(stderr, "normsweep train: %s '%s' (see normsweep train --help)\n",
                    a[0] == '-' ? "unknown option" : "unexpected argument", a);
            return NS_EXIT_USAGE;
        }
        if (!val && i + 1 < argc)
            val = argv[++i];
        if (!val || !*val) {
            fprintf(stderr, "normsweep train: %s needs a value\n", d->name);
            return NS_EXIT_USAGE;
        }
        if (store(p, d, val) != NS_EXIT_OK)
            return NS_EXIT_USAGE;
    }
    return NS_EXIT_OK;
}

/* The model's shape and attention from the preset and the single options. */
static int assemble(parsed *p)
{
    ns_gpt2_config *m = &p->o.model;
    if (!p->preset) {
        static const char *const need[] = {"--layers", "--heads", "--embd", "--ctx"};
        const uint64_t have[] = {p->layers, p->heads, p->embd, p->ctx};
        for (size_t k = 0; k < 4; k++)
            if (!have[k]) {
                fprintf(stderr, "normsweep train: %s is required without --preset (see --help)\n",
                        need[k]);
                return NS_EXIT_USAGE;
            }
        m->vocab_size = 50257;
        m->ln_eps = 1e-5;
    }
    if (p->layers)
        m->n_layer = (size_t)p->layers;
    if (p->heads)
        m->n_head = (size_t)p->heads;
    if (p->embd)
        m->n_embd = (size_t)p->embd, m->n_inner = 4 * (size_t)p->embd;
    if (p->vocab)
        m->vocab_size = (size_t)p->vocab;
    if (p->ctx)
        p->o.ctx = (size_t)p->ctx;
    if (p->positions)
        m->n_ctx = (size_t)p->positions;
    else if (m->n_ctx < p->o.ctx)
        m->n_ctx = p->o.ctx;
    ns_err err;
    ns_err_clear(&err);
    if (p->normalizer && ns_normalizer_parse(p->normalizer, &m->attn_norm.kind, &err) != NS_OK) {
        fprintf(stderr, "normsweep train: --normalizer: %s\n", err.msg);
        return NS_EXIT_USAGE;
    }
    if ((m->attn_norm.kind == NS_NORM_SSMAX) != p->have_s) {
        fprintf(stderr, "normsweep train: %s\n", p->have_s ? "--s applies only to --normalizer ssmax"
                                                           : "--normalizer ssmax needs --s S");
        return NS_EXIT_USAGE;
    }
    if ((m->attn_norm.kind == NS_NORM_SIGMOID) < p->have_b) {
        fprintf(stderr, "normsweep train: --b applies only to --normalizer sigmoid\n");
        return NS_EXIT_USAGE;
    }
    m->attn_norm.s = p->have_s ? p->s : 0.0;
    if (m->attn_norm.kind == NS_NORM_SIGMOID) /* the default: -log(ctx), docs/TRAIN.md */
        m->attn_norm.b = p->have_b ? p->b : ns_train_sigmoid_b_default(p->o.ctx);
    m->attn_temperature = p->temperature;
    return NS_EXIT_OK;
}


/* Options: defaults, the preset, then the single values. Returns -1 for --help. */
static int options(int argc, char **argv, parsed *p)
{
    memset(p, 0, sizeof *p);
    ns_train_defaults(&p->o);
    p->o.ctx = 0;
    p->o.batch = 8;
    p->temperature = 1.0;
    for (int i = 1; i < argc; i++) { /* the preset first, whatever its place */
        const char *a = argv[i];
        const char *v = strncmp(a, "--preset=", 9) == 0 ? a + 9
                        : strcmp(a, "--preset") == 0 && i + 1 < argc ? argv[i + 1] : NULL;
        ns_err err;
        if (v && ns_train_preset(v, &p->o, &err) != NS_OK) {
            fprintf(stderr, "normsweep train: --preset: %s\n", err.msg);
            return NS_EXIT_USAGE;
        }
    }
    int r = parse(argc, argv, p);
    return r != NS_EXIT_OK ? r : assemble(p);
}

int ns_cli_train_options(int argc, char **argv, ns_train_options *o)
{
    parsed p;
    int r = options(argc, argv, &p);
    if (r == NS_EXIT_OK)
        *o = p.o;
    return r;
}

int ns_cmd_train(int argc, char **argv)
{
    parsed p;
    int r = options(argc, argv, &p);
    if (r == -1) {
        train_usage(stdout);
        return NS_EXIT_OK;
    }
    if (r != NS_EXIT_OK)
        return r;
    volatile sig_atomic_t *stop;
    int rank, size;
    ns_hold hold;
    int started = ns_cli_mpi_start("train", "training", &hold, &stop, &rank, &size);
    if (started != NS_EXIT_OK)
        return started;
    char *cmd = ns_cli_command_line(argc, argv, size), exe_sha[65];
    ns_cli_self_sha256(exe_sha);
    p.o.command_line = cmd;
    p.o.institution = getenv("NORMSWEEP_INSTITUTION");
    p.o.executable_sha256 = exe_sha;
    ns_cli_show sh = {"normsweep train", 0};
    ns_hooks hooks = {.line = ns_cli_show_line, .progress = ns_cli_show_progress,
                      .progress_live = isatty(STDERR_FILENO), .user = &sh,
                      .stop = stop, .hold = ns_hold_hook(&hold), .hold_user = &hold};
    ns_train_outcome out;
    ns_err err;
    ns_err_clear(&err);
    int rc = ns_train_run(MPI_COMM_WORLD, &p.o, &hooks, &out, &err);
    if (sh.live_open)
        fputc('\n', stderr);
    if (rc == NS_OK && rank == 0 && out.summary[0])
        fprintf(stderr, "normsweep train: %s\n", out.summary);
    int code = ns_cli_status_exit("train", rc, out.rank, &err);
    free(cmd);
    if (code == NS_EXIT_FAILURE) {
        fflush(NULL);
        _Exit(code);
    }
    MPI_Finalize();
    return code;
}

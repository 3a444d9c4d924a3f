/* ns_train: `normsweep train` on a communicator the caller initialised -- train a GPT-2-layout
 * model on the corpus with the attention normalizer and temperature of its config, data-parallel
 * over the ranks (each a contiguous slice of every step's sequences; gradients summed along one
 * fixed tree, so the result does not depend on the rank count), checkpointing and resuming like
 * the sweep; write the model directory (Hugging Face layout: every sweep, dump and verify run on
 * it) and a CF NetCDF training log. docs/TRAIN.md.
 *
 * It neither initialises MPI, nor installs signal handlers, nor prints, nor exits: the caller
 * (src/cli) passes a stop flag its handlers set and callbacks that show lines. */
#ifndef NS_TRAIN_H
#define NS_TRAIN_H

#include <mpi.h>
#include <signal.h>
#include <stddef.h>
#include <stdint.h>

#include "common/ns_error.h"
#include "common/ns_hooks.h"
#include "model/ns_gpt2.h"

typedef struct ns_train_options {
    ns_gpt2_config model;    /* shape and attention (attn_norm, attn_temperature) */
    const char *init_from;   /* NULL: GPT-2 initialisation with seed; else a model directory */
    uint64_t seed;           /* initialisation and the data order */
    size_t ctx;              /* tokens per sequence, <= model.n_ctx */
    size_t batch;            /* sequences per step (the whole step over all ranks) */
    uint64_t steps, warmup;
    double lr, lr_min_frac, beta1, beta2, adam_eps, weight_decay, clip;
    uint64_t val_every;      /* measure the validation loss every this many steps (and at 0, end) */
    size_t val_windows;      /* windows of T + 1 tokens per measurement (0: all); the final
                                measurement always uses all */
    uint64_t jac_every;      /* attention Jacobian norms every this many steps (0: never) */
    uint64_t checkpoint_every; /* steps between checkpoints (0: only when stopped) */
    const char *corpus;      /* asset name or text file */
    const char *tokenizer;   /* asset name or directory */
    int strip_gutenberg;
    const char *out_dir;     /* the model directory; also holds train.nc and checkpoint/ */
    int resume;
    const char *command_line, *institution, *executable_sha256;
} ns_train_options;

/* Defaults for everything but the model's shape and out_dir (docs/TRAIN.md). */
void ns_train_defaults(ns_train_options *opt);

/* Apply a preset: the model's shape (n_ctx, layers, heads, width) and the training sizes that go
 * with it (ctx, batch, steps, warmup, lr, val_every, jac_every). NS_ERR_INVALID naming the presets
 * for an unknown name. */
int ns_train_preset(const char *name, ns_train_options *opt, ns_err *err);

/* The preset names, comma-separated, for messages and --help. */
const char *ns_train_preset_names(void);

/* Sigmoid attention's default bias for training sequences of ctx tokens: b = -log(ctx), rounded to
 * the 10 significant digits config.json records, so the model computes with the recorded value.
 * The same constant for every row (docs/TRAIN.md: Ramapuram et al. 2024 take b = -log n with n
 * the training sequence length). */
double ns_train_sigmoid_b_default(size_t ctx);

/* Check the options (every rank reaches the same verdict). */
int ns_train_check(const ns_train_options *opt, ns_err *err);

typedef struct ns_train_outcome {
    int rank, size;
    uint64_t steps_done;
    double final_val_loss;     /* over every validation window (rank 0) */
    double tokens_per_second;  /* training tokens per wall second over this run segment */
    char summary[1024];        /* rank 0, after a complete run */
} ns_train_outcome;

/* Train (every rank calls it). Returns the same status on every rank: NS_OK; NS_ERR_INVALID /
 * NS_ERR_FORMAT / NS_ERR_CHECKSUM for invalid input found before any work (nothing written);
 * NS_ERR_INTERRUPTED after a stop request, with the checkpoint saved (--resume continues); other
 * codes for runtime failures. Only rank 0 fills err's message. hooks (common/ns_hooks.h): every
 * field is read; line and progress on rank 0; stop: checkpoint and stop. The test-only hold is
 * called on every rank with point "step" and the steps completed, before each step (after the
 * previous step's evaluation and checkpoint) and before the stop flag is looked at. */
int ns_train_run(MPI_Comm comm, const ns_train_options *opt, const ns_hooks *hooks,
                 ns_train_outcome *out, ns_err *err);

#endif

/* ns_train_internal: what ns_train_setup.c (options, presets, inputs, the output directory) hands
 * to ns_train_run.c (the training loop). Module-private. */
#ifndef NS_TRAIN_INTERNAL_H
#define NS_TRAIN_INTERNAL_H

#include "assets/ns_assets.h"
#include "common/ns_lock.h"
#include "train/ns_train.h"
#include "train/ns_train_data.h"
#include "train/ns_train_log.h"
#include "train/ns_train_model.h"
#include "train/ns_train_optim.h"
#include "train/ns_train_params.h"
#include "train/ns_train_reduce.h"

#define NS_TRAIN_AUTO UINT64_MAX      /* warmup: steps / 10 */
#define NS_TRAIN_LOG_FILE "train.nc"
#define NS_TRAIN_CKPT_DIR "checkpoint"

/* The inputs every rank trains on, and what rank 0 knows about them. */
typedef struct ns_train_inputs {
    int32_t *tokens;          /* the corpus tokenized (every rank) */
    size_t n_tokens;
    ns_asset_ref corpus_ref, tokenizer_ref, init_ref; /* rank 0; init_ref.name[0] == 0: none */
    ns_lock *lock;            /* rank 0, while the run writes to out_dir */
    char *ckpt_path;          /* out_dir/checkpoint/state.bin */
    char *options_json;       /* the options that define the run (every rank) */
    int have_checkpoint;      /* rank 0: resume from ckpt_path */
} ns_train_inputs;

/* Rank 0 checks the output directory (locked), resolves and tokenizes the corpus and the init
 * model; every rank receives the tokens and the same status. */
int ns_train_prepare(MPI_Comm comm, const ns_train_options *opt, const ns_hooks *hooks,
                     ns_train_inputs *in, ns_err *err);
/* What becomes of out_dir/lock when the inputs are freed: a refused run leaves no trace
 * (ABANDON: a file it created goes, an existing one gets its record back), a stopped or failed
 * run leaves the file naming its last holder (KEEP), a finished run removes it (DROP: nothing is
 * left to protect, as a finished sweep's checkpoint directory). */
typedef enum ns_train_lock_end {
    NS_TRAIN_LOCK_ABANDON = 0,
    NS_TRAIN_LOCK_KEEP,
    NS_TRAIN_LOCK_DROP
} ns_train_lock_end;
void ns_train_inputs_free(ns_train_inputs *in, ns_train_lock_end lock_end);

/* The effective warmup (NS_TRAIN_AUTO resolved). */
uint64_t ns_train_warmup(const ns_train_options *opt);

/* The state of a training run (ns_train_run.c), shared with the writers (ns_train_output.c). */
typedef struct ns_train_state {
    MPI_Comm comm;
    int rank, size;
    const ns_train_options *o;
    const ns_hooks *hooks;
    ns_train_inputs in;
    ns_train_params_layout lay;
    ns_train_data data;
    ns_train_optim_hparams hp;
    float *params, *grad, *m, *v; /* grad: the step's summed gradient (every rank) */
    ns_train_model_work_f32 *work;
    ns_train_reduce *red;
    ns_train_log log; /* rank 0 */
    uint64_t step;                /* steps completed */
    uint64_t saved_step;          /* steps in the last checkpoint written (UINT64_MAX: none) */
    size_t first_unit, n_units;   /* this rank's units of every step */
    size_t jac_k;                 /* Jacobian norms per unit: n_layer x n_head x ctx */
    double *unit_loss, *unit_jac; /* this rank's units' loss sums and Jacobian norms */
    double *gathered;             /* rank 0: every unit's records */
    int jac_now;                  /* this step measures the Jacobians */
    double t0, train_seconds;     /* wall clock: segment start, time spent in steps */
    double segment_tokens;        /* training tokens processed in this run segment */
    double val_loss;              /* the last validation loss (rank 0) */
    char start_time[32];
} ns_train_state;

/* Rank 0: write the checkpoint and the log of the steps so far (the model too when final). */
int ns_train_save(ns_train_state *st, int final, ns_err *err);

#endif

/* ns_train_setup: the trainer's options (defaults, presets, checks, their JSON record), and what
 * comes before the first step: the output directory (locked; a finished model or a checkpoint is
 * never overwritten without --resume), the corpus tokenized by rank 0 and sent to every rank, the
 * model to start from. */
#include "train/ns_train_internal.h"

#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/ns_file.h"
#include "common/ns_lock.h"
#include "common/ns_outpath.h"
#include "common/ns_tmp.h"
#include "corpus/ns_corpus.h"
#include "model/ns_mkmodel.h"
#include "tokenizer/ns_tokenizer.h"
#include "train/ns_train_ckpt.h"

void ns_train_defaults(ns_train_options *o)
{
    ns_gpt2_config model = o->model;
    memset(o, 0, sizeof *o);
    o->model = model;
    o->seed = 0;
    o->steps = 1000;
    o->warmup = NS_TRAIN_AUTO;
    o->lr = 6e-4;
    o->lr_min_frac = 0.1;
    o->beta1 = 0.9;
    o->beta2 = 0.95;
    o->adam_eps = 1e-8;
    o->weight_decay = 0.1;
    o->clip = 1.0;
    o->val_every = 100;
    o->val_windows = 16;
    o->jac_every = 10;
    o->checkpoint_every = 100;
    o->corpus = "war_and_peace";
    o->tokenizer = "tokenizer";
    o->strip_gutenberg = 1;
}

static const struct ns_train_preset_def {
    const char *name;
    size_t layers, heads, embd, n_ctx, ctx, batch;
    uint64_t steps;
    double lr;
} ns_train_presets[] = {
    /* a model in a minute or two: CI, the temperature x normalizer experiment */
    {"tiny", 2, 2, 64, 256, 128, 8, 300, 1e-3},
    /* the shape of ../shared's stand-in (4 layers, 4 heads, 128 wide, 1024 positions) */
    {"standin", 4, 4, 128, 1024, 256, 8, 2000, 1e-3},
    /* GPT-2 124M's shape (not for a laptop) */
    {"gpt2", 12, 12, 768, 1024, 1024, 8, 10000, 6e-4},
};

const char *ns_train_preset_names(void) { return "tiny, standin, gpt2"; }

int ns_train_preset(const char *name, ns_train_options *o, ns_err *err)
{
    for (size_t i = 0; i < sizeof ns_train_presets / sizeof ns_train_presets[0]; i++) {
        const struct ns_train_preset_def *p = &ns_train_presets[i];
        if (strcmp(name, p->name) != 0)
            continue;
        o->model.n_layer = p->layers;
        o->model.n_head = p->heads;
        o->model.n_embd = p->embd;
        o->model.n_ctx = p->n_ctx;
        o->model.vocab_size = 50257;
        o->model.n_inner = 4 * p->embd;
        o->model.ln_eps = 1e-5;
        o->ctx = p->ctx;
        o->batch = p->batch;
        o->steps = p->steps;
        o->lr = p->lr;
        return NS_OK;
    }
    return ns_fail(err, NS_ERR_INVALID, "unknown preset '%s' (choose %s)", name,
                   ns_train_preset_names());
}

uint64_t ns_train_warmup(const ns_train_options *o)
{
    return o->warmup == NS_TRAIN_AUTO ? o->steps / 10 : o->warmup;
}

double ns_train_sigmoid_b_default(size_t ctx)
{
    char text[32];
    snprintf(text, sizeof text, "%.10g", 0.0 - log((double)ctx)); /* 0 - 0 = +0 at ctx 1 */
    return strtod(text, NULL);
}

/* A finite number in [lo, hi] (or (lo, hi] when open_lo). */
static int range(double x, double lo, double hi, int open_lo)
{
    return isfinite(x) && (open_lo ? x > lo : x >= lo) && x <= hi;
}

int ns_train_check(const ns_train_options *o, ns_err *err)
{
    NS_TRY(ns_mkmodel_check(&o->model, err));
    const ns_gpt2_config *m = &o->model;
    if (o->ctx == 0 || o->ctx > m->n_ctx)
        return ns_fail(err, NS_ERR_INVALID, "--ctx %zu is outside 1..%zu (the model's positions)",
                       o->ctx, m->n_ctx);
    /* The single values' ranges are the options' own (src/cli/cmd_train.c); here only what
     * relates two of them, and the one setting no option sets. */
    if (ns_train_warmup(o) > o->steps)
        return ns_fail(err, NS_ERR_INVALID, "--warmup %llu exceeds --steps %llu",
                       (unsigned long long)ns_train_warmup(o), (unsigned long long)o->steps);
    if (!range(o->adam_eps, 0, 1, 1))
        return ns_fail(err, NS_ERR_INVALID, "AdamW: eps must be in (0, 1]; got %g", o->adam_eps);
    if (o->steps > 0 && !o->out_dir)
        return ns_fail(err, NS_ERR_INVALID, "--out DIR is required (where the model goes)");
    return NS_OK;
}

/* The options that define the run, as JSON (compared on --resume; not the rank count, the output
 * place or how often checkpoints are taken, which do not change the result). */
static char *options_json(const ns_train_options *o, const ns_train_inputs *in)
{
    const ns_gpt2_config *m = &o->model;
    char seed[24];
    snprintf(seed, sizeof seed, "%llu", (unsigned long long)o->seed);
    json_t *j = json_pack(
        "{s:I, s:I, s:I, s:I, s:I, s:I, s:f, s:s, s:f, s:f, s:s, s:s, s:s, s:s, s:s, s:I, s:I}",
        "n_layer", (json_int_t)m->n_layer, "n_head", (json_int_t)m->n_head, "n_embd",
        (json_int_t)m->n_embd, "n_positions", (json_int_t)m->n_ctx, "vocab_size",
        (json_int_t)m->vocab_size, "n_inner", (json_int_t)(m->n_inner ? m->n_inner : 4 * m->n_embd),
        "layer_norm_epsilon", m->ln_eps > 0 ? m->ln_eps : 1e-5, "attn_normalizer",
        ns_normalizer_name(m->attn_norm.kind), "attn_temperature", ns_gpt2_attn_temperature(m),
        "ssmax_s", m->attn_norm.kind == NS_NORM_SSMAX ? m->attn_norm.s : 0.0, "seed", seed, "init",
        in->init_ref.name[0] ? in->init_ref.sha256 : "gpt2-init", "corpus_sha256",
        in->corpus_ref.sha256, "tokenizer_sha256", in->tokenizer_ref.sha256, "strip_gutenberg",
        o->strip_gutenberg ? "true" : "false", "ctx", (json_int_t)o->ctx, "batch",
        (json_int_t)o->batch);
    json_t *k = json_pack("{s:I, s:I, s:f, s:f, s:f, s:f, s:f, s:f, s:f, s:I, s:I, s:I}", "steps",
                          (json_int_t)o->steps, "warmup", (json_int_t)ns_train_warmup(o), "lr",
                          o->lr, "lr_min_frac", o->lr_min_frac, "beta1", o->beta1, "beta2",
                          o->beta2, "adam_eps", o->adam_eps, "weight_decay", o->weight_decay,
                          "clip", o->clip, "val_every", (json_int_t)o->val_every, "val_windows",
                          (json_int_t)o->val_windows, "jac_every", (json_int_t)o->jac_every);
    /* sigmoid's bias only with sigmoid: other runs' records (and checkpoints) keep their bytes */
    if (j && m->attn_norm.kind == NS_NORM_SIGMOID &&
        json_object_set_new(j, "sigmoid_b", json_real(m->attn_norm.b)) != 0) {
        json_decref(j);
        j = NULL;
    }
    char *text = NULL;
    if (j && k && json_object_update(j, k) == 0)
        text = json_dumps(j, JSON_COMPACT | JSON_SORT_KEYS | JSON_REAL_PRECISION(17));
    json_decref(j);
    json_decref(k);
    return text;
}

/* The output directory, checked before anything is written: refused when it is not a directory,
 * or holds a finished model or a checkpoint and this is not a --resume. */
static int check_out(const ns_train_options *o, ns_err *err)
{
    char *ck = ns_path_join(o->out_dir, NS_TRAIN_CKPT_DIR);
    char *ckpt = ck ? ns_path_join(ck, NS_TRAIN_CKPT_FILE) : NULL;
    char *model = ns_path_join(o->out_dir, "model.safetensors");
    int rc = NS_OK;
    if (!ck || !ckpt || !model)
        rc = ns_fail(err, NS_ERR_NOMEM, "out of memory");
    else if (ns_file_exists(o->out_dir) && !ns_file_is_dir(o->out_dir))
        rc = ns_fail(err, NS_ERR_INVALID, "--out %s exists and is not a directory", o->out_dir);
    else if (!o->resume && ns_file_exists(ckpt))
        rc = ns_fail(err, NS_ERR_INVALID, "%s exists: pass --resume to continue that training, or "
                     "choose another --out", ckpt);
    else if (!o->resume && ns_file_exists(model))
        rc = ns_fail(err, NS_ERR_INVALID, "%s already holds a model: choose another --out (or "
                     "remove it)", o->out_dir);
    free(ck);
    free(ckpt);
    free(model);
    return rc;
}

/* The output directory (checked by check_out, after the inputs were found valid): created and
 * locked, then checked again under the lock (another run may have written it meanwhile). */
static int prepare_out(const ns_train_options *o, ns_train_inputs *in, ns_err *err)
{
    char *ck = ns_path_join(o->out_dir, NS_TRAIN_CKPT_DIR);
    int rc = NS_OK;
    if (!ck || !(in->ckpt_path = ns_path_join(ck, NS_TRAIN_CKPT_FILE))) {
        rc = ns_fail(err, NS_ERR_NOMEM, "out of memory");
        goto done;
    }
    if ((rc = ns_file_mkdirs(ck, err)) != NS_OK)
        goto done;
    if ((rc = ns_lock_acquire(o->out_dir, o->command_line ? o->command_line : "normsweep train",
                              &in->lock, err)) != NS_OK)
        goto done;
    /* under the lock: temporaries a killed run left (common/ns_tmp; the model's own are
     * ns_mkmodel_write_from's) */
    char *log = ns_path_join(o->out_dir, NS_TRAIN_LOG_FILE);
    if (log)
        ns_tmp_remove_stale(log, NULL, NULL);
    free(log);
    ns_tmp_remove_stale(in->ckpt_path, NULL, NULL);
    rc = check_out(o, err);
    in->have_checkpoint = ns_file_exists(in->ckpt_path);
done:
    free(ck);
    return rc;
}

/* The inputs as the run will use them, before anything is written: the split leaves training
 * sequences and validation windows of --ctx tokens, and --init-from's model loads and has the
 * shape being trained. */
static int check_inputs(const ns_train_options *o, const ns_train_inputs *in, ns_err *err)
{
    ns_train_data d;
    memset(&d, 0, sizeof d);
    int rc = ns_train_data_init(&d, in->tokens, in->n_tokens, o->ctx, err);
    ns_train_data_free(&d);
    if (rc != NS_OK || !in->init_ref.name[0])
        return rc;
    ns_train_params_layout lay;
    NS_TRY(ns_train_params_layout_init(&lay, &o->model, err));
    float *p = malloc(lay.total * sizeof *p);
    rc = p ? ns_train_params_load_model(&lay, in->init_ref.path, p, err)
           : ns_fail(err, NS_ERR_NOMEM, "out of memory for %zu parameters", lay.total);
    free(p);
    ns_train_params_layout_free(&lay);
    return rc;
}

/* What training writes (the model's two files, the log, the lock, the checkpoint directory) must
 * not be, nor hold, what it reads: the corpus, the tokenizer's files, --init-from's model
 * (common/ns_outpath: links, ".." and hard links resolved). */
static int check_paths(const ns_train_options *o, const ns_train_inputs *in, ns_err *err)
{
    static const char *const outs[] = {"model.safetensors", "config.json", NS_TRAIN_LOG_FILE,
                                       NS_LOCK_FILE, NS_TRAIN_CKPT_DIR};
    static const char *const reads[] = {"encoder.json", "vocab.bpe", "vocab.json", "merges.txt",
                                        "tokenizer.json", "config.json", "model.safetensors"};
    enum { NO = sizeof outs / sizeof outs[0], NR = sizeof reads / sizeof reads[0] };
    char *own[NO + NR] = {NULL};
    ns_outpath_role ins[NR + 1] = {{"the corpus", in->corpus_ref.path, 0}};
    int rc = NS_OK;
    for (size_t k = 0; k < NR; k++) {
        int tok_file = k < 5, used = tok_file || in->init_ref.name[0];
        if (used && !(own[k] = ns_path_join(tok_file ? in->tokenizer_ref.path : in->init_ref.path,
                                            reads[k])))
            rc = ns_fail(err, NS_ERR_NOMEM, "out of memory");
        ins[k + 1] = (ns_outpath_role){tok_file ? "the tokenizer file" : "the --init-from model file",
                                       own[k], 0};
    }
    for (size_t k = 0; rc == NS_OK && k < NO; k++) {
        ns_outpath_role out = {k == NO - 1 ? "the checkpoint directory" : "the output",
                               own[NR + k] = ns_path_join(o->out_dir, outs[k]), k == NO - 1};
        rc = out.path ? ns_outpath_check(&out, ins, NR + 1, err)
                      : ns_fail(err, NS_ERR_NOMEM, "out of memory");
    }
    for (size_t k = 0; k < NO + NR; k++)
        free(own[k]);
    return rc;
}

/* Rank 0: resolve the tokenizer, the corpus and the model to start from, check that the outputs
 * spare them, then tokenize the corpus and check the model. */
static int load_inputs(const ns_train_options *o, const ns_hooks *hooks, ns_train_inputs *in,
                       ns_err *err)
{
    ns_assets_fetch fetch = {.allow = 1, .log = hooks ? hooks->line : NULL,
                             .log_user = hooks ? hooks->user : NULL};
    ns_tokenizer *tok = NULL;
    char *text = NULL;
    size_t len = 0;
    ns_corpus corpus;
    memset(&corpus, 0, sizeof corpus);
    int rc;
    if ((rc = ns_assets_resolve(o->tokenizer, "tokenizer", &fetch, &in->tokenizer_ref, err)) ||
        (rc = ns_assets_resolve(o->corpus, "corpus", &fetch, &in->corpus_ref, err)) ||
        (o->init_from &&
         (rc = ns_assets_resolve(o->init_from, "model", &fetch, &in->init_ref, err))) ||
        (o->steps > 0 && (rc = check_paths(o, in, err))) ||
        (rc = ns_tokenizer_load(in->tokenizer_ref.path, &tok, err)) ||
        (rc = ns_file_read_all(in->corpus_ref.path, 0, &text, &len, err)) ||
        (rc = ns_corpus_from_text(text, len, in->corpus_ref.path, o->strip_gutenberg, tok, &corpus,
                                  err)))
        goto done;
    if (ns_tokenizer_vocab_size(tok) > o->model.vocab_size) {
        rc = ns_fail(err, NS_ERR_INVALID, "the tokenizer has %zu tokens, more than the model's "
                     "vocabulary of %zu", ns_tokenizer_vocab_size(tok), o->model.vocab_size);
        goto done;
    }
    in->tokens = corpus.tokens.ids; /* taken over */
    in->n_tokens = corpus.tokens.n;
    corpus.tokens.ids = NULL;
    corpus.tokens.n = 0;
    rc = check_inputs(o, in, err);
done:
    if (rc == NS_ERR_IO) /* a missing or unreadable input, found before any work: exit 2 */
        rc = err->code = NS_ERR_INVALID;
    ns_corpus_free(&corpus);
    ns_tokenizer_free(tok);
    free(text);
    return rc;
}

int ns_train_prepare(MPI_Comm comm, const ns_train_options *o, const ns_hooks *hooks,
                     ns_train_inputs *in, ns_err *err)
{
    int rank = 0;
    MPI_Comm_rank(comm, &rank);
    memset(in, 0, sizeof *in);
    /* nothing is written until the options, the output directory and the inputs are valid */
    int rc = ns_train_check(o, err);
    if (rc == NS_OK && rank == 0 && o->steps > 0)
        rc = check_out(o, err);
    if (rc == NS_OK && rank == 0)
        rc = load_inputs(o, hooks, in, err);
    if (rc == NS_OK && rank == 0 && o->steps > 0)
        rc = prepare_out(o, in, err);
    long long n = rc == NS_OK ? (long long)in->n_tokens : -(long long)rc;
    if (MPI_Bcast(&n, 1, MPI_LONG_LONG, 0, comm) != MPI_SUCCESS)
        return ns_fail(err, NS_ERR_LIBRARY, "MPI: broadcasting the corpus size failed");
    if (n < 0)
        return (int)-n; /* rank 0 reports */
    if (rank != 0 && !(in->tokens = malloc((size_t)n * sizeof *in->tokens)))
        rc = ns_fail(err, NS_ERR_NOMEM, "out of memory for %lld tokens", n);
    in->n_tokens = (size_t)n;
    if (n > INT32_MAX || MPI_Bcast(in->tokens, (int)n, MPI_INT32_T, 0, comm) != MPI_SUCCESS)
        return ns_fail(err, NS_ERR_LIBRARY, "MPI: broadcasting the tokens failed");
    /* every rank needs the options' record (it keys the checkpoint); rank 0 knows the sums */
    char *json = rank == 0 ? options_json(o, in) : NULL;
    long long jl = json ? (long long)strlen(json) + 1 : 0;
    MPI_Bcast(&jl, 1, MPI_LONG_LONG, 0, comm);
    if (rank != 0 && jl > 0)
        json = malloc((size_t)jl);
    if (jl <= 0 || !json || MPI_Bcast(json, (int)jl, MPI_CHAR, 0, comm) != MPI_SUCCESS) {
        free(json);
        return ns_fail(err, NS_ERR_NOMEM, "out of memory recording the options");
    }
    in->options_json = json;
    return rc;
}

void ns_train_inputs_free(ns_train_inputs *in, ns_train_lock_end lock_end)
{
    if (!in)
        return;
    if (lock_end == NS_TRAIN_LOCK_DROP)
        ns_lock_drop(in->lock);
    else if (lock_end == NS_TRAIN_LOCK_KEEP)
        ns_lock_release(in->lock);
    else
        ns_lock_abandon(in->lock);
    free(in->tokens);
    free(in->ckpt_path);
    free(in->options_json);
    memset(in, 0, sizeof *in);
}

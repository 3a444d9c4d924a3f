/* ns_train_output: what a training run leaves in its output directory (rank 0): the model
 * (model.safetensors + config.json, Hugging Face layout, with the attention keys and a record of
 * the training), the NetCDF log train.nc (provenance and every option as global attributes) and
 * the checkpoint. */
#include "train/ns_train_internal.h"

#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/ns_blas.h"
#include "common/ns_file.h"
#include "common/ns_sha256.h"
#include "common/ns_time.h"
#include "train/ns_train_ckpt.h"

/* config.json's record of the training (normsweep_training). */
static char *training_record(const ns_train_state *st)
{
    const ns_train_options *o = st->o;
    json_t *opts = json_loads(st->in.options_json, 0, NULL);
    /* JSON has no NaN: an unmeasured loss is null */
    json_t *vl = isfinite(st->val_loss) ? json_real(st->val_loss) : json_null();
    json_t *rec = json_pack("{s:I, s:o, s:s, s:s, s:I, s:I}", "steps_completed",
                            (json_int_t)st->step, "final_val_loss", vl, "corpus",
                            st->in.corpus_ref.name, "split",
                            "blocks of 8192 tokens, every 10th held out (docs/TRAIN.md)",
                            "train_tokens", (json_int_t)st->data.train_tokens, "val_tokens",
                            (json_int_t)st->data.val_tokens);
    char *text = NULL;
    if (opts && rec && json_object_set(rec, "options", opts) == 0) {
        json_t *root = json_pack("{s:O}", "normsweep_training", rec);
        text = root ? json_dumps(root, JSON_COMPACT | JSON_REAL_PRECISION(10)) : NULL;
        json_decref(root);
    }
    (void)o;
    json_decref(opts);
    json_decref(rec);
    return text;
}

#define NS_TRAIN_OUTPUT_MAX_ATTRS 40

typedef struct attr_list {
    ns_nc_attr a[NS_TRAIN_OUTPUT_MAX_ATTRS];
    size_t n;
} attr_list;

static void text_attr(attr_list *l, const char *name, const char *text)
{
    if (l->n < NS_TRAIN_OUTPUT_MAX_ATTRS)
        l->a[l->n++] = (ns_nc_attr){.name = name, .text = text};
}

static void int_attr(attr_list *l, const char *name, long long v)
{
    if (l->n < NS_TRAIN_OUTPUT_MAX_ATTRS)
        l->a[l->n++] = (ns_nc_attr){.name = name, .ival = v};
}

static void dbl_attr(attr_list *l, const char *name, double v)
{
    if (l->n < NS_TRAIN_OUTPUT_MAX_ATTRS)
        l->a[l->n++] = (ns_nc_attr){.name = name, .dval = v, .is_double = 1};
}

/* The run's facts as global attributes (texts point into st, literals and buf). */
static void run_attrs(const ns_train_state *st, attr_list *l, char *buf, size_t size)
{
    const ns_train_options *o = st->o;
    const ns_gpt2_config *c = &st->lay.cfg;
    text_attr(l, "normsweep_attn_normalizer", ns_normalizer_name(c->attn_norm.kind));
    dbl_attr(l, "normsweep_attn_temperature", ns_gpt2_attn_temperature(c));
    if (c->attn_norm.kind == NS_NORM_SSMAX)
        dbl_attr(l, "normsweep_ssmax_s", c->attn_norm.s);
    if (c->attn_norm.kind == NS_NORM_SIGMOID) {
        dbl_attr(l, "normsweep_sigmoid_b", c->attn_norm.b);
        text_attr(l, "normsweep_sigmoid_b_rule",
                  c->attn_norm.b == ns_train_sigmoid_b_default(o->ctx)
                      ? "b = -log(ctx) rounded to 10 significant digits (the default: Ramapuram "
                        "et al. 2024, b = -log n for sequences of n tokens), the same constant "
                        "for every row and at inference"
                      : "b as given (--b), the same constant for every row and at inference");
    }
    int_attr(l, "n_layer", (long long)c->n_layer);
    int_attr(l, "n_head", (long long)c->n_head);
    int_attr(l, "n_embd", (long long)c->n_embd);
    int_attr(l, "n_positions", (long long)c->n_ctx);
    int_attr(l, "vocab_size", (long long)c->vocab_size);
    int_attr(l, "parameters", (long long)st->lay.total);
    snprintf(buf, size, "%s", st->in.init_ref.name[0] ? st->in.init_ref.path
                                                      : "GPT-2 initialisation (normsweep mkmodel)");
    text_attr(l, "init", buf);
    text_attr(l, "train_options", st->in.options_json);
    int_attr(l, "ctx", (long long)o->ctx);
    int_attr(l, "batch", (long long)o->batch);
    int_attr(l, "steps", (long long)o->steps);
    int_attr(l, "steps_completed", (long long)st->step);
    dbl_attr(l, "lr_peak", o->lr);
    dbl_attr(l, "clip", o->clip);
    text_attr(l, "split_rule", "the tokenized corpus cut into blocks of 8192 tokens; block k is "
              "validation text when k % 10 == 9, else training text; no sequence crosses the "
              "split; training sequences drawn uniformly by a counter-based generator keyed "
              "(seed, step, sequence), validation windows of ctx + 1 tokens from each validation "
              "block's start");
    text_attr(l, "gradient_reduction", "per-sequence gradients summed along one fixed binary "
              "tree over the sequence index (independent of the number of ranks)");
    int_attr(l, "train_tokens", (long long)st->data.train_tokens);
    int_attr(l, "val_tokens", (long long)st->data.val_tokens);
    int_attr(l, "val_windows_total", (long long)st->data.n_val);
    dbl_attr(l, "final_val_loss", st->step == o->steps ? st->val_loss : NAN);
    dbl_attr(l, "tokens_per_second", st->train_seconds > 0 ? st->segment_tokens /
                                                              st->train_seconds : NAN);
}

static int write_log(ns_train_state *st, const ns_asset_ref *model, ns_err *err)
{
    if (st->log.n_steps == 0 || st->log.n_evals == 0)
        return NS_OK;
    char *path = ns_path_join(st->o->out_dir, NS_TRAIN_LOG_FILE);
    if (!path)
        return ns_fail(err, NS_ERR_NOMEM, "out of memory");
    char end_time[32], mpi_lib[MPI_MAX_LIBRARY_VERSION_STRING] = "", init[4096];
    ns_iso_now(end_time, sizeof end_time);
    int len = 0;
    MPI_Get_library_version(mpi_lib, &len);
    char *nl = strchr(mpi_lib, '\n');
    if (nl)
        *nl = '\0';
    char history[4352];
    snprintf(history, sizeof history, "%s: %s", st->start_time,
             st->o->command_line ? st->o->command_line : "normsweep train");
    char *blas = malloc(NS_BLAS_ID_MAX);
    if (!blas) {
        free(path);
        return ns_fail(err, NS_ERR_NOMEM, "training log: out of memory");
    }
    ns_blas_identity(blas, NS_BLAS_ID_MAX);
    ns_provenance prov = {
        .kind = "training", .command_line = st->o->command_line, .history = history,
        .institution = st->o->institution, .start_time = st->start_time, .end_time = end_time,
        .model = model, .tokenizer = &st->in.tokenizer_ref, .corpus = &st->in.corpus_ref,
        .model_requested = model ? model->name : NULL, .mpi_size = st->size,
        .mpi_library = mpi_lib, .blas = blas,
        .executable_sha256 = st->o->executable_sha256, .strip_gutenberg = st->o->strip_gutenberg,
        .training = 1};
    attr_list l = {.n = 0};
    run_attrs(st, &l, init, sizeof init);
    ns_train_log_meta meta = {&prov, l.a, l.n};
    int rc = ns_train_log_write(path, &st->log, &meta, err);
    free(blas);
    free(path);
    return rc;
}

/* Write the model directory and describe it for the log's provenance. */
static int write_model(ns_train_state *st, ns_asset_ref *ref, ns_err *err)
{
    char *extra = training_record(st);
    if (!extra)
        return ns_fail(err, NS_ERR_NOMEM, "out of memory recording the training");
    int rc =
        ns_train_params_write_model(st->o->out_dir, &st->lay, st->params, st->o->seed, extra, err);
    free(extra);
    NS_TRY(rc);
    memset(ref, 0, sizeof *ref);
    snprintf(ref->requested, sizeof ref->requested, "trained");
    snprintf(ref->name, sizeof ref->name, "path");
    snprintf(ref->path, sizeof ref->path, "%s", st->o->out_dir);
    snprintf(ref->source, sizeof ref->source, "trained");
    char *main_file = ns_path_join(st->o->out_dir, "model.safetensors");
    if (!main_file)
        return ns_fail(err, NS_ERR_NOMEM, "out of memory");
    snprintf(ref->main_file, sizeof ref->main_file, "%s", main_file);
    rc = ns_sha256_file(main_file, ref->sha256, err);
    free(main_file);
    return rc;
}

int ns_train_save(ns_train_state *st, int final, ns_err *err)
{
    ns_asset_ref model;
    if (final)
        NS_TRY(write_model(st, &model, err));
    NS_TRY(write_log(st, final ? &model : NULL, err));
    if (st->saved_step == st->step)
        return NS_OK;
    NS_TRY(ns_train_ckpt_save(st->in.ckpt_path, st->in.options_json, st->step, st->lay.total,
                              st->params, st->m, st->v, &st->log, err));
    st->saved_step = st->step;
    return NS_OK;
}

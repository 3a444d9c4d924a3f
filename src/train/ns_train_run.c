/* ns_train_run: the training loop of `normsweep train` (see ns_train.h): set up every rank's
 * buffers, start from GPT-2's initialisation, a model or the checkpoint, then per step sum the
 * sequences' gradients along the fixed tree, clip, take the AdamW step, and log; measure the
 * validation loss and checkpoint on schedule; stop cleanly when asked. */
#include "train/ns_train_internal.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "norm/ns_norm_jac.h"
#include "common/ns_time.h"
#include "train/ns_train_ckpt.h"

static void say(const ns_train_state *st, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void say(const ns_train_state *st, const char *fmt, ...)
{
    if (st->rank != 0 || !st->hooks)
        return;
    va_list ap;
    va_start(ap, fmt);
    ns_vsay(st->hooks->line, st->hooks->user, fmt, ap);
    va_end(ap);
}

/* The same status on every rank: the worst of the ranks' (a rank's own message stays its own). */
static int agree(ns_train_state *st, int rc, ns_err *err)
{
    int worst = rc;
    if (MPI_Allreduce(&rc, &worst, 1, MPI_INT, MPI_MAX, st->comm) != MPI_SUCCESS)
        return ns_fail(err, NS_ERR_LIBRARY, "MPI_Allreduce failed");
    if (worst != NS_OK && rc == NS_OK)
        ns_fail(err, worst, "another rank failed (see its message)");
    return worst;
}

static int bcast_floats(ns_train_state *st, float *p, size_t n, ns_err *err)
{
    for (size_t off = 0; off < n; off += 1u << 30) {
        size_t k = n - off < (1u << 30) ? n - off : (1u << 30);
        if (MPI_Bcast(p + off, (int)k, MPI_FLOAT, 0, st->comm) != MPI_SUCCESS)
            return ns_fail(err, NS_ERR_LIBRARY, "MPI: broadcasting the parameters failed");
    }
    return NS_OK;
}

/* Buffers of every rank. */
static int allocate(ns_train_state *st, ns_err *err)
{
    const ns_train_options *o = st->o;
    NS_TRY(ns_train_params_layout_init(&st->lay, &o->model, err));
    NS_TRY(ns_train_data_init(&st->data, st->in.tokens, st->in.n_tokens, o->ctx, err));
    size_t P = st->lay.total, B = o->batch;
    st->first_unit = ns_train_reduce_first(B, st->size, st->rank);
    st->n_units = ns_train_reduce_first(B, st->size, st->rank + 1) - st->first_unit;
    st->jac_k = o->model.n_layer * o->model.n_head * o->ctx;
    st->params = calloc(P, sizeof(float));
    st->grad = calloc(P, sizeof(float));
    st->m = calloc(P, sizeof(float));
    st->v = calloc(P, sizeof(float));
    st->unit_loss = calloc(B, sizeof(double));
    st->unit_jac = calloc((st->n_units ? st->n_units : 1) * st->jac_k, sizeof(double));
    size_t nval = ns_train_data_val_count(&st->data, 0);
    size_t ng = B * st->jac_k > nval ? B * st->jac_k : nval;
    st->gathered = st->rank == 0 ? calloc(ng, sizeof(double)) : NULL;
    if (!st->params || !st->grad || !st->m || !st->v || !st->unit_loss || !st->unit_jac ||
        (st->rank == 0 && !st->gathered))
        return ns_fail(err, NS_ERR_NOMEM, "trainer: out of memory for %zu parameters", P);
    NS_TRY(ns_train_model_work_new_f32(&st->lay, o->ctx, &st->work, err));
    NS_TRY(ns_train_reduce_new(st->comm, P, B, &st->red, err));
    NS_TRY(ns_train_log_init(&st->log, o->model.n_layer, err));
    st->hp = (ns_train_optim_hparams){.lr = o->lr,
                                      .lr_min_frac = o->lr_min_frac,
                                      .warmup = ns_train_warmup(o),
                                      .steps = o->steps,
                                      .beta1 = o->beta1,
                                      .beta2 = o->beta2,
                                      .eps = o->adam_eps,
                                      .weight_decay = o->weight_decay,
                                      .clip = o->clip};
    return NS_OK;
}

/* Rank 0 sets the starting point (checkpoint, model or initialisation); every rank receives it. */
static int start(ns_train_state *st, ns_err *err)
{
    int rc = NS_OK;
    uint64_t step = 0;
    if (st->rank == 0) {
        if (st->in.have_checkpoint) {
            rc = ns_train_ckpt_load(st->in.ckpt_path, st->in.options_json, &step, st->lay.total,
                                    st->params, st->m, st->v, &st->log, err);
            if (rc == NS_OK)
                say(st, "normsweep train: resuming from %s at step %llu", st->in.ckpt_path,
                    (unsigned long long)step);
        } else if (st->in.init_ref.name[0]) {
            rc = ns_train_params_load_model(&st->lay, st->in.init_ref.path, st->params, err);
        } else {
            rc = ns_train_params_init_gpt2(&st->lay, st->o->seed, st->params, err);
        }
    }
    unsigned long long s = step;
    MPI_Bcast(&s, 1, MPI_UNSIGNED_LONG_LONG, 0, st->comm);
    NS_TRY(agree(st, rc, err));
    st->step = s;
    st->saved_step = st->in.have_checkpoint ? s : UINT64_MAX;
    NS_TRY(bcast_floats(st, st->params, st->lay.total, err));
    NS_TRY(bcast_floats(st, st->m, st->lay.total, err));
    return bcast_floats(st, st->v, st->lay.total, err);
}

/* The exact Jacobian norm of every attention row of the unit just computed (METRICS 7). */
static void unit_jacobians(ns_train_state *st, double *out)
{
    const ns_gpt2_config *c = &st->lay.cfg;
    size_t T = st->o->ctx, H = c->n_head;
    double Ta = ns_gpt2_attn_temperature(c);
    double *ad = malloc(2 * T * sizeof *ad);
    for (size_t l = 0; l < c->n_layer; l++) {
        const float *att = ns_train_model_attn_f32(st->work, l);
        for (size_t h = 0; h < H; h++)
            for (size_t m = 0; m < T; m++) {
                const float *row = att + (h * T + m) * T;
                for (size_t i = 0; ad && i <= m; i++)
                    ad[i] = row[i];
                out[(l * H + h) * T + m] =
                    ad ? ns_norm_jac_norm_weights(&c->attn_norm, ad, m + 1, Ta, ad + T) : NAN;
            }
    }
    free(ad);
}

/* The tree's leaf: sequence `unit` of this step, its gradient into out. */
static int leaf(void *user, size_t unit, float *out, ns_err *err)
{
    ns_train_state *st = user;
    const int32_t *seq = ns_train_data_train_sequence(&st->data, st->o->seed, st->step, unit);
    size_t k = unit - st->first_unit;
    NS_TRY(ns_train_model_step_f32(&st->lay, st->params, out, st->work, seq, seq + 1, st->o->ctx,
                                   &st->unit_loss[k], err));
    if (st->jac_now)
        unit_jacobians(st, st->unit_jac + k * st->jac_k);
    return NS_OK;
}

/* Rank 0 (gathered holds the step's records): the loss, and the Jacobian columns of row. */
static double step_loss(ns_train_state *st)
{
    double s = 0.0;
    for (size_t u = 0; u < st->o->batch; u++)
        s += st->gathered[u];
    return s / ((double)st->o->batch * (double)st->o->ctx);
}

static void step_jacobians(ns_train_state *st, double *row)
{
    const ns_gpt2_config *c = &st->lay.cfg;
    size_t per = c->n_head * st->o->ctx, B = st->o->batch;
    double *tmp = malloc(B * per * sizeof *tmp);
    if (!tmp)
        return;
    double T = ns_gpt2_attn_temperature(c), bound = fmin(1.0 / (4.0 * T), sqrt(2.0));
    for (size_t l = 0; l < c->n_layer; l++) {
        for (size_t u = 0; u < B; u++)
            memcpy(tmp + u * per, st->gathered + u * st->jac_k + l * per, per * sizeof *tmp);
        ns_train_log_jacobians(&st->log, row, l, tmp, B * per, bound);
    }
    free(tmp);
}

/* One optimisation step: gradients summed over the tree, clipped, AdamW; logged on rank 0. */
static int train_step(ns_train_state *st, ns_err *err)
{
    const ns_train_options *o = st->o;
    st->jac_now = o->jac_every && (st->step % o->jac_every == 0 || st->step + 1 == o->steps);
    NS_TRY(ns_train_reduce_sum(st->red, leaf, st, st->grad, err));
    double inv_tokens = 1.0 / ((double)o->batch * (double)o->ctx);
    double norm = sqrt(ns_train_optim_sumsq(st->grad, st->lay.total)) * inv_tokens;
    double clip = o->clip > 0 && norm > o->clip ? o->clip / norm : 1.0;
    double lr = ns_train_optim_lr(&st->hp, st->step);
    ns_train_optim_adamw(&st->lay, &st->hp, st->step + 1, lr, inv_tokens * clip, st->params,
                         st->grad, st->m, st->v);
    NS_TRY(ns_train_reduce_gather(st->red, o->batch, st->unit_loss, 1, st->gathered, err));
    double *row = NULL;
    if (st->rank == 0) {
        if (!(row = ns_train_log_new_row(&st->log)))
            return ns_fail(err, NS_ERR_NOMEM, "training log: out of memory");
        row[st->log.col.lr] = lr;
        row[st->log.col.loss] = step_loss(st);
        ns_train_log_grad_norms(&st->log, row, &st->lay, st->grad, inv_tokens);
    }
    if (st->jac_now) {
        NS_TRY(
            ns_train_reduce_gather(st->red, o->batch, st->unit_jac, st->jac_k, st->gathered, err));
        if (st->rank == 0)
            step_jacobians(st, row);
    }
    st->step++;
    return NS_OK;
}

/* Progress of a validation over every window (what, e.g. "final validation"), on rank 0, which
 * has done `done` of its `share` windows of `count`: the first and the last line always, others
 * as often as the training steps' (every 0.5 s on a terminal, else every 10 s). */
static void show_eval_progress(const ns_train_state *st, const char *what, size_t done,
                               size_t share, size_t count, double t0, double *last_shown)
{
    if (!what || st->rank != 0 || !st->hooks || !st->hooks->progress)
        return;
    double now = MPI_Wtime(), el = now - t0;
    int live = st->hooks->progress_live;
    if (done != 0 && done != share && now - *last_shown < (live ? 0.5 : 10.0))
        return;
    *last_shown = now;
    double pct = share ? 100.0 * (double)done / (double)share : 100.0;
    char line[256];
    int n = st->size == 1
                ? snprintf(line, sizeof line, "%s: %zu of %zu windows (%.1f%%), elapsed %.0f s",
                           what, done, count, pct, el)
                : snprintf(line, sizeof line, "%s: %.1f%% of %zu windows on %d ranks (rank 0: "
                           "%zu of its %zu), elapsed %.0f s", what, pct, count, st->size, done,
                           share, el);
    if (done && done < share && n > 0 && (size_t)n < sizeof line) /* rank 0's pace */
        snprintf(line + n, sizeof line - (size_t)n, ", ETA %.0f s",
                 el / (double)done * (double)(share - done));
    st->hooks->progress(st->hooks->user, line, live);
}

/* The validation loss over max windows (0: all) -> *loss on rank 0; with what (a validation over
 * every window), progress lines as it goes. */
static int evaluate(ns_train_state *st, size_t max, const char *what, double *loss, ns_err *err)
{
    size_t count = ns_train_data_val_count(&st->data, max), T = st->o->ctx;
    size_t a = ns_train_reduce_first(count, st->size, st->rank),
           b = ns_train_reduce_first(count, st->size, st->rank + 1);
    double *mine = calloc(b - a + 1, sizeof *mine);
    if (!mine)
        return ns_fail(err, NS_ERR_NOMEM, "out of memory");
    int rc = NS_OK;
    double t0 = MPI_Wtime(), last_shown = t0;
    show_eval_progress(st, what, 0, b - a, count, t0, &last_shown);
    for (size_t k = a; rc == NS_OK && k < b; k++) {
        const int32_t *seq =
            ns_train_data_val_sequence(&st->data, ns_train_data_val_index(&st->data, max, k));
        rc = ns_train_model_step_f32(&st->lay, st->params, NULL, st->work, seq, seq + 1, T,
                                     &mine[k - a], err);
        if (rc == NS_OK)
            show_eval_progress(st, what, k - a + 1, b - a, count, t0, &last_shown);
    }
    rc = agree(st, rc, err);
    if (rc == NS_OK)
        rc = ns_train_reduce_gather(st->red, count, mine, 1, st->gathered, err);
    free(mine);
    if (rc == NS_OK && st->rank == 0) {
        double s = 0.0;
        for (size_t k = 0; k < count; k++)
            s += st->gathered[k];
        *loss = s / ((double)count * (double)T);
    }
    return rc;
}

static void show_progress(ns_train_state *st, double *last_shown)
{
    if (st->rank != 0 || !st->hooks || !st->hooks->progress)
        return;
    double now = MPI_Wtime();
    int live = st->hooks->progress_live;
    if (!live && now - *last_shown < 10.0 && st->step != st->o->steps)
        return;
    *last_shown = now;
    const double *row = st->log.rows + (st->log.n_steps - 1) * st->log.col.width;
    double tps = st->train_seconds > 0 ? st->segment_tokens / st->train_seconds : 0.0;
    double eta = tps > 0 ? (double)(st->o->steps - st->step) * (double)st->o->batch *
                               (double)st->o->ctx / tps : 0.0;
    char line[256];
    snprintf(line, sizeof line, "step %llu/%llu  loss %.4f  val %.4f  |g| %.3g  lr %.3g  "
             "%.0f tok/s  ETA %.0f s", (unsigned long long)st->step,
             (unsigned long long)st->o->steps, row[st->log.col.loss], st->val_loss,
             row[st->log.col.grad_norm], row[st->log.col.lr], tps, eta);
    st->hooks->progress(st->hooks->user, line, live);
}

/* Every rank: whether rank 0 was asked to stop. */
static int stop_requested(ns_train_state *st)
{
    int s = st->rank == 0 && st->hooks && st->hooks->stop && *st->hooks->stop;
    MPI_Bcast(&s, 1, MPI_INT, 0, st->comm);
    return s;
}

/* Rank 0 saves; every rank learns the outcome. */
static int save_all(ns_train_state *st, int final, ns_err *err)
{
    int rc = st->rank == 0 ? ns_train_save(st, final, err) : NS_OK;
    return agree(st, rc, err);
}

/* The steps from st->step to the end, with evaluations, checkpoints and stops. */
static int loop(ns_train_state *st, ns_err *err)
{
    const ns_train_options *o = st->o;
    double last_shown = 0.0;
    while (st->step < o->steps) {
        if (st->hooks && st->hooks->hold) /* test only: NULL but in a test that holds the run */
            st->hooks->hold(st->hooks->hold_user, "step", st->step);
        if (stop_requested(st)) {
            say(st, "normsweep train: stopping at step %llu: checkpoint saved, continue with "
                "--resume", (unsigned long long)st->step);
            NS_TRY(save_all(st, 0, err));
            return ns_fail(err, NS_ERR_INTERRUPTED, "interrupted at step %llu; the checkpoint "
                           "is saved (continue with --resume)", (unsigned long long)st->step);
        }
        double t = MPI_Wtime();
        NS_TRY(train_step(st, err));
        st->train_seconds += MPI_Wtime() - t;
        st->segment_tokens += (double)o->batch * (double)o->ctx;
        int last = st->step == o->steps;
        if (st->step % o->val_every == 0 || last) {
            double vl = NAN;
            NS_TRY(evaluate(st, last ? 0 : o->val_windows,
                            last ? "final validation" : o->val_windows ? NULL : "validation", &vl,
                            err));
            if (st->rank == 0) {
                st->val_loss = vl;
                NS_TRY(ns_train_log_add_eval(&st->log, (double)st->step, vl, err));
            }
        }
        show_progress(st, &last_shown);
        if (!last && o->checkpoint_every && st->step % o->checkpoint_every == 0)
            NS_TRY(save_all(st, 0, err));
    }
    return NS_OK;
}

static void state_free(ns_train_state *st, ns_train_lock_end lock_end)
{
    ns_train_model_work_free_f32(st->work);
    ns_train_reduce_free(st->red);
    ns_train_log_free(&st->log);
    ns_train_data_free(&st->data);
    ns_train_params_layout_free(&st->lay);
    free(st->params);
    free(st->grad);
    free(st->m);
    free(st->v);
    free(st->unit_loss);
    free(st->unit_jac);
    free(st->gathered);
    ns_train_inputs_free(&st->in, lock_end);
}

/* --steps 0: the initial model's validation loss over every window, nothing written. */
static int evaluate_only(ns_train_state *st, ns_train_outcome *out, ns_err *err)
{
    double vl = NAN;
    NS_TRY(evaluate(st, 0, "validation", &vl, err));
    if (st->rank == 0) {
        out->final_val_loss = vl;
        snprintf(out->summary, sizeof out->summary,
                 "validation loss %.6f nats per token over %zu "
                 "windows of %zu tokens (%zu validation tokens of %zu)",
                 vl, ns_train_data_val_count(&st->data, 0), st->o->ctx, st->data.val_tokens,
                 st->data.n_tokens);
    }
    return NS_OK;
}

int ns_train_run(MPI_Comm comm, const ns_train_options *opt, const ns_hooks *hooks,
                 ns_train_outcome *out, ns_err *err)
{
    ns_train_state st;
    memset(&st, 0, sizeof st);
    memset(out, 0, sizeof *out);
    st.comm = comm;
    st.o = opt;
    st.hooks = hooks;
    st.val_loss = NAN;
    MPI_Comm_rank(comm, &st.rank);
    MPI_Comm_size(comm, &st.size);
    out->rank = st.rank;
    out->size = st.size;
    st.t0 = MPI_Wtime();
    ns_iso_now(st.start_time, sizeof st.start_time);
    int rc = ns_train_prepare(comm, opt, hooks, &st.in, err);
    if (rc == NS_OK)
        rc = agree(&st, allocate(&st, err), err);
    if (rc != NS_OK) { /* invalid input: nothing written */
        state_free(&st, NS_TRAIN_LOCK_ABANDON);
        return rc;
    }
    if (opt->steps == 0) { /* the starting model (--init-from or the initialisation) */
        rc = start(&st, err);
        if (rc == NS_OK)
            rc = agree(&st, evaluate_only(&st, out, err), err);
        state_free(&st, NS_TRAIN_LOCK_ABANDON);
        return rc;
    }
    rc = start(&st, err);
    if (rc == NS_OK && st.log.n_evals > 0) /* resumed: the last validation loss measured */
        st.val_loss = st.log.evals[2 * (st.log.n_evals - 1) + 1];
    if (rc == NS_OK && st.step == 0 && st.rank == 0 && st.log.n_evals == 0)
        say(&st, "normsweep train: %zu parameters, %zu training tokens, %zu validation tokens "
            "(%zu windows); %zu sequences of %zu tokens per step over %d rank%s",
            st.lay.total, st.data.train_tokens, st.data.val_tokens, st.data.n_val, opt->batch,
            opt->ctx, st.size, st.size == 1 ? "" : "s");
    if (rc == NS_OK && st.log.n_evals == 0 && st.step == 0) {
        double vl = NAN;
        rc = evaluate(&st, opt->val_windows, opt->val_windows ? NULL : "initial validation", &vl,
                      err);
        if (rc == NS_OK && st.rank == 0)
            rc = ns_train_log_add_eval(&st.log, 0.0, vl, err), st.val_loss = vl;
        rc = agree(&st, rc, err);
    }
    if (rc == NS_OK)
        rc = loop(&st, err);
    if (rc == NS_OK)
        rc = save_all(&st, 1, err);
    out->steps_done = st.step;
    out->tokens_per_second = st.train_seconds > 0 ? st.segment_tokens / st.train_seconds : 0.0;
    if (st.rank == 0) {
        out->final_val_loss = st.val_loss;
        if (rc == NS_OK)
            snprintf(out->summary, sizeof out->summary, "trained %llu steps (%.0f tokens/s in this "
                     "run); validation loss %.4f nats per token over all %zu windows; model in %s, "
                     "log in %s/" NS_TRAIN_LOG_FILE, (unsigned long long)st.step,
                     out->tokens_per_second, st.val_loss, st.data.n_val, opt->out_dir,
                     opt->out_dir);
    }
    state_free(&st, rc == NS_OK ? NS_TRAIN_LOCK_DROP : NS_TRAIN_LOCK_KEEP);
    return rc;
}

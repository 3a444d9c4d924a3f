/* bench_train: the trainer's speed on one sequence -- a training step (forward + exact backward,
 * ns_train_model_step_f32 with gradients) against the forward alone (the same call without
 * gradients, LM head and loss included) and against the inference forward (ns_model_forward over
 * every layer, no LM head) of the same model, one BLAS thread.
 *
 * Usage: bench_train [--layers 4] [--heads 4] [--embd 128] [--ctx 256] [--reps 5]
 *                    [--normalizer softmax] [--temperature 1]
 * One warm-up of each, then `reps` rounds of one call of each (interleaved, so all three see the
 * same machine load); medians. Prints `name: value` lines: train_step_tokens_per_s,
 * train_forward_tokens_per_s, inference_forward_tokens_per_s, step_vs_forward (step rate / trainer
 * forward rate). */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "ns_bench.h"

#include "common/ns_blas.h"
#include "model/ns_gpt2.h"
#include "model/ns_model.h"
#include "train/ns_train_model.h"
#include "train/ns_train_params.h"

static int fail(const char *what, const ns_err *e)
{
    fprintf(stderr, "bench_train: %s: %s\n", what, e->msg);
    return 1;
}

int main(int argc, char **argv)
{
    size_t layers = 4, heads = 4, embd = 128, ctx = 256, reps = 5;
    const char *norm = "softmax";
    double T = 1.0;
    for (int i = 1; i + 1 < argc; i += 2) {
        const char *a = argv[i], *v = argv[i + 1];
        if (!strcmp(a, "--layers")) layers = strtoul(v, NULL, 10);
        else if (!strcmp(a, "--heads")) heads = strtoul(v, NULL, 10);
        else if (!strcmp(a, "--embd")) embd = strtoul(v, NULL, 10);
        else if (!strcmp(a, "--ctx")) ctx = strtoul(v, NULL, 10);
        else if (!strcmp(a, "--reps")) reps = strtoul(v, NULL, 10);
        else if (!strcmp(a, "--normalizer")) norm = v;
        else if (!strcmp(a, "--temperature")) T = atof(v);
        else {
            fprintf(stderr, "bench_train: unknown option %s\n", a);
            return 2;
        }
    }
    if (reps < 1 || reps > 1000)
        reps = 5;
    ns_blas_single_thread();
    ns_err e;
    ns_normalizer_kind kind;
    if (ns_normalizer_parse(norm, &kind, &e) != NS_OK)
        return fail("--normalizer", &e);
    ns_gpt2_config c = {.n_layer = layers, .n_head = heads, .n_embd = embd, .n_ctx = ctx,
                        .vocab_size = 50257, .n_inner = 4 * embd, .ln_eps = 1e-5,
                        .attn_norm = {.kind = kind, .s = kind == NS_NORM_SSMAX ? 0.43 : 0.0},
                        .attn_temperature = T};
    ns_train_params_layout lay;
    if (ns_train_params_layout_init(&lay, &c, &e) != NS_OK)
        return fail("layout", &e);
    float *p = malloc(lay.total * sizeof *p), *g = malloc(lay.total * sizeof *g);
    int32_t *tok = malloc((ctx + 1) * sizeof *tok);
    double *ts = malloc(3 * reps * sizeof *ts);
    if (!p || !g || !tok || !ts)
        return 1;
    if (ns_train_params_init_gpt2(&lay, 1, p, &e) != NS_OK)
        return fail("init", &e);
    uint64_t s = 12345;
    for (size_t t = 0; t <= ctx; t++) {
        s = s * 6364136223846793005ull + 1442695040888963407ull;
        tok[t] = (int32_t)((s >> 33) % 50257);
    }
    char dir[] = "/tmp/ns_bench_train.XXXXXX";
    if (!mkdtemp(dir))
        return 1;
    ns_model *m = NULL;
    ns_model_workspace *ws = NULL;
    ns_train_model_work_f32 *w = NULL;
    if (ns_train_params_write_model(dir, &lay, p, 1, NULL, &e) != NS_OK ||
        ns_model_load(dir, &m, &e) != NS_OK ||
        ns_model_workspace_new(m, ctx, NULL, 0, &ws, &e) != NS_OK ||
        ns_train_model_work_new_f32(&lay, ctx, &w, &e) != NS_OK)
        return fail("setup", &e);
    double loss;
    for (size_t r = 0; r <= reps; r++) { /* round 0: warm-up */
        double t0 = ns_bench_now();
        if (ns_train_model_step_f32(&lay, p, g, w, tok, tok + 1, ctx, &loss, &e) != NS_OK)
            return fail("step", &e);
        double t1 = ns_bench_now();
        if (ns_train_model_step_f32(&lay, p, NULL, w, tok, tok + 1, ctx, &loss, &e) != NS_OK)
            return fail("forward", &e);
        double t2 = ns_bench_now();
        if (ns_model_forward(m, ws, tok, ctx, layers, NULL, NULL, &e) != NS_OK)
            return fail("inference forward", &e);
        double t3 = ns_bench_now();
        if (r > 0) {
            ts[r - 1] = t1 - t0;
            ts[reps + r - 1] = t2 - t1;
            ts[2 * reps + r - 1] = t3 - t2;
        }
    }
    double step = ns_bench_median(ts, reps), fwd = ns_bench_median(ts + reps, reps);
    double inf = ns_bench_median(ts + 2 * reps, reps);
    printf("model: %zu layers, %zu heads, n_embd %zu, ctx %zu, vocab 50257, %s T=%g, %zu parameters\n",
           layers, heads, embd, ctx, norm, T, lay.total);
    printf("train_step_tokens_per_s: %.1f\n", (double)ctx / step);
    printf("train_forward_tokens_per_s: %.1f\n", (double)ctx / fwd);
    printf("inference_forward_tokens_per_s: %.1f\n", (double)ctx / inf);
    printf("step_vs_forward: %.3f\n", fwd / step);
    printf("step_vs_inference_forward: %.3f\n", inf / step);
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    ns_model_workspace_free(ws);
    ns_model_free(m);
    ns_train_model_work_free_f32(w);
    ns_train_params_layout_free(&lay);
    free(p);
    free(g);
    free(tok);
    free(ts);
    return system(cmd) == 0 ? 0 : 1;
}

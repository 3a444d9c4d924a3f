/* bench_analysis: the cost of the rows stage's analysis against the forward pass it follows, for
 * one shard of a sweep file's grid (every L, N, T, eps, all heads), in one process.
 *
 * usage: bench_analysis SWEEP.yaml MODEL_DIR [REPS] [reference|fast] [PAYLOAD_OUT]
 *   MODEL_DIR: e.g. a random 124M GPT-2 from `normsweep mkmodel --preset gpt2` (the sweep's own
 *   `model:` is replaced by it; its corpus is not read: the tokens are random ids).
 *   Times REPS (default 3) forward passes alone, then stores every analysed layer's attention
 *   (one more forward pass, untimed) and times REPS runs of the analysis alone over the stored
 *   layers (ns_rows_analyse_layer: exactly what the rows stage does after each layer); reports
 *   the medians. Prints forward_seconds_1t, analysis_seconds, analysis_vs_forward and the
 *   payload size; PAYLOAD_OUT receives the payload's doubles (native order), so two builds'
 *   analyses can be compared bit for bit (`cmp`). Run it with
 *   OPENBLAS_NUM_THREADS=1: the sweep runs one BLAS thread per rank. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "ns_bench.h"

#include "common/ns_file.h"
#include "model/ns_model.h"
#include "rows/ns_plan.h"
#include "rows/ns_rows.h"
#include "spec/ns_sweep_config.h"
#include "spec/ns_sweep_yaml.h"

/* Copies of the analysed layers' attention, taken during one forward pass. */
typedef struct stored {
    ns_attn_layer_view v[64];
    size_t n;
} stored;

static int store_layer(void *user, const ns_attn_layer_view *v, ns_err *err)
{
    stored *st = user;
    if (st->n == sizeof st->v / sizeof st->v[0])
        return ns_fail(err, NS_ERR_INVALID, "more than 64 layers");
    size_t nl = v->n_head * v->head_stride, nv = v->L * v->n_kv_head * v->d_head;
    float *lg = malloc(nl * sizeof *lg), *va = malloc(nv * sizeof *va);
    if (!lg || !va)
        return ns_fail(err, NS_ERR_NOMEM, "out of memory storing layer %zu", v->layer);
    memcpy(lg, v->logits, nl * sizeof *lg);
    memcpy(va, v->values, nv * sizeof *va);
    st->v[st->n] = *v;
    st->v[st->n].logits = lg;
    st->v[st->n].values = va;
    st->v[st->n].weights = NULL; /* the analysis reads logits and values only (the rows and
                                    their slots stay the workspace's) */
    st->n++;
    return NS_OK;
}

static int fail(const char *what, const ns_err *err)
{
    fprintf(stderr, "bench_analysis: %s: %s\n", what, err->msg);
    return 1;
}

int main(int argc, char **argv)
{
    if (argc < 3) {
        fprintf(stderr, "usage: bench_analysis SWEEP.yaml MODEL_DIR [REPS] [reference|fast] "
                        "[PAYLOAD_OUT]\n");
        return 2;
    }
    int reps = argc > 3 ? atoi(argv[3]) : 3;
    ns_kernel kernel = argc > 4 && strcmp(argv[4], "reference") == 0 ? NS_KERNEL_REFERENCE
                                                                      : NS_KERNEL_FAST;
    if (reps < 1 || reps > 50)
        reps = 3;
    ns_err err;
    char *text = NULL;
    size_t len = 0;
    ns_sweep_config cfg;
    ns_sweep_diags diags = {0};
    ns_model *model = NULL;
    if (ns_file_read_all(argv[1], 0, &text, &len, &err) != NS_OK)
        return fail(argv[1], &err);
    if (ns_sweep_parse(text, len, argv[1], &cfg, NULL, &diags, &err) != NS_OK)
        return fail("parse", &err);
    if (ns_model_load(argv[2], &model, &err) != NS_OK)
        return fail(argv[2], &err);
    const ns_model_config *mc = ns_model_config_of(model);
    if (ns_sweep_expand_all(&cfg, mc->n_layer, mc->n_head, &err) != NS_OK)
        return fail("expand", &err);
    ns_grid g;
    ns_sweep_config_grid(&cfg, &g);
    ns_plan plan;
    ns_rows *rows = NULL;
    if (ns_plan_init(&plan, &g, mc, &err) != NS_OK)
        return fail("plan", &err);
    if (ns_rows_new(&plan, model, kernel, 0, &rows, &err) != NS_OK)
        return fail("rows", &err);
    ns_model_workspace *ws = NULL; /* keeping the analysed rows, as the rows stage does */
    size_t L_fwd = plan.derived.L_fwd;
    if (ns_model_workspace_new(model, L_fwd, plan.fwd_rows, plan.n_fwd_rows, &ws, &err) != NS_OK)
        return fail("workspace", &err);
    int32_t *tokens = malloc(L_fwd * sizeof *tokens);
    double *payload = malloc(plan.payload * sizeof *payload);
    double *tf = malloc((size_t)reps * sizeof *tf), *tr = malloc((size_t)reps * sizeof *tr);
    if (!tokens || !payload || !tf || !tr) {
        fprintf(stderr, "bench_analysis: out of memory\n");
        return 1;
    }
    uint64_t x = 88172645463325252ull;
    for (size_t i = 0; i < L_fwd; i++) {
        x ^= x << 13, x ^= x >> 7, x ^= x << 17;
        tokens[i] = (int32_t)(x % mc->vocab_size);
    }
    for (int r = 0; r < reps; r++) {
        double t0 = ns_bench_now();
        if (ns_model_forward(model, ws, tokens, L_fwd, plan.n_layers_run, NULL, NULL, &err))
            return fail("forward", &err);
        tf[r] = ns_bench_now() - t0;
    }
    stored st = {.n = 0};
    if (ns_model_forward(model, ws, tokens, L_fwd, plan.n_layers_run, store_layer, &st, &err))
        return fail("forward (storing the layers)", &err);
    for (int r = 0; r < reps; r++) {
        double t0 = ns_bench_now();
        for (size_t l = 0; l < st.n; l++)
            if (ns_rows_analyse_layer(rows, 0, &st.v[l], NULL, payload, &err) != NS_OK)
                return fail("analysis", &err);
        tr[r] = ns_bench_now() - t0;
    }
    for (size_t l = 0; l < st.n; l++) {
        free((void *)st.v[l].logits);
        free((void *)st.v[l].values);
    }
    if (argc > 5) {
        FILE *fp = fopen(argv[5], "wb");
        if (!fp || fwrite(payload, sizeof *payload, plan.payload, fp) != plan.payload ||
            fclose(fp) != 0) {
            fprintf(stderr, "bench_analysis: %s: cannot write the payload\n", argv[5]);
            return 1;
        }
    }
    double f = ns_bench_median(tf, (size_t)reps), a = ns_bench_median(tr, (size_t)reps);
    printf("grid: %s (%zu layers x %zu heads, %zu L, %zu N, %zu T, %zu eps, L_max %zu), %s kernel\n",
           argv[1], g.nlayers, g.nheads, g.nL, g.nN, g.nT, g.neps, L_fwd,
           kernel == NS_KERNEL_FAST ? "fast" : "reference");
    printf("forward_seconds_1t: %.4f\n", f);
    printf("analysis_seconds: %.4f\n", a);
    printf("analysis_vs_forward: %.4f\n", a / f);
    printf("payload_bytes_per_task: %zu\n", plan.payload * sizeof(double));
    ns_model_workspace_free(ws);
    ns_rows_free(rows);
    ns_plan_free(&plan);
    ns_model_free(model);
    ns_sweep_config_free(&cfg);
    ns_sweep_diags_free(&diags);
    free(text);
    free(tokens);
    free(payload);
    free(tf);
    free(tr);
    return 0;
}

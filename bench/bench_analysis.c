/* bench_analysis: time METRICS.md's analysis of all heads of one shard (124M shape: 12 layers x
 * 12 heads, head dim 64, L_max = 1024) on the ablation grid, against one GPT-2 forward pass.
 *
 * usage: bench_analysis [MODEL_DIR]
 *   with MODEL_DIR (e.g. from `normsweep mkmodel --preset gpt2`): one timed forward pass without
 *   callback, then a second pass whose per-layer callback analyses every head (only the
 *   analysis is timed); prints analysis_seconds, analysis_forward_seconds, analysis_vs_forward.
 *   without: synthetic logits N(0, 2^2) and values N(0, 1); prints analysis_seconds only. */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "analysis/ns_analysis.h"
#include "analysis/ns_rng.h"
#include "model/ns_gpt2.h"

#define L_MAX 1024

static const size_t grid_N[] = {1, 5, 10, 20, 100};
static const double grid_T[] = {0.01, 0.1, 1, 10, 100};
static const double grid_eps[] = {1e-3, 1e-1, 10};
static const size_t grid_rows[] = {31, 63, 127, 255, 511, 1023}; /* L - 1 */

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

typedef struct bench_ctx {
    ns_analysis_params p;
    ns_analysis_ws *ws;
    ns_row_layout lay;
    double *out;
    double seconds;
    size_t heads;
    double checksum; /* keeps the work observable */
} bench_ctx;

static int analyse_head(bench_ctx *c, const ns_head_input *in, uint32_t layer, uint32_t head,
                        ns_err *err)
{
    ns_head_key key = {0, layer, head};
    size_t nrows = sizeof grid_rows / sizeof grid_rows[0];
    double t0 = now();
    int rc = ns_analyze_head(&c->p, &key, in, grid_rows, nrows, c->ws, c->out, err);
    c->seconds += now() - t0;
    if (rc != NS_OK)
        return rc;
    c->heads++;
    double v = c->out[ns_row_index_tn(&c->lay, NS_M_DISTANCE, 2, 1)];
    if (isfinite(v))
        c->checksum += v;
    return NS_OK;
}

static int on_layer(void *user, const ns_attn_layer_view *view, ns_err *err)
{
    bench_ctx *c = user;
    size_t L = view->L, C = view->n_head * view->d_head;
    for (size_t h = 0; h < view->n_head; h++) {
        ns_head_input in = {view->logits + h * L * L, L, view->values + h * view->d_head, C, L,
                            view->d_head};
        NS_TRY(analyse_head(c, &in, (uint32_t)view->layer, (uint32_t)h, err));
    }
    return NS_OK;
}

int main(int argc, char **argv)
{
    bench_ctx c;
    memset(&c, 0, sizeof c);
    c.p.N = grid_N;
    c.p.nN = sizeof grid_N / sizeof grid_N[0];
    c.p.T = grid_T;
    c.p.nT = sizeof grid_T / sizeof grid_T[0];
    c.p.eps = grid_eps;
    c.p.neps = sizeof grid_eps / sizeof grid_eps[0];
    c.p.normalizer.kind = NS_NORM_SOFTMAX;
    c.p.sphere = 1;
    c.p.probes = 8;
    c.p.seed = 1;
    ns_row_layout_init(&c.lay, c.p.nT, c.p.nN, c.p.neps);
    ns_err err;
    int status = 1;
    ns_gpt2_model *model = NULL;
    ns_gpt2_workspace *gws = NULL;
    float *logits = NULL, *values = NULL;
    int32_t *tokens = NULL;
    size_t nrows = sizeof grid_rows / sizeof grid_rows[0];
    c.out = malloc(nrows * c.lay.total * sizeof(double));
    if (!c.out || ns_analysis_ws_new(&c.p, L_MAX, 64, &c.ws, &err) != NS_OK) {
        fprintf(stderr, "bench_analysis: workspace: %s\n", c.out ? err.msg : "out of memory");
        goto done;
    }
    printf("analysis grid: L {32..1024} x N 5 x T 5 x eps 3, softmax, sphere, probes 8, rows 1\n");
    if (argc > 1) {
        if (ns_gpt2_load(argv[1], &model, &err) != NS_OK) {
            fprintf(stderr, "bench_analysis: %s\n", err.msg);
            goto done;
        }
        const ns_gpt2_config *cfg = ns_gpt2_config_of(model);
        if (ns_gpt2_workspace_new(model, L_MAX, &gws, &err) != NS_OK) {
            fprintf(stderr, "bench_analysis: %s\n", err.msg);
            goto done;
        }
        tokens = malloc(L_MAX * sizeof *tokens);
        if (!tokens)
            goto done;
        ns_rng rng;
        ns_rng_init(&rng, 7);
        for (size_t i = 0; i < L_MAX; i++)
            tokens[i] = (int32_t)ns_rng_below(&rng, cfg->vocab_size);
        double t0 = now();
        if (ns_gpt2_forward(model, gws, tokens, L_MAX, NULL, NULL, &err) != NS_OK) {
            fprintf(stderr, "bench_analysis: forward: %s\n", err.msg);
            goto done;
        }
        double fwd = now() - t0;
        if (ns_gpt2_forward(model, gws, tokens, L_MAX, on_layer, &c, &err) != NS_OK) {
            fprintf(stderr, "bench_analysis: analysis in forward: %s\n", err.msg);
            goto done;
        }
        printf("analysis_heads: %zu\n", c.heads);
        printf("analysis_seconds: %.3f\n", c.seconds);
        printf("analysis_forward_seconds: %.3f\n", fwd);
        printf("analysis_vs_forward: %.3f\n", c.seconds / fwd);
    } else {
        /* synthetic: 144 heads of random logits and values */
        logits = malloc((size_t)L_MAX * L_MAX * sizeof *logits);
        values = malloc((size_t)L_MAX * 64 * sizeof *values);
        if (!logits || !values)
            goto done;
        for (uint32_t layer = 0; layer < 12; layer++) {
            for (uint32_t head = 0; head < 12; head++) {
                ns_rng rng;
                ns_rng_init(&rng, 1000u * layer + head);
                for (size_t m = 0; m < L_MAX; m++)
                    for (size_t i = 0; i <= m; i++)
                        logits[m * L_MAX + i] = (float)(2.0 * ns_rng_normal(&rng));
                for (size_t i = 0; i < (size_t)L_MAX * 64; i++)
                    values[i] = (float)ns_rng_normal(&rng);
                ns_head_input in = {logits, L_MAX, values, 64, L_MAX, 64};
                if (analyse_head(&c, &in, layer, head, &err) != NS_OK) {
                    fprintf(stderr, "bench_analysis: %s\n", err.msg);
                    goto done;
                }
            }
        }
        printf("analysis_heads: %zu\n", c.heads);
        printf("analysis_seconds: %.3f\n", c.seconds);
        printf("(synthetic logits/values: no model given, analysis_vs_forward not measured)\n");
    }
    printf("analysis_checksum: %.6g\n", c.checksum);
    status = 0;
done:
    free(tokens);
    free(logits);
    free(values);
    free(c.out);
    ns_analysis_ws_free(c.ws);
    ns_gpt2_workspace_free(gws);
    ns_gpt2_free(model);
    return status;
}

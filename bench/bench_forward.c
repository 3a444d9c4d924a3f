/* bench_forward: time a model's forward pass (any architecture) at L tokens against an sgemm-only
 * loop of exactly the GEMMs the forward issues (same shapes, transposes, leading dimensions, beta
 * and weight matrices), and measure the forward's private memory beyond the model weights.
 *
 * Usage: bench_forward --model DIR [--L 1024] [--reps 5] [--rows 64]   (DIR from `normsweep
 * mkmodel`); --rows: the last rows whose logits and weights are kept, as a sweep keeps the rows
 * it analyses (0: every row, as `dump` does); --reps 0: one pass only, timed with its workspace's
 * allocation, no baseline (a long context).
 * BLAS threads from OPENBLAS_NUM_THREADS. One warm-up pass of each, then `reps` rounds of one
 * forward pass followed by one sgemm pass, so both see the same machine load (the machine is
 * shared); forward_vs_sgemm is the median over the rounds of sgemm seconds / forward seconds.
 * Prints plain `name: value` lines (bench/forward.sh adds the targets): forward_seconds and
 * sgemm_seconds (medians), forward_gflops, sgemm_gflops, forward_vs_sgemm, forward_peak_rss_mb. */
#include <cblas.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "ns_bench.h"

#include "common/ns_blas.h"
#include "model/ns_model.h"
#include "model/ns_model_internal.h"

/* ---- /proc/self/status ---- */

/* Value in kB of a "Key:   N kB" line of /proc/self/status, or -1. */
static long status_kb(const char *key)
{
    FILE *f = fopen("/proc/self/status", "r");
    if (!f)
        return -1;
    char line[256];
    long v = -1;
    size_t n = strlen(key);
    while (fgets(line, sizeof line, f))
        if (strncmp(line, key, n) == 0 && line[n] == ':') {
            v = strtol(line + n + 1, NULL, 10);
            break;
        }
    fclose(f);
    return v;
}

/* Reset VmHWM to the current RSS (Linux >= 4.0); 0 on success. */
static int reset_peak(void)
{
    FILE *f = fopen("/proc/self/clear_refs", "w");
    if (!f)
        return -1;
    int ok = fputs("5", f) >= 0;
    return (fclose(f) == 0 && ok) ? 0 : -1;
}

/* token ids for the benchmark input */
static uint64_t rng_next(uint64_t *s)
{
    uint64_t z = (*s += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

/* ---- the forward's GEMMs, as ns_model_forward issues them ---- */

typedef struct gemm {
    int transb;
    size_t M, N, K, lda, ldb, ldc;
    const float *b; /* the model weight for the linear maps, else NULL (scratch) */
    float beta;
} gemm;

/* A linear map of the forward (ns_mm / ns_affine): beta 1 when it accumulates onto a bias or the
 * residual stream. */
static gemm lin_gemm(const ns_linear *w, size_t L, size_t lda, size_t ldc, int accumulate)
{
    return (gemm){w->trans, L, w->n_out, w->n_in, lda, w->trans ? w->n_in : w->n_out, ldc, w->w,
                  accumulate || w->b ? 1.0f : 0.0f};
}

/* Per layer: the q/k/v maps; per query head and block of NS_MODEL_ATT_BLOCK query rows [m0, m1),
 * q k^T over keys [0, m1) and w v; then (all but the last layer) the attention output map and the
 * MLP's maps. Returns the count written to g (capacity n_layer * (8 + 2 H n_blocks)). */
static size_t forward_gemms(gemm *g, const ns_model *m, size_t L)
{
    const ns_model_config *c = &m->config;
    size_t C = c->n_embd, H = c->n_head, D = c->d_head, F = c->n_inner, n = 0;
    size_t W = m->qkv.width, HD = H * D, KD = c->n_kv_head * D;
    for (size_t l = 0; l < c->n_layer; l++) {
        const ns_layer_weights *w = &m->layers[l];
        for (size_t i = 0; i < w->n_qkv; i++)
            g[n++] = lin_gemm(&w->qkv[i], L, C, W, 0);
        for (size_t h = 0; h < H; h++)
            for (size_t m0 = 0; m0 < L; m0 += NS_MODEL_ATT_BLOCK) {
                size_t m1 = m0 + NS_MODEL_ATT_BLOCK < L ? m0 + NS_MODEL_ATT_BLOCK : L;
                g[n++] = (gemm){1, m1 - m0, m1, D, W, W, L, NULL, 0.0f};
                g[n++] = (gemm){0, m1 - m0, D, m1, L, KD, HD, NULL, 0.0f};
            }
        if (l + 1 == c->n_layer)
            break;
        g[n++] = lin_gemm(&w->o, L, HD, C, 1);
        if (w->gate.w)
            g[n++] = lin_gemm(&w->gate, L, C, F, 0);
        g[n++] = lin_gemm(&w->up, L, C, F, 0);
        g[n++] = lin_gemm(&w->down, L, F, C, 1);
    }
    return n;
}

/* The baseline: every GEMM of g on scratch activations A, B, Cm (weights from the model). */
static void sgemm_pass(const gemm *g, size_t ng, const float *A, const float *B, float *Cm)
{
    for (size_t i = 0; i < ng; i++)
        cblas_sgemm(CblasRowMajor, CblasNoTrans, g[i].transb ? CblasTrans : CblasNoTrans,
                    (int)g[i].M, (int)g[i].N, (int)g[i].K, 1.0f, A, (int)g[i].lda,
                    g[i].b ? g[i].b : B, (int)g[i].ldb, g[i].beta, Cm, (int)g[i].ldc);
}

static int usage(void)
{
    fprintf(stderr, "usage: bench_forward --model DIR [--L N] [--reps N] [--rows N]\n");
    return 2;
}

int main(int argc, char **argv)
{
    const char *dir = NULL;
    size_t L = 1024, reps = 5, keep = 64;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--model") == 0 && i + 1 < argc)
            dir = argv[++i];
        else if (strcmp(argv[i], "--L") == 0 && i + 1 < argc)
            L = strtoul(argv[++i], NULL, 10);
        else if (strcmp(argv[i], "--reps") == 0 && i + 1 < argc)
            reps = strtoul(argv[++i], NULL, 10);
        else if (strcmp(argv[i], "--rows") == 0 && i + 1 < argc)
            keep = strtoul(argv[++i], NULL, 10);
        else
            return usage();
    }
    if (!dir || L == 0 || reps > 100)
        return usage();

    ns_err err;
    ns_err_clear(&err);
    ns_model *model = NULL;
    if (ns_model_load(dir, &model, &err) != NS_OK) {
        fprintf(stderr, "bench_forward: %s\n", err.msg);
        return 1;
    }
    const ns_model_config *c = ns_model_config_of(model);
    if (L > c->n_ctx)
        L = c->n_ctx;
    if (keep > L)
        keep = L;
    /* touch every weight page so the mapped weights are resident before anything is timed */
    volatile float sink = 0;
    for (size_t f = 0; f < model->ckpt.n_files; f++)
        for (size_t i = 0; i < model->ckpt.files[f].map.size; i += 4096)
            sink += (float)model->ckpt.files[f].map.data[i];
    (void)sink;

    int32_t *tokens = malloc(L * sizeof *tokens);
    if (!tokens)
        return 1;
    uint64_t s = 7;
    for (size_t t = 0; t < L; t++)
        tokens[t] = (int32_t)(rng_next(&s) % c->vocab_size);

    /* peak memory of the forward: the workspace and one (warm-up) pass, before the baseline's
     * scratch buffers exist */
    long rss0 = status_kb("VmRSS"), anon0 = status_kb("RssAnon");
    int peak_ok = reset_peak() == 0;
    ns_model_workspace *ws = NULL;
    size_t *rows = malloc((keep ? keep : 1) * sizeof *rows);
    if (!rows)
        return 1;
    for (size_t i = 0; i < keep; i++)
        rows[i] = L - keep + i;
    double t_first = ns_bench_now();
    if (ns_model_workspace_new(model, L, keep ? rows : NULL, keep, &ws, &err) != NS_OK ||
        ns_model_forward(model, ws, tokens, L, c->n_layer, NULL, NULL, &err) != NS_OK) {
        fprintf(stderr, "bench_forward: %s\n", err.msg);
        return 1;
    }
    t_first = ns_bench_now() - t_first; /* the workspace's allocation and one pass */
    long hwm = status_kb("VmHWM"), anon1 = status_kb("RssAnon");
    double peak_mb = peak_ok && hwm > 0 ? (double)(hwm - rss0) / 1024.0
                                        : (double)(anon1 - anon0) / 1024.0;

    /* the same GEMMs alone */
    size_t cap = c->n_layer * (8 + 2 * c->n_head * ((L + NS_MODEL_ATT_BLOCK - 1) / NS_MODEL_ATT_BLOCK));
    gemm *g = calloc(cap, sizeof *g);
    if (!g)
        return 1;
    size_t ng = forward_gemms(g, model, L);
    double flops = 0;
    size_t amax = 0, bmax = 0, cmax = 0;
    for (size_t i = 0; i < ng; i++) {
        flops += 2.0 * (double)g[i].M * (double)g[i].N * (double)g[i].K;
        size_t a = g[i].M * g[i].lda, b = (g[i].transb ? g[i].N : g[i].K) * g[i].ldb,
               cc = g[i].M * g[i].ldc;
        amax = a > amax ? a : amax;
        bmax = b > bmax ? b : bmax;
        cmax = cc > cmax ? cc : cmax;
    }
    /* what the attention would cost as full L x L products (the count before causal blocking) */
    size_t D = c->d_head, La = c->n_layer;
    double square = flops;
    for (size_t m0 = 0; m0 < L; m0 += NS_MODEL_ATT_BLOCK) {
        size_t m1 = m0 + NS_MODEL_ATT_BLOCK < L ? m0 + NS_MODEL_ATT_BLOCK : L;
        square -= (double)La * (double)c->n_head * 4.0 * (double)(m1 - m0) * (double)m1 * (double)D;
    }
    square += (double)La * (double)c->n_head * 4.0 * (double)L * (double)L * (double)D;
    if (reps == 0) { /* --reps 0: the first pass alone, timed (a long context: no baseline) */
        printf("forward_model: %s (%s, n_layer=%zu n_head=%zu n_kv_head=%zu head_dim=%zu "
               "n_embd=%zu n_inner=%zu)\n", dir, c->model_type, c->n_layer, c->n_head,
               c->n_kv_head, c->d_head, c->n_embd, c->n_inner);
        printf("forward_L: %zu\nforward_rows_kept: %zu\nforward_blas_threads: %d\n", L,
               keep ? keep : L, ns_blas_threads());
        printf("forward_gflop_per_pass: %.2f\nforward_seconds: %.4f\nforward_gflops: %.2f\n",
               flops * 1e-9, t_first, flops / t_first * 1e-9);
        printf("forward_peak_rss_mb: %.1f\n", peak_mb);
        return 0;
    }
    float *A = malloc(amax * sizeof(float)), *B = malloc(bmax * sizeof(float));
    float *Cm = malloc(cmax * sizeof(float));
    double *tf = calloc(reps, sizeof *tf), *tg = calloc(reps, sizeof *tg);
    double *ratio = calloc(reps, sizeof *ratio);
    if (!A || !B || !Cm || !tf || !tg || !ratio)
        return 1;
    for (size_t i = 0; i < amax; i++)
        A[i] = 0.01f * (float)(i % 97);
    for (size_t i = 0; i < bmax; i++)
        B[i] = 0.01f * (float)(i % 89);
    memset(Cm, 0, cmax * sizeof(float));
    sgemm_pass(g, ng, A, B, Cm); /* warm-up */

    for (size_t r = 0; r < reps; r++) {
        double t0 = ns_bench_now();
        if (ns_model_forward(model, ws, tokens, L, c->n_layer, NULL, NULL, &err) != NS_OK) {
            fprintf(stderr, "bench_forward: %s\n", err.msg);
            return 1;
        }
        double t1 = ns_bench_now();
        sgemm_pass(g, ng, A, B, Cm);
        tf[r] = t1 - t0;
        tg[r] = ns_bench_now() - t1;
        ratio[r] = tg[r] / tf[r];
    }
    double fwd = ns_bench_median(tf, reps), gem = ns_bench_median(tg, reps);
    double rat = ns_bench_median(ratio, reps);

    printf("forward_model: %s (%s, n_layer=%zu n_head=%zu n_kv_head=%zu head_dim=%zu n_embd=%zu "
           "n_inner=%zu)\n", dir, c->model_type, c->n_layer, c->n_head, c->n_kv_head, c->d_head,
           c->n_embd, c->n_inner);
    printf("forward_L: %zu\n", L);
    printf("forward_rows_kept: %zu\n", keep ? keep : L);
    printf("forward_reps: %zu\n", reps);
    printf("forward_blas_threads: %d\n", ns_blas_threads());
    printf("forward_attention_block: %d\n", NS_MODEL_ATT_BLOCK);
    printf("forward_gemm_count: %zu\n", ng);
    printf("forward_gflop_per_pass: %.2f\n", flops * 1e-9);
    printf("forward_gflop_per_pass_square_attention: %.2f\n", square * 1e-9);
    printf("forward_seconds: %.4f\n", fwd);
    printf("forward_gflops: %.2f\n", flops / fwd * 1e-9);
    printf("sgemm_seconds: %.4f\n", gem);
    printf("sgemm_gflops: %.2f\n", flops / gem * 1e-9);
    printf("forward_vs_sgemm: %.3f\n", rat);
    printf("forward_peak_rss_method: %s\n",
           peak_ok && hwm > 0 ? "VmHWM after clear_refs minus VmRSS with weights resident"
                              : "RssAnon after minus before");
    printf("forward_rss_anon_delta_mb: %.1f\n", (double)(anon1 - anon0) / 1024.0);
    printf("forward_peak_rss_mb: %.1f\n", peak_mb);

    free(A);
    free(B);
    free(Cm);
    free(g);
    free(tf);
    free(tg);
    free(ratio);
    free(tokens);
    free(rows);
    ns_model_workspace_free(ws);
    ns_model_free(model);
    return 0;
}

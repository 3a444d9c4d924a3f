/* analysis_payload: every per-row metric of a fixed set of heads, written as raw doubles to
 * OUT, for tests/simd_clones.sh. The program is built twice: against the analysis library as the
 * program uses it (its hot loops compiled for AVX2 and for the x86-64 baseline, picked at run
 * time) and against a copy built with -DNS_NO_CLONES (baseline only); the two outputs must be
 * the same bytes (docs/ANALYSIS.md, "Determinism").
 *
 * The heads: the stand-in model's 16 heads over 256 War and Peace tokens (real attention: weights
 * that underflow at small T) and a synthetic head whose value vectors repeat and whose logits
 * tie (the fast kernel's cancellation guard and its careful comparisons). Each with the four
 * normalizers, both kernels, sphere on and off, 6 rows from 1 to 256 keys.
 *
 * Usage: analysis_payload OUT (environment: NS_TEST_MODEL_DIR, NS_TEST_GOLDEN_DIR).
 * Prints the number of doubles written and how many of them are finite. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "norm/ns_normalize.h"
#include "analysis/ns_row.h"
#include "analysis/ns_topn.h"
#include "ns_test_model.h"

#define L_SHARD 256

/* Every row of rows[] of one head under p, both kernels, appended to f; counts into *n, *fin. */
static int write_head(FILE *f, const ns_analysis_params *p, const ns_head_key *key,
                      const ns_head_input *in, size_t *n, size_t *fin)
{
    static const size_t rows[] = {0, 1, 7, 31, 100, L_SHARD - 1};
    enum { NROWS = sizeof rows / sizeof *rows };
    ns_row_layout lay[NROWS];
    ns_row_request rq[NROWS];
    ns_analysis_ws *ws = NULL;
    ns_err err;
    if (ns_analysis_ws_new(p, in->L_max, in->d, &ws, &err) != NS_OK) {
        fprintf(stderr, "analysis_payload: %s\n", err.msg);
        return -1;
    }
    size_t total = 0;
    for (size_t r = 0; r < NROWS; r++) {
        size_t nN = 0;
        while (nN < p->nN && p->N[nN] < rows[r] + 1)
            nN++;
        ns_row_layout_init(&lay[r], p->nT, nN, p->neps, ns_topn_rank_is_T_free(&p->normalizer));
        total += lay[r].total;
    }
    double *out = malloc(total * sizeof *out);
    int rc = out ? 0 : -1;
    for (int kernel = 0; kernel < 2 && rc == 0; kernel++) {
        double *o = out;
        for (size_t r = 0; r < NROWS; r++) {
            rq[r] = (ns_row_request){rows[r], &lay[r], o};
            o += lay[r].total;
        }
        if (ns_analyze_head(p, key, in, rq, NROWS, (ns_kernel)kernel, ws, &err) != NS_OK) {
            fprintf(stderr, "analysis_payload: %s\n", err.msg);
            rc = -1;
            break;
        }
        if (fwrite(out, sizeof *out, total, f) != total)
            rc = -1;
        *n += total;
        for (size_t k = 0; k < total; k++)
            *fin += isfinite(out[k]) != 0;
    }
    free(out);
    ns_analysis_ws_free(ws);
    return rc;
}

/* Values that repeat (x_{i+3} = x_i for some i, a zero vector) and logits that tie. */
static void synthetic_head(float *logits, float *values, size_t L, size_t d)
{
    uint64_t s = 77;
    for (size_t i = 0; i < L; i++) {
        for (size_t k = 0; k < d; k++)
            values[i * d + k] = i % 5 == 3 && i >= 3 ? values[(i - 3) * d + k]
                                : i == 10        ? 0.0f
                                                 : tiny_rng_unit(&s);
        for (size_t j = 0; j < L; j++)
            logits[i * L + j] = j % 4 == 1 ? 2.0f : 3.0f * tiny_rng_unit(&s);
    }
}

int main(int argc, char **argv)
{
    if (argc != 2) {
        fprintf(stderr, "usage: analysis_payload OUT\n");
        return 2;
    }
    layer_capture cap;
    if (standin_capture(5000, L_SHARD, &cap) != 0) {
        fprintf(stderr, "analysis_payload: the stand-in forward pass failed\n");
        return 1;
    }
    size_t d = cap.D;
    float *slog = malloc(L_SHARD * L_SHARD * sizeof *slog);
    float *sval = malloc(L_SHARD * d * sizeof *sval);
    FILE *f = fopen(argv[1], "wb");
    if (!slog || !sval || !f) {
        fprintf(stderr, "analysis_payload: cannot write %s\n", argv[1]);
        return 1;
    }
    synthetic_head(slog, sval, L_SHARD, d);
    static const size_t N[] = {1, 2, 3, 5, 8, 13, 21, 34, 55, 89, 150, 255};
    static const double T[] = {0.01, 0.1, 1.0, 10.0}, eps[] = {1e-3, 0.1};
    static const ns_normalizer norms[] = {{.kind = NS_NORM_SOFTMAX, .s = 0.0}, {.kind = NS_NORM_SSMAX, .s = 0.7},
                                          {.kind = NS_NORM_SPARSEMAX, .s = 0.0}, {.kind = NS_NORM_ENTMAX15, .s = 0.0}};
    size_t n = 0, fin = 0;
    int rc = 0;
    for (size_t k = 0; k < 4 && rc == 0; k++)
        for (int sphere = 0; sphere <= 1 && rc == 0; sphere++) {
            ns_analysis_params p = {N, sizeof N / sizeof *N, T, 4, eps, 2, norms[k], sphere, 4, 3};
            for (size_t l = 0; l < cap.n_layer && rc == 0; l++)
                for (size_t h = 0; h < cap.H && rc == 0; h++) {
                    ns_head_key key = {7, (uint32_t)l, (uint32_t)h};
                    ns_head_input in = layer_capture_head(&cap, l, h);
                    rc = write_head(f, &p, &key, &in, &n, &fin);
                }
            ns_head_key key = {8, 0, 0};
            ns_head_input in = {slog, L_SHARD, sval, d, L_SHARD, d, NULL};
            if (rc == 0)
                rc = write_head(f, &p, &key, &in, &n, &fin);
        }
    if (fclose(f) != 0)
        rc = -1;
    layer_capture_free(&cap);
    free(slog);
    free(sval);
    if (rc != 0)
        return 1;
    printf("%zu doubles, %zu finite\n", n, fin);
    return 0;
}

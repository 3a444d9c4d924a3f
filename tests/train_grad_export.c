/* train_grad_export: the trainer's loss and exact gradient (double pass) of a tiny model on a
 * fixed sequence, written for an independent check (tests/check_train_torch.py, PyTorch autograd).
 *
 * Usage: train_grad_export NORMALIZER P T SEED DIR   (P: the normalizer's parameter -- ssmax's s,
 *                                                    sigmoid's bias b; ignored by the others)
 * Writes DIR/tensors.txt (one line per parameter tensor: name offset numel rows cols), DIR/meta.txt
 * (shape, normalizer, param, T, loss_sum, tokens, targets), DIR/params.f64 and DIR/grads.f64 (the
 * parameter block and d loss_sum / d params, little-endian doubles in the block's order).
 * Exit 0, or 1 with a message. */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "model/ns_gpt2.h"
#include "train/ns_train_model_internal.h"
#include "train/ns_train_params.h"

static uint64_t rng_next(uint64_t *s)
{
    uint64_t z = (*s += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

static double rng_unit(uint64_t *s) { return (double)(rng_next(s) >> 11) * 0x1.0p-52 - 1.0; }

#define TOKENS 12

static int write_doubles(const char *dir, const char *name, const double *v, size_t n)
{
    char path[4096];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    FILE *f = fopen(path, "wb");
    if (!f || fwrite(v, sizeof *v, n, f) != n || fclose(f) != 0) {
        fprintf(stderr, "train_grad_export: cannot write %s\n", path);
        return 1;
    }
    return 0;
}

int main(int argc, char **argv)
{
    if (argc != 6) {
        fprintf(stderr, "usage: train_grad_export NORMALIZER P T SEED DIR\n");
        return 1;
    }
    ns_err e;
    ns_normalizer_kind kind;
    if (ns_normalizer_parse(argv[1], &kind, &e) != NS_OK) {
        fprintf(stderr, "train_grad_export: %s\n", e.msg);
        return 1;
    }
    double s = atof(argv[2]), T = atof(argv[3]);
    uint64_t seed = strtoull(argv[4], NULL, 10);
    const char *dir = argv[5];
    /* 2 layers, 2 heads, n_embd 8 (D = 4), 12 positions, vocab 17, n_inner 4C */
    ns_gpt2_config c = {.n_layer = 2, .n_head = 2, .n_embd = 8, .n_ctx = TOKENS, .vocab_size = 17,
                        .n_inner = 32, .ln_eps = 1e-5, .attn_norm = {.kind = kind, .s = s},
                        .attn_temperature = T}; /* .s: ssmax's s or (the same double) sigmoid's b */
    ns_train_params_layout lay;
    if (ns_train_params_layout_init(&lay, &c, &e) != NS_OK) {
        fprintf(stderr, "train_grad_export: %s\n", e.msg);
        return 1;
    }
    /* weights large enough that attention rows are far from uniform (sparsemax and entmax then
     * have supports of a few keys) */
    double *p = malloc(lay.total * sizeof *p), *g = malloc(lay.total * sizeof *g);
    if (!p || !g)
        return 1;
    uint64_t st = seed;
    for (size_t i = 0; i < lay.n; i++) {
        const ns_train_params_tensor *t = &lay.t[i];
        int ln = strstr(t->name, "ln_") != NULL, bias = strstr(t->name, ".bias") != NULL;
        for (size_t j = 0; j < t->numel; j++) {
            double u = rng_unit(&st);
            p[t->offset + j] = t->layer < 0 && !ln ? u : bias ? 0.2 * u : ln ? 1.0 + 0.3 * u : 0.6 * u;
        }
    }
    int32_t tok[TOKENS + 1];
    for (size_t t = 0; t <= TOKENS; t++)
        tok[t] = (int32_t)(rng_next(&st) % c.vocab_size);
    ns_train_model_work_f64 *w = NULL;
    double loss = 0;
    if (ns_train_model_work_new_f64(&lay, TOKENS, &w, &e) != NS_OK ||
        ns_train_model_step_f64(&lay, p, g, w, tok, tok + 1, TOKENS, &loss, &e) != NS_OK) {
        fprintf(stderr, "train_grad_export: %s\n", e.msg);
        return 1;
    }
    char path[4096];
    snprintf(path, sizeof path, "%s/tensors.txt", dir);
    FILE *f = fopen(path, "w");
    if (!f)
        return 1;
    for (size_t i = 0; i < lay.n; i++)
        fprintf(f, "%s %zu %zu %zu %zu\n", lay.t[i].name, lay.t[i].offset, lay.t[i].numel,
                lay.t[i].rows, lay.t[i].cols);
    fclose(f);
    snprintf(path, sizeof path, "%s/meta.txt", dir);
    if (!(f = fopen(path, "w")))
        return 1;
    fprintf(f, "n_layer %zu\nn_head %zu\nn_embd %zu\nvocab %zu\nn_inner %zu\nln_eps %.17g\n"
               "normalizer %s\nparam %.17g\nT %.17g\nloss_sum %.17g\ntokens",
            c.n_layer, c.n_head, c.n_embd, c.vocab_size, c.n_inner, c.ln_eps, argv[1], s, T, loss);
    for (size_t t = 0; t <= TOKENS; t++)
        fprintf(f, " %d", (int)tok[t]);
    fprintf(f, "\n");
    fclose(f);
    int rc = write_doubles(dir, "params.f64", p, lay.total) ||
             write_doubles(dir, "grads.f64", g, lay.total);
    ns_train_model_work_free_f64(w);
    ns_train_params_layout_free(&lay);
    free(p);
    free(g);
    return rc;
}

/* fuzz_sweep_yaml: ns_sweep_parse (the pure parse-from-text entry point of sweep files) on
 * arbitrary bytes; accepted configurations then go through the check against GPT-2 small's shape
 * and a pack/unpack round trip (the broadcast from rank 0). */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "ns_fuzz.h"
#include "spec/ns_sweep_check.h"
#include "spec/ns_sweep_yaml.h"

#define FUZZ_SOURCE "fuzz.yaml"

static void check_diags(const ns_sweep_diags *d)
{
    size_t nerr = 0, nwarn = 0;
    for (size_t i = 0; i < d->n; i++) {
        const ns_sweep_diag *g = &d->items[i];
        NS_FUZZ_CHECK(g->text != NULL, "diagnostic %zu has no text", i);
        NS_FUZZ_CHECK(strncmp(g->text, FUZZ_SOURCE ":", strlen(FUZZ_SOURCE) + 1) == 0,
                      "diagnostic does not start with the file name: %s", g->text);
        ns_fuzz_soft_line("diagnostic", g->text);
        if (g->is_warning)
            nwarn++;
        else
            nerr++;
    }
    /* At most NS_SWEEP_MAX_DIAGS are kept (plus, once sorted, one "N more problems not shown"
     * line); the counts include the suppressed ones. */
    size_t summary = d->suppressed && d->n == NS_SWEEP_MAX_DIAGS + 1;
    NS_FUZZ_CHECK(d->n <= NS_SWEEP_MAX_DIAGS + 1, "%zu diagnostics kept", d->n);
    NS_FUZZ_CHECK(d->suppressed == 0 || d->n >= NS_SWEEP_MAX_DIAGS, "suppressed below the cap");
    NS_FUZZ_CHECK(nerr + nwarn - summary + d->suppressed == d->nerrors + d->nwarnings &&
                      nerr - summary <= d->nerrors && nwarn <= d->nwarnings,
                  "counts %zu/%zu vs items %zu/%zu (+%zu suppressed)", d->nerrors, d->nwarnings,
                  nerr, nwarn, d->suppressed);
}

/* The check against a model, and the broadcast round trip, on a configuration that parsed. */
static void check_accepted(ns_sweep_config *cfg, const ns_sweep_marks *marks)
{
    ns_err err;
    ns_err_clear(&err);
    void *buf = NULL;
    size_t len = 0;
    int rc = ns_sweep_config_pack(cfg, &buf, &len, &err);
    NS_FUZZ_CHECK(rc == NS_OK || rc == NS_ERR_NOMEM, "pack failed: %s", err.msg);
    if (rc == NS_OK) {
        ns_sweep_config back;
        memset(&back, 0, sizeof back);
        rc = ns_sweep_config_unpack(buf, len, &back, &err);
        NS_FUZZ_CHECK(rc == NS_OK || rc == NS_ERR_NOMEM, "unpack of pack failed: %s", err.msg);
        if (rc == NS_OK) {
            NS_FUZZ_CHECK(back.nL == cfg->nL && back.nN == cfg->nN && back.nT == cfg->nT &&
                              back.neps == cfg->neps && back.shard_count == cfg->shard_count &&
                              back.L_max == cfg->L_max && back.seed == cfg->seed,
                          "pack/unpack changed the configuration");
            NS_FUZZ_CHECK(back.nL == 0 || memcmp(back.L, cfg->L, cfg->nL * sizeof *cfg->L) == 0,
                          "pack/unpack changed L");
        }
        ns_sweep_config_free(&back);
        free(buf);
    }

    /* GPT-2 small (the real model's shape). */
    const ns_model_config gpt2 = {.n_layer = 12, .n_head = 12, .n_kv_head = 12, .d_head = 64,
                                  .n_embd = 768, .n_ctx = 1024, .vocab_size = 50257,
                                  .n_inner = 3072, .norm_eps = 1e-5};
    ns_sweep_diags diags = {0};
    rc = ns_sweep_check_model(cfg, marks, &gpt2, "gpt2", &diags, &err);
    NS_FUZZ_CHECK(rc == NS_OK || rc == NS_ERR_NOMEM, "check_model: status %d: %s", rc, err.msg);
    check_diags(&diags);
    if (rc == NS_OK && diags.nerrors == 0) {
        for (size_t i = 0; i < cfg->nlayers; i++)
            NS_FUZZ_CHECK(cfg->layers[i] < gpt2.n_layer, "layer %zu accepted", cfg->layers[i]);
        for (size_t i = 0; i < cfg->nheads; i++)
            NS_FUZZ_CHECK(cfg->heads[i] < gpt2.n_head, "head %zu accepted", cfg->heads[i]);
        NS_FUZZ_CHECK(cfg->L_max <= gpt2.n_ctx, "L_max %zu accepted", cfg->L_max);
    }
    ns_sweep_diags_free(&diags);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    ns_sweep_config cfg;
    ns_sweep_marks marks;
    ns_sweep_diags diags = {0};
    ns_err err;
    memset(&cfg, 0, sizeof cfg);
    memset(&marks, 0, sizeof marks);
    ns_err_clear(&err);
    int rc = ns_sweep_parse((const char *)data, size, FUZZ_SOURCE, &cfg, &marks, &diags, &err);
    check_diags(&diags);
    if (rc == NS_OK) {
        NS_FUZZ_CHECK(diags.nerrors == 0, "NS_OK with %zu errors", diags.nerrors);
        for (size_t i = 1; i < cfg.nL; i++)
            NS_FUZZ_CHECK(cfg.L[i - 1] < cfg.L[i], "L not ascending and unique");
        /* The schema alone does not compare settings: L <= shards.L_max is the grid check's. */
        ns_sweep_diags gd = {0};
        ns_err gerr;
        ns_err_clear(&gerr);
        int grc = ns_sweep_check_grid(&cfg, &marks, &gd, &gerr);
        NS_FUZZ_CHECK(grc == NS_OK || grc == NS_ERR_NOMEM, "check_grid: status %d: %s", grc,
                      gerr.msg);
        check_diags(&gd);
        if (grc == NS_OK && gd.nerrors == 0)
            for (size_t i = 0; i < cfg.nL; i++)
                NS_FUZZ_CHECK(cfg.L[i] <= cfg.L_max, "L %zu > L_max %zu accepted", cfg.L[i],
                              cfg.L_max);
        ns_sweep_diags_free(&gd);
        for (size_t i = 0; i < cfg.nT; i++)
            NS_FUZZ_CHECK(cfg.T[i] > 0, "T %g accepted", cfg.T[i]);
        for (size_t i = 0; i < cfg.neps; i++)
            NS_FUZZ_CHECK(cfg.eps[i] > 0, "eps %g accepted", cfg.eps[i]);
        check_accepted(&cfg, &marks);
    } else {
        ns_fuzz_check_err(rc, &err);
        NS_FUZZ_CHECK(rc == NS_ERR_INVALID || rc == NS_ERR_NOMEM, "unexpected status %d: %s", rc,
                      err.msg);
        NS_FUZZ_CHECK(rc != NS_ERR_INVALID || diags.nerrors > 0, "NS_ERR_INVALID without errors");
    }
    ns_sweep_diags_free(&diags);
    ns_sweep_marks_free(&marks);
    ns_sweep_config_free(&cfg);
    return 0;
}

/* test_sweep_config: the sweep YAML parser (defaults, every setting, the bad files under
 * tests/data/sweeps with their exact FILE:LINE:COL messages), checks against a model and a token
 * count, grid/row expansion and skipped (L, N) cells, Gutenberg stripping, sharding, packing,
 * the list core (spec/ns_list) the sweep file and dump share. */
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/ns_file.h"
#include "ns_test.h"
#include "corpus/ns_corpus.h"
#include "model/ns_gpt2.h" /* NS_GPT2_ATTN_WORK */
#include "rows/ns_plan.h"
#include "reduce/ns_results.h"
#include "spec/ns_list.h"
#include "spec/ns_sweep_check.h"
#include "spec/ns_sweep_inputs.h"
#include "spec/ns_sweep_yaml.h"
#include "tokenizer/ns_tokenizer.h"

/* Parse text as file `name`; returns the status, diags sorted. */
/* The schema alone: the parser, then the checks that need several settings (as `validate
 * --schema-only` runs them). */
static int parse(const char *text, const char *name, ns_sweep_config *cfg, ns_sweep_marks *marks,
                 ns_sweep_diags *diags)
{
    ns_err err;
    ns_sweep_marks local;
    memset(diags, 0, sizeof *diags);
    int rc = ns_sweep_parse(text, strlen(text), name, cfg, marks ? marks : &local, diags, &err);
    if (rc != NS_ERR_NOMEM && ns_sweep_check_grid(cfg, marks ? marks : &local, diags, &err) == NS_OK &&
        diags->nerrors)
        rc = NS_ERR_INVALID;
    if (!marks)
        ns_sweep_marks_free(&local);
    ns_sweep_diags_sort(diags);
    return rc;
}

static void dump_diags(const char *what, const ns_sweep_diags *d)
{
    for (size_t i = 0; i < d->n; i++)
        fprintf(stderr, "  [%s] %s\n", what, d->items[i].text);
}

/* ---- defaults and values ------------------------------------------------------------------ */

static void test_defaults(void)
{
    ns_sweep_config cfg;
    ns_sweep_diags d;
    int rc = parse("shards: {count: 2, L_max: 64}\ngrid: {L: [32], N: 1}\n", "dir/min.yaml", &cfg,
                   NULL, &d);
    dump_diags("defaults", &d);
    CU_ASSERT_EQUAL_FATAL(rc, NS_OK);
    CU_ASSERT_EQUAL(d.n, 0);
    CU_ASSERT_STRING_EQUAL(cfg.source_path, "dir/min.yaml");
    CU_ASSERT_STRING_EQUAL(cfg.model, "gpt2");
    CU_ASSERT_STRING_EQUAL(cfg.tokenizer, "tokenizer");
    CU_ASSERT_STRING_EQUAL(cfg.corpus, "war_and_peace");
    CU_ASSERT_EQUAL(cfg.strip_gutenberg, 1);
    CU_ASSERT_EQUAL(cfg.shard_count, 2);
    CU_ASSERT_EQUAL(cfg.L_max, 64);
    CU_ASSERT_EQUAL(cfg.shard_first, 0);
    CU_ASSERT_EQUAL(cfg.shard_stride, 64); /* default: L_max, consecutive shards */
    CU_ASSERT_EQUAL(cfg.nL, 1);
    CU_ASSERT_EQUAL(cfg.nN, 1);
    CU_ASSERT_EQUAL(cfg.N[0], 1);
    CU_ASSERT_EQUAL_FATAL(cfg.nT, 1);
    CU_ASSERT_EQUAL(cfg.T[0], 1.0);
    CU_ASSERT_EQUAL_FATAL(cfg.neps, 1);
    CU_ASSERT_EQUAL(cfg.eps[0], 1e-3);
    CU_ASSERT_EQUAL(cfg.layers_all, 1);
    CU_ASSERT_EQUAL(cfg.heads_all, 1);
    CU_ASSERT_EQUAL(cfg.nlayers, 0);
    CU_ASSERT_EQUAL(cfg.nheads, 0);
    CU_ASSERT_EQUAL(cfg.nnormalizers, 1);
    CU_ASSERT_EQUAL(cfg.normalizers[0].kind, NS_NORM_SOFTMAX);
    CU_ASSERT_EQUAL(cfg.rows, 1);
    CU_ASSERT_EQUAL(cfg.sphere, 1);
    CU_ASSERT_EQUAL(cfg.seed, 0);
    CU_ASSERT_EQUAL(cfg.ks_alpha, 0.01);
    CU_ASSERT_EQUAL(cfg.probes, 8);
    CU_ASSERT_EQUAL(cfg.keep_samples, 0);
    CU_ASSERT_EQUAL(cfg.bootstrap_resamples, 2000);
    CU_ASSERT_STRING_EQUAL(cfg.output, "runs/min/min.nc");
    CU_ASSERT_STRING_EQUAL(cfg.checkpoint_dir, "runs/min/checkpoint");
    CU_ASSERT_STRING_EQUAL(cfg.yaml_text, "shards: {count: 2, L_max: 64}\ngrid: {L: [32], N: 1}\n");
    ns_sweep_config_free(&cfg);
    ns_sweep_diags_free(&d);
}

static const char *full_text =
    "model: some/model_dir\n"
    "tokenizer: tok\n"
    "corpus: book.txt\n"
    "strip_gutenberg: false\n"
    "shards:\n"
    "  count: 5\n"
    "  L_max: 128\n"
    "  first: 1000\n"
    "  stride: 64\n"
    "grid:\n"
    "  L: [128, 16, {from: 32, to: 96, step: 32}]\n"
    "  N: {from: 1, to: 4}\n"
    "  T: [10, 0.01, 1]\n"
    "  eps: 0.5\n"
    "  layers: [3, 1]\n"
    "  heads: all\n"
    "normalizer: [entmax15, {name: ssmax, s: 0.5}, softmax, {name: sparsemax}]\n"
    "rows: 2\n"
    "sphere: False\n"
    "seed: 18446744073709551615\n"
    "ks_alpha: 0.05\n"
    "probes: 0\n"
    "keep_samples: TRUE\n"
    "bootstrap: {resamples: 1000}\n"
    "output: out/x.nc\n"
    "checkpoint_dir: 'out/ck'\n";

static void test_every_setting(void)
{
    ns_sweep_config cfg;
    ns_sweep_marks marks;
    ns_sweep_diags d;
    int rc = parse(full_text, "full.yaml", &cfg, &marks, &d);
    dump_diags("full", &d);
    CU_ASSERT_EQUAL_FATAL(rc, NS_OK);
    CU_ASSERT_STRING_EQUAL(cfg.model, "some/model_dir");
    CU_ASSERT_STRING_EQUAL(cfg.tokenizer, "tok");
    CU_ASSERT_STRING_EQUAL(cfg.corpus, "book.txt");
    CU_ASSERT_EQUAL(cfg.strip_gutenberg, 0);
    CU_ASSERT_EQUAL(cfg.shard_count, 5);
    CU_ASSERT_EQUAL(cfg.L_max, 128);
    CU_ASSERT_EQUAL(cfg.shard_first, 1000);
    CU_ASSERT_EQUAL(cfg.shard_stride, 64);
    /* lists come out sorted; a range expands; a lone value is a one-element list */
    size_t L[] = {16, 32, 64, 96, 128};
    CU_ASSERT_EQUAL_FATAL(cfg.nL, 5);
    for (size_t i = 0; i < 5; i++)
        CU_ASSERT_EQUAL(cfg.L[i], L[i]);
    CU_ASSERT_EQUAL_FATAL(cfg.nN, 4);
    for (size_t i = 0; i < 4; i++)
        CU_ASSERT_EQUAL(cfg.N[i], i + 1);
    CU_ASSERT_EQUAL_FATAL(cfg.nT, 3);
    CU_ASSERT_EQUAL(cfg.T[0], 0.01);
    CU_ASSERT_EQUAL(cfg.T[1], 1.0);
    CU_ASSERT_EQUAL(cfg.T[2], 10.0);
    CU_ASSERT_EQUAL_FATAL(cfg.neps, 1);
    CU_ASSERT_EQUAL(cfg.eps[0], 0.5);
    CU_ASSERT_EQUAL(cfg.layers_all, 0);
    CU_ASSERT_EQUAL_FATAL(cfg.nlayers, 2);
    CU_ASSERT_EQUAL(cfg.layers[0], 1);
    CU_ASSERT_EQUAL(cfg.layers[1], 3);
    CU_ASSERT_EQUAL(cfg.heads_all, 1);
    /* normalizers keep the order written */
    CU_ASSERT_EQUAL_FATAL(cfg.nnormalizers, 4);
    CU_ASSERT_EQUAL(cfg.normalizers[0].kind, NS_NORM_ENTMAX15);
    CU_ASSERT_EQUAL(cfg.normalizers[1].kind, NS_NORM_SSMAX);
    CU_ASSERT_EQUAL(cfg.normalizers[1].s, 0.5);
    CU_ASSERT_EQUAL(cfg.normalizers[2].kind, NS_NORM_SOFTMAX);
    CU_ASSERT_EQUAL(cfg.normalizers[3].kind, NS_NORM_SPARSEMAX);
    CU_ASSERT_EQUAL(cfg.rows, 2);
    CU_ASSERT_EQUAL(cfg.sphere, 0);
    CU_ASSERT_EQUAL(cfg.seed, UINT64_MAX);
    CU_ASSERT_EQUAL(cfg.ks_alpha, 0.05);
    CU_ASSERT_EQUAL(cfg.probes, 0);
    CU_ASSERT_EQUAL(cfg.keep_samples, 1);
    CU_ASSERT_EQUAL(cfg.bootstrap_resamples, 1000);
    CU_ASSERT_EQUAL(marks.bootstrap_resamples.line, 24);
    CU_ASSERT_EQUAL(marks.bootstrap_resamples.col, 24);
    CU_ASSERT_STRING_EQUAL(cfg.output, "out/x.nc");
    CU_ASSERT_STRING_EQUAL(cfg.checkpoint_dir, "out/ck");
    /* marks: 1-based positions of the values, items parallel to the sorted lists */
    CU_ASSERT_EQUAL(marks.model.line, 1);
    CU_ASSERT_EQUAL(marks.model.col, 8);
    CU_ASSERT_EQUAL(marks.L_max.line, 7);
    CU_ASSERT_EQUAL(marks.L_max.col, 10);
    CU_ASSERT_EQUAL(marks.L[0].line, 11); /* 16 */
    CU_ASSERT_EQUAL(marks.L[0].col, 12);
    CU_ASSERT_EQUAL(marks.L[1].col, 16); /* 32 from the range: the range's mark */
    CU_ASSERT_EQUAL(marks.L[3].col, 16); /* 96 from the range */
    CU_ASSERT_EQUAL(marks.L[4].col, 7);  /* 128 */
    CU_ASSERT_EQUAL(marks.layers[0].line, 15);
    CU_ASSERT_EQUAL(marks.layers[0].col, 15);
    ns_sweep_marks_free(&marks);
    ns_sweep_config_free(&cfg);
    ns_sweep_diags_free(&d);
}

static void test_one_problem(const char *text, const char *expected)
{
    ns_sweep_config cfg;
    ns_sweep_diags d;
    int rc = parse(text, "t.yaml", &cfg, NULL, &d);
    CU_ASSERT_EQUAL(rc, NS_ERR_INVALID);
    CU_ASSERT_EQUAL(d.n, 1);
    if (d.n != 1 || strcmp(d.items[0].text, expected) != 0) {
        fprintf(stderr, "  expected: %s\n", expected);
        dump_diags("got", &d);
        CU_FAIL("diagnostic differs");
    }
    ns_sweep_config_free(&cfg);
    ns_sweep_diags_free(&d);
}

/* A few messages spelled out here (the files under tests/data/sweeps hold many more). */
static void test_inline_problems(void)
{
    const char *base = "shards: {count: 2, L_max: 64}\n";
    char buf[512];
    snprintf(buf, sizeof buf, "%sgrid: {L: [32], N: [1], T: [1, 0]}\n", base);
    test_one_problem(buf, "t.yaml:2:32: grid.T: 0 is out of range [1e-100, 1e100]");
    snprintf(buf, sizeof buf, "%sgrid: {L: [32], N: [0]}\n", base);
    test_one_problem(buf, "t.yaml:2:21: grid.N: 0 is out of range 1..2147483647 (the output stores "
                          "N as a 32-bit integer)");
    snprintf(buf, sizeof buf, "%sgrid: {L: [32, 128], N: [1]}\n", base);
    test_one_problem(buf, "t.yaml:2:16: grid.L: L = 128 exceeds shards.L_max = 64");
    snprintf(buf, sizeof buf, "%sgrid: {L: [32], N: [1], eps: [-1]}\n", base);
    test_one_problem(buf, "t.yaml:2:31: grid.eps: -1 is out of range [1e-100, 1e100]");
    snprintf(buf, sizeof buf, "%sgrid: {L: [32], N: []}\n", base);
    test_one_problem(buf, "t.yaml:2:20: grid.N: empty list");
    snprintf(buf, sizeof buf, "%sgrid: {L: [32], N: [1]}\nmdoel: x\n", base);
    test_one_problem(buf, "t.yaml:3:1: unknown key 'mdoel' (did you mean 'model'?)");
}

/* The plan a sweep's grid gives: which N each L keeps, the rows of each L, the payload layout. */
static void test_skipped_cells_are_not_errors(void)
{
    ns_sweep_config cfg;
    ns_sweep_diags d;
    int rc = parse("shards: {count: 1, L_max: 64}\ngrid: {L: [8, 64], N: [4, 8, 100]}\n", "s.yaml",
                   &cfg, NULL, &d);
    CU_ASSERT_EQUAL_FATAL(rc, NS_OK);
    CU_ASSERT_EQUAL(d.n, 0);
    ns_err err;
    CU_ASSERT_EQUAL_FATAL(ns_sweep_expand_all(&cfg, 2, 3, &err), NS_OK);
    CU_ASSERT_EQUAL(cfg.nlayers, 2);
    CU_ASSERT_EQUAL(cfg.nheads, 3);
    ns_model_config mc = {.n_layer = 2, .n_head = 3, .n_kv_head = 3, .d_head = 4, .n_embd = 12,
                          .n_ctx = 64, .vocab_size = 50257, .n_inner = 48, .norm_eps = 1e-5};
    ns_grid g;
    ns_sweep_config_grid(&cfg, &g);
    ns_plan plan;
    CU_ASSERT_EQUAL_FATAL(ns_plan_init(&plan, &g, &mc, &err), NS_OK);
    /* (8, 8), (8, 100), (64, 100) are skipped: L = 8 keeps N = 4, L = 64 keeps 4 and 8 */
    CU_ASSERT_EQUAL(plan.nN_L[0], 1);
    CU_ASSERT_EQUAL(plan.nN_L[1], 2);
    CU_ASSERT_EQUAL(plan.derived.L_fwd, 64);
    CU_ASSERT_EQUAL(plan.n_layers_run, 2);
    CU_ASSERT_EQUAL(plan.derived.nslices, 2 * 3 * 1 * 2);
    ns_plan_free(&plan);
    ns_sweep_config_free(&cfg);
    ns_sweep_diags_free(&d);
}

static void test_grid_rows_and_counts(void)
{
    ns_sweep_config cfg;
    ns_sweep_diags d;
    int rc = parse("shards: {count: 3, L_max: 16}\n"
                   "grid: {L: [16, 4, 8], N: [1, 4, 6, 8, 20], T: [0.5, 1, 2], layers: [0, 2]}\n"
                   "rows: 3\nnormalizer: [softmax, sparsemax]\n",
                   "g.yaml", &cfg, NULL, &d);
    dump_diags("grid", &d);
    CU_ASSERT_EQUAL_FATAL(rc, NS_OK);
    ns_err err;
    CU_ASSERT_EQUAL_FATAL(ns_sweep_expand_all(&cfg, 4, 2, &err), NS_OK);
    CU_ASSERT_EQUAL(cfg.nlayers, 2); /* explicit list kept */
    CU_ASSERT_EQUAL(cfg.nheads, 2);
    ns_model_config mc = {.n_layer = 4, .n_head = 2, .n_kv_head = 2, .d_head = 4, .n_embd = 8,
                          .n_ctx = 16, .vocab_size = 50257, .n_inner = 32, .norm_eps = 1e-5};
    ns_grid g;
    ns_sweep_config_grid(&cfg, &g);
    ns_plan plan;
    CU_ASSERT_EQUAL_FATAL(ns_plan_init(&plan, &g, &mc, &err), NS_OK);
    /* rows r = 0..2 of L are prefix rows L-1-r */
    size_t row_m[] = {3, 2, 1, 7, 6, 5, 15, 14, 13};
    for (size_t Li = 0; Li < 3; Li++)
        for (size_t r = 0; r < 3; r++)
            CU_ASSERT_EQUAL(ns_plan_row(&plan, Li, r), row_m[Li * 3 + r]);
    size_t nN_L[] = {1, 3, 4}; /* N < 4: {1}; N < 8: {1, 4, 6}; N < 16: {1, 4, 6, 8} */
    for (size_t Li = 0; Li < 3; Li++)
        CU_ASSERT_EQUAL(plan.nN_L[Li], nN_L[Li]);
    CU_ASSERT_EQUAL(plan.n_layers_run, 3); /* layers 0 and 2: the forward stops after layer 2 */
    /* blocks of `rows` records, laid out (layer, head, normalizer, L), without gaps */
    size_t off = 0;
    for (size_t li = 0; li < 2; li++)
        for (size_t hi = 0; hi < 2; hi++)
            for (size_t ni = 0; ni < 2; ni++)
                for (size_t Li = 0; Li < 3; Li++)
                    for (size_t r = 0; r < 3; r++) {
                        CU_ASSERT_EQUAL(ns_plan_offset(&plan, li, hi, ni, Li, r), off);
                        off += ns_plan_layout(&plan, ni, Li)->total;
                    }
    CU_ASSERT_EQUAL(plan.payload, off);
    ns_plan_free(&plan);
    ns_sweep_config_free(&cfg);
    ns_sweep_diags_free(&d);
}

/* ---- memory estimate --------------------------------------------------------------------- */

typedef struct grid_msgs {
    int n;
    ns_plan_where where[4];
    char text[4][512];
} grid_msgs;

static int keep_msg(void *user, ns_plan_where where, size_t index, const char *text)
{
    grid_msgs *m = user;
    (void)index;
    if (m->n < 4) {
        m->where[m->n] = where;
        snprintf(m->text[m->n], sizeof m->text[m->n], "%s", text);
    }
    m->n++;
    return NS_OK;
}

/* The estimate against the plan's own sizes and a hand count of the forward workspace; the
 * check refuses exactly above the limit, and a payload beyond one MPI message whatever the limit. */
static void test_memory_estimate(void)
{
    ns_sweep_config cfg;
    ns_sweep_diags d;
    int rc = parse("shards: {count: 3, L_max: 16}\n"
                   "grid: {L: [16, 4, 8], N: [1, 4, 6, 8, 20], T: [0.5, 1, 2], layers: [0, 2]}\n"
                   "rows: 3\nnormalizer: [softmax, sparsemax]\n",
                   "g.yaml", &cfg, NULL, &d);
    CU_ASSERT_EQUAL_FATAL(rc, NS_OK);
    ns_err err;
    CU_ASSERT_EQUAL_FATAL(ns_sweep_expand_all(&cfg, 4, 2, &err), NS_OK);
    ns_model_config mc = {.n_layer = 4, .n_head = 2, .n_kv_head = 2, .d_head = 4, .n_embd = 8,
                          .n_ctx = 16, .vocab_size = 50257, .n_inner = 32, .norm_eps = 1e-5};
    ns_grid g;
    ns_sweep_config_grid(&cfg, &g);
    ns_plan plan;
    CU_ASSERT_EQUAL_FATAL(ns_plan_init(&plan, &g, &mc, &err), NS_OK);
    ns_plan_memory m;
    ns_plan_memory_estimate(&g, &mc, 3, 0, &m);
    /* the payload the plan lays out, plus the two header doubles of the message */
    CU_ASSERT_EQUAL(m.payload, 8.0 * (double)(plan.payload + 2));
    /* forward workspace for L = 16, C = 8, H = KV = 2, D = 4, F = 32, keeping the 9 rows the grid
     * analyses (13..15, 5..7, 1..3), in floats: x, ln, values, att (4 L C), qkv (3 L C), fc (L F),
     * one block of scores and weights (2 B L, B = min(L, 128)), the kept rows' logits and
     * weights (2 H R L), then the model's normalizer's work (NS_GPT2_ATTN_WORK(L) = 4 L doubles)
     * and the rows and their slots (R + L size_t); each of the 14 buffers rounded up to 16
     * floats adds at most 64 bytes, which the estimate counts in full */
    double fwd = 4.0 * (4 * 16 * 8 + 3 * 16 * 8 + 16 * 32 + 2 * 16 * 16 + 2 * 2 * 9 * 16) +
                 8.0 * NS_GPT2_ATTN_WORK(16) + 14 * 64.0 + 8.0 * (9 + 16);
    CU_ASSERT_EQUAL(plan.n_fwd_rows, 9);
    CU_ASSERT_EQUAL(ns_model_workspace_bytes(&mc, 16, 9), fwd);
    /* one analysis workspace per normalizer (the rows stage makes one for each) */
    CU_ASSERT_EQUAL(m.task, fwd + 2.0 * ns_analysis_ws_bytes(8, 16, 4) + 2.0 * m.payload);
    /* the work of a task, counted by hand: layers 0..2 run (layer 2 the deepest analysed); per
     * layer q/k/v 2 L C 3C = 6144 and per head q k^T and w v over one block of 16 rows
     * 2 x 2 x 16 x 16 x 4 = 4096; before the last layer also the output map 2 L C C = 2048 and the
     * MLP 2 x 2 L C F = 16384; the Gram matrices L^2 d per (layer, head, normalizer): 8 x 1024 */
    ns_plan_work w;
    ns_plan_work_estimate(&g, &mc, &w);
    CU_ASSERT_EQUAL(w.forward_flops, 3.0 * (6144 + 2 * 4096) + 2.0 * (2048 + 16384));
    CU_ASSERT_EQUAL(w.gram_flops, 8.0 * 16 * 16 * 4);
    /* rank 0: every slice's result twice, plus one slice's 9 rows of the largest record */
    size_t maxrec = 0;
    for (size_t i = 0; i < 2 * 3; i++)
        maxrec = plan.lay[i].total > maxrec ? plan.lay[i].total : maxrec;
    double red = 8.0 * (2.0 * (double)(plan.derived.nslices * plan.derived.slice.total) +
                        9.0 * (double)maxrec);
    /* the bootstrap's per-shard values, counted by hand: 24 slices (2 layers x 2 heads x 2
     * normalizers x 3 L), each with, per shard, a sum and a count of 7 means at 3 T x 5 N, of
     * entropy_norm at 3 T, jac_exact's maximum at 3 T, and the 3 rows of the KS tests' 3
     * distances at 3 T x 5 N: (14 x 15 + 3 x 3 + 3 x 15 x 3) x 3 shards; one rank holds them
     * all (its 6 groups' T parts) and, while they travel, one round's reduced blocks: every
     * slice here (a round holds up to 32 MiB), which one rank sends as they are */
    double boot = 8.0 * 24.0 * (14.0 * 15.0 + 9.0 + 135.0) * 3.0;
    CU_ASSERT_EQUAL(plan.derived.nslices, 24);
    CU_ASSERT_EQUAL(m.boot, 2.0 * boot);
    CU_ASSERT_EQUAL(m.boot_capped, 0);
    CU_ASSERT_EQUAL(m.boot_min_ranks, 1);
    CU_ASSERT_EQUAL(m.reduce, red + 2.0 * boot);
    ns_plan_memory_estimate(&g, &mc, 3, 1, &m);
    CU_ASSERT_EQUAL(m.reduce, red + 2.0 * boot +
                                  8.0 * 2.0 * (double)(plan.derived.nslices *
                                                       ns_grid_slice_samples(&plan.derived, 9)));
    /* per rank, with S shards: a T part is (14 x 5 + 3 + 3 x 5 x 3) S = 118 S doubles, a slice's
     * block 3 T parts, 12 slices per normalizer, 6 groups (2 normalizers x 3 T); beyond 3949
     * shards a round is one slice (2^25 bytes / (8 x 354 S) < 1), sent from a copy sorted by
     * destination when there is more than one rank. One rank: 6 x 12 x 118 S + 354 S doubles =
     * 70800 S bytes; two: 3 groups, 36 x 118 S + 2 x 354 S = 39648 S bytes; four: 2 groups,
     * three to five: 2 groups, 28320 S; six or more: one group, 16992 S. */
    /* 1000 shards: a round is 11 slices (2^25 / (8 x 354000) = 11.8) */
    CU_ASSERT_EQUAL(ns_plan_boot_rank_bytes(&g, 1000, 1, 0), 8.0 * (24.0 + 11.0) * 354.0 * 1000.0);
    CU_ASSERT_EQUAL(ns_plan_boot_rank_bytes(&g, 30000, 1, 0), 70800.0 * 30000.0);
    CU_ASSERT_EQUAL(ns_plan_boot_rank_bytes(&g, 30000, 2, 0), 39648.0 * 30000.0);
    CU_ASSERT_EQUAL(ns_plan_boot_rank_bytes(&g, 30000, 3, 0), 28320.0 * 30000.0);
    CU_ASSERT_EQUAL(ns_plan_boot_rank_bytes(&g, 30000, 4, 0), 28320.0 * 30000.0);
    CU_ASSERT_EQUAL(ns_plan_boot_rank_bytes(&g, 30000, 5, 0), 28320.0 * 30000.0);
    CU_ASSERT_EQUAL(ns_plan_boot_rank_bytes(&g, 30000, 6, 0), 16992.0 * 30000.0);
    CU_ASSERT_EQUAL(ns_plan_boot_rank_bytes(&g, 30000, 64, 0), 16992.0 * 30000.0);
    /* the 1 GiB cap on one rank: 15165 shards (1073682000 bytes) get intervals, 15166
     * (1073752800) none, as the run decides (ns_results_boot_wanted); capped values are not held
     * on one rank, so its reduction does not count them; two ranks (601301568 bytes each) get
     * them */
    ns_plan_memory_estimate(&g, &mc, 15165, 0, &m);
    CU_ASSERT_EQUAL(m.boot, 1073682000.0);
    CU_ASSERT_EQUAL(m.boot_capped, 0);
    CU_ASSERT_EQUAL(m.boot_min_ranks, 1);
    CU_ASSERT_EQUAL(ns_results_boot_wanted(&plan, 15165, 1, 1, 0), 1);
    double cells2 = 2.0 * (double)(plan.derived.nslices * plan.derived.slice.total);
    CU_ASSERT_EQUAL(m.reduce, 8.0 * (cells2 + 3.0 * 15165.0 * (double)maxrec) + 1073682000.0);
    ns_plan_memory_estimate(&g, &mc, 15166, 0, &m);
    CU_ASSERT_EQUAL(m.boot, 1073752800.0);
    CU_ASSERT_EQUAL(m.boot_capped, 1);
    CU_ASSERT_EQUAL(m.boot_min_ranks, 2);
    CU_ASSERT_EQUAL(ns_results_boot_wanted(&plan, 15166, 1, 1, 0), 0);
    CU_ASSERT_EQUAL(ns_results_boot_wanted(&plan, 15166, 2, 2, 0), 1);
    /* the same two ranks when rank 0 reduces alone (a checkpoint directory it alone sees): its
     * round is still one slice, so the figure is the same */
    CU_ASSERT_EQUAL(ns_results_boot_rank_bytes(&plan, 15166, 2, 1, 0), 39648.0 * 15166.0);
    /* a limit passed in decides instead of the default one */
    CU_ASSERT_EQUAL(ns_results_boot_wanted(&plan, 15166, 2, 2, 39648.0 * 15166.0), 1);
    CU_ASSERT_EQUAL(ns_results_boot_wanted(&plan, 15166, 2, 2, 39648.0 * 15166.0 - 1.0), 0);
    /* a limit below 256 MiB shrinks the rounds to an eighth of it: 3 shards' slices are 8496
     * bytes, so a limit of 100000 bytes allows 12500 bytes per round, one slice (24 at the
     * default); one rank then holds 24 + 1 slices' blocks */
    CU_ASSERT_EQUAL(ns_boot_shard_round(1062, 100000.0), 1);
    CU_ASSERT_EQUAL(ns_boot_shard_round(1062, 0.0), 3949);
    CU_ASSERT_EQUAL(ns_plan_boot_rank_bytes(&g, 3, 1, 100000.0), 8.0 * 25.0 * 1062.0);
    CU_ASSERT_EQUAL(m.reduce, 8.0 * (cells2 + 3.0 * 15166.0 * (double)maxrec));
    /* 30000 shards: from 3 ranks on (849600000 bytes; 1189440000 on 2); 70000: at no count
     * (one group per rank is 1189440000 bytes) */
    ns_plan_memory_estimate(&g, &mc, 30000, 0, &m);
    CU_ASSERT_EQUAL(m.boot_min_ranks, 3);
    CU_ASSERT_EQUAL(ns_results_boot_wanted(&plan, 30000, 2, 2, 0), 0);
    CU_ASSERT_EQUAL(ns_results_boot_wanted(&plan, 30000, 3, 3, 0), 1);
    ns_plan_memory_estimate(&g, &mc, 70000, 0, &m);
    CU_ASSERT_EQUAL(m.boot_min_ranks, 0);
    CU_ASSERT_EQUAL(m.boot_capped, 1);
    CU_ASSERT_EQUAL(ns_results_boot_wanted(&plan, 70000, 1000, 1000, 0), 0);
    ns_plan_memory_estimate(&g, &mc, 3, 1, &m);

    /* the limit: one byte short of the task refuses, the exact need passes, 0 = no limit */
    double need = m.task > m.reduce ? m.task : m.reduce;
    grid_msgs msgs = {0};
    CU_ASSERT_EQUAL(ns_plan_check_memory(&g, &mc, 3, 1, need, keep_msg, &msgs, &err), NS_OK);
    CU_ASSERT_EQUAL(msgs.n, 0);
    CU_ASSERT_EQUAL(ns_plan_check_memory(&g, &mc, 3, 1, 0.0, keep_msg, &msgs, &err), NS_OK);
    CU_ASSERT_EQUAL(msgs.n, 0);
    CU_ASSERT_EQUAL(ns_plan_check_memory(&g, &mc, 3, 1, m.task - 1.0, keep_msg, &msgs, &err),
                    NS_OK);
    CU_ASSERT_FATAL(msgs.n >= 1);
    CU_ASSERT_EQUAL(msgs.where[0], NS_PLAN_AT_GRID);
    CU_ASSERT_PTR_NOT_NULL(strstr(msgs.text[0], "computing one task needs about"));
    CU_ASSERT_PTR_NOT_NULL(strstr(msgs.text[0], "more than this machine's"));

    /* 2,000,000 temperatures: 2.7e9 doubles per task, beyond one MPI message (and refused by
     * ns_plan_init too, so no size in the plan can wrap) */
    double *manyT = malloc(2000000 * sizeof *manyT);
    CU_ASSERT_PTR_NOT_NULL_FATAL(manyT);
    for (size_t i = 0; i < 2000000; i++)
        manyT[i] = 1.0 + (double)i;
    ns_grid big = g;
    big.T = manyT;
    big.nT = 2000000;
    msgs.n = 0;
    CU_ASSERT_EQUAL(ns_plan_check_memory(&big, &mc, 3, 0, 0.0, keep_msg, &msgs, &err), NS_OK);
    CU_ASSERT_EQUAL_FATAL(msgs.n, 1);
    CU_ASSERT_PTR_NOT_NULL(strstr(msgs.text[0], "more than one MPI message carries"));
    ns_plan big_plan;
    CU_ASSERT_EQUAL(ns_plan_init(&big_plan, &big, &mc, &err), NS_ERR_INVALID);
    free(manyT);
    ns_plan_free(&plan);
    ns_sweep_config_free(&cfg);
    ns_sweep_diags_free(&d);
}

/* ---- checks against a model and a token count (no files) ---------------------------------- */

static void test_check_model_pure(void)
{
    ns_sweep_config cfg;
    ns_sweep_marks marks;
    ns_sweep_diags d;
    int rc = parse("shards: {count: 1, L_max: 256}\n"
                   "grid:\n  L: [64]\n  N: [1]\n  layers: [0, 5, 3]\n  heads: all\n",
                   "m.yaml", &cfg, &marks, &d);
    CU_ASSERT_EQUAL_FATAL(rc, NS_OK);
    ns_model_config mc = {.n_layer = 4, .n_head = 2, .n_kv_head = 2, .d_head = 4, .n_embd = 8,
                          .n_ctx = 128, .vocab_size = 50257, .n_inner = 32, .norm_eps = 1e-5};
    ns_err err;
    CU_ASSERT_EQUAL_FATAL(ns_sweep_check_model(&cfg, &marks, &mc, "tiny", &d, &err), NS_OK);
    ns_sweep_diags_sort(&d);
    const char *want[] = {
        "m.yaml:1:27: shards.L_max: 256 exceeds the context of the model tiny (n_ctx = 128)",
        "m.yaml:5:15: grid.layers: layer 5 is outside the model tiny, which has 4 layers (0..3)"};
    CU_ASSERT_EQUAL(d.n, 2);
    for (size_t i = 0; i < 2 && i < d.n; i++)
        CU_ASSERT_STRING_EQUAL(d.items[i].text, want[i]);
    /* the bad layer is reported (the sweep stops there), `heads: all` expanded */
    CU_ASSERT_EQUAL_FATAL(cfg.nlayers, 3);
    CU_ASSERT_EQUAL(cfg.layers[0], 0);
    CU_ASSERT_EQUAL(cfg.layers[1], 3);
    CU_ASSERT_EQUAL_FATAL(cfg.nheads, 2);
    CU_ASSERT_EQUAL(cfg.heads[1], 1);
    ns_sweep_marks_free(&marks);
    ns_sweep_config_free(&cfg);
    ns_sweep_diags_free(&d);
}

static void test_check_tokens_pure(void)
{
    ns_sweep_config cfg;
    ns_sweep_marks marks;
    ns_sweep_diags d;
    int rc = parse("shards: {count: 8, L_max: 256, first: 10}\ngrid: {L: [64], N: [1]}\n",
                   "c.yaml", &cfg, &marks, &d);
    CU_ASSERT_EQUAL_FATAL(rc, NS_OK);
    ns_err err;
    /* needed = 10 + 7 * 256 + 256 = 2058 */
    CU_ASSERT_EQUAL(ns_sweep_check_tokens(&cfg, &marks, 2058, "corpus x", &d, &err), NS_OK);
    CU_ASSERT_EQUAL(d.n, 0);
    CU_ASSERT_EQUAL(ns_sweep_check_tokens(&cfg, &marks, 2057, "corpus x", &d, &err), NS_OK);
    CU_ASSERT_EQUAL_FATAL(d.n, 1);
    CU_ASSERT_STRING_EQUAL(d.items[0].text,
                           "c.yaml:1:9: shards: corpus too short: 8 shards of 256 tokens (first "
                           "10, stride 256) need 2058 tokens but the corpus has 2057 (corpus x)");
    ns_sweep_marks_free(&marks);
    ns_sweep_config_free(&cfg);
    ns_sweep_diags_free(&d);
}

/* ---- files under tests/data/sweeps --------------------------------------------------------- */

static char data_dir[4096];

/* Expected diagnostics of a file: its "# expect: LINE" (exact) and "# expect-prefix: LINE"
 * comment lines, in order. */
typedef struct expectation {
    char text[1024];
    int prefix;
} expectation;

static size_t read_expectations(const char *text, expectation *out, size_t max)
{
    size_t n = 0;
    for (const char *p = text; p && *p; p = strchr(p, '\n'), p = p ? p + 1 : NULL) {
        int prefix = strncmp(p, "# expect-prefix: ", 17) == 0;
        if (!prefix && strncmp(p, "# expect: ", 10) != 0)
            continue;
        const char *s = p + (prefix ? 17 : 10);
        size_t len = strcspn(s, "\n");
        if (n < max && len < sizeof out[n].text) {
            memcpy(out[n].text, s, len);
            out[n].text[len] = '\0';
            out[n].prefix = prefix;
            n++;
        }
    }
    return n;
}

/* Check one file's diagnostics against its expectations; full: through ns_sweep_load (model and
 * corpus too, run from the data directory so relative paths resolve). */
static void check_file(const char *name, int full)
{
    char path[8192];
    snprintf(path, sizeof path, "%s/%s", data_dir, name);
    char *text = NULL;
    size_t len = 0;
    ns_err err;
    CU_ASSERT_EQUAL_FATAL(ns_file_read_all(path, 0, &text, &len, &err), NS_OK);
    expectation want[32];
    size_t nwant = read_expectations(text, want, 32);
    ns_sweep_config cfg;
    ns_sweep_diags d;
    memset(&d, 0, sizeof d);
    int rc;
    if (full) {
        ns_sweep_inputs *in = calloc(1, sizeof *in);
        ns_sweep_marks marks;
        CU_ASSERT_PTR_NOT_NULL_FATAL(in);
        char cwd[4096];
        CU_ASSERT_PTR_NOT_NULL_FATAL(getcwd(cwd, sizeof cwd));
        CU_ASSERT_EQUAL_FATAL(chdir(data_dir), 0);
        ns_assets_fetch fetch = {.allow = 1, .log = NULL, .log_user = NULL};
        rc = ns_sweep_load(name, &fetch, 0, &cfg, &marks, in, &d, &err);
        CU_ASSERT_EQUAL(chdir(cwd), 0);
        ns_sweep_inputs_free(in);
        free(in);
        ns_sweep_marks_free(&marks);
    } else {
        (void)len;
        rc = parse(text, name, &cfg, NULL, &d);
    }
    int ok = d.n == nwant && (nwant == 0 ? rc == NS_OK : d.nerrors ? rc == NS_ERR_INVALID : 1);
    for (size_t i = 0; ok && i < nwant; i++)
        ok = want[i].prefix ? strncmp(d.items[i].text, want[i].text, strlen(want[i].text)) == 0
                            : strcmp(d.items[i].text, want[i].text) == 0;
    if (!ok) {
        fprintf(stderr, "\n%s (status %d): expected %zu diagnostics:\n", name, rc, nwant);
        for (size_t i = 0; i < nwant; i++)
            fprintf(stderr, "  [want%s] %s\n", want[i].prefix ? " prefix" : "", want[i].text);
        dump_diags("got", &d);
    }
    CU_ASSERT_TRUE(ok);
    ns_sweep_config_free(&cfg);
    ns_sweep_diags_free(&d);
    free(text);
}

static size_t check_files(const char *prefix, int full, int must_have_expectations)
{
    DIR *dir = opendir(data_dir);
    CU_ASSERT_PTR_NOT_NULL_FATAL(dir);
    size_t count = 0;
    struct dirent *e;
    while ((e = readdir(dir)) != NULL) {
        size_t len = strlen(e->d_name);
        if (strncmp(e->d_name, prefix, strlen(prefix)) != 0 || len < 5 ||
            strcmp(e->d_name + len - 5, ".yaml") != 0)
            continue;
        if (must_have_expectations) {
            char path[8192], *text = NULL;
            size_t tl;
            ns_err err;
            expectation want[32];
            snprintf(path, sizeof path, "%s/%s", data_dir, e->d_name);
            CU_ASSERT_EQUAL_FATAL(ns_file_read_all(path, 0, &text, &tl, &err), NS_OK);
            if (read_expectations(text, want, 32) == 0) {
                fprintf(stderr, "%s has no '# expect:' line\n", e->d_name);
                CU_FAIL("bad file without expectations");
            }
            free(text);
        }
        check_file(e->d_name, full);
        count++;
    }
    closedir(dir);
    return count;
}

static void test_bad_files_schema(void)
{
    size_t n = check_files("bad_", 0, 1);
    CU_ASSERT(n >= 20); /* the directory really was read */
}

static void test_good_files_schema(void)
{
    size_t n = check_files("good_", 0, 0);
    CU_ASSERT(n >= 3);
}

static void test_files_against_model_and_corpus(void)
{
    size_t n = check_files("badfull_", 1, 1);
    CU_ASSERT(n >= 4);
    n = check_files("goodfull_", 1, 0);
    CU_ASSERT(n >= 1);
}

/* The sweeps shipped in sweeps/ parse cleanly, and the embedded default is quick.yaml. */
static void test_shipped_sweeps_and_embedded_default(void)
{
    const char *names[] = {"quick.yaml", "ablation.yaml", "full_grid.yaml", "normalizers.yaml"};
    char *quick = NULL;
    size_t quick_len = 0;
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
        char path[8192];
        snprintf(path, sizeof path, "%s/../../../sweeps/%s", data_dir, names[i]);
        char *text = NULL;
        size_t len = 0;
        ns_err err;
        CU_ASSERT_EQUAL_FATAL(ns_file_read_all(path, 0, &text, &len, &err), NS_OK);
        ns_sweep_config cfg;
        ns_sweep_diags d;
        memset(&d, 0, sizeof d);
        CU_ASSERT_EQUAL(ns_sweep_parse(text, len, names[i], &cfg, NULL, &d, &err), NS_OK);
        dump_diags(names[i], &d);
        CU_ASSERT_EQUAL(d.n, 0);
        if (i == 1) { /* ablation: the paper's axes */
            CU_ASSERT_STRING_EQUAL(cfg.model, "gpt2");
            CU_ASSERT_EQUAL(cfg.L_max, 1024);
            CU_ASSERT_EQUAL(cfg.nL, 6);
            CU_ASSERT_EQUAL(cfg.nN, 5);
            CU_ASSERT_EQUAL(cfg.T[0], 0.01);
            CU_ASSERT_EQUAL(cfg.T[cfg.nT - 1], 100.0);
            CU_ASSERT_EQUAL(cfg.neps, 3);
        }
        if (i == 2) { /* full grid: every N from 1 to 32, then coarser to 128 */
            CU_ASSERT_EQUAL(cfg.nN, 39);
            for (size_t k = 0; k < 32 && k < cfg.nN; k++)
                CU_ASSERT_EQUAL(cfg.N[k], k + 1);
            CU_ASSERT_EQUAL(cfg.N[cfg.nN - 1], 128);
            CU_ASSERT_EQUAL(cfg.nnormalizers, 1);
        }
        if (i == 3) { /* normalizers: all four, ssmax with its parameter */
            CU_ASSERT_EQUAL(cfg.nnormalizers, 4);
            CU_ASSERT_EQUAL(cfg.normalizers[1].kind, NS_NORM_SSMAX);
            CU_ASSERT_EQUAL(cfg.normalizers[1].s, 0.43);
        }
        ns_sweep_config_free(&cfg);
        ns_sweep_diags_free(&d);
        if (i == 0) {
            quick = text;
            quick_len = len;
        } else {
            free(text);
        }
    }
    CU_ASSERT_PTR_NOT_NULL_FATAL(quick);
    CU_ASSERT_EQUAL(strlen(ns_sweep_default_yaml()), quick_len);
    CU_ASSERT_STRING_EQUAL(ns_sweep_default_yaml(), quick);
    free(quick);

    /* ns_sweep_load(NULL) reads the embedded default under the name "<embedded>" (GPT-2, with the
     * stand-in as the manifest's fallback) */
    ns_sweep_config cfg;
    ns_sweep_diags d = {0};
    ns_err err;
    CU_ASSERT_EQUAL(ns_sweep_load(NULL, NULL, NS_SWEEP_SCHEMA_ONLY, &cfg, NULL, NULL, &d, &err), NS_OK);
    CU_ASSERT_STRING_EQUAL(cfg.source_path, NS_SWEEP_DEFAULT_NAME);
    CU_ASSERT_STRING_EQUAL(cfg.model, "gpt2");
    CU_ASSERT_STRING_EQUAL(cfg.output, "runs/quick/quick.nc");
    ns_sweep_config_free(&cfg);
    ns_sweep_diags_free(&d);
}

static void test_unreadable_sweep_file(void)
{
    ns_sweep_config cfg;
    ns_sweep_diags d = {0};
    ns_err err;
    int rc = ns_sweep_load("/nonexistent/sweep.yaml", NULL, NS_SWEEP_SCHEMA_ONLY, &cfg, NULL, NULL,
                           &d, &err);
    CU_ASSERT_EQUAL(rc, NS_ERR_IO);
    CU_ASSERT_STRING_EQUAL(err.msg,
                           "/nonexistent/sweep.yaml: cannot open: No such file or directory");
    ns_sweep_config_free(&cfg);
    ns_sweep_diags_free(&d);
}

/* ---- pack / unpack ------------------------------------------------------------------------ */

/* The list core both parsers share (spec/ns_list): sorted ascending, equal values in the order
 * written, every repeat handed over once with the value kept before it, in ascending order. */
typedef struct seen_repeats {
    size_t n;
    size_t kept_order[8], again_order[8];
    uint64_t ival[8];
    double dval[8];
} seen_repeats;

static void note_repeat(void *user, const ns_list_item *kept, const ns_list_item *again)
{
    seen_repeats *r = user;
    if (r->n < 8) {
        r->kept_order[r->n] = kept->order;
        r->again_order[r->n] = again->order;
        r->ival[r->n] = again->i;
        r->dval[r->n] = again->d;
    }
    r->n++;
}

static void test_list_core(void)
{
    /* integers as written: 7 3 7 1 3 7 (orders 0..5) */
    const uint64_t iw[] = {7, 3, 7, 1, 3, 7};
    ns_list_item v[6];
    for (size_t k = 0; k < 6; k++)
        v[k] = (ns_list_item){iw[k], 0, k};
    seen_repeats r = {0};
    size_t kept = ns_list_sort_unique(v, 6, 0, note_repeat, &r);
    CU_ASSERT_EQUAL(kept, 3);
    CU_ASSERT(v[0].i == 1 && v[0].order == 3);
    CU_ASSERT(v[1].i == 3 && v[1].order == 1);
    CU_ASSERT(v[2].i == 7 && v[2].order == 0);
    /* repeats: 3 (order 4 after 1), then 7 twice (orders 2 and 5 after 0) */
    CU_ASSERT_EQUAL(r.n, 3);
    CU_ASSERT(r.ival[0] == 3 && r.kept_order[0] == 1 && r.again_order[0] == 4);
    CU_ASSERT(r.ival[1] == 7 && r.kept_order[1] == 0 && r.again_order[1] == 2);
    CU_ASSERT(r.ival[2] == 7 && r.kept_order[2] == 0 && r.again_order[2] == 5);
    /* reals, compared by value (the i field is ignored): 0.5 2 0.5 1e-3; no callback is fine */
    const double dw[] = {0.5, 2, 0.5, 1e-3};
    ns_list_item w[4];
    for (size_t k = 0; k < 4; k++)
        w[k] = (ns_list_item){9 - k, dw[k], k};
    CU_ASSERT_EQUAL(ns_list_sort_unique(w, 4, 1, NULL, NULL), 3);
    CU_ASSERT(w[0].d == 1e-3 && w[1].d == 0.5 && w[1].order == 0 && w[2].d == 2);
    CU_ASSERT_EQUAL(ns_list_sort_unique(w, 0, 1, NULL, NULL), 0);

    /* dump's option lists on the core: sorted values, the smallest repeat named, old list kept */
    size_t *iv = NULL, n = 0;
    double *dv = NULL;
    ns_err err;
    CU_ASSERT_EQUAL(ns_list_parse("--N", &ns_plan_range_N, "8,1,63", &iv, NULL, &n, &err), NS_OK);
    CU_ASSERT(n == 3 && iv && iv[0] == 1 && iv[1] == 8 && iv[2] == 63);
    CU_ASSERT_EQUAL(ns_list_parse("--N", &ns_plan_range_N, "9,4,2,9,4", &iv, NULL, &n, &err),
                    NS_ERR_INVALID);
    CU_ASSERT_STRING_EQUAL(err.msg, "--N: 4 appears more than once");
    CU_ASSERT(n == 3 && iv[0] == 1 && iv[2] == 63);
    CU_ASSERT_EQUAL(ns_list_parse("--N", &ns_plan_range_N, "4,", &iv, NULL, &n, &err),
                    NS_ERR_INVALID);
    CU_ASSERT_STRING_EQUAL(err.msg, "--N: empty item in '4,'");
    CU_ASSERT_EQUAL(ns_list_parse("--T", &ns_plan_range_scale, "2,0.25,1", NULL, &dv, &n, &err),
                    NS_OK);
    CU_ASSERT(n == 3 && dv && dv[0] == 0.25 && dv[1] == 1 && dv[2] == 2);
    CU_ASSERT_EQUAL(ns_list_parse("--T", &ns_plan_range_scale, "3,0.5,3,0.5", NULL, &dv, &n, &err),
                    NS_ERR_INVALID);
    CU_ASSERT_STRING_EQUAL(err.msg, "--T: 0.5 appears more than once");
    free(iv);
    free(dv);
}

static void test_pack_roundtrip(void)
{
    ns_sweep_config cfg, back;
    ns_sweep_diags d;
    ns_err err;
    CU_ASSERT_EQUAL_FATAL(parse(full_text, "full.yaml", &cfg, NULL, &d), NS_OK);
    CU_ASSERT_EQUAL_FATAL(ns_sweep_expand_all(&cfg, 4, 3, &err), NS_OK);
    void *buf = NULL;
    size_t len = 0;
    CU_ASSERT_EQUAL_FATAL(ns_sweep_config_pack(&cfg, &buf, &len, &err), NS_OK);
    CU_ASSERT_EQUAL_FATAL(ns_sweep_config_unpack(buf, len, &back, &err), NS_OK);
    CU_ASSERT_STRING_EQUAL(back.source_path, cfg.source_path);
    CU_ASSERT_STRING_EQUAL(back.yaml_text, cfg.yaml_text);
    CU_ASSERT_STRING_EQUAL(back.model, cfg.model);
    CU_ASSERT_STRING_EQUAL(back.corpus, cfg.corpus);
    CU_ASSERT_EQUAL(back.strip_gutenberg, cfg.strip_gutenberg);
    CU_ASSERT_EQUAL(back.shard_first, 1000);
    CU_ASSERT_EQUAL(back.shard_stride, 64);
    CU_ASSERT_EQUAL_FATAL(back.nL, cfg.nL);
    CU_ASSERT_EQUAL(memcmp(back.L, cfg.L, cfg.nL * sizeof *cfg.L), 0);
    CU_ASSERT_EQUAL_FATAL(back.nT, cfg.nT);
    CU_ASSERT_EQUAL(memcmp(back.T, cfg.T, cfg.nT * sizeof *cfg.T), 0);
    CU_ASSERT_EQUAL_FATAL(back.nheads, 3);
    CU_ASSERT_EQUAL(back.heads[2], 2);
    CU_ASSERT_EQUAL(back.heads_all, 1);
    CU_ASSERT_EQUAL(back.nnormalizers, 4);
    CU_ASSERT_EQUAL(back.normalizers[1].kind, NS_NORM_SSMAX);
    CU_ASSERT_EQUAL(back.normalizers[1].s, 0.5);
    CU_ASSERT_EQUAL(back.seed, UINT64_MAX);
    CU_ASSERT_EQUAL(back.probes, 0);
    CU_ASSERT_EQUAL(back.bootstrap_resamples, cfg.bootstrap_resamples);
    CU_ASSERT_STRING_EQUAL(back.checkpoint_dir, "out/ck");
    ns_sweep_config_free(&back);
    /* every truncation is refused */
    for (size_t cut = 0; cut < len; cut += 7)
        CU_ASSERT_EQUAL(ns_sweep_config_unpack(buf, cut, &back, &err), NS_ERR_FORMAT);
    free(buf);
    ns_sweep_config_free(&cfg);
    ns_sweep_diags_free(&d);
}

/* sink_view: true appends each listed normalizer's sink-excluded view, in the listed order, after
 * them (issue 36, docs/SWEEP.md); false or absent adds none; the views survive packing; anything
 * but a boolean is refused with its position. */
static void test_sink_view(void)
{
    const char *head = "shards: {count: 2, L_max: 64}\ngrid: {L: [32], N: 1}\n"
                       "normalizer: [softmax, {name: sigmoid, b: -1.5}, sparsemax]\n";
    char text[512];
    ns_sweep_config cfg, back;
    ns_sweep_diags d;
    ns_err err;
    snprintf(text, sizeof text, "%ssink_view: true\n", head);
    int rc = parse(text, "v.yaml", &cfg, NULL, &d);
    dump_diags("sink_view", &d);
    CU_ASSERT_EQUAL_FATAL(rc, NS_OK);
    CU_ASSERT_EQUAL(cfg.sink_view, 1);
    CU_ASSERT_EQUAL_FATAL(cfg.nnormalizers, 6);
    for (size_t i = 0; i < 3; i++) {
        CU_ASSERT_EQUAL(cfg.normalizers[i].view, NS_VIEW_ALL);
        CU_ASSERT_EQUAL(cfg.normalizers[3 + i].view, NS_VIEW_SINK_EXCLUDED);
        CU_ASSERT_EQUAL(cfg.normalizers[3 + i].kind, cfg.normalizers[i].kind);
        CU_ASSERT_EQUAL(cfg.normalizers[3 + i].b, cfg.normalizers[i].b);
        CU_ASSERT_FALSE(ns_normalizer_same(&cfg.normalizers[i], &cfg.normalizers[3 + i]));
    }
    char label[64];
    ns_normalizer_label(&cfg.normalizers[4], 0, label, sizeof label);
    CU_ASSERT_STRING_EQUAL(label, "sigmoid b=-1.5, sink excluded");
    ns_normalizer_label(&cfg.normalizers[1], 0, label, sizeof label);
    CU_ASSERT_STRING_EQUAL(label, "sigmoid b=-1.5");
    ns_sweep_add_sink_views(&cfg); /* a second call adds nothing */
    CU_ASSERT_EQUAL(cfg.nnormalizers, 6);
    void *buf = NULL;
    size_t len = 0;
    CU_ASSERT_EQUAL_FATAL(ns_sweep_config_pack(&cfg, &buf, &len, &err), NS_OK);
    CU_ASSERT_EQUAL_FATAL(ns_sweep_config_unpack(buf, len, &back, &err), NS_OK);
    CU_ASSERT_EQUAL(back.sink_view, 1);
    CU_ASSERT_EQUAL_FATAL(back.nnormalizers, 6);
    for (size_t i = 0; i < 6; i++) {
        CU_ASSERT_EQUAL(back.normalizers[i].view, cfg.normalizers[i].view);
        CU_ASSERT(ns_normalizer_same(&back.normalizers[i], &cfg.normalizers[i]));
    }
    free(buf);
    ns_sweep_config_free(&back);
    ns_sweep_config_free(&cfg);
    ns_sweep_diags_free(&d);
    for (int v = 0; v < 2; v++) { /* false, and the key absent */
        snprintf(text, sizeof text, "%s%s", head, v ? "" : "sink_view: false\n");
        CU_ASSERT_EQUAL_FATAL(parse(text, "v.yaml", &cfg, NULL, &d), NS_OK);
        CU_ASSERT_EQUAL(cfg.sink_view, 0);
        CU_ASSERT_EQUAL(cfg.nnormalizers, 3);
        CU_ASSERT_EQUAL(cfg.normalizers[2].view, NS_VIEW_ALL);
        ns_sweep_config_free(&cfg);
        ns_sweep_diags_free(&d);
    }
    snprintf(text, sizeof text, "%ssink_view: 3\n", head);
    CU_ASSERT_EQUAL(parse(text, "t.yaml", &cfg, NULL, &d), NS_ERR_INVALID);
    const char *want = "t.yaml:4:12: sink_view: expected true or false";
    CU_ASSERT_EQUAL(d.n, 1);
    if (d.n != 1 || strncmp(d.items[0].text, want, strlen(want)) != 0) {
        dump_diags("got", &d);
        CU_FAIL("sink_view: 3 is not refused as expected");
    }
    ns_sweep_config_free(&cfg);
    ns_sweep_diags_free(&d);
}

/* ---- corpus: Gutenberg stripping and sharding ---------------------------------------------- */

static void test_gutenberg_synthetic(void)
{
    const char *text = "The Project Gutenberg EBook of Test\r\n"
                       "\r\n"
                       "*** START OF THE PROJECT GUTENBERG EBOOK TEST ***\r\n"
                       "Body line one.\r\n"
                       "*** START: FULL LICENSE ***\n"
                       "Body two.\n"
                       "*** END OF THE PROJECT GUTENBERG EBOOK TEST ***\n"
                       "Licence text.\n";
    size_t b, e;
    ns_err err;
    CU_ASSERT_EQUAL_FATAL(ns_gutenberg_body(text, strlen(text), "t.txt", &b, &e, &err), NS_OK);
    CU_ASSERT_EQUAL(e - b, strlen("Body line one.\r\n*** START: FULL LICENSE ***\nBody two.\n"));
    CU_ASSERT_EQUAL(strncmp(text + b, "Body line one.\r\n*** START: FULL LICENSE ***\nBody two.\n",
                            e - b),
                    0);

    /* "THIS", lower case, no trailing newline after the end marker */
    const char *t2 = "h\n*** start of this project gutenberg ebook x ***\nB\n*** End Of This "
                     "Project Gutenberg EBook x ***";
    CU_ASSERT_EQUAL_FATAL(ns_gutenberg_body(t2, strlen(t2), "t2.txt", &b, &e, &err), NS_OK);
    CU_ASSERT_EQUAL(e - b, 2);
    CU_ASSERT_EQUAL(strncmp(t2 + b, "B\n", 2), 0);

    const char *t3 = "no markers here\n*** START: FULL LICENSE ***\n";
    CU_ASSERT_EQUAL(ns_gutenberg_body(t3, strlen(t3), "t3.txt", &b, &e, &err), NS_ERR_FORMAT);
    CU_ASSERT_STRING_EQUAL(err.msg,
                           "t3.txt: no '*** START OF THE PROJECT GUTENBERG EBOOK' marker line, so "
                           "the Gutenberg header cannot be stripped (set strip_gutenberg: false "
                           "for other texts)");
    const char *t4 = "head\n\n*** START OF THE PROJECT GUTENBERG EBOOK T ***\nbody\n";
    CU_ASSERT_EQUAL(ns_gutenberg_body(t4, strlen(t4), "t4.txt", &b, &e, &err), NS_ERR_FORMAT);
    CU_ASSERT_STRING_EQUAL(err.msg,
                           "t4.txt: no '*** END OF THE PROJECT GUTENBERG EBOOK' marker line after "
                           "the start marker on line 3, so the licence cannot be stripped");
}

/* The real corpus: the body runs from the line after line 25 up to line 26037. */
static void test_gutenberg_war_and_peace(void)
{
    char *text = NULL;
    size_t len = 0, b, e;
    ns_err err;
    CU_ASSERT_EQUAL_FATAL(ns_file_read_all(ns_test_env("NS_TEST_CORPUS"), 0, &text, &len, &err),
                          NS_OK);
    CU_ASSERT_EQUAL_FATAL(ns_gutenberg_body(text, len, "wap", &b, &e, &err), NS_OK);
    size_t line = 1, line_b = 0, line_e = 0;
    for (size_t i = 0; i < len; i++) {
        if (i == b)
            line_b = line;
        if (i == e)
            line_e = line;
        if (text[i] == '\n')
            line++;
    }
    CU_ASSERT_EQUAL(line_b, 26);
    CU_ASSERT_EQUAL(line_e, 26037);
    CU_ASSERT_EQUAL(strncmp(text + e, "*** END OF THIS PROJECT GUTENBERG EBOOK WAR AND PEACE ***",
                            57),
                    0);
    free(text);
}

static void test_shard_ranges(void)
{
    size_t needed, start;
    ns_err err;
    CU_ASSERT_EQUAL(ns_corpus_tokens_needed(8, 256, 0, 256, &needed, &err), NS_OK);
    CU_ASSERT_EQUAL(needed, 2048);
    CU_ASSERT_EQUAL(ns_corpus_tokens_needed(3, 100, 7, 10, &needed, &err), NS_OK);
    CU_ASSERT_EQUAL(needed, 7 + 2 * 10 + 100);
    CU_ASSERT_EQUAL(ns_corpus_tokens_needed(SIZE_MAX, 2, 0, 2, &needed, &err), NS_ERR_INVALID);
    CU_ASSERT_EQUAL(ns_corpus_check_shards(2047, 8, 256, 0, 256, &err), NS_ERR_INVALID);
    CU_ASSERT_STRING_EQUAL(err.msg, "8 shards of 256 tokens (first 0, stride 256) need 2048 "
                                    "tokens but the corpus has 2047");
    CU_ASSERT_EQUAL(ns_corpus_check_shards(2048, 8, 256, 0, 256, &err), NS_OK);
    CU_ASSERT_EQUAL(ns_corpus_shard_range(2048, 256, 5, 100, 3, &start, &err), NS_OK);
    CU_ASSERT_EQUAL(start, 305);
    CU_ASSERT_EQUAL(ns_corpus_shard_range(560, 256, 5, 100, 3, &start, &err), NS_ERR_INVALID);
    CU_ASSERT_STRING_EQUAL(err.msg, "shard 3 needs tokens [305, 561) but the corpus has 560");
    CU_ASSERT_EQUAL(ns_corpus_shard_range(561, 256, 5, 100, 3, &start, &err), NS_OK);
}

/* Tokenizing the stripped text = tokenizing the body alone; shards point into it. */
static void test_corpus_tokenize(void)
{
    ns_tokenizer *tok = NULL;
    ns_err err;
    CU_ASSERT_EQUAL_FATAL(ns_tokenizer_load(ns_test_env("NS_TEST_TOKENIZER_DIR"), &tok, &err),
                          NS_OK);
    const char *body = "Well, Prince, so Genoa and Lucca are now just family estates.\n\n";
    char text[512];
    snprintf(text, sizeof text,
             "Header words\n*** START OF THE PROJECT GUTENBERG EBOOK W ***\n%s"
             "*** END OF THE PROJECT GUTENBERG EBOOK W ***\nLicence words\n",
             body);
    ns_corpus c;
    CU_ASSERT_EQUAL_FATAL(ns_corpus_from_text(text, strlen(text), "w.txt", 1, tok, &c, &err), NS_OK);
    ns_tokens direct = {0};
    CU_ASSERT_EQUAL_FATAL(ns_tokenizer_encode(tok, body, strlen(body), &direct, &err), NS_OK);
    CU_ASSERT_EQUAL_FATAL(c.tokens.n, direct.n);
    CU_ASSERT_EQUAL(memcmp(c.tokens.ids, direct.ids, direct.n * sizeof *direct.ids), 0);
    CU_ASSERT(c.tokens.n > 10);
    CU_ASSERT_EQUAL(c.stripped, 1);
    const int32_t *ids;
    CU_ASSERT_EQUAL(ns_corpus_shard(&c, 4, 1, 3, 2, &ids, &err), NS_OK);
    CU_ASSERT_PTR_EQUAL(ids, c.tokens.ids + 7);
    CU_ASSERT_EQUAL(ns_corpus_shard(&c, 4, 1, 3, c.tokens.n, &ids, &err), NS_ERR_INVALID);
    ns_tokens_free(&direct);
    ns_corpus_free(&c);
    /* without stripping, the whole text is tokenized */
    CU_ASSERT_EQUAL_FATAL(ns_corpus_from_text(text, strlen(text), "w.txt", 0, tok, &c, &err), NS_OK);
    CU_ASSERT(c.tokens.n > direct.n + 10);
    CU_ASSERT_EQUAL(c.body_begin, 0);
    CU_ASSERT_EQUAL(c.body_end, strlen(text));
    ns_corpus_free(&c);
    ns_tokenizer_free(tok);
}

/* ---- the corpus must be text: no NUL, valid UTF-8 ------------------------------------------- */

/* ns_corpus_check_text on len bytes: NS_OK, or the exact message. */
static void check_text(const char *bytes, size_t len, const char *want)
{
    ns_err err;
    ns_err_clear(&err);
    int rc = ns_corpus_check_text(bytes, len, "t.txt", &err);
    if (!want) {
        if (rc != NS_OK)
            fprintf(stderr, "\nunexpected: %s\n", err.msg);
        CU_ASSERT_EQUAL(rc, NS_OK);
        return;
    }
    CU_ASSERT_EQUAL(rc, NS_ERR_INVALID);
    if (strcmp(err.msg, want) != 0)
        fprintf(stderr, "\nwant: %s\ngot:  %s\n", want, err.msg);
    CU_ASSERT_STRING_EQUAL(err.msg, want);
}
#define CHECKT(lit, want) check_text(lit, sizeof lit - 1, want)

static void test_corpus_text_check_cases(void)
{
    CHECKT("", NULL);
    CHECKT("plain ASCII\r\n\ttext\f\n", NULL);
    /* a byte order mark, 2-, 3- and 4-byte forms, and the edges of the valid ranges */
    CHECKT("\xEF\xBB\xBFh\xC3\xA9llo \xE2\x80\x94 \xE6\x97\xA5 \xF0\x9F\x98\x80\n", NULL);
    CHECKT("\xC2\x80 \xDF\xBF \xE0\xA0\x80 \xED\x9F\xBF \xEE\x80\x80 \xEF\xBF\xBF", NULL);
    CHECKT("\xF0\x90\x80\x80 \xF4\x8F\xBF\xBF", NULL);
    CHECKT("a\0b", "t.txt: not a text file (NUL byte at offset 1)");
    CHECKT("ab\n\x80", "t.txt: not UTF-8 text (invalid byte 0x80 at offset 3, line 2)");
    CHECKT("caf\xE9\n", "t.txt: not UTF-8 text (invalid byte 0xe9 at offset 3, line 1)");
    CHECKT("\xC0\x80", "t.txt: not UTF-8 text (invalid byte 0xc0 at offset 0, line 1)");
    CHECKT("\xC1\xBF", "t.txt: not UTF-8 text (invalid byte 0xc1 at offset 0, line 1)");
    CHECKT("\xE0\x9F\xBF", "t.txt: not UTF-8 text (invalid byte 0xe0 at offset 0, line 1)");
    CHECKT("\n\n\xED\xA0\x80", "t.txt: not UTF-8 text (invalid byte 0xed at offset 2, line 3)");
    CHECKT("\xF0\x8F\xBF\xBF", "t.txt: not UTF-8 text (invalid byte 0xf0 at offset 0, line 1)");
    CHECKT("\xF4\x90\x80\x80", "t.txt: not UTF-8 text (invalid byte 0xf4 at offset 0, line 1)");
    CHECKT("\xF5\x80\x80\x80", "t.txt: not UTF-8 text (invalid byte 0xf5 at offset 0, line 1)");
    CHECKT("ok\xE2\x82", "t.txt: not UTF-8 text (invalid byte 0xe2 at offset 2, line 1)");
    CHECKT("\xE2\x28\xA1", "t.txt: not UTF-8 text (invalid byte 0xe2 at offset 0, line 1)");
    CHECKT("\xF0\x9F\x98", "t.txt: not UTF-8 text (invalid byte 0xf0 at offset 0, line 1)");
    CHECKT("x\xFF", "t.txt: not UTF-8 text (invalid byte 0xff at offset 1, line 1)");
    CHECKT("\xFF\xFEh\0i\0", "t.txt: not UTF-8 text (UTF-16 byte order mark 0xfffe at offset 0; "
                                 "convert it with iconv -f UTF-16 -t UTF-8)");
    CHECKT("\xFE\xFF\0h\0i", "t.txt: not UTF-8 text (UTF-16 byte order mark 0xfeff at offset 0; "
                                 "convert it with iconv -f UTF-16 -t UTF-8)");
}

/* Reference: is s[0..n) (n = 1..4) exactly one valid UTF-8 sequence? Decoded by bit arithmetic,
 * then the rules of RFC 3629: the lead byte's length, continuation bytes 10xxxxxx, the shortest
 * form, no surrogate, at most U+10FFFF. */
static int ref_one_sequence(const unsigned char *s, size_t n)
{
    static const unsigned min_cp[5] = {0, 0, 0x80, 0x800, 0x10000};
    size_t want;
    unsigned cp;
    if (s[0] < 0x80) {
        want = 1;
        cp = s[0];
    } else if ((s[0] & 0xE0) == 0xC0) {
        want = 2;
        cp = s[0] & 0x1Fu;
    } else if ((s[0] & 0xF0) == 0xE0) {
        want = 3;
        cp = s[0] & 0x0Fu;
    } else if ((s[0] & 0xF8) == 0xF0) {
        want = 4;
        cp = s[0] & 0x07u;
    } else {
        return 0;
    }
    if (want != n)
        return 0;
    for (size_t i = 1; i < n; i++) {
        if ((s[i] & 0xC0) != 0x80)
            return 0;
        cp = (cp << 6) | (s[i] & 0x3Fu);
    }
    if (n > 1 && cp < min_cp[n])
        return 0;
    return cp <= 0x10FFFF && !(cp >= 0xD800 && cp <= 0xDFFF) && cp != 0;
}

/* The validator against the reference: every 1- and 2-byte string, every 3-byte string with a
 * 3-byte lead, and 4-byte strings with every lead from 0xF0 to 0xF7, every second byte and edge
 * values for the others. */
static void test_corpus_text_check_exhaustive(void)
{
    ns_err err;
    size_t mismatches = 0, checked = 0;
    unsigned char s[4];
    for (unsigned a = 0; a < 256; a++) {
        s[0] = (unsigned char)a;
        int ok = ns_corpus_check_text((const char *)s, 1, "t", &err) == NS_OK;
        mismatches += ok != ref_one_sequence(s, 1);
        checked++;
        for (unsigned b = 0; b < 256; b++) {
            s[1] = (unsigned char)b;
            int ref = ref_one_sequence(s, 2) ||
                      (ref_one_sequence(s, 1) && ref_one_sequence(s + 1, 1));
            if (a == 0xFF && b == 0xFE)
                ref = 0;
            ok = ns_corpus_check_text((const char *)s, 2, "t", &err) == NS_OK;
            mismatches += ok != ref;
            checked++;
        }
    }
    for (unsigned a = 0xE0; a <= 0xEF; a++)
        for (unsigned b = 0; b < 256; b++)
            for (unsigned c = 0; c < 256; c++) {
                s[0] = (unsigned char)a;
                s[1] = (unsigned char)b;
                s[2] = (unsigned char)c;
                int ok = ns_corpus_check_text((const char *)s, 3, "t", &err) == NS_OK;
                mismatches += ok != ref_one_sequence(s, 3);
                checked++;
            }
    static const unsigned char edge[] = {0x00, 0x41, 0x7F, 0x80, 0x8F, 0x90, 0xBF, 0xC0, 0xFF};
    for (unsigned a = 0xF0; a <= 0xF7; a++)
        for (unsigned b = 0; b < 256; b++)
            for (size_t c = 0; c < sizeof edge; c++)
                for (size_t d = 0; d < sizeof edge; d++) {
                    s[0] = (unsigned char)a;
                    s[1] = (unsigned char)b;
                    s[2] = edge[c];
                    s[3] = edge[d];
                    int ok = ns_corpus_check_text((const char *)s, 4, "t", &err) == NS_OK;
                    mismatches += ok != ref_one_sequence(s, 4);
                    checked++;
                }
    CU_ASSERT(checked > 1000000);
    CU_ASSERT_EQUAL(mismatches, 0);
}

/* The check runs before the Gutenberg markers are looked for, with its own status code (a bad
 * byte is reported at `corpus:`, not at `strip_gutenberg:`), on the whole file. */
static void test_corpus_from_text_refuses_binary(void)
{
    static const char text[] = "*** START OF THE PROJECT GUTENBERG EBOOK W ***\nbody \x01\x02\0\x03\n"
                               "*** END OF THE PROJECT GUTENBERG EBOOK W ***\n";
    ns_corpus c;
    ns_err err;
    CU_ASSERT_EQUAL(ns_corpus_from_text(text, sizeof text - 1, "w.bin", 1, NULL, &c, &err),
                    NS_ERR_INVALID);
    CU_ASSERT_STRING_EQUAL(err.msg, "w.bin: not a text file (NUL byte at offset 54)");
}

/* ---- after a syntax or schema error no file is looked at ------------------------------------ */

/* ns_sweep_load on text (written to a temporary file) with fetching disabled: the diagnostics. */
static void load_text(const char *text, size_t want_n, const char *want_suffix)
{
    char path[4096];
    const char *tmpdir = getenv("TMPDIR");
    snprintf(path, sizeof path, "%s/ns_sweep_cfg_XXXXXX", tmpdir && *tmpdir ? tmpdir : "/tmp");
    int fd = mkstemp(path);
    CU_ASSERT_FATAL(fd >= 0);
    CU_ASSERT_EQUAL_FATAL(write(fd, text, strlen(text)), (ssize_t)strlen(text));
    close(fd);
    ns_sweep_config cfg;
    ns_sweep_inputs *in = calloc(1, sizeof *in);
    ns_sweep_diags d = {0};
    ns_err err;
    CU_ASSERT_PTR_NOT_NULL_FATAL(in);
    int rc = ns_sweep_load(path, NULL, 0, &cfg, NULL, in, &d, &err);
    unlink(path);
    CU_ASSERT_EQUAL(rc, NS_ERR_INVALID);
    CU_ASSERT_EQUAL(d.n, want_n);
    CU_ASSERT_EQUAL(in->have_model, 0);
    CU_ASSERT_EQUAL(in->have_tokenizer, 0);
    CU_ASSERT_EQUAL(in->have_corpus, 0);
    for (size_t i = 0; i < d.n; i++) {
        const char *t = d.items[i].text;
        size_t tl = strlen(t), sl = strlen(want_suffix);
        CU_ASSERT(strstr(t, "model") == NULL && strstr(t, "corpus") == NULL);
        if (i == 0)
            CU_ASSERT(tl >= sl && strcmp(t + tl - sl, want_suffix) == 0);
    }
    if (d.n != want_n)
        dump_diags(path, &d);
    ns_sweep_inputs_free(in);
    free(in);
    ns_sweep_config_free(&cfg);
    ns_sweep_diags_free(&d);
}

static void test_load_stops_after_text_errors(void)
{
    /* syntax error: not even the default model (gpt2) is resolved */
    load_text("shards: {count: 1, L_max: 64\ngrid: {L: [64], N: [1]}\n", 1,
              "(while parsing a flow mapping at line 1, column 9)");
    /* schema error: the (missing) model and corpus are not looked at */
    load_text("model: /nonexistent/m\ncorpus: /nonexistent/c.txt\nshards: {count: 1, L_max: 64}\n"
              "grid: {L: [64], N: [0]}\n",
              1, "grid.N: 0 is out of range 1..2147483647 (the output stores N as a 32-bit integer)");
}

int main(void)
{
    snprintf(data_dir, sizeof data_dir, "%s/sweeps", ns_test_env("NS_TEST_DATA_DIR"));
    if (CU_initialize_registry() != CUE_SUCCESS)
        return 1;
    CU_pSuite s = CU_add_suite("sweep_config", NULL, NULL);
    CU_add_test(s, "defaults", test_defaults);
    CU_add_test(s, "every setting", test_every_setting);
    CU_add_test(s, "inline problems", test_inline_problems);
    CU_add_test(s, "skipped cells are not errors", test_skipped_cells_are_not_errors);
    CU_add_test(s, "grid rows and counts", test_grid_rows_and_counts);
    CU_add_test(s, "check against a model (pure)", test_check_model_pure);
    CU_add_test(s, "check against a token count (pure)", test_check_tokens_pure);
    CU_add_test(s, "bad files: schema", test_bad_files_schema);
    CU_add_test(s, "good files: schema", test_good_files_schema);
    CU_add_test(s, "shipped sweeps and embedded default", test_shipped_sweeps_and_embedded_default);
    CU_add_test(s, "unreadable sweep file", test_unreadable_sweep_file);
    CU_add_test(s, "pack/unpack round trip", test_pack_roundtrip);
    CU_add_test(s, "the list core (sweep file and dump)", test_list_core);
    CU_add_test(s, "sink_view: the listed normalizers' views after them", test_sink_view);
    CU_add_test(s, "memory estimate and limits", test_memory_estimate);
    CU_add_test(s, "Gutenberg stripping (synthetic)", test_gutenberg_synthetic);
    CU_add_test(s, "Gutenberg stripping (War and Peace)", test_gutenberg_war_and_peace);
    CU_add_test(s, "shard ranges", test_shard_ranges);
    CU_add_test(s, "corpus tokenization", test_corpus_tokenize);
    CU_add_test(s, "files against model and corpus", test_files_against_model_and_corpus);
    CU_add_test(s, "corpus text check: cases", test_corpus_text_check_cases);
    CU_add_test(s, "corpus text check vs reference", test_corpus_text_check_exhaustive);
    CU_add_test(s, "corpus from binary text", test_corpus_from_text_refuses_binary);
    CU_add_test(s, "load stops after syntax/schema errors", test_load_stops_after_text_errors);
    return ns_test_run_all();
}

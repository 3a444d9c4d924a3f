/* cmd_validate: `normsweep validate [SWEEP.yaml]`: check a sweep file (schema, model, corpus) and
 * print a summary, or every problem as FILE:LINE:COL and exit 2. */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/ns_boot_shard.h"
#include "cli/ns_campaign_cli.h"
#include "cli/ns_cli.h"
#include "common/ns_blas.h"
#include "common/ns_datadir.h"
#include "common/ns_sys.h"
#include "rows/ns_plan.h"
#include "spec/ns_sweep_inputs.h"

static void usage(FILE *out)
{
    fprintf(out,
            "Usage: normsweep validate [--schema-only] [--no-fetch] [--model-pin [NAME@]SHA256]\n"
            "                          [SWEEP.yaml]\n"
            "\n"
            "Check a sweep file before any work: the schema (unknown keys, types, ranges,\n"
            "duplicates), the model it names (context length, layers, heads) and the corpus\n"
            "(tokenized, long enough for the shards). Every problem is printed as\n"
            "FILE:LINE:COL: message. Without SWEEP.yaml the built-in default sweep (the text of\n"
            "sweeps/quick.yaml) is checked; a SWEEP.yaml not found from the current directory is\n"
            "looked up in the data directory, as `normsweep run` does. The schema is described in\n"
            "docs/SWEEP.md.\n"
            "\n"
            "Options:\n"
            "  --schema-only  check the file alone: do not resolve the model or read the corpus\n"
            "  --no-fetch     use only assets already present (no copy from a mirror)\n"
            "  --model-pin [NAME@]SHA256\n"
            "                 the model must be this one, as `normsweep run --model-pin` demands\n"
            "  -h, --help     show this help\n"
            "\n"
            "validate downloads nothing (`normsweep assets fetch` does): a model only a download\n"
            "could supply is a problem naming that command, unless its host cannot be reached\n"
            "(or NORMSWEEP_OFFLINE=1), when its fallback is checked instead, as a run would use\n"
            "it (docs/ASSETS.md).\n"
            "\n"
            "The summary gives the bootstrap's per-shard values per rank on 1, 2, 4 and 8 ranks\n"
            "and from how many ranks on a run writes intervals (at most 1 GiB per rank, or\n"
            "NORMSWEEP_BOOTSTRAP_MAX_BYTES; docs/STATISTICS.md).\n"
            "\n"
            "A campaign (models: instead of model:; docs/SWEEP.md, \"Campaigns\") is checked model\n"
            "by model, each with its summary; a model that cannot be had here is named with the\n"
            "`normsweep assets fetch` that would download it.\n"
            "\n"
            "Exit status: 0 valid (a summary is printed), 2 problems found (each printed),\n"
            "1 runtime failure, 5 a campaign valid for every model here but some models\n"
            "cannot be had here (named).\n");
}

static void print_sizes(const char *name, const size_t *v, size_t n)
{
    printf("%s %zu (", name, n);
    for (size_t i = 0; i < n; i++)
        printf("%s%zu", i ? " " : "", v[i]);
    printf(")");
}

static void print_doubles(const char *name, const double *v, size_t n)
{
    printf("%s %zu (", name, n);
    for (size_t i = 0; i < n; i++)
        printf("%s%g", i ? " " : "", v[i]);
    printf(")");
}

/* What the grid amounts to (for the summary only). */
typedef struct grid_counts {
    size_t shard_rows;   /* distinct prefix rows per shard over every L */
    size_t cells, cells_skipped, skipped_LN, partial_LN;
} grid_counts;

static void count_grid(const ns_sweep_config *cfg, grid_counts *gc)
{
    memset(gc, 0, sizeof *gc);
    size_t last_m = (size_t)-1;
    for (size_t iL = 0; iL < cfg->nL; iL++) /* L ascending: rows L-rows..L-1 per L */
        for (size_t r = cfg->rows; r-- > 0;) {
            size_t m = cfg->L[iL] - 1 - r;
            if (last_m == (size_t)-1 || m > last_m)
                gc->shard_rows++, last_m = m;
        }
    size_t per = cfg->nnormalizers * cfg->nT * cfg->nlayers * cfg->nheads;
    for (size_t iL = 0; iL < cfg->nL; iL++)
        for (size_t iN = 0; iN < cfg->nN; iN++) {
            gc->cells += per;
            if (cfg->N[iN] >= cfg->L[iL])
                gc->skipped_LN++, gc->cells_skipped += per;
            else if (cfg->N[iN] >= cfg->L[iL] - cfg->rows + 1)
                gc->partial_LN++;
        }
}

/* The time a task takes: its floating-point work at this machine's single-thread sgemm rate,
 * measured now (the sweep runs one BLAS thread per rank). */
static void print_time(const ns_grid *pg, const ns_model_config *mc, size_t shards)
{
    ns_plan_work w;
    ns_plan_work_estimate(pg, mc, &w);
    ns_blas_single_thread();
    double rate = ns_blas_sgemm_gflops() * 1e9;
    if (!(rate > 0.0))
        return;
    double task = (w.forward_flops + w.gram_flops) / rate;
    printf("  time:        at least %.3g s per task (%.3g GFLOP forward, %.3g GFLOP of the "
           "analysis's Gram matrices, at %.3g GFLOP/s: this machine's single-thread sgemm rate "
           "now), %.3g core-hours for %zu tasks, plus the per-row metrics, which this does not "
           "estimate (about the forward's time for GPT-2 124M's full grid, much more for small "
           "models: bench/README.md)\n", task, w.forward_flops * 1e-9, w.gram_flops * 1e-9,
           rate * 1e-9, task * (double)shards / 3600.0, shards);
}

/* The bootstrap's per-shard values per rank (docs/STATISTICS.md): on 1, 2, 4 and 8 ranks, and
 * the fewest ranks whose largest holds at most the limit (cap; 0: the default), from which on
 * a run writes intervals. */
static void print_boot(const ns_grid *pg, size_t shards, double cap)
{
    char b[4][32], lim[32];
    if (!(cap > 0))
        cap = NS_BOOT_SHARD_MAX_BYTES;
    for (size_t i = 0; i < 4; i++)
        ns_sys_format_bytes(ns_plan_boot_rank_bytes(pg, shards, (size_t)1 << i, cap), b[i],
                            sizeof b[i]);
    ns_sys_format_bytes(cap, lim, sizeof lim);
    size_t from = ns_plan_boot_min_ranks(pg, shards, cap);
    printf("               bootstrap per-shard values per rank (each holds at most its share of "
           "the groups): %s on 1 rank, %s on 2, %s on 4, %s on 8; limit %s per rank\n",
           b[0], b[1], b[2], b[3], lim);
    if (from == 1)
        printf("               bootstrap intervals: written on any number of ranks\n");
    else if (from)
        printf("               bootstrap intervals: written on %zu ranks or more; no bootstrap "
               "intervals will be written on fewer (docs/STATISTICS.md)\n", from);
    else
        printf("               no bootstrap intervals will be written on any number of ranks: "
               "one group per rank still exceeds the limit (docs/STATISTICS.md)\n");
}

static void print_summary(const ns_sweep_config *cfg, const ns_sweep_inputs *in,
                          const grid_counts *g, int schema_only, double boot_cap)
{
    printf("%s: valid\n", cfg->source_path);
    if (schema_only) {
        printf("  model:       %s (not checked: --schema-only)\n", cfg->model);
        printf("  tokenizer:   %s (not checked)\n", cfg->tokenizer);
        printf("  corpus:      %s%s (not read)\n", cfg->corpus,
               cfg->strip_gutenberg ? ", Gutenberg header and licence stripped" : "");
    } else {
        const ns_model_config *mc = &in->model_cfg;
        char kv[48] = "";
        if (mc->n_kv_head != mc->n_head)
            snprintf(kv, sizeof kv, " (%zu key/value)", mc->n_kv_head);
        char ml[128], tl[128], cl[128]; /* a path's base name, never the word "path" */
        printf("  model:       %s (%s%s), %s, %zu layers, %zu heads%s, n_ctx %zu\n",
               ns_asset_ref_label(&in->model_ref, ml, sizeof ml), in->model_ref.path,
               in->model_ref.is_fallback ? "; fallback" : "", mc->model_type, mc->n_layer,
               mc->n_head, kv, mc->n_ctx);
        if (!ns_asset_ref_is_path(&in->model_ref) && strcmp(cfg->model, in->model_ref.name) != 0)
            printf("               (requested: %s)\n", cfg->model);
        printf("  tokenizer:   %s (%s), vocabulary %zu\n",
               ns_asset_ref_label(&in->tokenizer_ref, tl, sizeof tl), in->tokenizer_ref.path,
               in->vocab_size);
        printf("  corpus:      %s (%s): %zu tokens%s\n",
               ns_asset_ref_label(&in->corpus_ref, cl, sizeof cl), in->corpus_ref.path,
               in->corpus.tokens.n,
               cfg->strip_gutenberg ? " after stripping the Gutenberg header and licence" : "");
    }
    size_t last = cfg->shard_first + (cfg->shard_count - 1) * cfg->shard_stride + cfg->L_max;
    printf("  shards:      %zu x %zu tokens, first %zu, stride %zu: tokens [%zu, %zu)",
           cfg->shard_count, cfg->L_max, cfg->shard_first, cfg->shard_stride, cfg->shard_first,
           last);
    if (!schema_only)
        printf(" of %zu", in->corpus.tokens.n);
    printf("\n  grid:        ");
    print_sizes("L", cfg->L, cfg->nL);
    printf(", ");
    print_sizes("N", cfg->N, cfg->nN);
    printf(", ");
    print_doubles("T", cfg->T, cfg->nT);
    printf(", ");
    print_doubles("eps", cfg->eps, cfg->neps);
    printf("\n               ");
    if (schema_only && cfg->layers_all)
        printf("layers all");
    else
        print_sizes("layers", cfg->layers, cfg->nlayers);
    printf(", ");
    if (schema_only && cfg->heads_all)
        printf("heads all");
    else
        print_sizes("heads", cfg->heads, cfg->nheads);
    printf(", normalizers %zu (", cfg->nnormalizers);
    for (size_t i = 0; i < cfg->nnormalizers; i++) {
        char label[64]; /* with its parameter: "entmax alpha=1.3", "sigmoid b=-log(L)" */
        ns_normalizer_label(&cfg->normalizers[i], 0, label, sizeof label);
        printf("%s%s", i ? " " : "", label);
        if (cfg->normalizers[i].kind == NS_NORM_SSMAX)
            printf(" s=%g", cfg->normalizers[i].s);
    }
    printf(")\n");
    printf("  rows:        %zu per prefix, %zu distinct rows per shard\n", cfg->rows,
           g->shard_rows);
    printf("  tasks:       %zu (one forward pass per shard)\n", cfg->shard_count);
    if (!schema_only)
        printf("  cells:       %zu (normalizer x L x T x N x layer x head), %zu of them skipped\n",
               g->cells, g->cells_skipped);
    printf("  skipped:     %zu (L, N) cells with N >= L", g->skipped_LN);
    for (size_t iL = 0, shown = 0; iL < cfg->nL; iL++)
        for (size_t iN = 0; iN < cfg->nN; iN++) {
            if (cfg->N[iN] < cfg->L[iL])
                continue;
            if (shown++ == 0)
                printf(":");
            if (shown > 20) {
                if (shown == 21)
                    printf(" ...");
                continue;
            }
            printf(" (%zu,%zu)", cfg->L[iL], cfg->N[iN]);
        }
    printf("\n");
    if (g->partial_LN)
        printf("               %zu (L, N) cells skip some of their rows (N >= row keys)\n",
               g->partial_LN);
    printf("  sampling:    sphere %s, seed %llu, ks_alpha %g, probes %u, keep_samples %s\n",
           cfg->sphere ? "true" : "false", (unsigned long long)cfg->seed, cfg->ks_alpha,
           cfg->probes, cfg->keep_samples ? "true" : "false");
    printf("  bootstrap:   %zu resamples of the %zu shards (95 %% percentile intervals, "
           "docs/STATISTICS.md)\n", cfg->bootstrap_resamples, cfg->shard_count);
    if (!schema_only) {
        ns_grid pg;
        ns_plan_memory m;
        ns_sweep_config_grid(cfg, &pg);
        ns_plan_memory_estimate(&pg, &in->model_cfg, cfg->shard_count, cfg->keep_samples, &m);
        char task[64], pay[64], red[64], have[64];
        ns_sys_format_bytes(m.task, task, sizeof task);
        ns_sys_format_bytes(m.payload, pay, sizeof pay);
        ns_sys_format_bytes(m.reduce, red, sizeof red);
        ns_sys_format_bytes((double)ns_sys_memory_bytes(), have, sizeof have);
        printf("  memory:      about %s per rank computing (%s of results per task), %s on rank "
               "0 reducing; this machine has %s\n", task, pay, red, have);
        print_boot(&pg, cfg->shard_count, boot_cap);
        print_time(&pg, &in->model_cfg, cfg->shard_count);
    }
    printf("  output:      %s\n", cfg->output);
    printf("  checkpoint:  %s\n", cfg->checkpoint_dir);
}

/* The output and checkpoint paths against the inputs (what `run` refuses), as a diagnostic at
 * `output:` (or `checkpoint_dir:`, or the file's start). */
static int check_outputs(const ns_sweep_config *cfg, const ns_sweep_marks *marks,
                         const ns_sweep_inputs *in, ns_sweep_diags *diags, ns_err *err)
{
    ns_err e;
    if (ns_sweep_check_outputs(cfg, in, &e) == NS_OK)
        return NS_OK;
    if (e.code != NS_ERR_INVALID) {
        *err = e;
        return e.code;
    }
    ns_sweep_mark at = marks->output.line ? marks->output
                       : marks->checkpoint_dir.line ? marks->checkpoint_dir : marks->root;
    if (ns_sweep_diag_add(diags, cfg->source_path, at, 0, "%s", e.msg) != NS_OK)
        return ns_fail(err, NS_ERR_NOMEM, "out of memory");
    return ns_fail(err, NS_ERR_INVALID, "1 problem in %s", cfg->source_path);
}

/* One model of a campaign: its sweep text checked as `validate` checks a file (schema first,
 * against the model and the corpus unless schema_only), its summary printed. A model that
 * cannot be had here is named and not checked further (*missing). Returns an exit code. */
static int validate_model(const ns_campaign *c, size_t i, ns_assets_ctx *ctx, int schema_only,
                          int allow_fetch, const ns_model_pin *pin, double boot_cap, int *missing)
{
    const ns_campaign_model *m = &c->models[i];
    char why[1024];
    *missing = !schema_only && ns_cli_campaign_missing(ctx, m->model, why, sizeof why);
    printf("[%s] model %zu of %zu: %s (its sweep file: %s)\n", m->id, i + 1, c->n, m->model,
           m->sweep_path);
    if (*missing) {
        printf("[%s] not here, so checked by schema only: %s\n", m->id, why);
        fprintf(stderr, "%s:%zu:%zu: [%s] model '%s' is not here: %s\n", c->path, m->mark.line,
                m->mark.col, m->id, m->model, why);
        schema_only = 1;
    }
    ns_sweep_config cfg;
    ns_sweep_marks marks;
    ns_sweep_inputs *in = calloc(1, sizeof *in);
    ns_sweep_diags diags = {0};
    ns_err err;
    ns_err_clear(&err);
    if (!in)
        return NS_EXIT_FAILURE;
    ns_assets_fetch fetch = {.allow = allow_fetch, .log = ns_cli_log_line, .log_user = NULL};
    int rc = ns_sweep_load_text(m->text, m->len, c->path, NULL, pin, &fetch,
                                schema_only ? NS_SWEEP_SCHEMA_ONLY : 0, &cfg, &marks, in,
                                &diags, &err);
    if (rc == NS_OK && !schema_only)
        rc = check_outputs(&cfg, &marks, in, &diags, &err);
    if (rc == NS_OK && schema_only)
        rc = ns_sweep_expand_all(&cfg, 1, 1, &err);
    if (ns_campaign_fix_diags(c, i, &diags) != NS_OK)
        rc = ns_fail(&err, NS_ERR_NOMEM, "out of memory");
    for (size_t k = 0; k < diags.n; k++)
        fprintf(stderr, "%s\n", diags.items[k].text);
    int code = NS_EXIT_OK;
    if (rc == NS_OK && !*missing) {
        grid_counts grid;
        count_grid(&cfg, &grid);
        print_summary(&cfg, in, &grid, schema_only, boot_cap);
    } else if (rc != NS_OK) {
        code = rc == NS_ERR_INVALID ? NS_EXIT_USAGE : ns_cli_report("validate", &err);
    }
    ns_sweep_inputs_free(in);
    free(in);
    ns_sweep_marks_free(&marks);
    ns_sweep_diags_free(&diags);
    ns_sweep_config_free(&cfg);
    return code;
}

/* A campaign: every model in turn. Exit 2 when a model has problems, else
 * NS_EXIT_MODELS_MISSING when some models cannot be had here, else 0. */
static int validate_campaign(const ns_campaign *c, int schema_only, int allow_fetch,
                             const ns_model_pin *pin, double boot_cap)
{
    ns_assets_ctx ctx;
    ns_err err;
    if (ns_assets_ctx_init(&ctx, NULL, NULL, &err) != NS_OK)
        return ns_cli_report("validate", &err);
    int code0 = ns_cli_campaign_schema(c, "validate");
    if (code0 != NS_EXIT_OK)
        return code0;
    printf("%s: a campaign of %zu models, output directory %s (OUTPUT_DIR/<id>/<id>.nc)\n",
           c->path, c->n, c->output_dir);
    size_t bad = 0, missing = 0;
    for (size_t i = 0; i < c->n; i++) {
        int miss = 0, code = validate_model(c, i, &ctx, schema_only, allow_fetch, pin, boot_cap,
                                            &miss);
        if (code == NS_EXIT_FAILURE)
            return code;
        bad += code != NS_EXIT_OK;
        missing += miss;
        if (code == NS_EXIT_OK && i == 0 && schema_only)
            break; /* the same text for every model but model: and tokenizer: */
    }
    if (bad) {
        fprintf(stderr, "normsweep validate: %zu of the %zu models of %s have problems\n", bad,
                c->n, c->path);
        return NS_EXIT_USAGE;
    }
    if (missing) {
        printf("%s: valid for the %zu of %zu models here; %zu cannot be had here (named above): "
               "`run` refuses the campaign until `normsweep assets fetch` brings them (exit %d)\n",
               c->path, c->n - missing, c->n, missing, NS_EXIT_MODELS_MISSING);
        return NS_EXIT_MODELS_MISSING;
    }
    printf("%s: valid for all %zu models\n", c->path, c->n);
    return NS_EXIT_OK;
}

int ns_cmd_validate(int argc, char **argv)
{
    static const struct option opts[] = {{"schema-only", no_argument, NULL, 's'},
                                         {"no-fetch", no_argument, NULL, 'n'},
                                         {"model-pin", required_argument, NULL, 'p'},
                                         {"help", no_argument, NULL, 'h'},
                                         {NULL, 0, NULL, 0}};
    int schema_only = 0, allow_fetch = 1, pinned = 0, c;
    ns_model_pin pin;
    optind = 1;
    opterr = 0;
    while ((c = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
        switch (c) {
        case 's': schema_only = 1; break;
        case 'n': allow_fetch = 0; break;
        case 'p': {
            ns_err e;
            if (ns_model_pin_parse(optarg, &pin, &e) != NS_OK) {
                fprintf(stderr, "normsweep validate: --model-pin: %s\n", e.msg);
                return NS_EXIT_USAGE;
            }
            pinned = 1;
            break;
        }
        case 'h': usage(stdout); return NS_EXIT_OK;
        default:
            fprintf(stderr, "normsweep validate: unknown option '%s' (see normsweep validate --help)\n",
                    argv[optind - 1]);
            return NS_EXIT_USAGE;
        }
    }
    double boot_cap = 0.0;
    int bc = ns_cli_boot_max_bytes("validate", &boot_cap);
    if (bc != 0)
        return bc;
    if (argc - optind > 1) {
        fprintf(stderr, "normsweep validate: one sweep file at a time (got %d; see --help)\n",
                argc - optind);
        return NS_EXIT_USAGE;
    }
    /* A sweep not found from here is looked up in the data directory (installed sweeps/). */
    char *path = optind < argc ? ns_datadir_sweep(argv[optind]) : NULL;
    if (optind < argc && !path) {
        fprintf(stderr, "normsweep validate: out of memory\n");
        return NS_EXIT_FAILURE;
    }

    if (path) { /* a campaign (models:) is checked model by model */
        ns_campaign camp;
        char *text = NULL;
        size_t len = 0;
        int code = ns_cli_campaign_read("validate", path, NULL, &camp, &text, &len);
        int was_campaign = camp.n > 0;
        if (code == NS_EXIT_OK && was_campaign)
            code = validate_campaign(&camp, schema_only, allow_fetch, pinned ? &pin : NULL,
                                     boot_cap);
        ns_campaign_free(&camp);
        free(text);
        if (code != NS_EXIT_OK || was_campaign) {
            free(path);
            return code;
        }
    }
    ns_sweep_config cfg;
    ns_sweep_marks marks;
    ns_sweep_inputs *in = calloc(1, sizeof *in); /* large (asset paths): not on the stack */
    ns_sweep_diags diags = {0};
    grid_counts grid;
    ns_err err;
    ns_err_clear(&err);
    int rc, exit_code;
    if (!in) {
        fprintf(stderr, "normsweep validate: out of memory\n");
        free(path);
        return NS_EXIT_FAILURE;
    }
    ns_assets_fetch fetch = {.allow = allow_fetch, .log = ns_cli_log_line, .log_user = NULL};
    rc = ns_sweep_load_model(path, NULL, pinned ? &pin : NULL, &fetch,
                             schema_only ? NS_SWEEP_SCHEMA_ONLY : 0, &cfg, &marks, in, &diags, &err);
    if (rc == NS_OK && !schema_only)
        rc = check_outputs(&cfg, &marks, in, &diags, &err);
    for (size_t i = 0; i < diags.n; i++)
        fprintf(stderr, "%s\n", diags.items[i].text);
    if (rc == NS_OK && schema_only)
        rc = ns_sweep_expand_all(&cfg, 1, 1, &err); /* placeholder counts for the row table */
    if (rc == NS_OK) {
        count_grid(&cfg, &grid);
        print_summary(&cfg, in, &grid, schema_only, boot_cap);
        exit_code = NS_EXIT_OK;
    } else if (rc == NS_ERR_IO) {
        /* the sweep file itself could not be read: a bad argument, nothing was done */
        fprintf(stderr, "normsweep validate: %s\n", err.msg);
        exit_code = NS_EXIT_USAGE;
    } else {
        exit_code = ns_cli_report("validate", &err);
    }
    ns_sweep_inputs_free(in);
    free(in);
    ns_sweep_marks_free(&marks);
    ns_sweep_diags_free(&diags);
    ns_sweep_config_free(&cfg);
    free(path);
    return exit_code;
}

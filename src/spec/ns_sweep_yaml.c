/* ns_sweep_yaml: the sweep file's schema (docs/SWEEP.md) on the generic YAML typing of
 * spec/ns_yaml: which keys exist, their types and ranges, the defaults a parsed file completes. */
#include "spec/ns_sweep_yaml.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/ns_boot.h"
#include "spec/ns_yaml.h"

/* The ranges of the sweep's own numeric keys (common/ns_range.h); the grid's values take theirs
 * from the plan (rows/ns_plan.h), which `dump` shares. The output stores shard indices, their
 * first tokens and every count as 32-bit integers (ns_sweep_check_grid checks the sums). */
static const ns_range r_shard_count =
    NS_RANGE_INT(1, NS_RANGE_INT32_MAX, "the output stores shard indices as 32-bit integers");
static const ns_range r_shard_first =
    NS_RANGE_INT(0, NS_RANGE_INT32_MAX, "the output stores shard starts as 32-bit integers");
static const ns_range r_shard_stride =
    NS_RANGE_INT(1, NS_RANGE_INT32_MAX, "the output stores shard starts as 32-bit integers");
static const ns_range r_seed = NS_RANGE_INT(0, UINT64_MAX, NULL);
static const ns_range r_ks_alpha =
    NS_RANGE_REAL(0.0, 1.0, NS_RANGE_MIN_OPEN | NS_RANGE_MAX_OPEN, "a significance level");

/* ---- parser state ------------------------------------------------------------------------- */

typedef struct ps {
    ns_yaml y;              /* the document, its name and its diagnostics */
    ns_sweep_config *cfg;
    ns_sweep_marks *mk;
} ps;

/* ---- sections ----------------------------------------------------------------------------- */

static void parse_shards(ps *p, const yaml_node_t *n)
{
    ns_yaml *y = &p->y;
    ns_sweep_config *cfg = p->cfg;
    static const char *const names[] = {"count", "L_max", "first", "stride"};
    if (ns_yaml_expect_mapping(y, n, "shards", "count, L_max, first, stride") != 0)
        return;
    yaml_node_t *v[4], *k[4];
    ns_yaml_walk_mapping(y, n, "shards", names, 4, v, k);
    for (size_t i = 0; i < 2; i++)
        if (!v[i])
            NS_YAML_PROBLEM(y, n, "shards: missing required key '%s'", names[i]);
    if (v[0] && ns_yaml_size(y, v[0], "shards.count", &r_shard_count, &cfg->shard_count) == 0)
        p->mk->shard_count = ns_yaml_mark(v[0]);
    if (v[1] && ns_yaml_size(y, v[1], "shards.L_max", &ns_plan_range_L, &cfg->L_max) == 0)
        p->mk->L_max = ns_yaml_mark(v[1]);
    if (v[2] && ns_yaml_size(y, v[2], "shards.first", &r_shard_first, &cfg->shard_first) == 0)
        p->mk->shard_first = ns_yaml_mark(v[2]);
    if (v[3] && ns_yaml_size(y, v[3], "shards.stride", &r_shard_stride, &cfg->shard_stride) == 0)
        p->mk->shard_stride = ns_yaml_mark(v[3]);
}

/* bootstrap: {resamples: B} (docs/STATISTICS.md, "The resamples"). */
static void parse_bootstrap(ps *p, const yaml_node_t *n)
{
    ns_yaml *y = &p->y;
    static const char *const names[] = {"resamples"};
    if (ns_yaml_expect_mapping(y, n, "bootstrap", "resamples") != 0)
        return;
    yaml_node_t *v[1], *k[1];
    ns_yaml_walk_mapping(y, n, "bootstrap", names, 1, v, k);
    if (v[0] && ns_yaml_size(y, v[0], "bootstrap.resamples", &ns_boot_range_resamples,
                             &p->cfg->bootstrap_resamples) == 0)
        p->mk->bootstrap_resamples = ns_yaml_mark(v[0]);
}

static void parse_layer_list(ps *p, const yaml_node_t *n, const char *path, const ns_range *r,
                             int *all, size_t **vals, size_t *count, ns_sweep_mark **marks)
{
    ns_yaml *y = &p->y;
    if (n->type == YAML_SCALAR_NODE && !strcmp(ns_yaml_text(n), "all")) {
        *all = 1;
        return;
    }
    if (n->type == YAML_SCALAR_NODE && ns_yaml_is_plain(n)) {
        /* a lone word other than `all` is most likely a misspelling of it */
        char *end;
        strtoll(ns_yaml_text(n), &end, 10);
        if (end == ns_yaml_text(n) || *end) {
            char b[64];
            NS_YAML_PROBLEM(y, n, "%s: expected 'all', an index or a list of indices, got %s",
                            path, ns_yaml_describe(n, b, sizeof b));
            return;
        }
    }
    *all = 0;
    ns_yaml_int_list(y, n, path, r, vals, count, marks);
}

static void parse_grid(ps *p, const yaml_node_t *n)
{
    ns_yaml *y = &p->y;
    ns_sweep_config *cfg = p->cfg;
    ns_sweep_marks *mk = p->mk;
    static const char *const names[] = {"L", "N", "T", "eps", "layers", "heads"};
    if (ns_yaml_expect_mapping(y, n, "grid", "L, N, T, eps, layers, heads") != 0)
        return;
    yaml_node_t *v[6], *k[6];
    ns_yaml_walk_mapping(y, n, "grid", names, 6, v, k);
    for (size_t i = 0; i < 2; i++)
        if (!v[i])
            NS_YAML_PROBLEM(y, n, "grid: missing required key '%s'", names[i]);

    if (v[0]) {
        mk->L_key = ns_yaml_mark(v[0]);
        ns_yaml_int_list(y, v[0], "grid.L", &ns_plan_range_L, &cfg->L, &cfg->nL, &mk->L);
    }
    if (v[1]) {
        mk->N_key = ns_yaml_mark(v[1]);
        ns_yaml_int_list(y, v[1], "grid.N", &ns_plan_range_N, &cfg->N, &cfg->nN, &mk->N);
    }
    if (v[2]) { /* the default's array is dropped: a list of no valid value leaves none */
        mk->T_key = ns_yaml_mark(v[2]);
        free(cfg->T);
        cfg->T = NULL;
        ns_yaml_real_list(y, v[2], "grid.T", &ns_plan_range_scale, &cfg->T, &cfg->nT, &mk->T);
    }
    if (v[3]) {
        mk->eps_key = ns_yaml_mark(v[3]);
        free(cfg->eps);
        cfg->eps = NULL;
        ns_yaml_real_list(y, v[3], "grid.eps", &ns_plan_range_scale, &cfg->eps, &cfg->neps,
                          &mk->eps);
    }
    if (v[4]) {
        mk->layers_key = ns_yaml_mark(v[4]);
        parse_layer_list(p, v[4], "grid.layers", &ns_plan_range_layer, &cfg->layers_all,
                         &cfg->layers, &cfg->nlayers, &mk->layers);
    }
    if (v[5]) {
        mk->heads_key = ns_yaml_mark(v[5]);
        parse_layer_list(p, v[5], "grid.heads", &ns_plan_range_head, &cfg->heads_all,
                         &cfg->heads, &cfg->nheads, &mk->heads);
    }
}

/* A normalizer's parameter node (s, b or alpha: at most one, the one its kind takes) into *out;
 * 0 when it is missing where required, present where not taken, or out of range (reported). */
static int parse_norm_param(ps *p, const yaml_node_t *n, const char *name, ns_normalizer_kind kind,
                            const yaml_node_t *const prm[3], ns_normalizer *out)
{
    ns_yaml *y = &p->y;
    static const char *const key[3] = {"s", "b", "alpha"};
    static const char *const path[3] = {"normalizer.s", "normalizer.b", "normalizer.alpha"};
    const ns_range *range[3] = {&ns_plan_range_s, &ns_plan_range_b, &ns_plan_range_alpha};
    int takes = kind == NS_NORM_SSMAX ? 0 : kind == NS_NORM_SIGMOID ? 1 : kind == NS_NORM_ENTMAX ? 2
                                                                                              : -1;
    for (int k = 0; k < 3; k++)
        if (prm[k] && k != takes) {
            NS_YAML_PROBLEM(y, prm[k], "%s: %s applies only to %s, not to %s", path[k], key[k],
                            k == 0 ? "ssmax" : k == 1 ? "sigmoid" : "entmax", name);
            return 0;
        }
    *out = ns_normalizer_default(kind);
    if (takes < 0)
        return 1;
    if (!prm[takes]) {
        if (kind == NS_NORM_SIGMOID)
            return 1; /* b = -log L, the row's own (ns_normalizer_sigmoid_bias) */
        NS_YAML_PROBLEM(y, n, "normalizer: %s needs its parameter: write {name: %s, %s: VALUE}%s",
                        name, name, key[takes],
                        kind == NS_NORM_ENTMAX ? " (alpha > 1; 1.5 is entmax15)" : "");
        return 0;
    }
    double v;
    if (ns_yaml_num(y, prm[takes], path[takes], range[takes], NULL, &v) != 0)
        return 0;
    out->s = v; /* the union's one parameter: s, b or alpha */
    return 1;
}

/* A normalizer: a name, or a mapping {name, s | b | alpha} (docs/SWEEP.md). */
static void parse_one_normalizer(ps *p, const yaml_node_t *n, ns_normalizer *out,
                                 ns_sweep_mark *where, int *ok)
{
    ns_yaml *y = &p->y;
    char b[64];
    const yaml_node_t *name_node = n, *prm[3] = {NULL, NULL, NULL};
    *ok = 0;
    *where = ns_yaml_mark(n);
    if (n->type == YAML_MAPPING_NODE) {
        static const char *const names[] = {"name", "s", "b", "alpha"};
        yaml_node_t *v[4], *k[4];
        ns_yaml_walk_mapping(y, n, "normalizer", names, 4, v, k);
        if (!v[0]) {
            NS_YAML_PROBLEM(y, n, "normalizer: missing required key 'name'");
            return;
        }
        name_node = v[0];
        prm[0] = v[1], prm[1] = v[2], prm[2] = v[3];
    } else if (n->type != YAML_SCALAR_NODE) {
        NS_YAML_PROBLEM(y, n, "normalizer: expected a name or {name, s | b | alpha}, got %s",
                        ns_yaml_describe(n, b, sizeof b));
        return;
    }
    if (name_node->type != YAML_SCALAR_NODE || ns_yaml_is_null(name_node)) {
        NS_YAML_PROBLEM(y, name_node, "normalizer: expected a name, got %s",
                        ns_yaml_describe(name_node, b, sizeof b));
        return;
    }
    ns_normalizer f;
    ns_err e;
    if (ns_normalizer_parse_any(ns_yaml_text(name_node), &f, &e) != NS_OK) {
        NS_YAML_PROBLEM(y, name_node, "normalizer: %s", e.msg);
        return;
    }
    *ok = parse_norm_param(p, n, ns_yaml_text(name_node), f.kind, prm, out);
}

static void parse_normalizers(ps *p, const yaml_node_t *n)
{
    ns_yaml *y = &p->y;
    ns_sweep_config *cfg = p->cfg;
    ns_sweep_mark seen[NS_SWEEP_MAX_LISTED_NORMALIZERS];
    size_t count = 0;
    const yaml_node_t *single[1] = {n};
    const yaml_node_t *const *list = single;
    size_t nitems = 1;
    yaml_node_t **tmp = NULL;
    if (n->type == YAML_SEQUENCE_NODE) {
        nitems = (size_t)(n->data.sequence.items.top - n->data.sequence.items.start);
        if (!nitems) {
            NS_YAML_PROBLEM(y, n, "normalizer: empty list");
            return;
        }
        tmp = malloc(nitems * sizeof *tmp);
        if (!tmp) {
            y->nomem = 1;
            return;
        }
        for (size_t i = 0; i < nitems; i++)
            tmp[i] = ns_yaml_node(y, n->data.sequence.items.start[i]);
        list = (const yaml_node_t *const *)tmp;
    }
    ns_normalizer got[NS_SWEEP_MAX_LISTED_NORMALIZERS];
    for (size_t i = 0; i < nitems; i++) {
        ns_normalizer f;
        ns_sweep_mark where;
        int ok;
        if (list[i]->type == YAML_SEQUENCE_NODE) {
            char b[64];
            NS_YAML_PROBLEM(y, list[i], "normalizer: expected a name or {name, s | b | alpha}, "
                            "got %s", ns_yaml_describe(list[i], b, sizeof b));
            continue;
        }
        parse_one_normalizer(p, list[i], &f, &where, &ok);
        if (!ok)
            continue;
        size_t j = 0;
        while (j < count && !ns_normalizer_same(&got[j], &f))
            j++;
        if (j < count) {
            ns_yaml_problem(y, where, "normalizer: duplicate normalizer '%s' (first at line %zu, "
                            "column %zu)", ns_normalizer_name(f.kind), seen[j].line, seen[j].col);
            continue;
        }
        if (count == NS_SWEEP_MAX_LISTED_NORMALIZERS) {
            ns_yaml_problem(y, where, "normalizer: at most %d normalizers per sweep",
                            NS_SWEEP_MAX_LISTED_NORMALIZERS);
            continue;
        }
        got[count] = f;
        seen[count] = where;
        count++;
    }
    free(tmp);
    if (count) {
        memcpy(cfg->normalizers, got, count * sizeof got[0]);
        cfg->nnormalizers = count;
    }
}

static const char *const top_names[] = {
    "model", "tokenizer", "corpus", "strip_gutenberg", "shards", "grid", "normalizer", "sink_view",
    "rows", "sphere", "seed", "ks_alpha", "probes", "keep_samples", "bootstrap", "output",
    "checkpoint_dir"};
enum {
    K_MODEL, K_TOKENIZER, K_CORPUS, K_STRIP, K_SHARDS, K_GRID, K_NORMALIZER, K_SINK_VIEW, K_ROWS,
    K_SPHERE, K_SEED, K_KS_ALPHA, K_PROBES, K_KEEP, K_BOOT, K_OUTPUT, K_CHECKPOINT, K_COUNT
};

static void parse_root(ps *p, const yaml_node_t *root)
{
    ns_yaml *y = &p->y;
    ns_sweep_config *cfg = p->cfg;
    ns_sweep_marks *mk = p->mk;
    char b[64];
    mk->root = ns_yaml_mark(root);
    if (root->type != YAML_MAPPING_NODE) {
        NS_YAML_PROBLEM(y, root, "expected a mapping of settings (model, shards, grid, ...), got "
                        "%s", ns_yaml_describe(root, b, sizeof b));
        return;
    }
    yaml_node_t *v[K_COUNT], *k[K_COUNT];
    ns_yaml_walk_mapping(y, root, "", top_names, K_COUNT, v, k);

    if (v[K_MODEL] && ns_yaml_string(y, v[K_MODEL], "model", "a model name or directory",
                                     &cfg->model) == 0)
        mk->model = ns_yaml_mark(v[K_MODEL]);
    if (v[K_TOKENIZER] && ns_yaml_string(y, v[K_TOKENIZER], "tokenizer",
                                         "a tokenizer name or directory", &cfg->tokenizer) == 0)
        mk->tokenizer = ns_yaml_mark(v[K_TOKENIZER]);
    if (v[K_CORPUS] && ns_yaml_string(y, v[K_CORPUS], "corpus", "a corpus name or text file",
                                      &cfg->corpus) == 0)
        mk->corpus = ns_yaml_mark(v[K_CORPUS]);
    if (v[K_STRIP] && ns_yaml_bool(y, v[K_STRIP], "strip_gutenberg", &cfg->strip_gutenberg) == 0)
        mk->strip_gutenberg = ns_yaml_mark(v[K_STRIP]);

    if (v[K_SHARDS]) {
        mk->shards = ns_yaml_mark(v[K_SHARDS]);
        parse_shards(p, v[K_SHARDS]);
    } else {
        NS_YAML_PROBLEM(y, root, "missing required key 'shards'");
    }
    if (v[K_GRID]) {
        mk->grid = ns_yaml_mark(v[K_GRID]);
        parse_grid(p, v[K_GRID]);
    } else {
        NS_YAML_PROBLEM(y, root, "missing required key 'grid'");
    }
    if (v[K_NORMALIZER]) {
        mk->normalizer = ns_yaml_mark(v[K_NORMALIZER]);
        parse_normalizers(p, v[K_NORMALIZER]);
    }
    if (v[K_SINK_VIEW] && ns_yaml_bool(y, v[K_SINK_VIEW], "sink_view", &cfg->sink_view) == 0)
        mk->sink_view = ns_yaml_mark(v[K_SINK_VIEW]);
    ns_sweep_add_sink_views(cfg); /* after the list: the views follow the listed normalizers */
    if (v[K_ROWS] && ns_yaml_size(y, v[K_ROWS], "rows", &ns_plan_range_rows, &cfg->rows) == 0)
        mk->rows = ns_yaml_mark(v[K_ROWS]);
    if (v[K_SPHERE] && ns_yaml_bool(y, v[K_SPHERE], "sphere", &cfg->sphere) == 0)
        mk->sphere = ns_yaml_mark(v[K_SPHERE]);
    if (v[K_SEED] && ns_yaml_num(y, v[K_SEED], "seed", &r_seed, &cfg->seed, NULL) == 0)
        mk->seed = ns_yaml_mark(v[K_SEED]);
    if (v[K_KS_ALPHA] &&
        ns_yaml_num(y, v[K_KS_ALPHA], "ks_alpha", &r_ks_alpha, NULL, &cfg->ks_alpha) == 0)
        mk->ks_alpha = ns_yaml_mark(v[K_KS_ALPHA]);
    size_t probes;
    if (v[K_PROBES] &&
        ns_yaml_size(y, v[K_PROBES], "probes", &ns_plan_range_probes, &probes) == 0) {
        cfg->probes = (unsigned)probes;
        mk->probes = ns_yaml_mark(v[K_PROBES]);
    }
    if (v[K_KEEP] && ns_yaml_bool(y, v[K_KEEP], "keep_samples", &cfg->keep_samples) == 0)
        mk->keep_samples = ns_yaml_mark(v[K_KEEP]);
    if (v[K_BOOT]) {
        mk->bootstrap = ns_yaml_mark(v[K_BOOT]);
        parse_bootstrap(p, v[K_BOOT]);
    }
    if (v[K_OUTPUT] && ns_yaml_string(y, v[K_OUTPUT], "output", "a file path", &cfg->output) == 0)
        mk->output = ns_yaml_mark(v[K_OUTPUT]);
    if (v[K_CHECKPOINT] && ns_yaml_string(y, v[K_CHECKPOINT], "checkpoint_dir", "a directory path",
                                          &cfg->checkpoint_dir) == 0)
        mk->checkpoint_dir = ns_yaml_mark(v[K_CHECKPOINT]);
}

int ns_sweep_parse(const char *text, size_t len, const char *source_name, ns_sweep_config *cfg,
                   ns_sweep_marks *marks, ns_sweep_diags *diags, ns_err *err)
{
    ns_sweep_marks local_marks;
    memset(&local_marks, 0, sizeof local_marks);
    ns_sweep_marks *mk = marks ? marks : &local_marks;
    memset(mk, 0, sizeof *mk);
    size_t errors_before = diags->nerrors;
    ps p = {{source_name, NULL, diags, 0}, cfg, mk};
    yaml_parser_t parser;
    yaml_document_t doc;
    int have_parser = 0, have_doc = 0;
    int rc = ns_sweep_config_init(cfg, err);
    if (rc != NS_OK)
        goto done;
    cfg->source_path = strdup(source_name);
    cfg->yaml_text = malloc(len + 1);
    if (!cfg->source_path || !cfg->yaml_text) {
        rc = ns_fail(err, NS_ERR_NOMEM, "%s: out of memory", source_name);
        goto done;
    }
    memcpy(cfg->yaml_text, text, len);
    cfg->yaml_text[len] = '\0';

    if (ns_yaml_check_text(&p.y, text, len))
        goto checked;
    if (!yaml_parser_initialize(&parser)) {
        rc = ns_fail(err, NS_ERR_NOMEM, "%s: cannot initialise the YAML parser", source_name);
        goto done;
    }
    have_parser = 1;
    yaml_parser_set_input_string(&parser, (const unsigned char *)text, len);
    if (!yaml_parser_load(&parser, &doc)) {
        ns_yaml_report_error(&p.y, &parser, text, len);
        goto checked;
    }
    have_doc = 1;
    p.y.doc = &doc;
    yaml_node_t *root = yaml_document_get_root_node(&doc);
    if (!root) {
        ns_sweep_mark m = {1, 1};
        ns_yaml_problem(&p.y, m, "the sweep file is empty (expected settings such as shards: and "
                                 "grid:; see docs/SWEEP.md)");
        goto checked;
    }
    parse_root(&p, root);
    if (cfg->L_max && !mk->shard_stride.line && !cfg->shard_stride)
        cfg->shard_stride = cfg->L_max; /* default: consecutive shards */
    if (!p.y.nomem && ns_sweep_config_default_paths(cfg, err) != NS_OK)
        p.y.nomem = 1;

    /* A second document is a mistake (only the first would be used). */
    yaml_document_t doc2;
    if (yaml_parser_load(&parser, &doc2)) {
        yaml_node_t *r2 = yaml_document_get_root_node(&doc2);
        if (r2)
            ns_yaml_problem(&p.y, ns_yaml_mark(r2),
                            "a sweep file holds one YAML document; remove this second one");
        yaml_document_delete(&doc2);
    } else {
        ns_yaml_report_error(&p.y, &parser, text, len);
    }

checked:
    if (p.y.nomem) {
        rc = ns_fail(err, NS_ERR_NOMEM, "%s: out of memory while parsing", source_name);
        goto done;
    }
    if (diags->nerrors > errors_before) {
        size_t n = diags->nerrors - errors_before;
        rc = ns_fail(err, NS_ERR_INVALID, "%zu problem%s in %s", n, n == 1 ? "" : "s",
                     source_name);
    }

done:
    if (have_doc)
        yaml_document_delete(&doc);
    if (have_parser)
        yaml_parser_delete(&parser);
    if (!marks)
        ns_sweep_marks_free(&local_marks);
    return rc;
}

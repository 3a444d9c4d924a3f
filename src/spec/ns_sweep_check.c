/* ns_sweep_check: multi-setting checks of a sweep, as positioned diagnostics (see header). */
#include "spec/ns_sweep_check.h"

#include "common/ns_sys.h"
#include "corpus/ns_corpus.h"

static const ns_sweep_mark no_mark = {0, 0};

#define MARK(marks, field) ((marks) ? (marks)->field : no_mark)
#define ITEM_MARK(marks, field, i) ((marks) && (marks)->field ? (marks)->field[i] : no_mark)

/* The plan's problems, located in the sweep file. */
typedef struct reporter {
    const ns_sweep_config *cfg;
    const ns_sweep_marks *marks;
    ns_sweep_diags *diags;
} reporter;

static int report(void *user, ns_plan_where where, size_t index, const char *text)
{
    reporter *r = user;
    const ns_sweep_marks *mk = r->marks;
    ns_sweep_mark at = no_mark;
    const char *path = "";
    switch (where) {
    case NS_PLAN_AT_L: at = ITEM_MARK(mk, L, index), path = "grid.L"; break;
    case NS_PLAN_AT_ROWS:
        at = MARK(mk, rows).line ? MARK(mk, rows) : MARK(mk, root), path = "rows";
        break;
    case NS_PLAN_AT_L_MAX: at = MARK(mk, L_max), path = "shards.L_max"; break;
    case NS_PLAN_AT_LAYER: at = ITEM_MARK(mk, layers, index), path = "grid.layers"; break;
    case NS_PLAN_AT_HEAD: at = ITEM_MARK(mk, heads, index), path = "grid.heads"; break;
    case NS_PLAN_AT_GRID:
        at = MARK(mk, grid).line ? MARK(mk, grid) : MARK(mk, root), path = "grid";
        break;
    }
    return ns_sweep_diag_add(r->diags, r->cfg->source_path, at, 0, "%s: %s", path, text);
}

int ns_sweep_check_grid(const ns_sweep_config *cfg, const ns_sweep_marks *marks,
                        ns_sweep_diags *diags, ns_err *err)
{
    reporter r = {cfg, marks, diags};
    ns_grid g;
    ns_sweep_config_grid(cfg, &g);
    NS_TRY(ns_plan_check(&g, report, &r, err));
    if (cfg->shard_count && cfg->L_max && cfg->shard_stride) {
        size_t needed;
        ns_err e;
        int rc = NS_OK;
        if (ns_corpus_tokens_needed(cfg->shard_count, cfg->L_max, cfg->shard_first,
                                    cfg->shard_stride, &needed, &e) != NS_OK)
            rc = ns_sweep_diag_add(diags, cfg->source_path, MARK(marks, shards), 0, "shards: %s",
                                   e.msg);
        else if (needed - cfg->L_max > NS_RANGE_INT32_MAX) /* the last shard's first token */
            rc = ns_sweep_diag_add(diags, cfg->source_path, MARK(marks, shards), 0,
                                   "shards: the last shard starts at token %zu, beyond %llu (the "
                                   "output stores shard starts as 32-bit integers)",
                                   needed - cfg->L_max, NS_RANGE_INT32_MAX);
        if (rc == NS_OK && cfg->rows &&
            cfg->shard_count > NS_RANGE_INT32_MAX / cfg->rows) /* the rows of one cell */
            rc = ns_sweep_diag_add(diags, cfg->source_path,
                                   MARK(marks, rows).line ? MARK(marks, rows) : MARK(marks, shards),
                                   0, "rows: %zu shards x %zu rows = %llu rows per cell, beyond "
                                   "%llu (the output stores counts as 32-bit integers)",
                                   cfg->shard_count, cfg->rows,
                                   (unsigned long long)cfg->shard_count * cfg->rows,
                                   NS_RANGE_INT32_MAX);
        if (rc != NS_OK)
            return ns_fail(err, NS_ERR_NOMEM, "out of memory");
    }
    return NS_OK;
}

int ns_sweep_check_model(ns_sweep_config *cfg, const ns_sweep_marks *marks,
                         const ns_model_config *mc, const char *model_desc, ns_sweep_diags *diags,
                         ns_err *err)
{
    reporter r = {cfg, marks, diags};
    NS_TRY(ns_sweep_expand_all(cfg, mc->n_layer, mc->n_head, err));
    ns_grid g;
    ns_sweep_config_grid(cfg, &g);
    NS_TRY(ns_plan_check_model(&g, mc, model_desc, report, &r, err));
    /* memory per process against this machine's: a sweep that cannot fit is refused here, not
     * by the kernel's OOM killer hours into the run (docs/SWEEP.md, "Size limits") */
    return ns_plan_check_memory(&g, mc, cfg->shard_count, cfg->keep_samples,
                                (double)ns_sys_memory_bytes(), report, &r, err);
}

int ns_sweep_check_tokens(const ns_sweep_config *cfg, const ns_sweep_marks *marks, size_t n_tokens,
                          const char *corpus_desc, ns_sweep_diags *diags, ns_err *err)
{
    size_t needed;
    ns_err e;
    if (!cfg->shard_count || !cfg->L_max || !cfg->shard_stride ||
        ns_corpus_tokens_needed(cfg->shard_count, cfg->L_max, cfg->shard_first, cfg->shard_stride,
                                &needed, &e) != NS_OK)
        return NS_OK; /* the shard settings themselves were reported (ns_sweep_check_grid) */
    if (ns_corpus_check_shards(n_tokens, cfg->shard_count, cfg->L_max, cfg->shard_first,
                               cfg->shard_stride, &e) == NS_OK)
        return NS_OK;
    if (ns_sweep_diag_add(diags, cfg->source_path, MARK(marks, shards), 0,
                          "shards: corpus too short: %s (%s)", e.msg, corpus_desc) != NS_OK)
        return ns_fail(err, NS_ERR_NOMEM, "out of memory");
    return NS_OK;
}

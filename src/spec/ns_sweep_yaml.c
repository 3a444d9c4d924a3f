/* ns_sweep_yaml: the sweep YAML parser (libyaml document API) and its FILE:LINE:COL diagnostics. */
#include "spec/ns_sweep_yaml.h"

#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <yaml.h>

#include "analysis/ns_boot.h"
#include "corpus/ns_corpus.h"

/* A range {from, to, step} may expand to at most this many values (guards against typos), a
 * list to at most NS_SWEEP_MAX_ITEMS (aliases can repeat a range many times over), and flow
 * collections nest at most NS_SWEEP_MAX_DEPTH (ns_sweep_yaml.h) deep (libyaml's cost grows with the square of
 * the depth: 200,000 levels take minutes). */
#define NS_SWEEP_MAX_RANGE 100000
#define NS_SWEEP_MAX_ITEMS 1000000

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

/* ---- parser state and node helpers -------------------------------------------------------- */

typedef struct ps {
    const char *src;
    yaml_document_t *doc;
    ns_sweep_config *cfg;
    ns_sweep_marks *mk;
    ns_sweep_diags *diags;
    int nomem;
} ps;

static ns_sweep_mark mark_of(const yaml_node_t *n)
{
    ns_sweep_mark m = {n->start_mark.line + 1, n->start_mark.column + 1};
    return m;
}

static void problem_at(ps *p, ns_sweep_mark m, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static void problem_at(ps *p, ns_sweep_mark m, const char *fmt, ...)
{
    char msg[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    if (ns_sweep_diag_add(p->diags, p->src, m, 0, "%s", msg) != NS_OK)
        p->nomem = 1;
}

#define PROBLEM(p, node, ...) problem_at((p), mark_of(node), __VA_ARGS__)

static yaml_node_t *node_at(ps *p, int index) { return yaml_document_get_node(p->doc, index); }

static const char *sval(const yaml_node_t *n) { return (const char *)n->data.scalar.value; }

static int is_plain(const yaml_node_t *n)
{
    return n->type == YAML_SCALAR_NODE && n->data.scalar.style == YAML_PLAIN_SCALAR_STYLE;
}

static int is_null(const yaml_node_t *n)
{
    if (!is_plain(n))
        return 0;
    const char *s = sval(n);
    return !*s || !strcmp(s, "~") || !strcmp(s, "null") || !strcmp(s, "Null") || !strcmp(s, "NULL");
}

/* A short description of a node for "expected X, got Y" messages. */
static const char *describe(const yaml_node_t *n, char *buf, size_t size)
{
    switch (n->type) {
    case YAML_MAPPING_NODE: return "a mapping";
    case YAML_SEQUENCE_NODE: return "a list";
    case YAML_SCALAR_NODE:
        if (is_null(n))
            return "nothing (null)";
        if (n->data.scalar.length > 40) {
            int cut = 37; /* at a UTF-8 character boundary */
            while (cut > 0 && (n->data.scalar.value[cut] & 0xC0) == 0x80)
                cut--;
            snprintf(buf, size, "%s'%.*s...'", is_plain(n) ? "" : "the quoted string ", cut,
                     sval(n));
        } else
            snprintf(buf, size, "%s'%s'", is_plain(n) ? "" : "the quoted string ", sval(n));
        return buf;
    default: return "nothing";
    }
}

/* Edit distance of two short ASCII names, case-insensitive (for "did you mean" hints). */
static size_t edit_distance(const char *a, const char *b)
{
    size_t la = strlen(a), lb = strlen(b);
    if (la > 63 || lb > 63)
        return 64;
    size_t prev[64], cur[64];
    for (size_t j = 0; j <= lb; j++)
        prev[j] = j;
    for (size_t i = 1; i <= la; i++) {
        cur[0] = i;
        for (size_t j = 1; j <= lb; j++) {
            int same = (a[i - 1] | 0x20) == (b[j - 1] | 0x20);
            size_t best = prev[j - 1] + (same ? 0 : 1);
            if (prev[j] + 1 < best)
                best = prev[j] + 1;
            if (cur[j - 1] + 1 < best)
                best = cur[j - 1] + 1;
            cur[j] = best;
        }
        memcpy(prev, cur, (lb + 1) * sizeof prev[0]);
    }
    return prev[lb];
}

/* Collect the pairs of a mapping whose keys are in names[0..n): vals[i] / keys[i] get the value /
 * key node of names[i] (NULL when absent). Unknown, duplicate and non-name keys are reported. */
static void walk_mapping(ps *p, const yaml_node_t *map, const char *where,
                         const char *const *names, size_t n, yaml_node_t **vals,
                         yaml_node_t **keys)
{
    for (size_t i = 0; i < n; i++)
        vals[i] = keys[i] = NULL;
    for (yaml_node_pair_t *pair = map->data.mapping.pairs.start; pair < map->data.mapping.pairs.top;
         pair++) {
        yaml_node_t *k = node_at(p, pair->key);
        yaml_node_t *v = node_at(p, pair->value);
        char b[64];
        if (!k || !v)
            continue;
        if (k->type != YAML_SCALAR_NODE || is_null(k)) {
            PROBLEM(p, k, "%s%skeys must be names, got %s", where, *where ? ": " : "",
                    describe(k, b, sizeof b));
            continue;
        }
        const char *name = sval(k);
        size_t i = 0;
        while (i < n && strcmp(names[i], name) != 0)
            i++;
        if (i == n) {
            const char *hint = NULL;
            size_t best = 3;
            for (size_t j = 0; j < n; j++) {
                size_t dist = edit_distance(name, names[j]);
                size_t limit = strlen(names[j]) <= 2 ? 1 : 2;
                if (dist <= limit && dist < best) {
                    best = dist;
                    hint = names[j];
                }
            }
            char in_where[80] = "";
            if (*where)
                snprintf(in_where, sizeof in_where, " in %s", where);
            if (hint) {
                PROBLEM(p, k, "unknown key '%s'%s (did you mean '%s'?)", name, in_where, hint);
            } else {
                char list[512] = "";
                size_t off = 0;
                for (size_t j = 0; j < n && off < sizeof list; j++)
                    off += (size_t)snprintf(list + off, sizeof list - off, "%s%s", j ? ", " : "",
                                            names[j]);
                PROBLEM(p, k, "unknown key '%s'%s (expected one of: %s)", name, in_where, list);
            }
            continue;
        }
        if (vals[i]) {
            PROBLEM(p, k, "%s%sduplicate key '%s' (first at line %zu, column %zu)", where,
                    *where ? ": " : "", name, mark_of(keys[i]).line, mark_of(keys[i]).col);
            continue;
        }
        vals[i] = v;
        keys[i] = k;
    }
}

/* ---- scalars ------------------------------------------------------------------------------ */

/* A number of range r (an integer into *u, a real into *d), reported at the node when it is not
 * one: a collection, null, a quoted string, a text that is no number of r. */
static int get_num(ps *p, const yaml_node_t *n, const char *path, const ns_range *r, uint64_t *u,
                   double *d)
{
    char b[64];
    if (!is_plain(n) || is_null(n)) {
        char range[96];
        ns_range_format(r, range, sizeof range);
        PROBLEM(p, n, "%s: expected %s in %s, got %s", path, r->is_real ? "a number" : "an integer",
                range, describe(n, b, sizeof b));
        return -1;
    }
    ns_err e;
    if (ns_range_parse(r, path, sval(n), u, d, &e) != NS_OK) {
        PROBLEM(p, n, "%s", e.msg);
        return -1;
    }
    return 0;
}

static int get_size(ps *p, const yaml_node_t *n, const char *path, const ns_range *r, size_t *out)
{
    uint64_t v;
    if (get_num(p, n, path, r, &v, NULL) != 0)
        return -1;
    *out = (size_t)v;
    return 0;
}

static int get_bool(ps *p, const yaml_node_t *n, const char *path, int *out)
{
    char b[64];
    if (is_plain(n)) {
        const char *s = sval(n);
        if (!strcmp(s, "true") || !strcmp(s, "True") || !strcmp(s, "TRUE")) {
            *out = 1;
            return 0;
        }
        if (!strcmp(s, "false") || !strcmp(s, "False") || !strcmp(s, "FALSE")) {
            *out = 0;
            return 0;
        }
    }
    PROBLEM(p, n, "%s: expected true or false, got %s", path, describe(n, b, sizeof b));
    return -1;
}

/* A non-empty string setting; replaces *dst (freeing the old value). On a problem *dst becomes
 * NULL, so later checks know not to use the setting (nor its default). */
static int get_string(ps *p, const yaml_node_t *n, const char *path, const char *what, char **dst)
{
    char b[64];
    if (n->type != YAML_SCALAR_NODE || is_null(n) || n->data.scalar.length == 0) {
        PROBLEM(p, n, "%s: expected %s, got %s", path, what,
                n->type == YAML_SCALAR_NODE && !is_null(n) ? "an empty string"
                                                            : describe(n, b, sizeof b));
        free(*dst);
        *dst = NULL;
        return -1;
    }
    if (strlen(sval(n)) != n->data.scalar.length) {
        PROBLEM(p, n, "%s: contains a NUL character", path);
        free(*dst);
        *dst = NULL;
        return -1;
    }
    char *s = strdup(sval(n));
    if (!s) {
        p->nomem = 1;
        return -1;
    }
    free(*dst);
    *dst = s;
    return 0;
}

/* ---- lists -------------------------------------------------------------------------------- */

typedef struct item {
    uint64_t i;
    double d;
    ns_sweep_mark mark;
    size_t order;
} item;

typedef struct items {
    item *v;
    size_t n, cap;
    size_t too_many;  /* values refused beyond NS_SWEEP_MAX_ITEMS */
} items;

static int items_push(ps *p, items *it, uint64_t i, double d, ns_sweep_mark mark)
{
    if (it->n >= NS_SWEEP_MAX_ITEMS) {
        if (!it->too_many++)
            problem_at(p, mark, "more than %d values in one list (aliases repeating a range?)",
                       NS_SWEEP_MAX_ITEMS);
        return -1;
    }
    if (it->n == it->cap) {
        size_t cap = it->cap ? 2 * it->cap : 16;
        item *v = realloc(it->v, cap * sizeof *v);
        if (!v) {
            p->nomem = 1;
            return -1;
        }
        it->v = v;
        it->cap = cap;
    }
    item x = {i, d, mark, it->n};
    it->v[it->n++] = x;
    return 0;
}

/* One integer item (a number, or a range mapping {from, to, step}) of an integer list of range r. */
static void int_item(ps *p, const yaml_node_t *n, const char *path, const ns_range *r, items *it)
{
    char b[64];
    if (n->type == YAML_SCALAR_NODE) {
        uint64_t v;
        if (get_num(p, n, path, r, &v, NULL) == 0)
            items_push(p, it, v, 0, mark_of(n));
        return;
    }
    if (n->type != YAML_MAPPING_NODE) {
        PROBLEM(p, n, "%s: expected an integer or a range {from, to, step}, got %s", path,
                describe(n, b, sizeof b));
        return;
    }
    static const char *const names[] = {"from", "to", "step"};
    yaml_node_t *vals[3], *keys[3];
    char where[96];
    snprintf(where, sizeof where, "%s range", path);
    walk_mapping(p, n, where, names, 3, vals, keys);
    uint64_t from = 0, to = 0, step = 1;
    int ok = 1;
    for (size_t k = 0; k < 2; k++)
        if (!vals[k]) {
            PROBLEM(p, n, "%s: range needs '%s'", path, names[k]);
            ok = 0;
        }
    /* a step is at least 1 and at most the range's width */
    const ns_range step_range = NS_RANGE_INT(1, r->umax > r->umin ? r->umax - r->umin : 1, NULL);
    char sub[96];
    snprintf(sub, sizeof sub, "%s.from", path);
    if (vals[0] && get_num(p, vals[0], sub, r, &from, NULL) != 0)
        ok = 0;
    snprintf(sub, sizeof sub, "%s.to", path);
    if (vals[1] && get_num(p, vals[1], sub, r, &to, NULL) != 0)
        ok = 0;
    snprintf(sub, sizeof sub, "%s.step", path);
    if (vals[2] && get_num(p, vals[2], sub, &step_range, &step, NULL) != 0)
        ok = 0;
    if (!ok)
        return;
    if (from > to) {
        PROBLEM(p, n, "%s: empty range: from %llu is greater than to %llu", path,
                (unsigned long long)from, (unsigned long long)to);
        return;
    }
    if ((to - from) / step >= NS_SWEEP_MAX_RANGE) {
        PROBLEM(p, n, "%s: range from %llu to %llu step %llu gives more than %d values", path,
                (unsigned long long)from, (unsigned long long)to, (unsigned long long)step,
                NS_SWEEP_MAX_RANGE);
        return;
    }
    for (uint64_t v = from; v <= to; v += step) {
        if (items_push(p, it, v, 0, mark_of(n)) != 0)
            return;
        if (to - v < step)
            break;
    }
}

/* An integer list: a number, a range, or a list of numbers and ranges. Returns 0 when the value
 * had the right shape (even if some items were rejected), -1 otherwise. */
static int int_list(ps *p, const yaml_node_t *n, const char *path, const ns_range *r, items *it)
{
    if (n->type == YAML_SEQUENCE_NODE) {
        if (n->data.sequence.items.start == n->data.sequence.items.top) {
            PROBLEM(p, n, "%s: empty list", path);
            return -1;
        }
        for (yaml_node_item_t *x = n->data.sequence.items.start; x < n->data.sequence.items.top;
             x++) {
            yaml_node_t *c = node_at(p, *x);
            char b[64];
            if (c->type == YAML_SEQUENCE_NODE)
                PROBLEM(p, c, "%s: expected an integer or a range {from, to, step}, got %s", path,
                        describe(c, b, sizeof b));
            else
                int_item(p, c, path, r, it);
        }
        return 0;
    }
    int_item(p, n, path, r, it);
    return 0;
}

/* A list of numbers of range r (or one number). */
static int double_list(ps *p, const yaml_node_t *n, const char *path, const ns_range *r, items *it)
{
    char b[64];
    if (n->type == YAML_SCALAR_NODE) {
        double v;
        if (get_num(p, n, path, r, NULL, &v) == 0)
            items_push(p, it, 0, v, mark_of(n));
        return 0;
    }
    if (n->type != YAML_SEQUENCE_NODE) {
        PROBLEM(p, n, "%s: expected a number or a list of numbers, got %s", path,
                describe(n, b, sizeof b));
        return -1;
    }
    if (n->data.sequence.items.start == n->data.sequence.items.top) {
        PROBLEM(p, n, "%s: empty list", path);
        return -1;
    }
    for (yaml_node_item_t *x = n->data.sequence.items.start; x < n->data.sequence.items.top; x++) {
        yaml_node_t *c = node_at(p, *x);
        double v;
        if (get_num(p, c, path, r, NULL, &v) == 0)
            items_push(p, it, 0, v, mark_of(c));
    }
    return 0;
}

static int cmp_int_item(const void *a, const void *b)
{
    const item *x = a, *y = b;
    if (x->i != y->i)
        return x->i < y->i ? -1 : 1;
    return x->order < y->order ? -1 : x->order > y->order;
}

static int cmp_double_item(const void *a, const void *b)
{
    const item *x = a, *y = b;
    if (x->d != y->d)
        return x->d < y->d ? -1 : 1;
    return x->order < y->order ? -1 : x->order > y->order;
}

/* Sort, report duplicates (at the later occurrence), and store into fresh arrays. */
static void finish_list(ps *p, items *it, const char *path, int is_int, size_t **ivals,
                        double **dvals, size_t *count, ns_sweep_mark **marks)
{
    if (it->n > 1)
        qsort(it->v, it->n, sizeof *it->v, is_int ? cmp_int_item : cmp_double_item);
    size_t kept = 0;
    for (size_t j = 0; j < it->n; j++) {
        if (kept && (is_int ? it->v[j].i == it->v[kept - 1].i : it->v[j].d == it->v[kept - 1].d)) {
            ns_sweep_mark first = it->v[kept - 1].mark, here = it->v[j].mark;
            /* report at the occurrence written later in the file */
            if (ns_sweep_mark_before(here, first)) {
                ns_sweep_mark t = first;
                first = here;
                here = t;
            }
            if (is_int)
                problem_at(p, here, "%s: duplicate value %llu (first at line %zu, column %zu)",
                           path, (unsigned long long)it->v[j].i, first.line, first.col);
            else
                problem_at(p, here, "%s: duplicate value %g (first at line %zu, column %zu)", path,
                           it->v[j].d, first.line, first.col);
            continue;
        }
        it->v[kept++] = it->v[j];
    }
    *count = 0;
    if (!kept)
        return;
    ns_sweep_mark *m = malloc(kept * sizeof *m);
    void *vals = malloc(kept * (is_int ? sizeof(size_t) : sizeof(double)));
    if (!m || !vals) {
        free(m);
        free(vals);
        p->nomem = 1;
        return;
    }
    for (size_t j = 0; j < kept; j++) {
        m[j] = it->v[j].mark;
        if (is_int)
            ((size_t *)vals)[j] = (size_t)it->v[j].i;
        else
            ((double *)vals)[j] = it->v[j].d;
    }
    if (is_int)
        *ivals = vals;
    else
        *dvals = vals;
    *marks = m;
    *count = kept;
}

/* ---- sections ----------------------------------------------------------------------------- */

static int expect_mapping(ps *p, const yaml_node_t *n, const char *path, const char *keys)
{
    char b[64];
    if (n->type == YAML_MAPPING_NODE)
        return 0;
    PROBLEM(p, n, "%s: expected a mapping with keys %s, got %s", path, keys,
            describe(n, b, sizeof b));
    return -1;
}

static void parse_shards(ps *p, const yaml_node_t *n)
{
    ns_sweep_config *cfg = p->cfg;
    static const char *const names[] = {"count", "L_max", "first", "stride"};
    if (expect_mapping(p, n, "shards", "count, L_max, first, stride") != 0)
        return;
    yaml_node_t *v[4], *k[4];
    walk_mapping(p, n, "shards", names, 4, v, k);
    for (size_t i = 0; i < 2; i++)
        if (!v[i])
            PROBLEM(p, n, "shards: missing required key '%s'", names[i]);
    if (v[0] && get_size(p, v[0], "shards.count", &r_shard_count, &cfg->shard_count) == 0)
        p->mk->shard_count = mark_of(v[0]);
    if (v[1] && get_size(p, v[1], "shards.L_max", &ns_plan_range_L, &cfg->L_max) == 0)
        p->mk->L_max = mark_of(v[1]);
    if (v[2] && get_size(p, v[2], "shards.first", &r_shard_first, &cfg->shard_first) == 0)
        p->mk->shard_first = mark_of(v[2]);
    if (v[3] && get_size(p, v[3], "shards.stride", &r_shard_stride, &cfg->shard_stride) == 0)
        p->mk->shard_stride = mark_of(v[3]);
}

/* bootstrap: {resamples: B} (docs/STATISTICS.md, "The resamples"). */
static void parse_bootstrap(ps *p, const yaml_node_t *n)
{
    static const char *const names[] = {"resamples"};
    if (expect_mapping(p, n, "bootstrap", "resamples") != 0)
        return;
    yaml_node_t *v[1], *k[1];
    walk_mapping(p, n, "bootstrap", names, 1, v, k);
    if (v[0] && get_size(p, v[0], "bootstrap.resamples", &ns_boot_range_resamples,
                         &p->cfg->bootstrap_resamples) == 0)
        p->mk->bootstrap_resamples = mark_of(v[0]);
}

static void parse_layer_list(ps *p, const yaml_node_t *n, const char *path, const ns_range *r,
                             int *all, size_t **vals, size_t *count, ns_sweep_mark **marks)
{
    if (n->type == YAML_SCALAR_NODE && !strcmp(sval(n), "all")) {
        *all = 1;
        return;
    }
    if (n->type == YAML_SCALAR_NODE && is_plain(n)) {
        /* a lone word other than `all` is most likely a misspelling of it */
        char *end;
        strtoll(sval(n), &end, 10);
        if (end == sval(n) || *end) {
            char b[64];
            PROBLEM(p, n, "%s: expected 'all', an index or a list of indices, got %s", path,
                    describe(n, b, sizeof b));
            return;
        }
    }
    items it = {0};
    *all = 0;
    int_list(p, n, path, r, &it);
    finish_list(p, &it, path, 1, vals, NULL, count, marks);
    free(it.v);
}

static void parse_grid(ps *p, const yaml_node_t *n)
{
    ns_sweep_config *cfg = p->cfg;
    ns_sweep_marks *mk = p->mk;
    static const char *const names[] = {"L", "N", "T", "eps", "layers", "heads"};
    if (expect_mapping(p, n, "grid", "L, N, T, eps, layers, heads") != 0)
        return;
    yaml_node_t *v[6], *k[6];
    walk_mapping(p, n, "grid", names, 6, v, k);
    for (size_t i = 0; i < 2; i++)
        if (!v[i])
            PROBLEM(p, n, "grid: missing required key '%s'", names[i]);

    if (v[0]) {
        items it = {0};
        mk->L_key = mark_of(v[0]);
        int_list(p, v[0], "grid.L", &ns_plan_range_L, &it);
        finish_list(p, &it, "grid.L", 1, &cfg->L, NULL, &cfg->nL, &mk->L);
        free(it.v);
    }
    if (v[1]) {
        items it = {0};
        mk->N_key = mark_of(v[1]);
        int_list(p, v[1], "grid.N", &ns_plan_range_N, &it);
        finish_list(p, &it, "grid.N", 1, &cfg->N, NULL, &cfg->nN, &mk->N);
        free(it.v);
    }
    if (v[2]) {
        items it = {0};
        mk->T_key = mark_of(v[2]);
        double_list(p, v[2], "grid.T", &ns_plan_range_scale, &it);
        free(cfg->T);
        cfg->T = NULL;
        finish_list(p, &it, "grid.T", 0, NULL, &cfg->T, &cfg->nT, &mk->T);
        free(it.v);
    }
    if (v[3]) {
        items it = {0};
        mk->eps_key = mark_of(v[3]);
        double_list(p, v[3], "grid.eps", &ns_plan_range_scale, &it);
        free(cfg->eps);
        cfg->eps = NULL;
        finish_list(p, &it, "grid.eps", 0, NULL, &cfg->eps, &cfg->neps, &mk->eps);
        free(it.v);
    }
    if (v[4]) {
        mk->layers_key = mark_of(v[4]);
        parse_layer_list(p, v[4], "grid.layers", &ns_plan_range_layer, &cfg->layers_all,
                         &cfg->layers, &cfg->nlayers, &mk->layers);
    }
    if (v[5]) {
        mk->heads_key = mark_of(v[5]);
        parse_layer_list(p, v[5], "grid.heads", &ns_plan_range_head, &cfg->heads_all,
                         &cfg->heads, &cfg->nheads, &mk->heads);
    }
}

/* A normalizer's parameter node (s, b or alpha: at most one, the one its kind takes) into *out;
 * 0 when it is missing where required, present where not taken, or out of range (reported). */
static int parse_norm_param(ps *p, const yaml_node_t *n, const char *name, ns_normalizer_kind kind,
                            const yaml_node_t *const prm[3], ns_normalizer *out)
{
    static const char *const key[3] = {"s", "b", "alpha"};
    static const char *const path[3] = {"normalizer.s", "normalizer.b", "normalizer.alpha"};
    const ns_range *range[3] = {&ns_plan_range_s, &ns_plan_range_b, &ns_plan_range_alpha};
    int takes = kind == NS_NORM_SSMAX ? 0 : kind == NS_NORM_SIGMOID ? 1 : kind == NS_NORM_ENTMAX ? 2
                                                                                              : -1;
    for (int k = 0; k < 3; k++)
        if (prm[k] && k != takes) {
            PROBLEM(p, prm[k], "%s: %s applies only to %s, not to %s", path[k], key[k],
                    k == 0 ? "ssmax" : k == 1 ? "sigmoid" : "entmax", name);
            return 0;
        }
    *out = ns_normalizer_default(kind);
    if (takes < 0)
        return 1;
    if (!prm[takes]) {
        if (kind == NS_NORM_SIGMOID)
            return 1; /* b = -log L, the row's own (ns_normalizer_sigmoid_bias) */
        PROBLEM(p, n, "normalizer: %s needs its parameter: write {name: %s, %s: VALUE}%s", name,
                name, key[takes], kind == NS_NORM_ENTMAX ? " (alpha > 1; 1.5 is entmax15)" : "");
        return 0;
    }
    double v;
    if (get_num(p, prm[takes], path[takes], range[takes], NULL, &v) != 0)
        return 0;
    out->s = v; /* the union's one parameter: s, b or alpha */
    return 1;
}

/* A normalizer: a name, or a mapping {name, s | b | alpha} (docs/SWEEP.md). */
static void parse_one_normalizer(ps *p, const yaml_node_t *n, ns_normalizer *out,
                                 ns_sweep_mark *where, int *ok)
{
    char b[64];
    const yaml_node_t *name_node = n, *prm[3] = {NULL, NULL, NULL};
    *ok = 0;
    *where = mark_of(n);
    if (n->type == YAML_MAPPING_NODE) {
        static const char *const names[] = {"name", "s", "b", "alpha"};
        yaml_node_t *v[4], *k[4];
        walk_mapping(p, n, "normalizer", names, 4, v, k);
        if (!v[0]) {
            PROBLEM(p, n, "normalizer: missing required key 'name'");
            return;
        }
        name_node = v[0];
        prm[0] = v[1], prm[1] = v[2], prm[2] = v[3];
    } else if (n->type != YAML_SCALAR_NODE) {
        PROBLEM(p, n, "normalizer: expected a name or {name, s | b | alpha}, got %s",
                describe(n, b, sizeof b));
        return;
    }
    if (name_node->type != YAML_SCALAR_NODE || is_null(name_node)) {
        PROBLEM(p, name_node, "normalizer: expected a name, got %s",
                describe(name_node, b, sizeof b));
        return;
    }
    ns_normalizer f;
    ns_err e;
    if (ns_normalizer_parse_any(sval(name_node), &f, &e) != NS_OK) {
        PROBLEM(p, name_node, "normalizer: %s", e.msg);
        return;
    }
    *ok = parse_norm_param(p, n, sval(name_node), f.kind, prm, out);
}

static void parse_normalizers(ps *p, const yaml_node_t *n)
{
    ns_sweep_config *cfg = p->cfg;
    ns_sweep_mark seen[NS_SWEEP_MAX_NORMALIZERS];
    size_t count = 0;
    const yaml_node_t *single[1] = {n};
    const yaml_node_t *const *list = single;
    size_t nitems = 1;
    yaml_node_t **tmp = NULL;
    if (n->type == YAML_SEQUENCE_NODE) {
        nitems = (size_t)(n->data.sequence.items.top - n->data.sequence.items.start);
        if (!nitems) {
            PROBLEM(p, n, "normalizer: empty list");
            return;
        }
        tmp = malloc(nitems * sizeof *tmp);
        if (!tmp) {
            p->nomem = 1;
            return;
        }
        for (size_t i = 0; i < nitems; i++)
            tmp[i] = node_at(p, n->data.sequence.items.start[i]);
        list = (const yaml_node_t *const *)tmp;
    }
    ns_normalizer got[NS_SWEEP_MAX_NORMALIZERS];
    for (size_t i = 0; i < nitems; i++) {
        ns_normalizer f;
        ns_sweep_mark where;
        int ok;
        if (list[i]->type == YAML_SEQUENCE_NODE) {
            char b[64];
            PROBLEM(p, list[i], "normalizer: expected a name or {name, s | b | alpha}, got %s",
                    describe(list[i], b, sizeof b));
            continue;
        }
        parse_one_normalizer(p, list[i], &f, &where, &ok);
        if (!ok)
            continue;
        size_t j = 0;
        while (j < count && !ns_normalizer_same(&got[j], &f))
            j++;
        if (j < count) {
            problem_at(p, where, "normalizer: duplicate normalizer '%s' (first at line %zu, column %zu)",
                       ns_normalizer_name(f.kind), seen[j].line, seen[j].col);
            continue;
        }
        if (count == NS_SWEEP_MAX_NORMALIZERS) {
            problem_at(p, where, "normalizer: at most %d normalizers per sweep",
                       NS_SWEEP_MAX_NORMALIZERS);
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
    "model", "tokenizer", "corpus", "strip_gutenberg", "shards", "grid", "normalizer", "rows",
    "sphere", "seed", "ks_alpha", "probes", "keep_samples", "bootstrap", "output", "checkpoint_dir"};
enum {
    K_MODEL, K_TOKENIZER, K_CORPUS, K_STRIP, K_SHARDS, K_GRID, K_NORMALIZER, K_ROWS, K_SPHERE,
    K_SEED, K_KS_ALPHA, K_PROBES, K_KEEP, K_BOOT, K_OUTPUT, K_CHECKPOINT, K_COUNT
};

static void parse_root(ps *p, const yaml_node_t *root)
{
    ns_sweep_config *cfg = p->cfg;
    ns_sweep_marks *mk = p->mk;
    char b[64];
    mk->root = mark_of(root);
    if (root->type != YAML_MAPPING_NODE) {
        PROBLEM(p, root, "expected a mapping of settings (model, shards, grid, ...), got %s",
                describe(root, b, sizeof b));
        return;
    }
    yaml_node_t *v[K_COUNT], *k[K_COUNT];
    walk_mapping(p, root, "", top_names, K_COUNT, v, k);

    if (v[K_MODEL] && get_string(p, v[K_MODEL], "model", "a model name or directory",
                                 &cfg->model) == 0)
        mk->model = mark_of(v[K_MODEL]);
    if (v[K_TOKENIZER] && get_string(p, v[K_TOKENIZER], "tokenizer",
                                     "a tokenizer name or directory", &cfg->tokenizer) == 0)
        mk->tokenizer = mark_of(v[K_TOKENIZER]);
    if (v[K_CORPUS] && get_string(p, v[K_CORPUS], "corpus", "a corpus name or text file",
                                  &cfg->corpus) == 0)
        mk->corpus = mark_of(v[K_CORPUS]);
    if (v[K_STRIP] && get_bool(p, v[K_STRIP], "strip_gutenberg", &cfg->strip_gutenberg) == 0)
        mk->strip_gutenberg = mark_of(v[K_STRIP]);

    if (v[K_SHARDS]) {
        mk->shards = mark_of(v[K_SHARDS]);
        parse_shards(p, v[K_SHARDS]);
    } else {
        PROBLEM(p, root, "missing required key 'shards'");
    }
    if (v[K_GRID]) {
        mk->grid = mark_of(v[K_GRID]);
        parse_grid(p, v[K_GRID]);
    } else {
        PROBLEM(p, root, "missing required key 'grid'");
    }
    if (v[K_NORMALIZER]) {
        mk->normalizer = mark_of(v[K_NORMALIZER]);
        parse_normalizers(p, v[K_NORMALIZER]);
    }
    if (v[K_ROWS] && get_size(p, v[K_ROWS], "rows", &ns_plan_range_rows, &cfg->rows) == 0)
        mk->rows = mark_of(v[K_ROWS]);
    if (v[K_SPHERE] && get_bool(p, v[K_SPHERE], "sphere", &cfg->sphere) == 0)
        mk->sphere = mark_of(v[K_SPHERE]);
    if (v[K_SEED] && get_num(p, v[K_SEED], "seed", &r_seed, &cfg->seed, NULL) == 0)
        mk->seed = mark_of(v[K_SEED]);
    if (v[K_KS_ALPHA] &&
        get_num(p, v[K_KS_ALPHA], "ks_alpha", &r_ks_alpha, NULL, &cfg->ks_alpha) == 0)
        mk->ks_alpha = mark_of(v[K_KS_ALPHA]);
    size_t probes;
    if (v[K_PROBES] && get_size(p, v[K_PROBES], "probes", &ns_plan_range_probes, &probes) == 0) {
        cfg->probes = (unsigned)probes;
        mk->probes = mark_of(v[K_PROBES]);
    }
    if (v[K_KEEP] && get_bool(p, v[K_KEEP], "keep_samples", &cfg->keep_samples) == 0)
        mk->keep_samples = mark_of(v[K_KEEP]);
    if (v[K_BOOT]) {
        mk->bootstrap = mark_of(v[K_BOOT]);
        parse_bootstrap(p, v[K_BOOT]);
    }
    if (v[K_OUTPUT] && get_string(p, v[K_OUTPUT], "output", "a file path", &cfg->output) == 0)
        mk->output = mark_of(v[K_OUTPUT]);
    if (v[K_CHECKPOINT] && get_string(p, v[K_CHECKPOINT], "checkpoint_dir", "a directory path",
                                      &cfg->checkpoint_dir) == 0)
        mk->checkpoint_dir = mark_of(v[K_CHECKPOINT]);
}

/* 1 when flow collections ([ ], { }) nest deeper than max (*at: where), outside quoted scalars
 * and comments. Block collections cannot nest deep in a file of bounded size (each level costs
 * a line of growing indentation). */
int ns_sweep_text_too_deep(const char *text, size_t len, int max, ns_sweep_mark *at)
{
    int depth = 0;
    char quote = 0;
    ns_sweep_mark m = {1, 1};
    for (size_t i = 0; i < len; i++, m.col++) {
        char c = text[i];
        if (c == '\n') {
            m.line++, m.col = 0;
            if (quote == '#')
                quote = 0;
            continue;
        }
        if (quote) {
            if (c == quote && quote != '#')
                quote = 0;
            else if (c == '\\' && quote == '"' && i + 1 < len)
                i++, m.col++;
            continue;
        }
        if (c == '"' || c == '\'')
            quote = c;
        else if (c == '#' && (i == 0 || text[i - 1] == ' ' || text[i - 1] == '\t' ||
                              text[i - 1] == '\n'))
            quote = '#';
        else if (c == '[' || c == '{') {
            if (++depth > max) {
                *at = m;
                return 1;
            }
        } else if ((c == ']' || c == '}') && depth > 0)
            depth--;
    }
    return 0;
}

/* Line and column of a byte offset (for reader errors, which carry only an offset). */
static ns_sweep_mark mark_of_offset(const char *text, size_t len, size_t offset)
{
    ns_sweep_mark m = {1, 1};
    for (size_t i = 0; i < offset && i < len; i++) {
        if (text[i] == '\n') {
            m.line++;
            m.col = 1;
        } else if (((unsigned char)text[i] & 0xC0) != 0x80) {
            m.col++;
        }
    }
    return m;
}

/* 1 when text is not UTF-8 (the first bad byte reported at its line and column). libyaml's own
 * reader error names the byte after a bad lead byte (a Latin-1 "e acute" at the end of a line
 * was reported as byte 0xa), so the text is checked here first. */
static int not_utf8(ps *p, const char *text, size_t len)
{
    const unsigned char *s = (const unsigned char *)text;
    for (size_t i = 0; i < len;) {
        size_t k = ns_corpus_utf8_len(s + i, len - i);
        if (k == 0) {
            problem_at(p, mark_of_offset(text, len, i),
                       "invalid text: byte 0x%02x is not UTF-8 (save the file as UTF-8; a Latin-1 "
                       "file converts with iconv -f LATIN1 -t UTF-8)", (unsigned)s[i]);
            return 1;
        }
        i += k;
    }
    return 0;
}

static void report_yaml_error(ps *p, const yaml_parser_t *parser, const char *text, size_t len)
{
    if (parser->error == YAML_MEMORY_ERROR) {
        p->nomem = 1;
        return;
    }
    const char *what = parser->problem ? parser->problem : "unknown problem";
    if (parser->error == YAML_READER_ERROR) {
        problem_at(p, mark_of_offset(text, len, parser->problem_offset),
                   "invalid text: %s (byte value 0x%x)", what, (unsigned)parser->problem_value);
        return;
    }
    ns_sweep_mark m = {parser->problem_mark.line + 1, parser->problem_mark.column + 1};
    if (parser->context)
        problem_at(p, m, "YAML syntax error: %s (%s at line %zu, column %zu)", what,
                   parser->context, parser->context_mark.line + 1,
                   parser->context_mark.column + 1);
    else
        problem_at(p, m, "YAML syntax error: %s", what);
}

int ns_sweep_parse(const char *text, size_t len, const char *source_name, ns_sweep_config *cfg,
                   ns_sweep_marks *marks, ns_sweep_diags *diags, ns_err *err)
{
    ns_sweep_marks local_marks;
    memset(&local_marks, 0, sizeof local_marks);
    ns_sweep_marks *mk = marks ? marks : &local_marks;
    memset(mk, 0, sizeof *mk);
    size_t errors_before = diags->nerrors;
    ps p = {source_name, NULL, cfg, mk, diags, 0};
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

    ns_sweep_mark deep;
    if (not_utf8(&p, text, len))
        goto checked;
    if (ns_sweep_text_too_deep(text, len, NS_SWEEP_MAX_DEPTH, &deep)) {
        problem_at(&p, deep, "collections nested more than %d levels deep", NS_SWEEP_MAX_DEPTH);
        goto checked;
    }
    if (!yaml_parser_initialize(&parser)) {
        rc = ns_fail(err, NS_ERR_NOMEM, "%s: cannot initialise the YAML parser", source_name);
        goto done;
    }
    have_parser = 1;
    yaml_parser_set_input_string(&parser, (const unsigned char *)text, len);
    if (!yaml_parser_load(&parser, &doc)) {
        report_yaml_error(&p, &parser, text, len);
        goto checked;
    }
    have_doc = 1;
    p.doc = &doc;
    yaml_node_t *root = yaml_document_get_root_node(&doc);
    if (!root) {
        ns_sweep_mark m = {1, 1};
        problem_at(&p, m, "the sweep file is empty (expected settings such as shards: and grid:; "
                          "see docs/SWEEP.md)");
        goto checked;
    }
    parse_root(&p, root);
    if (cfg->L_max && !mk->shard_stride.line && !cfg->shard_stride)
        cfg->shard_stride = cfg->L_max; /* default: consecutive shards */
    if (!p.nomem && ns_sweep_config_default_paths(cfg, err) != NS_OK)
        p.nomem = 1;

    /* A second document is a mistake (only the first would be used). */
    yaml_document_t doc2;
    if (yaml_parser_load(&parser, &doc2)) {
        yaml_node_t *r2 = yaml_document_get_root_node(&doc2);
        if (r2)
            problem_at(&p, mark_of(r2),
                       "a sweep file holds one YAML document; remove this second one");
        yaml_document_delete(&doc2);
    } else {
        report_yaml_error(&p, &parser, text, len);
    }

checked:
    if (p.nomem) {
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

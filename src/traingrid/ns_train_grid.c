/* ns_train_grid: reading and checking a training grid file (libyaml's document API); the cells'
 * order (normalizer x temperature x seed), seeds and names. */
#include "traingrid/ns_train_grid.h"

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <yaml.h>

#include "norm/ns_normalize.h"
#include "common/ns_file.h"
#include "common/ns_range.h"
#include "corpus/ns_corpus.h"
#include "model/ns_gpt2.h"

/* The `normsweep train` options a grid's `train:` may set (as option names without "--";
 * underscores are accepted for dashes). The grid itself sets --normalizer, --s, --temperature,
 * --out and --resume. */
static const char *const train_keys[] = {
    "preset", "layers", "heads", "embd", "positions", "vocab", "ctx", "init-from", "batch",
    "steps", "warmup", "lr", "lr-min", "weight-decay", "beta1", "beta2", "clip", "seed", "corpus",
    "tokenizer", "val-every", "val-windows", "jac-every", "checkpoint-every", "strip-gutenberg"};
static const char *const grid_set[] = {"normalizer", "s", "temperature", "out", "resume"};

typedef struct gp {
    yaml_document_t *doc;
    const char *name;
    ns_train_grid *g;
    ns_err *err;
    int seed_line;  /* the line of `train: seed:` (0: not given) */
    int seeds_line; /* the line of `seeds:` */
} gp;

static int line_of(const yaml_node_t *n)
{
    return (int)n->start_mark.line + 1;
}

#define BAD(p, node, ...) bad_at((p), (node), __VA_ARGS__)
static int bad_at(gp *p, const yaml_node_t *node, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static int bad_at(gp *p, const yaml_node_t *node, const char *fmt, ...)
{
    char what[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(what, sizeof what, fmt, ap);
    va_end(ap);
    return ns_fail(p->err, NS_ERR_INVALID, "%s:%d: %s (see docs/TRAIN.md, training grids)",
                   p->name, line_of(node), what);
}

static const char *scalar(const yaml_node_t *n)
{
    return n && n->type == YAML_SCALAR_NODE ? (const char *)n->data.scalar.value : NULL;
}

/* A number of range r (the ranges of train's --temperature and --s, model/ns_gpt2.h). */
static int number(gp *p, const yaml_node_t *n, const char *key, const ns_range *r, double *out)
{
    const char *s = scalar(n);
    ns_err e;
    if (!s || n->data.scalar.style != YAML_PLAIN_SCALAR_STYLE) {
        char range[96];
        ns_range_format(r, range, sizeof range);
        return BAD(p, n, "%s: expected a number in %s, got %s%s%s", key, range,
                   s ? "the quoted string '" : "a collection", s ? s : "", s ? "'" : "");
    }
    if (ns_range_parse_real(r, key, s, out, &e) != NS_OK)
        return BAD(p, n, "%s", e.msg);
    return NS_OK;
}

static int push_arg(gp *p, const char *s)
{
    char **a = realloc(p->g->train_args, (p->g->n_train_args + 1) * sizeof *a);
    if (!a)
        return ns_fail(p->err, NS_ERR_NOMEM, "%s: out of memory", p->name);
    p->g->train_args = a;
    if (!(a[p->g->n_train_args] = strdup(s)))
        return ns_fail(p->err, NS_ERR_NOMEM, "%s: out of memory", p->name);
    p->g->n_train_args++;
    return NS_OK;
}

/* One `train:` entry: checked name, then "--name value" (strip-gutenberg: false -> a flag). */
static int train_entry(gp *p, const yaml_node_t *k, const yaml_node_t *v)
{
    char key[64];
    const char *ks = scalar(k), *vs = scalar(v);
    if (!ks || strlen(ks) >= sizeof key)
        return BAD(p, k, "train: expected option names as keys");
    for (size_t i = 0; (key[i] = ks[i] == '_' ? '-' : ks[i]) != 0; i++)
        ;
    for (size_t i = 0; i < sizeof grid_set / sizeof grid_set[0]; i++)
        if (strcmp(key, grid_set[i]) == 0)
            return BAD(p, k, "train: '%s' is set by the grid, not here (normalizers:, "
                       "temperatures:, ssmax_s:, out:, --resume)", ks);
    size_t i = 0;
    while (i < sizeof train_keys / sizeof train_keys[0] && strcmp(key, train_keys[i]) != 0)
        i++;
    if (i == sizeof train_keys / sizeof train_keys[0])
        return BAD(p, k, "train: unknown option '%s' (the options of normsweep train --help, "
                   "without the leading --)", ks);
    if (!vs || !*vs)
        return BAD(p, v, "train: %s: expected one value", ks);
    if (strcmp(key, "seed") == 0)
        p->seed_line = line_of(k);
    if (strcmp(key, "strip-gutenberg") == 0) {
        if (strcmp(vs, "true") && strcmp(vs, "false"))
            return BAD(p, v, "train: strip_gutenberg: expected true or false, got '%s'", vs);
        return strcmp(vs, "false") == 0 ? push_arg(p, "--no-strip-gutenberg") : NS_OK;
    }
    char opt[80];
    snprintf(opt, sizeof opt, "--%s", key);
    NS_TRY(push_arg(p, opt));
    return push_arg(p, vs);
}

static int train_section(gp *p, const yaml_node_t *n)
{
    if (n->type != YAML_MAPPING_NODE)
        return BAD(p, n, "train: expected a mapping of normsweep train options");
    for (yaml_node_pair_t *q = n->data.mapping.pairs.start; q < n->data.mapping.pairs.top; q++) {
        const yaml_node_t *k = yaml_document_get_node(p->doc, q->key);
        for (yaml_node_pair_t *r = n->data.mapping.pairs.start; r < q; r++)
            if (scalar(k) && scalar(yaml_document_get_node(p->doc, r->key)) &&
                strcmp(scalar(k), scalar(yaml_document_get_node(p->doc, r->key))) == 0)
                return BAD(p, k, "train: '%s' given twice", scalar(k));
        NS_TRY(train_entry(p, k, yaml_document_get_node(p->doc, q->value)));
    }
    return NS_OK;
}

static int normalizers(gp *p, const yaml_node_t *n)
{
    if (n->type != YAML_SEQUENCE_NODE || n->data.sequence.items.top == n->data.sequence.items.start)
        return BAD(p, n, "normalizers: expected a non-empty list, e.g. [softmax, sparsemax]");
    size_t cnt = (size_t)(n->data.sequence.items.top - n->data.sequence.items.start);
    if (!(p->g->normalizers = calloc(cnt, sizeof *p->g->normalizers)))
        return ns_fail(p->err, NS_ERR_NOMEM, "%s: out of memory", p->name);
    for (size_t i = 0; i < cnt; i++) {
        const yaml_node_t *e = yaml_document_get_node(p->doc, n->data.sequence.items.start[i]);
        ns_normalizer_kind kind;
        ns_err e2;
        if (!scalar(e) || ns_normalizer_parse(scalar(e), &kind, &e2) != NS_OK)
            return BAD(p, e, "normalizers: %s", scalar(e) ? e2.msg : "expected a name");
        const char *canon = ns_normalizer_name(kind);
        for (size_t j = 0; j < i; j++)
            if (strcmp(p->g->normalizers[j], canon) == 0)
                return BAD(p, e, "normalizers: '%s' listed twice", canon);
        if (!(p->g->normalizers[i] = strdup(canon)))
            return ns_fail(p->err, NS_ERR_NOMEM, "%s: out of memory", p->name);
        p->g->n_normalizers = i + 1;
    }
    return NS_OK;
}

static int temperatures(gp *p, const yaml_node_t *n)
{
    if (n->type != YAML_SEQUENCE_NODE || n->data.sequence.items.top == n->data.sequence.items.start)
        return BAD(p, n, "temperatures: expected a non-empty list, e.g. [0.1, 1]");
    size_t cnt = (size_t)(n->data.sequence.items.top - n->data.sequence.items.start);
    if (!(p->g->temperatures = calloc(cnt, sizeof *p->g->temperatures)))
        return ns_fail(p->err, NS_ERR_NOMEM, "%s: out of memory", p->name);
    for (size_t i = 0; i < cnt; i++) {
        const yaml_node_t *e = yaml_document_get_node(p->doc, n->data.sequence.items.start[i]);
        double T;
        NS_TRY(number(p, e, "temperatures", &ns_gpt2_range_temperature, &T));
        for (size_t j = 0; j < i; j++)
            if (p->g->temperatures[j] == T)
                return BAD(p, e, "temperatures: %g listed twice", T);
        p->g->temperatures[i] = T;
        p->g->n_temperatures = i + 1;
    }
    return NS_OK;
}

static const ns_range seed_range = NS_RANGE_INT(0, UINT64_MAX, NULL); /* train's --seed */

static int seeds(gp *p, const yaml_node_t *n)
{
    p->seeds_line = line_of(n);
    if (n->type != YAML_SEQUENCE_NODE || n->data.sequence.items.top == n->data.sequence.items.start)
        return BAD(p, n, "seeds: expected a non-empty list, e.g. [0, 1, 2]");
    size_t cnt = (size_t)(n->data.sequence.items.top - n->data.sequence.items.start);
    if (!(p->g->seeds = calloc(cnt, sizeof *p->g->seeds)))
        return ns_fail(p->err, NS_ERR_NOMEM, "%s: out of memory", p->name);
    for (size_t i = 0; i < cnt; i++) {
        const yaml_node_t *e = yaml_document_get_node(p->doc, n->data.sequence.items.start[i]);
        const char *s = scalar(e);
        uint64_t seed;
        ns_err e2;
        if (!s || e->data.scalar.style != YAML_PLAIN_SCALAR_STYLE) {
            char range[96];
            ns_range_format(&seed_range, range, sizeof range);
            return BAD(p, e, "seeds: expected an integer in %s, got %s%s%s", range,
                       s ? "the quoted string '" : "a collection", s ? s : "", s ? "'" : "");
        }
        if (ns_range_parse_u64(&seed_range, "seeds", s, &seed, &e2) != NS_OK)
            return BAD(p, e, "%s", e2.msg);
        for (size_t j = 0; j < i; j++)
            if (p->g->seeds[j] == seed)
                return BAD(p, e, "seeds: %" PRIu64 " listed twice", seed);
        p->g->seeds[i] = seed;
        p->g->n_seeds = i + 1;
    }
    return NS_OK;
}

static int text_value(gp *p, const yaml_node_t *v, const char *key, char **out)
{
    const char *s = scalar(v);
    if (!s || !*s)
        return BAD(p, v, "%s: expected a path", key);
    if (!(*out = strdup(s)))
        return ns_fail(p->err, NS_ERR_NOMEM, "%s: out of memory", p->name);
    return NS_OK;
}

static int root_entry(gp *p, const yaml_node_t *k, const yaml_node_t *v, unsigned *seen)
{
    static const char *const keys[] = {"train", "normalizers", "temperatures", "ssmax_s", "sweep",
                                       "out", "seeds"};
    const char *ks = scalar(k);
    size_t i = 0;
    while (ks && i < sizeof keys / sizeof keys[0] && strcmp(ks, keys[i]) != 0)
        i++;
    if (!ks || i == sizeof keys / sizeof keys[0])
        return BAD(p, k, "unknown key '%s' (expected train, normalizers, temperatures, seeds, "
                   "ssmax_s, sweep, out)", ks ? ks : "?");
    if (*seen & (1u << i))
        return BAD(p, k, "'%s' given twice", ks);
    *seen |= 1u << i;
    switch (i) {
    case 0: return train_section(p, v);
    case 1: return normalizers(p, v);
    case 2: return temperatures(p, v);
    case 3:
        NS_TRY(number(p, v, "ssmax_s", &ns_gpt2_range_ssmax_s, &p->g->ssmax_s));
        p->g->have_ssmax_s = 1;
        return NS_OK;
    case 4: return text_value(p, v, "sweep", &p->g->sweep);
    case 5: return text_value(p, v, "out", &p->g->out);
    default: return seeds(p, v);
    }
}

/* runs/<the file's name without directory and extension>. */
static char *default_out(const char *name)
{
    const char *base = strrchr(name, '/');
    base = base ? base + 1 : name;
    size_t n = strcspn(base, ".");
    return ns_str_printf("runs/%.*s", (int)(n ? n : strlen(base)), n ? base : "training");
}

static int check_root(gp *p, const yaml_node_t *root)
{
    if (!root || root->type != YAML_MAPPING_NODE)
        return ns_fail(p->err, NS_ERR_INVALID, "%s: expected a mapping with train:, normalizers:, "
                       "temperatures: (see docs/TRAIN.md, training grids)", p->name);
    unsigned seen = 0;
    for (yaml_node_pair_t *q = root->data.mapping.pairs.start; q < root->data.mapping.pairs.top;
         q++)
        NS_TRY(root_entry(p, yaml_document_get_node(p->doc, q->key),
                          yaml_document_get_node(p->doc, q->value), &seen));
    if (!(seen & 1u) || !(seen & 2u) || !(seen & 4u))
        return ns_fail(p->err, NS_ERR_INVALID, "%s: train:, normalizers: and temperatures: are "
                       "required (see docs/TRAIN.md, training grids)", p->name);
    int has_ssmax = 0;
    for (size_t i = 0; i < p->g->n_normalizers; i++)
        has_ssmax |= strcmp(p->g->normalizers[i], "ssmax") == 0;
    if (has_ssmax != p->g->have_ssmax_s)
        return ns_fail(p->err, NS_ERR_INVALID, "%s: %s", p->name,
                       has_ssmax ? "normalizers: ssmax needs ssmax_s: S (its s)"
                                 : "ssmax_s: applies only when ssmax is in normalizers:");
    if (p->g->n_seeds && p->seed_line)
        return ns_fail(p->err, NS_ERR_INVALID, "%s:%d: train: seed: and seeds: (line %d) both "
                       "set the seed: give seeds: [S, ...] for one cell per seed, or train: "
                       "seed: S for one seed in every cell, not both (see docs/TRAIN.md, "
                       "training grids)", p->name, p->seed_line, p->seeds_line);
    /* (each count is at most the file's size, so the product cannot overflow) */
    size_t cells = p->g->n_normalizers * p->g->n_temperatures *
                   (p->g->n_seeds ? p->g->n_seeds : 1);
    if (cells > NS_TRAIN_GRID_MAX_CELLS)
        return ns_fail(p->err, NS_ERR_INVALID, "%s: %zu cells; at most %d", p->name, cells,
                       NS_TRAIN_GRID_MAX_CELLS);
    if (!p->g->out && !(p->g->out = default_out(p->name)))
        return ns_fail(p->err, NS_ERR_NOMEM, "%s: out of memory", p->name);
    /* Two temperatures with one name (they differ beyond 17 digits) cannot happen: the name is
     * the shortest decimal that reads back as the value. */
    return NS_OK;
}

int ns_train_grid_parse(const char *text, size_t len, const char *name, ns_train_grid *g,
                        ns_err *err)
{
    memset(g, 0, sizeof *g);
    if (!(g->path = strdup(name)) || !(g->text = malloc(len + 1)))
        return ns_fail(err, NS_ERR_NOMEM, "%s: out of memory", name);
    memcpy(g->text, text, len);
    g->text[len] = 0;
    g->len = len;
    if (memchr(text, 0, len))
        return ns_fail(err, NS_ERR_FORMAT, "%s: not a text file (holds a NUL byte)", name);
    size_t line = 1, col = 1;
    for (size_t i = 0, k; i < len; i += k, col++) { /* (libyaml names the byte after a bad one) */
        if (!(k = ns_corpus_utf8_len((const unsigned char *)text + i, len - i)))
            return ns_fail(err, NS_ERR_FORMAT, "%s:%zu:%zu: invalid text: byte 0x%02x is not UTF-8 "
                           "(save the file as UTF-8)", name, line, col,
                           (unsigned)(unsigned char)text[i]);
        if (text[i] == '\n')
            line++, col = 0;
    }
    yaml_parser_t parser;
    yaml_document_t doc;
    if (!yaml_parser_initialize(&parser))
        return ns_fail(err, NS_ERR_NOMEM, "%s: cannot initialise the YAML parser", name);
    yaml_parser_set_input_string(&parser, (const unsigned char *)text, len);
    if (!yaml_parser_load(&parser, &doc)) {
        int rc = ns_fail(err, NS_ERR_FORMAT, "%s:%zu: YAML: %s", name,
                         parser.problem_mark.line + 1,
                         parser.problem ? parser.problem : "syntax error");
        yaml_parser_delete(&parser);
        return rc;
    }
    gp p = {&doc, name, g, err, 0, 0};
    int rc = check_root(&p, yaml_document_get_root_node(&doc));
    yaml_document_delete(&doc);
    yaml_parser_delete(&parser);
    return rc;
}

int ns_train_grid_load(const char *path, ns_train_grid *g, ns_err *err)
{
    char *text = NULL;
    size_t len = 0;
    memset(g, 0, sizeof *g);
    NS_TRY(ns_file_read_all(path, NS_TRAIN_GRID_MAX_FILE, &text, &len, err));
    int rc = ns_train_grid_parse(text, len, path, g, err);
    free(text);
    return rc;
}

void ns_train_grid_free(ns_train_grid *g)
{
    if (!g)
        return;
    for (size_t i = 0; i < g->n_train_args; i++)
        free(g->train_args[i]);
    for (size_t i = 0; i < g->n_normalizers; i++)
        free(g->normalizers[i]);
    free(g->train_args);
    free(g->normalizers);
    free(g->temperatures);
    free(g->seeds);
    free(g->sweep);
    free(g->out);
    free(g->path);
    free(g->text);
    memset(g, 0, sizeof *g);
}

/* Cells per (normalizer, temperature): the seeds, or the one seed of train:. */
static size_t per_T(const ns_train_grid *g)
{
    return g->n_seeds ? g->n_seeds : 1;
}

size_t ns_train_grid_cells(const ns_train_grid *g)
{
    return g->n_normalizers * g->n_temperatures * per_T(g);
}

void ns_train_grid_cell(const ns_train_grid *g, size_t i, const char **normalizer, double *T)
{
    size_t j = i / per_T(g);
    *normalizer = g->normalizers[j / g->n_temperatures];
    *T = g->temperatures[j % g->n_temperatures];
}

int ns_train_grid_cell_seed(const ns_train_grid *g, size_t i, uint64_t *seed)
{
    if (!g->n_seeds)
        return 0;
    *seed = g->seeds[i % g->n_seeds];
    return 1;
}

char *ns_train_grid_cell_name(const ns_train_grid *g, size_t i)
{
    const char *norm;
    double T;
    ns_train_grid_cell(g, i, &norm, &T);
    char num[40];
    for (int digits = 1; digits <= 17; digits++) {
        snprintf(num, sizeof num, "%.*g", digits, T);
        if (strtod(num, NULL) == T)
            break;
    }
    uint64_t seed;
    if (ns_train_grid_cell_seed(g, i, &seed))
        return ns_str_printf("%s-T%s-s%" PRIu64, norm, num, seed);
    return ns_str_printf("%s-T%s", norm, num);
}

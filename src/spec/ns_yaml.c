/* ns_yaml: generic YAML typing on libyaml's document API -- nodes, typed values, mappings of
 * known keys, the list rules, the text checks and libyaml's errors, each problem at its line and
 * column. */
#include "spec/ns_yaml.h"

#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "corpus/ns_corpus.h"
#include "spec/ns_list.h"

/* ---- nodes and problems ------------------------------------------------------------------- */

ns_sweep_mark ns_yaml_mark(const yaml_node_t *n)
{
    ns_sweep_mark m = {n->start_mark.line + 1, n->start_mark.column + 1};
    return m;
}

void ns_yaml_problem(ns_yaml *y, ns_sweep_mark m, const char *fmt, ...)
{
    char msg[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    if (ns_sweep_diag_add(y->diags, y->src, m, 0, "%s", msg) != NS_OK)
        y->nomem = 1;
}

yaml_node_t *ns_yaml_node(const ns_yaml *y, int index)
{
    return yaml_document_get_node(y->doc, index);
}

const char *ns_yaml_text(const yaml_node_t *n) { return (const char *)n->data.scalar.value; }

int ns_yaml_is_plain(const yaml_node_t *n)
{
    return n->type == YAML_SCALAR_NODE && n->data.scalar.style == YAML_PLAIN_SCALAR_STYLE;
}

int ns_yaml_is_null(const yaml_node_t *n)
{
    if (!ns_yaml_is_plain(n))
        return 0;
    const char *s = ns_yaml_text(n);
    return !*s || !strcmp(s, "~") || !strcmp(s, "null") || !strcmp(s, "Null") || !strcmp(s, "NULL");
}

const char *ns_yaml_describe(const yaml_node_t *n, char *buf, size_t size)
{
    switch (n->type) {
    case YAML_MAPPING_NODE: return "a mapping";
    case YAML_SEQUENCE_NODE: return "a list";
    case YAML_SCALAR_NODE:
        if (ns_yaml_is_null(n))
            return "nothing (null)";
        if (n->data.scalar.length > 40) {
            int cut = 37; /* at a UTF-8 character boundary */
            while (cut > 0 && (n->data.scalar.value[cut] & 0xC0) == 0x80)
                cut--;
            snprintf(buf, size, "%s'%.*s...'", ns_yaml_is_plain(n) ? "" : "the quoted string ",
                     cut, ns_yaml_text(n));
        } else
            snprintf(buf, size, "%s'%s'", ns_yaml_is_plain(n) ? "" : "the quoted string ",
                     ns_yaml_text(n));
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

void ns_yaml_walk_mapping(ns_yaml *y, const yaml_node_t *map, const char *where,
                          const char *const *names, size_t n, yaml_node_t **vals,
                          yaml_node_t **keys)
{
    for (size_t i = 0; i < n; i++)
        vals[i] = keys[i] = NULL;
    for (yaml_node_pair_t *pair = map->data.mapping.pairs.start; pair < map->data.mapping.pairs.top;
         pair++) {
        yaml_node_t *k = ns_yaml_node(y, pair->key);
        yaml_node_t *v = ns_yaml_node(y, pair->value);
        char b[64];
        if (!k || !v)
            continue;
        if (k->type != YAML_SCALAR_NODE || ns_yaml_is_null(k)) {
            NS_YAML_PROBLEM(y, k, "%s%skeys must be names, got %s", where, *where ? ": " : "",
                            ns_yaml_describe(k, b, sizeof b));
            continue;
        }
        const char *name = ns_yaml_text(k);
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
                NS_YAML_PROBLEM(y, k, "unknown key '%s'%s (did you mean '%s'?)", name, in_where,
                                hint);
            } else {
                char list[512] = "";
                size_t off = 0;
                for (size_t j = 0; j < n && off < sizeof list; j++)
                    off += (size_t)snprintf(list + off, sizeof list - off, "%s%s", j ? ", " : "",
                                            names[j]);
                NS_YAML_PROBLEM(y, k, "unknown key '%s'%s (expected one of: %s)", name, in_where,
                                list);
            }
            continue;
        }
        if (vals[i]) {
            NS_YAML_PROBLEM(y, k, "%s%sduplicate key '%s' (first at line %zu, column %zu)", where,
                            *where ? ": " : "", name, ns_yaml_mark(keys[i]).line,
                            ns_yaml_mark(keys[i]).col);
            continue;
        }
        vals[i] = v;
        keys[i] = k;
    }
}

/* ---- scalars ------------------------------------------------------------------------------ */

int ns_yaml_num(ns_yaml *y, const yaml_node_t *n, const char *path, const ns_range *r,
                uint64_t *u, double *d)
{
    char b[64];
    if (!ns_yaml_is_plain(n) || ns_yaml_is_null(n)) {
        char range[96];
        ns_range_format(r, range, sizeof range);
        NS_YAML_PROBLEM(y, n, "%s: expected %s in %s, got %s", path,
                        r->is_real ? "a number" : "an integer", range,
                        ns_yaml_describe(n, b, sizeof b));
        return -1;
    }
    ns_err e;
    if (ns_range_parse(r, path, ns_yaml_text(n), u, d, &e) != NS_OK) {
        NS_YAML_PROBLEM(y, n, "%s", e.msg);
        return -1;
    }
    return 0;
}

int ns_yaml_size(ns_yaml *y, const yaml_node_t *n, const char *path, const ns_range *r,
                 size_t *out)
{
    uint64_t v;
    if (ns_yaml_num(y, n, path, r, &v, NULL) != 0)
        return -1;
    *out = (size_t)v;
    return 0;
}

int ns_yaml_bool(ns_yaml *y, const yaml_node_t *n, const char *path, int *out)
{
    char b[64];
    if (ns_yaml_is_plain(n)) {
        const char *s = ns_yaml_text(n);
        if (!strcmp(s, "true") || !strcmp(s, "True") || !strcmp(s, "TRUE")) {
            *out = 1;
            return 0;
        }
        if (!strcmp(s, "false") || !strcmp(s, "False") || !strcmp(s, "FALSE")) {
            *out = 0;
            return 0;
        }
    }
    NS_YAML_PROBLEM(y, n, "%s: expected true or false, got %s", path,
                    ns_yaml_describe(n, b, sizeof b));
    return -1;
}

int ns_yaml_string(ns_yaml *y, const yaml_node_t *n, const char *path, const char *what,
                   char **dst)
{
    char b[64];
    if (n->type != YAML_SCALAR_NODE || ns_yaml_is_null(n) || n->data.scalar.length == 0) {
        NS_YAML_PROBLEM(y, n, "%s: expected %s, got %s", path, what,
                        n->type == YAML_SCALAR_NODE && !ns_yaml_is_null(n)
                            ? "an empty string"
                            : ns_yaml_describe(n, b, sizeof b));
        free(*dst);
        *dst = NULL;
        return -1;
    }
    if (strlen(ns_yaml_text(n)) != n->data.scalar.length) {
        NS_YAML_PROBLEM(y, n, "%s: contains a NUL character", path);
        free(*dst);
        *dst = NULL;
        return -1;
    }
    char *s = strdup(ns_yaml_text(n));
    if (!s) {
        y->nomem = 1;
        return -1;
    }
    free(*dst);
    *dst = s;
    return 0;
}

/* ---- lists -------------------------------------------------------------------------------- */

/* The values of one list as read (ns_list_item.order indexes marks: where each was written). */
typedef struct items {
    ns_list_item *v;
    ns_sweep_mark *marks;
    size_t n, cap;
    size_t too_many;  /* values refused beyond NS_YAML_MAX_ITEMS */
} items;

static int items_push(ns_yaml *y, items *it, uint64_t i, double d, ns_sweep_mark mark)
{
    if (it->n >= NS_YAML_MAX_ITEMS) {
        if (!it->too_many++)
            ns_yaml_problem(y, mark, "more than %d values in one list (aliases repeating a "
                            "range?)", NS_YAML_MAX_ITEMS);
        return -1;
    }
    if (it->n == it->cap) {
        size_t cap = it->cap ? 2 * it->cap : 16;
        ns_list_item *v = realloc(it->v, cap * sizeof *v);
        if (v)
            it->v = v;
        ns_sweep_mark *m = v ? realloc(it->marks, cap * sizeof *m) : NULL;
        if (!m) {
            y->nomem = 1;
            return -1;
        }
        it->marks = m;
        it->cap = cap;
    }
    it->marks[it->n] = mark;
    it->v[it->n] = (ns_list_item){i, d, it->n};
    it->n++;
    return 0;
}

/* One integer item (a number, or a range mapping {from, to, step}) of an integer list of range r. */
static void int_item(ns_yaml *y, const yaml_node_t *n, const char *path, const ns_range *r,
                     items *it)
{
    char b[64];
    if (n->type == YAML_SCALAR_NODE) {
        uint64_t v;
        if (ns_yaml_num(y, n, path, r, &v, NULL) == 0)
            items_push(y, it, v, 0, ns_yaml_mark(n));
        return;
    }
    if (n->type != YAML_MAPPING_NODE) {
        NS_YAML_PROBLEM(y, n, "%s: expected an integer or a range {from, to, step}, got %s",
                        path, ns_yaml_describe(n, b, sizeof b));
        return;
    }
    static const char *const names[] = {"from", "to", "step"};
    yaml_node_t *vals[3], *keys[3];
    char where[96];
    snprintf(where, sizeof where, "%s range", path);
    ns_yaml_walk_mapping(y, n, where, names, 3, vals, keys);
    uint64_t from = 0, to = 0, step = 1;
    int ok = 1;
    for (size_t k = 0; k < 2; k++)
        if (!vals[k]) {
            NS_YAML_PROBLEM(y, n, "%s: range needs '%s'", path, names[k]);
            ok = 0;
        }
    /* a step is at least 1 and at most the range's width */
    const ns_range step_range = NS_RANGE_INT(1, r->umax > r->umin ? r->umax - r->umin : 1, NULL);
    char sub[96];
    snprintf(sub, sizeof sub, "%s.from", path);
    if (vals[0] && ns_yaml_num(y, vals[0], sub, r, &from, NULL) != 0)
        ok = 0;
    snprintf(sub, sizeof sub, "%s.to", path);
    if (vals[1] && ns_yaml_num(y, vals[1], sub, r, &to, NULL) != 0)
        ok = 0;
    snprintf(sub, sizeof sub, "%s.step", path);
    if (vals[2] && ns_yaml_num(y, vals[2], sub, &step_range, &step, NULL) != 0)
        ok = 0;
    if (!ok)
        return;
    if (from > to) {
        NS_YAML_PROBLEM(y, n, "%s: empty range: from %llu is greater than to %llu", path,
                        (unsigned long long)from, (unsigned long long)to);
        return;
    }
    if ((to - from) / step >= NS_YAML_MAX_RANGE) {
        NS_YAML_PROBLEM(y, n, "%s: range from %llu to %llu step %llu gives more than %d values",
                        path, (unsigned long long)from, (unsigned long long)to,
                        (unsigned long long)step, NS_YAML_MAX_RANGE);
        return;
    }
    for (uint64_t v = from; v <= to; v += step) {
        if (items_push(y, it, v, 0, ns_yaml_mark(n)) != 0)
            return;
        if (to - v < step)
            break;
    }
}

/* An integer list: a number, a range, or a list of numbers and ranges. Returns 0 when the value
 * had the right shape (even if some items were rejected), -1 otherwise. */
static int int_list(ns_yaml *y, const yaml_node_t *n, const char *path, const ns_range *r,
                    items *it)
{
    if (n->type == YAML_SEQUENCE_NODE) {
        if (n->data.sequence.items.start == n->data.sequence.items.top) {
            NS_YAML_PROBLEM(y, n, "%s: empty list", path);
            return -1;
        }
        for (yaml_node_item_t *x = n->data.sequence.items.start; x < n->data.sequence.items.top;
             x++) {
            yaml_node_t *c = ns_yaml_node(y, *x);
            char b[64];
            if (c->type == YAML_SEQUENCE_NODE)
                NS_YAML_PROBLEM(y, c, "%s: expected an integer or a range {from, to, step}, "
                                "got %s", path, ns_yaml_describe(c, b, sizeof b));
            else
                int_item(y, c, path, r, it);
        }
        return 0;
    }
    int_item(y, n, path, r, it);
    return 0;
}

/* A list of numbers of range r (or one number). */
static int double_list(ns_yaml *y, const yaml_node_t *n, const char *path, const ns_range *r,
                       items *it)
{
    char b[64];
    if (n->type == YAML_SCALAR_NODE) {
        double v;
        if (ns_yaml_num(y, n, path, r, NULL, &v) == 0)
            items_push(y, it, 0, v, ns_yaml_mark(n));
        return 0;
    }
    if (n->type != YAML_SEQUENCE_NODE) {
        NS_YAML_PROBLEM(y, n, "%s: expected a number or a list of numbers, got %s", path,
                        ns_yaml_describe(n, b, sizeof b));
        return -1;
    }
    if (n->data.sequence.items.start == n->data.sequence.items.top) {
        NS_YAML_PROBLEM(y, n, "%s: empty list", path);
        return -1;
    }
    for (yaml_node_item_t *x = n->data.sequence.items.start; x < n->data.sequence.items.top; x++) {
        yaml_node_t *c = ns_yaml_node(y, *x);
        double v;
        if (ns_yaml_num(y, c, path, r, NULL, &v) == 0)
            items_push(y, it, 0, v, ns_yaml_mark(c));
    }
    return 0;
}

/* A repeated value, reported at the occurrence written later in the file. */
typedef struct list_repeat {
    ns_yaml *y;
    const items *it;
    const char *path;
    int is_int;
} list_repeat;

static void report_repeat(void *user, const ns_list_item *kept, const ns_list_item *again)
{
    const list_repeat *r = user;
    ns_sweep_mark first = r->it->marks[kept->order], here = r->it->marks[again->order];
    if (ns_sweep_mark_before(here, first)) {
        ns_sweep_mark t = first;
        first = here;
        here = t;
    }
    if (r->is_int)
        ns_yaml_problem(r->y, here, "%s: duplicate value %llu (first at line %zu, column %zu)",
                        r->path, (unsigned long long)again->i, first.line, first.col);
    else
        ns_yaml_problem(r->y, here, "%s: duplicate value %g (first at line %zu, column %zu)",
                        r->path, again->d, first.line, first.col);
}

/* Sort, report duplicates (ns_list, the core dump's option lists share), and store into fresh
 * arrays. */
static void finish_list(ns_yaml *y, items *it, const char *path, int is_int, size_t **ivals,
                        double **dvals, size_t *count, ns_sweep_mark **marks)
{
    list_repeat rep = {y, it, path, is_int};
    size_t kept = ns_list_sort_unique(it->v, it->n, !is_int, report_repeat, &rep);
    *count = 0;
    if (!kept)
        return;
    ns_sweep_mark *m = malloc(kept * sizeof *m);
    void *vals = malloc(kept * (is_int ? sizeof(size_t) : sizeof(double)));
    if (!m || !vals) {
        free(m);
        free(vals);
        y->nomem = 1;
        return;
    }
    for (size_t j = 0; j < kept; j++) {
        m[j] = it->marks[it->v[j].order];
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

void ns_yaml_int_list(ns_yaml *y, const yaml_node_t *n, const char *path, const ns_range *r,
                      size_t **vals, size_t *count, ns_sweep_mark **marks)
{
    items it = {0};
    int_list(y, n, path, r, &it);
    finish_list(y, &it, path, 1, vals, NULL, count, marks);
    free(it.v);
    free(it.marks);
}

void ns_yaml_real_list(ns_yaml *y, const yaml_node_t *n, const char *path, const ns_range *r,
                       double **vals, size_t *count, ns_sweep_mark **marks)
{
    items it = {0};
    double_list(y, n, path, r, &it);
    finish_list(y, &it, path, 0, NULL, vals, count, marks);
    free(it.v);
    free(it.marks);
}

int ns_yaml_expect_mapping(ns_yaml *y, const yaml_node_t *n, const char *path, const char *keys)
{
    char b[64];
    if (n->type == YAML_MAPPING_NODE)
        return 0;
    NS_YAML_PROBLEM(y, n, "%s: expected a mapping with keys %s, got %s", path, keys,
                    ns_yaml_describe(n, b, sizeof b));
    return -1;
}

/* ---- reading a text ----------------------------------------------------------------------- */

/* Block collections cannot nest deep in a file of bounded size (each level costs a line of
 * growing indentation): only flow collections are counted. */
int ns_yaml_too_deep(const char *text, size_t len, int max, ns_sweep_mark *at)
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
static int not_utf8(ns_yaml *y, const char *text, size_t len)
{
    const unsigned char *s = (const unsigned char *)text;
    for (size_t i = 0; i < len;) {
        size_t k = ns_corpus_utf8_len(s + i, len - i);
        if (k == 0) {
            ns_yaml_problem(y, mark_of_offset(text, len, i),
                            "invalid text: byte 0x%02x is not UTF-8 (save the file as UTF-8; a "
                            "Latin-1 file converts with iconv -f LATIN1 -t UTF-8)",
                            (unsigned)s[i]);
            return 1;
        }
        i += k;
    }
    return 0;
}

void ns_yaml_report_error(ns_yaml *y, const yaml_parser_t *parser, const char *text,
                          size_t len)
{
    if (parser->error == YAML_MEMORY_ERROR) {
        y->nomem = 1;
        return;
    }
    const char *what = parser->problem ? parser->problem : "unknown problem";
    if (parser->error == YAML_READER_ERROR) {
        ns_yaml_problem(y, mark_of_offset(text, len, parser->problem_offset),
                        "invalid text: %s (byte value 0x%x)", what,
                        (unsigned)parser->problem_value);
        return;
    }
    ns_sweep_mark m = {parser->problem_mark.line + 1, parser->problem_mark.column + 1};
    if (parser->context)
        ns_yaml_problem(y, m, "YAML syntax error: %s (%s at line %zu, column %zu)", what,
                        parser->context, parser->context_mark.line + 1,
                        parser->context_mark.column + 1);
    else
        ns_yaml_problem(y, m, "YAML syntax error: %s", what);
}

int ns_yaml_check_text(ns_yaml *y, const char *text, size_t len)
{
    ns_sweep_mark deep;
    if (not_utf8(y, text, len))
        return 1;
    if (ns_yaml_too_deep(text, len, NS_YAML_MAX_DEPTH, &deep)) {
        ns_yaml_problem(y, deep, "collections nested more than %d levels deep",
                        NS_YAML_MAX_DEPTH);
        return 1;
    }
    return 0;
}

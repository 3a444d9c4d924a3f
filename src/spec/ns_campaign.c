/* ns_campaign: a campaign file read into one single-model sweep text per model (the campaign's own
 * keys on libyaml's document API and spec/ns_yaml; the sweep parser checks everything else in
 * each text). */
#include "spec/ns_campaign.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <yaml.h>

#include "common/ns_file.h"
#include "spec/ns_yaml.h"

typedef struct cut {
    size_t from, to; /* bytes [from, to) of the campaign text, newlines kept */
} cut;

typedef struct cs {
    ns_campaign *c;
    const char *src;
    yaml_document_t *doc;
    ns_sweep_diags *diags;
    int nomem;
    size_t nerr;
    cut cuts[3];
    size_t ncuts;
    char *tokenizer;  /* the campaign's `tokenizer:` (NULL: `model`) */
    char **ids_given; /* per model: the entry's `id:` (NULL: derived) */
} cs;

static void problem(cs *s, ns_sweep_mark m, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static void problem(cs *s, ns_sweep_mark m, const char *fmt, ...)
{
    char buf[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    if (ns_sweep_diag_add(s->diags, s->src, m, 0, "%s", buf) != NS_OK)
        s->nomem = 1;
    s->nerr++;
}

/* A string value: a non-empty scalar that is not null and holds no control character. */
static int get_string(cs *s, const yaml_node_t *n, const char *what, char **dst)
{
    if (n->type != YAML_SCALAR_NODE) {
        problem(s, ns_yaml_mark(n), "%s: expected a string, got a %s", what,
                n->type == YAML_SEQUENCE_NODE ? "list" : "mapping");
        return -1;
    }
    const char *v = ns_yaml_text(n);
    int plain = n->data.scalar.style == YAML_PLAIN_SCALAR_STYLE;
    if (!*v || (plain && (!strcmp(v, "~") || !strcasecmp(v, "null")))) {
        problem(s, ns_yaml_mark(n), "%s: expected a non-empty string", what);
        return -1;
    }
    for (const unsigned char *p = (const unsigned char *)v; *p; p++)
        if (*p < 0x20 || *p == 0x7f) {
            problem(s, ns_yaml_mark(n), "%s: control character 0x%02x in '%s'", what, *p, v);
            return -1;
        }
    free(*dst);
    if (!(*dst = strdup(v)))
        s->nomem = 1;
    return s->nomem ? -1 : 0;
}

static int id_char_ok(unsigned char ch)
{
    return (ch >= 'A' && ch <= 'Z') || (ch >= 'a' && ch <= 'z') || (ch >= '0' && ch <= '9') ||
           ch == '.' || ch == '_' || ch == '+' || ch == '-';
}

char *ns_campaign_id_of(const char *model)
{
    size_t n = strlen(model);
    while (n > 1 && model[n - 1] == '/')
        n--; /* "dir/" names dir */
    size_t b = n;
    while (b > 0 && model[b - 1] != '/')
        b--;
    size_t len = n - b < NS_CAMPAIGN_MAX_ID ? n - b : NS_CAMPAIGN_MAX_ID;
    char *id = malloc(len + 2);
    if (!id)
        return NULL;
    for (size_t i = 0; i < len; i++)
        id[i] = id_char_ok((unsigned char)model[b + i]) ? model[b + i] : '_';
    id[len] = 0;
    if (len == 0)
        strcpy(id, "_");
    if (id[0] == '.')
        id[0] = '_';
    return id;
}

/* One entry of `models:`: a name, or {name, tokenizer, id}. */
static void parse_entry(cs *s, const yaml_node_t *n, size_t i)
{
    ns_campaign_model *m = &s->c->models[i];
    m->mark = ns_yaml_mark(n);
    if (n->type == YAML_SCALAR_NODE) {
        get_string(s, n, "models", &m->model);
        return;
    }
    if (n->type != YAML_MAPPING_NODE) {
        problem(s, m->mark, "models: each entry is a model name or {name: ..., tokenizer: ..., "
                "id: ...}, got a list");
        return;
    }
    int seen[3] = {0, 0, 0};
    for (yaml_node_pair_t *p = n->data.mapping.pairs.start; p < n->data.mapping.pairs.top; p++) {
        yaml_node_t *k = yaml_document_get_node(s->doc, p->key);
        yaml_node_t *v = yaml_document_get_node(s->doc, p->value);
        const char *key = k->type == YAML_SCALAR_NODE ? ns_yaml_text(k) : "";
        static const char *const names[3] = {"name", "tokenizer", "id"};
        int which = -1;
        for (int w = 0; w < 3; w++)
            if (!strcmp(key, names[w]))
                which = w;
        if (which < 0) {
            problem(s, ns_yaml_mark(k), "models: unknown key '%s' in a model entry (name, "
                    "tokenizer, id)", key);
            continue;
        }
        if (seen[which]++) {
            problem(s, ns_yaml_mark(k), "models: duplicate key '%s' in a model entry", key);
            continue;
        }
        char what[32];
        snprintf(what, sizeof what, "models.%s", key);
        char **dst = which == 0 ? &m->model : which == 1 ? &m->tokenizer : &s->ids_given[i];
        get_string(s, v, what, dst);
    }
    if (!seen[0])
        problem(s, m->mark, "models: a model entry needs name: (an asset name such as "
                "pythia-160m or pythia-160m@step1000, or a model directory)");
}

static void parse_models(cs *s, const yaml_node_t *n)
{
    if (n->type != YAML_SEQUENCE_NODE) {
        problem(s, ns_yaml_mark(n), "models: expected a list of models");
        return;
    }
    size_t k = (size_t)(n->data.sequence.items.top - n->data.sequence.items.start);
    if (k == 0 || k > NS_CAMPAIGN_MAX_MODELS) {
        problem(s, ns_yaml_mark(n), "models: %zu models; a campaign has 1..%d", k,
                NS_CAMPAIGN_MAX_MODELS);
        return;
    }
    s->c->models = calloc(k, sizeof *s->c->models);
    s->ids_given = calloc(k, sizeof *s->ids_given);
    if (!s->c->models || !s->ids_given) {
        s->nomem = 1;
        return;
    }
    s->c->n = k;
    for (size_t i = 0; i < k; i++)
        parse_entry(s, yaml_document_get_node(s->doc, n->data.sequence.items.start[i]), i);
}

static void add_cut(cs *s, const yaml_node_t *k, const yaml_node_t *v)
{
    if (s->ncuts < 3)
        s->cuts[s->ncuts++] = (cut){k->start_mark.index, v->end_mark.index};
}

/* The root's keys: returns 1 when the file is a campaign (a top-level `models:`). */
static int parse_root(cs *s, const yaml_node_t *root)
{
    yaml_node_pair_t *p, *start = root->data.mapping.pairs.start;
    yaml_node_pair_t *top = root->data.mapping.pairs.top;
    int is_campaign = 0;
    for (p = start; p < top; p++) {
        yaml_node_t *k = yaml_document_get_node(s->doc, p->key);
        is_campaign |= k->type == YAML_SCALAR_NODE && !strcmp(ns_yaml_text(k), "models");
    }
    if (!is_campaign)
        return 0;
    if (root->data.mapping.style == YAML_FLOW_MAPPING_STYLE)
        problem(s, ns_yaml_mark(root), "a campaign file's top level must be a block mapping (one "
                "key per line), not { ... }");
    int seen[3] = {0, 0, 0};
    for (p = start; p < top; p++) {
        yaml_node_t *k = yaml_document_get_node(s->doc, p->key);
        yaml_node_t *v = yaml_document_get_node(s->doc, p->value);
        if (k->type != YAML_SCALAR_NODE)
            continue; /* the sweep parser reports it */
        const char *key = ns_yaml_text(k);
        static const char *const own[3] = {"models", "tokenizer", "output_dir"};
        int which = -1;
        for (int w = 0; w < 3; w++)
            if (!strcmp(key, own[w]))
                which = w;
        if (which >= 0 && seen[which]++) {
            problem(s, ns_yaml_mark(k), "duplicate key '%s'", key);
            continue;
        }
        if (which >= 0)
            add_cut(s, k, v);
        if (which == 0)
            parse_models(s, v);
        else if (which == 1)
            get_string(s, v, "tokenizer", &s->tokenizer);
        else if (which == 2)
            get_string(s, v, "output_dir", &s->c->output_dir);
        else if (!strcmp(key, "model"))
            problem(s, ns_yaml_mark(k), "model: a campaign names its models in models:, not in "
                    "model: beside it");
        else if (!strcmp(key, "output") || !strcmp(key, "checkpoint_dir"))
            problem(s, ns_yaml_mark(k), "%s: a campaign writes each model's output to "
                    "OUTPUT_DIR/<id>/<id>.nc and its journal to OUTPUT_DIR/<id>/checkpoint; set "
                    "output_dir: instead", key);
    }
    return 1;
}

/* Ids: given ones must be safe, derived ones are made safe; two that differ only in letter case
 * would share a directory on a case-insensitive file system and are refused too. */
static void check_ids(cs *s)
{
    ns_campaign *c = s->c;
    for (size_t i = 0; i < c->n && !s->nomem; i++) {
        ns_campaign_model *m = &c->models[i];
        if (!m->model)
            continue;
        const char *g = s->ids_given[i];
        if (g) {
            int ok = strlen(g) <= NS_CAMPAIGN_MAX_ID && g[0] != '.';
            for (const char *q = g; *q && ok; q++)
                ok = id_char_ok((unsigned char)*q);
            if (!ok) {
                problem(s, m->mark, "models.id: '%s' is not a safe name: 1..%d of A-Z a-z 0-9 . _ "
                        "+ -, not starting with '.'", g, NS_CAMPAIGN_MAX_ID);
                continue;
            }
            m->id = strdup(g);
        } else {
            m->id = ns_campaign_id_of(m->model);
        }
        if (!m->id) {
            s->nomem = 1;
            break;
        }
        for (size_t j = 0; j < i; j++)
            if (c->models[j].id && !strcasecmp(c->models[j].id, m->id)) {
                problem(s, m->mark, "models: '%s' gives the output name '%s', as '%s' (line %zu) "
                        "does%s; give one of them another id:", m->model, m->id,
                        c->models[j].model, c->models[j].mark.line,
                        strcmp(c->models[j].id, m->id) ? " up to letter case" : "");
                break;
            }
    }
}

/* s as a YAML double-quoted scalar. */
static char *quoted(const char *v)
{
    size_t n = strlen(v);
    char *q = malloc(4 * n + 3), *o = q;
    if (!q)
        return NULL;
    *o++ = '"';
    for (const unsigned char *p = (const unsigned char *)v; *p; p++) {
        if (*p == '"' || *p == '\\')
            *o++ = '\\', *o++ = (char)*p;
        else if (*p < 0x20 || *p == 0x7f)
            o += sprintf(o, "\\x%02x", *p);
        else
            *o++ = (char)*p;
    }
    *o++ = '"';
    *o = 0;
    return q;
}

/* Every model's sweep text and paths. */
static int derive(cs *s, const char *text, size_t len, ns_err *err)
{
    ns_campaign *c = s->c;
    char *base = malloc(len + 1);
    size_t bn = 0;
    if (!base)
        return ns_fail(err, NS_ERR_NOMEM, "out of memory");
    for (size_t i = 0; i < len; i++) {
        int in_cut = 0;
        for (size_t k = 0; k < s->ncuts; k++)
            in_cut |= i >= s->cuts[k].from && i < s->cuts[k].to;
        if (!in_cut || text[i] == '\n')
            base[bn++] = text[i];
    }
    /* the campaign's file name in a comment (so a --resume from another directory, or through
     * another path to the same file, derives the same text): control characters made '?' */
    const char *slash = strrchr(c->path, '/');
    char *name = strdup(slash ? slash + 1 : c->path);
    int rc = name ? NS_OK : ns_fail(err, NS_ERR_NOMEM, "out of memory");
    for (char *q = name; q && *q; q++)
        if ((unsigned char)*q < 0x20 || *q == 0x7f)
            *q = '?';
    for (size_t i = 0; i < c->n && rc == NS_OK; i++) {
        ns_campaign_model *m = &c->models[i];
        const char *tok = m->tokenizer ? m->tokenizer : s->tokenizer ? s->tokenizer
                                                                    : NS_CAMPAIGN_TOKENIZER_MODEL;
        if (!strcmp(tok, NS_CAMPAIGN_TOKENIZER_MODEL))
            tok = m->model;
        char *dir = ns_path_join(c->output_dir, m->id);
        char *leaf = ns_str_printf("%s.nc", m->id), *yl = ns_str_printf("%s.yaml", m->id);
        m->output = dir && leaf ? ns_path_join(dir, leaf) : NULL;
        m->checkpoint_dir = dir ? ns_path_join(dir, "checkpoint") : NULL;
        m->sweep_path = dir && yl ? ns_path_join(dir, yl) : NULL;
        char *qm = quoted(m->model), *qt = quoted(tok);
        char *qo = m->output ? quoted(m->output) : NULL;
        char *qc = m->checkpoint_dir ? quoted(m->checkpoint_dir) : NULL;
        char *tail = qm && qt && qo && qc
            ? ns_str_printf("\n# model %zu of %zu of the campaign %s, as normsweep run wrote it "
                            "(docs/SWEEP.md, \"Campaigns\")\nmodel: %s\ntokenizer: %s\n"
                            "output: %s\ncheckpoint_dir: %s\n", i + 1, c->n, name, qm, qt, qo, qc)
            : NULL;
        if (tail && m->sweep_path && (m->text = malloc(bn + strlen(tail) + 1))) {
            memcpy(m->text, base, bn);
            strcpy(m->text + bn, tail);
            m->len = bn + strlen(tail);
        } else {
            rc = ns_fail(err, NS_ERR_NOMEM, "out of memory");
        }
        free(dir), free(leaf), free(yl), free(qm), free(qt), free(qo), free(qc), free(tail);
    }
    free(base);
    free(name);
    return rc;
}

/* The default output directory: runs/<stem> (the file's name without .yaml / .yml). */
static char *default_out(const char *path)
{
    const char *b = strrchr(path, '/');
    b = b ? b + 1 : path;
    char stem[256];
    snprintf(stem, sizeof stem, "%s", *b ? b : "campaign");
    char *dot = strrchr(stem, '.');
    if (dot && dot != stem && (!strcmp(dot, ".yaml") || !strcmp(dot, ".yml")))
        *dot = 0;
    return ns_str_printf("runs/%s", stem);
}

int ns_campaign_parse(const char *text, size_t len, const char *path, const char *output_dir,
                      ns_campaign *c, ns_sweep_diags *diags, ns_err *err)
{
    memset(c, 0, sizeof *c);
    cs s = {.c = c, .src = path, .diags = diags};
    ns_sweep_mark deep;
    if (ns_yaml_too_deep(text, len, NS_YAML_MAX_DEPTH, &deep))
        return NS_OK; /* not read here: the sweep parser reports it */
    if (!(c->path = strdup(path)))
        return ns_fail(err, NS_ERR_NOMEM, "out of memory");
    c->text_lines = 1;
    for (size_t i = 0; i < len; i++)
        c->text_lines += text[i] == '\n';
    yaml_parser_t parser;
    yaml_document_t doc;
    if (!yaml_parser_initialize(&parser))
        return ns_fail(err, NS_ERR_NOMEM, "cannot initialise the YAML parser");
    yaml_parser_set_input_string(&parser, (const unsigned char *)text, len);
    int loaded = yaml_parser_load(&parser, &doc);
    yaml_parser_delete(&parser);
    if (!loaded)
        return NS_OK; /* a syntax error: the sweep parser reports it */
    s.doc = &doc;
    yaml_node_t *root = yaml_document_get_root_node(&doc);
    int rc = NS_OK, campaign = root && root->type == YAML_MAPPING_NODE && parse_root(&s, root);
    if (campaign && !s.nomem) {
        if (output_dir) {
            free(c->output_dir);
            c->output_dir = strdup(output_dir);
        } else if (!c->output_dir) {
            c->output_dir = default_out(path);
        }
        s.nomem |= !c->output_dir;
    }
    if (campaign && !s.nomem && !s.nerr)
        check_ids(&s);
    if (s.nomem)
        rc = ns_fail(err, NS_ERR_NOMEM, "out of memory");
    else if (campaign && s.nerr)
        rc = ns_fail(err, NS_ERR_INVALID, "%zu problem%s in the campaign %s", s.nerr,
                     s.nerr == 1 ? "" : "s", path);
    else if (campaign)
        rc = derive(&s, text, len, err);
    for (size_t i = 0; s.ids_given && i < c->n; i++)
        free(s.ids_given[i]);
    free(s.ids_given);
    free(s.tokenizer);
    yaml_document_delete(&doc);
    ns_sweep_diags_sort(diags);
    return rc;
}

void ns_campaign_free(ns_campaign *c)
{
    for (size_t i = 0; c->models && i < c->n; i++) {
        ns_campaign_model *m = &c->models[i];
        free(m->id), free(m->model), free(m->tokenizer), free(m->text);
        free(m->sweep_path), free(m->output), free(m->checkpoint_dir);
    }
    free(c->models);
    free(c->path);
    free(c->output_dir);
    memset(c, 0, sizeof *c);
}

int ns_campaign_fix_diags(const ns_campaign *c, size_t i, ns_sweep_diags *diags)
{
    if (i >= c->n)
        return NS_OK; /* the text every model shares: its marks are the campaign's own */
    const ns_campaign_model *m = &c->models[i];
    size_t plen = strlen(c->path);
    for (size_t k = 0; k < diags->n; k++) {
        ns_sweep_diag *d = &diags->items[k];
        const char *rest = d->text;
        if (strncmp(rest, c->path, plen) == 0 && rest[plen] == ':') {
            rest += plen + 1;
            if (d->mark.line) /* skip "LINE:COL:" */
                for (int colons = 0; *rest && colons < 2; rest++)
                    colons += *rest == ':';
            while (*rest == ' ')
                rest++;
        }
        if (d->mark.line > c->text_lines)
            d->mark = m->mark;
        char *t = NULL;
        int r = d->mark.line ? asprintf(&t, "%s:%zu:%zu: [%s] %s", c->path, d->mark.line,
                                        d->mark.col, m->id, rest)
                             : asprintf(&t, "%s: [%s] %s", c->path, m->id, rest);
        if (r < 0)
            return NS_ERR_NOMEM;
        free(d->text);
        d->text = t;
    }
    ns_sweep_diags_sort(diags);
    return NS_OK;
}

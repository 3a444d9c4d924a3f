/* ns_sweep_config: defaults, release and packing of the sweep configuration, and its validation
 * against the model (config.json) and the tokenized corpus. */
#include "sweep/ns_sweep_config.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/ns_file.h"
#include "sweep/ns_sweep_yaml.h"
#include "tokenizer/ns_tokenizer.h"

/* The largest sweep file read (a sweep is a page of settings, not data). */
#define NS_SWEEP_MAX_FILE (1u << 20)

void ns_sweep_config_init(ns_sweep_config *cfg)
{
    memset(cfg, 0, sizeof *cfg);
    cfg->strip_gutenberg = 1;
    cfg->layers_all = 1;
    cfg->heads_all = 1;
    cfg->normalizers[0].kind = NS_NORM_SOFTMAX;
    cfg->normalizers[0].s = 0;
    cfg->nnormalizers = 1;
    cfg->rows = 1;
    cfg->sphere = 1;
    cfg->seed = 0;
    cfg->ks_alpha = 0.01;
    cfg->probes = 8;
    cfg->keep_samples = 0;
}

void ns_sweep_config_free(ns_sweep_config *cfg)
{
    if (!cfg)
        return;
    free(cfg->source_path);
    free(cfg->yaml_text);
    free(cfg->model);
    free(cfg->tokenizer);
    free(cfg->corpus);
    free(cfg->L);
    free(cfg->N);
    free(cfg->T);
    free(cfg->eps);
    free(cfg->layers);
    free(cfg->heads);
    free(cfg->output);
    free(cfg->checkpoint_dir);
    memset(cfg, 0, sizeof *cfg);
}

/* ---- pack / unpack ------------------------------------------------------------------------ */

static const char pack_magic[8] = {'N', 'S', 'S', 'W', 'C', 'F', 'G', '1'};

typedef struct wbuf {
    unsigned char *p;
    size_t n, cap;
    int nomem;
} wbuf;

static void put(wbuf *b, const void *data, size_t len)
{
    if (b->nomem)
        return;
    if (b->n + len > b->cap) {
        size_t cap = b->cap ? b->cap : 1024;
        while (cap < b->n + len)
            cap *= 2;
        unsigned char *p = realloc(b->p, cap);
        if (!p) {
            b->nomem = 1;
            return;
        }
        b->p = p;
        b->cap = cap;
    }
    memcpy(b->p + b->n, data, len);
    b->n += len;
}

static void put_u64(wbuf *b, uint64_t v) { put(b, &v, sizeof v); }
static void put_f64(wbuf *b, double v) { put(b, &v, sizeof v); }

static void put_str(wbuf *b, const char *s)
{
    put_u64(b, s ? (uint64_t)strlen(s) : UINT64_MAX);
    if (s)
        put(b, s, strlen(s));
}

static void put_sizes(wbuf *b, const size_t *v, size_t n)
{
    put_u64(b, n);
    for (size_t i = 0; i < n; i++)
        put_u64(b, v[i]);
}

static void put_doubles(wbuf *b, const double *v, size_t n)
{
    put_u64(b, n);
    for (size_t i = 0; i < n; i++)
        put_f64(b, v[i]);
}

int ns_sweep_config_pack(const ns_sweep_config *cfg, void **buf, size_t *len, ns_err *err)
{
    wbuf b = {0};
    put(&b, pack_magic, sizeof pack_magic);
    put_str(&b, cfg->source_path);
    put_str(&b, cfg->yaml_text);
    put_str(&b, cfg->model);
    put_str(&b, cfg->tokenizer);
    put_str(&b, cfg->corpus);
    put_u64(&b, (uint64_t)cfg->strip_gutenberg);
    put_u64(&b, cfg->shard_count);
    put_u64(&b, cfg->L_max);
    put_u64(&b, cfg->shard_first);
    put_u64(&b, cfg->shard_stride);
    put_sizes(&b, cfg->L, cfg->nL);
    put_sizes(&b, cfg->N, cfg->nN);
    put_doubles(&b, cfg->T, cfg->nT);
    put_doubles(&b, cfg->eps, cfg->neps);
    put_sizes(&b, cfg->layers, cfg->nlayers);
    put_u64(&b, (uint64_t)cfg->layers_all);
    put_sizes(&b, cfg->heads, cfg->nheads);
    put_u64(&b, (uint64_t)cfg->heads_all);
    put_u64(&b, cfg->nnormalizers);
    for (size_t i = 0; i < cfg->nnormalizers && i < NS_SWEEP_MAX_NORMALIZERS; i++) {
        put_u64(&b, (uint64_t)cfg->normalizers[i].kind);
        put_f64(&b, cfg->normalizers[i].s);
    }
    put_u64(&b, cfg->rows);
    put_u64(&b, (uint64_t)cfg->sphere);
    put_u64(&b, cfg->seed);
    put_f64(&b, cfg->ks_alpha);
    put_u64(&b, cfg->probes);
    put_u64(&b, (uint64_t)cfg->keep_samples);
    put_str(&b, cfg->output);
    put_str(&b, cfg->checkpoint_dir);
    if (b.nomem) {
        free(b.p);
        return ns_fail(err, NS_ERR_NOMEM, "packing the sweep configuration: out of memory");
    }
    *buf = b.p;
    *len = b.n;
    return NS_OK;
}

typedef struct rbuf {
    const unsigned char *p;
    size_t n, off;
    int bad;    /* 1 truncated/garbled, 2 out of memory */
} rbuf;

static void get(rbuf *b, void *out, size_t len)
{
    if (b->bad || len > b->n - b->off) {
        if (!b->bad)
            b->bad = 1;
        memset(out, 0, len);
        return;
    }
    memcpy(out, b->p + b->off, len);
    b->off += len;
}

static uint64_t get_u64v(rbuf *b)
{
    uint64_t v;
    get(b, &v, sizeof v);
    return v;
}

static double get_f64v(rbuf *b)
{
    double v;
    get(b, &v, sizeof v);
    return v;
}

static char *get_strv(rbuf *b)
{
    uint64_t n = get_u64v(b);
    if (b->bad || n == UINT64_MAX)
        return NULL;
    if (n > b->n - b->off) {
        b->bad = 1;
        return NULL;
    }
    char *s = malloc((size_t)n + 1);
    if (!s) {
        b->bad = 2;
        return NULL;
    }
    get(b, s, (size_t)n);
    s[n] = '\0';
    return s;
}

/* A counted array of 8-byte elements (u64 sizes or doubles), copied as packed. */
_Static_assert(sizeof(size_t) == 8 && sizeof(double) == 8, "packed arrays hold 8-byte elements");
static void *get_array8(rbuf *b, size_t *count)
{
    uint64_t n = get_u64v(b);
    *count = 0;
    if (b->bad || !n)
        return NULL;
    if (n > (b->n - b->off) / 8) {
        b->bad = 1;
        return NULL;
    }
    void *v = malloc((size_t)n * 8);
    if (!v) {
        b->bad = 2;
        return NULL;
    }
    get(b, v, (size_t)n * 8);
    *count = (size_t)n;
    return v;
}

static size_t *get_sizesv(rbuf *b, size_t *count)
{
    return get_array8(b, count);
}

static double *get_doublesv(rbuf *b, size_t *count)
{
    return get_array8(b, count);
}

int ns_sweep_config_unpack(const void *buf, size_t len, ns_sweep_config *cfg, ns_err *err)
{
    rbuf b = {buf, len, 0, 0};
    char magic[sizeof pack_magic];
    ns_sweep_config_init(cfg);
    get(&b, magic, sizeof magic);
    if (b.bad || memcmp(magic, pack_magic, sizeof magic) != 0)
        return ns_fail(err, NS_ERR_FORMAT, "not a packed sweep configuration (bad magic)");
    cfg->source_path = get_strv(&b);
    cfg->yaml_text = get_strv(&b);
    cfg->model = get_strv(&b);
    cfg->tokenizer = get_strv(&b);
    cfg->corpus = get_strv(&b);
    cfg->strip_gutenberg = (int)get_u64v(&b);
    cfg->shard_count = (size_t)get_u64v(&b);
    cfg->L_max = (size_t)get_u64v(&b);
    cfg->shard_first = (size_t)get_u64v(&b);
    cfg->shard_stride = (size_t)get_u64v(&b);
    cfg->L = get_sizesv(&b, &cfg->nL);
    cfg->N = get_sizesv(&b, &cfg->nN);
    cfg->T = get_doublesv(&b, &cfg->nT);
    cfg->eps = get_doublesv(&b, &cfg->neps);
    cfg->layers = get_sizesv(&b, &cfg->nlayers);
    cfg->layers_all = (int)get_u64v(&b);
    cfg->heads = get_sizesv(&b, &cfg->nheads);
    cfg->heads_all = (int)get_u64v(&b);
    uint64_t nn = get_u64v(&b);
    if (nn > NS_SWEEP_MAX_NORMALIZERS)
        b.bad = 1;
    cfg->nnormalizers = b.bad ? 0 : (size_t)nn;
    for (size_t i = 0; i < cfg->nnormalizers; i++) {
        cfg->normalizers[i].kind = (ns_normalizer_kind)get_u64v(&b);
        cfg->normalizers[i].s = get_f64v(&b);
    }
    cfg->rows = (size_t)get_u64v(&b);
    cfg->sphere = (int)get_u64v(&b);
    cfg->seed = get_u64v(&b);
    cfg->ks_alpha = get_f64v(&b);
    cfg->probes = (unsigned)get_u64v(&b);
    cfg->keep_samples = (int)get_u64v(&b);
    cfg->output = get_strv(&b);
    cfg->checkpoint_dir = get_strv(&b);
    if (!b.bad && b.off != b.n)
        b.bad = 1;
    if (b.bad) {
        ns_sweep_config_free(cfg);
        if (b.bad == 2)
            return ns_fail(err, NS_ERR_NOMEM, "unpacking the sweep configuration: out of memory");
        return ns_fail(err, NS_ERR_FORMAT,
                       "packed sweep configuration is truncated or garbled (%zu bytes)", len);
    }
    return NS_OK;
}

/* ---- checks against the model and the corpus ---------------------------------------------- */

static const ns_sweep_mark no_mark = {0, 0};

#define MARK(marks, field) ((marks) ? (marks)->field : no_mark)
#define ITEM_MARK(marks, field, i) ((marks) && (marks)->field ? (marks)->field[i] : no_mark)

static int fill_range(size_t **v, size_t *n, size_t count, ns_err *err)
{
    size_t *a = malloc((count ? count : 1) * sizeof *a);
    if (!a)
        return ns_fail(err, NS_ERR_NOMEM, "expanding `all`: out of memory");
    for (size_t i = 0; i < count; i++)
        a[i] = i;
    free(*v);
    *v = a;
    *n = count;
    return NS_OK;
}

int ns_sweep_expand_all(ns_sweep_config *cfg, size_t n_layer, size_t n_head, ns_err *err)
{
    if (cfg->layers_all)
        NS_TRY(fill_range(&cfg->layers, &cfg->nlayers, n_layer, err));
    if (cfg->heads_all)
        NS_TRY(fill_range(&cfg->heads, &cfg->nheads, n_head, err));
    return NS_OK;
}

/* Drop indices >= limit from a list (and its marks), reporting each. */
static int check_indices(const ns_sweep_config *cfg, size_t *v, size_t *n, ns_sweep_mark *marks,
                         size_t limit, const char *path, const char *what, const char *model_desc,
                         ns_sweep_diags *diags, ns_err *err)
{
    size_t kept = 0;
    for (size_t i = 0; i < *n; i++) {
        if (v[i] >= limit) {
            if (ns_sweep_diag_add(diags, cfg->source_path, marks ? marks[i] : no_mark, 0,
                                  "%s: %s %zu is outside the model %s, which has %zu %ss (0..%zu)",
                                  path, what, v[i], model_desc, limit, what,
                                  limit ? limit - 1 : 0) != NS_OK)
                return ns_fail(err, NS_ERR_NOMEM, "out of memory");
            continue;
        }
        v[kept] = v[i];
        if (marks)
            marks[kept] = marks[i];
        kept++;
    }
    *n = kept;
    return NS_OK;
}

int ns_sweep_check_model(ns_sweep_config *cfg, const ns_sweep_marks *marks,
                         const ns_gpt2_config *mc, const char *model_desc, ns_sweep_diags *diags,
                         ns_err *err)
{
    if (cfg->L_max > mc->n_ctx &&
        ns_sweep_diag_add(diags, cfg->source_path, MARK(marks, L_max), 0,
                          "shards.L_max: %zu exceeds the context of the model %s (n_ctx = %zu)",
                          cfg->L_max, model_desc, mc->n_ctx) != NS_OK)
        return ns_fail(err, NS_ERR_NOMEM, "out of memory");
    NS_TRY(check_indices(cfg, cfg->layers, &cfg->nlayers, marks ? marks->layers : NULL,
                         mc->n_layer, "grid.layers", "layer", model_desc, diags, err));
    NS_TRY(check_indices(cfg, cfg->heads, &cfg->nheads, marks ? marks->heads : NULL, mc->n_head,
                         "grid.heads", "head", model_desc, diags, err));
    return ns_sweep_expand_all(cfg, mc->n_layer, mc->n_head, err);
}

int ns_sweep_check_tokens(const ns_sweep_config *cfg, const ns_sweep_marks *marks, size_t n_tokens,
                          const char *corpus_desc, ns_sweep_diags *diags, ns_err *err)
{
    if (!cfg->shard_count || !cfg->L_max || !cfg->shard_stride)
        return NS_OK; /* the shard settings themselves were reported */
    ns_err e;
    if (ns_corpus_check_shards(n_tokens, cfg->shard_count, cfg->L_max, cfg->shard_first,
                               cfg->shard_stride, &e) == NS_OK)
        return NS_OK;
    if (ns_sweep_diag_add(diags, cfg->source_path, MARK(marks, shards), 0,
                          "shards: corpus too short: %s (%s)", e.msg, corpus_desc) != NS_OK)
        return ns_fail(err, NS_ERR_NOMEM, "out of memory");
    return NS_OK;
}

void ns_sweep_inputs_free(ns_sweep_inputs *in)
{
    if (!in)
        return;
    ns_corpus_free(&in->corpus);
    memset(in, 0, sizeof *in);
}

/* A diagnostic whose text is "<key>: <err message>" at mark; returns NS_OK or NS_ERR_NOMEM. */
static int diag_err(ns_sweep_diags *diags, const ns_sweep_config *cfg, ns_sweep_mark mark,
                    const char *key, int is_default, const ns_err *e, ns_err *err)
{
    if (ns_sweep_diag_add(diags, cfg->source_path, mark, 0, "%s%s: %s", key,
                          is_default ? " (default)" : "", e->msg) != NS_OK)
        return ns_fail(err, NS_ERR_NOMEM, "out of memory");
    return NS_OK;
}

/* How messages name an asset: its manifest name, or the path as the sweep file wrote it (so
 * messages do not depend on where the tree lives). */
static const char *asset_desc(const ns_asset_ref *ref)
{
    return strcmp(ref->name, "path") == 0 || !ref->name[0] ? ref->requested : ref->name;
}

int ns_sweep_resolve_model(ns_sweep_config *cfg, const ns_sweep_marks *marks, int allow_fetch,
                           ns_sweep_inputs *in, ns_sweep_diags *diags, ns_err *err)
{
    ns_sweep_mark at = MARK(marks, model);
    ns_err e;
    ns_err_clear(&e);
    in->have_model = 0;
    if (!cfg->model)
        return NS_OK; /* the `model:` value itself was reported */
    if (ns_assets_resolve(cfg->model, "model", allow_fetch, &in->model_ref, &e) != NS_OK)
        return diag_err(diags, cfg, at, "model", !at.line, &e, err);
    if (in->model_ref.is_fallback &&
        ns_sweep_diag_add(diags, cfg->source_path, at, 1,
                          "model: '%s' is not available; using '%s' instead", cfg->model,
                          in->model_ref.name) != NS_OK)
        return ns_fail(err, NS_ERR_NOMEM, "out of memory");
    if (ns_gpt2_config_read(in->model_ref.path, &in->model_cfg, &e) != NS_OK)
        return diag_err(diags, cfg, at, "model", !at.line, &e, err);
    in->have_model = 1;
    return ns_sweep_check_model(cfg, marks, &in->model_cfg, asset_desc(&in->model_ref), diags, err);
}

int ns_sweep_resolve_corpus(const ns_sweep_config *cfg, const ns_sweep_marks *marks,
                            int allow_fetch, ns_sweep_inputs *in, ns_sweep_diags *diags,
                            ns_err *err)
{
    ns_sweep_mark tok_at = MARK(marks, tokenizer), corpus_at = MARK(marks, corpus);
    ns_tokenizer *tok = NULL;
    char *text = NULL;
    size_t len = 0;
    ns_err e;
    ns_err_clear(&e);
    int rc = NS_OK;
    in->have_tokenizer = in->have_corpus = 0;
    if (!cfg->tokenizer || !cfg->corpus)
        return NS_OK; /* reported by the parser */

    if (ns_assets_resolve(cfg->tokenizer, "tokenizer", allow_fetch, &in->tokenizer_ref, &e) !=
            NS_OK ||
        ns_tokenizer_load(in->tokenizer_ref.path, &tok, &e) != NS_OK) {
        rc = diag_err(diags, cfg, tok_at, "tokenizer", !tok_at.line, &e, err);
        goto done; /* without a tokenizer the corpus cannot be measured */
    }
    in->have_tokenizer = 1;
    in->vocab_size = ns_tokenizer_vocab_size(tok);
    if (in->have_model && in->vocab_size > in->model_cfg.vocab_size &&
        ns_sweep_diag_add(diags, cfg->source_path, tok_at, 0,
                          "tokenizer: its vocabulary has %zu tokens, more than the model's "
                          "vocab_size %zu",
                          in->vocab_size, in->model_cfg.vocab_size) != NS_OK) {
        rc = ns_fail(err, NS_ERR_NOMEM, "out of memory");
        goto done;
    }

    if (ns_assets_resolve(cfg->corpus, "corpus", allow_fetch, &in->corpus_ref, &e) != NS_OK) {
        rc = diag_err(diags, cfg, corpus_at, "corpus", !corpus_at.line, &e, err);
        goto done;
    }
    if ((rc = ns_file_read_all(in->corpus_ref.path, 0, &text, &len, &e)) != NS_OK) {
        rc = rc == NS_ERR_NOMEM ? ns_fail(err, rc, "%s", e.msg)
                                : diag_err(diags, cfg, corpus_at, "corpus", !corpus_at.line, &e, err);
        goto done;
    }
    if (ns_corpus_from_text(text, len, asset_desc(&in->corpus_ref), cfg->strip_gutenberg, tok,
                            &in->corpus, &e) != NS_OK) {
        if (e.code == NS_ERR_NOMEM) {
            rc = ns_fail(err, NS_ERR_NOMEM, "%s", e.msg);
            goto done;
        }
        if (e.code == NS_ERR_FORMAT && cfg->strip_gutenberg) {
            ns_sweep_mark at = MARK(marks, strip_gutenberg);
            rc = diag_err(diags, cfg, at.line ? at : corpus_at, at.line ? "strip_gutenberg" : "corpus",
                          !at.line && !corpus_at.line, &e, err);
        } else {
            rc = diag_err(diags, cfg, corpus_at, "corpus", !corpus_at.line, &e, err);
        }
        goto done;
    }
    free(in->corpus.path); /* messages used the name as written; keep the real path */
    if (!(in->corpus.path = strdup(in->corpus_ref.path))) {
        rc = ns_fail(err, NS_ERR_NOMEM, "out of memory");
        goto done;
    }
    in->have_corpus = 1;
    {
        char desc[NS_ASSET_PATH_MAX + 96];
        snprintf(desc, sizeof desc, "corpus %s%s", asset_desc(&in->corpus_ref),
                 cfg->strip_gutenberg ? " without its Gutenberg header and licence" : "");
        rc = ns_sweep_check_tokens(cfg, marks, in->corpus.tokens.n, desc, diags, err);
    }

done:
    free(text);
    ns_tokenizer_free(tok);
    return rc;
}

int ns_sweep_load(const char *path, int allow_fetch, int flags, ns_sweep_config *cfg,
                  ns_sweep_marks *marks, ns_sweep_inputs *in, ns_sweep_diags *diags, ns_err *err)
{
    ns_sweep_marks local_marks;
    memset(&local_marks, 0, sizeof local_marks);
    ns_sweep_marks *mk = marks ? marks : &local_marks;
    char *text = NULL;
    size_t len = 0;
    int rc;
    ns_sweep_config_init(cfg);
    memset(mk, 0, sizeof *mk);
    if (in)
        memset(in, 0, sizeof *in);

    if (path) {
        if ((rc = ns_file_read_all(path, NS_SWEEP_MAX_FILE, &text, &len, err)) != NS_OK)
            goto done;
    } else {
        const char *t = ns_sweep_default_yaml();
        len = strlen(t);
        if (!(text = strdup(t))) {
            rc = ns_fail(err, NS_ERR_NOMEM, "out of memory");
            goto done;
        }
    }
    const char *name = path ? path : NS_SWEEP_DEFAULT_NAME;
    rc = ns_sweep_parse(text, len, name, cfg, mk, diags, err);
    if (rc == NS_ERR_NOMEM)
        goto done;
    /* Files are looked at only for a sweep whose text is right: after a syntax or schema error
     * (where nothing, or not all, of the file is known) the defaults would be resolved instead
     * (e.g. a download of gpt2) and bury the real problem. */
    if (rc == NS_OK && !(flags & NS_SWEEP_SCHEMA_ONLY) && in) {
        if ((rc = ns_sweep_resolve_model(cfg, mk, allow_fetch, in, diags, err)) != NS_OK)
            goto done;
        if (!(flags & NS_SWEEP_NO_CORPUS) &&
            (rc = ns_sweep_resolve_corpus(cfg, mk, allow_fetch, in, diags, err)) != NS_OK)
            goto done;
    }
    ns_sweep_diags_sort(diags);
    rc = NS_OK;
    if (diags->nerrors)
        rc = ns_fail(err, NS_ERR_INVALID, "%zu problem%s in %s", diags->nerrors,
                     diags->nerrors == 1 ? "" : "s", name);

done:
    free(text);
    if (!marks)
        ns_sweep_marks_free(&local_marks);
    return rc;
}

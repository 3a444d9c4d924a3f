/* ns_sweep_config: the one definition of every default of a sweep, release, the plain packing
 * that rank 0 broadcasts, and the analysis grid a configuration describes. */
#include "spec/ns_sweep_config.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/ns_boot.h"

int ns_sweep_config_init(ns_sweep_config *cfg, ns_err *err)
{
    memset(cfg, 0, sizeof *cfg);
    cfg->model = strdup(NS_SWEEP_DEFAULT_MODEL);
    cfg->tokenizer = strdup(NS_SWEEP_DEFAULT_TOKENIZER);
    cfg->corpus = strdup(NS_SWEEP_DEFAULT_CORPUS);
    cfg->T = malloc(sizeof *cfg->T);
    cfg->eps = malloc(sizeof *cfg->eps);
    if (!cfg->model || !cfg->tokenizer || !cfg->corpus || !cfg->T || !cfg->eps) {
        ns_sweep_config_free(cfg);
        return ns_fail(err, NS_ERR_NOMEM, "sweep defaults: out of memory");
    }
    cfg->T[0] = NS_SWEEP_DEFAULT_T;
    cfg->nT = 1;
    cfg->eps[0] = NS_SWEEP_DEFAULT_EPS;
    cfg->neps = 1;
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
    cfg->probes = NS_SWEEP_DEFAULT_PROBES;
    cfg->keep_samples = 0;
    cfg->bootstrap_resamples = NS_BOOT_DEFAULT_RESAMPLES;
    return NS_OK;
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
        put_u64(&b, (uint64_t)cfg->normalizers[i].view);
        put_f64(&b, cfg->normalizers[i].s);
    }
    put_u64(&b, (uint64_t)cfg->sink_view);
    put_u64(&b, cfg->rows);
    put_u64(&b, (uint64_t)cfg->sphere);
    put_u64(&b, cfg->seed);
    put_f64(&b, cfg->ks_alpha);
    put_u64(&b, cfg->probes);
    put_u64(&b, (uint64_t)cfg->keep_samples);
    put_u64(&b, (uint64_t)cfg->bootstrap_resamples);
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
    memset(cfg, 0, sizeof *cfg);
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
        cfg->normalizers[i].view = (ns_view)get_u64v(&b);
        cfg->normalizers[i].s = get_f64v(&b);
    }
    cfg->sink_view = (int)get_u64v(&b);
    cfg->rows = (size_t)get_u64v(&b);
    cfg->sphere = (int)get_u64v(&b);
    cfg->seed = get_u64v(&b);
    cfg->ks_alpha = get_f64v(&b);
    cfg->probes = (unsigned)get_u64v(&b);
    cfg->keep_samples = (int)get_u64v(&b);
    cfg->bootstrap_resamples = (size_t)get_u64v(&b);
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

/* ---- derived settings --------------------------------------------------------------------- */

int ns_sweep_config_default_paths(ns_sweep_config *cfg, ns_err *err)
{
    const char *src = cfg->source_path ? cfg->source_path : "";
    const char *base = strrchr(src, '/');
    base = base ? base + 1 : src;
    char stem[256];
    if (*base == '<' || !*base)
        snprintf(stem, sizeof stem, "sweep");
    else
        snprintf(stem, sizeof stem, "%s", base);
    char *dot = strrchr(stem, '.');
    if (dot && dot != stem && (!strcmp(dot, ".yaml") || !strcmp(dot, ".yml")))
        *dot = '\0';
    if (!cfg->output && asprintf(&cfg->output, "runs/%s/%s.nc", stem, stem) < 0) {
        cfg->output = NULL;
        return ns_fail(err, NS_ERR_NOMEM, "out of memory");
    }
    if (!cfg->checkpoint_dir && asprintf(&cfg->checkpoint_dir, "runs/%s/checkpoint", stem) < 0) {
        cfg->checkpoint_dir = NULL;
        return ns_fail(err, NS_ERR_NOMEM, "out of memory");
    }
    return NS_OK;
}

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

void ns_sweep_add_sink_views(ns_sweep_config *cfg)
{
    size_t n = cfg->nnormalizers;
    if (!cfg->sink_view || 2 * n > NS_SWEEP_MAX_NORMALIZERS)
        return;
    for (size_t i = 0; i < n; i++)
        if (cfg->normalizers[i].view != NS_VIEW_ALL)
            return; /* already added */
    for (size_t i = 0; i < n; i++) {
        cfg->normalizers[n + i] = cfg->normalizers[i];
        cfg->normalizers[n + i].view = NS_VIEW_SINK_EXCLUDED;
    }
    cfg->nnormalizers = 2 * n;
}

void ns_sweep_config_grid(const ns_sweep_config *cfg, ns_grid *g)
{
    *g = (ns_grid){
        .L = cfg->L, .nL = cfg->nL, .N = cfg->N, .nN = cfg->nN, .T = cfg->T, .nT = cfg->nT,
        .eps = cfg->eps, .neps = cfg->neps, .layers = cfg->layers, .nlayers = cfg->nlayers,
        .heads = cfg->heads, .nheads = cfg->nheads, .normalizers = cfg->normalizers,
        .nnormalizers = cfg->nnormalizers, .rows = cfg->rows, .L_max = cfg->L_max,
        .sphere = cfg->sphere, .probes = cfg->probes, .seed = cfg->seed,
    };
}

/* ns_mkmodel: write a random-weight GPT-2 (Hugging Face layout, GPT-2 initialisation) from the
 * counter-based generator (ns_mkmodel_write.c), or a trained one's weights. */
#include "model/ns_mkmodel.h"
#include "model/ns_mkmodel_internal.h"
#include "model/ns_mkmodel_write_internal.h"

#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/ns_file.h"
#include "model/ns_checkpoint.h"

#define NS_MK_NAME_MAX 64
#define NS_MK_INIT_STD 0.02 /* GPT-2 initializer_range */
#define NS_MK_LN_EPS 1e-5

int ns_mkmodel_preset(const char *name, ns_gpt2_config *cfg, ns_err *err)
{
    static const struct {
        const char *name;
        size_t layers, heads, embd;
    } presets[] = {
        {"gpt2", 12, 12, 768},
        {"gpt2-medium", 24, 16, 1024},
        {"gpt2-large", 36, 20, 1280},
        {"gpt2-xl", 48, 25, 1600},
    };
    for (size_t i = 0; i < sizeof presets / sizeof presets[0]; i++) {
        if (strcmp(name, presets[i].name) == 0) {
            memset(cfg, 0, sizeof *cfg);
            cfg->n_layer = presets[i].layers;
            cfg->n_head = presets[i].heads;
            cfg->n_embd = presets[i].embd;
            cfg->n_ctx = 1024;
            cfg->vocab_size = 50257;
            cfg->n_inner = 4 * presets[i].embd;
            cfg->ln_eps = NS_MK_LN_EPS;
            return NS_OK;
        }
    }
    return ns_fail(err, NS_ERR_INVALID,
                   "unknown preset '%s' (choose gpt2, gpt2-medium, gpt2-large or gpt2-xl)", name);
}

#define MAXCFG "the most a model's config.json may name"
const ns_range ns_mkmodel_range_layers = NS_RANGE_INT(1, NS_GPT2_MAX_LAYER, MAXCFG);
const ns_range ns_mkmodel_range_heads = NS_RANGE_INT(1, NS_GPT2_MAX_HEAD, MAXCFG);
const ns_range ns_mkmodel_range_embd = NS_RANGE_INT(1, NS_GPT2_MAX_EMBD, MAXCFG);
const ns_range ns_mkmodel_range_ctx =
    NS_RANGE_INT(1, NS_MKMODEL_MAX_CTX, "a model file holds an n_ctx x n_ctx mask per layer");
const ns_range ns_mkmodel_range_vocab = NS_RANGE_INT(1, NS_GPT2_MAX_VOCAB, MAXCFG);
const ns_range ns_mkmodel_range_inner = NS_RANGE_INT(1, NS_GPT2_MAX_INNER, MAXCFG);
const ns_range ns_mkmodel_range_decoder_ctx = NS_RANGE_INT(1, NS_GPT2_MAX_CTX, MAXCFG);
#undef MAXCFG
const ns_range ns_mkmodel_range_shards =
    NS_RANGE_INT(1, NS_CKPT_MAX_SHARDS, "the most shards a model's index may name");
const ns_range ns_mkmodel_range_rope_theta =
    NS_RANGE_REAL(0.0, 1e15, NS_RANGE_MIN_OPEN, "a rotary base config.json may name");
const ns_range ns_mkmodel_range_rotary_pct =
    NS_RANGE_REAL(0.0, 1.0, NS_RANGE_MIN_OPEN, "a fraction of the head dimension");
const ns_range ns_mkmodel_range_init_std = NS_RANGE_REAL(0.0, 1e6, NS_RANGE_MIN_OPEN, NULL);

/* 1 when x survives config.json's 10 significant digits unchanged. */
static int ns_mk_exact10(double x)
{
    char buf[32];
    snprintf(buf, sizeof buf, "%.10g", x);
    return strtod(buf, NULL) == x;
}

int ns_mkmodel_check(const ns_gpt2_config *c, ns_err *err)
{
    /* The same limits ns_gpt2_config_read enforces, so every written model loads again. */
    static const struct {
        const char *what;
        size_t off, max;
    } lim[] = {
        {"n_layer", offsetof(ns_gpt2_config, n_layer), NS_GPT2_MAX_LAYER},
        {"n_head", offsetof(ns_gpt2_config, n_head), NS_GPT2_MAX_HEAD},
        {"n_embd", offsetof(ns_gpt2_config, n_embd), NS_GPT2_MAX_EMBD},
        {"n_ctx", offsetof(ns_gpt2_config, n_ctx), NS_GPT2_MAX_CTX},
        {"vocab_size", offsetof(ns_gpt2_config, vocab_size), NS_GPT2_MAX_VOCAB},
    };
    for (size_t i = 0; i < sizeof lim / sizeof lim[0]; i++) {
        size_t v = *(const size_t *)(const void *)((const char *)c + lim[i].off);
        if (v == 0 || v > lim[i].max)
            return ns_fail(err, NS_ERR_INVALID, "%s = %zu is out of range [1, %zu]", lim[i].what, v,
                           lim[i].max);
    }
    if (c->n_inner > NS_GPT2_MAX_INNER)
        return ns_fail(err, NS_ERR_INVALID, "n_inner = %zu is out of range [1, %u]", c->n_inner,
                       NS_GPT2_MAX_INNER);
    if (c->n_embd % c->n_head != 0)
        return ns_fail(err, NS_ERR_INVALID, "n_embd = %zu is not a multiple of n_head = %zu",
                       c->n_embd, c->n_head);
    if (c->ln_eps < 0.0 || c->ln_eps > 1.0 || isnan(c->ln_eps))
        return ns_fail(err, NS_ERR_INVALID, "layer_norm_epsilon = %g is out of range (0, 1]",
                       c->ln_eps);
    double T = c->attn_temperature == 0 ? 1.0 : c->attn_temperature;
    if (!(T >= NS_GPT2_MIN_TEMPERATURE && T <= NS_GPT2_MAX_TEMPERATURE) || !ns_mk_exact10(T))
        return ns_fail(err, NS_ERR_INVALID, "attention temperature %.17g is out of range [%g, %g] "
                       "or has more than 10 significant digits", T, NS_GPT2_MIN_TEMPERATURE,
                       NS_GPT2_MAX_TEMPERATURE);
    if (!ns_normalizer_in_models(c->attn_norm.kind))
        return ns_fail(err, NS_ERR_INVALID, "attention normalizer %s is not usable in a model",
                       ns_normalizer_name(c->attn_norm.kind));
    if (c->attn_norm.kind == NS_NORM_SSMAX &&
        (!(c->attn_norm.s >= NS_GPT2_MIN_SSMAX_S && c->attn_norm.s <= NS_GPT2_MAX_SSMAX_S) ||
         !ns_mk_exact10(c->attn_norm.s)))
        return ns_fail(err, NS_ERR_INVALID, "ssmax s = %.17g is out of range [1e-06, 1e+06] or has "
                       "more than 10 significant digits", c->attn_norm.s);
    if (c->attn_norm.kind == NS_NORM_SIGMOID &&
        (!(c->attn_norm.b >= NS_GPT2_MIN_SIGMOID_B && c->attn_norm.b <= NS_GPT2_MAX_SIGMOID_B) ||
         !ns_mk_exact10(c->attn_norm.b)))
        return ns_fail(err, NS_ERR_INVALID, "sigmoid b = %.17g is out of range [-1000, 1000] or "
                       "has more than 10 significant digits", c->attn_norm.b);
    /* The attention mask buffer is n_ctx^2 elements per layer; keep the file within reach. */
    if (c->n_ctx > NS_MKMODEL_MAX_CTX)
        return ns_fail(err, NS_ERR_INVALID, "n_ctx = %zu is too large for the mask buffers (max %u)",
                       c->n_ctx, NS_MKMODEL_MAX_CTX);
    return NS_OK;
}

size_t ns_mkmodel_param_count(const ns_gpt2_config *c)
{
    size_t C = c->n_embd, F = c->n_inner ? c->n_inner : 4 * c->n_embd;
    size_t per_layer = 4 * C + (3 * C * C + 3 * C) + (C * C + C) + (C * F + F) + (F * C + C);
    return c->vocab_size * C + c->n_ctx * C + 2 * C + c->n_layer * per_layer;
}

/* The tensor list in file order; *n receives the count. Caller frees. */
static ns_mk_tensor *build_descs(const ns_gpt2_config *c, size_t *n)
{
    size_t C = c->n_embd, F = c->n_inner ? c->n_inner : 4 * c->n_embd, P = c->n_ctx;
    size_t cap = 4 + 13 * c->n_layer, k = 0;
    ns_mk_tensor *d = calloc(cap, sizeof *d);
    if (!d)
        return NULL;
    double proj_std = NS_MK_INIT_STD / sqrt(2.0 * (double)c->n_layer);
    ns_mk_tensor_set(&d[k++], "wte.weight", 2, (size_t[]){c->vocab_size, C}, NS_MK_NORMAL, 0,
                     NS_MK_INIT_STD);
    ns_mk_tensor_set(&d[k++], "wpe.weight", 2, (size_t[]){P, C}, NS_MK_NORMAL, 0, NS_MK_INIT_STD);
    ns_mk_tensor_set(&d[k++], "ln_f.weight", 1, (size_t[]){C}, NS_MK_ONE, 0, 0);
    ns_mk_tensor_set(&d[k++], "ln_f.bias", 1, (size_t[]){C}, NS_MK_ZERO, 0, 0);
    for (size_t l = 0; l < c->n_layer; l++) {
        char nm[NS_MK_NAME_MAX];
#define NS_MK_ADD(suffix, nd, shp, kind, std)                                   \
    do {                                                                        \
        snprintf(nm, sizeof nm, "h.%zu.%s", l, suffix);                        \
        ns_mk_tensor_set(&d[k++], nm, nd, shp, kind, 0, std);                   \
    } while (0)
        NS_MK_ADD("ln_1.weight", 1, ((size_t[]){C}), NS_MK_ONE, 0);
        NS_MK_ADD("ln_1.bias", 1, ((size_t[]){C}), NS_MK_ZERO, 0);
        NS_MK_ADD("attn.c_attn.weight", 2, ((size_t[]){C, 3 * C}), NS_MK_NORMAL, NS_MK_INIT_STD);
        NS_MK_ADD("attn.c_attn.bias", 1, ((size_t[]){3 * C}), NS_MK_ZERO, 0);
        NS_MK_ADD("attn.c_proj.weight", 2, ((size_t[]){C, C}), NS_MK_NORMAL, proj_std);
        NS_MK_ADD("attn.c_proj.bias", 1, ((size_t[]){C}), NS_MK_ZERO, 0);
        NS_MK_ADD("ln_2.weight", 1, ((size_t[]){C}), NS_MK_ONE, 0);
        NS_MK_ADD("ln_2.bias", 1, ((size_t[]){C}), NS_MK_ZERO, 0);
        NS_MK_ADD("mlp.c_fc.weight", 2, ((size_t[]){C, F}), NS_MK_NORMAL, NS_MK_INIT_STD);
        NS_MK_ADD("mlp.c_fc.bias", 1, ((size_t[]){F}), NS_MK_ZERO, 0);
        NS_MK_ADD("mlp.c_proj.weight", 2, ((size_t[]){F, C}), NS_MK_NORMAL, proj_std);
        NS_MK_ADD("mlp.c_proj.bias", 1, ((size_t[]){C}), NS_MK_ZERO, 0);
        NS_MK_ADD("attn.bias", 4, ((size_t[]){1, 1, P, P}), NS_MK_MASK, 0);
#undef NS_MK_ADD
    }
    *n = k;
    return d;
}

int ns_mkmodel_tensors(const ns_gpt2_config *cfg, ns_mkmodel_tensor **out, size_t *n, ns_err *err)
{
    size_t nd = 0;
    ns_mk_tensor *d = build_descs(cfg, &nd);
    ns_mkmodel_tensor *t = d ? calloc(nd, sizeof *t) : NULL;
    if (!t) {
        free(d);
        return ns_fail(err, NS_ERR_NOMEM, "out of memory listing the model's tensors");
    }
    for (size_t i = 0; i < nd; i++) {
        memcpy(t[i].name, d[i].name, sizeof t[i].name);
        t[i].ndim = d[i].ndim;
        memcpy(t[i].shape, d[i].shape, sizeof t[i].shape);
        t[i].numel = d[i].numel;
        t[i].is_param = d[i].kind != NS_MK_MASK;
    }
    free(d);
    *out = t;
    *n = nd;
    return NS_OK;
}

int ns_mkmodel_values(const ns_mkmodel_opts *opts, const char *name, size_t start, size_t n,
                      float *out, ns_err *err)
{
    size_t nd = 0;
    int rc = NS_OK;
    ns_mk_tensor *d = build_descs(&opts->config, &nd);
    if (!d)
        return ns_fail(err, NS_ERR_NOMEM, "out of memory");
    size_t i = 0;
    while (i < nd && strcmp(d[i].name, name) != 0)
        i++;
    if (i == nd)
        rc = ns_fail(err, NS_ERR_INVALID, "no tensor '%s' in this model", name);
    else if (start > d[i].numel || n > d[i].numel - start)
        rc = ns_fail(err, NS_ERR_INVALID, "tensor '%s': elements [%zu, %zu) beyond its %zu", name,
                     start, start + n, d[i].numel);
    else
        ns_mk_values(out, &d[i], opts->seed, start, n);
    free(d);
    return rc;
}

float ns_mkmodel_value(const ns_mkmodel_opts *opts, const char *name, size_t index)
{
    float v = NAN;
    return ns_mkmodel_values(opts, name, index, 1, &v, NULL) == NS_OK ? v : NAN;
}

/* ---- writing ---- */

/* The attention keys (docs/MODEL.md) and the caller's extra members, added to root. */
static int add_attention_and_extra(json_t *root, const ns_mkmodel_opts *o, ns_err *err)
{
    const ns_gpt2_config *c = &o->config;
    double T = c->attn_temperature > 0 ? c->attn_temperature : 1.0;
    if (json_object_set_new(root, "normsweep_attn_normalizer",
                            json_string(ns_normalizer_name(c->attn_norm.kind))) ||
        json_object_set_new(root, "normsweep_attn_temperature", json_real(T)) ||
        (c->attn_norm.kind == NS_NORM_SSMAX &&
         json_object_set_new(root, "normsweep_ssmax_s", json_real(c->attn_norm.s))) ||
        (c->attn_norm.kind == NS_NORM_SIGMOID &&
         json_object_set_new(root, "normsweep_sigmoid_b", json_real(c->attn_norm.b))))
        return ns_fail(err, NS_ERR_NOMEM, "out of memory building config.json");
    if (!o->extra_json)
        return NS_OK;
    json_error_t jerr;
    json_t *extra = json_loads(o->extra_json, JSON_REJECT_DUPLICATES, &jerr);
    if (!extra || !json_is_object(extra)) {
        json_decref(extra);
        return ns_fail(err, NS_ERR_INVALID, "config.json extra members: not a JSON object (%s)",
                       extra ? "another value" : jerr.text);
    }
    const char *key;
    json_t *val;
    int rc = NS_OK;
    json_object_foreach(extra, key, val) {
        if (json_object_get(root, key)) {
            rc = ns_fail(err, NS_ERR_INVALID, "config.json extra member \"%s\" would replace a "
                         "key normsweep writes", key);
            break;
        }
        if (json_object_set(root, key, val)) {
            rc = ns_fail(err, NS_ERR_NOMEM, "out of memory building config.json");
            break;
        }
    }
    json_decref(extra);
    return rc;
}

static json_t *config_json(const ns_mkmodel_opts *o, ns_err *err)
{
    const ns_gpt2_config *c = &o->config;
    const char *torch_dtype = o->dtype == NS_ST_F16 ? "float16" : o->dtype == NS_ST_BF16 ? "bfloat16"
                                                                                        : "float32";
    size_t eos = c->vocab_size > 50256 ? 50256 : c->vocab_size - 1;
    double eps = c->ln_eps > 0 ? c->ln_eps : NS_MK_LN_EPS;
    char seed[24]; /* a string: JSON integers cannot carry every 64-bit seed */
    snprintf(seed, sizeof seed, "%llu", (unsigned long long)o->seed);
    json_t *inner = (c->n_inner == 0 || c->n_inner == 4 * c->n_embd)
                        ? json_null()
                        : json_integer((json_int_t)c->n_inner);
    json_t *root = json_pack(
        "{s:s, s:[s], s:I, s:I, s:I, s:I, s:I, s:o, s:I, s:f, s:s, s:f, s:I, s:I, s:s, s:s}",
        "model_type", "gpt2", "architectures", "GPT2LMHeadModel", "n_layer", (json_int_t)c->n_layer,
        "n_head", (json_int_t)c->n_head, "n_embd", (json_int_t)c->n_embd, "n_positions",
        (json_int_t)c->n_ctx, "n_ctx", (json_int_t)c->n_ctx, "n_inner", inner, "vocab_size",
        (json_int_t)c->vocab_size, "layer_norm_epsilon", eps, "activation_function", "gelu_new",
        "initializer_range", NS_MK_INIT_STD, "bos_token_id", (json_int_t)eos, "eos_token_id",
        (json_int_t)eos, "torch_dtype", torch_dtype, "normsweep_seed", seed);
    if (!root) {
        ns_fail(err, NS_ERR_NOMEM, "out of memory building config.json");
        return NULL;
    }
    if (add_attention_and_extra(root, o, err) != NS_OK) {
        json_decref(root);
        return NULL;
    }
    return root;
}

int ns_mkmodel_write(const char *out_dir, const ns_mkmodel_opts *opts, ns_err *err)
{
    return ns_mkmodel_write_from(out_dir, opts, NULL, NULL, err);
}

int ns_mkmodel_write_from(const char *out_dir, const ns_mkmodel_opts *opts, ns_mkmodel_fill_fn fill,
                          void *user, ns_err *err)
{
    ns_mkmodel_opts o = *opts;
    if (o.config.n_inner == 0)
        o.config.n_inner = 4 * o.config.n_embd;
    if (o.config.ln_eps == 0)
        o.config.ln_eps = NS_MK_LN_EPS;
    if (o.config.attn_temperature == 0)
        o.config.attn_temperature = 1.0;
    NS_TRY(ns_mkmodel_check(&o.config, err));
    if (o.dtype != NS_ST_F32 && o.dtype != NS_ST_F16 && o.dtype != NS_ST_BF16)
        return ns_fail(err, NS_ERR_INVALID, "dtype %s is not supported (F32, F16, BF16)",
                       ns_st_dtype_name(o.dtype));
    int existed = ns_file_exists(out_dir);
    NS_TRY(ns_file_mkdirs(out_dir, err));
    size_t n = 0;
    ns_mk_tensor *d = build_descs(&o.config, &n);
    json_t *root = d ? config_json(&o, err) : NULL;
    int rc = d ? (root ? NS_OK : (err ? err->code : NS_ERR_NOMEM))
               : ns_fail(err, NS_ERR_NOMEM, "out of memory");
    ns_mk_weights w = {.tensors = d, .n = n, .dtype = o.dtype, .shards = o.shards,
                       .seed = o.seed, .source = fill, .user = user, .hooks = o.hooks};
    if (rc == NS_OK)
        rc = ns_mk_write_weights(out_dir, &w, err);
    if (rc == NS_OK)
        rc = ns_mk_write_config(out_dir, root, err);
    json_decref(root);
    if (rc != NS_OK && !existed)
        rmdir(out_dir); /* the directory this call made, when nothing is in it */
    free(d);
    return rc;
}

void ns_mkmodel_shard_name(size_t k, size_t K, char name[48])
{
    ns_mk_shard_name(k, K, name);
}

/* ns_mkdecoder: write a random-weight Llama-layout (llama, qwen2, mistral) or GPT-NeoX model in the
 * Hugging Face layout -- the tensors LlamaForCausalLM / Qwen2ForCausalLM / GPTNeoXForCausalLM save,
 * and config.json with the keys and values the released configs carry -- from the counter-based
 * generator (ns_mkmodel_write.c). Presets have the shapes of SmolLM2-135M, Qwen2.5-0.5B,
 * Pythia-70m and Pythia-160m. */
#include "model/ns_mkmodel.h"
#include "model/ns_mkmodel_write_internal.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/ns_file.h"
#include "model/ns_model_json.h"

void ns_mkdecoder_defaults(ns_arch arch, const char *model_type, ns_mkdecoder_opts *o)
{
    memset(o, 0, sizeof *o);
    ns_model_config *c = &o->config;
    c->arch = arch;
    snprintf(c->model_type, sizeof c->model_type, "%s", arch == NS_ARCH_GPT_NEOX ? "gpt_neox"
                                                        : model_type ? model_type : "llama");
    c->attn_temperature = 1.0;
    o->init_std = 0.02;
    if (arch == NS_ARCH_GPT_NEOX) {
        c->norm_eps = 1e-5;
        snprintf(c->hidden_act, sizeof c->hidden_act, "gelu");
        c->parallel_residual = 1;
        c->qkv_bias = c->o_bias = c->mlp_bias = 1;
        c->rope_theta = 10000.0;
        o->rotary_pct = 0.25;
        return;
    }
    c->rms_norm = 1;
    c->norm_eps = 1e-6;
    snprintf(c->hidden_act, sizeof c->hidden_act, "silu");
    c->gated_mlp = 1;
    c->rope_theta = 10000.0;
    c->qkv_bias = strcmp(c->model_type, "qwen2") == 0;
}

int ns_mkdecoder_preset(const char *name, ns_mkdecoder_opts *o, ns_err *err)
{
    static const struct {
        const char *name, *type;
        ns_arch arch;
        size_t layers, heads, kv, embd, inner, ctx, vocab;
        double theta, eps, std;
        int tied;
    } p[] = {
        {"smollm2-135m", "llama", NS_ARCH_LLAMA, 30, 9, 3, 576, 1536, 8192, 49152, 100000.0,
         1e-5, 0.041666666666666664, 1},
        {"qwen2.5-0.5b", "qwen2", NS_ARCH_LLAMA, 24, 14, 2, 896, 4864, 32768, 151936, 1000000.0,
         1e-6, 0.02, 1},
        {"pythia-70m", "gpt_neox", NS_ARCH_GPT_NEOX, 6, 8, 8, 512, 2048, 2048, 50304, 10000.0,
         1e-5, 0.02, 0},
        {"pythia-160m", "gpt_neox", NS_ARCH_GPT_NEOX, 12, 12, 12, 768, 3072, 2048, 50304, 10000.0,
         1e-5, 0.02, 0},
    };
    for (size_t i = 0; i < sizeof p / sizeof p[0]; i++) {
        if (strcmp(name, p[i].name) != 0)
            continue;
        ns_mkdecoder_defaults(p[i].arch, p[i].type, o);
        ns_model_config *c = &o->config;
        c->n_layer = p[i].layers;
        c->n_head = p[i].heads;
        c->n_kv_head = p[i].kv;
        c->n_embd = p[i].embd;
        c->d_head = p[i].embd / p[i].heads;
        c->n_inner = p[i].inner;
        c->n_ctx = p[i].ctx;
        c->vocab_size = p[i].vocab;
        c->rope_theta = p[i].theta;
        c->norm_eps = p[i].eps;
        c->tied_embeddings = p[i].tied;
        o->init_std = p[i].std;
        if (strcmp(p[i].type, "qwen2") == 0)
            o->sliding_window = 32768, o->max_window_layers = 24; /* use_sliding_window false */
        return NS_OK;
    }
    return ns_fail(err, NS_ERR_INVALID, "unknown preset '%s' for this architecture (choose "
                   "smollm2-135m, qwen2.5-0.5b, pythia-70m or pythia-160m)", name);
}

/* 1 when x survives config.json's 10 significant digits unchanged. */
static int exact10(double x)
{
    char buf[32];
    snprintf(buf, sizeof buf, "%.10g", x);
    return strtod(buf, NULL) == x;
}

int ns_mkdecoder_check(ns_mkdecoder_opts *o, ns_err *err)
{
    ns_model_config *c = &o->config;
    int neox = c->arch == NS_ARCH_GPT_NEOX;
    if (!c->n_kv_head)
        c->n_kv_head = c->n_head;
    if (!c->d_head && c->n_head)
        c->d_head = c->n_embd / c->n_head;
    const struct { const char *what; size_t v, max; } lim[] = {
        {"layers", c->n_layer, NS_CFG_MAX_LAYER},  {"heads", c->n_head, NS_CFG_MAX_HEAD},
        {"embd", c->n_embd, NS_CFG_MAX_EMBD},      {"ctx", c->n_ctx, NS_CFG_MAX_CTX},
        {"vocab", c->vocab_size, NS_CFG_MAX_VOCAB}, {"inner", c->n_inner, NS_CFG_MAX_INNER},
        {"kv-heads", c->n_kv_head, NS_CFG_MAX_HEAD}, {"head-dim", c->d_head, NS_CFG_MAX_EMBD},
    };
    for (size_t i = 0; i < sizeof lim / sizeof lim[0]; i++)
        if (lim[i].v == 0 || lim[i].v > lim[i].max)
            return ns_fail(err, NS_ERR_INVALID, "%s = %zu is out of range [1, %zu]", lim[i].what,
                           lim[i].v, lim[i].max);
    if (c->n_head % c->n_kv_head != 0 || (neox && c->n_kv_head != c->n_head))
        return ns_fail(err, NS_ERR_INVALID, "heads = %zu must be a multiple of kv-heads = %zu%s",
                       c->n_head, c->n_kv_head, neox ? " and equal to it for gpt-neox" : "");
    if ((neox && c->n_embd != c->n_head * c->d_head) || c->d_head % 2 != 0)
        return ns_fail(err, NS_ERR_INVALID, "head-dim = %zu must be even%s", c->d_head,
                       neox ? " and embd / heads for gpt-neox" : "");
    if (neox) {
        c->rotary_dim = (size_t)floor((double)c->d_head * o->rotary_pct);
        if (!(o->rotary_pct > 0 && o->rotary_pct <= 1) || !exact10(o->rotary_pct) ||
            c->rotary_dim < 2 || c->rotary_dim % 2 != 0)
            return ns_fail(err, NS_ERR_INVALID, "rotary-pct = %g gives %zu rotary dimensions of "
                           "a head of %zu (must be even and at least 2)", o->rotary_pct,
                           c->rotary_dim, c->d_head);
    } else {
        c->rotary_dim = c->d_head;
    }
    if (!(c->rope_theta > 0 && c->rope_theta <= 1e15) || !exact10(c->rope_theta))
        return ns_fail(err, NS_ERR_INVALID, "rope-theta = %.17g is out of range (0, 1e15] or has "
                       "more than 10 significant digits", c->rope_theta);
    if (!(o->init_std > 0 && o->init_std <= 10)) /* written with 10 digits: informational */
        return ns_fail(err, NS_ERR_INVALID, "init-std = %g is out of range (0, 10]", o->init_std);
    if (o->dtype != NS_ST_F32 && o->dtype != NS_ST_F16 && o->dtype != NS_ST_BF16)
        return ns_fail(err, NS_ERR_INVALID, "dtype %s is not supported (F32, F16, BF16)",
                       ns_st_dtype_name(o->dtype));
    return NS_OK;
}

/* Weight N(0, std), bias 0, norm gain 1 and bias 0 -- or, with init_full (to validate every
 * convention), biases N(0, std) and norm gains 1 + N(0, 0.1), norm biases N(0, 0.1). */
static void put(ns_mk_tensor *d, size_t *k, const ns_mkdecoder_opts *o, const char *name,
                size_t d0, size_t d1, ns_mk_init kind)
{
    size_t shape[2] = {d0, d1};
    int full = o->init_full;
    double std = o->init_std;
    if (kind == NS_MK_NORMAL)
        ns_mk_tensor_set(&d[(*k)++], name, d1 ? 2 : 1, shape, kind, 0, std);
    else if (kind == NS_MK_ZERO) /* a bias */
        ns_mk_tensor_set(&d[(*k)++], name, 1, shape, full ? NS_MK_NORMAL : kind, 0,
                         strstr(name, "layernorm") || strstr(name, "norm.") ? 0.1 : std);
    else
        ns_mk_tensor_set(&d[(*k)++], name, 1, shape, full ? NS_MK_NORMAL : kind, 1, 0.1);
}

static void put_linear(ns_mk_tensor *d, size_t *k, const ns_mkdecoder_opts *o, const char *stem,
                       size_t n_out, size_t n_in, int bias)
{
    char nm[128];
    snprintf(nm, sizeof nm, "%.100s.weight", stem);
    put(d, k, o, nm, n_out, n_in, NS_MK_NORMAL);
    if (bias) {
        snprintf(nm, sizeof nm, "%.100s.bias", stem);
        put(d, k, o, nm, n_out, 0, NS_MK_ZERO);
    }
}

/* The tensor list in the order the head model's modules hold them. Caller frees. */
static ns_mk_tensor *decoder_tensors(const ns_mkdecoder_opts *o, size_t *n)
{
    const ns_model_config *c = &o->config;
    size_t C = c->n_embd, F = c->n_inner, HD = c->n_head * c->d_head;
    size_t KD = c->n_kv_head * c->d_head, V = c->vocab_size, k = 0;
    int neox = c->arch == NS_ARCH_GPT_NEOX;
    ns_mk_tensor *d = calloc(4 + 16 * c->n_layer, sizeof *d);
    if (!d)
        return NULL;
    char nm[96], st[96];
    put(d, &k, o, neox ? "gpt_neox.embed_in.weight" : "model.embed_tokens.weight", V, C,
        NS_MK_NORMAL);
    for (size_t l = 0; l < c->n_layer; l++) {
        const char *P = neox ? "gpt_neox.layers" : "model.layers";
        for (int which = 0; which < 2; which++) {
            snprintf(nm, sizeof nm, "%s.%zu.%s.weight", P, l,
                     which ? "post_attention_layernorm" : "input_layernorm");
            put(d, &k, o, nm, C, 0, NS_MK_ONE);
            snprintf(nm, sizeof nm, "%s.%zu.%s.bias", P, l,
                     which ? "post_attention_layernorm" : "input_layernorm");
            if (neox)
                put(d, &k, o, nm, C, 0, NS_MK_ZERO);
        }
        const char *const *names;
        static const char *const neox_maps[] = {"attention.query_key_value", "attention.dense",
                                                "mlp.dense_h_to_4h", "mlp.dense_4h_to_h"};
        static const char *const llama_maps[] = {"self_attn.q_proj", "self_attn.k_proj",
                                                 "self_attn.v_proj", "self_attn.o_proj",
                                                 "mlp.gate_proj", "mlp.up_proj", "mlp.down_proj"};
        names = neox ? neox_maps : llama_maps;
        size_t nmaps = neox ? 4 : 7;
        const size_t neox_shape[4][2] = {{3 * C, C}, {C, C}, {F, C}, {C, F}};
        const size_t llama_shape[7][2] = {{HD, C}, {KD, C}, {KD, C}, {C, HD}, {F, C}, {F, C}, {C, F}};
        const int neox_bias[4] = {c->qkv_bias, c->o_bias, 1, 1};
        const int llama_bias[7] = {c->qkv_bias, c->qkv_bias, c->qkv_bias, c->o_bias,
                                   c->mlp_bias, c->mlp_bias, c->mlp_bias};
        for (size_t i = 0; i < nmaps; i++) {
            snprintf(st, sizeof st, "%s.%zu.%s", P, l, names[i]);
            put_linear(d, &k, o, st, neox ? neox_shape[i][0] : llama_shape[i][0],
                       neox ? neox_shape[i][1] : llama_shape[i][1],
                       neox ? neox_bias[i] : llama_bias[i]);
        }
    }
    put(d, &k, o, neox ? "gpt_neox.final_layer_norm.weight" : "model.norm.weight", C, 0,
        NS_MK_ONE);
    if (neox)
        put(d, &k, o, "gpt_neox.final_layer_norm.bias", C, 0, NS_MK_ZERO);
    if (!c->tied_embeddings)
        put(d, &k, o, neox ? "embed_out.weight" : "lm_head.weight", V, C, NS_MK_NORMAL);
    *n = k;
    return d;
}

size_t ns_mkdecoder_param_count(const ns_mkdecoder_opts *o)
{
    size_t n = 0, total = 0;
    ns_mk_tensor *d = decoder_tensors(o, &n);
    for (size_t i = 0; d && i < n; i++)
        total += d[i].numel;
    free(d);
    return total;
}

/* config.json with the keys the released configs of the family carry. */
static json_t *decoder_config(const ns_mkdecoder_opts *o)
{
    const ns_model_config *c = &o->config;
    int neox = c->arch == NS_ARCH_GPT_NEOX, qwen = strcmp(c->model_type, "qwen2") == 0;
    int llama = strcmp(c->model_type, "llama") == 0, mistral = strcmp(c->model_type, "mistral") == 0;
    const char *arch = neox ? "GPTNeoXForCausalLM" : qwen ? "Qwen2ForCausalLM"
                       : mistral ? "MistralForCausalLM" : "LlamaForCausalLM";
    json_int_t bos = qwen ? (c->vocab_size > 151643 ? 151643 : (json_int_t)c->vocab_size - 1) : 0;
    char seed[24]; /* a string: JSON integers cannot carry every 64-bit seed */
    snprintf(seed, sizeof seed, "%llu", (unsigned long long)o->seed);
    json_t *r = json_pack("{s:[s], s:I, s:I, s:s, s:I, s:f, s:I, s:I, s:s, s:I, s:I, s:b, s:s, "
                          "s:b, s:I, s:s}",
                          "architectures", arch, "bos_token_id", bos, "eos_token_id", bos,
                          "hidden_act", c->hidden_act, "hidden_size", (json_int_t)c->n_embd,
                          "initializer_range", o->init_std, "intermediate_size",
                          (json_int_t)c->n_inner, "max_position_embeddings", (json_int_t)c->n_ctx,
                          "model_type", c->model_type, "num_attention_heads",
                          (json_int_t)c->n_head, "num_hidden_layers", (json_int_t)c->n_layer,
                          "tie_word_embeddings", c->tied_embeddings, "torch_dtype",
                          o->dtype == NS_ST_F16 ? "float16" : o->dtype == NS_ST_BF16 ? "bfloat16"
                                                                                     : "float32",
                          "use_cache", 1, "vocab_size", (json_int_t)c->vocab_size,
                          "normsweep_seed", seed);
    if (!r)
        return NULL;
    int bad = 0;
#define SET(k, v) (bad |= json_object_set_new(r, (k), (v)) != 0)
    if (neox) {
        SET("layer_norm_eps", json_real(c->norm_eps));
        SET("rotary_emb_base", json_real(c->rope_theta));
        SET("rotary_pct", json_real(o->rotary_pct));
        SET("use_parallel_residual", json_boolean(c->parallel_residual));
        if (!c->qkv_bias)
            SET("attention_bias", json_false());
    } else {
        SET("attention_dropout", json_real(0.0));
        SET("num_key_value_heads", json_integer((json_int_t)c->n_kv_head));
        SET("rms_norm_eps", json_real(c->norm_eps));
        SET("rope_scaling", json_null());
        SET("rope_theta", json_real(c->rope_theta));
        if (c->d_head * c->n_head != c->n_embd)
            SET("head_dim", json_integer((json_int_t)c->d_head));
    }
    if (llama) {
        SET("attention_bias", json_boolean(c->qkv_bias));
        SET("mlp_bias", json_boolean(c->mlp_bias));
        SET("pretraining_tp", json_integer(1));
        SET("is_llama_config", json_true());
        SET("rope_interleaved", json_false());
    }
    if (qwen) {
        SET("max_window_layers", json_integer((json_int_t)(o->max_window_layers ? o->max_window_layers
                                                                                : c->n_layer)));
        SET("sliding_window", json_integer((json_int_t)(o->sliding_window ? o->sliding_window
                                                                          : c->n_ctx)));
        SET("use_sliding_window", json_false());
        SET("use_mrope", json_false());
    }
    if (mistral)
        SET("sliding_window", o->sliding_window ? json_integer((json_int_t)o->sliding_window)
                                                : json_null());
#undef SET
    if (bad) {
        json_decref(r);
        return NULL;
    }
    return r;
}

int ns_mkdecoder_write(const char *dir, const ns_mkdecoder_opts *opts, ns_err *err)
{
    ns_mkdecoder_opts o = *opts;
    NS_TRY(ns_mkdecoder_check(&o, err));
    int existed = ns_file_exists(dir);
    NS_TRY(ns_file_mkdirs(dir, err));
    size_t n = 0;
    ns_mk_tensor *d = decoder_tensors(&o, &n);
    json_t *root = d ? decoder_config(&o) : NULL;
    int rc = root ? NS_OK : ns_fail(err, NS_ERR_NOMEM, "out of memory");
    ns_mk_weights w = {.tensors = d, .n = n, .dtype = o.dtype, .shards = o.shards,
                       .seed = o.seed, .hooks = o.hooks};
    if (rc == NS_OK)
        rc = ns_mk_write_weights(dir, &w, err);
    if (rc == NS_OK)
        rc = ns_mk_write_config(dir, root, err);
    if (rc != NS_OK && !existed)
        rmdir(dir); /* the directory this call made, when nothing is in it */
    json_decref(root);
    free(d);
    return rc;
}

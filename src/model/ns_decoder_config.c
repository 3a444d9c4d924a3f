/* ns_decoder_config: the config.json of the Llama layout (model_type llama, mistral, qwen2) and of
 * GPT-NeoX (gpt_neox), read as Hugging Face transformers reads them (its configuration_*.py
 * defaults for absent keys), with every option the forward does not implement refused by name:
 * rope_scaling, rope types other than the default, interleaved rotary pairs, a sliding window
 * (refused later, for the L it is shorter than), M-RoPE, activations other than the family's. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "model/ns_model_internal.h"
#include "model/ns_model_json.h"

/* The ranges of the real keys (common/ns_range.h): a rotary base or theta, finite and positive;
 * a norm's epsilon and a fraction of a head's dimensions rotated, in (0, 1]. */
#define NS_MAX_THETA 1e15
static const ns_range range_theta = NS_RANGE_REAL(0.0, NS_MAX_THETA, NS_RANGE_MIN_OPEN, NULL);
static const ns_range range_eps = NS_RANGE_REAL(0.0, 1.0, NS_RANGE_MIN_OPEN, NULL);
static const ns_range range_fraction = NS_RANGE_REAL(0.0, 1.0, NS_RANGE_MIN_OPEN,
                                                     "a fraction of the head dimension");

static int refuse(const char *path, const char *key, const char *value, const char *why,
                  ns_err *err)
{
    return ns_fail(err, NS_ERR_INVALID, "%s: key \"%s\" = %s is not supported (%s)", path, key,
                   value, why);
}

/* rope_scaling must be null; rope_parameters may only restate the default rotary embedding:
 * rope_type (or type) "default", rope_theta, and partial_rotary_factor where partial_ok. */
static int parse_rope_parameters(const char *path, json_t *root, double *theta, int *have_theta,
                                 double *partial, int *have_partial, ns_err *err)
{
    json_t *rs = json_object_get(root, "rope_scaling");
    if (rs && !json_is_null(rs))
        return refuse(path, "rope_scaling", json_is_object(rs) ? "an object" : ns_json_type_name(rs),
                      "only the default rotary embedding is implemented: it must be null", err);
    json_t *rp = json_object_get(root, "rope_parameters");
    *have_theta = *have_partial = 0;
    if (!rp || json_is_null(rp))
        return NS_OK;
    if (!json_is_object(rp))
        return ns_fail(err, NS_ERR_FORMAT, "%s: key \"rope_parameters\" is %s, expected an object",
                       path, ns_json_type_name(rp));
    const char *key;
    json_t *v;
    json_object_foreach(rp, key, v) {
        char name[96];
        snprintf(name, sizeof name, "rope_parameters.%.60s", key);
        if (strcmp(key, "rope_type") == 0 || strcmp(key, "type") == 0) {
            if (!json_is_string(v) || strcmp(json_string_value(v), "default") != 0)
                return refuse(path, name, json_is_string(v) ? json_string_value(v)
                                                            : ns_json_type_name(v),
                              "only the default rotary embedding is implemented", err);
        } else if (strcmp(key, "rope_theta") == 0) {
            NS_TRY(ns_json_number(path, rp, key, &range_theta, theta, have_theta, err));
        } else if (strcmp(key, "partial_rotary_factor") == 0) {
            NS_TRY(ns_json_number(path, rp, key, &range_fraction, partial, have_partial, err));
        } else {
            return refuse(path, name, "present", "only rope_type \"default\", rope_theta and "
                          "partial_rotary_factor are implemented", err);
        }
    }
    return NS_OK;
}

/* The base: the top-level key (base_key) and rope_parameters.rope_theta, which must agree. */
static int parse_theta(const char *path, json_t *root, const char *base_key, double dflt,
                       double *theta, double *partial, int *have_partial, ns_err *err)
{
    double top = dflt, inner = 0.0;
    int have_top = 0, have_inner = 0;
    NS_TRY(parse_rope_parameters(path, root, &inner, &have_inner, partial, have_partial, err));
    NS_TRY(ns_json_number(path, root, base_key, &range_theta, &top, &have_top, err));
    if (have_top && have_inner && top != inner)
        return ns_fail(err, NS_ERR_INVALID, "%s: key \"%s\" = %g disagrees with key "
                       "\"rope_parameters.rope_theta\" = %g", path, base_key, top, inner);
    *theta = have_inner ? inner : top;
    int interleaved = 0;
    NS_TRY(ns_json_bool(path, root, "rope_interleaved", &interleaved, err));
    if (interleaved)
        return refuse(path, "rope_interleaved", "true", "Hugging Face's convention rotates the two "
                      "halves of each head together; adjacent pairs are not implemented", err);
    return NS_OK;
}

/* The sizes every decoder config has; normsweep's own attention keys belong to the GPT-2 layout
 * that `normsweep train` writes. */
static int parse_sizes(const char *path, json_t *root, ns_model_config *c, ns_err *err)
{
    static const char *const own[] = {"normsweep_attn_normalizer", "normsweep_attn_temperature",
                                       "normsweep_ssmax_s", "normsweep_sigmoid_b"};
    for (size_t i = 0; i < sizeof own / sizeof own[0]; i++)
        if (json_object_get(root, own[i]))
            return refuse(path, own[i], "present", "a model's own attention normalizer is "
                          "implemented for the GPT-2 layout only", err);
    NS_TRY(ns_json_dim(path, root, "num_hidden_layers", 1, 0, NS_CFG_MAX_LAYER, &c->n_layer, NULL, err));
    NS_TRY(ns_json_dim(path, root, "num_attention_heads", 1, 0, NS_CFG_MAX_HEAD, &c->n_head, NULL, err));
    NS_TRY(ns_json_dim(path, root, "hidden_size", 1, 0, NS_CFG_MAX_EMBD, &c->n_embd, NULL, err));
    NS_TRY(ns_json_dim(path, root, "intermediate_size", 1, 0, NS_CFG_MAX_INNER, &c->n_inner, NULL, err));
    NS_TRY(ns_json_dim(path, root, "vocab_size", 1, 0, NS_CFG_MAX_VOCAB, &c->vocab_size, NULL, err));
    NS_TRY(ns_json_dim(path, root, "max_position_embeddings", 1, 0, NS_CFG_MAX_CTX, &c->n_ctx, NULL, err));
    c->tied_embeddings = 0;
    return ns_json_bool(path, root, "tie_word_embeddings", &c->tied_embeddings, err);
}

/* hidden_act, one of names (NULL-terminated); absent: names[0]. */
static int parse_act(const char *path, json_t *root, const char *const *names, const char *family,
                     ns_model_config *c, ns_err *err)
{
    const char *act = NULL;
    NS_TRY(ns_json_string(path, root, "hidden_act", &act, err));
    if (!act)
        act = names[0];
    for (size_t i = 0; names[i]; i++)
        if (strcmp(act, names[i]) == 0) {
            snprintf(c->hidden_act, sizeof c->hidden_act, "%s", act);
            return NS_OK;
        }
    char v[80], why[160];
    size_t at = (size_t)snprintf(why, sizeof why, "the %s layout's activations are", family);
    for (size_t i = 0; names[i] && at < sizeof why; i++)
        at += (size_t)snprintf(why + at, sizeof why - at, "%s %s", i ? "," : "", names[i]);
    snprintf(v, sizeof v, "\"%.64s\"", act);
    return refuse(path, "hidden_act", v, why, err);
}

/* The sliding window of mistral (sliding_window, 4096 when absent, null: none) and qwen2 (only
 * with use_sliding_window, and only for layers at or past max_window_layers). */
static int parse_window(const char *path, json_t *root, const char *type, ns_model_config *c,
                        ns_err *err)
{
    size_t w = 0;
    int have = 0;
    NS_TRY(ns_json_dim(path, root, "sliding_window", 0, 1, NS_CFG_MAX_CTX, &w, &have, err));
    if (strcmp(type, "mistral") == 0) {
        json_t *v = json_object_get(root, "sliding_window");
        c->sliding_window = have ? w : v ? 0 : 4096;
        return NS_OK;
    }
    if (strcmp(type, "qwen2") != 0)
        return NS_OK;
    int use = 0, mrope = 0;
    size_t from = 28;
    NS_TRY(ns_json_bool(path, root, "use_sliding_window", &use, err));
    NS_TRY(ns_json_bool(path, root, "use_mrope", &mrope, err));
    if (mrope)
        return refuse(path, "use_mrope", "true", "multimodal rotary embeddings are not "
                      "implemented", err);
    json_t *mw = json_object_get(root, "max_window_layers"); /* 0 is a value: every layer */
    if (mw && !json_is_null(mw)) {
        if (!json_is_integer(mw) || json_integer_value(mw) < 0)
            return ns_fail(err, NS_ERR_FORMAT, "%s: key \"max_window_layers\" is %s, expected an "
                           "integer >= 0", path, ns_json_type_name(mw));
        from = (size_t)json_integer_value(mw);
    }
    json_t *types = json_object_get(root, "layer_types");
    int slides = 0;
    if (types && json_is_array(types)) {
        size_t i;
        json_t *t;
        json_array_foreach(types, i, t)
            slides |= json_is_string(t) && strcmp(json_string_value(t), "sliding_attention") == 0;
    } else {
        slides = c->n_layer > from;
    }
    c->sliding_window = use && have && slides ? w : 0;
    return NS_OK;
}

int ns_llama_config_parse(const char *path, json_t *root, const char *type, ns_model_config *c,
                          ns_err *err)
{
    memset(c, 0, sizeof *c);
    c->arch = NS_ARCH_LLAMA;
    c->attn_temperature = 1.0; /* softmax at 1: the released models' attention */
    snprintf(c->model_type, sizeof c->model_type, "%s", type);
    NS_TRY(parse_sizes(path, root, c, err));
    int have = 0;
    c->n_kv_head = c->n_head;
    NS_TRY(ns_json_dim(path, root, "num_key_value_heads", 0, 1, NS_CFG_MAX_HEAD, &c->n_kv_head,
                       NULL, err));
    if (c->n_head % c->n_kv_head != 0)
        return ns_fail(err, NS_ERR_INVALID, "%s: key \"num_attention_heads\" = %zu is not a "
                       "multiple of key \"num_key_value_heads\" = %zu", path, c->n_head,
                       c->n_kv_head);
    NS_TRY(ns_json_dim(path, root, "head_dim", 0, 1, NS_CFG_MAX_EMBD, &c->d_head, &have, err));
    if (!have && c->n_embd % c->n_head != 0)
        return ns_fail(err, NS_ERR_INVALID, "%s: key \"hidden_size\" = %zu is not a multiple of "
                       "key \"num_attention_heads\" = %zu", path, c->n_embd, c->n_head);
    if (!have)
        c->d_head = c->n_embd / c->n_head;
    if (c->d_head % 2 != 0 || c->d_head * c->n_head > (size_t)NS_CFG_MAX_EMBD * 4)
        return ns_fail(err, NS_ERR_INVALID, "%s: the head dimension %zu (key \"head_dim\" or "
                       "hidden_size / num_attention_heads) must be even and heads x head_dim at "
                       "most %lld", path, c->d_head, (long long)NS_CFG_MAX_EMBD * 4);
    c->rms_norm = 1;
    c->norm_eps = 1e-6;
    NS_TRY(ns_json_number(path, root, "rms_norm_eps", &range_eps, &c->norm_eps, &have, err));
    static const char *const acts[] = {"silu", "swish", NULL};
    NS_TRY(parse_act(path, root, acts, "Llama", c, err));
    c->gated_mlp = 1;
    double partial = 1.0, top_partial = 1.0;
    int have_partial = 0;
    NS_TRY(parse_theta(path, root, "rope_theta", 10000.0, &c->rope_theta, &partial, &have_partial,
                       err));
    NS_TRY(ns_json_number(path, root, "partial_rotary_factor", &range_fraction, &top_partial, &have,
                          err));
    if (partial != 1.0 || top_partial != 1.0)
        return refuse(path, have_partial ? "rope_parameters.partial_rotary_factor"
                                         : "partial_rotary_factor", "below 1",
                      "the Llama layout rotates every dimension of a head", err);
    c->rotary_dim = c->d_head;
    if (strcmp(type, "qwen2") == 0) {
        c->qkv_bias = 1; /* Qwen2Attention: q, k, v with bias; o_proj without */
    } else if (strcmp(type, "llama") == 0) {
        NS_TRY(ns_json_bool(path, root, "attention_bias", &c->qkv_bias, err));
        c->o_bias = c->qkv_bias;
        NS_TRY(ns_json_bool(path, root, "mlp_bias", &c->mlp_bias, err));
    }
    return parse_window(path, root, type, c, err);
}

int ns_neox_config_parse(const char *path, json_t *root, ns_model_config *c, ns_err *err)
{
    memset(c, 0, sizeof *c);
    c->arch = NS_ARCH_GPT_NEOX;
    c->attn_temperature = 1.0;
    snprintf(c->model_type, sizeof c->model_type, "gpt_neox");
    NS_TRY(parse_sizes(path, root, c, err));
    if (c->n_embd % c->n_head != 0)
        return ns_fail(err, NS_ERR_INVALID, "%s: key \"hidden_size\" = %zu is not a multiple of "
                       "key \"num_attention_heads\" = %zu", path, c->n_embd, c->n_head);
    c->n_kv_head = c->n_head;
    c->d_head = c->n_embd / c->n_head;
    int have = 0;
    c->norm_eps = 1e-5;
    NS_TRY(ns_json_number(path, root, "layer_norm_eps", &range_eps, &c->norm_eps, &have, err));
    static const char *const acts[] = {"gelu", "gelu_new", "gelu_pytorch_tanh", NULL};
    NS_TRY(parse_act(path, root, acts, "GPT-NeoX", c, err));
    double pct = 0.25, partial = 0.0;
    int have_partial = 0, have_pct = 0;
    NS_TRY(parse_theta(path, root, "rotary_emb_base", 10000.0, &c->rope_theta, &partial,
                       &have_partial, err));
    NS_TRY(ns_json_number(path, root, "rotary_pct", &range_fraction, &pct, &have_pct, err));
    if (have_pct && have_partial && pct != partial)
        return ns_fail(err, NS_ERR_INVALID, "%s: key \"rotary_pct\" = %g disagrees with key "
                       "\"rope_parameters.partial_rotary_factor\" = %g", path, pct, partial);
    if (have_partial)
        pct = partial;
    /* rotary_ndims = int(head_size * rotary_pct), as GPTNeoXAttention computes it */
    c->rotary_dim = (size_t)floor((double)c->d_head * pct);
    if (c->rotary_dim == 0 || c->rotary_dim % 2 != 0)
        return ns_fail(err, NS_ERR_INVALID, "%s: key \"rotary_pct\" = %g gives %zu rotary "
                       "dimensions of a head of %zu (int(head_dim x rotary_pct) must be even and "
                       "at least 2)", path, pct, c->rotary_dim, c->d_head);
    c->parallel_residual = 1;
    NS_TRY(ns_json_bool(path, root, "use_parallel_residual", &c->parallel_residual, err));
    c->qkv_bias = 1;
    NS_TRY(ns_json_bool(path, root, "attention_bias", &c->qkv_bias, err));
    c->o_bias = c->qkv_bias;
    c->mlp_bias = 1;
    return NS_OK;
}

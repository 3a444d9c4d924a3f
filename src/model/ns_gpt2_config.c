/* ns_gpt2_config: read and validate a Hugging Face GPT-2 config.json (jansson), with normsweep's
 * keys for the model's attention normalizer and temperature. */
#include <jansson.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "common/ns_file.h"
#include "model/ns_gpt2_internal.h"
#include "model/ns_model_json.h"

const ns_range ns_gpt2_range_temperature =
    NS_RANGE_REAL(NS_GPT2_MIN_TEMPERATURE, NS_GPT2_MAX_TEMPERATURE, 0, NULL);
const ns_range ns_gpt2_range_ssmax_s = NS_RANGE_REAL(NS_GPT2_MIN_SSMAX_S, NS_GPT2_MAX_SSMAX_S, 0, NULL);
const ns_range ns_gpt2_range_sigmoid_b =
    NS_RANGE_REAL(NS_GPT2_MIN_SIGMOID_B, NS_GPT2_MAX_SIGMOID_B, 0, NULL);

/* A normalizer's parameter key: required with its normalizer (want), refused with any other. */
static int param_key(const char *path, json_t *root, const char *key, const ns_range *r,
                     ns_normalizer_kind want, ns_gpt2_config *cfg, ns_err *err)
{
    int have;
    double x = 0.0;
    NS_TRY(ns_json_number(path, root, key, r, &x, &have, err));
    if (cfg->attn_norm.kind == want && !have)
        return ns_fail(err, NS_ERR_FORMAT, "%s: key \"%s\" is missing (required with "
                       "\"normsweep_attn_normalizer\" = \"%s\")", path, key,
                       ns_normalizer_name(want));
    if (cfg->attn_norm.kind != want && have)
        return ns_fail(err, NS_ERR_INVALID, "%s: key \"%s\" applies only to the %s normalizer, "
                       "not to %s", path, key, ns_normalizer_name(want),
                       ns_normalizer_name(cfg->attn_norm.kind));
    if (have)
        cfg->attn_norm.s = x; /* the one parameter: ssmax's s or sigmoid's b */
    return NS_OK;
}

/* The model's attention (normsweep's keys; absent in Hugging Face's files: GPT-2's softmax at
 * temperature 1). ssmax's s and sigmoid's b are each required with their normalizer and refused
 * with any other. */
static int parse_attention(const char *path, json_t *root, ns_gpt2_config *cfg, ns_err *err)
{
    cfg->attn_norm = (ns_normalizer){.kind = NS_NORM_SOFTMAX, .s = 0.0};
    cfg->attn_temperature = 1.0;
    json_t *nv = json_object_get(root, "normsweep_attn_normalizer");
    if (nv) {
        if (!json_is_string(nv))
            return ns_fail(err, NS_ERR_FORMAT, "%s: key \"normsweep_attn_normalizer\" is %s, "
                           "expected a string", path, ns_json_type_name(nv));
        ns_err e;
        if (ns_normalizer_parse(json_string_value(nv), &cfg->attn_norm.kind, &e) != NS_OK)
            return ns_fail(err, NS_ERR_INVALID, "%s: key \"normsweep_attn_normalizer\": %s", path,
                           e.msg);
    }
    int have;
    NS_TRY(ns_json_number(path, root, "normsweep_attn_temperature", &ns_gpt2_range_temperature,
                          &cfg->attn_temperature, &have, err));
    NS_TRY(param_key(path, root, "normsweep_ssmax_s", &ns_gpt2_range_ssmax_s, NS_NORM_SSMAX, cfg,
                     err));
    return param_key(path, root, "normsweep_sigmoid_b", &ns_gpt2_range_sigmoid_b, NS_NORM_SIGMOID,
                     cfg, err);
}

double ns_gpt2_attn_temperature(const ns_gpt2_config *cfg)
{
    return cfg->attn_temperature > 0.0 ? cfg->attn_temperature : 1.0;
}

int ns_gpt2_attn_is_default(const ns_gpt2_config *cfg)
{
    return cfg->attn_norm.kind == NS_NORM_SOFTMAX && ns_gpt2_attn_temperature(cfg) == 1.0;
}

int ns_gpt2_config_parse(const char *path, json_t *root, ns_gpt2_config *cfg, ns_err *err)
{
    int have;
    NS_TRY(ns_json_dim(path, root, "n_layer", 1, 0, NS_CFG_MAX_LAYER, &cfg->n_layer, NULL, err));
    NS_TRY(ns_json_dim(path, root, "n_head", 1, 0, NS_CFG_MAX_HEAD, &cfg->n_head, NULL, err));
    NS_TRY(ns_json_dim(path, root, "n_embd", 1, 0, NS_CFG_MAX_EMBD, &cfg->n_embd, NULL, err));
    NS_TRY(ns_json_dim(path, root, "vocab_size", 1, 0, NS_CFG_MAX_VOCAB, &cfg->vocab_size, NULL, err));
    /* n_positions sizes the position table; older configs only carry n_ctx. */
    NS_TRY(ns_json_dim(path, root, "n_positions", 0, 0, NS_CFG_MAX_CTX, &cfg->n_ctx, &have, err));
    if (!have) {
        NS_TRY(ns_json_dim(path, root, "n_ctx", 0, 0, NS_CFG_MAX_CTX, &cfg->n_ctx, &have, err));
        if (!have)
            return ns_fail(err, NS_ERR_FORMAT, "%s: key \"n_positions\" (or \"n_ctx\") is missing",
                           path);
    }
    json_t *inner = json_object_get(root, "n_inner");
    if (!inner || json_is_null(inner))
        cfg->n_inner = 4 * cfg->n_embd;
    else
        NS_TRY(ns_json_dim(path, root, "n_inner", 1, 0, NS_CFG_MAX_INNER, &cfg->n_inner, NULL, err));

    json_t *eps = json_object_get(root, "layer_norm_epsilon");
    if (!eps)
        return ns_fail(err, NS_ERR_FORMAT, "%s: key \"layer_norm_epsilon\" is missing", path);
    if (!json_is_number(eps))
        return ns_fail(err, NS_ERR_FORMAT, "%s: key \"layer_norm_epsilon\" is %s, expected a number",
                       path, ns_json_type_name(eps));
    cfg->ln_eps = json_number_value(eps);
    if (!(cfg->ln_eps > 0.0) || !isfinite(cfg->ln_eps) || cfg->ln_eps > 1.0)
        return ns_fail(err, NS_ERR_INVALID, "%s: key \"layer_norm_epsilon\" = %g is out of range (0, 1]",
                       path, cfg->ln_eps);

    json_t *act = json_object_get(root, "activation_function");
    if (act) {
        if (!json_is_string(act))
            return ns_fail(err, NS_ERR_FORMAT, "%s: key \"activation_function\" is %s, expected a string",
                           path, ns_json_type_name(act));
        if (strcmp(json_string_value(act), "gelu_new") != 0)
            return ns_fail(err, NS_ERR_INVALID,
                           "%s: key \"activation_function\" = \"%.64s\" is not supported (only gelu_new)",
                           path, json_string_value(act));
    }
    /* Hugging Face GPT-2 options that change the attention this forward computes are refused
     * (their results would be silently wrong); options that do not change it in float32 pass:
     * reorder_and_upcast_attn only makes Hugging Face scale before the product and compute the
     * scores in float32 under half precision, which is what this forward always does, and the
     * dropout probabilities do not apply to inference. docs/MODEL.md lists every key. */
    json_t *mt = json_object_get(root, "model_type");
    if (mt && (!json_is_string(mt) || strcmp(json_string_value(mt), "gpt2") != 0))
        return ns_fail(err, NS_ERR_INVALID, "%s: key \"model_type\" = %s%.64s%s is not supported "
                       "(only gpt2)", path, json_is_string(mt) ? "\"" : "",
                       json_is_string(mt) ? json_string_value(mt) : ns_json_type_name(mt),
                       json_is_string(mt) ? "\"" : "");
    static const struct { const char *key; int want; const char *why; } flags[] = {
        {"scale_attn_weights", 1, "the scores must be divided by sqrt(head dim)"},
        {"scale_attn_by_inverse_layer_idx", 0, "the scores would also be divided by layer + 1"},
        {"add_cross_attention", 0, "cross-attention layers are not part of GPT-2"},
    };
    for (size_t i = 0; i < sizeof flags / sizeof flags[0]; i++) {
        json_t *f = json_object_get(root, flags[i].key);
        if (f && (!json_is_boolean(f) || json_is_true(f) != flags[i].want))
            return ns_fail(err, NS_ERR_INVALID, "%s: key \"%s\" = %s is not supported (%s; "
                           "normsweep computes GPT-2's attention with %s = %s)", path,
                           flags[i].key, json_is_boolean(f) ? (json_is_true(f) ? "true" : "false")
                                                           : ns_json_type_name(f),
                           flags[i].why, flags[i].key, flags[i].want ? "true" : "false");
    }
    if (cfg->n_embd % cfg->n_head != 0)
        return ns_fail(err, NS_ERR_INVALID,
                       "%s: key \"n_embd\" = %zu is not a multiple of key \"n_head\" = %zu", path,
                       cfg->n_embd, cfg->n_head);
    return parse_attention(path, root, cfg, err);
}

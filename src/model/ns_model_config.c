/* ns_model_config: read a model directory's config.json and hand it to its architecture's reader
 * by `model_type` (absent: GPT-2, as older GPT-2 configs carry none). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/ns_file.h"
#include "model/ns_gpt2_internal.h"
#include "model/ns_model_internal.h"
#include "model/ns_model_json.h"

const char *ns_arch_name(ns_arch arch)
{
    switch (arch) {
    case NS_ARCH_GPT2: return "gpt2";
    case NS_ARCH_LLAMA: return "llama";
    case NS_ARCH_GPT_NEOX: return "gpt_neox";
    }
    return "unknown";
}

/* The model types read, and the layout each has. */
static const struct {
    const char *type;
    ns_arch arch;
} ns_types[] = {
    {"gpt2", NS_ARCH_GPT2},      {"llama", NS_ARCH_LLAMA},        {"mistral", NS_ARCH_LLAMA},
    {"qwen2", NS_ARCH_LLAMA},    {"gpt_neox", NS_ARCH_GPT_NEOX},
};

static int parse_root(const char *path, json_t *root, ns_model_config *cfg, ns_err *err)
{
    const char *type = NULL;
    NS_TRY(ns_json_string(path, root, "model_type", &type, err));
    size_t k = 0, n = sizeof ns_types / sizeof ns_types[0];
    while (type && k < n && strcmp(type, ns_types[k].type) != 0)
        k++;
    if (type && k == n)
        return ns_fail(err, NS_ERR_INVALID, "%s: key \"model_type\" = \"%.64s\" is not supported "
                       "(gpt2, llama, mistral, qwen2, gpt_neox; docs/MODELS.md)", path, type);
    if (!type || ns_types[k].arch == NS_ARCH_GPT2) {
        ns_gpt2_config g;
        memset(&g, 0, sizeof g);
        NS_TRY(ns_gpt2_config_parse(path, root, &g, err));
        ns_gpt2_config_generic(&g, cfg);
        return NS_OK;
    }
    if (ns_types[k].arch == NS_ARCH_LLAMA)
        return ns_llama_config_parse(path, root, type, cfg, err);
    return ns_neox_config_parse(path, root, cfg, err);
}

int ns_model_config_read(const char *dir, ns_model_config *cfg, ns_err *err)
{
    memset(cfg, 0, sizeof *cfg);
    char *path = ns_path_join(dir, "config.json");
    if (!path)
        return ns_fail(err, NS_ERR_NOMEM, "out of memory");
    json_t *root = NULL;
    ns_model_config tmp;
    memset(&tmp, 0, sizeof tmp);
    int rc = ns_json_load_object(path, 0, &root, err);
    if (rc == NS_OK && (rc = parse_root(path, root, &tmp, err)) == NS_OK)
        *cfg = tmp;
    json_decref(root);
    free(path);
    return rc;
}

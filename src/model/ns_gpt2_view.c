/* ns_gpt2_view: the trainer's view of a loaded GPT-2 (ns_gpt2.h): a model loaded through
 * ns_model_load that must have the GPT-2 layout, its GPT-2 config and its parameters by name. */
#include <string.h>

#include "model/ns_model_internal.h"

int ns_gpt2_load(const char *dir, ns_gpt2_model **out, ns_err *err)
{
    ns_model *m = NULL;
    *out = NULL;
    NS_TRY(ns_model_load(dir, &m, err));
    if (m->config.arch != NS_ARCH_GPT2) {
        int rc = ns_fail(err, NS_ERR_INVALID, "%s/config.json: model_type \"%s\" is not the GPT-2 "
                         "layout this needs", dir, m->config.model_type);
        ns_model_free(m);
        return rc;
    }
    *out = m;
    return NS_OK;
}

void ns_gpt2_free(ns_gpt2_model *model)
{
    ns_model_free(model);
}

const ns_gpt2_config *ns_gpt2_config_of(const ns_gpt2_model *model)
{
    return &model->gpt2;
}

const float *ns_gpt2_tensor(const ns_gpt2_model *model, const char *name, size_t *numel)
{
    for (size_t i = 0; i < model->n_slots; i++)
        if (strcmp(model->slots[i].name, name) == 0 && *model->slots[i].dst) {
            *numel = model->slots[i].t->numel;
            return *model->slots[i].dst;
        }
    return NULL;
}

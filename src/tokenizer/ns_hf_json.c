/* ns_hf_json: a tokenizer.json's unknown keys refused and optional booleans read, with messages
 * naming the file and the key (ns_hf_json.h). */
#include "tokenizer/ns_hf_json.h"

#include <string.h>

int ns_hf_check_keys(json_t *obj, const char *const *allowed, const char *path, const char *where,
                     ns_err *err)
{
    const char *key;
    json_t *val;
    json_object_foreach(obj, key, val) {
        int ok = 0;
        for (size_t i = 0; allowed[i] && !ok; i++)
            ok = strcmp(key, allowed[i]) == 0;
        if (!ok)
            return ns_fail(err, NS_ERR_INVALID, "%s: %s%sunknown key \"%s\" (not implemented by "
                           "normsweep)", path, where, *where ? ": " : "", key);
    }
    return NS_OK;
}

int ns_hf_get_bool(json_t *obj, const char *key, int def, int *out, const char *path,
                   const char *where, ns_err *err)
{
    json_t *v = json_object_get(obj, key);
    *out = def;
    if (!v || json_is_null(v))
        return NS_OK;
    if (!json_is_boolean(v))
        return ns_fail(err, NS_ERR_FORMAT, "%s: %s.%s must be true or false", path, where, key);
    *out = json_is_true(v);
    return NS_OK;
}

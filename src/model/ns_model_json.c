/* ns_model_json: typed config.json reads (see ns_model_json.h). */
#include "model/ns_model_json.h"

#include <stdlib.h>

#include "common/ns_file.h"

/* config.json is small; anything above this is not a config. */
#define NS_CFG_MAX_BYTES ((size_t)1 << 20)

const char *ns_json_type_name(const json_t *v)
{
    switch (json_typeof(v)) {
    case JSON_OBJECT: return "an object";
    case JSON_ARRAY: return "an array";
    case JSON_STRING: return "a string";
    case JSON_INTEGER: return "an integer";
    case JSON_REAL: return "a real number";
    case JSON_TRUE:
    case JSON_FALSE: return "a boolean";
    case JSON_NULL: return "null";
    }
    return "a value";
}

int ns_json_load_object(const char *path, size_t max_bytes, json_t **root, ns_err *err)
{
    char *text = NULL;
    size_t len = 0;
    *root = NULL;
    NS_TRY(ns_file_read_all(path, max_bytes ? max_bytes : NS_CFG_MAX_BYTES, &text, &len, err));
    json_error_t jerr;
    json_t *r = json_loadb(text, len, JSON_REJECT_DUPLICATES | JSON_DECODE_ANY, &jerr);
    free(text);
    if (!r)
        return ns_fail(err, NS_ERR_FORMAT, "%s: not valid JSON: %s (line %d)", path, jerr.text,
                       jerr.line);
    if (!json_is_object(r)) {
        int rc = ns_fail(err, NS_ERR_FORMAT, "%s: top level is %s, expected an object", path,
                         ns_json_type_name(r));
        json_decref(r);
        return rc;
    }
    *root = r;
    return NS_OK;
}

int ns_json_dim(const char *path, json_t *root, const char *key, int required, int null_absent,
                json_int_t max, size_t *out, int *present, ns_err *err)
{
    json_t *v = json_object_get(root, key);
    if (v && null_absent && json_is_null(v))
        v = NULL;
    if (present)
        *present = v != NULL;
    if (!v) {
        if (required)
            return ns_fail(err, NS_ERR_FORMAT, "%s: key \"%s\" is missing", path, key);
        return NS_OK;
    }
    if (!json_is_integer(v))
        return ns_fail(err, NS_ERR_FORMAT, "%s: key \"%s\" is %s, expected a positive integer", path,
                       key, ns_json_type_name(v));
    json_int_t x = json_integer_value(v);
    if (x <= 0 || x > max)
        return ns_fail(err, NS_ERR_INVALID, "%s: key \"%s\" = %lld is out of range [1, %lld]", path,
                       key, (long long)x, (long long)max);
    *out = (size_t)x;
    return NS_OK;
}

int ns_json_number(const char *path, json_t *root, const char *key, const ns_range *r,
                   double *out, int *present, ns_err *err)
{
    json_t *v = json_object_get(root, key);
    *present = v != NULL;
    if (!v)
        return NS_OK;
    if (!json_is_number(v))
        return ns_fail(err, NS_ERR_FORMAT, "%s: key \"%s\" is %s, expected a number", path, key,
                       ns_json_type_name(v));
    double x = json_number_value(v);
    char why[256];
    if (ns_range_check_real(r, x, why, sizeof why))
        return ns_fail(err, NS_ERR_INVALID, "%s: key \"%s\": %s", path, key, why);
    *out = x;
    return NS_OK;
}

int ns_json_bool(const char *path, json_t *root, const char *key, int *out, ns_err *err)
{
    json_t *v = json_object_get(root, key);
    if (!v || json_is_null(v))
        return NS_OK;
    if (!json_is_boolean(v))
        return ns_fail(err, NS_ERR_FORMAT, "%s: key \"%s\" is %s, expected true or false", path,
                       key, ns_json_type_name(v));
    *out = json_is_true(v);
    return NS_OK;
}

int ns_json_string(const char *path, json_t *root, const char *key, const char **out, ns_err *err)
{
    json_t *v = json_object_get(root, key);
    *out = NULL;
    if (!v || json_is_null(v))
        return NS_OK;
    if (!json_is_string(v))
        return ns_fail(err, NS_ERR_FORMAT, "%s: key \"%s\" is %s, expected a string", path, key,
                       ns_json_type_name(v));
    *out = json_string_value(v);
    return NS_OK;
}

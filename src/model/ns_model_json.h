/* ns_model_json: typed reads of config.json keys (jansson), shared by the architectures' config
 * readers: each failure names the file and the key -- NS_ERR_FORMAT for a wrong type or a missing
 * required key, NS_ERR_INVALID for a value out of range or not supported. */
#ifndef NS_MODEL_JSON_H
#define NS_MODEL_JSON_H

#include <jansson.h>
#include <stddef.h>

#include "common/ns_error.h"
#include "common/ns_range.h"
#include "model/ns_model_limits.h"

/* Upper bounds of config.json's sizes, for every architecture (model/ns_model.h). */
#define NS_CFG_MAX_LAYER ((json_int_t)NS_MODEL_MAX_LAYER)
#define NS_CFG_MAX_HEAD ((json_int_t)NS_MODEL_MAX_HEAD)
#define NS_CFG_MAX_EMBD ((json_int_t)NS_MODEL_MAX_EMBD)
#define NS_CFG_MAX_CTX ((json_int_t)NS_MODEL_MAX_CTX)
#define NS_CFG_MAX_VOCAB ((json_int_t)NS_MODEL_MAX_VOCAB)
#define NS_CFG_MAX_INNER ((json_int_t)NS_MODEL_MAX_INNER)

/* "an object", "a string", "null", ... for messages. */
const char *ns_json_type_name(const json_t *v);

/* Read path (at most max_bytes; 0: 1 MB, a config's bound) as a JSON object into *root (caller
 * json_decref's it); duplicate names refused. */
int ns_json_load_object(const char *path, size_t max_bytes, json_t **root, ns_err *err);

/* A positive integer key <= max into *out. *present (may be NULL) says whether it was there; an
 * absent key is an error only when required. null counts as absent when null_absent. */
int ns_json_dim(const char *path, json_t *root, const char *key, int required, int null_absent,
                json_int_t max, size_t *out, int *present, ns_err *err);

/* A number key of the real range r (common/ns_range.h) into *out (left alone when absent);
 * *present says whether it was there. Out of range: "PATH: key "KEY": 0 is out of range [...]". */
int ns_json_number(const char *path, json_t *root, const char *key, const ns_range *r,
                   double *out, int *present, ns_err *err);

/* A boolean key into *out (left alone when absent or null). */
int ns_json_bool(const char *path, json_t *root, const char *key, int *out, ns_err *err);

/* A string key (NULL when absent or null) into *out. */
int ns_json_string(const char *path, json_t *root, const char *key, const char **out, ns_err *err);

#endif

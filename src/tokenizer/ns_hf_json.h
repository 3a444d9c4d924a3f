/* ns_hf_json: the two checks every part of a tokenizer.json (and of a tokenizer_config.json) is
 * read with: no unknown key, and an optional boolean. A leaf of src/tokenizer: ns_hf_load and
 * ns_hf_config both use it, and it calls neither (docs/STRUCTURE.md, rule 4). */
#ifndef NS_HF_JSON_H
#define NS_HF_JSON_H

#include <jansson.h>

#include "common/ns_error.h"

/* Keys of obj that are not in allowed (NULL-terminated) are refused: "path: where: unknown key
 * \"k\" (not implemented by normsweep)". */
int ns_hf_check_keys(json_t *obj, const char *const *allowed, const char *path, const char *where,
                     ns_err *err);
/* Optional boolean member (absent or null: def). */
int ns_hf_get_bool(json_t *obj, const char *key, int def, int *out, const char *path,
                   const char *where, ns_err *err);

#endif

/* ns_sweep_yaml: parse a sweep YAML document into an ns_sweep_config against the schema of
 * docs/SWEEP.md -- keys, types, single values -- collecting every problem as a
 * "FILE:LINE:COL: message" diagnostic (the YAML typing underneath: spec/ns_yaml); and the built-in
 * default sweep. No files are read. */
#ifndef NS_SWEEP_YAML_H
#define NS_SWEEP_YAML_H

#include <stddef.h>

#include "common/ns_error.h"
#include "spec/ns_sweep_config.h"
#include "spec/ns_sweep_diag.h"

/* ---- parsing: the schema alone, no files ---------------------------------------------------- */

/* Parse and validate text[0..len) (a sweep YAML document) named source_name in messages.
 * Fills *cfg (initialised here; free with ns_sweep_config_free even on failure) with every valid
 * setting, plus the defaults, and *marks (may be NULL; free with ns_sweep_marks_free) with their
 * positions. Every problem found is appended to diags: unknown keys, wrong types, empty lists,
 * duplicate keys or values, out-of-range values (T <= 0, eps <= 0, N < 1, L > L_max, ...).
 * `layers: all` / `heads: all` stay unexpanded (layers_all / heads_all, empty lists) until
 * ns_sweep_check_model. Returns NS_OK when no error was found, NS_ERR_INVALID when some were (err
 * says how many), NS_ERR_NOMEM. */
int ns_sweep_parse(const char *text, size_t len, const char *source_name, ns_sweep_config *cfg,
                   ns_sweep_marks *marks, ns_sweep_diags *diags, ns_err *err);

/* The built-in default sweep (the text of sweeps/quick.yaml, compiled in at build time). */
const char *ns_sweep_default_yaml(void);
#define NS_SWEEP_DEFAULT_NAME "<embedded>"

#endif

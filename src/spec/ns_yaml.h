/* ns_yaml: generic YAML typing on libyaml's document API, for the files spec/ reads: a node's
 * position, kind and text; the typed values of a settings file (a number of a declared range, a
 * boolean, a non-empty string); a mapping of known keys (unknown keys with a "did you mean" hint,
 * duplicate keys); the list rules (one value or a list of them; integers also as ranges
 * {from, to, step}; sorted, a duplicate reported at its later occurrence); the text checks made
 * before libyaml reads a file and libyaml's own errors -- every problem a "FILE:LINE:COL:
 * message" diagnostic (spec/ns_sweep_diag). It knows no schema: the sweep file's keys are
 * ns_sweep_yaml's. */
#ifndef NS_YAML_H
#define NS_YAML_H

#include <stddef.h>
#include <stdint.h>
#include <yaml.h>

#include "common/ns_range.h"
#include "spec/ns_sweep_diag.h"

/* A document being read: problems go to diags, named src; nomem is set when memory ran out
 * (the reader stops and the caller fails with NS_ERR_NOMEM). */
typedef struct ns_yaml {
    const char *src;
    yaml_document_t *doc;
    ns_sweep_diags *diags;
    int nomem;
} ns_yaml;

/* ---- nodes and problems ------------------------------------------------------------------- */

/* Where a node starts, 1-based. */
ns_sweep_mark ns_yaml_mark(const yaml_node_t *n);

/* A problem at m (diagnostic "SRC:LINE:COL: message"). */
void ns_yaml_problem(ns_yaml *y, ns_sweep_mark m, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
#define NS_YAML_PROBLEM(y, node, ...) ns_yaml_problem((y), ns_yaml_mark(node), __VA_ARGS__)

/* The node of index in y's document (NULL: none). */
yaml_node_t *ns_yaml_node(const ns_yaml *y, int index);
/* A scalar's text. */
const char *ns_yaml_text(const yaml_node_t *n);
/* 1 for an unquoted scalar; 1 for a null (an unquoted empty, ~, null, Null or NULL). */
int ns_yaml_is_plain(const yaml_node_t *n);
int ns_yaml_is_null(const yaml_node_t *n);
/* A short description of a node for "expected X, got Y" messages ("a list", "'abc'", ...;
 * buf holds the text of a scalar). */
const char *ns_yaml_describe(const yaml_node_t *n, char *buf, size_t size);

/* ---- mappings and scalars ----------------------------------------------------------------- */

/* Collect the pairs of a mapping whose keys are in names[0..n): vals[i] / keys[i] get the value /
 * key node of names[i] (NULL when absent). Unknown keys (with the closest name as a hint),
 * duplicate keys and keys that are not names are reported; where names the mapping ("" for the
 * top level). */
void ns_yaml_walk_mapping(ns_yaml *y, const yaml_node_t *map, const char *where,
                          const char *const *names, size_t n, yaml_node_t **vals,
                          yaml_node_t **keys);
/* 0 when n is a mapping; -1 (reported: "path: expected a mapping with keys KEYS") otherwise. */
int ns_yaml_expect_mapping(ns_yaml *y, const yaml_node_t *n, const char *path, const char *keys);

/* A number of range r (an integer into *u, a real into *d), named path in messages: 0, or -1 when
 * the node is no number of r (a collection, null, a quoted string, out of range: reported). */
int ns_yaml_num(ns_yaml *y, const yaml_node_t *n, const char *path, const ns_range *r,
                uint64_t *u, double *d);
/* The same for an integer range into a size_t. */
int ns_yaml_size(ns_yaml *y, const yaml_node_t *n, const char *path, const ns_range *r,
                 size_t *out);
/* true / True / TRUE, false / False / FALSE: 0 (*out 1 or 0), else -1 (reported). */
int ns_yaml_bool(ns_yaml *y, const yaml_node_t *n, const char *path, int *out);
/* A non-empty string without NUL, described as what in messages; replaces *dst (freeing the old
 * value). On a problem *dst becomes NULL, so later checks know not to use the setting (nor its
 * default). 0 or -1. */
int ns_yaml_string(ns_yaml *y, const yaml_node_t *n, const char *path, const char *what,
                   char **dst);

/* ---- lists -------------------------------------------------------------------------------- */

/* The list rules (docs/SWEEP.md): an integer list is one integer, one range {from, to, step}
 * (a range of at most NS_YAML_MAX_RANGE values) or a list of both; a list of reals is one number
 * or a list of numbers; each value of range r. A list holds at most NS_YAML_MAX_ITEMS values
 * (aliases can repeat a range many times over). The values kept are sorted ascending into fresh
 * arrays *vals and *marks (each value's position; a range's values carry the range's), *count
 * of them (0: none, and *vals / *marks untouched); a duplicate is reported at the occurrence
 * written later in the file and dropped, as is every value that is no number of r. */
#define NS_YAML_MAX_RANGE 100000
#define NS_YAML_MAX_ITEMS 1000000
void ns_yaml_int_list(ns_yaml *y, const yaml_node_t *n, const char *path, const ns_range *r,
                      size_t **vals, size_t *count, ns_sweep_mark **marks);
void ns_yaml_real_list(ns_yaml *y, const yaml_node_t *n, const char *path, const ns_range *r,
                       double **vals, size_t *count, ns_sweep_mark **marks);

/* ---- reading a text ----------------------------------------------------------------------- */

/* 1 when flow collections ([ ], { }) nest deeper than max in text (*at: where), outside quoted
 * scalars and comments: checked before libyaml reads a file (libyaml's cost grows with the square
 * of the depth: 200,000 levels take minutes). */
#define NS_YAML_MAX_DEPTH 64
int ns_yaml_too_deep(const char *text, size_t len, int max, ns_sweep_mark *at);

/* The checks made before libyaml reads text: UTF-8 (the first bad byte reported at its line and
 * column) and collections nested at most NS_YAML_MAX_DEPTH deep. 1 when one failed (reported). */
int ns_yaml_check_text(ns_yaml *y, const char *text, size_t len);

/* libyaml's error in parser (a reader error at the line and column of its byte offset in text, a
 * syntax error with its context) as a problem; out of memory sets y->nomem. */
void ns_yaml_report_error(ns_yaml *y, const yaml_parser_t *parser, const char *text, size_t len);

#endif

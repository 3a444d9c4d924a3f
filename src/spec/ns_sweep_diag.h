/* ns_sweep_diag: the problems found in a sweep file, each a one-line "FILE:LINE:COL: message"
 * (sorted by position), and the positions of the file's settings (marks) that the checks after
 * parsing report against. */
#ifndef NS_SWEEP_DIAG_H
#define NS_SWEEP_DIAG_H

#include <stddef.h>

#include "common/ns_error.h"

/* A position in the YAML text, 1-based; line 0 means "not in the file" (a default value). */
typedef struct ns_sweep_mark {
    size_t line, col;
} ns_sweep_mark;

typedef struct ns_sweep_diag {
    ns_sweep_mark mark;
    int is_warning;
    char *text;              /* the whole line: "FILE:LINE:COL: message" ("FILE: message" when
                                the mark is not in the file; "warning: " before warnings' text) */
} ns_sweep_diag;

typedef struct ns_sweep_diags {
    ns_sweep_diag *items;
    size_t n, cap;
    size_t nerrors;
    size_t nwarnings;
    size_t suppressed;       /* problems counted but not kept beyond NS_SWEEP_MAX_DIAGS */
    char *source;            /* the file the suppressed ones belong to */
} ns_sweep_diags;

/* At most this many diagnostics are kept; the rest are counted, and ns_sweep_diags_sort adds one
 * line saying how many were not shown (a hostile file cannot flood the terminal or memory). */
#define NS_SWEEP_MAX_DIAGS 100

/* Append a problem at mark of file source. Returns NS_OK or NS_ERR_NOMEM (the list is unchanged). */
int ns_sweep_diag_add(ns_sweep_diags *d, const char *source, ns_sweep_mark mark, int is_warning,
                      const char *fmt, ...) __attribute__((format(printf, 5, 6)));
/* 1 when a comes before b in the file (positions not in the file come last). */
int ns_sweep_mark_before(ns_sweep_mark a, ns_sweep_mark b);
/* Sort by position (stable: problems at one position keep their order; unpositioned last). */
void ns_sweep_diags_sort(ns_sweep_diags *d);
void ns_sweep_diags_free(ns_sweep_diags *d);

/* Where each setting was written (for messages of the checks that run after parsing). Item marks
 * are parallel to the config's (sorted, de-duplicated) lists; an item expanded from a range
 * {from, to, step} carries the range's mark. */
typedef struct ns_sweep_marks {
    ns_sweep_mark root;
    ns_sweep_mark model, tokenizer, corpus, strip_gutenberg;
    ns_sweep_mark shards, shard_count, L_max, shard_first, shard_stride;
    ns_sweep_mark grid, L_key, N_key, T_key, eps_key, layers_key, heads_key;
    ns_sweep_mark normalizer, sink_view, rows, sphere, seed, ks_alpha, probes, keep_samples;
    ns_sweep_mark bootstrap, bootstrap_resamples;
    ns_sweep_mark output, checkpoint_dir;
    ns_sweep_mark *L, *N, *T, *eps, *layers, *heads;
} ns_sweep_marks;

void ns_sweep_marks_free(ns_sweep_marks *m);

#endif

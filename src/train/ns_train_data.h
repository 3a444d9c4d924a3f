/* ns_train_data: the training and validation sequences of a token stream (the corpus tokenized).
 *
 * The split is deterministic and documented (docs/TRAIN.md): the stream is cut into blocks of
 * NS_TRAIN_DATA_BLOCK tokens; block k is held out for validation when k % NS_TRAIN_DATA_VAL_EVERY
 * == NS_TRAIN_DATA_VAL_EVERY - 1 (every tenth block: 10 % of the text, spread over the whole book,
 * so the validation text is the same kind of text as the training text), else it is training text.
 * A sequence is T + 1 consecutive tokens (T inputs, each followed by its target) and never crosses
 * from one split into the other.
 *
 * Training: sequence u of step s starts at a position drawn uniformly from every possible start in
 * the training text by the counter-based generator keyed (seed, s, u) -- the same on any number of
 * ranks and after any resume. Validation: the non-overlapping windows of T + 1 tokens from the
 * start of each validation block, in text order. */
#ifndef NS_TRAIN_DATA_H
#define NS_TRAIN_DATA_H

#include <stddef.h>
#include <stdint.h>

#include "common/ns_error.h"

#define NS_TRAIN_DATA_BLOCK 8192
#define NS_TRAIN_DATA_VAL_EVERY 10

typedef struct ns_train_data_run {
    size_t begin, end;    /* tokens [begin, end) of one stretch of consecutive training blocks */
    size_t first_start;   /* number of training starts in the runs before this one */
} ns_train_data_run;

typedef struct ns_train_data {
    const int32_t *tokens; /* borrowed */
    size_t n_tokens, T;
    ns_train_data_run *runs;
    size_t n_runs;
    size_t n_starts;       /* possible training starts */
    size_t *val_start;     /* first token of each validation window */
    size_t n_val;
    size_t train_tokens, val_tokens; /* tokens in each split */
} ns_train_data;

/* Split tokens[0..n) (borrowed, must outlive d) for sequences of T inputs. NS_ERR_INVALID naming
 * the sizes when the text has no training start or no validation window of T + 1 tokens. */
int ns_train_data_init(ns_train_data *d, const int32_t *tokens, size_t n, size_t T, ns_err *err);
void ns_train_data_free(ns_train_data *d);

/* The T + 1 tokens of training sequence `unit` of step `step` for seed. */
const int32_t *ns_train_data_train_sequence(const ns_train_data *d, uint64_t seed, uint64_t step,
                                            uint64_t unit);

/* The T + 1 tokens of validation window k (< d->n_val). */
const int32_t *ns_train_data_val_sequence(const ns_train_data *d, size_t k);

/* The windows an evaluation of at most max_windows uses (0: all): count, and the k-th one's index
 * (evenly spread over the validation text: floor(k * n_val / count)). */
size_t ns_train_data_val_count(const ns_train_data *d, size_t max_windows);
size_t ns_train_data_val_index(const ns_train_data *d, size_t max_windows, size_t k);

#endif

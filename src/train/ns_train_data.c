/* ns_train_data: the deterministic train/validation split of a token stream and the sequences of
 * each training step (see ns_train_data.h). */
#include "train/ns_train_data.h"

#include <stdlib.h>
#include <string.h>

#include "analysis/ns_rng.h"

/* The generator's first key word: the trainer's data draws, distinct from any other stream. */
#define NS_TRAIN_DATA_KEY_TAG 0x747261696e646174ull /* "traindat" */

static int is_val_block(size_t k)
{
    return k % NS_TRAIN_DATA_VAL_EVERY == NS_TRAIN_DATA_VAL_EVERY - 1;
}

void ns_train_data_free(ns_train_data *d)
{
    if (!d)
        return;
    free(d->runs);
    free(d->val_start);
    memset(d, 0, sizeof *d);
}

int ns_train_data_init(ns_train_data *d, const int32_t *tokens, size_t n, size_t T, ns_err *err)
{
    memset(d, 0, sizeof *d);
    d->tokens = tokens;
    d->n_tokens = n;
    d->T = T;
    size_t nblocks = (n + NS_TRAIN_DATA_BLOCK - 1) / NS_TRAIN_DATA_BLOCK, win = T + 1;
    size_t per_block = NS_TRAIN_DATA_BLOCK / win;
    d->runs = calloc(nblocks / NS_TRAIN_DATA_VAL_EVERY + 2, sizeof *d->runs);
    d->val_start =
        calloc((nblocks / NS_TRAIN_DATA_VAL_EVERY + 1) * (per_block + 1) + 1, sizeof(size_t));
    if (!d->runs || !d->val_start) {
        ns_train_data_free(d);
        return ns_fail(err, NS_ERR_NOMEM, "training data: out of memory");
    }
    for (size_t k = 0; k < nblocks; k++) {
        size_t b = k * NS_TRAIN_DATA_BLOCK,
               e = b + NS_TRAIN_DATA_BLOCK < n ? b + NS_TRAIN_DATA_BLOCK : n;
        if (is_val_block(k)) {
            d->val_tokens += e - b;
            for (size_t s = b; s + win <= e; s += win)
                d->val_start[d->n_val++] = s;
            continue;
        }
        d->train_tokens += e - b;
        if (d->n_runs && d->runs[d->n_runs - 1].end == b)
            d->runs[d->n_runs - 1].end = e; /* extends the current stretch */
        else
            d->runs[d->n_runs++] = (ns_train_data_run){b, e, 0};
    }
    for (size_t r = 0; r < d->n_runs; r++) {
        ns_train_data_run *run = &d->runs[r];
        run->first_start = d->n_starts;
        if (run->end - run->begin >= win)
            d->n_starts += run->end - run->begin - win + 1;
    }
    if (d->n_starts == 0 || d->n_val == 0) {
        size_t nt = d->train_tokens, nv = d->val_tokens;
        ns_train_data_free(d);
        return ns_fail(err, NS_ERR_INVALID,
                       "training data: %zu tokens split into %zu for training "
                       "and %zu for validation (blocks of %d, every %dth held out) leave no %s "
                       "sequence of %zu tokens; use a longer text or a shorter --ctx",
                       n, nt, nv, NS_TRAIN_DATA_BLOCK, NS_TRAIN_DATA_VAL_EVERY,
                       nt ? "validation" : "training", win);
    }
    return NS_OK;
}

const int32_t *ns_train_data_train_sequence(const ns_train_data *d, uint64_t seed, uint64_t step,
                                            uint64_t unit)
{
    uint64_t key[4] = {NS_TRAIN_DATA_KEY_TAG, seed, step, unit};
    ns_rng r;
    ns_rng_init(&r, ns_rng_key(key, 4));
    size_t s = (size_t)ns_rng_below(&r, d->n_starts);
    size_t lo = 0, hi = d->n_runs; /* the last run whose first_start <= s */
    while (hi - lo > 1) {
        size_t mid = lo + (hi - lo) / 2;
        if (d->runs[mid].first_start <= s)
            lo = mid;
        else
            hi = mid;
    }
    return d->tokens + d->runs[lo].begin + (s - d->runs[lo].first_start);
}

const int32_t *ns_train_data_val_sequence(const ns_train_data *d, size_t k)
{
    return d->tokens + d->val_start[k];
}

size_t ns_train_data_val_count(const ns_train_data *d, size_t max_windows)
{
    return max_windows == 0 || max_windows > d->n_val ? d->n_val : max_windows;
}

size_t ns_train_data_val_index(const ns_train_data *d, size_t max_windows, size_t k)
{
    size_t count = ns_train_data_val_count(d, max_windows);
    return (size_t)((unsigned __int128)k * d->n_val / count);
}

/* ns_tokens: the growable array of token ids a tokenizer appends to (owned by the caller). */
#ifndef NS_TOKENS_H
#define NS_TOKENS_H

#include <stddef.h>
#include <stdint.h>

#include "common/ns_error.h"

/* A growable array of token ids; owned by the caller, released with ns_tokens_free. */
typedef struct ns_tokens {
    int32_t *ids;
    size_t n;
    size_t cap;
} ns_tokens;

void ns_tokens_free(ns_tokens *t);

/* Room for extra more ids (capacity doubled from 256); NS_ERR_NOMEM when it cannot grow. */
int ns_tokens_reserve(ns_tokens *t, size_t extra, ns_err *err);

#endif

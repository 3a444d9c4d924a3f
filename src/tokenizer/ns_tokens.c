/* ns_tokens: the growable array of token ids (release, and room for more ids). */
#include "tokenizer/ns_tokens.h"

#include <stdlib.h>

void ns_tokens_free(ns_tokens *t)
{
    if (!t)
        return;
    free(t->ids);
    t->ids = NULL;
    t->n = t->cap = 0;
}

int ns_tokens_reserve(ns_tokens *t, size_t extra, ns_err *err)
{
    if (t->n + extra <= t->cap)
        return NS_OK;
    size_t cap = t->cap ? t->cap : 256;
    while (cap < t->n + extra)
        cap *= 2;
    int32_t *ids = realloc(t->ids, cap * sizeof *ids);
    if (!ids)
        return ns_fail(err, NS_ERR_NOMEM, "tokenizer: cannot grow the token array to %zu ids", cap);
    t->ids = ids;
    t->cap = cap;
    return NS_OK;
}

/* ns_pretok: GPT-2's pre-tokenizer, the walk of a text with GPT-2's pattern (tok->re, PCRE2). */
#ifndef NS_PRETOK_H
#define NS_PRETOK_H

#include <stddef.h>

#include "common/ns_error.h"
#include "tokenizer/ns_tok_vocab.h"

/* Pre-tokenizer: walks text with GPT-2's pattern. Matches are the pre-tokens; the bytes between
 * two matches (or after the last) can only be invalid UTF-8 sequences, which no pattern item
 * matches under PCRE2_MATCH_INVALID_UTF: each maximal such run is one pre-token of its own. */
typedef struct ns_pretok {
    const pcre2_code *re;
    pcre2_match_data *md;
    const char *text;
    size_t len;
    size_t pos;       /* everything before pos has been returned */
    size_t m_start;   /* pending match (valid when have_match) */
    size_t m_end;
    int have_match;
} ns_pretok;

/* Start walking text[0..len); NS_ERR_NOMEM if the match data cannot be allocated. */
int ns_pretok_init(ns_pretok *it, const ns_tokenizer *tok, const char *text, size_t len,
                   ns_err *err);
/* Next pre-token: returns 1 and sets *start, *n (and *invalid = 1 for an invalid-UTF-8 run),
 * 0 at the end, or a negative value with err filled (PCRE2 failure, e.g. out of memory). */
int ns_pretok_next(ns_pretok *it, size_t *start, size_t *n, int *invalid, ns_err *err);
void ns_pretok_free(ns_pretok *it);

#endif

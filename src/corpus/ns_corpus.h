/* ns_corpus: the sweep's token stream: load the corpus text, optionally strip the Project
 * Gutenberg header and licence, tokenize it once, and cut it into shards of L_max tokens. */
#ifndef NS_CORPUS_H
#define NS_CORPUS_H

#include <stddef.h>
#include <stdint.h>

#include "common/ns_error.h"
#include "tokenizer/ns_tokenizer.h"

typedef struct ns_corpus {
    char *path;            /* the text file read (owned) */
    ns_tokens tokens;      /* token ids of the (stripped) text */
    size_t text_bytes;     /* size of the file */
    size_t body_begin;     /* byte range of the text that was tokenized: [body_begin, body_end) */
    size_t body_end;
    int stripped;          /* 1 if the Gutenberg header and licence were dropped */
} ns_corpus;

/* Find the body of a Project Gutenberg text: it starts at the line after the
 * "*** START OF THE PROJECT GUTENBERG EBOOK ..." marker line and ends at the start of the
 * following "*** END OF THE PROJECT GUTENBERG EBOOK ..." line ("THIS" instead of "THE" and any
 * letter case are accepted; both marker lines are dropped, nothing else is trimmed).
 * name is used in messages. Missing markers give NS_ERR_FORMAT naming the marker. */
int ns_gutenberg_body(const char *text, size_t len, const char *name, size_t *begin, size_t *end,
                      ns_err *err);

/* Length of the valid UTF-8 sequence at s[0..n) (1 to 4), or 0 when it is invalid: a stray
 * continuation byte, an overlong form, a surrogate, a code point above U+10FFFF, a truncated
 * sequence. (The sweep file's reader checks its text with it too.) */
size_t ns_corpus_utf8_len(const unsigned char *s, size_t n);

/* Check that text[0..len) is text: no NUL byte, valid UTF-8 throughout (no stray or truncated
 * sequence, overlong form, surrogate or code point above U+10FFFF; a byte order mark is fine).
 * NS_ERR_INVALID (not NS_ERR_FORMAT, which is the Gutenberg markers') naming the file (name),
 * the first bad byte's offset and, for invalid UTF-8, its value and line. */
int ns_corpus_check_text(const char *text, size_t len, const char *name, ns_err *err);

/* Check text[0..len) with ns_corpus_check_text, strip it when strip_gutenberg, and tokenize the
 * result with tok. name is used in messages and stored as path. *out is filled (free with
 * ns_corpus_free) only on success; errors name the text. */
int ns_corpus_from_text(const char *text, size_t len, const char *name, int strip_gutenberg,
                        const ns_tokenizer *tok, ns_corpus *out, ns_err *err);

void ns_corpus_free(ns_corpus *c);

/* Tokens that `count` shards of L_max tokens starting at token `first`, `stride` apart, need:
 * first + (count - 1) * stride + L_max. NS_ERR_INVALID when count or L_max is 0 or the sum
 * overflows. */
int ns_corpus_tokens_needed(size_t count, size_t L_max, size_t first, size_t stride, size_t *needed,
                            ns_err *err);

/* Check that the shards fit in n_available tokens; NS_ERR_INVALID otherwise, with a message
 * naming how many tokens are available and how many are needed. */
int ns_corpus_check_shards(size_t n_available, size_t count, size_t L_max, size_t first,
                           size_t stride, ns_err *err);

/* Token range of shard k: [*start, *start + L_max) with *start = first + k * stride.
 * NS_ERR_INVALID (naming available vs needed tokens) when it does not fit in n_available. */
int ns_corpus_shard_range(size_t n_available, size_t L_max, size_t first, size_t stride, size_t k,
                          size_t *start, ns_err *err);

/* Convenience: pointer to shard k's L_max token ids inside c (valid while c lives). */
int ns_corpus_shard(const ns_corpus *c, size_t L_max, size_t first, size_t stride, size_t k,
                    const int32_t **ids, ns_err *err);

#endif

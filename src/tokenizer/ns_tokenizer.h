/* ns_tokenizer: GPT-2 byte-level BPE (encoder.json + vocab.bpe, or vocab.json + merges.txt).
 * Knows nothing of models. */
#ifndef NS_TOKENIZER_H
#define NS_TOKENIZER_H

#include <stddef.h>
#include <stdint.h>

#include "common/ns_error.h"

typedef struct ns_tokenizer ns_tokenizer;

/* A growable array of token ids; owned by the caller, released with ns_tokens_free. */
typedef struct ns_tokens {
    int32_t *ids;
    size_t n;
    size_t cap;
} ns_tokens;

void ns_tokens_free(ns_tokens *t);

/* Load the tokenizer files from dir: encoder.json + vocab.bpe (OpenAI names) or
 * vocab.json + merges.txt (Hugging Face names). *out is owned by the caller. */
int ns_tokenizer_load(const char *dir, ns_tokenizer **out, ns_err *err);
void ns_tokenizer_free(ns_tokenizer *tok);

/* Append the ids of text[0..len) to out. Invalid UTF-8 is tokenized byte by byte
 * (GPT-2 is byte-level); never fails on content, only on allocation. */
int ns_tokenizer_encode(const ns_tokenizer *tok, const char *text, size_t len, ns_tokens *out,
                        ns_err *err);

/* Vocabulary size (50257 for GPT-2). */
size_t ns_tokenizer_vocab_size(const ns_tokenizer *tok);

/* --- additions --- */


/* The id of the token whose raw bytes are bytes[0..len), or -1 if there is none. */
int32_t ns_tokenizer_token_id(const ns_tokenizer *tok, const char *bytes, size_t len);

/* Decode ids back to bytes: *out is a fresh NUL-terminated buffer (caller frees), *len excludes
 * the NUL. Fails with NS_ERR_INVALID naming the position of an id outside the vocabulary. */
int ns_tokenizer_decode(const ns_tokenizer *tok, const int32_t *ids, size_t n, char **out,
                        size_t *len, ns_err *err);


#endif

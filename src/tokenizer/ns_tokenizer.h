/* ns_tokenizer: byte-level BPE from GPT-2's files (encoder.json + vocab.bpe, or vocab.json +
 * merges.txt) or from a Hugging Face tokenizer.json (Qwen2/Qwen3, Llama 3, ...; docs/TOKENIZER.md).
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

/* Load a tokenizer from path: a tokenizer.json file, or a directory holding tokenizer.json
 * (preferred), encoder.json + vocab.bpe (OpenAI names) or vocab.json + merges.txt (Hugging Face
 * names). What a tokenizer.json holds that is not implemented is refused (NS_ERR_INVALID naming
 * the file and the key). *out is owned by the caller. */
int ns_tokenizer_load(const char *path, ns_tokenizer **out, ns_err *err);
void ns_tokenizer_free(ns_tokenizer *tok);

/* Append the ids of text[0..len) to out, without the tokens a post-processor would add (Hugging
 * Face's add_special_tokens=False). GPT-2's files: invalid UTF-8 is tokenized byte by byte and it
 * never fails on content, only on allocation. tokenizer.json: invalid UTF-8 is refused
 * (NS_ERR_INVALID naming the byte offset), as Hugging Face tokenizers take Unicode text. */
int ns_tokenizer_encode(const ns_tokenizer *tok, const char *text, size_t len, ns_tokens *out,
                        ns_err *err);

/* Vocabulary size: the largest token id + 1, added tokens included (50257 for GPT-2, 151669 for
 * Qwen3's tokenizer.json, 128256 for Llama 3's). */
size_t ns_tokenizer_vocab_size(const ns_tokenizer *tok);

/* "tokenizer.json" or "gpt2-bpe". */
const char *ns_tokenizer_format(const ns_tokenizer *tok);
/* The file that identifies the tokenizer: the tokenizer.json, or the merges file. */
const char *ns_tokenizer_path(const ns_tokenizer *tok);
/* The beginning-of-sequence token (-1: none): *added is 1 when Hugging Face would prepend it
 * with add_special_tokens=True (the post-processor, or tokenizer_config.json's add_bos_token);
 * *source says where it was found ("post_processor", "tokenizer_config.json", ""). Encoding never
 * adds it: the caller decides. */
int32_t ns_tokenizer_bos_id(const ns_tokenizer *tok, int *added, const char **source);
/* Number of merge rules loaded (50000 for GPT-2). */
size_t ns_tokenizer_merge_count(const ns_tokenizer *tok);
/* Number of added tokens (tokenizer.json's added_tokens; 0 for GPT-2's files). */
size_t ns_tokenizer_added_count(const ns_tokenizer *tok);

/* --- additions --- */


/* The id of the token whose raw bytes are bytes[0..len), or -1 if there is none. */
int32_t ns_tokenizer_token_id(const ns_tokenizer *tok, const char *bytes, size_t len);

/* Decode ids back to bytes: *out is a fresh NUL-terminated buffer (caller frees), *len excludes
 * the NUL. Fails with NS_ERR_INVALID naming the position of an id outside the vocabulary. */
int ns_tokenizer_decode(const ns_tokenizer *tok, const int32_t *ids, size_t n, char **out,
                        size_t *len, ns_err *err);


#endif

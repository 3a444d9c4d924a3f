/* ns_tokenizer_internal: what the module's unit test inspects besides the public interface (the
 * data layout, byte alphabet and tables are in ns_tok_vocab.h, the pre-tokenizer in ns_pretok.h,
 * the BPE kernels in ns_bpe.h). Included by ns_tokenizer.c and the tests only: the module's
 * other units include the leaf headers, never this one (docs/STRUCTURE.md, rule 4). */
#ifndef NS_TOKENIZER_INTERNAL_H
#define NS_TOKENIZER_INTERNAL_H

#include <stddef.h>
#include <stdint.h>

#include "common/ns_error.h"
#include "tokenizer/ns_bpe.h"
#include "tokenizer/ns_pretok.h"
#include "tokenizer/ns_tok_vocab.h"
#include "tokenizer/ns_tokenizer.h"

/* The raw bytes a token stands for (not NUL-terminated), or NULL when id is out of range. */
const char *ns_tokenizer_token_bytes(const ns_tokenizer *tok, int32_t id, size_t *len);
/* Path of the merges file the tokenizer was loaded from (".../vocab.bpe" or ".../merges.txt"). */
const char *ns_tokenizer_merges_path(const ns_tokenizer *tok);

/* Tokenize one pre-token's bytes (BPE from its single-byte tokens) with the kernel the
 * tokenizer uses (or the reference when use_reference); appends to out. */
int ns_tokenizer_encode_word(const ns_tokenizer *tok, const char *word, size_t n,
                             int use_reference, ns_tokens *out, ns_err *err);

#endif

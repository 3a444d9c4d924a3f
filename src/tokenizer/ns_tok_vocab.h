/* ns_tok_vocab: the tokenizer's data (struct ns_tokenizer) and the tables both loaders (GPT-2's
 * files in ns_tokenizer.c, a tokenizer.json in ns_hf_load.c) fill: GPT-2's byte alphabet, the
 * vocabulary map (bytes -> id) and the merge map. A leaf of src/tokenizer: it calls none of the
 * module's other units (docs/STRUCTURE.md, rule 4). Internal to src/tokenizer. */
#ifndef NS_TOK_VOCAB_H
#define NS_TOK_VOCAB_H

#define PCRE2_CODE_UNIT_WIDTH 8
#include <pcre2.h>
#include <stddef.h>
#include <stdint.h>

#include "tokenizer/ns_bpe.h"

typedef struct ns_tokenizer ns_tokenizer;

/* GPT-2's pre-tokenizer pattern (compiled with PCRE2_UTF | PCRE2_UCP | PCRE2_MATCH_INVALID_UTF). */
#define NS_GPT2_PATTERN \
    "'s|'t|'re|'ve|'m|'ll|'d| ?\\p{L}+| ?\\p{N}+| ?[^\\s\\p{L}\\p{N}]+|\\s+(?!\\S)|\\s+"

/* Number of code points GPT-2's byte-to-unicode map uses: bytes map into [0, 324). */
#define NS_BYTE_UNICODE_SPAN 324

/* GPT-2's bytes_to_unicode(): printable Latin-1 bytes ('!'..'~', '¡'..'¬', '®'..'ÿ') map to
 * themselves, the other 68 bytes to 256, 257, ... in byte order. */
void ns_byte_to_unicode(uint32_t cp[256]);

/* The inverse of the map: dec[code point] = byte, -1 outside GPT-2's alphabet. */
void ns_byte_decoder(int16_t dec[NS_BYTE_UNICODE_SPAN]);

/* 64-bit FNV-1a hash of a byte string. */
uint64_t ns_tok_hash(const void *data, size_t len);

struct ns_tokenizer {
    size_t n_vocab;
    char *bytes;        /* raw bytes of every token, concatenated */
    size_t *off;        /* token id's bytes are bytes[off[id] .. off[id] + len[id]) */
    uint32_t *len;
    uint32_t *vocab_slots; /* bytes -> id: id + 1 per slot, 0 empty; capacity vocab_mask + 1 */
    size_t vocab_mask;
    int32_t byte_id[256];  /* id of the single-byte token of each byte value */
    ns_merges merges;
    size_t n_merge_lines;  /* merge rules read (duplicates included) */
    int well_ordered;   /* every merge's parts are made only by earlier merges (see ns_bpe.c) */
    pcre2_code *re;
    int jit;            /* 1 when the pattern was JIT-compiled */
    char *merges_path;
    /* tokenizer.json only (NULL for GPT-2's files): */
    struct ns_hf *hf;   /* its pipeline (ns_hf.h) */
    uint8_t *present;   /* per id: 0 no token (a hole), 1 vocabulary token in the byte alphabet,
                           2 vocabulary token outside it (kept as UTF-8), 3 added token only */
    char *path;         /* the file loaded (tokenizer.json, or the merges file) */
};

/* Map a token written in GPT-2's byte-to-unicode alphabet back to raw bytes, appended to
 * buf[*used..] (buf must hold at least n more bytes: each character gives one byte).
 * Returns 0, or -1 when a character is outside the alphabet or the UTF-8 is invalid. */
int ns_tok_unmap(const int16_t dec[NS_BYTE_UNICODE_SPAN], const char *s, size_t n, char *buf,
                 size_t *used);

/* The id of the token whose raw bytes are bytes[0..len), or -1 (ns_tokenizer_token_id). */
int32_t ns_tok_vocab_find(const ns_tokenizer *tok, const char *bytes, size_t len);
/* Enter token id (its bytes already in tok->bytes) into the vocabulary map. */
void ns_tok_vocab_insert(ns_tokenizer *tok, uint32_t id);
size_t ns_tok_pow2(size_t n); /* the least power of two >= n (at least 16) */

/* Add a merge rule; returns -1 (nothing added) when the pair already has one, its rank in *first
 * (GPT-2's dict(zip(merges, range(n))) would silently keep the later rank: such a vocab.bpe is
 * broken, and the text would tokenize differently from the tokenizer it was meant to be). With
 * first NULL (tokenizer.json) a repeated pair takes its later rank, as the tokenizers library's
 * merge map does. */
int ns_tok_merges_put(ns_merges *m, int32_t left, int32_t right, int32_t rank, int32_t merged,
                      int32_t *first);

/* Free tok and everything it owns except its tokenizer.json pipeline tok->hf, which the caller
 * frees first (ns_hf_free): ns_tokenizer_free, and the tokenizer.json loader's cleanup on
 * failure. NULL is fine. */
void ns_tok_release(ns_tokenizer *tok);

#endif

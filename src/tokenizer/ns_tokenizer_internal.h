/* ns_tokenizer_internal: the tokenizer's data layout, hash tables, pre-tokenizer and BPE kernels,
 * shared by the module's sources and its unit test (not part of the public interface). */
#ifndef NS_TOKENIZER_INTERNAL_H
#define NS_TOKENIZER_INTERNAL_H

#define PCRE2_CODE_UNIT_WIDTH 8
#include <pcre2.h>
#include <stddef.h>
#include <stdint.h>

#include "common/ns_error.h"
#include "tokenizer/ns_bpe.h"
#include "tokenizer/ns_tokenizer.h"

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

/* Shared with the tokenizer.json loader (ns_hf_load.c). */
int ns_tok_unmap(const int16_t dec[NS_BYTE_UNICODE_SPAN], const char *s, size_t n, char *buf,
                 size_t *used);
void ns_tok_vocab_insert(ns_tokenizer *tok, uint32_t id);
size_t ns_tok_pow2(size_t n); /* the least power of two >= n (at least 16) */
void ns_tok_merges_put(ns_merges *m, int32_t left, int32_t right, int32_t rank, int32_t merged);
int ns_tokens_reserve(ns_tokens *t, size_t extra, ns_err *err);
/* BPE of one pre-token's bytes with Hugging Face's kernel and options (ignore_merges, byte
 * fallback, unk), appended to out. */
int ns_hf_encode_word(const ns_tokenizer *tok, const char *w, size_t n, ns_bpe_work *work,
                      ns_tokens *out, ns_err *err);

/* What the module's tests inspect besides the public interface. */
/* The raw bytes a token stands for (not NUL-terminated), or NULL when id is out of range. */
const char *ns_tokenizer_token_bytes(const ns_tokenizer *tok, int32_t id, size_t *len);
/* Path of the merges file the tokenizer was loaded from (".../vocab.bpe" or ".../merges.txt"). */
const char *ns_tokenizer_merges_path(const ns_tokenizer *tok);

/* Tokenize one pre-token's bytes (BPE from its single-byte tokens) with the kernel the
 * tokenizer uses (or the reference when use_reference); appends to out. */
int ns_tokenizer_encode_word(const ns_tokenizer *tok, const char *word, size_t n,
                             int use_reference, ns_tokens *out, ns_err *err);

#endif

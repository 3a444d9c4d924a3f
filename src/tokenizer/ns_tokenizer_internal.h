/* ns_tokenizer_internal: the tokenizer's data layout, hash tables, pre-tokenizer and BPE kernels,
 * shared by the module's sources and its unit test (not part of the public interface). */
#ifndef NS_TOKENIZER_INTERNAL_H
#define NS_TOKENIZER_INTERNAL_H

#define PCRE2_CODE_UNIT_WIDTH 8
#include <pcre2.h>
#include <stddef.h>
#include <stdint.h>

#include "common/ns_error.h"
#include "tokenizer/ns_tokenizer.h"

/* GPT-2's pre-tokenizer pattern (compiled with PCRE2_UTF | PCRE2_UCP | PCRE2_MATCH_INVALID_UTF). */
#define NS_GPT2_PATTERN \
    "'s|'t|'re|'ve|'m|'ll|'d| ?\\p{L}+| ?\\p{N}+| ?[^\\s\\p{L}\\p{N}]+|\\s+(?!\\S)|\\s+"

/* Number of code points GPT-2's byte-to-unicode map uses: bytes map into [0, 324). */
#define NS_BYTE_UNICODE_SPAN 324

/* GPT-2's bytes_to_unicode(): printable Latin-1 bytes ('!'..'~', '¡'..'¬', '®'..'ÿ') map to
 * themselves, the other 68 bytes to 256, 257, ... in byte order. */
void ns_byte_to_unicode(uint32_t cp[256]);

/* 64-bit FNV-1a hash of a byte string. */
uint64_t ns_tok_hash(const void *data, size_t len);

/* Merge rules: (left id, right id) -> (rank, merged id), open addressing. */
typedef struct ns_merge_entry {
    uint64_t key;   /* (uint64)left << 32 | right; NS_MERGE_EMPTY when unused */
    int32_t rank;   /* line order in the merges file, 0 = highest priority */
    int32_t merged; /* id of the token left+right */
} ns_merge_entry;
#define NS_MERGE_EMPTY UINT64_MAX

typedef struct ns_merges {
    ns_merge_entry *slots;
    size_t mask;  /* capacity - 1 (capacity a power of two) */
    size_t count; /* distinct pairs */
} ns_merges;

/* The entry for the pair (left, right), or NULL when the pair never merges. */
static inline const ns_merge_entry *ns_merges_find(const ns_merges *m, int32_t left, int32_t right)
{
    uint64_t key = (uint64_t)(uint32_t)left << 32 | (uint32_t)right;
    size_t i = (size_t)((key * 0x9E3779B97F4A7C15ull) >> 20) & m->mask;
    for (;;) {
        const ns_merge_entry *e = &m->slots[i];
        if (e->key == key)
            return e;
        if (e->key == NS_MERGE_EMPTY)
            return NULL;
        i = (i + 1) & m->mask;
    }
}

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

/* Scratch space for ns_bpe_fast, sized for words of up to cap symbols. */
typedef struct ns_bpe_work {
    size_t *prev, *next;
    struct ns_bpe_cand *heap;
    size_t cap;
} ns_bpe_work;

/* Make w hold words of n symbols; NS_ERR_NOMEM on failure. */
int ns_bpe_work_reserve(ns_bpe_work *w, size_t n, ns_err *err);
void ns_bpe_work_free(ns_bpe_work *w);

/* Reference BPE, GPT-2's own procedure: repeatedly take the adjacent pair of lowest rank and
 * merge all its non-overlapping occurrences from left to right. ids[0..*n) is rewritten in place
 * (*n shrinks). O(n^2) per word; kept to test ns_bpe_fast and for merge files that are not
 * well ordered. */
void ns_bpe_reference(int32_t *ids, size_t *n, const ns_merges *m);

/* Fast BPE with a min-heap of candidate pairs ordered by (rank, position): O(n log n). Gives the
 * reference's result whenever the merges are well ordered (every merge's parts are single
 * bytes or made by merges of lower rank), which GPT-2's are; w must hold *n symbols. */
void ns_bpe_fast(int32_t *ids, size_t *n, const ns_merges *m, ns_bpe_work *w);

/* Tokenize one pre-token's bytes (BPE from its single-byte tokens) with the kernel the
 * tokenizer uses (or the reference when use_reference); appends to out. */
int ns_tokenizer_encode_word(const ns_tokenizer *tok, const char *word, size_t n,
                             int use_reference, ns_tokens *out, ns_err *err);

#endif

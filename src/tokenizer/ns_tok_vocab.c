/* ns_tok_vocab: the tables of a tokenizer that both loaders fill -- GPT-2's byte alphabet, the
 * vocabulary map (bytes -> id), the merge map -- and the release of a tokenizer's own memory.
 * A leaf of src/tokenizer (ns_tok_vocab.h). */
#include "tokenizer/ns_tok_vocab.h"

#include <stdlib.h>
#include <string.h>

/* ---------- GPT-2's byte alphabet ---------- */

void ns_byte_to_unicode(uint32_t cp[256])
{
    uint32_t extra = 256;
    for (uint32_t b = 0; b < 256; b++) {
        int printable = (b >= '!' && b <= '~') || (b >= 0xA1 && b <= 0xAC) || (b >= 0xAE);
        cp[b] = printable ? b : extra++;
    }
}

void ns_byte_decoder(int16_t dec[NS_BYTE_UNICODE_SPAN])
{
    uint32_t cp[256];
    ns_byte_to_unicode(cp);
    for (size_t i = 0; i < NS_BYTE_UNICODE_SPAN; i++)
        dec[i] = -1;
    for (int b = 0; b < 256; b++)
        dec[cp[b]] = (int16_t)b;
}

uint64_t ns_tok_hash(const void *data, size_t len)
{
    const unsigned char *p = data;
    uint64_t h = 0xcbf29ce484222325ull;
    for (size_t i = 0; i < len; i++) {
        h ^= p[i];
        h *= 0x100000001b3ull;
    }
    return h;
}

size_t ns_tok_pow2(size_t n)
{
    size_t c = 16;
    while (c < n)
        c *= 2;
    return c;
}

/* Decode one UTF-8 code point from s[0..n); returns its length, or 0 if invalid. */
static size_t utf8_next(const unsigned char *s, size_t n, uint32_t *cp)
{
    if (n == 0)
        return 0;
    unsigned char c = s[0];
    if (c < 0x80) {
        *cp = c;
        return 1;
    }
    size_t k;
    uint32_t v, min;
    if ((c & 0xE0) == 0xC0) { k = 2; v = c & 0x1F; min = 0x80; }
    else if ((c & 0xF0) == 0xE0) { k = 3; v = c & 0x0F; min = 0x800; }
    else if ((c & 0xF8) == 0xF0) { k = 4; v = c & 0x07; min = 0x10000; }
    else return 0;
    if (n < k)
        return 0;
    for (size_t i = 1; i < k; i++) {
        if ((s[i] & 0xC0) != 0x80)
            return 0;
        v = v << 6 | (s[i] & 0x3F);
    }
    if (v < min || v > 0x10FFFF || (v >= 0xD800 && v <= 0xDFFF))
        return 0;
    *cp = v;
    return k;
}

int ns_tok_unmap(const int16_t dec[NS_BYTE_UNICODE_SPAN], const char *s, size_t n, char *buf,
                 size_t *used)
{
    const unsigned char *p = (const unsigned char *)s;
    size_t i = 0;
    while (i < n) {
        uint32_t cp;
        size_t k = utf8_next(p + i, n - i, &cp);
        if (k == 0 || cp >= NS_BYTE_UNICODE_SPAN || dec[cp] < 0)
            return -1;
        buf[(*used)++] = (char)dec[cp];
        i += k;
    }
    return 0;
}

/* ---------- the vocabulary map (bytes -> id) ---------- */

int32_t ns_tok_vocab_find(const ns_tokenizer *tok, const char *bytes, size_t len)
{
    size_t i = (size_t)ns_tok_hash(bytes, len) & tok->vocab_mask;
    for (;;) {
        uint32_t s = tok->vocab_slots[i];
        if (s == 0)
            return -1;
        uint32_t id = s - 1;
        if (tok->len[id] == len && memcmp(tok->bytes + tok->off[id], bytes, len) == 0)
            return (int32_t)id;
        i = (i + 1) & tok->vocab_mask;
    }
}

void ns_tok_vocab_insert(ns_tokenizer *tok, uint32_t id)
{
    size_t i = (size_t)ns_tok_hash(tok->bytes + tok->off[id], tok->len[id]) & tok->vocab_mask;
    while (tok->vocab_slots[i] != 0)
        i = (i + 1) & tok->vocab_mask;
    tok->vocab_slots[i] = id + 1;
}

/* ---------- the merge map ---------- */

int ns_tok_merges_put(ns_merges *m, int32_t left, int32_t right, int32_t rank, int32_t merged,
                      int32_t *first)
{
    uint64_t key = (uint64_t)(uint32_t)left << 32 | (uint32_t)right;
    size_t i = (size_t)((key * 0x9E3779B97F4A7C15ull) >> 20) & m->mask;
    while (m->slots[i].key != NS_MERGE_EMPTY && m->slots[i].key != key)
        i = (i + 1) & m->mask;
    if (m->slots[i].key == key && first) {
        *first = m->slots[i].rank;
        return -1;
    }
    if (m->slots[i].key != key)
        m->count++;
    m->slots[i] = (ns_merge_entry){key, rank, merged};
    return 0;
}

/* ---------- release ---------- */

void ns_tok_release(ns_tokenizer *tok)
{
    if (!tok)
        return;
    free(tok->present);
    free(tok->path);
    pcre2_code_free(tok->re);
    free(tok->merges.slots);
    free(tok->vocab_slots);
    free(tok->bytes);
    free(tok->off);
    free(tok->len);
    free(tok->merges_path);
    free(tok);
}

/* ns_hf_added: finding added tokens in text as Hugging Face's AddedVocabulary does: a byte trie
 * searched leftmost-longest, then the single_word, lstrip and rstrip rules (Rust regex's Unicode
 * \w and \s, through PCRE2's \p{Alphabetic}, \p{White_Space}, ...). */
#include <stdlib.h>
#include <string.h>

#include "tokenizer/ns_hf.h"

/* ---------- UTF-8 ---------- */

size_t ns_utf8_invalid_at(const char *s, size_t n)
{
    const unsigned char *p = (const unsigned char *)s;
    size_t i = 0;
    while (i < n) {
        unsigned char c = p[i];
        if (c < 0x80) {
            i++;
            continue;
        }
        size_t k;
        uint32_t v, min;
        if ((c & 0xE0) == 0xC0) { k = 2; v = c & 0x1F; min = 0x80; }
        else if ((c & 0xF0) == 0xE0) { k = 3; v = c & 0x0F; min = 0x800; }
        else if ((c & 0xF8) == 0xF0) { k = 4; v = c & 0x07; min = 0x10000; }
        else return i;
        if (n - i < k)
            return i;
        for (size_t j = 1; j < k; j++) {
            if ((p[i + j] & 0xC0) != 0x80)
                return i;
            v = v << 6 | (p[i + j] & 0x3F);
        }
        if (v < min || v > 0x10FFFF || (v >= 0xD800 && v <= 0xDFFF))
            return i;
        i += k;
    }
    return n;
}

/* ---------- trie ---------- */

static size_t slot_of(const ns_hf_trie *t, uint64_t key)
{
    size_t i = (size_t)((key * 0x9E3779B97F4A7C15ull) >> 17) & t->mask;
    while (t->keys[i] != 0 && t->keys[i] != key)
        i = (i + 1) & t->mask;
    return i;
}

static int64_t child_of(const ns_hf_trie *t, uint32_t node, unsigned char byte)
{
    uint64_t key = ((uint64_t)node << 8 | byte) + 1;
    size_t i = slot_of(t, key);
    return t->keys[i] ? (int64_t)t->child[i] : -1;
}

int ns_hf_trie_build(ns_hf_trie *t, const ns_hf_added *added, size_t n, int normalized,
                     ns_err *err)
{
    memset(t, 0, sizeof *t);
    size_t total = 1;
    for (size_t i = 0; i < n; i++)
        if (added[i].normalized == normalized)
            total += added[i].match_len;
    size_t cap = 16;
    while (cap < 2 * total)
        cap *= 2;
    t->keys = calloc(cap, sizeof *t->keys);
    t->child = calloc(cap, sizeof *t->child);
    t->term = calloc(total, sizeof *t->term);
    if (!t->keys || !t->child || !t->term)
        return ns_fail(err, NS_ERR_NOMEM, "tokenizer: cannot allocate the added-token trie");
    t->mask = cap - 1;
    t->n_nodes = 1;
    t->cap_nodes = total;
    for (size_t i = 0; i < n; i++) {
        if (added[i].normalized != normalized)
            continue;
        const unsigned char *m = (const unsigned char *)added[i].match;
        uint32_t node = 0;
        for (size_t k = 0; k < added[i].match_len; k++) {
            int64_t c = child_of(t, node, m[k]);
            if (c < 0) {
                uint64_t key = ((uint64_t)node << 8 | m[k]) + 1;
                size_t s = slot_of(t, key);
                t->keys[s] = key;
                t->child[s] = (uint32_t)t->n_nodes;
                c = (int64_t)t->n_nodes++;
            }
            node = (uint32_t)c;
        }
        t->term[node] = (int32_t)i + 1;
        t->first[m[0] >> 3] |= (uint8_t)(1u << (m[0] & 7));
    }
    return NS_OK;
}

void ns_hf_trie_free(ns_hf_trie *t)
{
    free(t->keys);
    free(t->child);
    free(t->term);
    memset(t, 0, sizeof *t);
}

/* Leftmost-longest match in s[from..n): 1 with [*ms, *me) and the token index, else 0. */
static int trie_find(const ns_hf_trie *t, const char *s, size_t n, size_t from, size_t *ms,
                     size_t *me, size_t *index)
{
    if (t->n_nodes <= 1)
        return 0;
    const unsigned char *p = (const unsigned char *)s;
    for (size_t i = from; i < n; i++) {
        if (!(t->first[p[i] >> 3] & (1u << (p[i] & 7))))
            continue;
        uint32_t node = 0;
        int32_t best = 0;
        size_t best_end = 0;
        for (size_t k = i; k < n; k++) {
            int64_t c = child_of(t, node, p[k]);
            if (c < 0)
                break;
            node = (uint32_t)c;
            if (t->term[node]) {
                best = t->term[node];
                best_end = k + 1;
            }
        }
        if (best) {
            *ms = i;
            *me = best_end;
            *index = (size_t)best - 1;
            return 1;
        }
    }
    return 0;
}

/* ---------- the rules around a match ---------- */

/* Whether the character that starts at s[0..n) (n > 0) matches re (anchored). */
static int char_is(const pcre2_code *re, const char *s, size_t n)
{
    pcre2_match_data *md = pcre2_match_data_create(1, NULL);
    if (!md)
        return 0;
    int rc = pcre2_match(re, (PCRE2_SPTR)s, n, 0, PCRE2_NO_UTF_CHECK, md, NULL);
    pcre2_match_data_free(md);
    return rc > 0;
}

/* Start of the UTF-8 character that ends at s[n) (n > 0). */
static size_t char_before(const char *s, size_t n)
{
    size_t i = n - 1;
    while (i > 0 && ((unsigned char)s[i] & 0xC0) == 0x80)
        i--;
    return i;
}

/* Length of the UTF-8 character at s[0] (valid UTF-8). */
static size_t char_len(const char *s)
{
    unsigned char c = (unsigned char)s[0];
    return c < 0x80 ? 1 : c < 0xE0 ? 2 : c < 0xF0 ? 3 : 4;
}

int ns_hf_next_added(const ns_hf *hf, const ns_hf_trie *t, const char *s, size_t n, size_t *scan,
                     size_t done, size_t *start, size_t *stop, size_t *index)
{
    size_t ms, me, k;
    while (trie_find(t, s, n, *scan, &ms, &me, &k)) {
        *scan = me;
        const ns_hf_added *a = &hf->added[k];
        if (a->single_word) {
            /* a word character right before or after: not a single word, the match is dropped */
            if (ms > 0) {
                size_t b = char_before(s, ms);
                if (char_is(hf->re_word, s + b, ms - b))
                    continue;
            }
            if (me < n && char_is(hf->re_word, s + me, char_len(s + me)))
                continue;
        }
        if (a->lstrip) { /* the whitespace run before it, but not what an earlier match took */
            size_t b = ms;
            while (b > 0) {
                size_t c = char_before(s, b);
                if (!char_is(hf->re_space, s + c, b - c))
                    break;
                b = c;
            }
            ms = b > done ? b : done;
        }
        if (a->rstrip) {
            while (me < n) {
                size_t l = char_len(s + me);
                if (!char_is(hf->re_space, s + me, l))
                    break;
                me += l;
            }
        }
        *start = ms;
        *stop = me;
        *index = k;
        return 1;
    }
    return 0;
}

/* ns_wordcache: per-call cache of pre-token bytes -> token ids (open addressing). */
#include "tokenizer/ns_wordcache.h"

#include <stdlib.h>
#include <string.h>

void ns_word_cache_free(ns_word_cache *c)
{
    free(c->slots);
    free(c->keys);
    free(c->ids);
    memset(c, 0, sizeof *c);
}

const ns_word_slot *ns_word_cache_find(const ns_word_cache *c, uint64_t h, const char *w, size_t n)
{
    if (!c->slots)
        return NULL;
    for (size_t i = (size_t)h & c->mask;; i = (i + 1) & c->mask) {
        const ns_word_slot *s = &c->slots[i];
        if (s->key_len == 0)
            return NULL;
        if (s->hash == h && s->key_len == n && memcmp(c->keys + s->key_off, w, n) == 0)
            return s;
    }
}

void ns_word_cache_copy(const ns_word_cache *c, const ns_word_slot *s, int32_t *dst)
{
    if (s->ids_n > 0)
        memcpy(dst, c->ids + s->ids_off, s->ids_n * sizeof *dst);
}

static int grow(void **p, size_t *cap, size_t need, size_t elem)
{
    if (need <= *cap)
        return 0;
    size_t c = *cap ? *cap : 4096;
    while (c < need)
        c *= 2;
    void *q = realloc(*p, c * elem);
    if (!q)
        return -1;
    *p = q;
    *cap = c;
    return 0;
}

/* Remember w -> ids; a full cache or a failed allocation just leaves the word uncached. */
void ns_word_cache_put(ns_word_cache *c, uint64_t h, const char *w, size_t n, const int32_t *ids,
                      size_t k)
{
    if (n == 0 || n > NS_CACHE_MAX_WORD || c->count >= NS_CACHE_MAX_ENTRIES)
        return;
    if (!c->slots || 2 * (c->count + 1) > c->mask + 1) {
        size_t cap = c->slots ? 2 * (c->mask + 1) : 4096;
        ns_word_slot *slots = calloc(cap, sizeof *slots);
        if (!slots)
            return;
        for (size_t i = 0; c->slots && i <= c->mask; i++) {
            if (c->slots[i].key_len == 0)
                continue;
            size_t j = (size_t)c->slots[i].hash & (cap - 1);
            while (slots[j].key_len != 0)
                j = (j + 1) & (cap - 1);
            slots[j] = c->slots[i];
        }
        free(c->slots);
        c->slots = slots;
        c->mask = cap - 1;
    }
    if (grow((void **)&c->keys, &c->keys_cap, c->keys_n + n, 1) != 0 ||
        grow((void **)&c->ids, &c->ids_cap, c->ids_n + k, sizeof *c->ids) != 0)
        return;
    size_t i = (size_t)h & c->mask;
    while (c->slots[i].key_len != 0)
        i = (i + 1) & c->mask;
    memcpy(c->keys + c->keys_n, w, n);
    if (k > 0) /* a word that maps to no id: c->ids and ids may both be NULL */
        memcpy(c->ids + c->ids_n, ids, k * sizeof *ids);
    c->slots[i] = (ns_word_slot){h, c->keys_n, c->ids_n, (uint32_t)n, (uint32_t)k};
    c->keys_n += n;
    c->ids_n += k;
    c->count++;
}


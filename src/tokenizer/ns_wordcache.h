/* ns_wordcache: a per-call cache of pre-token bytes -> token ids, so each distinct word of a
 * text is merged once (no state is kept in the shared tokenizer). */
#ifndef NS_WORDCACHE_H
#define NS_WORDCACHE_H

#include <stddef.h>
#include <stdint.h>

#define NS_CACHE_MAX_WORD 256        /* longer pre-tokens are not cached */
#define NS_CACHE_MAX_ENTRIES (1u << 21)

typedef struct ns_word_slot {
    uint64_t hash;
    size_t key_off, ids_off;
    uint32_t key_len, ids_n; /* key_len 0: empty slot */
} ns_word_slot;

typedef struct ns_word_cache {
    ns_word_slot *slots;
    size_t mask, count;
    char *keys;
    size_t keys_n, keys_cap;
    int32_t *ids;            /* a slot's ids are ids[ids_off .. ids_off + ids_n) */
    size_t ids_n, ids_cap;
} ns_word_cache;

/* The slot of w[0..n) (hash h = ns_tok_hash(w, n)), or NULL. */
const ns_word_slot *ns_word_cache_find(const ns_word_cache *c, uint64_t h, const char *w, size_t n);
/* Remember w -> ids[0..k); a full cache or a failed allocation just leaves the word uncached. */
void ns_word_cache_put(ns_word_cache *c, uint64_t h, const char *w, size_t n, const int32_t *ids,
                       size_t k);
/* Copy slot s's ids to dst (which has room for s->ids_n); a word may map to no id at all (a
 * normalizer or byte fallback that drops it), then nothing is touched. */
void ns_word_cache_copy(const ns_word_cache *c, const ns_word_slot *s, int32_t *dst);
void ns_word_cache_free(ns_word_cache *c);

#endif

/* ns_bpe: GPT-2's byte-pair merge rules as a hash table of (left, right) -> (rank, merged id), and
 * the merge kernels over one pre-token's ids: a naive reference (GPT-2's own procedure) and a
 * heap-based fast kernel tested against it. Knows nothing of vocabularies or files. */
#ifndef NS_BPE_H
#define NS_BPE_H

#include <stddef.h>
#include <stdint.h>

#include "common/ns_error.h"

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

#endif

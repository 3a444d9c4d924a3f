/* ns_bpe: byte-pair merging of one pre-token, a naive reference (GPT-2's procedure) and a
 * heap-based fast kernel that is tested against it. */
#include <stdlib.h>

#include "tokenizer/ns_bpe.h"

#define NS_NONE SIZE_MAX

/* A candidate merge of the pair starting at symbol pos, as it was when pushed. */
typedef struct ns_bpe_cand {
    int32_t rank;
    int32_t left, right; /* ids at push time: the candidate is stale once these changed */
    size_t pos;
} ns_bpe_cand;

int ns_bpe_work_reserve(ns_bpe_work *w, size_t n, ns_err *err)
{
    if (n <= w->cap)
        return NS_OK;
    size_t cap = w->cap ? w->cap : 64;
    while (cap < n)
        cap *= 2;
    size_t *prev = realloc(w->prev, cap * sizeof *prev);
    if (!prev)
        return ns_fail(err, NS_ERR_NOMEM, "tokenizer: cannot allocate BPE work space for %zu bytes", n);
    w->prev = prev;
    size_t *next = realloc(w->next, cap * sizeof *next);
    if (!next)
        return ns_fail(err, NS_ERR_NOMEM, "tokenizer: cannot allocate BPE work space for %zu bytes", n);
    w->next = next;
    /* n-1 initial pairs plus at most 2 new ones per merge (n-1 merges) */
    ns_bpe_cand *heap = realloc(w->heap, 3 * cap * sizeof *heap);
    if (!heap)
        return ns_fail(err, NS_ERR_NOMEM, "tokenizer: cannot allocate BPE work space for %zu bytes", n);
    w->heap = heap;
    w->cap = cap;
    return NS_OK;
}

void ns_bpe_work_free(ns_bpe_work *w)
{
    free(w->prev);
    free(w->next);
    free(w->heap);
    w->prev = w->next = NULL;
    w->heap = NULL;
    w->cap = 0;
}

void ns_bpe_reference(int32_t *ids, size_t *n, const ns_merges *m)
{
    size_t len = *n;
    while (len > 1) {
        const ns_merge_entry *best = NULL;
        for (size_t i = 0; i + 1 < len; i++) {
            const ns_merge_entry *e = ns_merges_find(m, ids[i], ids[i + 1]);
            if (e && (!best || e->rank < best->rank))
                best = e;
        }
        if (!best)
            break;
        int32_t first = (int32_t)(best->key >> 32), second = (int32_t)(uint32_t)best->key;
        size_t w = 0;
        for (size_t i = 0; i < len;) {
            if (i + 1 < len && ids[i] == first && ids[i + 1] == second) {
                ids[w++] = best->merged;
                i += 2;
            } else {
                ids[w++] = ids[i++];
            }
        }
        len = w;
    }
    *n = len;
}

static int cand_less(const ns_bpe_cand *a, const ns_bpe_cand *b)
{
    return a->rank < b->rank || (a->rank == b->rank && a->pos < b->pos);
}

static void heap_push(ns_bpe_cand *h, size_t *size, ns_bpe_cand c)
{
    size_t i = (*size)++;
    while (i > 0) {
        size_t p = (i - 1) / 2;
        if (!cand_less(&c, &h[p]))
            break;
        h[i] = h[p];
        i = p;
    }
    h[i] = c;
}

static ns_bpe_cand heap_pop(ns_bpe_cand *h, size_t *size)
{
    ns_bpe_cand top = h[0];
    ns_bpe_cand last = h[--(*size)];
    size_t n = *size, i = 0;
    for (;;) {
        size_t c = 2 * i + 1;
        if (c >= n)
            break;
        if (c + 1 < n && cand_less(&h[c + 1], &h[c]))
            c++;
        if (!cand_less(&h[c], &last))
            break;
        h[i] = h[c];
        i = c;
    }
    if (n > 0)
        h[i] = last;
    return top;
}

static void push_pair(ns_bpe_cand *h, size_t *size, const int32_t *ids, const ns_merges *m,
                      size_t pos, size_t right)
{
    const ns_merge_entry *e = ns_merges_find(m, ids[pos], ids[right]);
    if (e)
        heap_push(h, size, (ns_bpe_cand){e->rank, ids[pos], ids[right], pos});
}

void ns_bpe_fast(int32_t *ids, size_t *n, const ns_merges *m, ns_bpe_work *w)
{
    size_t len = *n;
    if (len < 2)
        return;
    size_t *prev = w->prev, *next = w->next;
    ns_bpe_cand *heap = w->heap;
    size_t hsize = 0;
    for (size_t i = 0; i < len; i++) {
        prev[i] = i == 0 ? NS_NONE : i - 1;
        next[i] = i + 1 < len ? i + 1 : NS_NONE;
    }
    for (size_t i = 0; i + 1 < len; i++)
        push_pair(heap, &hsize, ids, m, i, i + 1);
    /* Symbols merged away get ids[] = -1; position 0 always survives (merges keep the left). */
    while (hsize > 0) {
        ns_bpe_cand c = heap_pop(heap, &hsize);
        size_t r = next[c.pos];
        if (ids[c.pos] != c.left || r == NS_NONE || ids[r] != c.right)
            continue; /* stale: one side was merged since */
        const ns_merge_entry *e = ns_merges_find(m, c.left, c.right);
        ids[c.pos] = e->merged;
        ids[r] = -1;
        next[c.pos] = next[r];
        if (next[r] != NS_NONE)
            prev[next[r]] = c.pos;
        if (prev[c.pos] != NS_NONE)
            push_pair(heap, &hsize, ids, m, prev[c.pos], c.pos);
        if (next[c.pos] != NS_NONE)
            push_pair(heap, &hsize, ids, m, c.pos, next[c.pos]);
    }
    size_t k = 0;
    for (size_t i = 0; i != NS_NONE; i = next[i])
        ids[k++] = ids[i];
    *n = k;
}

/* ns_hf_encode: encoding with a tokenizer.json, in Hugging Face's order: split the text on the
 * added tokens that are not normalized, normalize each other piece, split it on the normalized
 * added tokens, run the pre-tokenizer steps (Split with its behaviour and invert, then ByteLevel)
 * and BPE each pre-token (per-call word cache). No post-processor tokens are added. */
#include <stdlib.h>
#include <string.h>

#include "tokenizer/ns_bpe.h"
#include "tokenizer/ns_hf.h"
#include "tokenizer/ns_tok_vocab.h"
#include "tokenizer/ns_tokens.h"
#include "tokenizer/ns_wordcache.h"

/* A piece of the text of one step: [start, end) and whether it is a pattern match. */
typedef struct span {
    size_t start, end;
    int match;
} span;

typedef struct spans {
    span *v;
    size_t n, cap;
} spans;

typedef struct enc {
    const ns_tokenizer *tok;
    const ns_hf *hf;
    ns_tokens *out;
    ns_word_cache cache;
    ns_bpe_work work;
    pcre2_match_data *md;
    spans *levels;   /* one list per pre-tokenizer step */
    char *prefix;    /* ByteLevel's add_prefix_space copy */
    size_t prefix_cap;
    ns_err *err;
} enc;

/* ---------- BPE of one pre-token ---------- */

int ns_hf_encode_word(const ns_tokenizer *tok, const char *w, size_t n, ns_bpe_work *work,
                      ns_tokens *out, ns_err *err)
{
    const ns_hf *hf = tok->hf;
    if (n == 0)
        return NS_OK;
    NS_TRY(ns_tokens_reserve(out, 2 * n, err));
    int32_t *ids = out->ids + out->n;
    if (hf->ignore_merges) { /* a pre-token that is itself a token is taken whole */
        int32_t id = ns_tok_vocab_find(tok, w, n);
        if (id >= 0) {
            ids[0] = id;
            out->n++;
            return NS_OK;
        }
    }
    size_t k = 0;
    int32_t unk = -1; /* a pending unknown token: Hugging Face adds it before the next character
                         found in the vocabulary (after byte-fallback tokens) or at the end */
    for (size_t i = 0; i < n; i++) {
        const ns_hf_byte *b = &hf->bytes[(unsigned char)w[i]];
        switch (b->kind) {
        case NS_HF_BYTE_VOCAB:
            if (unk >= 0)
                ids[k++] = unk;
            unk = -1;
            ids[k++] = b->id[0];
            break;
        case NS_HF_BYTE_FALLBACK:
            for (uint8_t j = 0; j < b->n; j++)
                ids[k++] = b->id[j];
            break;
        case NS_HF_BYTE_UNK:
            if (unk >= 0 && !hf->fuse_unk)
                ids[k++] = unk;
            unk = b->id[0];
            break;
        default: /* no token, no fallback, no unk: Hugging Face drops the character */
            break;
        }
    }
    if (unk >= 0)
        ids[k++] = unk;
    if (k > 1) {
        NS_TRY(ns_bpe_work_reserve(work, k, err));
        ns_bpe_fast(ids, &k, &tok->merges, work);
    }
    out->n += k;
    return NS_OK;
}

/* BPE through the per-call cache. */
static int word(enc *e, const char *w, size_t n)
{
    if (n == 0)
        return NS_OK;
    uint64_t h = ns_tok_hash(w, n);
    const ns_word_slot *s = ns_word_cache_find(&e->cache, h, w, n);
    if (s) {
        NS_TRY(ns_tokens_reserve(e->out, s->ids_n, e->err));
        ns_word_cache_copy(&e->cache, s, e->out->ids + e->out->n);
        e->out->n += s->ids_n;
        return NS_OK;
    }
    size_t before = e->out->n;
    NS_TRY(ns_hf_encode_word(e->tok, w, n, &e->work, e->out, e->err));
    ns_word_cache_put(&e->cache, h, w, n, e->out->ids + before, e->out->n - before);
    return NS_OK;
}

/* ---------- pattern matches, as Hugging Face's find_matches over Oniguruma's find_iter ---------- */

static int push(spans *l, size_t start, size_t end, int match, ns_err *err)
{
    if (l->n == l->cap) {
        size_t cap = l->cap ? 2 * l->cap : 64;
        span *v = realloc(l->v, cap * sizeof *v);
        if (!v)
            return ns_fail(err, NS_ERR_NOMEM, "tokenizer: out of memory splitting the text");
        l->v = v;
        l->cap = cap;
    }
    l->v[l->n++] = (span){start, end, match};
    return NS_OK;
}

/* Matches and gaps of re over s[0..n), covering it (an empty match right after the previous
 * match is skipped, one character further on, as the onig crate's find_iter does). */
static int find_matches(enc *e, const pcre2_code *re, const char *s, size_t n, spans *l)
{
    l->n = 0;
    size_t prev = 0, from = 0;
    size_t last_end = (size_t)-1;
    while (from <= n) {
        int rc = pcre2_match(re, (PCRE2_SPTR)s, n, from, PCRE2_NO_UTF_CHECK, e->md, NULL);
        if (rc == PCRE2_ERROR_NOMATCH)
            break;
        if (rc < 0) {
            PCRE2_UCHAR msg[256];
            if (pcre2_get_error_message(rc, msg, sizeof msg) < 0)
                msg[0] = '\0';
            return ns_fail(e->err, NS_ERR_LIBRARY, "tokenizer: pre-tokenizer pattern failed: %s",
                           (const char *)msg);
        }
        PCRE2_SIZE *ov = pcre2_get_ovector_pointer(e->md);
        size_t ms = ov[0], me = ov[1];
        if (me == ms && last_end == me) {
            if (from >= n)
                break;
            from++;
            while (from < n && ((unsigned char)s[from] & 0xC0) == 0x80)
                from++;
            continue;
        }
        from = me;
        last_end = me;
        if (prev != ms)
            NS_TRY(push(l, prev, ms, 0, e->err));
        NS_TRY(push(l, ms, me, 1, e->err));
        prev = me;
    }
    if (prev != n)
        NS_TRY(push(l, prev, n, 0, e->err));
    return NS_OK;
}

/* SplitDelimiterBehavior applied in place: l keeps the pieces to use (match = 0), removed ones
 * are dropped. */
static void apply_behavior(spans *l, int behavior)
{
    size_t w = 0;
    int prev_match = 0;
    switch (behavior) {
    case NS_HF_ISOLATED:
        for (size_t i = 0; i < l->n; i++)
            l->v[i].match = 0;
        return;
    case NS_HF_REMOVED:
        for (size_t i = 0; i < l->n; i++)
            if (!l->v[i].match)
                l->v[w++] = l->v[i];
        l->n = w;
        return;
    case NS_HF_CONTIGUOUS: /* runs of matches (and of gaps) become one piece */
    case NS_HF_MERGED_WITH_PREVIOUS: /* a match joins the gap before it */
        for (size_t i = 0; i < l->n; i++) {
            int m = l->v[i].match;
            int join = behavior == NS_HF_CONTIGUOUS ? m == prev_match : m && !prev_match;
            if (join && w > 0)
                l->v[w - 1].end = l->v[i].end;
            else
                l->v[w++] = (span){l->v[i].start, l->v[i].end, 0};
            prev_match = m;
        }
        l->n = w;
        return;
    case NS_HF_MERGED_WITH_NEXT: { /* the same from the right */
        size_t r = l->n;
        for (size_t i = l->n; i-- > 0;) {
            int m = l->v[i].match;
            if (m && !prev_match && r < l->n)
                l->v[r].start = l->v[i].start;
            else
                l->v[--r] = (span){l->v[i].start, l->v[i].end, 0};
            prev_match = m;
        }
        memmove(l->v, l->v + r, (l->n - r) * sizeof *l->v);
        l->n -= r;
        return;
    }
    }
}

/* ---------- the pre-tokenizer steps ---------- */

static int steps(enc *e, size_t k, const char *s, size_t n);

static int byte_level(enc *e, const ns_hf_step *st, size_t k, const char *s, size_t n)
{
    if (st->add_prefix_space && s[0] != ' ') {
        if (n + 1 > e->prefix_cap) {
            size_t cap = 2 * (n + 1);
            char *p = realloc(e->prefix, cap);
            if (!p)
                return ns_fail(e->err, NS_ERR_NOMEM, "tokenizer: out of memory");
            e->prefix = p;
            e->prefix_cap = cap;
        }
        e->prefix[0] = ' ';
        memcpy(e->prefix + 1, s, n);
        s = e->prefix;
        n++;
    }
    if (!st->re)
        return word(e, s, n);
    spans *l = &e->levels[k];
    NS_TRY(find_matches(e, st->re, s, n, l));
    for (size_t i = 0; i < l->n; i++) /* Isolated */
        NS_TRY(word(e, s + l->v[i].start, l->v[i].end - l->v[i].start));
    return NS_OK;
}

/* Run steps k.. on the piece s[0..n) (empty pieces are dropped, as Hugging Face does). */
static int steps(enc *e, size_t k, const char *s, size_t n)
{
    if (n == 0)
        return NS_OK;
    const ns_hf_step *st = &e->hf->steps[k];
    if (st->byte_level)
        return byte_level(e, st, k, s, n);
    spans *l = &e->levels[k];
    NS_TRY(find_matches(e, st->re, s, n, l));
    if (st->invert)
        for (size_t i = 0; i < l->n; i++)
            l->v[i].match = !l->v[i].match;
    apply_behavior(l, st->behavior);
    /* the list of level k is reused by the next piece of level k only after this loop */
    for (size_t i = 0; i < l->n; i++) {
        span p = l->v[i];
        NS_TRY(steps(e, k + 1, s + p.start, p.end - p.start));
    }
    return NS_OK;
}

/* ---------- added tokens and normalization ---------- */

static int emit(enc *e, int32_t id)
{
    NS_TRY(ns_tokens_reserve(e->out, 1, e->err));
    e->out->ids[e->out->n++] = id;
    return NS_OK;
}

/* A piece of normalized text: split on the normalized added tokens, pre-tokenize the rest. */
static int normalized_piece(enc *e, const char *s, size_t n)
{
    size_t scan = 0, done = 0, start, stop, k;
    while (ns_hf_next_added(e->hf, &e->hf->trie_norm, s, n, &scan, done, &start, &stop, &k)) {
        if (start > done)
            NS_TRY(steps(e, 0, s + done, start - done));
        NS_TRY(emit(e, e->hf->added[k].id));
        done = stop;
    }
    return done < n ? steps(e, 0, s + done, n - done) : NS_OK;
}

/* A piece of the raw text between non-normalized added tokens. */
static int raw_piece(enc *e, const char *s, size_t n)
{
    if (n == 0)
        return NS_OK;
    if (e->hf->n_norms == 0)
        return normalized_piece(e, s, n);
    char *norm = NULL;
    size_t len = 0;
    NS_TRY(ns_hf_normalize(e->hf, s, n, &norm, &len, e->err));
    int rc = len ? normalized_piece(e, norm, len) : NS_OK;
    free(norm);
    return rc;
}

static int invalid_utf8(const char *text, size_t len, size_t at, ns_err *err)
{
    size_t line = 1;
    for (size_t i = 0; i < at; i++)
        line += text[i] == '\n';
    return ns_fail(err, NS_ERR_INVALID, "byte %zu (line %zu): invalid UTF-8 (byte 0x%02x); a "
                   "tokenizer.json tokenizer takes Unicode text", at, line,
                   (unsigned char)text[at]);
}

int ns_hf_encode(const ns_tokenizer *tok, const char *text, size_t len, ns_tokens *out, ns_err *err)
{
    size_t bad = ns_utf8_invalid_at(text, len);
    if (bad != len)
        return invalid_utf8(text, len, bad, err);
    enc e;
    memset(&e, 0, sizeof e);
    e.tok = tok;
    e.hf = tok->hf;
    e.out = out;
    e.err = err;
    int rc = NS_OK;
    e.md = pcre2_match_data_create(1, NULL);
    e.levels = calloc(e.hf->n_steps, sizeof *e.levels);
    if (!e.md || !e.levels) {
        rc = ns_fail(err, NS_ERR_NOMEM, "tokenizer: out of memory");
        goto done;
    }
    size_t scan = 0, done = 0, start, stop, k;
    while (rc == NS_OK &&
           ns_hf_next_added(e.hf, &e.hf->trie_raw, text, len, &scan, done, &start, &stop, &k)) {
        if (start > done)
            rc = raw_piece(&e, text + done, start - done);
        if (rc == NS_OK)
            rc = emit(&e, e.hf->added[k].id);
        done = stop;
    }
    if (rc == NS_OK && done < len)
        rc = raw_piece(&e, text + done, len - done);
done:
    for (size_t i = 0; e.levels && i < e.hf->n_steps; i++)
        free(e.levels[i].v);
    free(e.levels);
    free(e.prefix);
    pcre2_match_data_free(e.md);
    ns_word_cache_free(&e.cache);
    ns_bpe_work_free(&e.work);
    return rc;
}

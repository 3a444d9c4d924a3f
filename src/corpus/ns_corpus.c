/* ns_corpus: read, Gutenberg-strip and tokenize the corpus once; shard k's token range. */
#include "corpus/ns_corpus.h"

#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "common/ns_file.h"

/* 1 if the line [s, e) contains needle, ignoring letter case. */
static int line_contains(const char *s, const char *e, const char *needle)
{
    size_t n = strlen(needle);
    for (; (size_t)(e - s) >= n; s++)
        if (strncasecmp(s, needle, n) == 0)
            return 1;
    return 0;
}

/* 1 if the line [s, e) is a Gutenberg marker "*** <word> OF ... PROJECT GUTENBERG EBOOK ...". */
static int is_marker(const char *s, const char *e, const char *word)
{
    if ((size_t)(e - s) >= 3 && (unsigned char)s[0] == 0xEF && (unsigned char)s[1] == 0xBB &&
        (unsigned char)s[2] == 0xBF)
        s += 3; /* UTF-8 byte order mark on the first line */
    while (s < e && (*s == ' ' || *s == '\t'))
        s++;
    if (e - s < 3 || memcmp(s, "***", 3) != 0)
        return 0;
    s += 3;
    while (s < e && *s == ' ')
        s++;
    size_t wl = strlen(word);
    if ((size_t)(e - s) < wl + 3 || strncasecmp(s, word, wl) != 0)
        return 0;
    s += wl;
    if (*s != ' ')
        return 0;
    while (s < e && *s == ' ')
        s++;
    if ((size_t)(e - s) < 2 || strncasecmp(s, "OF", 2) != 0)
        return 0;
    return line_contains(s, e, "PROJECT GUTENBERG EBOOK");
}

int ns_gutenberg_body(const char *text, size_t len, const char *name, size_t *begin, size_t *end,
                      ns_err *err)
{
    const char *p = text, *stop = text + len;
    size_t line = 1, start_line = 0;
    const char *body = NULL;
    while (p < stop) {
        const char *nl = memchr(p, '\n', (size_t)(stop - p));
        const char *eol = nl ? nl : stop;
        const char *next = nl ? nl + 1 : stop;
        if (!body) {
            if (is_marker(p, eol, "START")) {
                body = next;
                start_line = line;
            }
        } else if (is_marker(p, eol, "END")) {
            *begin = (size_t)(body - text);
            *end = (size_t)(p - text);
            return NS_OK;
        }
        p = next;
        line++;
    }
    if (!body)
        return ns_fail(err, NS_ERR_FORMAT,
                       "%s: no '*** START OF THE PROJECT GUTENBERG EBOOK' marker line, so the "
                       "Gutenberg header cannot be stripped (set strip_gutenberg: false for other "
                       "texts)",
                       name);
    return ns_fail(err, NS_ERR_FORMAT,
                   "%s: no '*** END OF THE PROJECT GUTENBERG EBOOK' marker line after the start "
                   "marker on line %zu, so the licence cannot be stripped",
                   name, start_line);
}

size_t ns_corpus_utf8_len(const unsigned char *s, size_t n)
{
    unsigned char b = s[0];
    if (b < 0x80)
        return 1;
    size_t len;
    unsigned char lo = 0x80, hi = 0xBF; /* allowed range of the second byte */
    if (b >= 0xC2 && b <= 0xDF) {
        len = 2;
    } else if (b >= 0xE0 && b <= 0xEF) {
        len = 3;
        if (b == 0xE0)
            lo = 0xA0; /* overlong */
        else if (b == 0xED)
            hi = 0x9F; /* surrogates U+D800..U+DFFF */
    } else if (b >= 0xF0 && b <= 0xF4) {
        len = 4;
        if (b == 0xF0)
            lo = 0x90; /* overlong */
        else if (b == 0xF4)
            hi = 0x8F; /* above U+10FFFF */
    } else {
        return 0; /* 0x80..0xC1 (continuation, overlong 2-byte lead), 0xF5..0xFF */
    }
    if (n < len || s[1] < lo || s[1] > hi)
        return 0;
    for (size_t i = 2; i < len; i++)
        if (s[i] < 0x80 || s[i] > 0xBF)
            return 0;
    return len;
}

int ns_corpus_check_text(const char *text, size_t len, const char *name, ns_err *err)
{
    const unsigned char *s = (const unsigned char *)text;
    size_t line = 1;
    if (len >= 2 && ((s[0] == 0xFF && s[1] == 0xFE) || (s[0] == 0xFE && s[1] == 0xFF)))
        return ns_fail(err, NS_ERR_INVALID,
                       "%s: not UTF-8 text (UTF-16 byte order mark 0x%02x%02x at offset 0; "
                       "convert it with iconv -f UTF-16 -t UTF-8)",
                       name, (unsigned)s[0], (unsigned)s[1]);
    for (size_t i = 0; i < len;) {
        if (s[i] == 0)
            return ns_fail(err, NS_ERR_INVALID, "%s: not a text file (NUL byte at offset %zu)",
                           name, i);
        size_t k = ns_corpus_utf8_len(s + i, len - i);
        if (k == 0)
            return ns_fail(err, NS_ERR_INVALID,
                           "%s: not UTF-8 text (invalid byte 0x%02x at offset %zu, line %zu)",
                           name, (unsigned)s[i], i, line);
        if (s[i] == '\n')
            line++;
        i += k;
    }
    return NS_OK;
}

int ns_corpus_from_text(const char *text, size_t len, const char *name, int strip_gutenberg,
                        const ns_tokenizer *tok, ns_corpus *out, ns_err *err)
{
    ns_corpus c;
    memset(&c, 0, sizeof c);
    size_t begin = 0, end = len;
    int rc;
    if ((rc = ns_corpus_check_text(text, len, name, err)) != NS_OK)
        return rc;
    if (strip_gutenberg) {
        if ((rc = ns_gutenberg_body(text, len, name, &begin, &end, err)) != NS_OK)
            return rc;
    }
    c.path = strdup(name);
    if (!c.path)
        return ns_fail(err, NS_ERR_NOMEM, "%s: out of memory", name);
    c.text_bytes = len;
    c.body_begin = begin;
    c.body_end = end;
    c.stripped = strip_gutenberg;
    if ((rc = ns_tokenizer_encode(tok, text + begin, end - begin, &c.tokens, err)) != NS_OK) {
        ns_err_prefix(err, "%s: tokenizing", name);
        ns_corpus_free(&c);
        return rc;
    }
    *out = c;
    return NS_OK;
}

void ns_corpus_free(ns_corpus *c)
{
    if (!c)
        return;
    free(c->path);
    ns_tokens_free(&c->tokens);
    memset(c, 0, sizeof *c);
}

int ns_corpus_tokens_needed(size_t count, size_t L_max, size_t first, size_t stride, size_t *needed,
                            ns_err *err)
{
    if (!count || !L_max)
        return ns_fail(err, NS_ERR_INVALID, "shard count and L_max must be >= 1 (got %zu and %zu)",
                       count, L_max);
    size_t span, n;
    if (__builtin_mul_overflow(count - 1, stride, &span) ||
        __builtin_add_overflow(span, first, &n) || __builtin_add_overflow(n, L_max, &n))
        return ns_fail(err, NS_ERR_INVALID,
                       "%zu shards of %zu tokens, %zu apart from token %zu, do not fit in 2^64 "
                       "tokens",
                       count, L_max, stride, first);
    *needed = n;
    return NS_OK;
}

int ns_corpus_check_shards(size_t n_available, size_t count, size_t L_max, size_t first,
                           size_t stride, ns_err *err)
{
    size_t needed = 0;
    int rc = ns_corpus_tokens_needed(count, L_max, first, stride, &needed, err);
    if (rc != NS_OK)
        return rc;
    if (needed > n_available)
        return ns_fail(err, NS_ERR_INVALID,
                       "%zu shard%s of %zu tokens (first %zu, stride %zu) need%s %zu tokens but "
                       "the corpus has %zu",
                       count, count == 1 ? "" : "s", L_max, first, stride, count == 1 ? "s" : "",
                       needed, n_available);
    return NS_OK;
}

int ns_corpus_shard_range(size_t n_available, size_t L_max, size_t first, size_t stride, size_t k,
                          size_t *start, ns_err *err)
{
    size_t s, e;
    if (__builtin_mul_overflow(k, stride, &s) || __builtin_add_overflow(s, first, &s) ||
        __builtin_add_overflow(s, L_max, &e))
        return ns_fail(err, NS_ERR_INVALID, "shard %zu starts beyond 2^64 tokens", k);
    if (e > n_available)
        return ns_fail(err, NS_ERR_INVALID,
                       "shard %zu needs tokens [%zu, %zu) but the corpus has %zu", k, s, e,
                       n_available);
    *start = s;
    return NS_OK;
}

int ns_corpus_shard(const ns_corpus *c, size_t L_max, size_t first, size_t stride, size_t k,
                    const int32_t **ids, ns_err *err)
{
    size_t start = 0;
    int rc = ns_corpus_shard_range(c->tokens.n, L_max, first, stride, k, &start, err);
    if (rc != NS_OK)
        return ns_err_prefix(err, "%s", c->path);
    *ids = c->tokens.ids + start;
    return NS_OK;
}

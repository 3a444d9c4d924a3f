/* ns_pretok: GPT-2's pre-tokenizer regex with PCRE2 (UTF + UCP + invalid-UTF matching, JIT). */
#include "tokenizer/ns_pretok.h"

int ns_pretok_init(ns_pretok *it, const ns_tokenizer *tok, const char *text, size_t len,
                   ns_err *err)
{
    it->re = tok->re;
    it->text = text;
    it->len = len;
    it->pos = 0;
    it->have_match = 0;
    it->m_start = it->m_end = 0;
    it->md = pcre2_match_data_create_from_pattern(tok->re, NULL);
    if (!it->md)
        return ns_fail(err, NS_ERR_NOMEM, "tokenizer: cannot allocate regex match data");
    return NS_OK;
}

void ns_pretok_free(ns_pretok *it)
{
    pcre2_match_data_free(it->md); /* NULL is fine */
    it->md = NULL;
}

int ns_pretok_next(ns_pretok *it, size_t *start, size_t *n, int *invalid, ns_err *err)
{
    if (!it->have_match) {
        if (it->pos >= it->len)
            return 0;
        int rc = pcre2_match(it->re, (PCRE2_SPTR)it->text, it->len, it->pos, 0, it->md, NULL);
        if (rc == PCRE2_ERROR_NOMATCH) {
            /* only invalid UTF-8 is left */
            *start = it->pos;
            *n = it->len - it->pos;
            *invalid = 1;
            it->pos = it->len;
            return 1;
        }
        if (rc < 0) {
            PCRE2_UCHAR msg[256];
            if (pcre2_get_error_message(rc, msg, sizeof msg) < 0)
                msg[0] = '\0';
            ns_fail(err, NS_ERR_LIBRARY, "tokenizer: pre-tokenizer regex failed at byte %zu: %s",
                    it->pos, (const char *)msg);
            return -1;
        }
        PCRE2_SIZE *ov = pcre2_get_ovector_pointer(it->md);
        it->m_start = ov[0];
        it->m_end = ov[1];
        if (it->m_end <= it->m_start || it->m_start < it->pos) {
            /* cannot happen: every alternative consumes at least one character */
            ns_fail(err, NS_ERR_LIBRARY, "tokenizer: pre-tokenizer regex made an empty match at byte %zu",
                    it->m_start);
            return -1;
        }
        it->have_match = 1;
    }
    if (it->pos < it->m_start) {
        /* the gap before the match: an invalid UTF-8 run */
        *start = it->pos;
        *n = it->m_start - it->pos;
        *invalid = 1;
        it->pos = it->m_start;
        return 1;
    }
    *start = it->m_start;
    *n = it->m_end - it->m_start;
    *invalid = 0;
    it->pos = it->m_end;
    it->have_match = 0;
    return 1;
}

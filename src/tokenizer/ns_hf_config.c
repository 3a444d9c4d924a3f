/* ns_hf_config: the configuration parts of a tokenizer.json -- normalizer (NFC, NFD, NFKC, NFKD,
 * Sequence), pre_tokenizer (Split, ByteLevel, Sequence), post_processor (what it adds around a
 * sequence: the BOS) and decoder -- and the translation of Oniguruma patterns to PCRE2. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <utf8proc.h>
#if defined(__has_include)
#if __has_include(<valgrind/valgrind.h>)
#include <valgrind/valgrind.h>
#endif
#endif
#ifndef RUNNING_ON_VALGRIND
#define RUNNING_ON_VALGRIND 0
#endif

#include "tokenizer/ns_hf.h"
#include "tokenizer/ns_tokenizer_internal.h"

#define NS_HF_MAX_DEPTH 8 /* nested Sequences */

static const char *type_of(json_t *v)
{
    json_t *t = json_object_get(v, "type");
    return json_is_string(t) ? json_string_value(t) : NULL;
}

/* ---------- normalizer ---------- */

static int parse_norm(ns_hf *hf, json_t *v, const char *path, const char *where, int depth,
                      ns_err *err)
{
    static const char *const forms[] = {"NFC", "NFD", "NFKC", "NFKD"};
    static const int opts[] = {UTF8PROC_COMPOSE, UTF8PROC_DECOMPOSE,
                               UTF8PROC_COMPOSE | UTF8PROC_COMPAT,
                               UTF8PROC_DECOMPOSE | UTF8PROC_COMPAT};
    static const char *const keys_plain[] = {"type", NULL};
    static const char *const keys_seq[] = {"type", "normalizers", NULL};
    const char *type = type_of(v);
    if (!json_is_object(v) || !type)
        return ns_fail(err, NS_ERR_FORMAT, "%s: %s must be an object with a \"type\"", path, where);
    if (strcmp(type, "Sequence") == 0 && depth < NS_HF_MAX_DEPTH) {
        NS_TRY(ns_hf_check_keys(v, keys_seq, path, where, err));
        json_t *list = json_object_get(v, "normalizers");
        if (!json_is_array(list))
            return ns_fail(err, NS_ERR_FORMAT, "%s: %s.normalizers must be an array", path, where);
        for (size_t i = 0; i < json_array_size(list); i++) {
            char sub[128];
            snprintf(sub, sizeof sub, "%s.normalizers[%zu]", where, i);
            NS_TRY(parse_norm(hf, json_array_get(list, i), path, sub, depth + 1, err));
        }
        return NS_OK;
    }
    for (size_t i = 0; i < 4; i++) {
        if (strcmp(type, forms[i]) != 0)
            continue;
        NS_TRY(ns_hf_check_keys(v, keys_plain, path, where, err));
        if (hf->n_norms == NS_HF_MAX_NORMS)
            return ns_fail(err, NS_ERR_INVALID, "%s: %s: more than %d normalizers", path, where,
                           NS_HF_MAX_NORMS);
        hf->norm_opts[hf->n_norms++] = UTF8PROC_STABLE | opts[i];
        return NS_OK;
    }
    return ns_fail(err, NS_ERR_INVALID, "%s: %s.type \"%s\" is not supported (normsweep implements "
                   "NFC, NFD, NFKC, NFKD and Sequence)", path, where, type);
}

int ns_hf_parse_normalizer(ns_hf *hf, json_t *v, const char *path, ns_err *err)
{
    if (!v || json_is_null(v))
        return NS_OK;
    return parse_norm(hf, v, path, "normalizer", 0, err);
}

int ns_hf_normalize(const ns_hf *hf, const char *s, size_t n, char **out, size_t *out_len,
                    ns_err *err)
{
    *out = NULL;
    *out_len = 0;
    char *cur = NULL;
    size_t cur_len = n;
    const char *src = s;
    for (int i = 0; i < hf->n_norms; i++) {
        utf8proc_uint8_t *dst = NULL;
        utf8proc_ssize_t r = utf8proc_map((const utf8proc_uint8_t *)src, (utf8proc_ssize_t)cur_len,
                                          &dst, (utf8proc_option_t)hf->norm_opts[i]);
        free(cur);
        if (r < 0)
            return ns_fail(err, r == UTF8PROC_ERROR_NOMEM ? NS_ERR_NOMEM : NS_ERR_LIBRARY,
                           "tokenizer: normalization failed: %s", utf8proc_errmsg(r));
        cur = (char *)dst;
        cur_len = (size_t)r;
        src = cur;
    }
    if (!cur) { /* no normalizer: a copy */
        if (!(cur = malloc(n + 1)))
            return ns_fail(err, NS_ERR_NOMEM, "out of memory");
        memcpy(cur, s, n);
        cur[n] = '\0';
    }
    *out = cur;
    *out_len = cur_len;
    return NS_OK;
}

/* ---------- Oniguruma patterns for PCRE2 ---------- */

/* Append s to the growing buffer b. */
typedef struct sbuf {
    char *p;
    size_t n, cap;
} sbuf;

static int sb_put(sbuf *b, const char *s, size_t n)
{
    if (b->n + n + 1 > b->cap) {
        size_t c = b->cap ? b->cap : 256;
        while (c < b->n + n + 1)
            c *= 2;
        char *q = realloc(b->p, c);
        if (!q)
            return -1;
        b->p = q;
        b->cap = c;
    }
    memcpy(b->p + b->n, s, n);
    b->n += n;
    b->p[b->n] = '\0';
    return 0;
}

/* ---- General categories from utf8proc (Unicode 15.0 on Debian 12; PCRE2 10.42's own tables are
 * Unicode 14.0, and Oniguruma's in Hugging Face's tokenizers are newer): \p{L}, \p{N}, ... are
 * written out as explicit code point ranges. ---- */

#define CAT_BIT(c) (1u << (c))
#define CAT_L (CAT_BIT(UTF8PROC_CATEGORY_LU) | CAT_BIT(UTF8PROC_CATEGORY_LL) | \
               CAT_BIT(UTF8PROC_CATEGORY_LT) | CAT_BIT(UTF8PROC_CATEGORY_LM) | \
               CAT_BIT(UTF8PROC_CATEGORY_LO))
#define CAT_M (CAT_BIT(UTF8PROC_CATEGORY_MN) | CAT_BIT(UTF8PROC_CATEGORY_MC) | \
               CAT_BIT(UTF8PROC_CATEGORY_ME))
#define CAT_N (CAT_BIT(UTF8PROC_CATEGORY_ND) | CAT_BIT(UTF8PROC_CATEGORY_NL) | \
               CAT_BIT(UTF8PROC_CATEGORY_NO))

/* The category mask of a general-category name (L, Lu, N, Nd, ... as Oniguruma spells them), or
 * 0 when name is not one. */
static uint32_t cat_mask(const char *name, size_t n)
{
    static const char *const two[] = {"Cn", "Lu", "Ll", "Lt", "Lm", "Lo", "Mn", "Mc", "Me", "Nd",
                                      "Nl", "No", "Pc", "Pd", "Ps", "Pe", "Pi", "Pf", "Po", "Sm",
                                      "Sc", "Sk", "So", "Zs", "Zl", "Zp", "Cc", "Cf", "Cs", "Co"};
    if (n == 1) {
        switch (name[0]) {
        case 'L': return CAT_L;
        case 'M': return CAT_M;
        case 'N': return CAT_N;
        case 'P': return 0x7Fu << UTF8PROC_CATEGORY_PC;
        case 'S': return 0xFu << UTF8PROC_CATEGORY_SM;
        case 'Z': return 0x7u << UTF8PROC_CATEGORY_ZS;
        case 'C': return (0xFu << UTF8PROC_CATEGORY_CC) | CAT_BIT(UTF8PROC_CATEGORY_CN);
        default: return 0;
        }
    }
    if (n == 2 && (memcmp(name, "LC", 2) == 0 || memcmp(name, "L&", 2) == 0))
        return CAT_BIT(UTF8PROC_CATEGORY_LU) | CAT_BIT(UTF8PROC_CATEGORY_LL) |
               CAT_BIT(UTF8PROC_CATEGORY_LT);
    for (uint32_t c = 0; n == 2 && c < 30; c++)
        if (memcmp(name, two[c], 2) == 0)
            return CAT_BIT(c);
    return 0;
}

/* Append to out the code point ranges ("\x{a}-\x{b}...") whose category is in mask (or not, with
 * negate), surrogates excluded; bracketed unless inside a class. */
static int put_cats(sbuf *out, uint32_t mask, int negate, int in_class)
{
    if (!in_class && sb_put(out, "[", 1) != 0)
        return -1;
    int32_t start = -1;
    for (int32_t cp = 0; cp <= 0x110000; cp++) {
        int in = cp < 0x110000 && !(cp >= 0xD800 && cp <= 0xDFFF) &&
                 (((mask >> utf8proc_category(cp)) & 1u) != (uint32_t)negate);
        if (in && start < 0)
            start = cp;
        if (!in && start >= 0) {
            char r[40];
            int k = cp - 1 == start ? snprintf(r, sizeof r, "\\x{%x}", (unsigned)start)
                                    : snprintf(r, sizeof r, "\\x{%x}-\\x{%x}", (unsigned)start,
                                               (unsigned)(cp - 1));
            if (sb_put(out, r, (size_t)k) != 0)
                return -1;
            start = -1;
        }
    }
    return in_class ? 0 : sb_put(out, "]", 1);
}

/* An escape that names a set of characters: \p{..}/\P{..} with a general category, \w, \W, \d,
 * \D (Oniguruma's Unicode meanings). Returns 1 and advances *i past it when handled, 0 when e is
 * not such an escape, -1 on allocation failure. */
static int category_escape(const char *p, size_t n, size_t *i, int in_class, sbuf *out)
{
    char e = p[*i];
    uint32_t mask = 0;
    int negate = 0;
    size_t end = *i;
    if (e == 'w' || e == 'W') {
        mask = CAT_L | CAT_M | CAT_N | CAT_BIT(UTF8PROC_CATEGORY_PC);
        negate = e == 'W';
    } else if (e == 'd' || e == 'D') {
        mask = CAT_BIT(UTF8PROC_CATEGORY_ND);
        negate = e == 'D';
    } else if ((e == 'p' || e == 'P') && *i + 1 < n) {
        negate = e == 'P';
        size_t k = *i + 1; /* after the p */
        const char *name = p + k;
        size_t len = 1;
        end = k;
        if (p[k] == '{') {
            const char *close = memchr(p + k, '}', n - k);
            if (!close)
                return 0;
            name = p + k + 1;
            len = (size_t)(close - name);
            end = (size_t)(close - p);
        }
        if (len > 0 && *name == '^') {
            negate = !negate;
            name++;
            len--;
        }
        if (!(mask = cat_mask(name, len)))
            return 0; /* a script or binary property: left to PCRE2 */
    } else {
        return 0;
    }
    if (put_cats(out, mask, negate, in_class) != 0)
        return -1;
    *i = end;
    return 1;
}

/* Rewrite an Oniguruma (Ruby syntax, UTF-8) pattern into PCRE2 syntax with the same meaning. */
static int translate(const char *p, size_t n, sbuf *out, const char *path, const char *where,
                     ns_err *err)
{
    int in_class = 0, class_start = 0;
    for (size_t i = 0; i < n; i++) {
        char c = p[i];
        const char *rep = NULL;
        char tmp[32];
        if (c == '\\') {
            if (i + 1 >= n)
                return ns_fail(err, NS_ERR_INVALID, "%s: %s: the pattern ends in a backslash",
                               path, where);
            char e = p[++i];
            int r = category_escape(p, n, &i, in_class, out);
            if (r < 0)
                return ns_fail(err, NS_ERR_NOMEM, "out of memory");
            class_start = 0;
            if (r > 0)
                continue;
            switch (e) {
            case 's': rep = "\\p{White_Space}"; break;
            case 'S': rep = "\\P{White_Space}"; break;
            case 'h': rep = in_class ? "0-9a-fA-F" : "[0-9a-fA-F]"; break;
            case 'H':
                if (in_class)
                    return ns_fail(err, NS_ERR_INVALID, "%s: %s: \\H inside a character class is "
                                   "not supported", path, where);
                rep = "[^0-9a-fA-F]";
                break;
            case 'u': {
                size_t k = 0;
                while (k < 4 && i + 1 + k < n && strchr("0123456789abcdefABCDEF", p[i + 1 + k]))
                    k++;
                if (k != 4)
                    return ns_fail(err, NS_ERR_INVALID, "%s: %s: \\u needs four hex digits",
                                   path, where);
                snprintf(tmp, sizeof tmp, "\\x{%.4s}", p + i + 1);
                i += 4;
                rep = tmp;
                break;
            }
            case 'p': case 'P': case 'x': case 'n': case 'r': case 't': case 'f': case 'v':
            case 'a': case 'e': case '0':
                tmp[0] = '\\';
                tmp[1] = e;
                tmp[2] = '\0';
                rep = tmp;
                break;
            default:
                if ((e >= 'a' && e <= 'z') || (e >= 'A' && e <= 'Z') || (e >= '1' && e <= '9'))
                    return ns_fail(err, NS_ERR_INVALID, "%s: %s: \\%c is not supported (its "
                                   "meaning in Oniguruma, Hugging Face's regex engine, differs "
                                   "from PCRE2's or it is not translated)", path, where, e);
                tmp[0] = '\\';
                tmp[1] = e;
                tmp[2] = '\0';
                rep = tmp;
            }
            if (sb_put(out, rep, strlen(rep)) != 0)
                return ns_fail(err, NS_ERR_NOMEM, "out of memory");
            continue;
        }
        if (in_class) {
            if (c == '[')
                return ns_fail(err, NS_ERR_INVALID, "%s: %s: nested character classes and POSIX "
                               "brackets are not supported", path, where);
            if (c == ']' && !class_start)
                in_class = 0;
            class_start = 0; /* a ']' right after '[' or '[^' is a literal */
        } else if (c == '[') {
            in_class = 1;
            class_start = 1;
            if (i + 1 < n && p[i + 1] == '^') {
                if (sb_put(out, "[^", 2) != 0)
                    return ns_fail(err, NS_ERR_NOMEM, "out of memory");
                i++;
                continue;
            }
        } else if (c == '^' || c == '$') {
            return ns_fail(err, NS_ERR_INVALID, "%s: %s: the anchor '%c' is not supported (it is a "
                           "line anchor in Oniguruma)", path, where, c);
        } else if (c == '(' && i + 1 < n && p[i + 1] == '?') {
            const char *q = p + i + 2;
            size_t left = n - i - 2;
            int ok = left > 0 && (strchr(":=!>", *q) ||
                                  (*q == '<' && left > 1 && (q[1] == '=' || q[1] == '!')));
            if (!ok) { /* inline flags: only i (case-insensitive) means the same in both */
                size_t k = 0;
                while (k < left && (q[k] == 'i' || q[k] == '-'))
                    k++;
                ok = k > 0 && k < left && (q[k] == ':' || q[k] == ')');
            }
            if (!ok)
                return ns_fail(err, NS_ERR_INVALID, "%s: %s: the group \"(?%.*s\" is not supported",
                               path, where, (int)(left < 3 ? left : 3), q);
        }
        if (sb_put(out, &c, 1) != 0)
            return ns_fail(err, NS_ERR_NOMEM, "out of memory");
    }
    if (in_class)
        return ns_fail(err, NS_ERR_INVALID, "%s: %s: unterminated character class", path, where);
    return NS_OK;
}

int ns_hf_compile(const char *pattern, size_t len, int literal, pcre2_code **out, const char *path,
                  const char *where, ns_err *err)
{
    *out = NULL;
    if (len == 0)
        return ns_fail(err, NS_ERR_INVALID, "%s: %s: an empty pattern is not supported", path, where);
    if (ns_utf8_invalid_at(pattern, len) != len || memchr(pattern, '\0', len))
        return ns_fail(err, NS_ERR_FORMAT, "%s: %s: the pattern is not valid text", path, where);
    sbuf b = {0};
    uint32_t opts = PCRE2_UTF | PCRE2_NO_UTF_CHECK;
    if (literal) {
        opts |= PCRE2_LITERAL;
        if (sb_put(&b, pattern, len) != 0)
            return ns_fail(err, NS_ERR_NOMEM, "out of memory");
    } else {
        opts |= PCRE2_UCP;
        int rc = translate(pattern, len, &b, path, where, err);
        if (rc != NS_OK) {
            free(b.p);
            return rc;
        }
    }
    pcre2_compile_context *cc = pcre2_compile_context_create(NULL);
    if (!cc) {
        free(b.p);
        return ns_fail(err, NS_ERR_NOMEM, "out of memory");
    }
    pcre2_set_newline(cc, PCRE2_NEWLINE_LF);
    int ecode;
    PCRE2_SIZE eoff;
    *out = pcre2_compile((PCRE2_SPTR)b.p, b.n, opts, &ecode, &eoff, cc);
    pcre2_compile_context_free(cc);
    int rc = NS_OK;
    if (!*out) {
        PCRE2_UCHAR msg[256];
        if (pcre2_get_error_message(ecode, msg, sizeof msg) < 0)
            msg[0] = '\0';
        rc = ns_fail(err, NS_ERR_INVALID, "%s: %s: PCRE2 cannot compile the pattern (as \"%.200s\") "
                     "at offset %zu: %s", path, where, b.p, (size_t)eoff, (const char *)msg);
    } else {
        /* Without JIT the interpreter gives the same matches, slower. Under valgrind it is used:
         * the JIT's searches for a small set of first characters load whole aligned words across
         * the subject's end, which memcheck reports as uses of undefined bytes. */
        if (!RUNNING_ON_VALGRIND)
            (void)pcre2_jit_compile(*out, PCRE2_JIT_COMPLETE);
    }
    free(b.p);
    return rc;
}

/* ---------- pre_tokenizer ---------- */

static int add_step(ns_hf *hf, const ns_hf_step *s, ns_err *err)
{
    ns_hf_step *p = realloc(hf->steps, (hf->n_steps + 1) * sizeof *p);
    if (!p)
        return ns_fail(err, NS_ERR_NOMEM, "out of memory");
    hf->steps = p;
    hf->steps[hf->n_steps++] = *s;
    return NS_OK;
}

static int parse_split(ns_hf *hf, json_t *v, const char *path, const char *where, ns_err *err)
{
    static const char *const keys[] = {"type", "pattern", "behavior", "invert", NULL};
    static const char *const behaviors[] = {"Removed", "Isolated", "MergedWithPrevious",
                                            "MergedWithNext", "Contiguous"};
    NS_TRY(ns_hf_check_keys(v, keys, path, where, err));
    json_t *pat = json_object_get(v, "pattern"), *beh = json_object_get(v, "behavior"),
           *inv = json_object_get(v, "invert");
    json_t *str = json_object_get(pat, "String"), *re = json_object_get(pat, "Regex");
    if (!json_is_object(pat) || json_object_size(pat) != 1 || !(json_is_string(str) || json_is_string(re)))
        return ns_fail(err, NS_ERR_FORMAT, "%s: %s.pattern must be {\"Regex\": ...} or "
                       "{\"String\": ...}", path, where);
    if (!json_is_string(beh) || !json_is_boolean(inv))
        return ns_fail(err, NS_ERR_FORMAT, "%s: %s needs \"behavior\" (a string) and \"invert\" "
                       "(true or false)", path, where);
    ns_hf_step s = {0};
    s.behavior = -1;
    for (int i = 0; i < 5; i++)
        if (strcmp(json_string_value(beh), behaviors[i]) == 0)
            s.behavior = i;
    if (s.behavior < 0)
        return ns_fail(err, NS_ERR_INVALID, "%s: %s.behavior \"%s\" is not one of Removed, "
                       "Isolated, MergedWithPrevious, MergedWithNext, Contiguous", path, where,
                       json_string_value(beh));
    s.invert = json_is_true(inv);
    json_t *p = str ? str : re;
    char sub[160];
    snprintf(sub, sizeof sub, "%s.pattern", where);
    NS_TRY(ns_hf_compile(json_string_value(p), json_string_length(p), str != NULL, &s.re, path,
                         sub, err));
    int rc = add_step(hf, &s, err);
    if (rc != NS_OK)
        pcre2_code_free(s.re);
    return rc;
}

static int parse_byte_level(ns_hf *hf, json_t *v, const char *path, const char *where, ns_err *err)
{
    static const char *const keys[] = {"type", "add_prefix_space", "trim_offsets", "use_regex", NULL};
    NS_TRY(ns_hf_check_keys(v, keys, path, where, err));
    ns_hf_step s = {0};
    int use_regex, trim;
    s.byte_level = 1;
    NS_TRY(ns_hf_get_bool(v, "add_prefix_space", 1, &s.add_prefix_space, path, where, err));
    NS_TRY(ns_hf_get_bool(v, "trim_offsets", 1, &trim, path, where, err)); /* offsets only */
    NS_TRY(ns_hf_get_bool(v, "use_regex", 1, &use_regex, path, where, err));
    if (use_regex) {
        char sub[160];
        snprintf(sub, sizeof sub, "%s (GPT-2's pattern)", where);
        NS_TRY(ns_hf_compile(NS_GPT2_PATTERN, strlen(NS_GPT2_PATTERN), 0, &s.re, path, sub, err));
    }
    int rc = add_step(hf, &s, err);
    if (rc != NS_OK)
        pcre2_code_free(s.re);
    return rc;
}

static int parse_pretok(ns_hf *hf, json_t *v, const char *path, const char *where, int depth,
                        ns_err *err)
{
    const char *type = type_of(v);
    if (!json_is_object(v) || !type)
        return ns_fail(err, NS_ERR_FORMAT, "%s: %s must be an object with a \"type\"", path, where);
    if (strcmp(type, "Sequence") == 0 && depth < NS_HF_MAX_DEPTH) {
        static const char *const keys[] = {"type", "pretokenizers", NULL};
        NS_TRY(ns_hf_check_keys(v, keys, path, where, err));
        json_t *list = json_object_get(v, "pretokenizers");
        if (!json_is_array(list))
            return ns_fail(err, NS_ERR_FORMAT, "%s: %s.pretokenizers must be an array", path, where);
        for (size_t i = 0; i < json_array_size(list); i++) {
            char sub[128];
            snprintf(sub, sizeof sub, "%s.pretokenizers[%zu]", where, i);
            NS_TRY(parse_pretok(hf, json_array_get(list, i), path, sub, depth + 1, err));
        }
        return NS_OK;
    }
    if (hf->n_steps > 0 && hf->steps[hf->n_steps - 1].byte_level)
        return ns_fail(err, NS_ERR_INVALID, "%s: %s: a pre-tokenizer after ByteLevel is not "
                       "supported (ByteLevel must be the last step)", path, where);
    if (strcmp(type, "Split") == 0)
        return parse_split(hf, v, path, where, err);
    if (strcmp(type, "ByteLevel") == 0)
        return parse_byte_level(hf, v, path, where, err);
    return ns_fail(err, NS_ERR_INVALID, "%s: %s.type \"%s\" is not supported (normsweep implements "
                   "ByteLevel, Split and Sequence)", path, where, type);
}

int ns_hf_parse_pre_tokenizer(ns_hf *hf, json_t *v, const char *path, ns_err *err)
{
    if (!v || json_is_null(v))
        return ns_fail(err, NS_ERR_INVALID, "%s: pre_tokenizer is null: normsweep implements "
                       "byte-level BPE, which needs a ByteLevel pre-tokenizer", path);
    NS_TRY(parse_pretok(hf, v, path, "pre_tokenizer", 0, err));
    if (hf->n_steps == 0 || !hf->steps[hf->n_steps - 1].byte_level)
        return ns_fail(err, NS_ERR_INVALID, "%s: pre_tokenizer has no ByteLevel step: normsweep "
                       "implements byte-level BPE only", path);
    return NS_OK;
}

/* ---------- post_processor: what add_special_tokens=True would add ---------- */

/* The ids of special token name in a TemplateProcessing's special_tokens. */
static int template_ids(json_t *specials, const char *name, int prefix, ns_hf *hf,
                        const char *path, const char *where, ns_err *err)
{
    json_t *st = json_object_get(specials, name), *ids = json_object_get(st, "ids");
    if (!json_is_array(ids) || json_array_size(ids) == 0)
        return ns_fail(err, NS_ERR_FORMAT, "%s: %s: special token \"%s\" has no ids in "
                       "special_tokens", path, where, name);
    for (size_t i = 0; i < json_array_size(ids); i++) {
        json_t *x = json_array_get(ids, i);
        if (!json_is_integer(x) || json_integer_value(x) < 0 || json_integer_value(x) >= INT32_MAX)
            return ns_fail(err, NS_ERR_FORMAT, "%s: %s: special token \"%s\": ids must be token "
                           "ids", path, where, name);
        if (prefix && hf->n_prefix == 0)
            hf->bos_id = (int32_t)json_integer_value(x);
        if (prefix)
            hf->n_prefix++;
        else
            hf->n_suffix++;
    }
    return NS_OK;
}

static int parse_template(ns_hf *hf, json_t *v, const char *path, const char *where, ns_err *err)
{
    static const char *const keys[] = {"type", "single", "pair", "special_tokens", NULL};
    NS_TRY(ns_hf_check_keys(v, keys, path, where, err));
    json_t *single = json_object_get(v, "single"), *specials = json_object_get(v, "special_tokens");
    if (!json_is_array(single) || !json_is_object(specials))
        return ns_fail(err, NS_ERR_FORMAT, "%s: %s needs \"single\" (an array) and "
                       "\"special_tokens\" (an object)", path, where);
    int seen_a = 0;
    for (size_t i = 0; i < json_array_size(single); i++) {
        json_t *item = json_array_get(single, i);
        json_t *sp = json_object_get(item, "SpecialToken"), *sq = json_object_get(item, "Sequence");
        json_t *id = json_object_get(sp ? sp : sq, "id");
        if (!json_is_object(item) || json_object_size(item) != 1 || !json_is_string(id))
            return ns_fail(err, NS_ERR_FORMAT, "%s: %s.single[%zu] must be {\"SpecialToken\": "
                           "{\"id\": ...}} or {\"Sequence\": {\"id\": \"A\"}}", path, where, i);
        if (sq) {
            if (strcmp(json_string_value(id), "A") != 0 || seen_a)
                return ns_fail(err, NS_ERR_INVALID, "%s: %s.single[%zu]: only one sequence \"A\" "
                               "is supported", path, where, i);
            seen_a = 1;
            continue;
        }
        NS_TRY(template_ids(specials, json_string_value(id), !seen_a, hf, path, where, err));
    }
    if (!seen_a)
        return ns_fail(err, NS_ERR_INVALID, "%s: %s.single has no sequence \"A\"", path, where);
    return NS_OK;
}

/* RobertaProcessing / BertProcessing: cls before, sep after. */
static int parse_cls_sep(ns_hf *hf, json_t *v, const char *path, const char *where, ns_err *err)
{
    static const char *const keys[] = {"type", "sep", "cls", "trim_offsets", "add_prefix_space", NULL};
    NS_TRY(ns_hf_check_keys(v, keys, path, where, err));
    json_t *cls = json_object_get(v, "cls"), *sep = json_object_get(v, "sep");
    json_t *cid = json_array_get(cls, 1), *sid = json_array_get(sep, 1);
    if (!json_is_integer(cid) || !json_is_integer(sid) || json_integer_value(cid) < 0 ||
        json_integer_value(cid) >= INT32_MAX)
        return ns_fail(err, NS_ERR_FORMAT, "%s: %s needs \"cls\" and \"sep\" as [token, id]", path,
                       where);
    if (hf->n_prefix == 0)
        hf->bos_id = (int32_t)json_integer_value(cid);
    hf->n_prefix++;
    hf->n_suffix++;
    return NS_OK;
}

static int parse_post(ns_hf *hf, json_t *v, const char *path, const char *where, int depth,
                      ns_err *err)
{
    const char *type = type_of(v);
    if (!json_is_object(v) || !type)
        return ns_fail(err, NS_ERR_FORMAT, "%s: %s must be an object with a \"type\"", path, where);
    if (strcmp(type, "ByteLevel") == 0) { /* offsets only */
        static const char *const keys[] = {"type", "add_prefix_space", "trim_offsets", "use_regex",
                                           NULL};
        return ns_hf_check_keys(v, keys, path, where, err);
    }
    if (strcmp(type, "TemplateProcessing") == 0)
        return parse_template(hf, v, path, where, err);
    if (strcmp(type, "RobertaProcessing") == 0 || strcmp(type, "BertProcessing") == 0)
        return parse_cls_sep(hf, v, path, where, err);
    if (strcmp(type, "Sequence") == 0 && depth < NS_HF_MAX_DEPTH) {
        static const char *const keys[] = {"type", "processors", NULL};
        NS_TRY(ns_hf_check_keys(v, keys, path, where, err));
        json_t *list = json_object_get(v, "processors");
        if (!json_is_array(list))
            return ns_fail(err, NS_ERR_FORMAT, "%s: %s.processors must be an array", path, where);
        for (size_t i = 0; i < json_array_size(list); i++) {
            char sub[128];
            snprintf(sub, sizeof sub, "%s.processors[%zu]", where, i);
            NS_TRY(parse_post(hf, json_array_get(list, i), path, sub, depth + 1, err));
        }
        return NS_OK;
    }
    return ns_fail(err, NS_ERR_INVALID, "%s: %s.type \"%s\" is not supported (normsweep reads "
                   "ByteLevel, TemplateProcessing, RobertaProcessing, BertProcessing and Sequence)",
                   path, where, type);
}

int ns_hf_parse_post_processor(ns_hf *hf, json_t *v, const char *path, ns_err *err)
{
    if (!v || json_is_null(v))
        return NS_OK;
    NS_TRY(parse_post(hf, v, path, "post_processor", 0, err));
    if (hf->n_prefix > 0) {
        hf->bos_added = 1;
        snprintf(hf->bos_source, sizeof hf->bos_source, "post_processor");
    }
    return NS_OK;
}

/* ---------- decoder ---------- */

static int parse_dec(json_t *v, const char *path, const char *where, int depth, ns_err *err)
{
    const char *type = type_of(v);
    if (!json_is_object(v) || !type)
        return ns_fail(err, NS_ERR_FORMAT, "%s: %s must be an object with a \"type\"", path, where);
    if (strcmp(type, "ByteLevel") == 0) {
        static const char *const keys[] = {"type", "add_prefix_space", "trim_offsets", "use_regex",
                                           NULL};
        return ns_hf_check_keys(v, keys, path, where, err);
    }
    if (strcmp(type, "Sequence") == 0 && depth < NS_HF_MAX_DEPTH) {
        static const char *const keys[] = {"type", "decoders", NULL};
        NS_TRY(ns_hf_check_keys(v, keys, path, where, err));
        json_t *list = json_object_get(v, "decoders");
        if (!json_is_array(list))
            return ns_fail(err, NS_ERR_FORMAT, "%s: %s.decoders must be an array", path, where);
        for (size_t i = 0; i < json_array_size(list); i++) {
            char sub[128];
            snprintf(sub, sizeof sub, "%s.decoders[%zu]", where, i);
            NS_TRY(parse_dec(json_array_get(list, i), path, sub, depth + 1, err));
        }
        return NS_OK;
    }
    return ns_fail(err, NS_ERR_INVALID, "%s: %s.type \"%s\" is not supported (normsweep decodes "
                   "byte-level tokens: ByteLevel or a Sequence of it)", path, where, type);
}

int ns_hf_parse_decoder(json_t *v, const char *path, ns_err *err)
{
    if (!v || json_is_null(v))
        return NS_OK;
    return parse_dec(v, path, "decoder", 0, err);
}

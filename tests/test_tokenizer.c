/* test_tokenizer: GPT-2 BPE against golden ids (War and Peace, a Unicode sampler), both file
 * namings, hand-checked cases, the fast BPE kernel against the reference, invalid UTF-8 and NUL
 * round trips, and load errors that name the file. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/ns_file.h"
#include "ns_test.h"
#include "tokenizer/ns_tokenizer.h"
#include "tokenizer/ns_tokenizer_internal.h"
#include "tokenizer/ns_wordcache.h"

static ns_tokenizer *tok_openai; /* $NS_TEST_TOKENIZER_DIR: encoder.json + vocab.bpe */
static ns_tokenizer *tok_hf;     /* $NS_TEST_MODEL_DIR: vocab.json + merges.txt */
static char tmpdir[256];

static int suite_init(void)
{
    ns_err err;
    if (ns_tokenizer_load(ns_test_env("NS_TEST_TOKENIZER_DIR"), &tok_openai, &err) != NS_OK ||
        ns_tokenizer_load(ns_test_env("NS_TEST_MODEL_DIR"), &tok_hf, &err) != NS_OK) {
        fprintf(stderr, "loading the test tokenizers failed: %s\n", err.msg);
        return 1;
    }
    snprintf(tmpdir, sizeof tmpdir, "/tmp/ns_test_tokenizer.XXXXXX");
    return mkdtemp(tmpdir) ? 0 : 1;
}

static int suite_clean(void)
{
    ns_tokenizer_free(tok_openai);
    ns_tokenizer_free(tok_hf);
    char cmd[300];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", tmpdir);
    return system(cmd) == 0 ? 0 : 1;
}

/* Read a little-endian int32 file into a fresh array. */
static int32_t *read_i32(const char *path, size_t *n)
{
    char *data = NULL;
    size_t len = 0;
    ns_err err;
    if (ns_file_read_all(path, 0, &data, &len, &err) != NS_OK) {
        fprintf(stderr, "%s\n", err.msg);
        return NULL;
    }
    *n = len / 4;
    int32_t *v = malloc((*n + 1) * sizeof *v);
    const unsigned char *p = (const unsigned char *)data;
    for (size_t i = 0; v && i < *n; i++)
        v[i] = (int32_t)((uint32_t)p[4 * i] | (uint32_t)p[4 * i + 1] << 8 |
                         (uint32_t)p[4 * i + 2] << 16 | (uint32_t)p[4 * i + 3] << 24);
    free(data);
    return v;
}

static char *golden_path(const char *name)
{
    return ns_path_join(ns_test_env("NS_TEST_GOLDEN_DIR"), name);
}

/* Encode the file at path with tok and compare with the golden ids; prints the first mismatch. */
static void check_golden(const ns_tokenizer *tok, const char *text_path, const char *ids_path)
{
    ns_err err;
    ns_mmap map;
    CU_ASSERT_EQUAL_FATAL(ns_mmap_open(text_path, &map, &err), NS_OK);
    size_t n_gold = 0;
    int32_t *gold = read_i32(ids_path, &n_gold);
    CU_ASSERT_PTR_NOT_NULL_FATAL(gold);
    ns_tokens ids = {0};
    CU_ASSERT_EQUAL(ns_tokenizer_encode(tok, (const char *)map.data, map.size, &ids, &err), NS_OK);
    CU_ASSERT_EQUAL(ids.n, n_gold);
    size_t n = ids.n < n_gold ? ids.n : n_gold, first_bad = n;
    for (size_t i = 0; i < n && first_bad == n; i++)
        if (ids.ids[i] != gold[i])
            first_bad = i;
    if (first_bad < n)
        fprintf(stderr, "\n%s: first difference at token %zu: got %d, golden %d\n", text_path,
                first_bad, (int)ids.ids[first_bad], (int)gold[first_bad]);
    CU_ASSERT_EQUAL(first_bad, n);
    /* and the ids decode back to the file's bytes */
    char *back = NULL;
    size_t back_len = 0;
    CU_ASSERT_EQUAL(ns_tokenizer_decode(tok, ids.ids, ids.n, &back, &back_len, &err), NS_OK);
    CU_ASSERT(back_len == map.size && memcmp(back, map.data, map.size) == 0);
    free(back);
    ns_tokens_free(&ids);
    free(gold);
    ns_mmap_close(&map);
}

static void test_golden_war_and_peace(void)
{
    char *ids = golden_path("wap_tokens.i32");
    check_golden(tok_openai, ns_test_env("NS_TEST_CORPUS"), ids);
    free(ids);
}

static void test_golden_unicode(void)
{
    char *text = golden_path("unicode.txt"), *ids = golden_path("unicode_tokens.i32");
    check_golden(tok_openai, text, ids);
    free(text);
    free(ids);
}

static void test_hf_names_give_identical_ids(void)
{
    CU_ASSERT_EQUAL(ns_tokenizer_vocab_size(tok_openai), 50257);
    CU_ASSERT_EQUAL(ns_tokenizer_vocab_size(tok_hf), 50257);
    CU_ASSERT_EQUAL(ns_tokenizer_merge_count(tok_openai), 50000);
    CU_ASSERT_EQUAL(ns_tokenizer_merge_count(tok_hf), 50000);
    CU_ASSERT_PTR_NOT_NULL(strstr(ns_tokenizer_merges_path(tok_hf), "merges.txt"));
    CU_ASSERT_PTR_NOT_NULL(strstr(ns_tokenizer_merges_path(tok_openai), "vocab.bpe"));
    char *text = golden_path("unicode.txt"), *ids = golden_path("unicode_tokens.i32");
    check_golden(tok_hf, text, ids);
    free(text);
    free(ids);
    ids = golden_path("wap_tokens.i32");
    check_golden(tok_hf, ns_test_env("NS_TEST_CORPUS"), ids);
    free(ids);
}

/* Hand-checked cases: pre-token splits worked out from the pattern by hand, ids looked up in
 * GPT-2's encoder.json (e.g. "Hello" 15496, " world" 995, " " 220, "\n" 198, "\n\n" 628). */
typedef struct hand_case {
    const char *text;
    const char *split; /* pre-tokens joined with '|' */
    int32_t ids[16];
    size_t n;
} hand_case;

static const hand_case hand_cases[] = {
    {"Hello world", "Hello| world", {15496, 995}, 2},
    {"I'm they're we've you'll she'd it's don't",
     "I|'m| they|'re| we|'ve| you|'ll| she|'d| it|'s| don|'t",
     {40, 1101, 484, 821, 356, 1053, 345, 1183, 673, 1549, 340, 338, 836, 470}, 14},
    /* contractions are case-sensitive: 'RE is punctuation then a word */
    {"you'RE", "you|'|RE", {5832, 6, 2200}, 3},
    {"'S 'T", "'|S| '|T", {6, 50, 705, 51}, 4},
    /* \s+(?!\S): a space run before a word leaves its last space to the word */
    {"a  b", "a| | b", {64, 220, 275}, 3},
    {"   Leading", "  | Leading", {220, 220, 43225}, 3},
    /* only a space (not a tab) joins the next word */
    {"x\t\ty", "x|\t|\t|y", {87, 197, 197, 88}, 4},
    /* trailing whitespace is one pre-token; "   \n" has no single token */
    {"trailing   \n", "trailing|   \n", {9535, 4386, 220, 220, 220, 198}, 6},
    {"a \n\nb", "a| \n|\n|b", {64, 220, 198, 198, 65}, 5},
    {"\n\n\n", "\n\n\n", {628, 198}, 2},
    {" ", " ", {220}, 1},
    {"1234 3.14159 12345", "1234| 3|.|14159| 12345", {1065, 2682, 513, 13, 1415, 19707, 17031, 2231}, 8},
    /* \p{N} covers Arabic-Indic digits, Roman numerals and fractions */
    {"\xd9\xa3 \xe2\x85\xab \xc2\xbd", "\xd9\xa3| \xe2\x85\xab| \xc2\xbd", {149, 96, 2343, 227, 104, 25208}, 6},
    /* emoji are punctuation-class runs, BPE'd from their bytes */
    {"Emoji: \xf0\x9f\x99\x82\xf0\x9f\x9a\x80", "Emoji|:| \xf0\x9f\x99\x82\xf0\x9f\x9a\x80",
     {36, 5908, 7285, 25, 32485, 8582, 248, 222}, 8},
    {"\xf0\x9f\x91\x8d\xf0\x9f\x8f\xbd", "\xf0\x9f\x91\x8d\xf0\x9f\x8f\xbd", {41840, 235, 8582, 237, 121}, 5},
    {"", "", {0}, 0},
};

/* The pre-tokens of text joined with '|' (into buf); returns the length written. */
static size_t split_of(const ns_tokenizer *tok, const char *text, size_t len, char *buf, size_t cap,
                     int *any_invalid)
{
    ns_pretok it;
    ns_err err;
    size_t k = 0;
    *any_invalid = 0;
    buf[0] = '\0';
    if (ns_pretok_init(&it, tok, text, len, &err) != NS_OK) {
        CU_FAIL("ns_pretok_init");
        return 0;
    }
    size_t start, n;
    int invalid, r;
    while ((r = ns_pretok_next(&it, &start, &n, &invalid, &err)) == 1) {
        if (k > 0 && k + 1 < cap)
            buf[k++] = '|';
        for (size_t i = 0; i < n && k + 1 < cap; i++)
            buf[k++] = text[start + i];
        *any_invalid |= invalid;
    }
    buf[k] = '\0';
    CU_ASSERT_EQUAL(r, 0);
    ns_pretok_free(&it);
    return k;
}

static void test_hand_checked_cases(void)
{
    ns_err err;
    for (size_t c = 0; c < sizeof hand_cases / sizeof hand_cases[0]; c++) {
        const hand_case *hc = &hand_cases[c];
        char split[512];
        int any_invalid;
        split_of(tok_openai, hc->text, strlen(hc->text), split, sizeof split, &any_invalid);
        CU_ASSERT_STRING_EQUAL(split, hc->split);
        CU_ASSERT_FALSE(any_invalid);
        ns_tokens ids = {0};
        CU_ASSERT_EQUAL(ns_tokenizer_encode(tok_openai, hc->text, strlen(hc->text), &ids, &err), NS_OK);
        int same = ids.n == hc->n && (hc->n == 0 || memcmp(ids.ids, hc->ids, hc->n * 4) == 0);
        if (!same) {
            fprintf(stderr, "\ncase %zu \"%s\": got", c, hc->text);
            for (size_t i = 0; i < ids.n; i++)
                fprintf(stderr, " %d", (int)ids.ids[i]);
            fprintf(stderr, "\n");
        }
        CU_ASSERT(same);
        ns_tokens_free(&ids);
    }
    /* appending: encode adds to what out already holds */
    ns_tokens ids = {0};
    CU_ASSERT_EQUAL(ns_tokenizer_encode(tok_openai, "Hello", 5, &ids, &err), NS_OK);
    CU_ASSERT_EQUAL(ns_tokenizer_encode(tok_openai, " world", 6, &ids, &err), NS_OK);
    CU_ASSERT(ids.n == 2 && ids.ids[0] == 15496 && ids.ids[1] == 995);
    ns_tokens_free(&ids);
    /* "<|endoftext|>" in the text is plain text (as in GPT-2's encoder.py), not id 50256 */
    CU_ASSERT_EQUAL(ns_tokenizer_token_id(tok_openai, "<|endoftext|>", 13), 50256);
    CU_ASSERT_EQUAL(ns_tokenizer_encode(tok_openai, "<|endoftext|>", 13, &ids, &err), NS_OK);
    CU_ASSERT(ids.n > 1);
    for (size_t i = 0; i < ids.n; i++)
        CU_ASSERT_NOT_EQUAL(ids.ids[i], 50256);
    ns_tokens_free(&ids);
    size_t len = 0;
    const char *b = ns_tokenizer_token_bytes(tok_openai, 995, &len);
    CU_ASSERT(b && len == 6 && memcmp(b, " world", 6) == 0);
    CU_ASSERT_PTR_NULL(ns_tokenizer_token_bytes(tok_openai, 50257, &len));
    CU_ASSERT_PTR_NULL(ns_tokenizer_token_bytes(tok_openai, -1, &len));
}

static void test_byte_to_unicode_map(void)
{
    uint32_t cp[256];
    ns_byte_to_unicode(cp);
    CU_ASSERT_EQUAL(cp['A'], 'A');
    CU_ASSERT_EQUAL(cp[0], 256);     /* first non-printable byte */
    CU_ASSERT_EQUAL(cp[' '], 288);   /* 'Ġ' */
    CU_ASSERT_EQUAL(cp['\n'], 266);  /* 'Ċ' */
    CU_ASSERT_EQUAL(cp[0xAD], 323);  /* soft hyphen: the last of the 68 remapped bytes */
    CU_ASSERT_EQUAL(cp[0xFF], 0xFF);
    int seen[NS_BYTE_UNICODE_SPAN] = {0};
    for (int b = 0; b < 256; b++) {
        CU_ASSERT_FATAL(cp[b] < NS_BYTE_UNICODE_SPAN);
        seen[cp[b]]++;
    }
    for (int b = 0; b < 256; b++)
        CU_ASSERT_EQUAL(seen[cp[b]], 1); /* a bijection */
}

/* Fast kernel == reference on every distinct pre-token of the Unicode sampler and the first
 * 300 kB of the corpus, and on pseudo-random byte strings (exact comparison of ids). */
static void compare_kernels_on(const char *text, size_t len, size_t *words)
{
    ns_pretok it;
    ns_err err;
    CU_ASSERT_EQUAL_FATAL(ns_pretok_init(&it, tok_openai, text, len, &err), NS_OK);
    size_t start, n;
    int invalid, bad = 0;
    while (ns_pretok_next(&it, &start, &n, &invalid, &err) == 1) {
        ns_tokens a = {0}, b = {0};
        ns_tokenizer_encode_word(tok_openai, text + start, n, 0, &a, &err);
        ns_tokenizer_encode_word(tok_openai, text + start, n, 1, &b, &err);
        if (a.n != b.n || memcmp(a.ids, b.ids, a.n * 4) != 0)
            bad++;
        (*words)++;
        ns_tokens_free(&a);
        ns_tokens_free(&b);
    }
    ns_pretok_free(&it);
    CU_ASSERT_EQUAL(bad, 0);
}

static void test_fast_kernel_matches_reference(void)
{
    CU_ASSERT_TRUE(tok_openai->well_ordered); /* GPT-2's merges take the fast path */
    ns_err err;
    ns_mmap map;
    size_t words = 0;
    CU_ASSERT_EQUAL_FATAL(ns_mmap_open(ns_test_env("NS_TEST_CORPUS"), &map, &err), NS_OK);
    compare_kernels_on((const char *)map.data, map.size < 300000 ? map.size : 300000, &words);
    ns_mmap_close(&map);
    char *path = golden_path("unicode.txt");
    char *text = NULL;
    size_t len = 0;
    CU_ASSERT_EQUAL_FATAL(ns_file_read_all(path, 0, &text, &len, &err), NS_OK);
    compare_kernels_on(text, len, &words);
    free(text);
    free(path);
    /* random words: letters only (long merges) and arbitrary bytes */
    uint64_t s = 12345;
    char w[200];
    int bad = 0;
    for (int t = 0; t < 3000; t++) {
        size_t n = 1 + t % 150;
        for (size_t i = 0; i < n; i++) {
            s = s * 6364136223846793005ull + 1442695040888963407ull;
            w[i] = t % 2 ? (char)('a' + (s >> 33) % 6) : (char)(s >> 56);
        }
        ns_tokens a = {0}, b = {0};
        ns_tokenizer_encode_word(tok_openai, w, n, 0, &a, &err);
        ns_tokenizer_encode_word(tok_openai, w, n, 1, &b, &err);
        if (a.n != b.n || memcmp(a.ids, b.ids, a.n * 4) != 0)
            bad++;
        ns_tokens_free(&a);
        ns_tokens_free(&b);
    }
    CU_ASSERT_EQUAL(bad, 0);
    CU_ASSERT(words > 50000);
}

/* Encode, decode, and require the same bytes back. */
static int round_trips(const char *text, size_t len)
{
    ns_err err;
    ns_tokens ids = {0};
    char *back = NULL;
    size_t back_len = 0;
    int ok = ns_tokenizer_encode(tok_openai, text, len, &ids, &err) == NS_OK &&
             ns_tokenizer_decode(tok_openai, ids.ids, ids.n, &back, &back_len, &err) == NS_OK &&
             back_len == len && memcmp(back, text, len) == 0;
    free(back);
    ns_tokens_free(&ids);
    return ok;
}

static void test_invalid_utf8_and_nul(void)
{
    /* Each maximal invalid run is a pre-token of its own, between the valid ones. */
#define CASE(text, split) {text, sizeof(text) - 1, split, sizeof(split) - 1}
    static const struct {
        const char *text;
        size_t len;
        const char *split;
        size_t split_len;
    } cases[] = {
        CASE("a\xff" "b", "a|\xff|b"),
        CASE(" \xff\xfe x", " |\xff\xfe| x"),           /* a space before invalid bytes */
        CASE("caf\xc3", "caf|\xc3"),                      /* truncated sequence at the end */
        CASE("\xc3(", "\xc3|("),                          /* bad continuation byte */
        CASE("\xed\xa0\x80z", "\xed\xa0\x80|z"),          /* UTF-16 surrogate */
        CASE("\xc0\xaf", "\xc0\xaf"),                     /* overlong '/' */
        CASE("\xf4\x90\x80\x80", "\xf4\x90\x80\x80"),     /* above U+10FFFF */
        CASE("x\0y", "x|\0|y"),                           /* NUL is valid, punctuation class */
    };
#undef CASE
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        char split[64];
        int any_invalid;
        size_t k = split_of(tok_openai, cases[c].text, cases[c].len, split, sizeof split, &any_invalid);
        CU_ASSERT(k == cases[c].split_len && memcmp(split, cases[c].split, k) == 0);
        CU_ASSERT_EQUAL(any_invalid, c < 7);
        CU_ASSERT(round_trips(cases[c].text, cases[c].len));
    }
    /* NUL bytes are tokens like any other */
    ns_err err;
    ns_tokens ids = {0};
    CU_ASSERT_EQUAL(ns_tokenizer_encode(tok_openai, "\0\0", 2, &ids, &err), NS_OK);
    CU_ASSERT(ids.n >= 1);
    ns_tokens_free(&ids);
    /* 256 KiB of pseudo-random bytes (mostly invalid UTF-8, NULs included) */
    size_t n = 256 * 1024;
    char *buf = malloc(n);
    CU_ASSERT_PTR_NOT_NULL_FATAL(buf);
    uint64_t s = 99;
    for (size_t i = 0; i < n; i++) {
        s = s * 6364136223846793005ull + 1442695040888963407ull;
        buf[i] = (char)(s >> 56);
    }
    CU_ASSERT(round_trips(buf, n));
    /* every byte value, in order and reversed */
    for (size_t i = 0; i < 512; i++)
        buf[i] = (char)(i < 256 ? i : 511 - i);
    CU_ASSERT(round_trips(buf, 512));
    free(buf);
}

static void test_long_runs(void)
{
    /* one 1 MiB pre-token of spaces, of letters, of a repeated emoji: no crash, quick, exact
     * bytes back (the heap kernel is O(n log n) per pre-token) */
    size_t n = 1 << 20;
    char *buf = malloc(n);
    CU_ASSERT_PTR_NOT_NULL_FATAL(buf);
    memset(buf, ' ', n);
    CU_ASSERT(round_trips(buf, n));
    memset(buf, 'a', n);
    CU_ASSERT(round_trips(buf, n));
    for (size_t i = 0; i + 4 <= n; i += 4)
        memcpy(buf + i, "\xf0\x9f\x99\x82", 4);
    CU_ASSERT(round_trips(buf, n));
    free(buf);
}

/* ---------- a tiny synthetic tokenizer and the load errors ---------- */

/* Write an encoder.json holding the 256 byte tokens (ids 0..255 in byte order) plus extra
 * tokens (raw bytes, ids from 256), and a vocab.bpe with the given merge lines. */
static void write_tiny(const char *dir, const char *const *extra, size_t n_extra,
                       const char *merges_text)
{
    uint32_t cp[256];
    ns_byte_to_unicode(cp);
    size_t cap = 64 * 1024, k = 0;
    char *json = malloc(cap);
    k += (size_t)snprintf(json + k, cap - k, "{");
    for (size_t id = 0; id < 256 + n_extra; id++) {
        const char *s = id < 256 ? NULL : extra[id - 256];
        size_t len = id < 256 ? 1 : strlen(s);
        k += (size_t)snprintf(json + k, cap - k, "%s\"", id ? ", " : "");
        for (size_t i = 0; i < len; i++)
            k += (size_t)snprintf(json + k, cap - k, "\\u%04x",
                                  (unsigned)cp[id < 256 ? id : (unsigned char)s[i]]);
        k += (size_t)snprintf(json + k, cap - k, "\": %zu", id);
    }
    k += (size_t)snprintf(json + k, cap - k, "}");
    ns_err err;
    ns_file_mkdirs(dir, &err);
    char *v = ns_path_join(dir, "encoder.json"), *m = ns_path_join(dir, "vocab.bpe");
    CU_ASSERT_EQUAL(ns_file_write_atomic(v, json, k, &err), NS_OK);
    CU_ASSERT_EQUAL(ns_file_write_atomic(m, merges_text, strlen(merges_text), &err), NS_OK);
    free(v);
    free(m);
    free(json);
}

static void test_tiny_tokenizer_and_merge_order(void)
{
    static const char *const extra[] = {"ab", "aba", "abc"};
    char *dir = ns_path_join(tmpdir, "tiny");
    ns_tokenizer *tok = NULL;
    ns_err err;
    ns_tokens ids = {0};
    /* well ordered: "a b" (rank 0), "ab c" (rank 1), "ab a" (rank 2); CRLF endings are
     * accepted (every token of more than one byte is made by a rule) */
    write_tiny(dir, extra, 3, "#version: 0.2\r\na b\r\nab c\r\nab a\r\n");
    CU_ASSERT_EQUAL_FATAL(ns_tokenizer_load(dir, &tok, &err), NS_OK);
    CU_ASSERT_EQUAL(ns_tokenizer_vocab_size(tok), 259);
    CU_ASSERT_EQUAL(ns_tokenizer_merge_count(tok), 3);
    CU_ASSERT_TRUE(tok->well_ordered);
    CU_ASSERT_EQUAL(ns_tokenizer_encode(tok, "abcab", 5, &ids, &err), NS_OK);
    CU_ASSERT(ids.n == 2 && ids.ids[0] == 258 && ids.ids[1] == 256);
    ns_tokens_free(&ids);
    ns_tokenizer_free(tok);
    /* not well ordered: "ab a" (rank 0) uses "ab", made by "a b" (rank 1). GPT-2 merges every
     * "a b" first: "abab" -> [ab, ab]; one-pair-at-a-time would give [aba, b]. */
    write_tiny(dir, extra, 3, "ab a\na b\nab c\n");
    CU_ASSERT_EQUAL_FATAL(ns_tokenizer_load(dir, &tok, &err), NS_OK);
    CU_ASSERT_FALSE(tok->well_ordered);
    CU_ASSERT_EQUAL(ns_tokenizer_encode(tok, "abab", 4, &ids, &err), NS_OK);
    CU_ASSERT(ids.n == 2 && ids.ids[0] == 256 && ids.ids[1] == 256);
    ns_tokens_free(&ids);
    ns_tokenizer_free(tok);
    free(dir);
}

/* Load dir expecting failure with code and a message containing both needles. */
static void expect_load_error(const char *dir, int code, const char *needle1, const char *needle2)
{
    ns_tokenizer *tok = (ns_tokenizer *)1;
    ns_err err;
    ns_err_clear(&err);
    int rc = ns_tokenizer_load(dir, &tok, &err);
    CU_ASSERT_EQUAL(rc, code);
    CU_ASSERT_PTR_NULL(tok);
    CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, needle1));
    CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, needle2));
    CU_ASSERT_PTR_NULL(strchr(err.msg, '\n'));
    if (rc != code || !strstr(err.msg, needle1) || !strstr(err.msg, needle2))
        fprintf(stderr, "\nunexpected error %d: %s\n", rc, err.msg);
}

static void write_text(const char *dir, const char *name, const char *text)
{
    ns_err err;
    char *p = ns_path_join(dir, name);
    CU_ASSERT_EQUAL(ns_file_write_atomic(p, text, strlen(text), &err), NS_OK);
    free(p);
}

static void test_load_errors_name_the_file(void)
{
    static const char *const extra[] = {"ab"};
    char *dir = ns_path_join(tmpdir, "bad");
    expect_load_error(dir, NS_ERR_IO, dir, "No such file");
    /* an empty directory: both namings are listed */
    ns_err err;
    CU_ASSERT_EQUAL(ns_file_mkdirs(dir, &err), NS_OK);
    expect_load_error(dir, NS_ERR_IO, "encoder.json + vocab.bpe", "vocab.json + merges.txt");
    /* half a pair: the missing file is named */
    write_text(dir, "encoder.json", "{}");
    expect_load_error(dir, NS_ERR_IO, "vocab.bpe", "missing");
    /* malformed JSON: file, line and column */
    write_text(dir, "vocab.bpe", "#version: 0.2\n");
    write_text(dir, "encoder.json", "{\"a\": 0,\n \"b\": }");
    expect_load_error(dir, NS_ERR_FORMAT, "encoder.json:2:", "malformed JSON");
    write_text(dir, "encoder.json", "[1, 2]");
    expect_load_error(dir, NS_ERR_FORMAT, "encoder.json", "JSON object");
    write_text(dir, "encoder.json", "{\"a\": 0, \"b\": \"1\"}");
    expect_load_error(dir, NS_ERR_FORMAT, "encoder.json", "\"b\": id is not an integer");
    /* ids out of range / repeated */
    write_text(dir, "encoder.json", "{\"a\": 0, \"b\": 7}");
    expect_load_error(dir, NS_ERR_INVALID, "encoder.json: no token has id 1, but token \"b\" has "
                      "id 7", "the 2 ids must be 0..1 without a gap (a token is missing?)");
    write_text(dir, "encoder.json", "{\"a\": 0, \"b\": -1}");
    expect_load_error(dir, NS_ERR_INVALID, "encoder.json", "token \"b\": id -1 is negative");
    write_text(dir, "encoder.json", "{\"a\": 1, \"b\": 1}");
    expect_load_error(dir, NS_ERR_INVALID, "encoder.json", "used twice");
    /* a vocabulary without every byte */
    write_text(dir, "encoder.json", "{\"a\": 0, \"b\": 1}");
    expect_load_error(dir, NS_ERR_FORMAT, "encoder.json", "no token for byte 0x00");
    write_text(dir, "encoder.json", "{\"a\": 0, \"\\u4e2d\": 1}");
    expect_load_error(dir, NS_ERR_FORMAT, "encoder.json", "outside GPT-2's byte alphabet");
    /* bad merge lines: file and line number */
    write_tiny(dir, extra, 1, "#version: 0.2\na b\nab\n");
    expect_load_error(dir, NS_ERR_FORMAT, "vocab.bpe:3:", "bad merge line \"ab\"");
    write_tiny(dir, extra, 1, "a b c\n");
    expect_load_error(dir, NS_ERR_FORMAT, "vocab.bpe:1:", "bad merge line");
    write_tiny(dir, extra, 1, "a b\n\na b\n");
    expect_load_error(dir, NS_ERR_FORMAT, "vocab.bpe:2:", "bad merge line");
    write_tiny(dir, extra, 1, "a b\nab xyz\n");
    expect_load_error(dir, NS_ERR_INVALID, "vocab.bpe:2: token \"xyz\" is not in", "encoder.json");
    write_tiny(dir, extra, 1, "a c\n");
    expect_load_error(dir, NS_ERR_INVALID, "vocab.bpe:1: merged token", "encoder.json");
    /* a merges file cut short, holding only its version line, repeating a rule */
    static const char *const two[] = {"ab", "abc"};
    write_tiny(dir, two, 2, "#version: 0.2\na b\n");
    expect_load_error(dir, NS_ERR_FORMAT, "vocab.bpe: 1 merge rule, but no rule makes token "
                      "\"abc\" (id 257) of", "encoder.json: the file is incomplete (cut short?)");
    write_tiny(dir, two, 2, "#version: 0.2\n");
    expect_load_error(dir, NS_ERR_FORMAT, "vocab.bpe: no merge rules, only its version line",
                      "(cut short or empty?)");
    write_tiny(dir, two, 2, "#version: 0.2\na b\nab c\na b\n");
    expect_load_error(dir, NS_ERR_FORMAT, "vocab.bpe:4: repeats the merge rule \"a b\" of line 2",
                      "vocab.bpe");
    /* a special token (angle brackets) needs no rule */
    static const char *const special[] = {"ab", "<|x|>"};
    write_tiny(dir, special, 2, "a b\n");
    ns_tokenizer *tok = NULL;
    CU_ASSERT_EQUAL(ns_tokenizer_load(dir, &tok, &err), NS_OK);
    ns_tokenizer_free(tok);
    /* Hugging Face names are reported as such */
    char *hf = ns_path_join(tmpdir, "badhf");
    CU_ASSERT_EQUAL(ns_file_mkdirs(hf, &err), NS_OK);
    write_text(hf, "merges.txt", "#version: 0.2\n");
    expect_load_error(hf, NS_ERR_IO, "vocab.json", "missing");
    write_text(hf, "vocab.json", "{\"a\": 0");
    expect_load_error(hf, NS_ERR_FORMAT, "vocab.json:", "malformed JSON");
    /* decode refuses ids outside the vocabulary, naming the position */
    char *out = NULL;
    size_t len = 0;
    int32_t bad_ids[] = {15496, 60000};
    CU_ASSERT_EQUAL(ns_tokenizer_decode(tok_openai, bad_ids, 2, &out, &len, &err), NS_ERR_INVALID);
    CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "token 1: id 60000 out of range"));
    CU_ASSERT_PTR_NULL(out);
    free(hf);
    free(dir);
}

/* A word that maps to no id (a normalizer or fallback that drops it) is cached and found with
 * ids_n 0, and copying it touches nothing, even as the cache's first entry (c->ids still NULL)
 * and into a NULL destination; a later word keeps its ids (UBSan caught the memcpy from NULL). */
static void test_word_cache_empty_words(void)
{
    ns_word_cache c;
    memset(&c, 0, sizeof c);
    ns_word_cache_put(&c, ns_tok_hash("drop", 4), "drop", 4, NULL, 0);
    const ns_word_slot *s = ns_word_cache_find(&c, ns_tok_hash("drop", 4), "drop", 4);
    CU_ASSERT_PTR_NOT_NULL_FATAL(s);
    CU_ASSERT_EQUAL(s->ids_n, 0);
    ns_word_cache_copy(&c, s, NULL);
    const int32_t ids[3] = {7, 8, 9};
    ns_word_cache_put(&c, ns_tok_hash("keep", 4), "keep", 4, ids, 3);
    s = ns_word_cache_find(&c, ns_tok_hash("keep", 4), "keep", 4);
    CU_ASSERT_PTR_NOT_NULL_FATAL(s);
    CU_ASSERT_EQUAL(s->ids_n, 3);
    int32_t got[3] = {0, 0, 0};
    ns_word_cache_copy(&c, s, got);
    CU_ASSERT(got[0] == 7 && got[1] == 8 && got[2] == 9);
    s = ns_word_cache_find(&c, ns_tok_hash("drop", 4), "drop", 4);
    CU_ASSERT_PTR_NOT_NULL_FATAL(s);
    CU_ASSERT_EQUAL(s->ids_n, 0);
    ns_word_cache_free(&c);
}

int main(void)
{
    if (CU_initialize_registry() != CUE_SUCCESS)
        return 1;
    CU_pSuite s = CU_add_suite("tokenizer", suite_init, suite_clean);
    if (!s)
        return 1;
    CU_add_test(s, "golden ids: War and Peace", test_golden_war_and_peace);
    CU_add_test(s, "golden ids: Unicode sampler", test_golden_unicode);
    CU_add_test(s, "vocab.json + merges.txt give identical ids", test_hf_names_give_identical_ids);
    CU_add_test(s, "hand-checked cases", test_hand_checked_cases);
    CU_add_test(s, "byte-to-unicode map", test_byte_to_unicode_map);
    CU_add_test(s, "fast BPE kernel == reference", test_fast_kernel_matches_reference);
    CU_add_test(s, "invalid UTF-8 and NUL bytes round-trip", test_invalid_utf8_and_nul);
    CU_add_test(s, "1 MiB single pre-tokens", test_long_runs);
    CU_add_test(s, "tiny tokenizer, merge order", test_tiny_tokenizer_and_merge_order);
    CU_add_test(s, "load errors name the file", test_load_errors_name_the_file);
    CU_add_test(s, "word cache: words with no id", test_word_cache_empty_words);
    return ns_test_run_all();
}

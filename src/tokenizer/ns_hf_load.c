/* ns_hf_load: a Hugging Face tokenizer.json with a BPE model read into an ns_tokenizer: the
 * top-level keys, the model (vocabulary, merges in both forms, the options that change ids) and
 * the added tokens with the ids Hugging Face's `tokenizers` gives them. Every key is read and
 * anything not implemented is refused with a message naming the file and the key. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/ns_file.h"
#include "tokenizer/ns_hf.h"
#include "tokenizer/ns_tokenizer_internal.h"

/* Token ids above this are refused (the largest vocabularies in use have about 2^18 tokens; a
 * larger id would only make the id tables big). */
#define NS_HF_MAX_ID (1 << 24)

/* ---------- small helpers ---------- */

int ns_hf_check_keys(json_t *obj, const char *const *allowed, const char *path, const char *where,
                     ns_err *err)
{
    const char *key;
    json_t *val;
    json_object_foreach(obj, key, val) {
        int ok = 0;
        for (size_t i = 0; allowed[i] && !ok; i++)
            ok = strcmp(key, allowed[i]) == 0;
        if (!ok)
            return ns_fail(err, NS_ERR_INVALID, "%s: %s%sunknown key \"%s\" (not implemented by "
                           "normsweep)", path, where, *where ? ": " : "", key);
    }
    return NS_OK;
}

int ns_hf_get_bool(json_t *obj, const char *key, int def, int *out, const char *path,
                   const char *where, ns_err *err)
{
    json_t *v = json_object_get(obj, key);
    *out = def;
    if (!v || json_is_null(v))
        return NS_OK;
    if (!json_is_boolean(v))
        return ns_fail(err, NS_ERR_FORMAT, "%s: %s.%s must be true or false", path, where, key);
    *out = json_is_true(v);
    return NS_OK;
}

/* The id of a token string in model.vocab (Hugging Face looks merges and options up by string),
 * or -1. */
static int32_t vocab_get(json_t *vocab, const char *s)
{
    json_t *v = json_object_get(vocab, s);
    return v ? (int32_t)json_integer_value(v) : -1;
}

/* Make room for ids [0, n): off/len arrays (new entries are holes). */
static int grow_ids(ns_tokenizer *tok, size_t n, ns_err *err)
{
    if (n <= tok->n_vocab)
        return NS_OK;
    size_t *off = realloc(tok->off, n * sizeof *off);
    if (off)
        tok->off = off;
    uint32_t *len = realloc(tok->len, n * sizeof *len);
    if (len)
        tok->len = len;
    uint8_t *present = realloc(tok->present, n);
    if (present)
        tok->present = present;
    if (!off || !len || !present)
        return ns_fail(err, NS_ERR_NOMEM, "tokenizer: cannot allocate %zu token ids", n);
    for (size_t i = tok->n_vocab; i < n; i++) {
        off[i] = 0;
        len[i] = 0;
        present[i] = 0;
    }
    tok->n_vocab = n;
    return NS_OK;
}

/* ---------- model.vocab ---------- */

static int load_vocab(ns_tokenizer *tok, json_t *vocab, const char *path, ns_err *err)
{
    if (!json_is_object(vocab))
        return ns_fail(err, NS_ERR_FORMAT, "%s: model.vocab must be an object mapping tokens to ids",
                       path);
    size_t n = json_object_size(vocab), total = 0, max_id = 0;
    if (n == 0 || n > INT32_MAX)
        return ns_fail(err, NS_ERR_FORMAT, "%s: model.vocab has %zu entries", path, n);
    const char *key;
    json_t *val;
    json_object_foreach(vocab, key, val) {
        if (!json_is_integer(val) || json_integer_value(val) < 0 ||
            json_integer_value(val) >= NS_HF_MAX_ID)
            return ns_fail(err, NS_ERR_FORMAT, "%s: model.vocab: token \"%s\": the id must be an "
                           "integer in [0, %d)", path, key, NS_HF_MAX_ID);
        if ((size_t)json_integer_value(val) > max_id)
            max_id = (size_t)json_integer_value(val);
        total += strlen(key); /* a token's bytes are never longer than its text */
    }
    NS_TRY(grow_ids(tok, max_id + 1, err));
    tok->hf->model_vocab = n;
    if (!(tok->bytes = malloc(total + 1)))
        return ns_fail(err, NS_ERR_NOMEM, "%s: cannot allocate the vocabulary", path);
    size_t cap = ns_tok_pow2(2 * n);
    if (!(tok->vocab_slots = calloc(cap, sizeof *tok->vocab_slots)))
        return ns_fail(err, NS_ERR_NOMEM, "%s: cannot allocate the vocabulary", path);
    tok->vocab_mask = cap - 1;
    int16_t dec[NS_BYTE_UNICODE_SPAN];
    ns_byte_decoder(dec);
    size_t used = 0;
    json_object_foreach(vocab, key, val) {
        size_t id = (size_t)json_integer_value(val), klen = strlen(key), start = used;
        if (tok->present[id])
            return ns_fail(err, NS_ERR_INVALID, "%s: model.vocab: token \"%s\": id %zu is used "
                           "twice", path, key, id);
        if (klen == 0)
            return ns_fail(err, NS_ERR_FORMAT, "%s: model.vocab: empty token (id %zu)", path, id);
        /* Tokens in GPT-2's byte alphabet stand for bytes; others (which byte-level encoding can
         * never produce) keep their UTF-8 bytes, as Hugging Face's ByteLevel decoder does. */
        int in_alphabet = ns_tok_unmap(dec, key, klen, tok->bytes, &used) == 0;
        if (!in_alphabet) {
            used = start;
            memcpy(tok->bytes + used, key, klen);
            used += klen;
        }
        tok->off[id] = start;
        tok->len[id] = (uint32_t)(used - start);
        tok->present[id] = in_alphabet ? 1 : 2;
    }
    for (size_t id = 0; id < tok->n_vocab; id++)
        if (tok->present[id] == 1)
            ns_tok_vocab_insert(tok, (uint32_t)id);
    return NS_OK;
}

/* ---------- model.merges ---------- */

/* One merge rule (a, b): both and their concatenation must be vocabulary tokens. */
static int add_merge(ns_tokenizer *tok, json_t *vocab, const char *a, size_t la, const char *b,
                     size_t lb, int32_t rank, char **buf, size_t *cap, const char *path, size_t i,
                     ns_err *err)
{
    if (la + lb + 1 > *cap) {
        size_t c = 2 * (la + lb + 1);
        char *p = realloc(*buf, c);
        if (!p)
            return ns_fail(err, NS_ERR_NOMEM, "out of memory");
        *buf = p;
        *cap = c;
    }
    memcpy(*buf, a, la);
    (*buf)[la] = '\0';
    int32_t left = vocab_get(vocab, *buf);
    memcpy(*buf, b, lb);
    (*buf)[lb] = '\0';
    int32_t right = vocab_get(vocab, *buf);
    memcpy(*buf, a, la);
    memcpy(*buf + la, b, lb);
    (*buf)[la + lb] = '\0';
    int32_t merged = vocab_get(vocab, *buf);
    if (left < 0 || right < 0 || merged < 0)
        return ns_fail(err, NS_ERR_INVALID, "%s: model.merges[%zu]: token \"%.*s\" is not in "
                       "model.vocab", path, i, left < 0 ? (int)la : right < 0 ? (int)lb : (int)(la + lb),
                       left < 0 ? a : right < 0 ? b : *buf);
    ns_tok_merges_put(&tok->merges, left, right, rank, merged);
    return NS_OK;
}

static int load_merges(ns_tokenizer *tok, json_t *vocab, json_t *merges, const char *path,
                       ns_err *err)
{
    if (!json_is_array(merges))
        return ns_fail(err, NS_ERR_FORMAT, "%s: model.merges must be an array", path);
    size_t n = json_array_size(merges);
    size_t cap = ns_tok_pow2(2 * n + 2);
    if (!(tok->merges.slots = malloc(cap * sizeof *tok->merges.slots)))
        return ns_fail(err, NS_ERR_NOMEM, "%s: cannot allocate %zu merge rules", path, n);
    for (size_t i = 0; i < cap; i++)
        tok->merges.slots[i].key = NS_MERGE_EMPTY;
    tok->merges.mask = cap - 1;
    tok->merges.count = 0;
    char *buf = NULL;
    size_t bcap = 0;
    int32_t rank = 0;
    int form = 0; /* 1: "a b" strings, 2: [a, b] pairs */
    int rc = NS_OK;
    for (size_t i = 0; i < n && rc == NS_OK; i++) {
        json_t *m = json_array_get(merges, i);
        int f = json_is_string(m) ? 1 : json_is_array(m) ? 2 : 0;
        if (f == 0 || (form && f != form)) {
            rc = ns_fail(err, NS_ERR_FORMAT, "%s: model.merges[%zu]: expected %s", path, i,
                         form == 1 ? "a string \"A B\" like the merges before it"
                         : form == 2 ? "a pair [\"A\", \"B\"] like the merges before it"
                                     : "a string \"A B\" or a pair [\"A\", \"B\"]");
            break;
        }
        form = f;
        if (rank == INT32_MAX) {
            rc = ns_fail(err, NS_ERR_INVALID, "%s: model.merges: too many merge rules", path);
            break;
        }
        if (f == 1) {
            const char *s = json_string_value(m);
            size_t len = json_string_length(m);
            if (len >= 8 && memcmp(s, "#version", 8) == 0)
                continue; /* skipped, as Hugging Face does */
            const char *sp = memchr(s, ' ', len);
            if (!sp || memchr(sp + 1, ' ', len - (size_t)(sp - s) - 1) || memchr(s, '\0', len)) {
                rc = ns_fail(err, NS_ERR_FORMAT, "%s: model.merges[%zu]: \"%.*s\" is not two "
                             "tokens separated by one space", path, i, (int)(len > 80 ? 80 : len), s);
                break;
            }
            rc = add_merge(tok, vocab, s, (size_t)(sp - s), sp + 1, len - (size_t)(sp - s) - 1,
                           rank, &buf, &bcap, path, i, err);
        } else {
            json_t *a = json_array_get(m, 0), *b = json_array_get(m, 1);
            if (json_array_size(m) != 2 || !json_is_string(a) || !json_is_string(b)) {
                rc = ns_fail(err, NS_ERR_FORMAT, "%s: model.merges[%zu]: expected a pair of two "
                             "strings", path, i);
                break;
            }
            rc = add_merge(tok, vocab, json_string_value(a), json_string_length(a),
                           json_string_value(b), json_string_length(b), rank, &buf, &bcap, path, i,
                           err);
        }
        rank++;
    }
    free(buf);
    tok->n_merge_lines = (size_t)rank;
    tok->well_ordered = 1; /* unused: tokenizer.json files always use Hugging Face's kernel */
    return rc;
}

/* ---------- model ---------- */

/* An optional string option that must be null or "" (no effect): continuing_subword_prefix,
 * end_of_word_suffix. */
static int check_empty_option(json_t *model, const char *key, const char *path, ns_err *err)
{
    json_t *v = json_object_get(model, key);
    if (!v || json_is_null(v) || (json_is_string(v) && json_string_length(v) == 0))
        return NS_OK;
    if (!json_is_string(v))
        return ns_fail(err, NS_ERR_FORMAT, "%s: model.%s must be a string or null", path, key);
    return ns_fail(err, NS_ERR_INVALID, "%s: model.%s \"%s\" is not supported (normsweep "
                   "implements byte-level BPE without subword prefixes or suffixes)", path, key,
                   json_string_value(v));
}

/* The initial symbols of each byte: its character's token, else byte fallback, else unk. */
static int byte_symbols(ns_tokenizer *tok, json_t *vocab, int byte_fallback, int32_t unk)
{
    uint32_t cp[256];
    ns_byte_to_unicode(cp);
    for (int b = 0; b < 256; b++) {
        ns_hf_byte *s = &tok->hf->bytes[b];
        char ch[4] = {0};
        size_t k = cp[b] < 0x80 ? 1 : 2; /* the alphabet is below U+0800 */
        if (k == 1)
            ch[0] = (char)cp[b];
        else {
            ch[0] = (char)(0xC0 | cp[b] >> 6);
            ch[1] = (char)(0x80 | (cp[b] & 0x3F));
        }
        int32_t id = vocab_get(vocab, ch);
        tok->byte_id[b] = id;
        memset(s, 0, sizeof *s);
        if (id >= 0) {
            s->id[0] = id;
            s->n = 1;
            s->kind = NS_HF_BYTE_VOCAB;
            continue;
        }
        if (byte_fallback) {
            int ok = 1;
            for (size_t i = 0; i < k && ok; i++) {
                char code[8];
                snprintf(code, sizeof code, "<0x%02X>", (unsigned char)ch[i]);
                s->id[i] = vocab_get(vocab, code);
                ok = s->id[i] >= 0;
            }
            if (ok) {
                s->n = (uint8_t)k;
                s->kind = NS_HF_BYTE_FALLBACK;
                continue;
            }
        }
        if (unk >= 0) {
            s->id[0] = unk;
            s->n = 1;
            s->kind = NS_HF_BYTE_UNK;
        }
    }
    return NS_OK;
}

static int load_model(ns_tokenizer *tok, json_t *model, const char *path, ns_err *err)
{
    static const char *const keys[] = {"type", "dropout", "unk_token", "continuing_subword_prefix",
                                       "end_of_word_suffix", "fuse_unk", "byte_fallback",
                                       "ignore_merges", "vocab", "merges", NULL};
    if (!json_is_object(model))
        return ns_fail(err, NS_ERR_FORMAT, "%s: \"model\" must be an object", path);
    json_t *type = json_object_get(model, "type");
    if (!json_is_string(type))
        return ns_fail(err, NS_ERR_FORMAT, "%s: model.type is missing", path);
    if (strcmp(json_string_value(type), "BPE") != 0)
        return ns_fail(err, NS_ERR_INVALID, "%s: model.type \"%s\" is not supported (normsweep "
                       "implements BPE)", path, json_string_value(type));
    NS_TRY(ns_hf_check_keys(model, keys, path, "model", err));
    json_t *dropout = json_object_get(model, "dropout");
    if (dropout && !json_is_null(dropout) &&
        !(json_is_number(dropout) && json_number_value(dropout) == 0.0))
        return ns_fail(err, NS_ERR_INVALID, "%s: model.dropout is not supported (BPE dropout "
                       "gives random ids; only null or 0)", path);
    NS_TRY(check_empty_option(model, "continuing_subword_prefix", path, err));
    NS_TRY(check_empty_option(model, "end_of_word_suffix", path, err));
    int byte_fallback, ignore_merges, fuse_unk;
    NS_TRY(ns_hf_get_bool(model, "byte_fallback", 0, &byte_fallback, path, "model", err));
    NS_TRY(ns_hf_get_bool(model, "ignore_merges", 0, &ignore_merges, path, "model", err));
    NS_TRY(ns_hf_get_bool(model, "fuse_unk", 0, &fuse_unk, path, "model", err));
    tok->hf->ignore_merges = ignore_merges;
    tok->hf->fuse_unk = fuse_unk;
    json_t *vocab = json_object_get(model, "vocab"), *merges = json_object_get(model, "merges");
    if (!vocab || !merges)
        return ns_fail(err, NS_ERR_FORMAT, "%s: model.%s is missing", path, vocab ? "merges" : "vocab");
    NS_TRY(load_vocab(tok, vocab, path, err));
    NS_TRY(load_merges(tok, vocab, merges, path, err));
    int32_t unk = -1;
    json_t *u = json_object_get(model, "unk_token");
    if (u && !json_is_null(u)) {
        if (!json_is_string(u))
            return ns_fail(err, NS_ERR_FORMAT, "%s: model.unk_token must be a string or null", path);
        if ((unk = vocab_get(vocab, json_string_value(u))) < 0)
            return ns_fail(err, NS_ERR_INVALID, "%s: model.unk_token \"%s\" is not in model.vocab",
                           path, json_string_value(u));
    }
    return byte_symbols(tok, vocab, byte_fallback, unk);
}

/* ---------- added_tokens ---------- */

/* The id Hugging Face gives an added token: an earlier added token's or the vocabulary's for the
 * same content, else the next free one after the vocabulary. */
static int32_t hf_added_id(const ns_hf *hf, size_t k, json_t *vocab, const char *content,
                           int32_t *next_id)
{
    for (size_t j = 0; j < k; j++)
        if (strcmp(hf->added[j].content, content) == 0)
            return hf->added[j].id;
    int32_t id = vocab_get(vocab, content);
    return id >= 0 ? id : (*next_id)++;
}

static int parse_added(ns_tokenizer *tok, json_t *arr, json_t *vocab, const char *path, ns_err *err)
{
    static const char *const keys[] = {"id", "content", "single_word", "lstrip", "rstrip",
                                       "normalized", "special", NULL};
    static const char *const flags[] = {"single_word", "lstrip", "rstrip", "normalized", "special"};
    ns_hf *hf = tok->hf;
    if (!arr || json_is_null(arr))
        return NS_OK;
    if (!json_is_array(arr))
        return ns_fail(err, NS_ERR_FORMAT, "%s: added_tokens must be an array", path);
    size_t n = json_array_size(arr);
    if (n && !(hf->added = calloc(n, sizeof *hf->added)))
        return ns_fail(err, NS_ERR_NOMEM, "out of memory");
    int32_t next_id = (int32_t)hf->model_vocab;
    for (size_t i = 0; i < n; i++) {
        json_t *t = json_array_get(arr, i);
        char where[64];
        snprintf(where, sizeof where, "added_tokens[%zu]", i);
        if (!json_is_object(t))
            return ns_fail(err, NS_ERR_FORMAT, "%s: %s must be an object", path, where);
        NS_TRY(ns_hf_check_keys(t, keys, path, where, err));
        json_t *c = json_object_get(t, "content"), *idv = json_object_get(t, "id");
        if (!json_is_string(c) || json_string_length(c) == 0 || !json_is_integer(idv))
            return ns_fail(err, NS_ERR_FORMAT, "%s: %s needs a non-empty \"content\" and an "
                           "integer \"id\"", path, where);
        ns_hf_added *a = &hf->added[i];
        int *fl[] = {&a->single_word, &a->lstrip, &a->rstrip, &a->normalized, &a->special};
        for (size_t f = 0; f < 5; f++) {
            json_t *b = json_object_get(t, flags[f]);
            if (!json_is_boolean(b))
                return ns_fail(err, NS_ERR_FORMAT, "%s: %s.%s must be true or false", path, where,
                               flags[f]);
            *fl[f] = json_is_true(b);
        }
        const char *content = json_string_value(c);
        for (size_t j = 0; j < i; j++)
            if (strcmp(hf->added[j].content, content) == 0)
                return ns_fail(err, NS_ERR_INVALID, "%s: %s: \"%s\" is listed twice", path, where,
                               content);
        if (memchr(content, '\0', json_string_length(c)))
            return ns_fail(err, NS_ERR_FORMAT, "%s: %s: the content holds a NUL character", path,
                           where);
        int32_t id = hf_added_id(hf, i, vocab, content, &next_id);
        if (json_integer_value(idv) != id)
            return ns_fail(err, NS_ERR_INVALID, "%s: %s \"%s\": id %lld in the file, but Hugging "
                           "Face's tokenizers give it id %d (the vocabulary's id of the same "
                           "content, else the next after model.vocab's %zu entries)", path, where,
                           content, (long long)json_integer_value(idv), (int)id, hf->model_vocab);
        if (!(a->content = strdup(content)))
            return ns_fail(err, NS_ERR_NOMEM, "out of memory");
        a->len = strlen(content);
        a->id = id;
        hf->n_added = i + 1;
        if (a->normalized && hf->n_norms > 0 &&
            ns_hf_normalize(hf, a->content, a->len, &a->match, &a->match_len, err) != NS_OK)
            return ns_err_prefix(err, "%s: %s", path, where);
        if (!a->match) {
            if (!(a->match = strdup(content)))
                return ns_fail(err, NS_ERR_NOMEM, "out of memory");
            a->match_len = a->len;
        }
        if (a->match_len == 0)
            return ns_fail(err, NS_ERR_INVALID, "%s: %s: \"%s\" normalizes to nothing", path,
                           where, content);
        NS_TRY(grow_ids(tok, (size_t)id + 1, err));
        if (!tok->present[id])
            tok->present[id] = 3; /* an added token only */
    }
    NS_TRY(ns_hf_trie_build(&hf->trie_raw, hf->added, hf->n_added, 0, err));
    return ns_hf_trie_build(&hf->trie_norm, hf->added, hf->n_added, 1, err);
}

/* ---------- top level ---------- */

static int compile_helpers(ns_hf *hf, const char *path, ns_err *err)
{
    /* Rust regex's Unicode \w and \s, as Hugging Face's single_word, lstrip and rstrip use them */
    static const char word[] = "[\\p{Alphabetic}\\p{M}\\p{Nd}\\p{Pc}\\p{Join_Control}]";
    static const char space[] = "\\p{White_Space}";
    int ecode;
    PCRE2_SIZE eoff;
    hf->re_word = pcre2_compile((PCRE2_SPTR)word, sizeof word - 1,
                                PCRE2_UTF | PCRE2_UCP | PCRE2_ANCHORED | PCRE2_NO_UTF_CHECK, &ecode,
                                &eoff, NULL);
    hf->re_space = pcre2_compile((PCRE2_SPTR)space, sizeof space - 1,
                                 PCRE2_UTF | PCRE2_UCP | PCRE2_ANCHORED | PCRE2_NO_UTF_CHECK,
                                 &ecode, &eoff, NULL);
    if (!hf->re_word || !hf->re_space)
        return ns_fail(err, NS_ERR_LIBRARY, "%s: PCRE2 cannot compile the Unicode word and space "
                       "classes (error %d)", path, ecode);
    return NS_OK;
}

int ns_hf_load(ns_tokenizer *tok, const char *path, const char *text, size_t len, ns_err *err)
{
    static const char *const keys[] = {"version", "truncation", "padding", "added_tokens",
                                       "normalizer", "pre_tokenizer", "post_processor", "decoder",
                                       "model", NULL};
    json_error_t jerr;
    json_t *root = json_loadb(text, len, JSON_REJECT_DUPLICATES, &jerr);
    if (!root)
        return ns_fail(err, NS_ERR_FORMAT, "%s:%d:%d: malformed JSON: %s", path, jerr.line,
                       jerr.column, jerr.text);
    int rc = NS_OK;
    if (!(tok->hf = calloc(1, sizeof *tok->hf))) {
        rc = ns_fail(err, NS_ERR_NOMEM, "out of memory");
        goto done;
    }
    ns_hf *hf = tok->hf;
    hf->bos_id = -1;
    if (!json_is_object(root)) {
        rc = ns_fail(err, NS_ERR_FORMAT, "%s: expected a JSON object (a Hugging Face "
                     "tokenizer.json)", path);
        goto done;
    }
    if ((rc = ns_hf_check_keys(root, keys, path, "", err)) != NS_OK)
        goto done;
    json_t *v = json_object_get(root, "version");
    if (v && !(json_is_string(v) && strcmp(json_string_value(v), "1.0") == 0)) {
        rc = ns_fail(err, NS_ERR_INVALID, "%s: version must be \"1.0\"", path);
        goto done;
    }
    static const char *const nulls[] = {"truncation", "padding"};
    for (size_t i = 0; i < 2; i++) {
        json_t *x = json_object_get(root, nulls[i]);
        if (x && !json_is_null(x)) {
            rc = ns_fail(err, NS_ERR_INVALID, "%s: %s is not supported (it changes the ids; "
                         "normsweep needs it null)", path, nulls[i]);
            goto done;
        }
    }
    json_t *model = json_object_get(root, "model");
    if (!model) {
        rc = ns_fail(err, NS_ERR_FORMAT, "%s: \"model\" is missing", path);
        goto done;
    }
    if ((rc = load_model(tok, model, path, err)) != NS_OK ||
        (rc = ns_hf_parse_normalizer(hf, json_object_get(root, "normalizer"), path, err)) != NS_OK ||
        (rc = ns_hf_parse_pre_tokenizer(hf, json_object_get(root, "pre_tokenizer"), path, err)) !=
            NS_OK ||
        (rc = parse_added(tok, json_object_get(root, "added_tokens"),
                          json_object_get(model, "vocab"), path, err)) != NS_OK ||
        (rc = ns_hf_parse_post_processor(hf, json_object_get(root, "post_processor"), path, err)) !=
            NS_OK ||
        (rc = ns_hf_parse_decoder(json_object_get(root, "decoder"), path, err)) != NS_OK ||
        (rc = compile_helpers(hf, path, err)) != NS_OK)
        goto done;
done:
    json_decref(root);
    return rc;
}

void ns_hf_free(ns_hf *hf)
{
    if (!hf)
        return;
    for (size_t i = 0; i < hf->n_steps; i++)
        pcre2_code_free(hf->steps[i].re);
    free(hf->steps);
    for (size_t i = 0; i < hf->n_added; i++) {
        free(hf->added[i].content);
        free(hf->added[i].match);
    }
    free(hf->added);
    ns_hf_trie_free(&hf->trie_raw);
    ns_hf_trie_free(&hf->trie_norm);
    pcre2_code_free(hf->re_word);
    pcre2_code_free(hf->re_space);
    free(hf);
}

/* ---------- tokenizer_config.json beside the file: the BOS, and keys that would change ids ---- */

/* The id of a token given by its content: an added token's, else the vocabulary's. */
static int32_t id_of_content(const ns_tokenizer *tok, const char *content)
{
    const ns_hf *hf = tok->hf;
    for (size_t i = 0; i < hf->n_added; i++)
        if (strcmp(hf->added[i].content, content) == 0)
            return hf->added[i].id;
    int16_t dec[NS_BYTE_UNICODE_SPAN];
    ns_byte_decoder(dec);
    size_t n = strlen(content), used = 0;
    char *buf = malloc(n + 1);
    int32_t id = -1;
    if (buf && ns_tok_unmap(dec, content, n, buf, &used) == 0)
        id = ns_tokenizer_token_id(tok, buf, used);
    free(buf);
    return id;
}

static int read_config(ns_tokenizer *tok, const char *cfg_path, ns_err *err)
{
    ns_hf *hf = tok->hf;
    json_error_t jerr;
    json_t *root = json_load_file(cfg_path, JSON_REJECT_DUPLICATES | JSON_DECODE_INT_AS_REAL, &jerr);
    if (!root)
        return ns_fail(err, NS_ERR_FORMAT, "%s:%d:%d: malformed JSON: %s", cfg_path, jerr.line,
                       jerr.column, jerr.text);
    int rc = NS_OK, split_special = 0, add_prefix = -1, add_bos = -1;
    json_t *aps = json_object_get(root, "add_prefix_space");
    if ((rc = ns_hf_get_bool(root, "split_special_tokens", 0, &split_special, cfg_path, "",
                             err)) != NS_OK ||
        (rc = ns_hf_get_bool(root, "add_bos_token", -1, &add_bos, cfg_path, "", err)) != NS_OK ||
        (rc = ns_hf_get_bool(root, "add_prefix_space", -1, &add_prefix, cfg_path, "", err)) != NS_OK)
        goto done;
    if (split_special) {
        rc = ns_fail(err, NS_ERR_INVALID, "%s: split_special_tokens true is not supported (added "
                     "tokens are always matched in the text)", cfg_path);
        goto done;
    }
    for (size_t i = 0; aps && add_prefix >= 0 && i < hf->n_steps; i++)
        if (hf->steps[i].byte_level && hf->steps[i].add_prefix_space != add_prefix) {
            rc = ns_fail(err, NS_ERR_INVALID, "%s: add_prefix_space %s differs from the ByteLevel "
                         "pre-tokenizer's in tokenizer.json (transformers would change the "
                         "pre-tokenizer; not supported)", cfg_path, add_prefix ? "true" : "false");
            goto done;
        }
    json_t *bos = json_object_get(root, "bos_token");
    if (json_is_object(bos))
        bos = json_object_get(bos, "content");
    if (bos && !json_is_null(bos)) {
        if (!json_is_string(bos)) {
            rc = ns_fail(err, NS_ERR_FORMAT, "%s: bos_token must be a string, an object with "
                         "\"content\", or null", cfg_path);
            goto done;
        }
        int32_t id = id_of_content(tok, json_string_value(bos));
        if (id < 0) {
            rc = ns_fail(err, NS_ERR_INVALID, "%s: bos_token \"%s\" is not a token of the "
                         "tokenizer.json beside it", cfg_path, json_string_value(bos));
            goto done;
        }
        if (hf->bos_id < 0) {
            hf->bos_id = id;
            hf->bos_added = add_bos == 1;
            snprintf(hf->bos_source, sizeof hf->bos_source, "tokenizer_config.json");
        }
    }
done:
    json_decref(root);
    return rc;
}

#define NS_HF_MAX_FILE (1024u << 20) /* refuse tokenizer.json files above 1 GiB */

int ns_hf_load_text(const char *path, const char *text, size_t len, ns_tokenizer **out,
                    ns_err *err)
{
    *out = NULL;
    ns_tokenizer *tok = calloc(1, sizeof *tok);
    int rc = NS_OK;
    if (!tok || !(tok->path = strdup(path)))
        rc = ns_fail(err, NS_ERR_NOMEM, "tokenizer: out of memory");
    if (rc == NS_OK)
        rc = ns_hf_load(tok, path, text, len, err);
    if (rc != NS_OK) {
        ns_tokenizer_free(tok);
        return rc;
    }
    *out = tok;
    return NS_OK;
}

int ns_hf_load_file(const char *path, ns_tokenizer **out, ns_err *err)
{
    *out = NULL;
    char *data = NULL;
    size_t size = 0;
    NS_TRY(ns_file_read_all(path, NS_HF_MAX_FILE, &data, &size, err));
    ns_tokenizer *tok = NULL;
    int rc = ns_hf_load_text(path, data, size, &tok, err);
    free(data);
    if (rc == NS_OK) {
        char *dir = strdup(path), *slash = dir ? strrchr(dir, '/') : NULL;
        char *cfg = NULL;
        if (dir) {
            if (slash)
                slash[1] = '\0';
            cfg = ns_str_printf("%s%s", slash ? dir : "", "tokenizer_config.json");
        }
        if (!cfg)
            rc = ns_fail(err, NS_ERR_NOMEM, "tokenizer: out of memory");
        else if (ns_file_exists(cfg))
            rc = read_config(tok, cfg, err);
        free(cfg);
        free(dir);
    }
    if (rc != NS_OK) {
        ns_tokenizer_free(tok);
        return rc;
    }
    *out = tok;
    return NS_OK;
}

const char *ns_hf_token_bytes(const ns_tokenizer *tok, int32_t id, size_t *len)
{
    const ns_hf *hf = tok->hf;
    if (tok->present[id] == 0)
        return NULL;
    for (size_t i = 0; i < hf->n_added; i++) /* added tokens decode to their content */
        if (hf->added[i].id == id) {
            *len = hf->added[i].len;
            return hf->added[i].content;
        }
    *len = tok->len[id];
    return tok->bytes + tok->off[id];
}

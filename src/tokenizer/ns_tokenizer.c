/* ns_tokenizer: the module's dispatcher -- loading GPT-2's vocabulary and merges (a tokenizer.json
 * goes to ns_hf_load), encoding with a per-call word cache (a tokenizer.json's to ns_hf_encode),
 * decoding ids back to bytes. The tables it fills live in ns_tok_vocab, the id arrays in
 * ns_tokens. */
#include "tokenizer/ns_tokenizer.h"

#include <errno.h>
#include <jansson.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "common/ns_file.h"
#include "tokenizer/ns_hf.h"
#include "tokenizer/ns_tokenizer_internal.h"
#include "tokenizer/ns_wordcache.h"

#define NS_TOK_MAX_FILE (256u << 20) /* refuse vocab/merges files above 256 MiB */

/* ---------- the vocabulary map (bytes -> id) ---------- */

int32_t ns_tokenizer_token_id(const ns_tokenizer *tok, const char *bytes, size_t len)
{
    return ns_tok_vocab_find(tok, bytes, len);
}

/* ---------- loading ---------- */

static int load_vocab(ns_tokenizer *tok, const char *path, const int16_t *dec, ns_err *err)
{
    char *data = NULL;
    size_t size = 0;
    json_t *root = NULL;
    char *seen = NULL;
    int rc = ns_file_read_all(path, NS_TOK_MAX_FILE, &data, &size, err);
    if (rc != NS_OK)
        return rc;
    json_error_t jerr;
    root = json_loadb(data, size, JSON_REJECT_DUPLICATES, &jerr);
    if (!root) {
        rc = ns_fail(err, NS_ERR_FORMAT, "%s:%d:%d: malformed JSON: %s", path, jerr.line,
                     jerr.column, jerr.text);
        goto done;
    }
    if (!json_is_object(root)) {
        rc = ns_fail(err, NS_ERR_FORMAT, "%s: expected a JSON object mapping tokens to ids", path);
        goto done;
    }
    size_t n = json_object_size(root);
    if (n == 0 || n > INT32_MAX) {
        rc = ns_fail(err, NS_ERR_FORMAT, "%s: the vocabulary has %zu entries", path, n);
        goto done;
    }
    size_t total = 0;
    const char *key;
    json_t *val;
    json_object_foreach(root, key, val) total += strlen(key);
    tok->n_vocab = n;
    tok->bytes = malloc(total + 1);
    tok->off = malloc(n * sizeof *tok->off);
    tok->len = malloc(n * sizeof *tok->len);
    seen = calloc(n, 1);
    size_t cap = ns_tok_pow2(2 * n);
    tok->vocab_slots = calloc(cap, sizeof *tok->vocab_slots);
    tok->vocab_mask = cap - 1;
    if (!tok->bytes || !tok->off || !tok->len || !seen || !tok->vocab_slots) {
        rc = ns_fail(err, NS_ERR_NOMEM, "%s: cannot allocate the vocabulary (%zu entries)", path, n);
        goto done;
    }
    size_t used = 0;
    json_int_t beyond = -1; /* the largest id >= n: some id below n is then missing */
    const char *beyond_key = NULL;
    json_object_foreach(root, key, val) {
        if (!json_is_integer(val)) {
            rc = ns_fail(err, NS_ERR_FORMAT, "%s: token \"%s\": id is not an integer", path, key);
            goto done;
        }
        json_int_t id = json_integer_value(val);
        if (id < 0) {
            rc = ns_fail(err, NS_ERR_INVALID, "%s: token \"%s\": id %lld is negative", path, key,
                         (long long)id);
            goto done;
        }
        if ((size_t)id >= n) {
            if (id > beyond)
                beyond = id, beyond_key = key;
            continue;
        }
        if (seen[id]) {
            rc = ns_fail(err, NS_ERR_INVALID, "%s: token \"%s\": id %lld is used twice", path, key,
                         (long long)id);
            goto done;
        }
        seen[id] = 1;
        size_t start = used;
        if (ns_tok_unmap(dec, key, strlen(key), tok->bytes, &used) != 0) {
            rc = ns_fail(err, NS_ERR_FORMAT,
                         "%s: token \"%s\" has a character outside GPT-2's byte alphabet", path, key);
            goto done;
        }
        if (used == start) {
            rc = ns_fail(err, NS_ERR_FORMAT, "%s: empty token (id %lld)", path, (long long)id);
            goto done;
        }
        tok->off[id] = start;
        tok->len[id] = (uint32_t)(used - start);
    }
    if (beyond >= 0) { /* n distinct ids, one of them >= n: name the first one missing */
        size_t gap = 0;
        while (gap < n && seen[gap])
            gap++;
        rc = ns_fail(err, NS_ERR_INVALID, "%s: no token has id %zu, but token \"%s\" has id %lld: "
                     "the %zu ids must be 0..%zu without a gap (a token is missing?)", path, gap,
                     beyond_key, (long long)beyond, n, n - 1);
        goto done;
    }
    for (size_t id = 0; id < n; id++)
        ns_tok_vocab_insert(tok, (uint32_t)id);
    for (int b = 0; b < 256; b++) {
        char c = (char)b;
        tok->byte_id[b] = ns_tokenizer_token_id(tok, &c, 1);
        if (tok->byte_id[b] < 0) {
            rc = ns_fail(err, NS_ERR_FORMAT,
                         "%s: no token for byte 0x%02x: not a byte-level BPE vocabulary", path, b);
            goto done;
        }
    }
    rc = NS_OK;
done:
    free(seen);
    json_decref(root);
    free(data);
    return rc;
}

/* A special token (GPT-2's <|endoftext|>, an added <s>): text in angle brackets, which no merge
 * needs to make. */
static int is_special(const ns_tokenizer *tok, size_t id)
{
    const char *b = tok->bytes + tok->off[id];
    size_t n = tok->len[id];
    return n >= 3 && b[0] == '<' && b[n - 1] == '>';
}

/* Every token of more than one byte is made by a merge rule, but for special tokens: a merges
 * file cut short (at a line boundary, or holding only its version line) leaves tokens no rule
 * makes, and would silently tokenize text differently. */
static int check_complete(const ns_tokenizer *tok, const char *path, const char *vocab_path,
                          const int32_t *made_by, ns_err *err)
{
    for (size_t id = 0; id < tok->n_vocab; id++) {
        if (tok->len[id] < 2 || made_by[id] >= 0 || is_special(tok, id))
            continue;
        size_t n = tok->len[id] > 60 ? 60 : tok->len[id];
        char shown[64];
        for (size_t k = 0; k < n; k++) {
            unsigned char c = (unsigned char)tok->bytes[tok->off[id] + k];
            shown[k] = c < 0x20 || c >= 0x7f ? '?' : (char)c;
        }
        shown[n] = 0;
        return ns_fail(err, NS_ERR_FORMAT, "%s: %zu merge rule%s, but no rule makes token \"%s\" "
                       "(id %zu) of %s: the file is incomplete (cut short?)", path,
                       tok->n_merge_lines, tok->n_merge_lines == 1 ? "" : "s", shown, id,
                       vocab_path);
    }
    return NS_OK;
}

/* Look up one side of a merge line; fills err naming the line on failure. */
static int merge_part(const ns_tokenizer *tok, const int16_t *dec, const char *path,
                      const char *vocab_path, size_t line, const char *s, size_t n, char *buf,
                      size_t *used, int32_t *id, ns_err *err)
{
    size_t start = *used;
    if (ns_tok_unmap(dec, s, n, buf, used) != 0)
        return ns_fail(err, NS_ERR_FORMAT,
                       "%s:%zu: token \"%.*s\" has a character outside GPT-2's byte alphabet", path,
                       line, (int)n, s);
    *id = ns_tokenizer_token_id(tok, buf + start, *used - start);
    if (*id < 0)
        return ns_fail(err, NS_ERR_INVALID, "%s:%zu: token \"%.*s\" is not in %s", path, line,
                       (int)n, s, vocab_path);
    return NS_OK;
}

static int load_merges(ns_tokenizer *tok, const char *path, const char *vocab_path,
                       const int16_t *dec, ns_err *err)
{
    char *data = NULL, *buf = NULL;
    int32_t *made_by = NULL;
    size_t size = 0;
    int rc = ns_file_read_all(path, NS_TOK_MAX_FILE, &data, &size, err);
    if (rc != NS_OK)
        return rc;
    while (size > 0 && (data[size - 1] == '\n' || data[size - 1] == '\r'))
        size--; /* trailing newlines */
    size_t lines = 1;
    for (size_t i = 0; i < size; i++)
        lines += data[i] == '\n';
    size_t cap = ns_tok_pow2(2 * lines);
    tok->merges.slots = malloc(cap * sizeof *tok->merges.slots);
    buf = malloc(size + 1);
    made_by = malloc(tok->n_vocab * sizeof *made_by);
    if (!tok->merges.slots || !buf || !made_by) {
        rc = ns_fail(err, NS_ERR_NOMEM, "%s: cannot allocate %zu merge rules", path, lines);
        goto done;
    }
    for (size_t i = 0; i < cap; i++)
        tok->merges.slots[i].key = NS_MERGE_EMPTY;
    tok->merges.mask = cap - 1;
    tok->merges.count = 0;
    size_t pos = 0, line = 0, version = 0;
    int32_t rank = 0;
    while (pos < size) {
        line++;
        const char *s = data + pos;
        const char *nl = memchr(s, '\n', size - pos);
        size_t n = nl ? (size_t)(nl - s) : size - pos;
        pos += n + 1;
        if (n > 0 && s[n - 1] == '\r')
            n--;
        if (line == 1 && n >= 8 && memcmp(s, "#version", 8) == 0) {
            version = 1;
            continue;
        }
        const char *sp = memchr(s, ' ', n);
        if (!sp || sp == s || sp == s + n - 1 || memchr(sp + 1, ' ', (size_t)(s + n - sp - 1))) {
            rc = ns_fail(err, NS_ERR_FORMAT,
                         "%s:%zu: bad merge line \"%.*s\": expected two tokens separated by one space",
                         path, line, (int)(n > 80 ? 80 : n), s);
            goto done;
        }
        if (rank == INT32_MAX) {
            rc = ns_fail(err, NS_ERR_INVALID, "%s:%zu: too many merge rules", path, line);
            goto done;
        }
        size_t used = 0;
        int32_t left, right;
        rc = merge_part(tok, dec, path, vocab_path, line, s, (size_t)(sp - s), buf, &used, &left,
                        err);
        if (rc == NS_OK)
            rc = merge_part(tok, dec, path, vocab_path, line, sp + 1, (size_t)(s + n - sp - 1), buf,
                            &used, &right, err);
        if (rc != NS_OK)
            goto done;
        int32_t merged = ns_tokenizer_token_id(tok, buf, used);
        if (merged < 0) {
            rc = ns_fail(err, NS_ERR_INVALID, "%s:%zu: merged token of \"%.*s\" is not in %s", path,
                         line, (int)n, s, vocab_path);
            goto done;
        }
        int32_t first;
        if (ns_tok_merges_put(&tok->merges, left, right, rank, merged, &first) != 0) {
            rc = ns_fail(err, NS_ERR_FORMAT, "%s:%zu: repeats the merge rule \"%.*s\" of line %zu",
                         path, line, (int)(n > 80 ? 80 : n), s, (size_t)first + 1 + version);
            goto done;
        }
        rank++;
    }
    tok->n_merge_lines = (size_t)rank;
    if (rank == 0) {
        rc = ns_fail(err, NS_ERR_FORMAT, "%s: no merge rules%s (cut short or empty?)", path,
                     version ? ", only its version line" : "");
        goto done;
    }
    /* Well ordered: no merge can create a pair of lower rank than the merge that made it, so
     * merging one leftmost lowest-rank pair at a time (ns_bpe_fast) equals GPT-2's procedure. */
    for (size_t id = 0; id < tok->n_vocab; id++)
        made_by[id] = -1;
    for (size_t i = 0; i <= tok->merges.mask; i++) {
        const ns_merge_entry *e = &tok->merges.slots[i];
        if (e->key != NS_MERGE_EMPTY && e->rank > made_by[e->merged])
            made_by[e->merged] = e->rank;
    }
    if ((rc = check_complete(tok, path, vocab_path, made_by, err)) != NS_OK)
        goto done;
    tok->well_ordered = 1;
    for (size_t i = 0; i <= tok->merges.mask; i++) {
        const ns_merge_entry *e = &tok->merges.slots[i];
        if (e->key == NS_MERGE_EMPTY)
            continue;
        int32_t l = (int32_t)(e->key >> 32), r = (int32_t)(uint32_t)e->key;
        if (made_by[l] >= e->rank || made_by[r] >= e->rank)
            tok->well_ordered = 0;
    }
    rc = NS_OK;
done:
    free(made_by);
    free(buf);
    free(data);
    return rc;
}

static int compile_pattern(ns_tokenizer *tok, ns_err *err)
{
    int ecode;
    PCRE2_SIZE eoff;
    tok->re = pcre2_compile((PCRE2_SPTR)NS_GPT2_PATTERN, PCRE2_ZERO_TERMINATED,
                            PCRE2_UTF | PCRE2_UCP | PCRE2_MATCH_INVALID_UTF, &ecode, &eoff, NULL);
    if (!tok->re) {
        PCRE2_UCHAR msg[256];
        if (pcre2_get_error_message(ecode, msg, sizeof msg) < 0)
            msg[0] = '\0';
        return ns_fail(err, NS_ERR_LIBRARY, "tokenizer: PCRE2 cannot compile GPT-2's pattern at %zu: %s",
                       (size_t)eoff, (const char *)msg);
    }
    /* Without JIT (PCRE2 built without it) the interpreter gives the same matches, slower. */
    tok->jit = pcre2_jit_compile(tok->re, PCRE2_JIT_COMPLETE) == 0;
    return NS_OK;
}

/* Which pair of files dir holds: OpenAI's names first, then Hugging Face's. */
static int find_files(const char *dir, char **vocab, char **merges, ns_err *err)
{
    static const char *const names[2][2] = {{"encoder.json", "vocab.bpe"},
                                            {"vocab.json", "merges.txt"}};
    struct stat st;
    if (stat(dir, &st) != 0)
        return ns_fail(err, NS_ERR_IO, "tokenizer directory %s: %s", dir, strerror(errno));
    if (!S_ISDIR(st.st_mode))
        return ns_fail(err, NS_ERR_IO, "tokenizer directory %s: not a directory", dir);
    for (int k = 0; k < 2; k++) {
        char *v = ns_path_join(dir, names[k][0]);
        char *m = ns_path_join(dir, names[k][1]);
        if (!v || !m) {
            free(v);
            free(m);
            return ns_fail(err, NS_ERR_NOMEM, "tokenizer: out of memory");
        }
        int hv = ns_file_exists(v), hm = ns_file_exists(m);
        if (hv && hm) {
            *vocab = v;
            *merges = m;
            return NS_OK;
        }
        if (hv || hm) {
            int rc = ns_fail(err, NS_ERR_IO, "%s: missing (needed with %s)", hv ? m : v, hv ? v : m);
            free(v);
            free(m);
            return rc;
        }
        free(v);
        free(m);
    }
    return ns_fail(err, NS_ERR_IO,
                   "tokenizer directory %s: missing tokenizer.json, encoder.json + vocab.bpe (or "
                   "vocab.json + merges.txt)", dir);
}

static int load_gpt2(const char *dir, ns_tokenizer **out, ns_err *err)
{
    *out = NULL;
    char *vocab_path = NULL, *merges_path = NULL;
    int rc = find_files(dir, &vocab_path, &merges_path, err);
    if (rc != NS_OK)
        return rc;
    ns_tokenizer *tok = calloc(1, sizeof *tok);
    if (!tok) {
        rc = ns_fail(err, NS_ERR_NOMEM, "tokenizer: out of memory");
        goto fail;
    }
    tok->merges_path = merges_path;
    merges_path = NULL;
    int16_t dec[NS_BYTE_UNICODE_SPAN];
    ns_byte_decoder(dec);
    if ((rc = load_vocab(tok, vocab_path, dec, err)) != NS_OK)
        goto fail;
    if ((rc = load_merges(tok, tok->merges_path, vocab_path, dec, err)) != NS_OK)
        goto fail;
    if ((rc = compile_pattern(tok, err)) != NS_OK)
        goto fail;
    free(vocab_path);
    *out = tok;
    return NS_OK;
fail:
    free(vocab_path);
    free(merges_path);
    ns_tokenizer_free(tok);
    return rc;
}

int ns_tokenizer_load(const char *path, ns_tokenizer **out, ns_err *err)
{
    *out = NULL;
    struct stat st;
    if (stat(path, &st) != 0)
        return ns_fail(err, NS_ERR_IO, "tokenizer %s: %s", path, strerror(errno));
    if (S_ISREG(st.st_mode))
        return ns_hf_load_file(path, out, err);
    if (S_ISDIR(st.st_mode)) { /* tokenizer.json first, as Hugging Face's fast tokenizers */
        char *json = ns_path_join(path, "tokenizer.json");
        if (!json)
            return ns_fail(err, NS_ERR_NOMEM, "tokenizer: out of memory");
        int rc = ns_file_exists(json) ? ns_hf_load_file(json, out, err) : -1;
        free(json);
        if (rc >= 0)
            return rc;
    }
    return load_gpt2(path, out, err);
}

const char *ns_tokenizer_format(const ns_tokenizer *tok)
{
    return tok->hf ? "tokenizer.json" : "gpt2-bpe";
}

const char *ns_tokenizer_path(const ns_tokenizer *tok)
{
    return tok->hf ? tok->path : tok->merges_path;
}

int32_t ns_tokenizer_bos_id(const ns_tokenizer *tok, int *added, const char **source)
{
    *added = tok->hf ? tok->hf->bos_added : 0;
    *source = tok->hf ? tok->hf->bos_source : "";
    return tok->hf ? tok->hf->bos_id : -1;
}

size_t ns_tokenizer_added_count(const ns_tokenizer *tok)
{
    return tok->hf ? tok->hf->n_added : 0;
}

void ns_tokenizer_free(ns_tokenizer *tok)
{
    if (!tok)
        return;
    ns_hf_free(tok->hf);
    ns_tok_release(tok);
}

size_t ns_tokenizer_vocab_size(const ns_tokenizer *tok) { return tok->n_vocab; }
size_t ns_tokenizer_merge_count(const ns_tokenizer *tok) { return tok->n_merge_lines; }
const char *ns_tokenizer_merges_path(const ns_tokenizer *tok) { return tok->merges_path; }

const char *ns_tokenizer_token_bytes(const ns_tokenizer *tok, int32_t id, size_t *len)
{
    if (id < 0 || (size_t)id >= tok->n_vocab)
        return NULL;
    if (tok->hf)
        return ns_hf_token_bytes(tok, id, len);
    *len = tok->len[id];
    return tok->bytes + tok->off[id];
}

/* ---------- encoding ---------- */

/* BPE of one pre-token, appended to out (no cache). */
static int encode_word(const ns_tokenizer *tok, const char *w, size_t n, int use_reference,
                       ns_bpe_work *work, ns_tokens *out, ns_err *err)
{
    NS_TRY(ns_tokens_reserve(out, n, err));
    int32_t *ids = out->ids + out->n;
    for (size_t i = 0; i < n; i++)
        ids[i] = tok->byte_id[(unsigned char)w[i]];
    size_t k = n;
    if (use_reference || !tok->well_ordered) {
        ns_bpe_reference(ids, &k, &tok->merges);
    } else {
        NS_TRY(ns_bpe_work_reserve(work, n, err));
        ns_bpe_fast(ids, &k, &tok->merges, work);
    }
    out->n += k;
    return NS_OK;
}

int ns_tokenizer_encode_word(const ns_tokenizer *tok, const char *word, size_t n,
                             int use_reference, ns_tokens *out, ns_err *err)
{
    ns_bpe_work work = {0};
    int rc = encode_word(tok, word, n, use_reference, &work, out, err);
    ns_bpe_work_free(&work);
    return rc;
}

int ns_tokenizer_encode(const ns_tokenizer *tok, const char *text, size_t len, ns_tokens *out,
                        ns_err *err)
{
    if (tok->hf)
        return ns_hf_encode(tok, text, len, out, err);
    ns_pretok it;
    ns_word_cache cache = {0};
    ns_bpe_work work = {0};
    int rc = ns_pretok_init(&it, tok, text, len, err);
    if (rc != NS_OK)
        goto done;
    for (;;) {
        size_t start, n;
        int invalid;
        int r = ns_pretok_next(&it, &start, &n, &invalid, err);
        if (r < 0) {
            rc = err ? err->code : NS_ERR_LIBRARY;
            goto done;
        }
        if (r == 0)
            break;
        const char *w = text + start;
        uint64_t h = ns_tok_hash(w, n);
        const ns_word_slot *s = ns_word_cache_find(&cache, h, w, n);
        if (s) {
            if ((rc = ns_tokens_reserve(out, s->ids_n, err)) != NS_OK)
                goto done;
            ns_word_cache_copy(&cache, s, out->ids + out->n);
            out->n += s->ids_n;
            continue;
        }
        size_t before = out->n;
        if ((rc = encode_word(tok, w, n, 0, &work, out, err)) != NS_OK)
            goto done;
        ns_word_cache_put(&cache, h, w, n, out->ids + before, out->n - before);
    }
    rc = NS_OK;
done:
    ns_pretok_free(&it);
    ns_bpe_work_free(&work);
    ns_word_cache_free(&cache);
    return rc;
}

/* ---------- decoding ---------- */

int ns_tokenizer_decode(const ns_tokenizer *tok, const int32_t *ids, size_t n, char **out,
                        size_t *len, ns_err *err)
{
    *out = NULL;
    *len = 0;
    size_t total = 0, k;
    for (size_t i = 0; i < n; i++) {
        if (ids[i] < 0 || (size_t)ids[i] >= tok->n_vocab)
            return ns_fail(err, NS_ERR_INVALID, "token %zu: id %d out of range [0, %zu)", i,
                           (int)ids[i], tok->n_vocab);
        if (!ns_tokenizer_token_bytes(tok, ids[i], &k))
            return ns_fail(err, NS_ERR_INVALID, "token %zu: id %d is not a token of this "
                           "vocabulary", i, (int)ids[i]);
        total += k;
    }
    char *buf = malloc(total + 1);
    if (!buf)
        return ns_fail(err, NS_ERR_NOMEM, "tokenizer: cannot allocate %zu bytes to decode", total + 1);
    size_t used = 0;
    for (size_t i = 0; i < n; i++) {
        const char *b = ns_tokenizer_token_bytes(tok, ids[i], &k);
        memcpy(buf + used, b, k);
        used += k;
    }
    buf[used] = '\0';
    *out = buf;
    *len = used;
    return NS_OK;
}

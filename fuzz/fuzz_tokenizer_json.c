/* fuzz_tokenizer_json: a Hugging Face tokenizer.json loaded from arbitrary bytes and, when it
 * loads, used to encode a text. The input is the JSON, optionally followed by a line "\n--\n" and
 * the text (else a fixed sample is encoded). Checks: a refusal is an ns_err with a one-line
 * message and a status of bad input (or of memory); a tokenizer that loads encodes valid UTF-8
 * into ids that are tokens of its vocabulary and decode again, refuses invalid UTF-8 with
 * NS_ERR_INVALID, and gives the same ids on a second encoding. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ns_fuzz.h"
#include "tokenizer/ns_hf.h"
#include "tokenizer/ns_tokenizer.h"

static const char sample[] = "Hello world, it's 2024! <|endoftext|> caf\xc3\xa9 \xe4\xb8\xad\xe6\x96\x87"
                             "  \n\n\tx'RE 12345 \xf0\x9f\x98\x80";

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    (void)argc;
    (void)argv;
    return 0;
}

static void check_encoding(const ns_tokenizer *tok, const char *text, size_t len)
{
    ns_tokens ids = {0}, again = {0};
    ns_err err;
    ns_err_clear(&err);
    int rc = ns_tokenizer_encode(tok, text, len, &ids, &err);
    int valid = ns_utf8_invalid_at(text, len) == len;
    if (rc != NS_OK) {
        ns_fuzz_check_err(rc, &err);
        NS_FUZZ_CHECK(rc == NS_ERR_NOMEM || rc == NS_ERR_LIBRARY || (rc == NS_ERR_INVALID && !valid),
                      "encode failed with status %d: %s", rc, err.msg);
        ns_tokens_free(&ids);
        return;
    }
    NS_FUZZ_CHECK(valid, "invalid UTF-8 was encoded");
    size_t vocab = ns_tokenizer_vocab_size(tok);
    for (size_t i = 0; i < ids.n; i++)
        NS_FUZZ_CHECK(ids.ids[i] >= 0 && (size_t)ids.ids[i] < vocab, "id %d at %zu of %zu",
                      (int)ids.ids[i], i, vocab);
    char *out = NULL;
    size_t out_len = 0;
    rc = ns_tokenizer_decode(tok, ids.ids, ids.n, &out, &out_len, &err);
    NS_FUZZ_CHECK(rc == NS_OK, "decode of encode's ids failed: %s", err.msg);
    free(out);
    rc = ns_tokenizer_encode(tok, text, len, &again, &err);
    NS_FUZZ_CHECK(rc == NS_OK && again.n == ids.n &&
                      (ids.n == 0 || memcmp(again.ids, ids.ids, ids.n * sizeof *ids.ids) == 0),
                  "a second encoding gives other ids");
    ns_tokens_free(&ids);
    ns_tokens_free(&again);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const char *d = (const char *)data;
    const char *sep = size >= 4 ? memmem(d, size, "\n--\n", 4) : NULL;
    size_t json_len = sep ? (size_t)(sep - d) : size;
    ns_tokenizer *tok = NULL;
    ns_err err;
    ns_err_clear(&err);
    int rc = ns_hf_load_text("fuzz/tokenizer.json", d, json_len, &tok, &err);
    if (rc != NS_OK) {
        ns_fuzz_check_err(rc, &err);
        NS_FUZZ_CHECK(rc == NS_ERR_FORMAT || rc == NS_ERR_INVALID || rc == NS_ERR_NOMEM ||
                          rc == NS_ERR_LIBRARY,
                      "load failed with status %d: %s", rc, err.msg);
        NS_FUZZ_CHECK(strncmp(err.msg, "fuzz/tokenizer.json", 19) == 0 || rc == NS_ERR_NOMEM,
                      "the message does not name the file: %s", err.msg);
        NS_FUZZ_CHECK(tok == NULL, "a tokenizer after a failed load");
        return 0;
    }
    if (sep)
        check_encoding(tok, sep + 4, size - json_len - 4);
    else
        check_encoding(tok, sample, sizeof sample - 1);
    ns_tokenizer_free(tok);
    return 0;
}

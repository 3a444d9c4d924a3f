/* fuzz_tokenizer: ns_tokenizer_encode on arbitrary bytes (invalid UTF-8 included), checking that
 * every id is in the vocabulary and that decoding gives the input back (GPT-2 BPE is lossless).
 * The tokenizer is loaded once from $NS_FUZZ_TOKENIZER_DIR, else $NS_TEST_TOKENIZER_DIR, else
 * $NORMSWEEP_ASSETS/tokenizer. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ns_fuzz.h"
#include "tokenizer/ns_tokenizer.h"

/* Loaded once per process (a fuzz target's only state; libFuzzer calls the target many times). */
static ns_tokenizer *fuzz_tok;

static void fuzz_tok_free(void)
{
    ns_tokenizer_free(fuzz_tok);
    fuzz_tok = NULL;
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    const char *dir = getenv("NS_FUZZ_TOKENIZER_DIR");
    if (!dir || !*dir)
        dir = getenv("NS_TEST_TOKENIZER_DIR");
    char buf[4096];
    if (!dir || !*dir) {
        const char *assets = getenv("NORMSWEEP_ASSETS");
        if (!assets || !*assets) {
            fprintf(stderr, "fuzz_tokenizer: set NS_FUZZ_TOKENIZER_DIR (directory with encoder.json "
                            "and vocab.bpe) or NORMSWEEP_ASSETS\n");
            exit(1);
        }
        snprintf(buf, sizeof buf, "%s/tokenizer", assets);
        dir = buf;
    }
    ns_err err;
    ns_err_clear(&err);
    if (ns_tokenizer_load(dir, &fuzz_tok, &err) != NS_OK) {
        fprintf(stderr, "fuzz_tokenizer: cannot load the tokenizer: %s\n", err.msg);
        exit(1);
    }
    atexit(fuzz_tok_free);
    return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    ns_tokens toks = {0};
    ns_err err;
    ns_err_clear(&err);
    int rc = ns_tokenizer_encode(fuzz_tok, (const char *)data, size, &toks, &err);
    if (rc != NS_OK) {
        /* Only allocation may fail (ns_tokenizer.h). */
        ns_fuzz_check_err(rc, &err);
        NS_FUZZ_CHECK(rc == NS_ERR_NOMEM, "encode failed on content: %s", err.msg);
        ns_tokens_free(&toks);
        return 0;
    }
    size_t vocab = ns_tokenizer_vocab_size(fuzz_tok);
    NS_FUZZ_CHECK(toks.n <= size, "%zu ids for %zu bytes", toks.n, size);
    NS_FUZZ_CHECK(size == 0 || toks.n > 0, "no ids for %zu bytes", size);
    for (size_t i = 0; i < toks.n; i++)
        NS_FUZZ_CHECK(toks.ids[i] >= 0 && (size_t)toks.ids[i] < vocab, "id %d at %zu", toks.ids[i], i);

    char *text = NULL;
    size_t len = 0;
    rc = ns_tokenizer_decode(fuzz_tok, toks.ids, toks.n, &text, &len, &err);
    NS_FUZZ_CHECK(rc == NS_OK, "decode of encode's ids failed: %s", err.msg);
    NS_FUZZ_CHECK(len == size && (size == 0 || memcmp(text, data, size) == 0),
                  "decode(encode(x)) != x (%zu bytes in, %zu out)", size, len);
    NS_FUZZ_CHECK(text[len] == '\0', "decoded text is not NUL-terminated");
    free(text);
    ns_tokens_free(&toks);
    return 0;
}

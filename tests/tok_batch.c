/* tok_batch: the tests' batch front end to the tokenizer: loads a tokenizer once and encodes
 * every string of a JSON array (tests/tokenizer_hf.sh, tests/tokenizer_ref.sh), one output line
 * per string: its ids separated by spaces, or "ERROR <status> <message>".
 * Usage: tok_batch TOKENIZER STRINGS.json */
#include <jansson.h>
#include <stdio.h>
#include <string.h>

#include "tokenizer/ns_tokenizer.h"

int main(int argc, char **argv)
{
    if (argc != 3) {
        fprintf(stderr, "usage: tok_batch TOKENIZER STRINGS.json\n");
        return 2;
    }
    ns_err err;
    ns_err_clear(&err);
    ns_tokenizer *tok = NULL;
    if (ns_tokenizer_load(argv[1], &tok, &err) != NS_OK) {
        fprintf(stderr, "tok_batch: %s\n", err.msg);
        return 1;
    }
    json_error_t jerr;
    json_t *root = json_load_file(argv[2], JSON_ALLOW_NUL, &jerr);
    if (!json_is_array(root)) {
        fprintf(stderr, "tok_batch: %s:%d: expected a JSON array of strings (%s)\n", argv[2],
                jerr.line, jerr.text);
        ns_tokenizer_free(tok);
        return 1;
    }
    int rc = 0;
    for (size_t i = 0; i < json_array_size(root) && rc == 0; i++) {
        json_t *s = json_array_get(root, i);
        if (!json_is_string(s)) {
            fprintf(stderr, "tok_batch: %s: element %zu is not a string\n", argv[2], i);
            rc = 1;
            break;
        }
        ns_tokens ids = {0};
        ns_err_clear(&err);
        if (ns_tokenizer_encode(tok, json_string_value(s), json_string_length(s), &ids, &err) !=
            NS_OK) {
            printf("ERROR %d %s\n", err.code, err.msg);
        } else {
            for (size_t k = 0; k < ids.n; k++)
                printf(k ? " %d" : "%d", (int)ids.ids[k]);
            printf("\n");
        }
        ns_tokens_free(&ids);
    }
    if (fflush(stdout) != 0)
        rc = 1;
    json_decref(root);
    ns_tokenizer_free(tok);
    return rc;
}

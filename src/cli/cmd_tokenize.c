/* cmd_tokenize: the `normsweep tokenize` subcommand: the token ids of a file, one per line, with
 * GPT-2's tokenizer files or a Hugging Face tokenizer.json; --decode, --info. */
#include <errno.h>
#include <getopt.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "assets/ns_assets.h"
#include "cli/ns_cli.h"
#include "common/ns_file.h"
#include "corpus/ns_corpus.h"
#include "tokenizer/ns_tokenizer.h"

static void usage(FILE *out)
{
    fprintf(out,
            "Usage: normsweep tokenize [--tokenizer PATH|NAME] [--strip-gutenberg] [--decode] FILE\n"
            "       normsweep tokenize [--tokenizer PATH|NAME] --info\n"
            "\n"
            "Print the token ids of FILE, one per line, as the tokenizer gives them without the\n"
            "tokens a post-processor would add (Hugging Face's add_special_tokens=False; --info\n"
            "shows the BOS a model may expect). With GPT-2's files any bytes are accepted (invalid\n"
            "UTF-8 is tokenized byte-level); a tokenizer.json takes UTF-8 text and refuses invalid\n"
            "UTF-8, naming the byte. With --decode, FILE holds token ids (separated by white space,\n"
            "e.g. this command's output) and their bytes are written instead.\n"
            "\n"
            "Options:\n"
            "  --tokenizer PATH|NAME  a Hugging Face tokenizer.json file; a directory holding\n"
            "                         tokenizer.json (preferred), encoder.json + vocab.bpe or\n"
            "                         vocab.json + merges.txt; or an asset name from the manifest\n"
            "                         (e.g. qwen3-tokenizer, llama3-tokenizer; default: the\n"
            "                         \"tokenizer\" asset, GPT-2's, fetched if needed)\n"
            "  --strip-gutenberg      tokenize only the body of a Project Gutenberg text, as a sweep\n"
            "                         with strip_gutenberg: true does\n"
            "  --decode               token ids -> text (each token's bytes)\n"
            "  --info                 describe the tokenizer (format, file, vocabulary size, merges,\n"
            "                         added tokens, BOS) instead of tokenizing\n"
            "  -h, --help             show this help\n"
            "\n"
            "Exit status: 0 done, 1 runtime failure, 2 bad options or input, a tokenizer.json\n"
            "key that is not implemented, or invalid UTF-8 for a tokenizer.json (one-line message).\n");
}

/* --info: what the tokenizer is. */
static int print_info(const ns_tokenizer *tok, ns_err *err)
{
    int added;
    const char *source;
    int32_t bos = ns_tokenizer_bos_id(tok, &added, &source);
    printf("format: %s\n", ns_tokenizer_format(tok));
    printf("path: %s\n", ns_tokenizer_path(tok));
    printf("vocab_size: %zu\n", ns_tokenizer_vocab_size(tok));
    printf("merges: %zu\n", ns_tokenizer_merge_count(tok));
    printf("added_tokens: %zu\n", ns_tokenizer_added_count(tok));
    if (bos < 0)
        printf("bos_id: none\n");
    else
        printf("bos_id: %d (from %s; %s)\n", (int)bos, source,
               added ? "Hugging Face prepends it with add_special_tokens=True"
                     : "not prepended by Hugging Face's encoding");
    if (fflush(stdout) != 0 || ferror(stdout))
        return ns_fail(err, NS_ERR_IO, "writing to standard output: %s", strerror(errno));
    return NS_OK;
}

/* FILE's bytes -> token ids, one per line on stdout. */
static int encode_text(const ns_tokenizer *tok, const char *path, const ns_mmap *map, int strip,
                       ns_tokens *ids, ns_err *err)
{
    const char *text = (const char *)map->data;
    size_t begin = 0, end = map->size;
    if (strip)
        NS_TRY(ns_gutenberg_body(text, map->size, path, &begin, &end, err));
    if (ns_tokenizer_encode(tok, text ? text + begin : "", end - begin, ids, err) != NS_OK)
        return ns_err_prefix(err, "%s", path);
    for (size_t i = 0; i < ids->n; i++)
        printf("%d\n", (int)ids->ids[i]);
    if (fflush(stdout) != 0 || ferror(stdout))
        return ns_fail(err, NS_ERR_IO, "writing the token ids to standard output: %s",
                       strerror(errno));
    return NS_OK;
}

/* FILE's token ids (white-space separated) -> their bytes on stdout. */
static int decode_ids(const ns_tokenizer *tok, const char *path, const ns_mmap *map, ns_err *err)
{
    size_t n = 0, cap = 1024;
    int32_t *ids = malloc(cap * sizeof *ids);
    char *text = NULL;
    size_t len = 0;
    int rc = ids ? NS_OK : ns_fail(err, NS_ERR_NOMEM, "out of memory");
    for (size_t i = 0; rc == NS_OK && i < map->size;) {
        const char *c = (const char *)map->data + i;
        if (*c == ' ' || *c == '\n' || *c == '\t' || *c == '\r') {
            i++;
            continue;
        }
        long v = 0;
        size_t k = 0;
        while (i + k < map->size && c[k] >= '0' && c[k] <= '9') {
            if (v <= INT32_MAX)
                v = v * 10 + (c[k] - '0');
            k++;
        }
        if (k == 0 || (i + k < map->size && !strchr(" \n\t\r", c[k]))) {
            rc = ns_fail(err, NS_ERR_INVALID, "%s: byte %zu: expected a token id (a non-negative "
                         "integer)", path, i);
            break;
        }
        if (v >= (long)ns_tokenizer_vocab_size(tok)) { /* (saturates above 2^31: no overflow) */
            rc = ns_fail(err, NS_ERR_INVALID, "%s: byte %zu: token id %.*s is out of range 0..%zu "
                         "(the tokenizer's vocabulary)", path, i, (int)(k > 40 ? 40 : k), c,
                         ns_tokenizer_vocab_size(tok) - 1);
            break;
        }
        if (n == cap) {
            int32_t *more = realloc(ids, 2 * cap * sizeof *ids);
            if (!more) {
                rc = ns_fail(err, NS_ERR_NOMEM, "out of memory");
                break;
            }
            ids = more, cap *= 2;
        }
        ids[n++] = (int32_t)v;
        i += k;
    }
    if (rc == NS_OK && (rc = ns_tokenizer_decode(tok, ids, n, &text, &len, err)) != NS_OK)
        ns_err_prefix(err, "%s", path);
    if (rc == NS_OK && (fwrite(text, 1, len, stdout) != len || fflush(stdout) != 0))
        rc = ns_fail(err, NS_ERR_IO, "writing the text to standard output: %s", strerror(errno));
    free(ids);
    free(text);
    return rc;
}

int ns_cmd_tokenize(int argc, char **argv)
{
    static const struct option opts[] = {
        {"tokenizer", required_argument, NULL, 't'},
        {"decode", no_argument, NULL, 'd'},
        {"info", no_argument, NULL, 'i'},
        {"strip-gutenberg", no_argument, NULL, 's'},
        {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0},
    };
    const char *tok_arg = NULL;
    int decode = 0, info = 0, strip = 0;
    optind = 1;
    opterr = 0;
    int c;
    while ((c = getopt_long(argc, argv, "+h", opts, NULL)) != -1) {
        switch (c) {
        case 't': tok_arg = optarg; break;
        case 'd': decode = 1; break;
        case 'i': info = 1; break;
        case 's': strip = 1; break;
        case 'h': usage(stdout); return NS_EXIT_OK;
        default:
            if (optopt == 't')
                fprintf(stderr, "normsweep tokenize: --tokenizer needs a directory or asset name\n");
            else
                fprintf(stderr, "normsweep tokenize: unknown option '%s' (see --help)\n",
                        argv[optind - 1]);
            return NS_EXIT_USAGE;
        }
    }
    if (info && (decode || strip || argc - optind != 0)) {
        fprintf(stderr, "normsweep tokenize: --info takes no FILE, --decode or --strip-gutenberg "
                        "(see --help)\n");
        return NS_EXIT_USAGE;
    }
    if (decode && strip) {
        fprintf(stderr, "normsweep tokenize: --strip-gutenberg applies to text, not to --decode "
                        "(see --help)\n");
        return NS_EXIT_USAGE;
    }
    if (!info && argc - optind != 1) {
        fprintf(stderr, "normsweep tokenize: expected one FILE, got %d (see --help)\n", argc - optind);
        return NS_EXIT_USAGE;
    }
    const char *path = info ? NULL : argv[optind];

    ns_err err;
    ns_err_clear(&err);
    ns_tokenizer *tok = NULL;
    ns_tokens ids = {0};
    ns_mmap map = {0};
    map.fd = -1;
    int rc;

    /* Read the input first: a missing FILE is reported before any asset is fetched. */
    if (path && (rc = ns_mmap_open(path, &map, &err)) != NS_OK)
        goto done;
    if (tok_arg && ns_file_exists(tok_arg)) {
        rc = ns_tokenizer_load(tok_arg, &tok, &err);
    } else {
        ns_asset_ref ref;
        ns_assets_fetch fetch = {1, ns_cli_log_line, NULL};
        rc = ns_assets_resolve(tok_arg ? tok_arg : "tokenizer", "tokenizer", &fetch, &ref, &err);
        if (rc == NS_OK)
            rc = ns_tokenizer_load(ref.path, &tok, &err);
    }
    if (rc != NS_OK)
        goto done;
    rc = info     ? print_info(tok, &err)
         : decode ? decode_ids(tok, path, &map, &err)
                  : encode_text(tok, path, &map, strip, &ids, &err);
done:
    ns_tokens_free(&ids);
    ns_tokenizer_free(tok);
    ns_mmap_close(&map);
    return rc == NS_OK ? NS_EXIT_OK : ns_cli_report("tokenize", &err);
}

/* cmd_tokenize: the `normsweep tokenize` subcommand, GPT-2 token ids of a file, one per line. */
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
#include "tokenizer/ns_tokenizer.h"

static void usage(FILE *out)
{
    fprintf(out,
            "Usage: normsweep tokenize [--tokenizer DIR|NAME] [--decode] FILE\n"
            "\n"
            "Print the GPT-2 token ids of FILE, one per line (byte-level BPE: any bytes are\n"
            "accepted; invalid UTF-8 is tokenized byte-level and decodes back to the same bytes).\n"
            "With --decode, FILE holds token ids (separated by white space, e.g. this command's\n"
            "output) and their bytes are written instead.\n"
            "\n"
            "Options:\n"
            "  --decode              token ids -> text\n"
            "  --tokenizer DIR|NAME  directory holding encoder.json + vocab.bpe (or vocab.json +\n"
            "                        merges.txt), or an asset name from the manifest\n"
            "                        (default: the \"tokenizer\" asset, fetched if needed)\n"
            "  -h, --help            show this help\n"
            "\n"
            "Exit status: 0 done, 1 runtime failure, 2 bad options or input (a one-line message).\n");
}

/* FILE's bytes -> token ids, one per line on stdout. */
static int encode_text(const ns_tokenizer *tok, const char *path, const ns_mmap *map, ns_tokens *ids,
                       ns_err *err)
{
    if (ns_tokenizer_encode(tok, (const char *)map->data, map->size, ids, err) != NS_OK)
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
        {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0},
    };
    const char *tok_arg = NULL;
    int decode = 0;
    optind = 1;
    opterr = 0;
    int c;
    while ((c = getopt_long(argc, argv, "+h", opts, NULL)) != -1) {
        switch (c) {
        case 't': tok_arg = optarg; break;
        case 'd': decode = 1; break;
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
    if (argc - optind != 1) {
        fprintf(stderr, "normsweep tokenize: expected one FILE, got %d (see --help)\n", argc - optind);
        return NS_EXIT_USAGE;
    }
    const char *path = argv[optind];

    ns_err err;
    ns_err_clear(&err);
    ns_tokenizer *tok = NULL;
    ns_tokens ids = {0};
    ns_mmap map = {0};
    map.fd = -1;
    int rc;

    /* Read the input first: a missing FILE is reported before any asset is fetched. */
    if ((rc = ns_mmap_open(path, &map, &err)) != NS_OK)
        goto done;
    if (tok_arg && ns_file_is_dir(tok_arg)) {
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
    rc = decode ? decode_ids(tok, path, &map, &err) : encode_text(tok, path, &map, &ids, &err);
done:
    ns_tokens_free(&ids);
    ns_tokenizer_free(tok);
    ns_mmap_close(&map);
    return rc == NS_OK ? NS_EXIT_OK : ns_cli_report("tokenize", &err);
}

/* cmd_tokenize: the `normsweep tokenize` subcommand, GPT-2 token ids of a file, one per line. */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include "assets/ns_assets.h"
#include "cli/ns_cli.h"
#include "common/ns_file.h"
#include "tokenizer/ns_tokenizer.h"

static void usage(FILE *out)
{
    fprintf(out,
            "Usage: normsweep tokenize [--tokenizer DIR|NAME] FILE\n"
            "\n"
            "Print the GPT-2 token ids of FILE, one per line (byte-level BPE: any bytes are\n"
            "accepted; invalid UTF-8 is tokenized byte-level and decodes back to the same bytes).\n"
            "\n"
            "Options:\n"
            "  --tokenizer DIR|NAME  directory holding encoder.json + vocab.bpe (or vocab.json +\n"
            "                        merges.txt), or an asset name from the manifest\n"
            "                        (default: the \"tokenizer\" asset, fetched if needed)\n"
            "  -h, --help            show this help\n");
}

int ns_cmd_tokenize(int argc, char **argv)
{
    static const struct option opts[] = {
        {"tokenizer", required_argument, NULL, 't'},
        {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0},
    };
    const char *tok_arg = NULL;
    optind = 1;
    opterr = 0;
    int c;
    while ((c = getopt_long(argc, argv, "+h", opts, NULL)) != -1) {
        switch (c) {
        case 't': tok_arg = optarg; break;
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
        rc = ns_assets_resolve(tok_arg ? tok_arg : "tokenizer", "tokenizer", 1, &ref, &err);
        if (rc == NS_OK)
            rc = ns_tokenizer_load(ref.path, &tok, &err);
    }
    if (rc != NS_OK)
        goto done;
    if ((rc = ns_tokenizer_encode(tok, (const char *)map.data, map.size, &ids, &err)) != NS_OK) {
        ns_err_prefix(&err, "%s", path);
        goto done;
    }
    for (size_t i = 0; i < ids.n; i++)
        fprintf(stdout, "%d\n", (int)ids.ids[i]);
    if (fflush(stdout) != 0 || ferror(stdout))
        rc = ns_fail(&err, NS_ERR_IO, "writing the token ids to standard output: %s", strerror(errno));
done:
    ns_tokens_free(&ids);
    ns_tokenizer_free(tok);
    ns_mmap_close(&map);
    return rc == NS_OK ? NS_EXIT_OK : ns_cli_report("tokenize", &err);
}

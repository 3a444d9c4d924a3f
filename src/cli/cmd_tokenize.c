/* cmd_tokenize: the `normsweep tokenize` subcommand (placeholder until its module lands). */
#include <stdio.h>

#include "cli/ns_cli.h"

int ns_cmd_tokenize(int argc, char **argv)
{
    fprintf(stderr, "normsweep tokenize: not built yet\n");
    return NS_EXIT_FAILURE;
}

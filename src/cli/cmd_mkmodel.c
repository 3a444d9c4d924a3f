/* cmd_mkmodel: the `normsweep mkmodel` subcommand (placeholder until its module lands). */
#include <stdio.h>

#include "cli/ns_cli.h"

int ns_cmd_mkmodel(int argc, char **argv)
{
    fprintf(stderr, "normsweep mkmodel: not built yet\n");
    return NS_EXIT_FAILURE;
}

/* cmd_assets: the `normsweep assets` subcommand (placeholder until its module lands). */
#include <stdio.h>

#include "cli/ns_cli.h"

int ns_cmd_assets(int argc, char **argv)
{
    fprintf(stderr, "normsweep assets: not built yet\n");
    return NS_EXIT_FAILURE;
}

/* cmd_verify: the `normsweep verify` subcommand (placeholder until its module lands). */
#include <stdio.h>

#include "cli/ns_cli.h"

int ns_cmd_verify(int argc, char **argv)
{
    fprintf(stderr, "normsweep verify: not built yet\n");
    return NS_EXIT_FAILURE;
}

/* cmd_validate: the `normsweep validate` subcommand (placeholder until its module lands). */
#include <stdio.h>

#include "cli/ns_cli.h"

int ns_cmd_validate(int argc, char **argv)
{
    fprintf(stderr, "normsweep validate: not built yet\n");
    return NS_EXIT_FAILURE;
}

/* cmd_dump: the `normsweep dump` subcommand (placeholder until its module lands). */
#include <stdio.h>

#include "cli/ns_cli.h"

int ns_cmd_dump(int argc, char **argv)
{
    fprintf(stderr, "normsweep dump: not built yet\n");
    return NS_EXIT_FAILURE;
}

/* cmd_run: the `normsweep run` subcommand (placeholder until its module lands). */
#include <stdio.h>

#include "cli/ns_cli.h"

int ns_cmd_run(int argc, char **argv)
{
    fprintf(stderr, "normsweep run: not built yet\n");
    return NS_EXIT_FAILURE;
}

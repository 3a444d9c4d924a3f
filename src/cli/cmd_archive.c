/* cmd_archive: the `normsweep archive` subcommand (placeholder until its module lands). */
#include <stdio.h>

#include "cli/ns_cli.h"

int ns_cmd_archive(int argc, char **argv)
{
    fprintf(stderr, "normsweep archive: not built yet\n");
    return NS_EXIT_FAILURE;
}

/* ns_cli: the bound outside its homes (cli is not one). */
#include "cli/ns_cli.h"

#include "calc/ns_calc.h"

int ns_cli_unused(void)
{
    return ns_bound(1.0) > 0.0;
}

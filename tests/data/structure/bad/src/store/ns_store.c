/* ns_store: an arrow against the table (store may not include cli), a foreign private header
 * (calc's), prints, exits, and the ISO format written a second time. */
#include "store/ns_store.h"

#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "calc/ns_a_internal.h"
#include "calc/ns_calc.h"
#include "cli/ns_cli.h"

int ns_store_write(const char *path, double t)
{
    char when[32];
    time_t now = time(NULL);
    struct tm tm;
    gmtime_r(&now, &tm);
    strftime(when, sizeof when, "%Y-%m-%dT%H:%M:%SZ", &tm);
    if (path[0] == 0)
        exit(2);
    fprintf(stderr, "%s\n", when);
    return ns_bound(t) > 0.0 && ns_a_step(2) > 0;
}

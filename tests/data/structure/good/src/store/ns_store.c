/* ns_store: writes the bound (store may compute it: a home of ns_bound). */
#include "store/ns_store.h"

#include <netcdf.h>

#include "calc/ns_calc.h"
#include "common/ns_time.h"

int ns_store_write(const char *path, double t)
{
    char when[32];
    ns_time_now(when, sizeof when);
    return path[0] == 0 || ns_bound(t) > t;
}

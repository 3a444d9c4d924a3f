/* ns_sys: machine queries (see header). */
#include "common/ns_sys.h"

#include <math.h>
#include <stdio.h>
#include <sys/utsname.h>
#include <unistd.h>

unsigned long long ns_sys_memory_bytes(void)
{
    long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGESIZE);
    return pages > 0 && page > 0 ? (unsigned long long)pages * (unsigned long long)page : 0;
}

long ns_sys_cores(void)
{
    long c = sysconf(_SC_NPROCESSORS_ONLN);
    return c > 0 ? c : 0;
}

void ns_sys_format_bytes(double b, char *buf, size_t n)
{
    static const char *unit[] = {"bytes", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB"};
    int u = 0;
    if (!isfinite(b)) { /* callers report an unbounded size in their own words */
        snprintf(buf, n, "an unbounded amount");
        return;
    }
    while (b >= 1024.0 && u < 6)
        b /= 1024.0, u++;
    snprintf(buf, n, b >= 1e5 ? "%.3g %s" : u ? "%.1f %s" : "%.0f %s", b, unit[u]);
}

void ns_sys_os(char *buf, size_t n)
{
    struct utsname u;
    if (uname(&u) == 0)
        snprintf(buf, n, "%s %s %s", u.sysname, u.release, u.machine);
    else
        snprintf(buf, n, "unknown");
}

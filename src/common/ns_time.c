/* ns_time: the current UTC time in ISO 8601 (see ns_time.h). */
#include "common/ns_time.h"

#include <stdio.h>
#include <time.h>

void ns_iso_now(char *buf, size_t size)
{
    if (size == 0)
        return;
    time_t t = time(NULL);
    struct tm tm;
    if (t == (time_t)-1 || !gmtime_r(&t, &tm) ||
        strftime(buf, size, "%Y-%m-%dT%H:%M:%SZ", &tm) == 0)
        snprintf(buf, size, "unknown");
}

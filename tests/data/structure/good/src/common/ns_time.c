/* ns_time: the one home of the ISO format. */
#include "common/ns_time.h"

#include <time.h>

void ns_time_now(char *buf, size_t size)
{
    time_t now = time(NULL);
    struct tm tm;
    gmtime_r(&now, &tm);
    strftime(buf, size, "%Y-%m-%dT%H:%M:%SZ", &tm);
}

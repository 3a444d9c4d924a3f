/* ns_time: the time as text, "%Y-%m-%dT%H:%M:%SZ" (a comment does not count). */
#ifndef NS_TIME_H
#define NS_TIME_H
#include <stddef.h>
void ns_time_now(char *buf, size_t size);
#endif

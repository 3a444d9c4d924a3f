/* ns_sys: what the machine offers, read from the operating system (physical memory, online
 * processors), and memory sizes written for people. Read-only queries; nothing is cached. */
#ifndef NS_SYS_H
#define NS_SYS_H

#include <stddef.h>

/* Physical memory in bytes, or 0 when the system does not say. */
unsigned long long ns_sys_memory_bytes(void);
/* Online processors, or 0 when the system does not say. */
long ns_sys_cores(void);
/* The operating system as "sysname release machine" (uname), or "unknown", into buf. */
void ns_sys_os(char *buf, size_t n);
/* bytes as "512 bytes", "3.2 MiB", "1.5 GiB", "6.4e+06 EiB", ... into buf: always a number
 * (a non-finite size reads "an unbounded amount"; callers report such a size in their own words). */
void ns_sys_format_bytes(double bytes, char *buf, size_t n);

#endif

/* ns_time: the one way normsweep writes a time of day -- UTC, ISO 8601 to the second
 * ("2026-11-27T17:04:31Z"), as the NetCDF start_time/end_time, the journal's lock records, the
 * archive's provenance and dump's history carry it. */
#ifndef NS_TIME_H
#define NS_TIME_H

#include <stddef.h>

/* Longest text ns_iso_now writes, with its terminating NUL ("YYYY-MM-DDThh:mm:ssZ"). */
#define NS_ISO_TIME_LEN 21

/* Writes the current UTC time to buf (at most size bytes, NUL-terminated); "unknown" when the
 * clock cannot be converted. size >= NS_ISO_TIME_LEN holds the whole text. */
void ns_iso_now(char *buf, size_t size);

#endif

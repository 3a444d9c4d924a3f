/* ns_cli: shared reporting of library errors as one-line messages and exit codes. */
#include "cli/ns_cli.h"

#include "common/ns_sha256.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

int ns_cli_report(const char *cmd, const ns_err *err)
{
    const char *debug = getenv("NORMSWEEP_DEBUG");
    if (debug && *debug && strcmp(debug, "0") != 0 && err->file)
        fprintf(stderr, "normsweep %s: %s [%s:%d]\n", cmd,
                err->msg[0] ? err->msg : ns_status_name(err->code), err->file, err->line);
    else
        fprintf(stderr, "normsweep %s: %s\n", cmd,
                err->msg[0] ? err->msg : ns_status_name(err->code));
    switch (err->code) {
    case NS_OK: return NS_EXIT_OK;
    case NS_ERR_FORMAT:
    case NS_ERR_INVALID:
    case NS_ERR_CHECKSUM: return NS_EXIT_USAGE;
    case NS_ERR_INTERRUPTED: return NS_EXIT_INTERRUPTED;
    default: return NS_EXIT_FAILURE;
    }
}

void ns_cli_log_line(void *user, const char *line)
{
    (void)user;
    fprintf(stderr, "%s\n", line);
}

void ns_cli_self_sha256(char hex[65])
{
    ns_err err;
    if (ns_sha256_file("/proc/self/exe", hex, &err) != NS_OK)
        snprintf(hex, 65, "unknown");
}

void ns_cli_iso_now(char *buf, size_t size)
{
    time_t t = time(NULL);
    struct tm tm;
    gmtime_r(&t, &tm);
    strftime(buf, size, "%Y-%m-%dT%H:%M:%SZ", &tm);
}

/* ns_hooks: the one formatter of message lines for every stage (see ns_hooks.h). */
#include "common/ns_hooks.h"

#include <stdio.h>
#include <string.h>

void ns_vsay(ns_line_fn line, void *user, const char *fmt, va_list ap)
{
    if (!line)
        return;
    char buf[NS_SAY_MAX];
    vsnprintf(buf, sizeof buf, fmt, ap);
    buf[strcspn(buf, "\n")] = '\0'; /* one line each */
    line(user, buf);
}

void ns_say(ns_line_fn line, void *user, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    ns_vsay(line, user, fmt, ap);
    va_end(ap);
}

/* ns_sweep_ctx: what every part of the sweep may do with the shared state -- a line for the user
 * (rank 0), the caller's stop request, the test-only hold (see ns_sweep_ctx.h). */
#include "sweep/ns_sweep_ctx.h"

#include <stdarg.h>

void ns_sweep_say(const sweep_ctx *c, const char *fmt, ...)
{
    if (c->rank != 0)
        return;
    va_list ap;
    va_start(ap, fmt);
    ns_vsay(c->hooks->line, c->hooks->user, fmt, ap);
    va_end(ap);
}

int ns_sweep_stop_requested(const sweep_ctx *c)
{
    return c->hooks->stop && *c->hooks->stop;
}

void ns_sweep_hold(const sweep_ctx *c, const char *point, uint64_t count)
{
    if (c->hooks->hold)
        c->hooks->hold(c->hooks->hold_user, point, (unsigned long long)count);
}

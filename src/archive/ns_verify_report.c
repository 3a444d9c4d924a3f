/* ns_verify_report: verify's report lines (see ns_verify_report.h). */
#include "archive/ns_verify_report.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

void ns_vreport_members(const ns_vreport *v, const char *text, char *buf, size_t size)
{
    size_t dl = v->dir ? strlen(v->dir) : 0, at = 0;
    if (!size)
        return;
    for (const char *p = text; *p && at + 1 < size;) {
        if (dl && strncmp(p, v->dir, dl) == 0 && p[dl] == '/') {
            p += dl + 1;
            continue;
        }
        buf[at++] = *p++;
    }
    buf[at] = 0;
}

void ns_vreport_line(ns_vreport *v, const char *status, const char *fmt, ...)
{
    char text[4096], clean[4096];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(text, sizeof text, fmt, ap);
    va_end(ap);
    ns_vreport_members(v, text, clean, sizeof clean);
    if (v->o->report)
        v->o->report(v->o->report_user, status, clean);
    if (strcmp(status, "PASS") == 0)
        v->s->passed++;
    else if (strcmp(status, "FAIL") == 0)
        v->s->failed++;
    else if (strcmp(status, "SKIP") == 0)
        v->s->skipped++;
}

/* ns_sweep_diag: the problems found in a sweep file, each a one-line "FILE:LINE:COL: message",
 * and the positions of the file's settings that checks after parsing report against. */
#include "spec/ns_sweep_diag.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int ns_sweep_diag_add(ns_sweep_diags *d, const char *source, ns_sweep_mark mark, int is_warning,
                      const char *fmt, ...)
{
    if (d->n >= NS_SWEEP_MAX_DIAGS) {
        d->suppressed++;
        if (is_warning)
            d->nwarnings++;
        else
            d->nerrors++;
        if (!d->source && !(d->source = strdup(source)))
            return NS_ERR_NOMEM;
        return NS_OK;
    }
    char raw[1024], msg[4 * sizeof raw];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(raw, sizeof raw, fmt, ap);
    va_end(ap);
    /* one line whatever the file holds: control characters (from multi-line scalars, keys,
     * paths) are escaped */
    size_t o = 0;
    for (const unsigned char *c = (const unsigned char *)raw; *c; c++) {
        if (*c == '\n' || *c == '\t' || *c == '\r')
            o += (size_t)snprintf(msg + o, sizeof msg - o, "\\%c",
                                  *c == '\n' ? 'n' : *c == '\t' ? 't' : 'r');
        else if (*c < 0x20 || *c == 0x7f)
            o += (size_t)snprintf(msg + o, sizeof msg - o, "\\x%02x", *c);
        else
            msg[o++] = (char)*c;
    }
    msg[o] = '\0';

    if (d->n == d->cap) {
        size_t cap = d->cap ? 2 * d->cap : 16;
        ns_sweep_diag *items = realloc(d->items, cap * sizeof *items);
        if (!items)
            return NS_ERR_NOMEM;
        d->items = items;
        d->cap = cap;
    }
    const char *warn = is_warning ? "warning: " : "";
    char *text = NULL;
    int rc = mark.line ? asprintf(&text, "%s:%zu:%zu: %s%s", source, mark.line, mark.col, warn, msg)
                       : asprintf(&text, "%s: %s%s", source, warn, msg);
    if (rc < 0)
        return NS_ERR_NOMEM;
    d->items[d->n].mark = mark;
    d->items[d->n].is_warning = is_warning;
    d->items[d->n].text = text;
    d->n++;
    if (is_warning)
        d->nwarnings++;
    else
        d->nerrors++;
    return NS_OK;
}

int ns_sweep_mark_before(ns_sweep_mark a, ns_sweep_mark b)
{
    if (!a.line || !b.line)
        return a.line && !b.line; /* unpositioned problems go last */
    return a.line < b.line || (a.line == b.line && a.col < b.col);
}

void ns_sweep_diags_sort(ns_sweep_diags *d)
{
    if (d->suppressed && d->n == NS_SWEEP_MAX_DIAGS) {
        /* one more line (beyond the cap, once): how many problems were not shown */
        ns_sweep_diag *items = realloc(d->items, (d->n + 1) * sizeof *items);
        char *text = NULL;
        if (items && asprintf(&text, "%s: %zu more problem%s not shown", d->source,
                              d->suppressed, d->suppressed == 1 ? "" : "s") >= 0) {
            d->items = items;
            d->cap = d->n + 1;
            d->items[d->n++] = (ns_sweep_diag){{0, 0}, 0, text};
        } else if (items) {
            d->items = items;
            d->cap = d->n;
        }
    }
    /* insertion sort: stable, and the lists are short */
    for (size_t i = 1; i < d->n; i++) {
        ns_sweep_diag x = d->items[i];
        size_t j = i;
        while (j > 0 && ns_sweep_mark_before(x.mark, d->items[j - 1].mark)) {
            d->items[j] = d->items[j - 1];
            j--;
        }
        d->items[j] = x;
    }
}

void ns_sweep_diags_free(ns_sweep_diags *d)
{
    if (!d)
        return;
    for (size_t i = 0; i < d->n; i++)
        free(d->items[i].text);
    free(d->items);
    free(d->source);
    memset(d, 0, sizeof *d);
}

void ns_sweep_marks_free(ns_sweep_marks *m)
{
    if (!m)
        return;
    free(m->L);
    free(m->N);
    free(m->T);
    free(m->eps);
    free(m->layers);
    free(m->heads);
    memset(m, 0, sizeof *m);
}


/* ns_list: the list rules' core (sort ascending, repeats found and dropped) and dump's
 * comma-separated option lists on it (ns_list.h). */
#include "config.h"

#include "spec/ns_list.h"

#include <stdlib.h>
#include <string.h>

static int cmp_int_item(const void *a, const void *b)
{
    const ns_list_item *x = a, *y = b;
    if (x->i != y->i)
        return x->i < y->i ? -1 : 1;
    return x->order < y->order ? -1 : x->order > y->order;
}

static int cmp_real_item(const void *a, const void *b)
{
    const ns_list_item *x = a, *y = b;
    if (x->d != y->d)
        return x->d < y->d ? -1 : 1;
    return x->order < y->order ? -1 : x->order > y->order;
}

size_t ns_list_sort_unique(ns_list_item *v, size_t n, int is_real, ns_list_repeat_fn repeat,
                           void *user)
{
    if (n > 1)
        qsort(v, n, sizeof *v, is_real ? cmp_real_item : cmp_int_item);
    size_t kept = 0;
    for (size_t j = 0; j < n; j++) {
        if (kept && (is_real ? v[j].d == v[kept - 1].d : v[j].i == v[kept - 1].i)) {
            if (repeat)
                repeat(user, &v[kept - 1], &v[j]);
            continue;
        }
        v[kept++] = v[j];
    }
    return kept;
}

/* An option's repeat: the first one found (the smallest value) is the error. */
typedef struct option_repeat {
    const char *opt;
    int is_real;
    ns_err *err;
    int found;
} option_repeat;

static void say_repeat(void *user, const ns_list_item *kept, const ns_list_item *again)
{
    option_repeat *o = user;
    (void)kept;
    if (o->found++)
        return;
    if (o->is_real)
        ns_fail(o->err, NS_ERR_INVALID, "%s: %g appears more than once", o->opt, again->d);
    else
        ns_fail(o->err, NS_ERR_INVALID, "%s: %zu appears more than once", o->opt,
                (size_t)again->i);
}

int ns_list_parse(const char *opt, const ns_range *r, const char *s, size_t **iv, double **dv,
                  size_t *nout, ns_err *err)
{
    if (!*s)
        return ns_fail(err, NS_ERR_INVALID, "%s: empty list", opt);
    size_t n = 1;
    for (const char *c = s; *c; c++)
        if (*c == ',') {
            if (c == s || c[1] == ',' || c[1] == '\0')
                return ns_fail(err, NS_ERR_INVALID, "%s: empty item in '%s'", opt, s);
            n++;
        }
    ns_list_item *v = calloc(n, sizeof *v);
    char *copy = strdup(s), *save = NULL;
    int rc = v && copy ? NS_OK : ns_fail(err, NS_ERR_NOMEM, "%s: out of memory", opt);
    size_t k = 0;
    for (char *item = copy ? strtok_r(copy, ",", &save) : NULL; rc == NS_OK && item;
         item = strtok_r(NULL, ",", &save), k++) {
        v[k].order = k;
        rc = ns_range_parse(r, opt, item, &v[k].i, r->is_real ? &v[k].d : NULL, err);
    }
    free(copy);
    option_repeat rep = {opt, r->is_real, err, 0};
    if (rc == NS_OK && (ns_list_sort_unique(v, n, r->is_real, say_repeat, &rep), rep.found))
        rc = NS_ERR_INVALID;
    size_t *u = NULL;
    double *d = NULL;
    if (rc == NS_OK) {
        if (r->is_real)
            d = malloc(n * sizeof *d);
        else
            u = malloc(n * sizeof *u);
        if (!u && !d)
            rc = ns_fail(err, NS_ERR_NOMEM, "%s: out of memory", opt);
    }
    for (k = 0; rc == NS_OK && k < n; k++)
        if (u)
            u[k] = (size_t)v[k].i;
        else
            d[k] = v[k].d;
    free(v);
    if (rc != NS_OK)
        return rc;
    if (u)
        free(*iv), *iv = u;
    else
        free(*dv), *dv = d;
    *nout = n;
    return NS_OK;
}

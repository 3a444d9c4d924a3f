/* ns_nc_check: a NetCDF file against its description (see ns_nc_check.h). */
#include "io/ns_nc_check.h"

#include <math.h>
#include <netcdf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Names come from the file: as in ns_nc_read, a buffer far larger than any name the library
 * accepts keeps a hostile file from writing past it. */
#define NAME_BUF (16 * (NC_MAX_NAME + 1))
#define VALUE_MAX 160 /* characters of an attribute's text shown */

typedef struct chk {
    int ncid;
    ns_nc_check_fn fn;
    void *user;
    ns_nc_check_counts *counts;
} chk;

static void report(chk *c, ns_nc_check_kind kind, const char *var, const char *attr,
                   const char *what, const char *have, const char *want)
{
    ns_nc_check_item it = {kind, var, attr, what, have, want};
    c->counts->n_diff++;
    if (c->fn)
        c->fn(c->user, &it);
}

static void number_text(double x, char *buf, size_t size)
{
    if (isnan(x)) {
        snprintf(buf, size, "nan");
        return;
    }
    for (int digits = 15; digits <= 17; digits++) {
        snprintf(buf, size, "%.*g", digits, x);
        if (strtod(buf, NULL) == x)
            return;
    }
}

/* An attribute's value as the file holds it, or as described. */
typedef struct aval {
    nc_type type;       /* NC_CHAR, NC_INT, NC_INT64, NC_DOUBLE, or another (then `text` says) */
    size_t len;
    char *text;         /* NC_CHAR: the text; else the value as text (owned) */
    double num;         /* NC_INT, NC_INT64, NC_DOUBLE with len 1 */
} aval;

static const char *type_name(nc_type t, size_t len)
{
    if (len != 1 && t != NC_CHAR)
        return "an array";
    switch (t) {
    case NC_CHAR: return "a text";
    case NC_STRING: return "a string";
    case NC_INT: return "a 32-bit integer";
    case NC_INT64: return "a 64-bit integer";
    case NC_DOUBLE: return "a double";
    case NC_FLOAT: return "a float";
    default: return "a number of another type";
    }
}

/* The value text, quoted for text, prefixed with the type when with_type. */
static void show(const aval *v, int with_type, char *buf, size_t size)
{
    char body[VALUE_MAX + 8];
    if (v->type == NC_CHAR || v->type == NC_STRING)
        snprintf(body, sizeof body, "\"%.*s%s\"", VALUE_MAX, v->text ? v->text : "",
                 v->text && strlen(v->text) > VALUE_MAX ? "..." : "");
    else
        snprintf(body, sizeof body, "%s", v->text ? v->text : "?");
    if (with_type)
        snprintf(buf, size, "%s %s", type_name(v->type, v->len), body);
    else
        snprintf(buf, size, "%s", body);
}

/* An int array attribute (flag_values) as "0, 1, 2": compared as text. */
#define INT_LIST_MAX 8
static void int_list(const int *vals, size_t n, char *buf, size_t size)
{
    size_t at = 0;
    buf[0] = '\0';
    for (size_t i = 0; i < n && at < size; i++)
        at += (size_t)snprintf(buf + at, size - at, "%s%d", i ? ", " : "", vals[i]);
}

static int read_value(int ncid, int varid, const char *name, aval *v, ns_err *err)
{
    memset(v, 0, sizeof *v);
    int rc = nc_inq_att(ncid, varid, name, &v->type, &v->len);
    if (rc != NC_NOERR)
        return ns_fail(err, NS_ERR_FORMAT, "attribute %s: %s", name, nc_strerror(rc));
    if (v->type == NC_CHAR) {
        if (!(v->text = malloc(v->len + 1)))
            return ns_fail(err, NS_ERR_NOMEM, "out of memory");
        if ((rc = nc_get_att_text(ncid, varid, name, v->text)) != NC_NOERR)
            return ns_fail(err, NS_ERR_FORMAT, "attribute %s: %s", name, nc_strerror(rc));
        v->text[v->len] = 0;
        return NS_OK;
    }
    char t[64];
    if (v->type == NC_STRING && v->len == 1) {
        char *s = NULL;
        if ((rc = nc_get_att_string(ncid, varid, name, &s)) != NC_NOERR)
            return ns_fail(err, NS_ERR_FORMAT, "attribute %s: %s", name, nc_strerror(rc));
        v->text = strdup(s ? s : "");
        nc_free_string(1, &s);
    } else if (v->len == 1 && v->type != NC_STRING && v->type <= NC_UINT64) {
        if ((rc = nc_get_att_double(ncid, varid, name, &v->num)) != NC_NOERR)
            return ns_fail(err, NS_ERR_FORMAT, "attribute %s: %s", name, nc_strerror(rc));
        if (v->type == NC_INT64 || v->type == NC_UINT64) {
            long long i;
            if (nc_get_att_longlong(ncid, varid, name, &i) == NC_NOERR)
                snprintf(t, sizeof t, "%lld", i);
            else
                number_text(v->num, t, sizeof t);
        } else {
            number_text(v->num, t, sizeof t);
        }
        v->text = strdup(t);
    } else if (v->type == NC_INT && v->len > 1 && v->len <= INT_LIST_MAX) {
        int vals[INT_LIST_MAX];
        if ((rc = nc_get_att_int(ncid, varid, name, vals)) != NC_NOERR)
            return ns_fail(err, NS_ERR_FORMAT, "attribute %s: %s", name, nc_strerror(rc));
        int_list(vals, v->len, t, sizeof t);
        v->text = strdup(t);
    } else {
        snprintf(t, sizeof t, "(%zu values)", v->len);
        v->text = strdup(t);
    }
    return v->text ? NS_OK : ns_fail(err, NS_ERR_NOMEM, "out of memory");
}

/* The described attribute as a value (text borrowed for NC_CHAR: not freed). */
static void want_value(const ns_nc_attr *a, aval *v, char *num, size_t size)
{
    memset(v, 0, sizeof *v);
    v->len = 1;
    if (a->text) {
        v->type = NC_CHAR;
        v->len = strlen(a->text);
        v->text = (char *)a->text;
        return;
    }
    if (a->nints) {
        v->type = NC_INT;
        v->len = a->nints;
        int_list(a->ints, a->nints, num, size);
        v->text = num;
        return;
    }
    v->type = a->is_double ? NC_DOUBLE : a->is_int32 ? NC_INT : NC_INT64;
    v->num = a->is_double ? a->dval : (double)a->ival;
    if (a->is_double)
        number_text(a->dval, num, size);
    else
        snprintf(num, size, "%lld", a->ival);
    v->text = num;
}

static int same_value(const aval *have, const aval *want)
{
    if (have->type != want->type || have->len != want->len)
        return 0;
    if (have->type == NC_CHAR)
        return memcmp(have->text, want->text, have->len) == 0 && !memchr(have->text, 0, have->len);
    if (have->type == NC_INT64 || have->len != 1)
        return strcmp(have->text, want->text) == 0;
    return memcmp(&have->num, &want->num, sizeof have->num) == 0 ||
           (isnan(have->num) && isnan(want->num));
}

/* Compare the attributes of varid (NC_GLOBAL or a variable called var) with want[0..n). */
static int check_attrs(chk *c, int varid, const char *var, const ns_nc_attr *want, size_t n,
                       size_t *compared, ns_err *err)
{
    int natts, rc;
    if ((rc = nc_inq_varnatts(c->ncid, varid, &natts)) != NC_NOERR)
        return ns_fail(err, NS_ERR_FORMAT, "%s: attributes: %s", var ? var : "file",
                       nc_strerror(rc));
    *compared += n;
    for (int i = 0; i < natts; i++) {
        char name[NAME_BUF];
        if ((rc = nc_inq_attname(c->ncid, varid, i, name)) != NC_NOERR)
            return ns_fail(err, NS_ERR_FORMAT, "%s: attribute %d: %s", var ? var : "file", i,
                           nc_strerror(rc));
        aval have, w;
        char num[64], hs[VALUE_MAX + 64], ws[VALUE_MAX + 64];
        NS_TRY(read_value(c->ncid, varid, name, &have, err));
        const ns_nc_attr *a = NULL;
        for (size_t k = 0; k < n && !a; k++)
            if (strcmp(want[k].name, name) == 0)
                a = &want[k];
        if (!a) {
            show(&have, have.type != NC_CHAR, hs, sizeof hs);
            report(c, NS_NC_CHECK_EXTRA, var, name, "attribute", hs, NULL);
        } else {
            want_value(a, &w, num, sizeof num);
            if (!same_value(&have, &w)) {
                int typed = have.type != w.type || (have.len != 1 && have.type != NC_CHAR);
                show(&have, typed, hs, sizeof hs);
                show(&w, typed, ws, sizeof ws);
                report(c, NS_NC_CHECK_DIFFERS, var, name, "attribute", hs, ws);
            }
        }
        free(have.text);
    }
    for (size_t k = 0; k < n; k++) {
        int id;
        if (nc_inq_attid(c->ncid, varid, want[k].name, &id) == NC_NOERR)
            continue;
        aval w;
        char num[64], ws[VALUE_MAX + 64];
        want_value(&want[k], &w, num, sizeof num);
        show(&w, 0, ws, sizeof ws);
        report(c, NS_NC_CHECK_MISSING, var, want[k].name, "attribute", NULL, ws);
    }
    return NS_OK;
}

/* The _FillValue, filters, type and dimensions the writer gives v (ns_nc_write's define_var). */
static int is_coord(const ns_nc_var *v)
{
    return v->ndims == 1 && strcmp(v->dims[0], v->name) == 0;
}

/* "dimensions (a, b)" into buf, from names (the description's) or, when names is NULL, from the
 * file's dimension ids. */
static void describe_dims(int ncid, const int *ids, const char *const *names, size_t n, char *buf,
                          size_t size)
{
    size_t at = (size_t)snprintf(buf, size, "dimensions (");
    for (size_t k = 0; k < n && at < size; k++) {
        char name[NAME_BUF] = "?";
        if (!names)
            nc_inq_dimname(ncid, ids[k], name);
        at += (size_t)snprintf(buf + at, size - at, "%s%s", k ? ", " : "", names ? names[k] : name);
    }
    if (at < size)
        snprintf(buf + at, size - at, ")");
}

static const char *nc_type_text(nc_type t)
{
    return t == NC_INT ? "int" : t == NC_DOUBLE ? "double" : t == NC_CHAR ? "char"
         : t == NC_FLOAT ? "float" : t == NC_INT64 ? "int64" : "another type";
}

/* The variable's type, dimensions and filters; its attributes with the _FillValue it must have. */
static int check_var(chk *c, const ns_nc_desc *d, const ns_nc_var *v, int varid, ns_err *err)
{
    nc_type t;
    int nd, dimids[NC_MAX_VAR_DIMS], rc;
    if ((rc = nc_inq_var(c->ncid, varid, NULL, &t, &nd, NULL, NULL)) != NC_NOERR ||
        nd > NC_MAX_VAR_DIMS || (rc = nc_inq_vardimid(c->ncid, varid, dimids)) != NC_NOERR)
        return ns_fail(err, NS_ERR_FORMAT, "variable %s: %s", v->name,
                       rc != NC_NOERR ? nc_strerror(rc) : "too many dimensions");
    nc_type wt = v->type == NS_NC_INT ? NC_INT : v->type == NS_NC_DOUBLE ? NC_DOUBLE : NC_CHAR;
    char have[512], want[512];
    if (t != wt) {
        snprintf(have, sizeof have, "type %s", nc_type_text(t));
        snprintf(want, sizeof want, "type %s", nc_type_text(wt));
        report(c, NS_NC_CHECK_SHAPE, v->name, NULL, "variable", have, want);
    }
    int same = (size_t)nd == v->ndims;
    for (int k = 0; k < nd && same; k++) {
        char name[NAME_BUF];
        same = nc_inq_dimname(c->ncid, dimids[k], name) == NC_NOERR &&
               strcmp(name, v->dims[k]) == 0;
    }
    if (!same) {
        describe_dims(c->ncid, dimids, NULL, (size_t)nd, have, sizeof have);
        describe_dims(c->ncid, NULL, v->dims, v->ndims, want, sizeof want);
        report(c, NS_NC_CHECK_SHAPE, v->name, NULL, "variable", have, want);
    }
    int shuffle = 0, deflate = 0, level = 0;
    if (nc_inq_var_deflate(c->ncid, varid, &shuffle, &deflate, &level) != NC_NOERR)
        shuffle = deflate = level = -1;
    int filtered = v->ndims >= 1 && !is_coord(v) && v->type != NS_NC_CHAR && !d->uncompressed;
    if (shuffle != filtered || deflate != filtered || (filtered && level != NS_NC_DEFLATE_LEVEL)) {
        if (deflate > 0 || shuffle > 0)
            snprintf(have, sizeof have, "filters %s%sdeflate level %d", shuffle ? "shuffle" : "",
                     shuffle && deflate ? ", " : "", deflate ? level : 0);
        else
            snprintf(have, sizeof have, "no filter");
        snprintf(want, sizeof want, "%s%s", filtered ? "filters " : "no filter",
                 filtered ? NS_NC_COMPRESSION : "");
        report(c, NS_NC_CHECK_SHAPE, v->name, NULL, "variable", have, want);
    }
    /* the described attributes, and the _FillValue the writer declares */
    ns_nc_attr all[NS_NC_MAX_ATTRS + 1];
    size_t n = v->nattrs;
    memcpy(all, v->attrs, n * sizeof *all);
    if (!is_coord(v) && v->fill != NS_FILL_NONE && v->type != NS_NC_CHAR) {
        if (v->type == NS_NC_DOUBLE)
            all[n++] = (ns_nc_attr){.name = "_FillValue", .dval = NAN, .is_double = 1};
        else
            all[n++] = (ns_nc_attr){.name = "_FillValue", .ival = -1, .is_int32 = 1};
    }
    c->counts->vars++;
    return check_attrs(c, varid, v->name, all, n, &c->counts->var_attrs, err);
}

/* The file's dimensions, groups and types against d's. */
static int check_file(chk *c, const ns_nc_desc *d, ns_err *err)
{
    int ndims, rc;
    if ((rc = nc_inq_ndims(c->ncid, &ndims)) != NC_NOERR)
        return ns_fail(err, NS_ERR_FORMAT, "dimensions: %s", nc_strerror(rc));
    for (int i = 0; i < ndims; i++) {
        char name[NAME_BUF], have[64], want[64];
        size_t len;
        if ((rc = nc_inq_dim(c->ncid, i, name, &len)) != NC_NOERR)
            return ns_fail(err, NS_ERR_FORMAT, "dimension %d: %s", i, nc_strerror(rc));
        const ns_nc_dim *w = NULL;
        for (size_t k = 0; k < d->ndims && !w; k++)
            if (strcmp(d->dims[k].name, name) == 0)
                w = &d->dims[k];
        if (!w) {
            report(c, NS_NC_CHECK_EXTRA, NULL, NULL, "dimension", name, NULL);
        } else if (w->len != len) {
            snprintf(have, sizeof have, "length %zu", len);
            snprintf(want, sizeof want, "length %zu", w->len);
            report(c, NS_NC_CHECK_SHAPE, name, NULL, "dimension", have, want);
        }
    }
    for (size_t k = 0; k < d->ndims; k++) {
        int id;
        if (nc_inq_dimid(c->ncid, d->dims[k].name, &id) != NC_NOERR)
            report(c, NS_NC_CHECK_MISSING, NULL, NULL, "dimension", NULL, d->dims[k].name);
    }
    int ngrps = 0, ntypes = 0;
    if (nc_inq_grps(c->ncid, &ngrps, NULL) == NC_NOERR && ngrps > 0) {
        int *ids = malloc((size_t)ngrps * sizeof *ids);
        if (!ids)
            return ns_fail(err, NS_ERR_NOMEM, "out of memory");
        nc_inq_grps(c->ncid, NULL, ids);
        for (int i = 0; i < ngrps; i++) {
            char name[NAME_BUF] = "?";
            nc_inq_grpname(ids[i], name);
            report(c, NS_NC_CHECK_EXTRA, NULL, NULL, "group", name, NULL);
        }
        free(ids);
    }
    if (nc_inq_typeids(c->ncid, &ntypes, NULL) == NC_NOERR && ntypes > 0)
        report(c, NS_NC_CHECK_EXTRA, NULL, NULL, "type", "a user-defined type", NULL);
    return NS_OK;
}

int ns_nc_check_layout(int ncid, const ns_nc_desc *d, ns_nc_check_fn fn, void *user,
                       ns_nc_check_counts *counts, ns_err *err)
{
    memset(counts, 0, sizeof *counts);
    chk c = {ncid, fn, user, counts};
    NS_TRY(check_file(&c, d, err));
    int nvars, rc;
    if ((rc = nc_inq_nvars(ncid, &nvars)) != NC_NOERR)
        return ns_fail(err, NS_ERR_FORMAT, "variables: %s", nc_strerror(rc));
    for (int i = 0; i < nvars; i++) {
        char name[NAME_BUF];
        if ((rc = nc_inq_varname(ncid, i, name)) != NC_NOERR)
            return ns_fail(err, NS_ERR_FORMAT, "variable %d: %s", i, nc_strerror(rc));
        const ns_nc_var *v = NULL;
        for (size_t k = 0; k < d->nvars && !v; k++)
            if (strcmp(d->vars[k].name, name) == 0)
                v = &d->vars[k];
        if (!v)
            report(&c, NS_NC_CHECK_EXTRA, NULL, NULL, "variable", name, NULL);
        else
            NS_TRY(check_var(&c, d, v, i, err));
    }
    return check_attrs(&c, NC_GLOBAL, NULL, d->attrs, d->nattrs, &counts->global_attrs, err);
}

/* ns_nc_results_compare: a sweep file against the description of its data (see
 * ns_nc_results_compare.h). */
#include "io/ns_nc_results_compare.h"

#include <math.h>
#include <netcdf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "io/ns_nc_results_internal.h"

static int same(double a, double b, int exact, double tol)
{
    if (exact)
        return memcmp(&a, &b, sizeof a) == 0 || (isnan(a) && isnan(b));
    if (isnan(a) || isnan(b))
        return isnan(a) && isnan(b);
    if (isinf(a) || isinf(b))
        return a == b;
    double scale = fmax(fmax(fabs(a), fabs(b)), 1.0);
    return fabs(a - b) <= tol * scale;
}

/* The length of dimension name (1 when the description has none). */
static size_t label_rows(const ns_results_desc *rd, const char *name)
{
    for (size_t i = 0; i < rd->desc.ndims; i++)
        if (strcmp(rd->desc.dims[i].name, name) == 0)
            return rd->desc.dims[i].len ? rd->desc.dims[i].len : 1;
    return 1;
}

/* Where flat index j of variable v lies, as "dim=value, ..." with each dimension's coordinate
 * value when the description has a coordinate variable of that name, else its index. */
static void describe_index(const ns_results_desc *rd, const ns_nc_var *v, size_t j, char *buf,
                           size_t size)
{
    size_t idx[NS_NC_MAX_DIMS], used = 0;
    for (size_t k = v->ndims; k-- > 0;) {
        size_t len = 1;
        for (size_t i = 0; i < rd->desc.ndims; i++)
            if (strcmp(rd->desc.dims[i].name, v->dims[k]) == 0)
                len = rd->desc.dims[i].len;
        idx[k] = len ? j % len : 0;
        j = len ? j / len : 0;
    }
    buf[0] = '\0';
    for (size_t k = 0; k < v->ndims && used < size; k++) {
        const ns_nc_var *c = NULL;
        for (size_t i = 0; i < rd->nvars && !c; i++)
            if (rd->vars[i].ndims == 1 && strcmp(rd->vars[i].name, v->dims[k]) == 0 &&
                strcmp(rd->vars[i].dims[0], v->dims[k]) == 0 && rd->vars[i].type != NS_NC_CHAR)
                c = &rd->vars[i];
        /* a text label: "<dim>"(dim, strlen), the labelled coordinate (normalizer), or
         * "<dim>_name"(dim, strlen) beside a dimension without a coordinate (head_set) */
        const ns_nc_var *label = NULL;
        for (size_t i = 0; i < rd->nvars && !c && !label; i++)
            if (rd->vars[i].ndims == 2 && rd->vars[i].type == NS_NC_CHAR &&
                strcmp(rd->vars[i].dims[0], v->dims[k]) == 0 &&
                strncmp(rd->vars[i].name, v->dims[k], strlen(v->dims[k])) == 0 &&
                (rd->vars[i].name[strlen(v->dims[k])] == '\0' ||
                 strcmp(rd->vars[i].name + strlen(v->dims[k]), "_name") == 0))
                label = &rd->vars[i];
        size_t w = label ? ns_nc_var_len(&rd->desc, label) / label_rows(rd, v->dims[k]) : 0;
        int n;
        if (label)
            n = snprintf(buf + used, size - used, "%s%s=\"%.*s\"", k ? ", " : "", v->dims[k],
                         (int)strnlen((const char *)label->data + idx[k] * w, w),
                         (const char *)label->data + idx[k] * w);
        else if (c && c->type == NS_NC_INT)
            n = snprintf(buf + used, size - used, "%s%s=%d", k ? ", " : "", v->dims[k],
                         (int)((const int32_t *)c->data)[idx[k]]);
        else if (c)
            n = snprintf(buf + used, size - used, "%s%s=%.17g", k ? ", " : "", v->dims[k],
                         ((const double *)c->data)[idx[k]]);
        else
            n = snprintf(buf + used, size - used, "%s%s index %zu", k ? ", " : "", v->dims[k],
                         idx[k]);
        used += n > 0 ? (size_t)n : 0;
    }
}

int ns_nc_results_recorded(const char *path, size_t n_shards, int32_t **forward_count,
                           int *uncompressed, ns_err *err)
{
    int ncid, varid, nd, dimid, shuffle = 0, deflate = 0, level = 0;
    size_t len = 0;
    *forward_count = NULL;
    *uncompressed = 0;
    int nrc = nc_open(path, NC_NOWRITE, &ncid);
    if (nrc != NC_NOERR)
        return ns_fail(err, NS_ERR_FORMAT, "%s: %s", path, nc_strerror(nrc));
    if (nc_inq_varid(ncid, "distance_mean", &varid) == NC_NOERR &&
        nc_inq_var_deflate(ncid, varid, &shuffle, &deflate, &level) == NC_NOERR)
        *uncompressed = !shuffle && !deflate;
    int rc = NS_OK;
    if (nc_inq_varid(ncid, "shard_forward_count", &varid) == NC_NOERR &&
        nc_inq_varndims(ncid, varid, &nd) == NC_NOERR && nd == 1 &&
        nc_inq_vardimid(ncid, varid, &dimid) == NC_NOERR &&
        nc_inq_dimlen(ncid, dimid, &len) == NC_NOERR && len == n_shards) {
        int32_t *fc = malloc((n_shards ? n_shards : 1) * sizeof *fc);
        if (!fc)
            rc = ns_fail(err, NS_ERR_NOMEM, "out of memory");
        else if (nc_get_var_int(ncid, varid, fc) != NC_NOERR)
            free(fc);
        else
            *forward_count = fc;
    }
    nc_close(ncid);
    return rc;
}

int ns_nc_results_compare(const char *path, const ns_results_data *d, ns_nc_compare *c,
                          ns_err *err)
{
    ns_results_desc *rd;
    c->n_bad = 0;
    memset(&c->checked, 0, sizeof c->checked);
    NS_TRY(ns_results_desc_new(d, c->prov, &rd, err));
    int ncid, rc = NS_OK;
    int nrc = nc_open(path, NC_NOWRITE, &ncid);
    if (nrc != NC_NOERR) {
        ns_results_desc_free(rd);
        return ns_fail(err, NS_ERR_FORMAT, "%s: %s", path, nc_strerror(nrc));
    }
    if (c->prov)
        rc = ns_nc_check_layout(ncid, &rd->desc, c->layout, c->user, &c->checked, err);
    int exact = c->exact;
    double tol = c->tol;
    ns_nc_diff_fn diff = c->diff;
    void *user = c->user;
    size_t *n_bad = &c->n_bad;
    for (size_t i = 0; i < rd->nvars && rc == NS_OK; i++) {
        const ns_nc_var *v = &rd->vars[i];
        size_t n = ns_nc_var_len(&rd->desc, v);
        int varid;
        double *got = malloc((n ? n : 1) * sizeof *got);
        if (!got) {
            rc = ns_fail(err, NS_ERR_NOMEM, "compare: out of memory");
            break;
        }
        if (nc_inq_varid(ncid, v->name, &varid) != NC_NOERR) {
            (*n_bad)++;
            if (diff)
                diff(user, v->name, n, "missing from the file", NAN, NAN);
        } else if (v->type == NS_NC_CHAR) {
            char *txt = calloc(n + 1, 1);
            if (!txt || nc_get_var_text(ncid, varid, txt) != NC_NOERR ||
                memcmp(txt, v->data, n) != 0) {
                (*n_bad)++;
                if (diff)
                    diff(user, v->name, 1, "text differs", NAN, NAN);
            }
            free(txt);
        } else if (nc_get_var_double(ncid, varid, got) != NC_NOERR) {
            (*n_bad)++;
            if (diff)
                diff(user, v->name, n, "unreadable", NAN, NAN);
        } else {
            size_t nd = 0, first = 0;
            for (size_t j = 0; j < n; j++) {
                double want = v->type == NS_NC_INT ? (double)((const int32_t *)v->data)[j]
                                                   : ((const double *)v->data)[j];
                if (!same(got[j], want, exact, tol) && nd++ == 0)
                    first = j;
            }
            if (nd) {
                (*n_bad)++;
                if (diff) {
                    double want = v->type == NS_NC_INT ? (double)((const int32_t *)v->data)[first]
                                                       : ((const double *)v->data)[first];
                    char where[512];
                    describe_index(rd, v, first, where, sizeof where);
                    diff(user, v->name, nd, where, got[first], want);
                }
            }
        }
        free(got);
    }
    nc_close(ncid);
    ns_results_desc_free(rd);
    return rc;
}

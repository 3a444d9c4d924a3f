/* ns_nc_dump: NetCDF-4 writer for `normsweep dump` (token ids, attention weights, value vectors,
 * and optionally logits and one row's METRICS.md metrics). */
#include "io/ns_nc_dump.h"

#include <errno.h>
#include <math.h>
#include <netcdf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/ns_file.h"
#include "io/ns_nc_internal.h"

struct ns_nc_dump {
    int ncid;             /* -1 once closed */
    char *path, *tmp;     /* final and temporary names */
    size_t n_layer, H, L, D;
    int w_var, v_var;
    float *regroup;       /* (H, L, D) scratch for one layer's values; (L, L) for logits */
    unsigned char *done;  /* n_layer flags: layer written */
    /* optional parts */
    int logits, lg_var;
    unsigned char *lg_done;  /* n_layer flags: logits written */
    int metrics;             /* 1 when metric variables are defined */
    size_t nT, nN, neps;
    int m_var[NS_M_COUNT];   /* per metric of the metric table */
    unsigned char *m_done;   /* (n_layer, n metric vars) flags */
};

static int ns_put_text_att(const char *tmp, int ncid, int var, const char *name, const char *value,
                           ns_err *err)
{
    if (!value)
        return NS_OK;
    NC_TRY(tmp, nc_put_att_text(ncid, var, name, strlen(value), value), "%s", name);
    return NS_OK;
}

static int ns_put_var_atts(const char *tmp, int ncid, int var, const char *long_name,
                           const char *units, ns_err *err)
{
    NS_TRY(ns_put_text_att(tmp, ncid, var, "long_name", long_name, err));
    NS_TRY(ns_put_text_att(tmp, ncid, var, "units", units, err));
    return NS_OK;
}

/* Dimensions, variables and attributes, then leave define mode and write the token ids. */
/* The optional logit variable (same chunking and compression as attention_weight). */
static int ns_nc_dump_define_logits(ns_nc_dump *d, const int *dims4, ns_err *err)
{
    const char *tmp = d->tmp;
    size_t chunk[4] = {1, 1, d->L, d->L};
    float fill = NAN;
    NC_TRY(tmp, nc_def_var(d->ncid, "logit", NC_FLOAT, 4, dims4, &d->lg_var), "define logit");
    NC_TRY(tmp, nc_def_var_chunking(d->ncid, d->lg_var, NC_CHUNKED, chunk), "chunk logit");
    NC_TRY(tmp, nc_def_var_deflate(d->ncid, d->lg_var, 1, 1, 1), "compress logit");
    NC_TRY(tmp, nc_def_var_fill(d->ncid, d->lg_var, 0, &fill), "fill value of logit");
    NS_TRY(ns_put_var_atts(tmp, d->ncid, d->lg_var,
                           "pre-softmax score z = q_query . k_key / sqrt(head dim) (NaN above the "
                           "diagonal)", "1", err));
    return NS_OK;
}

/* Coordinates N, T, eps, jac_bound(T), the metric variables and their global attributes. Leaves
 * define mode open; the coordinate values are written by ns_nc_dump_write_coords. */
static int ns_nc_dump_define_metrics(ns_nc_dump *d, const ns_nc_dump_metrics *m, int dl, int dh,
                                     int *cvars, ns_err *err)
{
    const char *tmp = d->tmp;
    int ncid = d->ncid;
    int dT, dN, dE;
    NC_TRY(tmp, nc_def_dim(ncid, "T", m->nT, &dT), "define dimension T");
    NC_TRY(tmp, nc_def_dim(ncid, "N", m->nN, &dN), "define dimension N");
    NC_TRY(tmp, nc_def_dim(ncid, "eps", m->neps, &dE), "define dimension eps");
    NC_TRY(tmp, nc_def_var(ncid, "N", NC_INT, 1, &dN, &cvars[0]), "define N");
    NS_TRY(ns_put_var_atts(tmp, ncid, cvars[0], "top-N size", NULL, err));
    NC_TRY(tmp, nc_def_var(ncid, "T", NC_DOUBLE, 1, &dT, &cvars[1]), "define T");
    NS_TRY(ns_put_var_atts(tmp, ncid, cvars[1], "normalization temperature", "1", err));
    NC_TRY(tmp, nc_def_var(ncid, "eps", NC_DOUBLE, 1, &dE, &cvars[2]), "define eps");
    NS_TRY(ns_put_var_atts(tmp, ncid, cvars[2], "finite-difference step", "1", err));
    NC_TRY(tmp, nc_def_var(ncid, "jac_bound", NC_DOUBLE, 1, &dT, &cvars[3]), "define jac_bound");
    NS_TRY(ns_put_var_atts(tmp, ncid, cvars[3], "corollary bound min(1/(4T), sqrt(2))", "1", err));
    double fill = NAN;
    for (int k = 0; k < NS_M_COUNT; k++) {
        const ns_metric_info *mi = ns_metric_info_of((ns_metric_id)k);
        int dims[4], nd = 0;
        switch (mi->dims) {
        case NS_DIMS_TN: dims[nd++] = dT; dims[nd++] = dN; break;
        case NS_DIMS_T: dims[nd++] = dT; break;
        case NS_DIMS_TE: dims[nd++] = dT; dims[nd++] = dE; break;
        case NS_DIMS_ROW: break;
        }
        dims[nd++] = dl;
        dims[nd++] = dh;
        char what[96];
        snprintf(what, sizeof what, "define %s", mi->name);
        NC_TRY(tmp, nc_def_var(ncid, mi->name, NC_DOUBLE, nd, dims, &d->m_var[k]), "%s", what);
        NC_TRY(tmp, nc_def_var_fill(ncid, d->m_var[k], 0, &fill), "%s", what);
        NS_TRY(ns_put_var_atts(tmp, ncid, d->m_var[k], mi->long_name, mi->units, err));
        NS_TRY(ns_put_text_att(tmp, ncid, d->m_var[k], "comment", mi->meaning, err));
    }
    long long row = (long long)m->row, keys = (long long)m->row + 1;
    unsigned long long seed = m->seed;
    int probes = (int)m->probes;
    NS_TRY(ns_put_text_att(tmp, ncid, NC_GLOBAL, "normalizer", m->normalizer, err));
    if (!isnan(m->normalizer_s))
        NC_TRY(tmp,
               nc_put_att_double(ncid, NC_GLOBAL, "normalizer_s", NC_DOUBLE, 1, &m->normalizer_s),
               "normalizer_s");
    NS_TRY(ns_put_text_att(tmp, ncid, NC_GLOBAL, "sphere", m->sphere ? "true" : "false", err));
    NC_TRY(tmp, nc_put_att_ulonglong(ncid, NC_GLOBAL, "seed", NC_UINT64, 1, &seed), "seed");
    NC_TRY(tmp, nc_put_att_int(ncid, NC_GLOBAL, "probes", NC_INT, 1, &probes), "probes");
    NC_TRY(tmp, nc_put_att_longlong(ncid, NC_GLOBAL, "metrics_row", NC_INT64, 1, &row),
           "metrics_row");
    NC_TRY(tmp, nc_put_att_longlong(ncid, NC_GLOBAL, "metrics_keys", NC_INT64, 1, &keys),
           "metrics_keys");
    return NS_OK;
}

static int ns_nc_dump_write_coords(ns_nc_dump *d, const ns_nc_dump_metrics *m, const int *cvars,
                                   ns_err *err)
{
    int *Ni = malloc(m->nN * sizeof *Ni);
    if (!Ni)
        return ns_fail(err, NS_ERR_NOMEM, "%s: out of memory", d->tmp);
    for (size_t n = 0; n < m->nN; n++)
        Ni[n] = m->N[n] > 2147483647u ? 2147483647 : (int)m->N[n];
    errno = 0;
    int rc = nc_put_var_int(d->ncid, cvars[0], Ni);
    int saved_errno = errno;
    free(Ni);
    if (rc != NC_NOERR)
        return ns_nc_fail(err, d->tmp, rc, saved_errno, "write N");
    NC_TRY(d->tmp, nc_put_var_double(d->ncid, cvars[1], m->T), "write T");
    NC_TRY(d->tmp, nc_put_var_double(d->ncid, cvars[2], m->eps), "write eps");
    NC_TRY(d->tmp, nc_put_var_double(d->ncid, cvars[3], m->jac_bound), "write jac_bound");
    return NS_OK;
}

static int ns_nc_dump_define(ns_nc_dump *d, const ns_nc_dump_meta *meta, const int32_t *tokens,
                             const ns_nc_dump_extras *ex, ns_err *err)
{
    const char *tmp = d->tmp;
    int ncid = d->ncid;
    int dl, dh, dq, dk, dp, dd;
    NC_TRY(tmp, nc_def_dim(ncid, "layer", d->n_layer, &dl), "define dimension layer");
    NC_TRY(tmp, nc_def_dim(ncid, "head", d->H, &dh), "define dimension head");
    NC_TRY(tmp, nc_def_dim(ncid, "query", d->L, &dq), "define dimension query");
    NC_TRY(tmp, nc_def_dim(ncid, "key", d->L, &dk), "define dimension key");
    NC_TRY(tmp, nc_def_dim(ncid, "position", d->L, &dp), "define dimension position");
    NC_TRY(tmp, nc_def_dim(ncid, "dim", d->D, &dd), "define dimension dim");

    int t_var;
    NC_TRY(tmp, nc_def_var(ncid, "token_id", NC_INT, 1, &dp, &t_var), "define token_id");
    NS_TRY(ns_put_var_atts(tmp, ncid, t_var, "GPT-2 token id at this position of the window", "1",
                           err));

    int wd[4] = {dl, dh, dq, dk};
    size_t wchunk[4] = {1, 1, d->L, d->L};
    NC_TRY(tmp, nc_def_var(ncid, "attention_weight", NC_FLOAT, 4, wd, &d->w_var),
           "define attention_weight");
    NC_TRY(tmp, nc_def_var_chunking(ncid, d->w_var, NC_CHUNKED, wchunk), "chunk attention_weight");
    NC_TRY(tmp, nc_def_var_deflate(ncid, d->w_var, 1, 1, 1), "compress attention_weight");
    NS_TRY(ns_put_var_atts(tmp, ncid, d->w_var,
                           "softmax attention weight of key for query (zero above the diagonal)",
                           "1", err));

    int vd[4] = {dl, dh, dp, dd};
    size_t vchunk[4] = {1, 1, d->L, d->D};
    NC_TRY(tmp, nc_def_var(ncid, "value", NC_FLOAT, 4, vd, &d->v_var), "define value");
    NC_TRY(tmp, nc_def_var_chunking(ncid, d->v_var, NC_CHUNKED, vchunk), "chunk value");
    NS_TRY(ns_put_var_atts(tmp, ncid, d->v_var,
                           "per-head value vector (v part of c_attn, including its bias)", "1", err));

    const char *desc = "attention weights and value vectors of one causal GPT-2 forward pass over "
                       "tokens [offset, offset + length) of the tokenized text";
    NS_TRY(ns_put_text_att(tmp, ncid, NC_GLOBAL, "description", desc, err));
    if (meta->prov) {
        ns_nc_attr attrs[NS_PROVENANCE_MAX_ATTRS];
        char buf[4096];
        size_t na = ns_provenance_attrs(meta->prov, attrs, NS_PROVENANCE_MAX_ATTRS, buf, sizeof buf);
        for (size_t a = 0; a < na; a++)
            NC_TRY(tmp, ns_nc_put_attr(ncid, NC_GLOBAL, &attrs[a]), "%s", attrs[a].name);
    }
    NS_TRY(ns_put_text_att(tmp, ncid, NC_GLOBAL, "text_file", meta->text_file, err));
    NS_TRY(ns_put_text_att(tmp, ncid, NC_GLOBAL, "text_sha256", meta->text_sha256, err));
    long long off = (long long)meta->offset, len = (long long)d->L;
    long long ntok = (long long)meta->text_tokens;
    NC_TRY(tmp, nc_put_att_longlong(ncid, NC_GLOBAL, "offset", NC_INT64, 1, &off), "offset");
    NC_TRY(tmp, nc_put_att_longlong(ncid, NC_GLOBAL, "length", NC_INT64, 1, &len), "length");
    NC_TRY(tmp, nc_put_att_longlong(ncid, NC_GLOBAL, "text_tokens", NC_INT64, 1, &ntok),
           "text_tokens");
    NC_TRY(tmp,
           nc_put_att_double(ncid, NC_GLOBAL, "layer_norm_epsilon", NC_DOUBLE, 1, &meta->ln_eps),
           "layer_norm_epsilon");
    NS_TRY(ns_put_text_att(tmp, ncid, NC_GLOBAL, "attention_scale", "1/sqrt(head dim)", err));

    if (d->logits)
        NS_TRY(ns_nc_dump_define_logits(d, wd, err));
    int cvars[4];
    if (d->metrics)
        NS_TRY(ns_nc_dump_define_metrics(d, ex->metrics, dl, dh, cvars, err));

    NC_TRY(tmp, nc_enddef(ncid), "end define mode");
    NC_TRY(tmp, nc_put_var_int(ncid, t_var, tokens), "write token_id");
    if (d->metrics)
        NS_TRY(ns_nc_dump_write_coords(d, ex->metrics, cvars, err));
    return NS_OK;
}

static void ns_nc_dump_release(ns_nc_dump *d)
{
    free(d->path);
    free(d->tmp);
    free(d->regroup);
    free(d->done);
    free(d->lg_done);
    free(d->m_done);
    free(d);
}

void ns_nc_dump_abort(ns_nc_dump *d)
{
    if (!d)
        return;
    if (d->ncid >= 0)
        nc_close(d->ncid); /* an error here changes nothing: the file is removed next */
    if (d->tmp)
        remove(d->tmp);
    ns_nc_dump_release(d);
}

int ns_nc_dump_create_ext(const char *path, const ns_nc_dump_meta *meta, size_t n_layer,
                          size_t n_head, size_t L, size_t d_head, const int32_t *tokens,
                          const ns_nc_dump_extras *extras, ns_nc_dump **out, ns_err *err)
{
    *out = NULL;
    if (n_layer == 0 || n_head == 0 || L == 0 || d_head == 0)
        return ns_fail(err, NS_ERR_INVALID, "%s: empty dump (layers=%zu heads=%zu length=%zu dim=%zu)",
                       path, n_layer, n_head, L, d_head);
    const ns_nc_dump_metrics *m = extras ? extras->metrics : NULL;
    if (m && (m->nT == 0 || m->neps == 0 || !m->T || !m->eps || !m->jac_bound))
        return ns_fail(err, NS_ERR_INVALID, "%s: metric grids must be non-empty (T %zu, eps %zu "
                       "values)", path, m->nT, m->neps);
    ns_nc_dump *d = calloc(1, sizeof *d);
    if (!d)
        return ns_fail(err, NS_ERR_NOMEM, "%s: out of memory", path);
    d->ncid = -1;
    d->n_layer = n_layer;
    d->H = n_head;
    d->L = L;
    d->D = d_head;
    d->path = strdup(path);
    d->tmp = ns_file_temp_name(path);
    d->logits = extras && extras->logits;
    d->metrics = m != NULL;
    size_t scratch = n_head * L * d_head;
    if (d->logits && L * L > scratch)
        scratch = L * L;
    d->regroup = malloc(scratch * sizeof(float));
    d->done = calloc(n_layer, 1);
    d->lg_done = calloc(n_layer, 1);
    d->m_done = calloc(n_layer * NS_M_COUNT, 1);
    if (m) {
        d->nT = m->nT;
        d->nN = m->nN;
        d->neps = m->neps;
    }
    if (!d->path || !d->tmp || !d->regroup || !d->done || !d->lg_done || !d->m_done) {
        ns_nc_dump_release(d);
        return ns_fail(err, NS_ERR_NOMEM, "%s: out of memory", path);
    }
    /* HDF5 reports a missing directory vaguely: probe with stdio first for errno's own words */
    FILE *probe = fopen(d->tmp, "wb");
    if (!probe) {
        int e = errno;
        ns_nc_dump_release(d);
        return ns_fail(err, NS_ERR_IO, "cannot create %s: %s", path, strerror(e));
    }
    fclose(probe);
    int rc = nc_create(d->tmp, NC_NETCDF4 | NC_CLOBBER, &d->ncid);
    if (rc != NC_NOERR) {
        int code = rc > 0 ? NS_ERR_IO : NS_ERR_LIBRARY; /* positive codes are errno values */
        ns_fail(err, code, "cannot create %s (as %s): %s", path, d->tmp, nc_strerror(rc));
        d->ncid = -1;
        ns_nc_dump_abort(d);
        return code;
    }
    rc = ns_nc_dump_define(d, meta, tokens, extras, err);
    if (rc != NS_OK) {
        ns_nc_dump_abort(d);
        return rc;
    }
    *out = d;
    return NS_OK;
}

int ns_nc_dump_write_layer(ns_nc_dump *d, size_t layer, const float *weights, const float *values,
                           size_t n_kv_head, ns_err *err)
{
    if (layer >= d->n_layer)
        return ns_fail(err, NS_ERR_INVALID, "%s: layer %zu out of range (%zu layers)", d->tmp, layer,
                       d->n_layer);
    size_t H = d->H, L = d->L, D = d->D, KD = n_kv_head * D;
    if (n_kv_head == 0 || H % n_kv_head != 0)
        return ns_fail(err, NS_ERR_INVALID, "%s: %zu key/value heads for %zu heads", d->tmp,
                       n_kv_head, H);
    for (size_t h = 0; h < H; h++) {     /* (L, KV D) -> (H, L, D), head h from its group */
        size_t g = h / (H / n_kv_head);
        for (size_t t = 0; t < L; t++)
            memcpy(d->regroup + (h * L + t) * D, values + t * KD + g * D, D * sizeof(float));
    }
    size_t start[4] = {layer, 0, 0, 0};
    size_t wcount[4] = {1, H, L, L}, vcount[4] = {1, H, L, D};
    char what[64];
    snprintf(what, sizeof what, "write attention_weight of layer %zu", layer);
    NC_TRY(d->tmp, nc_put_vara_float(d->ncid, d->w_var, start, wcount, weights), "%s", what);
    snprintf(what, sizeof what, "write value of layer %zu", layer);
    NC_TRY(d->tmp, nc_put_vara_float(d->ncid, d->v_var, start, vcount, d->regroup), "%s", what);
    d->done[layer] = 1;
    return NS_OK;
}

int ns_nc_dump_write_logits(ns_nc_dump *d, size_t layer, const float *logits, ns_err *err)
{
    if (!d->logits)
        return ns_fail(err, NS_ERR_INVALID, "%s: the dump was created without logits", d->tmp);
    if (layer >= d->n_layer)
        return ns_fail(err, NS_ERR_INVALID, "%s: layer %zu out of range (%zu layers)", d->tmp, layer,
                       d->n_layer);
    size_t L = d->L;
    char what[64];
    snprintf(what, sizeof what, "write logit of layer %zu", layer);
    for (size_t h = 0; h < d->H; h++) {
        const float *src = logits + h * L * L;
        for (size_t q = 0; q < L; q++)
            for (size_t k = 0; k < L; k++)
                d->regroup[q * L + k] = k <= q ? src[q * L + k] : NAN;
        size_t start[4] = {layer, h, 0, 0}, count[4] = {1, 1, L, L};
        NC_TRY(d->tmp, nc_put_vara_float(d->ncid, d->lg_var, start, count, d->regroup), "%s", what);
    }
    d->lg_done[layer] = 1;
    return NS_OK;
}

int ns_nc_dump_write_metric(ns_nc_dump *d, ns_metric_id id, size_t layer, const double *data,
                            ns_err *err)
{
    if (!d->metrics)
        return ns_fail(err, NS_ERR_INVALID, "%s: the dump was created without metrics", d->tmp);
    if (layer >= d->n_layer)
        return ns_fail(err, NS_ERR_INVALID, "%s: layer %zu out of range (%zu layers)", d->tmp, layer,
                       d->n_layer);
    const ns_metric_info *mi = ns_metric_info_of(id);
    if (!mi)
        return ns_fail(err, NS_ERR_INVALID, "%s: unknown metric %d", d->tmp, (int)id);
    size_t k = (size_t)id;
    const char *name = mi->name;
    size_t start[4] = {0, 0, 0, 0}, count[4];
    int nd = 0;
    switch (mi->dims) {
    case NS_DIMS_TN: count[nd++] = d->nT; count[nd++] = d->nN; break;
    case NS_DIMS_T: count[nd++] = d->nT; break;
    case NS_DIMS_TE: count[nd++] = d->nT; count[nd++] = d->neps; break;
    case NS_DIMS_ROW: break;
    }
    start[nd] = layer;
    count[nd++] = 1;
    count[nd++] = d->H;
    char what[96];
    snprintf(what, sizeof what, "write %s of layer %zu", name, layer);
    if (count[0] == 0)
        return d->m_done[layer * NS_M_COUNT + k] = 1, NS_OK; /* an empty N grid: nothing to write */
    NC_TRY(d->tmp, nc_put_vara_double(d->ncid, d->m_var[k], start, count, data), "%s", what);
    d->m_done[layer * NS_M_COUNT + k] = 1;
    return NS_OK;
}

int ns_nc_dump_close(ns_nc_dump *d, ns_err *err)
{
    int rc = NS_OK;
    for (size_t l = 0; l < d->n_layer; l++) {
        if (!d->done[l]) {
            rc = ns_fail(err, NS_ERR_INVALID, "%s: layer %zu was never written", d->path, l);
            goto fail;
        }
        if (d->logits && !d->lg_done[l]) {
            rc = ns_fail(err, NS_ERR_INVALID, "%s: logits of layer %zu were never written",
                         d->path, l);
            goto fail;
        }
        for (size_t k = 0; d->metrics && k < NS_M_COUNT; k++)
            if (!d->m_done[l * NS_M_COUNT + k]) {
                rc = ns_fail(err, NS_ERR_INVALID, "%s: metric %s of layer %zu was never written",
                             d->path, ns_metric_info_of((ns_metric_id)k)->name, l);
                goto fail;
            }
    }
    errno = 0;
    int nrc = nc_close(d->ncid);
    int close_errno = errno;
    d->ncid = -1;
    if (nrc != NC_NOERR) {
        rc = ns_nc_fail(err, d->tmp, nrc, close_errno, "close");
        goto fail;
    }
    if (rename(d->tmp, d->path) != 0) {
        rc = ns_fail(err, NS_ERR_IO, "rename %s to %s: %s", d->tmp, d->path, strerror(errno));
        goto fail;
    }
    rc = ns_file_sync_parent_dir(d->path, err);
    ns_nc_dump_release(d);
    return rc;
fail:
    ns_nc_dump_abort(d);
    return rc;
}

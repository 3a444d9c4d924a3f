/* ns_nc_dump: NetCDF-4 writer for `normsweep dump` (token ids, attention weights, value vectors). */
#include "io/ns_nc_dump.h"

#include <errno.h>
#include <netcdf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/ns_file.h"

struct ns_nc_dump {
    int ncid;             /* -1 once closed */
    char *path, *tmp;     /* final and temporary names */
    size_t n_layer, H, L, D;
    int w_var, v_var;
    float *regroup;       /* (H, L, D) scratch for one layer's values */
    unsigned char *done;  /* n_layer flags: layer written */
};

/* Fail with the NetCDF message when rc is an error: "PATH: WHAT: nc_strerror". */
#define NC_TRY(d_tmp, what, call)                                                             \
    do {                                                                                      \
        int nc_rc_ = (call);                                                                  \
        if (nc_rc_ != NC_NOERR)                                                               \
            return ns_fail(err, NS_ERR_LIBRARY, "%s: %s: %s", (d_tmp), (what),                \
                           nc_strerror(nc_rc_));                                              \
    } while (0)

static int ns_put_text_att(const char *tmp, int ncid, int var, const char *name, const char *value,
                           ns_err *err)
{
    if (!value)
        return NS_OK;
    NC_TRY(tmp, name, nc_put_att_text(ncid, var, name, strlen(value), value));
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
static int ns_nc_dump_define(ns_nc_dump *d, const ns_nc_dump_meta *meta, const int32_t *tokens,
                             ns_err *err)
{
    const char *tmp = d->tmp;
    int ncid = d->ncid;
    int dl, dh, dq, dk, dp, dd;
    NC_TRY(tmp, "define dimension layer", nc_def_dim(ncid, "layer", d->n_layer, &dl));
    NC_TRY(tmp, "define dimension head", nc_def_dim(ncid, "head", d->H, &dh));
    NC_TRY(tmp, "define dimension query", nc_def_dim(ncid, "query", d->L, &dq));
    NC_TRY(tmp, "define dimension key", nc_def_dim(ncid, "key", d->L, &dk));
    NC_TRY(tmp, "define dimension position", nc_def_dim(ncid, "position", d->L, &dp));
    NC_TRY(tmp, "define dimension dim", nc_def_dim(ncid, "dim", d->D, &dd));

    int t_var;
    NC_TRY(tmp, "define token_id", nc_def_var(ncid, "token_id", NC_INT, 1, &dp, &t_var));
    NS_TRY(ns_put_var_atts(tmp, ncid, t_var, "GPT-2 token id at this position of the window", "1",
                           err));

    int wd[4] = {dl, dh, dq, dk};
    size_t wchunk[4] = {1, 1, d->L, d->L};
    NC_TRY(tmp, "define attention_weight",
           nc_def_var(ncid, "attention_weight", NC_FLOAT, 4, wd, &d->w_var));
    NC_TRY(tmp, "chunk attention_weight", nc_def_var_chunking(ncid, d->w_var, NC_CHUNKED, wchunk));
    NC_TRY(tmp, "compress attention_weight", nc_def_var_deflate(ncid, d->w_var, 1, 1, 1));
    NS_TRY(ns_put_var_atts(tmp, ncid, d->w_var,
                           "softmax attention weight of key for query (zero above the diagonal)",
                           "1", err));

    int vd[4] = {dl, dh, dp, dd};
    size_t vchunk[4] = {1, 1, d->L, d->D};
    NC_TRY(tmp, "define value", nc_def_var(ncid, "value", NC_FLOAT, 4, vd, &d->v_var));
    NC_TRY(tmp, "chunk value", nc_def_var_chunking(ncid, d->v_var, NC_CHUNKED, vchunk));
    NS_TRY(ns_put_var_atts(tmp, ncid, d->v_var,
                           "per-head value vector (v part of c_attn, including its bias)", "1", err));

    const char *desc = "attention weights and value vectors of one causal GPT-2 forward pass over "
                       "tokens [offset, offset + length) of the tokenized text";
    NS_TRY(ns_put_text_att(tmp, ncid, NC_GLOBAL, "description", desc, err));
    NS_TRY(ns_put_text_att(tmp, ncid, NC_GLOBAL, "model_dir", meta->model_dir, err));
    NS_TRY(ns_put_text_att(tmp, ncid, NC_GLOBAL, "model_requested", meta->model_requested, err));
    NS_TRY(ns_put_text_att(tmp, ncid, NC_GLOBAL, "model_used", meta->model_used, err));
    NS_TRY(ns_put_text_att(tmp, ncid, NC_GLOBAL, "model_sha256", meta->model_sha256, err));
    NS_TRY(ns_put_text_att(tmp, ncid, NC_GLOBAL, "tokenizer_dir", meta->tokenizer_dir, err));
    NS_TRY(ns_put_text_att(tmp, ncid, NC_GLOBAL, "text_file", meta->text_file, err));
    NS_TRY(ns_put_text_att(tmp, ncid, NC_GLOBAL, "text_sha256", meta->text_sha256, err));
    NS_TRY(ns_put_text_att(tmp, ncid, NC_GLOBAL, "normsweep_version", meta->software, err));
    NS_TRY(ns_put_text_att(tmp, ncid, NC_GLOBAL, "command_line", meta->command_line, err));
    long long off = (long long)meta->offset, len = (long long)d->L;
    long long ntok = (long long)meta->text_tokens;
    NC_TRY(tmp, "offset", nc_put_att_longlong(ncid, NC_GLOBAL, "offset", NC_INT64, 1, &off));
    NC_TRY(tmp, "length", nc_put_att_longlong(ncid, NC_GLOBAL, "length", NC_INT64, 1, &len));
    NC_TRY(tmp, "text_tokens",
           nc_put_att_longlong(ncid, NC_GLOBAL, "text_tokens", NC_INT64, 1, &ntok));
    NC_TRY(tmp, "layer_norm_epsilon",
           nc_put_att_double(ncid, NC_GLOBAL, "layer_norm_epsilon", NC_DOUBLE, 1, &meta->ln_eps));
    NS_TRY(ns_put_text_att(tmp, ncid, NC_GLOBAL, "attention_scale", "1/sqrt(head dim)", err));

    NC_TRY(tmp, "end define mode", nc_enddef(ncid));
    NC_TRY(tmp, "write token_id", nc_put_var_int(ncid, t_var, tokens));
    return NS_OK;
}

static void ns_nc_dump_release(ns_nc_dump *d)
{
    free(d->path);
    free(d->tmp);
    free(d->regroup);
    free(d->done);
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

int ns_nc_dump_create(const char *path, const ns_nc_dump_meta *meta, size_t n_layer, size_t n_head,
                      size_t L, size_t d_head, const int32_t *tokens, ns_nc_dump **out, ns_err *err)
{
    *out = NULL;
    if (n_layer == 0 || n_head == 0 || L == 0 || d_head == 0)
        return ns_fail(err, NS_ERR_INVALID, "%s: empty dump (layers=%zu heads=%zu length=%zu dim=%zu)",
                       path, n_layer, n_head, L, d_head);
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
    d->regroup = malloc(n_head * L * d_head * sizeof(float));
    d->done = calloc(n_layer, 1);
    if (!d->path || !d->tmp || !d->regroup || !d->done) {
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
    rc = ns_nc_dump_define(d, meta, tokens, err);
    if (rc != NS_OK) {
        ns_nc_dump_abort(d);
        return rc;
    }
    *out = d;
    return NS_OK;
}

int ns_nc_dump_write_layer(ns_nc_dump *d, size_t layer, const float *weights, const float *values,
                           ns_err *err)
{
    if (layer >= d->n_layer)
        return ns_fail(err, NS_ERR_INVALID, "%s: layer %zu out of range (%zu layers)", d->tmp, layer,
                       d->n_layer);
    size_t H = d->H, L = d->L, D = d->D, C = H * D;
    for (size_t h = 0; h < H; h++)       /* (L, C) -> (H, L, D) */
        for (size_t t = 0; t < L; t++)
            memcpy(d->regroup + (h * L + t) * D, values + t * C + h * D, D * sizeof(float));
    size_t start[4] = {layer, 0, 0, 0};
    size_t wcount[4] = {1, H, L, L}, vcount[4] = {1, H, L, D};
    char what[64];
    snprintf(what, sizeof what, "write attention_weight of layer %zu", layer);
    NC_TRY(d->tmp, what, nc_put_vara_float(d->ncid, d->w_var, start, wcount, weights));
    snprintf(what, sizeof what, "write value of layer %zu", layer);
    NC_TRY(d->tmp, what, nc_put_vara_float(d->ncid, d->v_var, start, vcount, d->regroup));
    d->done[layer] = 1;
    return NS_OK;
}

int ns_nc_dump_close(ns_nc_dump *d, ns_err *err)
{
    int rc = NS_OK;
    for (size_t l = 0; l < d->n_layer; l++)
        if (!d->done[l]) {
            rc = ns_fail(err, NS_ERR_INVALID, "%s: layer %zu was never written", d->path, l);
            goto fail;
        }
    int nrc = nc_close(d->ncid);
    d->ncid = -1;
    if (nrc != NC_NOERR) {
        rc = ns_fail(err, NS_ERR_LIBRARY, "%s: close: %s", d->tmp, nc_strerror(nrc));
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

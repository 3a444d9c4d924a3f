/* ns_gpt2_load: load a GPT-2 model directory (config.json + model.safetensors) into
 * struct ns_gpt2_model, checking every required tensor's presence, dtype and shape first. */
#include <stdio.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "common/ns_sha256.h"
#include "model/ns_gpt2_internal.h"
#include "model/ns_safetensors.h"

#define NS_NAME_MAX 96

/* One required tensor: where its name, expected shape and destination pointer live. */
typedef struct slot {
    char name[NS_NAME_MAX];
    size_t ndim;
    size_t shape[2];
    const char *why;          /* config keys the expected shape comes from */
    const float **dst;
    const ns_st_tensor *t;
    size_t conv_off;          /* offset into the converted block, if converted */
    int convert;
} slot;

static void set_slot(slot *s, const char *name, size_t d0, size_t d1, const char *why,
                     const float **dst)
{
    snprintf(s->name, sizeof s->name, "%s", name);
    s->ndim = d1 ? 2 : 1;
    s->shape[0] = d0;
    s->shape[1] = d1;
    s->why = why;
    s->dst = dst;
    s->t = NULL;
    s->conv_off = 0;
    s->convert = 0;
}

static size_t fill_slots(slot *s, ns_gpt2_model *m)
{
    const ns_gpt2_config *c = &m->config;
    size_t C = c->n_embd, F = c->n_inner, n = 0;
    set_slot(&s[n++], "wte.weight", c->vocab_size, C, "vocab_size, n_embd", &m->wte);
    set_slot(&s[n++], "wpe.weight", c->n_ctx, C, "n_positions, n_embd", &m->wpe);
    set_slot(&s[n++], "ln_f.weight", C, 0, "n_embd", &m->ln_f_w);
    set_slot(&s[n++], "ln_f.bias", C, 0, "n_embd", &m->ln_f_b);
    for (size_t l = 0; l < c->n_layer; l++) {
        ns_gpt2_layer_weights *w = &m->layers[l];
        static const char *fmt[] = {
            "h.%zu.ln_1.weight",      "h.%zu.ln_1.bias",      "h.%zu.attn.c_attn.weight",
            "h.%zu.attn.c_attn.bias", "h.%zu.attn.c_proj.weight", "h.%zu.attn.c_proj.bias",
            "h.%zu.ln_2.weight",      "h.%zu.ln_2.bias",      "h.%zu.mlp.c_fc.weight",
            "h.%zu.mlp.c_fc.bias",    "h.%zu.mlp.c_proj.weight", "h.%zu.mlp.c_proj.bias",
        };
        const float **dst[] = {&w->ln_1_w, &w->ln_1_b, &w->attn_w, &w->attn_b,
                               &w->attn_proj_w, &w->attn_proj_b, &w->ln_2_w, &w->ln_2_b,
                               &w->fc_w, &w->fc_b, &w->fc_proj_w, &w->fc_proj_b};
        const size_t d0[] = {C, C, C, 3 * C, C, C, C, C, C, F, F, C};
        const size_t d1[] = {0, 0, 3 * C, 0, C, 0, 0, 0, F, 0, C, 0};
        const char *why[] = {"n_embd", "n_embd", "n_embd", "n_embd", "n_embd", "n_embd",
                             "n_embd", "n_embd", "n_embd, n_inner", "n_inner",
                             "n_inner, n_embd", "n_embd"};
        for (size_t k = 0; k < 12; k++) {
            char name[NS_NAME_MAX];
            snprintf(name, sizeof name, fmt[k], l);
            set_slot(&s[n++], name, d0[k], d1[k], why[k], dst[k]);
        }
    }
    return n;
}

/* Find name with or without the "transformer." prefix (GPT2LMHeadModel exports carry it). */
static int find_tensor(const ns_st_file *st, const char *name, const ns_st_tensor **out, ns_err *err)
{
    char pref[NS_NAME_MAX + 16];
    snprintf(pref, sizeof pref, "transformer.%s", name);
    const ns_st_tensor *a = ns_st_find(st, name), *b = ns_st_find(st, pref);
    if (a && b)
        return ns_fail(err, NS_ERR_FORMAT, "%s: tensor '%s' present both with and without the "
                       "\"transformer.\" prefix", st->path, name);
    if (!a && !b)
        return ns_fail(err, NS_ERR_FORMAT, "%s: tensor '%s' is missing (required by config.json)",
                       st->path, name);
    *out = a ? a : b;
    return NS_OK;
}

static void fmt_shape(char *buf, size_t cap, const size_t *shape, size_t ndim)
{
    size_t k = (size_t)snprintf(buf, cap, "[");
    for (size_t i = 0; i < ndim && k + 24 < cap; i++)
        k += (size_t)snprintf(buf + k, cap - k, "%s%zu", i ? ", " : "", shape[i]);
    snprintf(buf + k, cap - k, "]");
}

static int check_slot(const ns_st_file *st, slot *s, ns_err *err)
{
    NS_TRY(find_tensor(st, s->name, &s->t, err));
    const ns_st_tensor *t = s->t;
    if (t->dtype != NS_ST_F32 && t->dtype != NS_ST_F16 && t->dtype != NS_ST_BF16)
        return ns_fail(err, NS_ERR_FORMAT, "%s: tensor '%s': dtype %s is not supported (F32, F16, BF16)",
                       st->path, t->name, ns_st_dtype_name(t->dtype));
    int same = t->ndim == s->ndim;
    for (size_t i = 0; same && i < s->ndim; i++)
        same = t->shape[i] == s->shape[i];
    if (!same) {
        char got[96], want[64];
        fmt_shape(got, sizeof got, t->shape, t->ndim);
        fmt_shape(want, sizeof want, s->shape, s->ndim);
        return ns_fail(err, NS_ERR_FORMAT,
                       "%s: tensor '%s': shape %s disagrees with config.json (expected %s from %s)",
                       st->path, t->name, got, want, s->why);
    }
    /* F32 is used in place when 4-byte aligned (the map itself is page aligned). */
    s->convert = t->dtype != NS_ST_F32 || (t->offset % sizeof(float)) != 0;
    return NS_OK;
}

/* Reject layer tensors beyond n_layer: a config/file mismatch that shapes alone cannot show. */
static int check_extra_layers(const ns_st_file *st, size_t n_layer, ns_err *err)
{
    for (size_t i = 0; i < st->n_tensors; i++) {
        const char *nm = st->tensors[i].name;
        if (strncmp(nm, "transformer.", 12) == 0)
            nm += 12;
        if (nm[0] != 'h' || nm[1] != '.' || nm[2] < '0' || nm[2] > '9')
            continue;
        char *end;
        unsigned long long l = strtoull(nm + 2, &end, 10);
        if (*end == '.' && l >= n_layer)
            return ns_fail(err, NS_ERR_FORMAT,
                           "%s: tensor '%s': layer %llu but config.json has n_layer = %zu",
                           st->path, st->tensors[i].name, l, n_layer);
    }
    return NS_OK;
}

void ns_gpt2_free(ns_gpt2_model *model)
{
    if (!model)
        return;
    ns_mmap_close(&model->map);
    free(model->converted);
    free(model->layers);
    free(model->dir);
    free(model);
}

int ns_gpt2_sha256(const ns_gpt2_model *model, char hex[65], ns_err *err)
{
    return ns_sha256_buffer(model->map.data, model->map.size, hex, err);
}

const ns_gpt2_config *ns_gpt2_config_of(const ns_gpt2_model *model)
{
    return &model->config;
}

const float *ns_gpt2_tensor(const ns_gpt2_model *model, const char *name, size_t *numel)
{
    /* fill_slots only records where each pointer lives; nothing is written through m. */
    ns_gpt2_model *m = (ns_gpt2_model *)model;
    slot *slots = calloc(4 + 12 * m->config.n_layer, sizeof *slots);
    const float *data = NULL;
    if (!slots)
        return NULL;
    size_t n = fill_slots(slots, m);
    for (size_t i = 0; i < n && !data; i++)
        if (strcmp(slots[i].name, name) == 0) {
            data = *slots[i].dst;
            *numel = slots[i].shape[0] * (slots[i].ndim == 2 ? slots[i].shape[1] : 1);
        }
    free(slots);
    return data;
}

int ns_gpt2_load(const char *dir, ns_gpt2_model **out, ns_err *err)
{
    *out = NULL;
    int rc = NS_OK;
    char *path = NULL;
    slot *slots = NULL;
    ns_st_file st;
    memset(&st, 0, sizeof st);
    st.map.fd = -1;
    ns_gpt2_model *m = calloc(1, sizeof *m);
    if (!m)
        return ns_fail(err, NS_ERR_NOMEM, "out of memory");
    m->map.fd = -1;
    if ((rc = ns_gpt2_config_read(dir, &m->config, err)) != NS_OK)
        goto fail;
    const ns_gpt2_config *c = &m->config;
    if (!(m->dir = strdup(dir)) || !(path = ns_path_join(dir, "model.safetensors")) ||
        !(m->layers = calloc(c->n_layer, sizeof *m->layers)) ||
        !(slots = calloc(4 + 12 * c->n_layer, sizeof *slots))) {
        rc = ns_fail(err, NS_ERR_NOMEM, "out of memory");
        goto fail;
    }
    if ((rc = ns_st_open(path, &st, err)) != NS_OK)
        goto fail;
    size_t n = fill_slots(slots, m);
    size_t n_conv = 0;
    for (size_t i = 0; i < n; i++) {
        if ((rc = check_slot(&st, &slots[i], err)) != NS_OK)
            goto fail;
        if (slots[i].convert) {
            slots[i].conv_off = n_conv;
            n_conv += slots[i].t->numel; /* bounded by the file size: no overflow */
        }
    }
    if ((rc = check_extra_layers(&st, c->n_layer, err)) != NS_OK)
        goto fail;
    if (n_conv > 0 && !(m->converted = malloc(n_conv * sizeof(float)))) {
        rc = ns_fail(err, NS_ERR_NOMEM, "%s: out of memory converting %zu half-precision values", path,
                     n_conv);
        goto fail;
    }
    for (size_t i = 0; i < n; i++) {
        slot *s = &slots[i];
        if (!s->convert) {
            *s->dst = (const float *)(const void *)ns_st_bytes(&st, s->t);
            continue;
        }
        float *dst = m->converted + s->conv_off;
        if ((rc = ns_st_to_f32(dst, ns_st_bytes(&st, s->t), s->t->dtype, s->t->numel, err)) != NS_OK)
            goto fail;
        *s->dst = dst;
    }
    /* Every weight must be a number: a NaN or infinity would poison every metric downstream, so
     * it is refused here, before any work (one pass over the weights, ~0.1 s for 124M). */
    for (size_t i = 0; i < n; i++) {
        const float *w = *slots[i].dst;
        for (size_t k = 0; k < slots[i].t->numel; k++)
            if (!isfinite(w[k])) {
                rc = ns_fail(err, NS_ERR_INVALID, "%s: tensor '%s' holds a non-finite value (%g) at "
                             "flat index %zu", path, slots[i].t->name, (double)w[k], k);
                goto fail;
            }
    }
    /* The model keeps the map; the tensor table is no longer needed. */
    m->map = st.map;
    st.map.data = NULL;
    st.map.size = 0;
    st.map.fd = -1;
    ns_st_close(&st);
    free(slots);
    free(path);
    *out = m;
    return NS_OK;
fail:
    ns_st_close(&st);
    free(slots);
    free(path);
    ns_gpt2_free(m);
    return rc;
}

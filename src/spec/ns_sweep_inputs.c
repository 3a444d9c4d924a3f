/* ns_sweep_inputs: everything `validate` and `run` do before any work: read the sweep file (or
 * the embedded default), parse and check it, resolve the model (its config.json) and the
 * tokenizer and corpus it names (through the asset manifest), tokenize the corpus and check the
 * sweep against both -- every problem a positioned diagnostic. */
#include "spec/ns_sweep_inputs.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/ns_file.h"
#include "model/ns_checkpoint.h"
#include "norm/ns_normalize.h"
#include "common/ns_lock.h"
#include "common/ns_outpath.h"
#include "common/ns_sha256.h"
#include "journal/ns_journal.h"
#include "spec/ns_sweep_check.h"
#include "spec/ns_sweep_yaml.h"
#include "tokenizer/ns_tokenizer.h"

/* The largest sweep file read (a sweep is a page of settings, not data). */
#define NS_SWEEP_MAX_FILE (1u << 20)

static const ns_sweep_mark no_mark = {0, 0};

#define MARK(marks, field) ((marks) ? (marks)->field : no_mark)

void ns_sweep_inputs_free(ns_sweep_inputs *in)
{
    if (!in)
        return;
    ns_corpus_free(&in->corpus);
    ns_model_free(in->model);
    memset(in, 0, sizeof *in);
}

int ns_sweep_inputs_take_model(ns_sweep_inputs *in, ns_model **out, ns_err *err)
{
    const ns_asset_ref *ref = &in->model_ref;
    *out = NULL;
    if (!in->model)
        return ns_fail(err, NS_ERR_INVALID, "%s: the model was not loaded", ref->path);
    if (!in->model_sha_of_map) {
        /* The checksum came from another read of the file (the manifest's, through a stamp, or
         * a fetch's): a model.safetensors replaced before the map would otherwise be used under
         * the old checksum. */
        char hex[NS_SHA256_HEX_LEN + 1];
        NS_TRY(ns_model_sha256(in->model, hex, err));
        if (strcmp(hex, ref->sha256) != 0)
            return ns_fail(err, NS_ERR_IO,
                           "%s changed during start-up (sha256 %.12s... when checked, %.12s... "
                           "when loaded); nothing was written: run again",
                           ns_model_weights_path(in->model), ref->sha256, hex);
        in->model_sha_of_map = 1;
    }
    *out = in->model;
    in->model = NULL;
    return NS_OK;
}

size_t ns_sweep_model_attrs(const ns_model_config *mc, ns_nc_attr *a, char *buf, size_t size)
{
    size_t k = 0, used = 0;
#define TEXT(n, t) (a[k++] = (ns_nc_attr){.name = (n), .text = (t)})
#define INT(n, v) (a[k++] = (ns_nc_attr){.name = (n), .ival = (long long)(v)})
#define DBL(n, v) (a[k++] = (ns_nc_attr){.name = (n), .is_double = 1, .dval = (v)})
    TEXT("model_architecture", ns_arch_name(mc->arch));
    TEXT("model_type", mc->model_type);
    INT("model_num_layers", mc->n_layer);
    INT("model_num_attention_heads", mc->n_head);
    INT("model_num_key_value_heads", mc->n_kv_head);
    INT("model_head_dim", mc->d_head);
    INT("model_hidden_size", mc->n_embd);
    INT("model_intermediate_size", mc->n_inner);
    INT("model_max_positions", mc->n_ctx);
    INT("model_vocab_size", mc->vocab_size);
    TEXT("model_norm", mc->rms_norm ? "RMSNorm" : "LayerNorm");
    DBL("model_norm_eps", mc->norm_eps);
    TEXT("model_hidden_act", mc->hidden_act);
    TEXT("model_mlp", mc->gated_mlp ? "gated: down(act(gate x) * up x)" : "down(act(up x))");
    TEXT("model_residual", mc->parallel_residual ? "parallel: x + attn(ln1 x) + mlp(ln2 x)"
                                                 : "sequential");
    char *bias = buf + used;
    used += (size_t)snprintf(bias, size - used, "q/k/v %s, attention output %s, MLP %s",
                             mc->qkv_bias ? "yes" : "no", mc->o_bias ? "yes" : "no",
                             mc->mlp_bias ? "yes" : "no") + 1;
    TEXT("model_biases", bias);
    TEXT("model_tied_embeddings", mc->tied_embeddings ? "true" : "false");
    if (mc->rotary_dim) {
        TEXT("model_positions", "rotary (Hugging Face convention: dimension i rotated with i + "
                                "rotary_dim/2 by the angle position * rope_theta^(-2i/rotary_dim), "
                                "computed in double, cosine and sine rounded to float)");
        INT("model_rotary_dim", mc->rotary_dim);
        DBL("model_rope_theta", mc->rope_theta);
    } else {
        TEXT("model_positions", "learned position embeddings");
    }
    INT("model_sliding_window", mc->sliding_window);
    char *att = buf + used;
    double T = mc->attn_temperature > 0.0 ? mc->attn_temperature : 1.0;
    char s_arg[80] = "";
    if (mc->attn_norm_kind == NS_NORM_SSMAX) {
        snprintf(s_arg, sizeof s_arg, " (s = %g)", mc->attn_norm_s);
    } else if (mc->attn_norm_kind == NS_NORM_SIGMOID) {
        /* its bias as the normalizer coordinate writes one ("sigmoid b=-2.772588722": the
         * shortest text that reads back as the model's double) */
        ns_normalizer f = {.kind = NS_NORM_SIGMOID, .b = mc->attn_norm_s};
        char label[64];
        ns_normalizer_label(&f, 1, label, sizeof label);
        snprintf(s_arg, sizeof s_arg, " (b = %s)", label + strlen("sigmoid b="));
    }
    used += (size_t)snprintf(att, size - used, "%s%s of q.k / sqrt(head_dim) / %g%s",
                             ns_normalizer_name((ns_normalizer_kind)mc->attn_norm_kind), s_arg, T,
                             mc->n_kv_head < mc->n_head ? "; grouped-query: query head h uses "
                             "key/value head h / (heads / key_value_heads)" : "") + 1;
    TEXT("model_attention", att);
#undef TEXT
#undef INT
#undef DBL
    (void)used;
    return k;
}

/* A diagnostic whose text is "<key>: <err message>" at mark; returns NS_OK or NS_ERR_NOMEM. */
static int diag_err(ns_sweep_diags *diags, const ns_sweep_config *cfg, ns_sweep_mark mark,
                    const char *key, int is_default, const ns_err *e, ns_err *err)
{
    if (ns_sweep_diag_add(diags, cfg->source_path, mark, 0, "%s%s: %s", key,
                          is_default ? " (default)" : "", e->msg) != NS_OK)
        return ns_fail(err, NS_ERR_NOMEM, "out of memory");
    return NS_OK;
}

/* How messages name an asset: its manifest name, or the path as the sweep file wrote it (so
 * messages do not depend on where the tree lives). */
static const char *asset_desc(const ns_asset_ref *ref)
{
    return strcmp(ref->name, "path") == 0 || !ref->name[0] ? ref->requested : ref->name;
}

int ns_model_pin_parse(const char *text, ns_model_pin *pin, ns_err *err)
{
    memset(pin, 0, sizeof *pin);
    const char *at = strrchr(text, '@'), *hex = at ? at + 1 : text;
    size_t nlen = at ? (size_t)(at - text) : 0;
    if (at && (nlen == 0 || nlen >= sizeof pin->name))
        return ns_fail(err, NS_ERR_INVALID, "model pin '%s': the name before '@' must have 1 to "
                       "%zu characters", text, sizeof pin->name - 1);
    if (strlen(hex) != 64 || strspn(hex, "0123456789abcdefABCDEF") != 64)
        return ns_fail(err, NS_ERR_INVALID, "model pin '%s': expected [NAME@]SHA256, the SHA-256 "
                       "as 64 hexadecimal digits", text);
    memcpy(pin->name, text, nlen);
    for (size_t i = 0; i < 64; i++)
        pin->sha256[i] = (char)(hex[i] >= 'A' && hex[i] <= 'F' ? hex[i] - 'A' + 'a' : hex[i]);
    return NS_OK;
}

/* The model pin asks for a fallback of the sweep's model by its name. */
static int pinned_fallback(const ns_sweep_config *cfg, const ns_model_pin *pin)
{
    return pin && pin->name[0] && strcmp(pin->name, cfg->model) != 0 &&
           strcmp(pin->name, "path") != 0;
}

/* The model resolved is the one pin names (name and SHA-256): an error diagnostic otherwise. */
static int check_pin(const ns_sweep_config *cfg, ns_sweep_mark at, const ns_model_pin *pin,
                     const ns_asset_ref *ref, ns_sweep_diags *diags, ns_err *err)
{
    int rc = NS_OK;
    if (pin && pin->name[0] && strcmp(pin->name, ref->name) != 0)
        rc = ns_sweep_diag_add(diags, cfg->source_path, at, 0, "model: the model pin (--model-pin) "
                               "names '%s', but '%s' resolves to '%s' here (sha256 %s); nothing "
                               "run", pin->name, cfg->model, ref->name, ref->sha256);
    else if (pin && strcmp(pin->sha256, ref->sha256) != 0)
        rc = ns_sweep_diag_add(diags, cfg->source_path, at, 0, "model: '%s' (%s) has sha256 %s; "
                               "the model pin (--model-pin) wants %s: another model than the "
                               "pinned one; nothing run", ref->name, ref->main_file, ref->sha256,
                               pin->sha256);
    return rc == NS_OK ? NS_OK : ns_fail(err, NS_ERR_NOMEM, "out of memory");
}

int ns_sweep_resolve_model(ns_sweep_config *cfg, const ns_sweep_marks *marks,
                           const ns_assets_fetch *fetch, const ns_model_pin *pin,
                           ns_sweep_inputs *in, ns_sweep_diags *diags, ns_err *err)
{
    ns_sweep_mark at = MARK(marks, model);
    ns_err e;
    ns_err_clear(&e);
    in->have_model = 0;
    if (!cfg->model)
        return NS_OK; /* the `model:` value itself was reported */
    /* A model named by its path is not hashed here: its checksum is taken from the mapped bytes
     * below, in one pass over the weights instead of a separate read of the file (3.8 s for
     * GPT-2 XL's 6.4 GB) that the map could differ from. */
    int by_pin = pinned_fallback(cfg, pin);
    if ((by_pin ? ns_assets_resolve_fallback(cfg->model, pin->name, "model", fetch,
                                             &in->model_ref, &e)
                : ns_assets_resolve_unhashed(cfg->model, "model", fetch, &in->model_ref, &e)) !=
        NS_OK)
        return diag_err(diags, cfg, at, "model", !at.line, &e, err);
    if (by_pin && ns_sweep_diag_add(diags, cfg->source_path, at, 1, "model: '%s' pinned to its "
                                    "fallback '%s' (--model-pin), as the run it reproduces used",
                                    cfg->model, in->model_ref.name) != NS_OK)
        return ns_fail(err, NS_ERR_NOMEM, "out of memory");
    if (!by_pin && in->model_ref.is_fallback &&
        ns_sweep_diag_add(diags, cfg->source_path, at, 1,
                          "model: '%s' is not available; using '%s' instead", cfg->model,
                          in->model_ref.name) != NS_OK)
        return ns_fail(err, NS_ERR_NOMEM, "out of memory");
    if (ns_model_config_read(in->model_ref.path, &in->model_cfg, &e) != NS_OK)
        return diag_err(diags, cfg, at, "model", !at.line, &e, err);
    /* The weights too: a NaN or infinity, a wrong shape or a truncated file is refused here,
     * before any work (a map and one pass over the weights: 0.2 s for 124M, 2.8 s for GPT-2 XL's
     * 6.4 GB). The map is kept for the run. */
    ns_model_free(in->model);
    in->model = NULL;
    in->model_sha_of_map = 0;
    int unhashed = in->model_ref.sha256[0] == 0;
    if (ns_model_load(in->model_ref.path, &in->model, &e) != NS_OK) {
        if (e.code == NS_ERR_NOMEM)
            return ns_fail(err, NS_ERR_NOMEM, "%s", e.msg);
        if (unhashed) /* the checksum of what the path holds still describes it */
            (void)ns_sha256_file(in->model_ref.main_file, in->model_ref.sha256, &(ns_err){0});
        return diag_err(diags, cfg, at, "model", !at.line, &e, err);
    }
    if (unhashed) {
        NS_TRY(ns_model_sha256(in->model, in->model_ref.sha256, err));
        in->model_sha_of_map = 1;
    }
    in->have_model = 1;
    NS_TRY(check_pin(cfg, at, pin, &in->model_ref, diags, err));
    return ns_sweep_check_model(cfg, marks, &in->model_cfg, asset_desc(&in->model_ref), diags,
                                err);
}

/* The tokens a model's forward pass is probed with before any work (ns_model_probe): the first of
 * the first shard, enough for every layer and head to see several keys. */
#define NS_SWEEP_PROBE_TOKENS 32

/* A model whose activations overflow float32 on the first shard's first tokens is refused here,
 * at `model:`, rather than failing mid-run. */
static int probe_model(const ns_sweep_config *cfg, const ns_sweep_marks *marks,
                       const ns_sweep_inputs *in, ns_sweep_diags *diags, ns_err *err)
{
    if (!in->model || !cfg->shard_count || !cfg->L_max)
        return NS_OK;
    const int32_t *ids;
    ns_err e;
    if (ns_corpus_shard(&in->corpus, cfg->L_max, cfg->shard_first, cfg->shard_stride, 0, &ids,
                        &e) != NS_OK)
        return NS_OK; /* (the shards were checked: cannot happen) */
    size_t L = cfg->L_max < NS_SWEEP_PROBE_TOKENS ? cfg->L_max : NS_SWEEP_PROBE_TOKENS;
    if (ns_model_probe(in->model, ids, L, &e) == NS_OK)
        return NS_OK;
    if (e.code == NS_ERR_NOMEM)
        return ns_fail(err, NS_ERR_NOMEM, "%s", e.msg);
    ns_sweep_mark at = MARK(marks, model);
    return diag_err(diags, cfg, at, "model", !at.line, &e, err);
}

int ns_sweep_resolve_corpus(const ns_sweep_config *cfg, const ns_sweep_marks *marks,
                            const ns_assets_fetch *fetch, ns_sweep_inputs *in, ns_sweep_diags *diags,
                            ns_err *err)
{
    ns_sweep_mark tok_at = MARK(marks, tokenizer), corpus_at = MARK(marks, corpus);
    ns_tokenizer *tok = NULL;
    char *text = NULL;
    size_t len = 0;
    ns_err e;
    ns_err_clear(&e);
    int rc = NS_OK;
    in->have_tokenizer = in->have_corpus = 0;
    if (!cfg->tokenizer || !cfg->corpus)
        return NS_OK; /* reported by the parser */

    if (ns_assets_resolve(cfg->tokenizer, "tokenizer", fetch, &in->tokenizer_ref, &e) !=
            NS_OK ||
        ns_tokenizer_load(in->tokenizer_ref.path, &tok, &e) != NS_OK) {
        rc = diag_err(diags, cfg, tok_at, "tokenizer", !tok_at.line, &e, err);
        goto done; /* without a tokenizer the corpus cannot be measured */
    }
    in->have_tokenizer = 1;
    in->vocab_size = ns_tokenizer_vocab_size(tok);
    if (in->have_model && in->vocab_size > in->model_cfg.vocab_size &&
        ns_sweep_diag_add(diags, cfg->source_path, tok_at, 0,
                          "tokenizer: its vocabulary has %zu tokens, more than the model's "
                          "vocab_size %zu",
                          in->vocab_size, in->model_cfg.vocab_size) != NS_OK) {
        rc = ns_fail(err, NS_ERR_NOMEM, "out of memory");
        goto done;
    }

    if (ns_assets_resolve(cfg->corpus, "corpus", fetch, &in->corpus_ref, &e) != NS_OK) {
        rc = diag_err(diags, cfg, corpus_at, "corpus", !corpus_at.line, &e, err);
        goto done;
    }
    if ((rc = ns_file_read_all(in->corpus_ref.path, 0, &text, &len, &e)) != NS_OK) {
        rc = rc == NS_ERR_NOMEM ? ns_fail(err, rc, "%s", e.msg)
                                : diag_err(diags, cfg, corpus_at, "corpus", !corpus_at.line, &e, err);
        goto done;
    }
    if (ns_corpus_from_text(text, len, asset_desc(&in->corpus_ref), cfg->strip_gutenberg, tok,
                            &in->corpus, &e) != NS_OK) {
        if (e.code == NS_ERR_NOMEM) {
            rc = ns_fail(err, NS_ERR_NOMEM, "%s", e.msg);
            goto done;
        }
        if (e.code == NS_ERR_FORMAT && cfg->strip_gutenberg) {
            ns_sweep_mark at = MARK(marks, strip_gutenberg);
            rc = diag_err(diags, cfg, at.line ? at : corpus_at, at.line ? "strip_gutenberg" : "corpus",
                          !at.line && !corpus_at.line, &e, err);
        } else {
            rc = diag_err(diags, cfg, corpus_at, "corpus", !corpus_at.line, &e, err);
        }
        goto done;
    }
    free(in->corpus.path); /* messages used the name as written; keep the real path */
    if (!(in->corpus.path = strdup(in->corpus_ref.path))) {
        rc = ns_fail(err, NS_ERR_NOMEM, "out of memory");
        goto done;
    }
    in->have_corpus = 1;
    {
        char desc[NS_ASSET_PATH_MAX + 96];
        snprintf(desc, sizeof desc, "corpus %s%s", asset_desc(&in->corpus_ref),
                 cfg->strip_gutenberg ? " without its Gutenberg header and licence" : "");
        size_t before = diags->nerrors;
        rc = ns_sweep_check_tokens(cfg, marks, in->corpus.tokens.n, desc, diags, err);
        if (rc == NS_OK && diags->nerrors == before)
            rc = probe_model(cfg, marks, in, diags, err);
    }

done:
    free(text);
    ns_tokenizer_free(tok);
    return rc;
}

int ns_sweep_check_outputs(const ns_sweep_config *cfg, const ns_sweep_inputs *in, ns_err *err)
{
    static const char *const tok_files[] = {"encoder.json", "vocab.bpe", "vocab.json",
                                            "merges.txt", "tokenizer.json"};
    static const char *const ckpt_files[] = {NS_JOURNAL_FILE, NS_LOCK_FILE, "history"};
    enum { NTOK = sizeof tok_files / sizeof tok_files[0], NCK = 3 };
    char *own[NTOK] = {NULL}, **model_files = NULL;
    size_t nown = 0, nm = 0;
    if (in && in->have_model)
        NS_TRY(ns_model_input_files(in->model_ref.path, &model_files, &nm, err));
    ns_outpath_role *ins = calloc(3 + NTOK + nm, sizeof *ins);
    if (!ins) {
        ns_model_input_files_free(model_files, nm);
        return ns_fail(err, NS_ERR_NOMEM, "out of memory");
    }
    size_t n = 0;
    int rc = NS_OK;
    if (cfg->source_path && strcmp(cfg->source_path, NS_SWEEP_DEFAULT_NAME) != 0)
        ins[n++] = (ns_outpath_role){"the sweep file", cfg->source_path, 0};
    for (size_t k = 0; k < nm; k++) /* config.json, the weights, the index and the shards */
        ins[n++] = (ns_outpath_role){"the model file", model_files[k], 0};
    if (in && in->have_tokenizer)
        for (size_t k = 0; k < NTOK; k++)
            ins[n++] = (ns_outpath_role){"the tokenizer file",
                                         own[nown++] = ns_path_join(in->tokenizer_ref.path,
                                                                    tok_files[k]), 0};
    if (in && in->have_corpus)
        ins[n++] = (ns_outpath_role){"the corpus", in->corpus_ref.path, 0};
    size_t n_inputs = n;
    ins[n++] = (ns_outpath_role){"the checkpoint directory", cfg->checkpoint_dir, 1};
    for (size_t k = 0; k < nown; k++)
        if (!own[k])
            rc = ns_fail(err, NS_ERR_NOMEM, "out of memory");
    ns_outpath_role out = {"output", cfg->output, 0};
    if (rc == NS_OK)
        rc = ns_outpath_check(&out, ins, n, err);
    for (size_t k = 0; rc == NS_OK && k < NCK; k++) { /* the checkpoint directory's own files */
        char *f = ns_path_join(cfg->checkpoint_dir, ckpt_files[k]);
        ns_outpath_role o = {"the checkpoint file", f, 0};
        rc = f ? ns_outpath_check(&o, ins, n_inputs, err)
               : ns_fail(err, NS_ERR_NOMEM, "out of memory");
        free(f);
    }
    for (size_t k = 0; k < nown; k++)
        free(own[k]);
    free(ins);
    ns_model_input_files_free(model_files, nm);
    return rc;
}

int ns_sweep_load(const char *path, const ns_assets_fetch *fetch, int flags, ns_sweep_config *cfg,
                  ns_sweep_marks *marks, ns_sweep_inputs *in, ns_sweep_diags *diags, ns_err *err)
{
    return ns_sweep_load_model(path, NULL, NULL, fetch, flags, cfg, marks, in, diags, err);
}

int ns_sweep_load_model(const char *path, const char *model, const ns_model_pin *pin,
                        const ns_assets_fetch *fetch,
                        int flags, ns_sweep_config *cfg, ns_sweep_marks *marks,
                        ns_sweep_inputs *in, ns_sweep_diags *diags, ns_err *err)
{
    char *text = NULL;
    size_t len = 0;
    int rc;
    memset(cfg, 0, sizeof *cfg);
    if (marks)
        memset(marks, 0, sizeof *marks);
    if (in)
        memset(in, 0, sizeof *in);
    if (path) {
        if ((rc = ns_file_read_all(path, NS_SWEEP_MAX_FILE, &text, &len, err)) != NS_OK)
            return rc;
    } else if (!(text = strdup(ns_sweep_default_yaml()))) {
        return ns_fail(err, NS_ERR_NOMEM, "out of memory");
    } else {
        len = strlen(text);
    }
    rc = ns_sweep_load_text(text, len, path ? path : NS_SWEEP_DEFAULT_NAME, model, pin, fetch,
                            flags, cfg, marks, in, diags, err);
    free(text);
    return rc;
}

int ns_sweep_load_text(const char *text, size_t len, const char *name, const char *model,
                       const ns_model_pin *pin, const ns_assets_fetch *fetch, int flags,
                       ns_sweep_config *cfg, ns_sweep_marks *marks, ns_sweep_inputs *in,
                       ns_sweep_diags *diags, ns_err *err)
{
    ns_sweep_marks local_marks;
    memset(&local_marks, 0, sizeof local_marks);
    ns_sweep_marks *mk = marks ? marks : &local_marks;
    memset(cfg, 0, sizeof *cfg);
    memset(mk, 0, sizeof *mk);
    if (in)
        memset(in, 0, sizeof *in);
    int rc = ns_sweep_parse(text, len, name, cfg, mk, diags, err);
    if (rc == NS_ERR_NOMEM)
        goto done;
    if (rc == NS_OK && model) { /* the caller's model replaces the file's `model:` */
        char *m = strdup(model);
        if (!m) {
            rc = ns_fail(err, NS_ERR_NOMEM, "out of memory");
            goto done;
        }
        free(cfg->model);
        cfg->model = m;
    }
    if (rc == NS_OK && (rc = ns_sweep_check_grid(cfg, mk, diags, err)) != NS_OK)
        goto done;
    if (!diags->nerrors)
        rc = NS_OK;
    /* Files are looked at only for a sweep whose text is right: after a syntax or schema error
     * (where nothing, or not all, of the file is known) the defaults would be resolved instead
     * (e.g. a download of gpt2) and bury the real problem. */
    if (rc == NS_OK && !(flags & NS_SWEEP_SCHEMA_ONLY) && in) {
        if ((rc = ns_sweep_resolve_model(cfg, mk, fetch, pin, in, diags, err)) != NS_OK)
            goto done;
        if (!(flags & NS_SWEEP_NO_CORPUS) &&
            (rc = ns_sweep_resolve_corpus(cfg, mk, fetch, in, diags, err)) != NS_OK)
            goto done;
    }
    ns_sweep_diags_sort(diags);
    rc = NS_OK;
    if (diags->nerrors)
        rc = ns_fail(err, NS_ERR_INVALID, "%zu problem%s in %s", diags->nerrors,
                     diags->nerrors == 1 ? "" : "s", name);

done:
    if (!marks)
        ns_sweep_marks_free(&local_marks);
    return rc;
}

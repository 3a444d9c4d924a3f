/* ns_verify_inputs: the archived run's inputs, resolved and checked (see ns_verify_inputs.h). */
#include "archive/ns_verify_inputs.h"

#include <stdlib.h>
#include <string.h>

#include "archive/ns_archive_layout.h"
#include "archive/ns_archive_model.h"
#include "archive/ns_verify_members.h"
#include "common/ns_file.h"

static const char *or_unknown(const char *s)
{
    return s ? s : "unknown";
}

/* Check one input: resolved (ref filled) and its SHA-256 as recorded. 1 = pass. */
static int check_input(ns_vreport *v, const char *kind, const char *asked,
                       const ns_asset_ref *ref, int resolved, const char *recorded,
                       const ns_sweep_diags *diags)
{
    char as[400];
    if (ref->is_fallback)
        snprintf(as, sizeof as, "%s (the fallback of %s, which is not available here)", ref->name,
                 asked);
    else
        snprintf(as, sizeof as, "%s", asked);
    if (!resolved) {
        const char *why = "not found";
        for (size_t i = 0; i < diags->n; i++)
            if (!diags->items[i].is_warning && strstr(diags->items[i].text, kind)) {
                why = diags->items[i].text;
                break;
            }
        ns_vreport_line(v, "FAIL", "%s %s: cannot be resolved (%s); recorded SHA-256 %s", kind,
                        asked, why, or_unknown(recorded));
        return 0;
    }
    if (!recorded || strcmp(recorded, ref->sha256) != 0) {
        ns_vreport_line(v, "FAIL", "%s %s: SHA-256 differs: recorded %s, now %s (%s)", kind, as,
                        or_unknown(recorded), ref->sha256, ref->main_file);
        return 0;
    }
    ns_vreport_line(v, "PASS", "%s %s: SHA-256 matches the recorded %s", kind, as, recorded);
    return 1;
}

/* Whether the word w is in the command line s. */
static int has_word(const char *s, const char *w)
{
    size_t n = strlen(w);
    for (const char *p = s ? strstr(s, w) : NULL; p; p = strstr(p + 1, w))
        if ((p == s || p[-1] == ' ') && (p[n] == ' ' || p[n] == 0))
            return 1;
    return 0;
}

static int replace_model(ns_sweep_config *cfg, const char *model, ns_err *err)
{
    char *m = strdup(model);
    if (!m)
        return ns_fail(err, NS_ERR_NOMEM, "out of memory");
    free(cfg->model);
    cfg->model = m;
    return NS_OK;
}

/* The model to resolve: the sweep's, or the one train-grid gave the run in its place; the
 * requested one's fallback when the run recorded it used that (the manifests must say so). */
static int choose_model(ns_vreport *v, const ns_nc_info *info, const ns_verify_manifests *m,
                        ns_sweep_config *cfg, ns_verify_model *model, ns_err *err)
{
    const char *req = ns_nc_info_text(info, "model_requested");
    const char *used = ns_nc_info_text(info, "model_used");
    int by_path = ns_archive_model_by_path(info);
    if (req && cfg->model && strcmp(req, cfg->model) != 0 && by_path &&
        has_word(ns_nc_info_text(info, "command_line"), "train-grid")) {
        /* train-grid gives each cell's sweep the directory of the model it trained: a path, never
         * an asset name (so no set can be claimed this way) */
        ns_vreport_line(v, "INFO", "model: the run was given %s in place of the sweep file's %s",
                        req, cfg->model);
        NS_TRY(replace_model(cfg, req, err));
    } /* else a model_requested other than the sweep's is reported by the attributes' check */
    if (!(model->requested = strdup(cfg->model ? cfg->model : "unknown")))
        return ns_fail(err, NS_ERR_NOMEM, "out of memory");
    model->fallback = 0;
    if (!used || !cfg->model || by_path || strcmp(used, "unknown") == 0 ||
        strcmp(used, cfg->model) == 0)
        return NS_OK;
    const char *fb = ns_verify_fallback_of(m, cfg->model);
    if (!fb || strcmp(fb, used) != 0)
        return NS_OK; /* not its fallback: the model asked for is checked, and model_used fails */
    ns_vreport_line(v, "INFO", "model: the sweep asked for %s; the run used its fallback %s",
                    cfg->model, used);
    model->fallback = 1;
    return replace_model(cfg, used, err);
}

/* A model the archive carries (archive --with-model): the directory model/ as the mirror of an
 * asset cache in the extraction directory, the archived asset manifest checking every file (a
 * set); or, for a model given by its directory, cfg's model replaced by the packed directory.
 * *mirror NULL: none packed. */
static int packed_model(ns_vreport *v, const char *dir, const ns_nc_info *info,
                        ns_sweep_config *cfg, char **mirror, char **cache, char **manifest,
                        ns_err *err)
{
    *mirror = *cache = *manifest = NULL;
    char *m = ns_path_join(dir, NS_ARCHIVE_MODEL_DIR);
    if (!m)
        return ns_fail(err, NS_ERR_NOMEM, "out of memory");
    if (!ns_file_is_dir(m)) {
        free(m);
        return NS_OK;
    }
    const char *path = ns_nc_info_text(info, "model_path");
    if (ns_archive_model_by_path(info)) {
        const char *base = path ? strrchr(path, '/') : NULL;
        char *p = ns_path_join(m, base && base[1] ? base + 1 : path ? path : "");
        free(m);
        if (!p)
            return ns_fail(err, NS_ERR_NOMEM, "out of memory");
        ns_vreport_line(v, "INFO", "model: the archive carries it (%s/%s)", NS_ARCHIVE_MODEL_DIR,
                        base && base[1] ? base + 1 : "");
        free(cfg->model);
        cfg->model = p;
        return NS_OK;
    }
    *mirror = m;
    *cache = ns_path_join(dir, ".packed-model-cache");
    char *a = ns_path_join(dir, NS_ARCHIVE_ASSETS);
    if (a && ns_file_is_regular(a))
        *manifest = a;
    else
        free(a);
    if (!*cache)
        return ns_fail(err, NS_ERR_NOMEM, "out of memory");
    ns_vreport_line(v, "INFO", "model: the archive carries it (%s/), checked against %s",
                    NS_ARCHIVE_MODEL_DIR, *manifest ? NS_ARCHIVE_ASSETS : "this build's asset "
                    "manifest");
    return NS_OK;
}

int ns_verify_inputs(ns_vreport *v, const char *dir, const ns_nc_info *info, ns_sweep_config *cfg,
                     ns_sweep_inputs *in, ns_sweep_diags *diags, ns_verify_model *model, int *ok,
                     ns_err *err)
{
    const ns_verify_options *o = v->o;
    *ok = 0;
    ns_verify_manifests m;
    ns_verify_manifests_load(v, dir, &m);
    int rc = choose_model(v, info, &m, cfg, model, err);
    ns_assets_fetch fetch = {.allow = o->allow_fetch, .log = o->fetch_log,
                             .log_user = o->report_user};
    char *packed = NULL, *cache = NULL, *manifest = NULL;
    if (rc == NS_OK)
        rc = packed_model(v, dir, info, cfg, &packed, &cache, &manifest, err);
    ns_assets_fetch from_archive = {.allow = 1, .log = o->fetch_log, .log_user = o->report_user,
                                    .assets_dir = cache, .mirror_dir = packed,
                                    .manifest = manifest};
    if (rc == NS_OK)
        rc = ns_sweep_resolve_model(cfg, NULL, packed ? &from_archive : &fetch, NULL, in, diags,
                                    err);
    free(packed);
    free(cache);
    free(manifest);
    if (rc != NS_OK) {
        ns_verify_manifests_free(&m);
        return rc;
    }
    if (in->model_ref.is_fallback) {
        ns_vreport_line(v, "INFO", "model: %s is not available here; it resolves to its fallback "
                        "%s", in->model_ref.requested, in->model_ref.name);
        model->fallback = 1;
    }
    int good = check_input(v, "model", cfg->model, &in->model_ref, in->model_ref.sha256[0] != 0,
                           ns_nc_info_text(info, "model_sha256"), diags);
    ns_verify_asset_claim(v, &m, "model", ns_archive_model_by_path(info) ? "path"
                          : ns_nc_info_text(info, "model_used"), ns_nc_info_text(info, "model_sha256"));
    if ((rc = ns_sweep_resolve_corpus(cfg, NULL, &fetch, in, diags, err)) != NS_OK) {
        ns_verify_manifests_free(&m);
        return rc;
    }
    good &= check_input(v, "tokenizer", cfg->tokenizer, &in->tokenizer_ref,
                        in->tokenizer_ref.sha256[0] != 0,
                        ns_nc_info_text(info, "tokenizer_sha256"), diags);
    ns_verify_asset_claim(v, &m, "tokenizer", ns_nc_info_text(info, "tokenizer_used"),
                          ns_nc_info_text(info, "tokenizer_sha256"));
    if (in->have_tokenizer) {
        good &= check_input(v, "corpus", cfg->corpus, &in->corpus_ref,
                            in->corpus_ref.sha256[0] != 0,
                            ns_nc_info_text(info, "corpus_sha256"), diags);
    } else {
        ns_vreport_line(v, "SKIP", "corpus %s: not checked without the tokenizer", cfg->corpus);
        good = 0;
    }
    ns_verify_asset_claim(v, &m, "corpus", ns_nc_info_text(info, "corpus_used"),
                          ns_nc_info_text(info, "corpus_sha256"));
    ns_verify_manifests_free(&m);
    if (good && (diags->nerrors || !in->have_model || !in->have_corpus)) {
        for (size_t i = 0; i < diags->n; i++)
            if (!diags->items[i].is_warning)
                ns_vreport_line(v, "FAIL", "inputs: %s", diags->items[i].text);
        good = 0;
    }
    if (!good)
        ns_vreport_line(v, "SKIP", "attributes, journal and recomputation: the recorded inputs "
                        "are not available");
    *ok = good;
    return NS_OK;
}

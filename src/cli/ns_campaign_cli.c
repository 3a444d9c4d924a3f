/* ns_campaign_cli: `normsweep run CAMPAIGN.yaml` and `normsweep validate CAMPAIGN.yaml` for a
 * campaign file (spec/ns_campaign.h): every model checked before any work, then one sweep per
 * model in file order (src/sweep/ns_sweep), each into OUTPUT_DIR/<id>/ with its own journal, and
 * OUTPUT_DIR/campaign.json saying where each stands. docs/SWEEP.md, "Campaigns". */
#include <mpi.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "assets/ns_asset_ctx.h"
#include "assets/ns_assets.h"
#include "assets/ns_manifest.h"
#include "cli/ns_campaign_cli.h"
#include "cli/ns_cli.h"
#include "cli/ns_hold.h"
#include "common/ns_file.h"
#include "common/ns_sha256.h"
#include "journal/ns_journal.h"
#include "spec/ns_sweep_inputs.h"

#define CAMPAIGN_COPY "campaign.yaml"  /* the campaign file's bytes, kept in OUTPUT_DIR */
#define CAMPAIGN_SUMMARY "campaign.json"

int ns_cli_campaign_read(const char *cmd, const char *path, const char *out_dir, ns_campaign *c,
                         char **text, size_t *len)
{
    ns_err err;
    ns_sweep_diags diags = {0};
    memset(c, 0, sizeof *c);
    *text = NULL;
    if (ns_file_read_all(path, 1u << 20, text, len, &err) != NS_OK)
        return NS_EXIT_OK; /* the sweep loader reports an unreadable file */
    int rc = ns_campaign_parse(*text, *len, path, out_dir, c, &diags, &err);
    int speak = ns_hold_launcher_rank() == 0; /* read by every rank before MPI: one speaks */
    for (size_t i = 0; speak && i < diags.n; i++)
        fprintf(stderr, "%s\n", diags.items[i].text);
    ns_sweep_diags_free(&diags);
    if (rc == NS_OK)
        return NS_EXIT_OK;
    if (speak)
        return ns_cli_report(cmd, &err);
    return err.code == NS_ERR_NOMEM ? NS_EXIT_FAILURE : NS_EXIT_USAGE;
}

int ns_cli_campaign_missing(ns_assets_ctx *ctx, const char *model, char *why, size_t len)
{
    why[0] = 0;
    if (ns_file_exists(model))
        return 0;
    char mpath[4096];
    ns_manifest man = {0};
    ns_err e;
    if (ns_manifest_locate(mpath, sizeof mpath, &e) != NS_OK ||
        ns_manifest_load(mpath, &man, &e) != NS_OK)
        return 0; /* the sweep loader reports it */
    const ns_asset_set *set = ns_manifest_find(&man, model);
    char reason[2048];
    int missing = set && !set->fallback && strcmp(set->kind, "model") == 0 &&
                  !ns_assets_set_available(ctx, set, reason, sizeof reason);
    if (missing) {
        const char *url = NULL;
        for (size_t i = 0; i < set->n_files && !url; i++)
            url = set->files[i].n_urls ? set->files[i].urls[0] : NULL;
        snprintf(why, len, "`normsweep assets fetch %s%s` would download it%s%s%s, which cannot "
                 "be done here: %s", strstr(reason, "--accept-unconfirmed") ?
                 "--accept-unconfirmed " : "", model, url ? " (from " : "", url ? url : "",
                 url ? ", ...)" : "", reason);
    }
    ns_manifest_free(&man);
    return missing;
}

int ns_cli_campaign_schema(const ns_campaign *c, const char *cmd)
{
    ns_sweep_config cfg;
    ns_sweep_diags diags = {0};
    ns_err err;
    ns_err_clear(&err);
    int rc = ns_sweep_load_text(c->models[0].text, c->models[0].len, c->path, NULL, NULL, NULL,
                                NS_SWEEP_SCHEMA_ONLY, &cfg, NULL, NULL, &diags, &err);
    for (size_t k = 0; k < diags.n; k++)
        fprintf(stderr, "%s\n", diags.items[k].text);
    ns_sweep_diags_free(&diags);
    ns_sweep_config_free(&cfg);
    return rc == NS_OK ? NS_EXIT_OK : ns_cli_report(cmd, &err);
}

/* ---- the run ---- */

typedef struct camp_run {
    ns_campaign *c;
    const char *text;       /* the campaign file */
    size_t len;
    char sha[65];           /* its SHA-256 */
    char (*model_sha)[65];  /* per model, from the checks before any work */
    char **model_used;      /* per model: the asset or directory used */
    const char **state;     /* per model */
    int rank;
} camp_run;

static void json_str(FILE *f, const char *s)
{
    fputc('"', f);
    for (const unsigned char *p = (const unsigned char *)(s ? s : ""); *p; p++) {
        if (*p == '"' || *p == '\\')
            fprintf(f, "\\%c", *p);
        else if (*p < 0x20)
            fprintf(f, "\\u%04x", *p);
        else
            fputc(*p, f);
    }
    fputc('"', f);
}

/* OUTPUT_DIR/campaign.json: the campaign, and per model its output, model_sha256 and state. */
static int write_summary(const camp_run *r, ns_err *err)
{
    char *buf = NULL;
    size_t n = 0;
    FILE *f = open_memstream(&buf, &n);
    if (!f)
        return ns_fail(err, NS_ERR_NOMEM, "out of memory");
    fprintf(f, "{\n  \"format\": \"normsweep-campaign-1\",\n  \"campaign_file\": ");
    json_str(f, r->c->path);
    fprintf(f, ",\n  \"campaign_sha256\": \"%s\",\n  \"output_dir\": ", r->sha);
    json_str(f, r->c->output_dir);
    fprintf(f, ",\n  \"states\": \"pending: not started; running; done: output complete; "
               "interrupted: journal saved, --resume continues; failed\",\n  \"models\": [\n");
    for (size_t i = 0; i < r->c->n; i++) {
        const ns_campaign_model *m = &r->c->models[i];
        const char *k[7] = {"id", "model", "model_used", "sweep_file", "output",
                            "checkpoint_dir", "state"};
        const char *v[7] = {m->id, m->model, r->model_used[i], m->sweep_path, m->output,
                            m->checkpoint_dir, r->state[i]};
        fprintf(f, "    {");
        for (int j = 0; j < 7; j++) {
            fprintf(f, "\"%s\": ", k[j]);
            json_str(f, v[j]);
            fprintf(f, ", ");
        }
        fprintf(f, "\"model_sha256\": \"%s\"}%s\n", r->model_sha[i], i + 1 < r->c->n ? "," : "");
    }
    fprintf(f, "  ]\n}\n");
    fclose(f);
    char *path = ns_path_join(r->c->output_dir, CAMPAIGN_SUMMARY);
    int rc = path && buf ? ns_file_write_atomic(path, buf, n, err)
                         : ns_fail(err, NS_ERR_NOMEM, "out of memory");
    free(path);
    free(buf);
    return rc;
}

/* Every model, before any work (rank 0): here, valid with the grid, its outputs apart from its
 * inputs. Problems printed; returns an exit code. */
static int check_models(camp_run *r)
{
    ns_assets_ctx ctx;
    ns_err err;
    ns_err_clear(&err);
    if (ns_assets_ctx_init(&ctx, NULL, NULL, &err) != NS_OK)
        return ns_cli_report("run", &err);
    int code = ns_cli_campaign_schema(r->c, "run");
    if (code != NS_EXIT_OK)
        return code;
    ns_sweep_inputs *in = calloc(1, sizeof *in);
    if (!in)
        return NS_EXIT_FAILURE;
    for (size_t i = 0; i < r->c->n && code != NS_EXIT_FAILURE; i++) {
        ns_campaign_model *m = &r->c->models[i];
        char why[1024];
        if (ns_cli_campaign_missing(&ctx, m->model, why, sizeof why)) {
            fprintf(stderr, "%s:%zu:%zu: [%s] model '%s' is not here: %s\n", r->c->path,
                    m->mark.line, m->mark.col, m->id, m->model, why);
            code = NS_EXIT_USAGE;
            continue;
        }
        ns_sweep_config cfg;
        ns_sweep_diags diags = {0};
        ns_assets_fetch fetch = {.allow = 1, .log = ns_cli_log_line, .log_user = NULL};
        int rc = ns_sweep_load_text(m->text, m->len, r->c->path, NULL, NULL, &fetch, 0, &cfg,
                                    NULL, in, &diags, &err);
        ns_err e;
        if (rc == NS_OK && ns_sweep_check_outputs(&cfg, in, &e) != NS_OK) {
            rc = e.code;
            err = e;
            if (e.code == NS_ERR_INVALID)
                ns_sweep_diag_add(&diags, r->c->path, (ns_sweep_mark){0, 0}, 0, "%s", e.msg);
        }
        ns_campaign_fix_diags(r->c, i, &diags);
        for (size_t k = 0; k < diags.n; k++)
            fprintf(stderr, "%s\n", diags.items[k].text);
        if (rc == NS_OK) {
            snprintf(r->model_sha[i], 65, "%s", in->model_ref.sha256);
            free(r->model_used[i]);
            r->model_used[i] = strdup(ns_asset_ref_is_path(&in->model_ref) ? in->model_ref.path
                                                                            : in->model_ref.name);
        } else if (rc == NS_ERR_INVALID || rc == NS_ERR_FORMAT || rc == NS_ERR_CHECKSUM) {
            code = NS_EXIT_USAGE;
        } else {
            ns_cli_report("run", &err);
            code = NS_EXIT_FAILURE;
        }
        ns_sweep_diags_free(&diags);
        ns_sweep_config_free(&cfg);
        ns_sweep_inputs_free(in);
    }
    free(in);
    if (code == NS_EXIT_USAGE)
        fprintf(stderr, "normsweep run: the campaign %s has problems (above); no model was "
                "run\n", r->c->path);
    return code;
}

/* OUTPUT_DIR: new (or without a campaign in it) unless --resume, which needs the same campaign. */
static int check_out(const camp_run *r, int resume)
{
    char *copy = ns_path_join(r->c->output_dir, CAMPAIGN_COPY), *old = NULL;
    size_t len = 0;
    ns_err err;
    int code = NS_EXIT_OK;
    if (!copy)
        return NS_EXIT_FAILURE;
    if (ns_file_exists(r->c->output_dir) && !ns_file_is_dir(r->c->output_dir)) {
        fprintf(stderr, "normsweep run: %s exists and is not a directory\n", r->c->output_dir);
        code = NS_EXIT_USAGE;
    } else if (!resume && ns_file_exists(copy)) {
        fprintf(stderr, "normsweep run: %s holds a campaign: pass --resume to continue it, or "
                "choose another output directory (output_dir: or --output)\n", r->c->output_dir);
        code = NS_EXIT_USAGE;
    } else if (resume && ns_file_exists(copy)) {
        if (ns_file_read_all(copy, 1u << 20, &old, &len, &err) != NS_OK) {
            fprintf(stderr, "normsweep run: %s\n", err.msg);
            code = NS_EXIT_FAILURE;
        } else if (len != r->len || memcmp(old, r->text, len) != 0) {
            fprintf(stderr, "normsweep run: %s: not the campaign %s started with (%s differs); "
                    "--resume continues the same campaign only\n", r->c->path,
                    r->c->output_dir, copy);
            code = NS_EXIT_USAGE;
        }
    }
    free(old);
    free(copy);
    return code;
}

/* Rank 0: the output directory, the campaign's copy, every model's sweep file (an existing one
 * must be the same text) and the summary. */
static int start_out(camp_run *r, ns_err *err)
{
    char *copy = ns_path_join(r->c->output_dir, CAMPAIGN_COPY);
    int rc = copy ? ns_file_mkdirs(r->c->output_dir, err)
                  : ns_fail(err, NS_ERR_NOMEM, "out of memory");
    if (rc == NS_OK && !ns_file_exists(copy))
        rc = ns_file_write_atomic(copy, r->text, r->len, err);
    free(copy);
    for (size_t i = 0; i < r->c->n && rc == NS_OK; i++) {
        ns_campaign_model *m = &r->c->models[i];
        char *dir = ns_path_join(r->c->output_dir, m->id), *old = NULL;
        size_t len = 0;
        rc = dir ? ns_file_mkdirs(dir, err) : ns_fail(err, NS_ERR_NOMEM, "out of memory");
        free(dir);
        if (rc == NS_OK && ns_file_exists(m->sweep_path)) {
            rc = ns_file_read_all(m->sweep_path, 1u << 20, &old, &len, err);
            if (rc == NS_OK && (len != m->len || memcmp(old, m->text, len) != 0))
                rc = ns_fail(err, NS_ERR_INVALID, "%s is not the sweep this campaign derives for "
                             "%s; move it away", m->sweep_path, m->id);
            free(old);
        } else if (rc == NS_OK) {
            rc = ns_file_write_atomic(m->sweep_path, m->text, m->len, err);
        }
    }
    return rc == NS_OK ? write_summary(r, err) : rc;
}

static int run_models(camp_run *r, const ns_sweep_options *base, const ns_hooks *hooks,
                      ns_cli_show *sh)
{
    int code = NS_EXIT_OK;
    for (size_t i = 0; i < r->c->n && code == NS_EXIT_OK; i++) {
        ns_campaign_model *m = &r->c->models[i];
        int resume = 0;
        if (r->rank == 0) {
            char *j = ns_path_join(m->checkpoint_dir, NS_JOURNAL_FILE);
            resume = base->resume && j && ns_file_exists(j);
            free(j);
            fprintf(stderr, "normsweep: campaign %s: model %zu of %zu: %s (%s)%s\n", r->c->path,
                    i + 1, r->c->n, m->id, m->model, resume ? ", resumed" : "");
            r->state[i] = "running";
            ns_err e;
            if (write_summary(r, &e) != NS_OK)
                fprintf(stderr, "normsweep run: %s\n", e.msg);
        }
        MPI_Bcast(&resume, 1, MPI_INT, 0, MPI_COMM_WORLD);
        ns_sweep_options so = *base;
        so.sweep_path = m->sweep_path;
        so.output = so.checkpoint_dir = NULL;
        so.resume = resume;
        ns_sweep_outcome out;
        ns_err err;
        ns_err_clear(&err);
        int rc = ns_sweep_run(MPI_COMM_WORLD, &so, hooks, &out, &err);
        if (sh->live_open)
            fputc('\n', stderr), sh->live_open = 0;
        if (rc == NS_OK && r->rank == 0 && out.summary[0])
            fprintf(stderr, "%s", out.summary);
        code = ns_cli_status_exit("run", rc, out.rank, &err);
        if (out.unresponsive && code == NS_EXIT_OK)
            code = NS_EXIT_FAILURE;
        if (r->rank == 0) {
            r->state[i] = code == NS_EXIT_OK ? "done"
                          : code == NS_EXIT_INTERRUPTED ? "interrupted" : "failed";
            ns_err e;
            if (write_summary(r, &e) != NS_OK)
                fprintf(stderr, "normsweep run: %s\n", e.msg);
        }
    }
    return code;
}

int ns_cli_campaign_run(ns_campaign *c, const char *text, size_t len, ns_sweep_options *opt,
                        int argc, char **argv)
{
    if (opt->checkpoint_dir || opt->model_pin) {
        if (ns_hold_launcher_rank() == 0)
            fprintf(stderr, "normsweep run: %s is a campaign: %s does not apply (each model's "
                    "journal is OUTPUT_DIR/<id>/checkpoint; --output names OUTPUT_DIR)\n",
                    c->path, opt->checkpoint_dir ? "--checkpoint-dir" : "--model-pin");
        return NS_EXIT_USAGE;
    }
    camp_run r = {.c = c, .text = text, .len = len};
    r.model_sha = calloc(c->n, sizeof *r.model_sha);
    r.model_used = calloc(c->n, sizeof *r.model_used);
    r.state = calloc(c->n, sizeof *r.state);
    ns_err err;
    if (!r.model_sha || !r.model_used || !r.state ||
        ns_sha256_buffer(text, len, r.sha, &err) != NS_OK) {
        free(r.model_sha), free(r.model_used), free(r.state);
        fprintf(stderr, "normsweep run: out of memory\n");
        return NS_EXIT_FAILURE;
    }
    for (size_t i = 0; i < c->n; i++)
        r.state[i] = "pending";
    volatile sig_atomic_t *stop;
    int size = 0;
    ns_hold hold;
    int code = ns_cli_mpi_start("run", "campaign", &hold, &stop, &r.rank, &size);
    if (code != NS_EXIT_OK) {
        free(r.model_sha), free(r.model_used), free(r.state);
        return code;
    }
    if (r.rank == 0) {
        code = check_out(&r, opt->resume);
        if (code == NS_EXIT_OK)
            code = check_models(&r);
        if (code == NS_EXIT_OK && start_out(&r, &err) != NS_OK)
            code = ns_cli_report("run", &err);
    }
    MPI_Bcast(&code, 1, MPI_INT, 0, MPI_COMM_WORLD);
    char *cmd = ns_cli_command_line(argc, argv, size), exe_sha[65];
    ns_cli_self_sha256(exe_sha);
    opt->command_line = cmd;
    opt->institution = getenv("NORMSWEEP_INSTITUTION");
    opt->executable_sha256 = exe_sha;
    ns_cli_show sh = {"normsweep", 0};
    ns_hooks hooks = {
        .line = ns_cli_show_line, .progress = ns_cli_show_progress,
        .progress_live = isatty(STDERR_FILENO), .user = &sh, .stop = stop,
        .hold = ns_hold_hook(&hold), .hold_user = &hold,
    };
    if (code == NS_EXIT_OK)
        code = run_models(&r, opt, &hooks, &sh);
    if (r.rank == 0 && code == NS_EXIT_OK)
        fprintf(stderr, "normsweep: campaign %s: %zu models done in %s (%s/%s); side by side: "
                "postprocess/report --compare %s --out DIR\n", c->path, c->n, c->output_dir,
                c->output_dir, CAMPAIGN_SUMMARY, c->output_dir);
    if (r.rank == 0 && code == NS_EXIT_INTERRUPTED)
        fprintf(stderr, "normsweep: campaign stopped; normsweep run --resume %s continues it\n",
                c->path);
    free(cmd);
    for (size_t i = 0; i < c->n; i++)
        free(r.model_used[i]);
    free(r.model_sha), free(r.model_used), free(r.state);
    if (code == NS_EXIT_FAILURE) {
        fflush(NULL);
        _Exit(code);
    }
    MPI_Finalize();
    return code;
}

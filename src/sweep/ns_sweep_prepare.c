/* ns_sweep_prepare: rank 0's part before the task loop: read, validate and resolve the sweep,
 * refuse unusable output paths, build the plan, cut the shards, load the model, and then open
 * the outputs (output directory, checkpoint lock, journal, run history). */
#include "config.h"

#include <dirent.h>
#include <errno.h>
#include <libgen.h>
#include <limits.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/ns_build.h"
#include "common/ns_file.h"
#include "common/ns_sha256.h"
#include "common/ns_tmp.h"
#include "io/ns_nc_read.h"
#include "sweep/ns_sweep_prepare.h"

#define STOP_FILE "STOP"
#define HISTORY_FILE "history"

static int set_str(char **dst, const char *src, ns_err *err)
{
    char *c = strdup(src);
    if (!c)
        return ns_fail(err, NS_ERR_NOMEM, "out of memory");
    free(*dst);
    *dst = c;
    return NS_OK;
}

/* The output file must be creatable where it is asked for: not a directory, not the checkpoint
 * directory, a name short enough for its temporary sibling. Checked before any work (exit 2). */
static int check_output_path(const ns_sweep_config *cfg, ns_err *err)
{
    const char *out = cfg->output;
    if (ns_file_is_dir(out))
        return ns_fail(err, NS_ERR_INVALID, "output %s is a directory; give the NetCDF file's path "
                       "(e.g. %s/result.nc)", out, out);
    char a[PATH_MAX], b[PATH_MAX];
    if (strcmp(out, cfg->checkpoint_dir) == 0 ||
        (realpath(out, a) && realpath(cfg->checkpoint_dir, b) && strcmp(a, b) == 0))
        return ns_fail(err, NS_ERR_INVALID, "output %s is the checkpoint directory; choose another "
                       "output path or --checkpoint-dir", out);
    const char *base = strrchr(out, '/');
    base = base ? base + 1 : out;
    if (!*base)
        return ns_fail(err, NS_ERR_INVALID, "output %s names a directory, not a file", out);
    if (strlen(base) + 24 > NAME_MAX) /* its temporary is NAME.tmp.<pid> */
        return ns_fail(err, NS_ERR_INVALID, "output %s: file name too long (%zu bytes; at most %d)",
                       out, strlen(base), NAME_MAX - 24);
    if (strlen(out) + 24 >= PATH_MAX)
        return ns_fail(err, NS_ERR_INVALID, "output %s: path too long (%zu bytes)", out,
                       strlen(out));
    if (strlen(cfg->checkpoint_dir) + 32 >= PATH_MAX)
        return ns_fail(err, NS_ERR_INVALID, "checkpoint directory %s: path too long",
                       cfg->checkpoint_dir);
    return NS_OK;
}

/* Read and validate the sweep (diagnostics go to the user) and apply the overrides. */
static int load_sweep(sweep_ctx *c, ns_err *err)
{
    const ns_sweep_options *opt = c->opt;
    ns_sweep_diags diags = {0};
    ns_sweep_marks marks;
    memset(&marks, 0, sizeof marks);
    ns_assets_fetch fetch = {.allow = 1, .log = c->hooks->line, .log_user = c->hooks->user};
    int rc = ns_sweep_load_model(opt->sweep_path, opt->model, opt->model_pin, &fetch, 0, &c->cfg,
                                 &marks, &c->in, &diags, err);
    for (size_t i = 0; i < diags.n; i++)
        ns_sweep_say(c, "%s", diags.items[i].text);
    ns_sweep_diags_free(&diags);
    ns_sweep_marks_free(&marks);
    if (rc == NS_ERR_IO)
        rc = err->code = NS_ERR_INVALID; /* an unreadable sweep file is invalid input (exit 2) */
    NS_TRY(rc);
    if (!c->in.have_model || !c->in.have_corpus)
        return ns_fail(err, NS_ERR_INVALID, "sweep: model or corpus could not be resolved");
    if (opt->output)
        NS_TRY(set_str(&c->cfg.output, opt->output, err));
    if (opt->checkpoint_dir)
        NS_TRY(set_str(&c->cfg.checkpoint_dir, opt->checkpoint_dir, err));
    c->mc = c->in.model_cfg;
    c->corpus_tokens = c->in.corpus.tokens.n;
    NS_TRY(check_output_path(&c->cfg, err));
    return ns_sweep_check_outputs(&c->cfg, &c->in, err);
}

/* Cut the shards' first L_fwd tokens out of the corpus. */
static int cut_tokens(sweep_ctx *c, ns_err *err)
{
    const ns_sweep_config *cfg = &c->cfg;
    size_t Lf = c->plan.derived.L_fwd;
    c->tokens = malloc(cfg->shard_count * Lf * sizeof *c->tokens + 1);
    if (!c->tokens)
        return ns_fail(err, NS_ERR_NOMEM, "out of memory (%zu shards)", cfg->shard_count);
    for (size_t k = 0; k < cfg->shard_count; k++) {
        const int32_t *ids;
        NS_TRY(ns_corpus_shard(&c->in.corpus, cfg->L_max, cfg->shard_first, cfg->shard_stride, k,
                               &ids, err));
        memcpy(c->tokens + k * Lf, ids, Lf * sizeof *ids);
    }
    return NS_OK;
}

int ns_sweep_prepare(sweep_ctx *c, ns_err *err)
{
    NS_TRY(load_sweep(c, err));
    ns_grid g;
    ns_sweep_config_grid(&c->cfg, &g);
    NS_TRY(ns_plan_init(&c->plan, &g, &c->mc, err));
    c->have_plan = 1;
    if (NS_SWEEP_RESULT_HEAD + c->plan.payload > (size_t)INT32_MAX)
        return ns_fail(err, NS_ERR_INVALID, "sweep: one shard's results (%zu values) exceed what "
                       "one MPI message can carry; reduce the grid", c->plan.payload);
    NS_TRY(cut_tokens(c, err));
    NS_TRY(ns_results_init(&c->res, c->cfg.shard_count, err));
    c->have_res = 1;
    /* The model validation loaded (and so fully checked) before anything is written. */
    NS_TRY(ns_sweep_inputs_take_model(&c->in, &c->model, err));
    return NS_OK;
}

/* ---- outputs ------------------------------------------------------------------------------ */

/* Directories this run created (so a setup failure can remove exactly those, and nothing else). */
typedef struct created_dirs {
    char *paths[64];
    size_t n;
} created_dirs;

static void created_dirs_undo(created_dirs *cd)
{
    while (cd->n > 0) {
        cd->n--;
        rmdir(cd->paths[cd->n]);
        free(cd->paths[cd->n]);
    }
}

static void created_dirs_keep(created_dirs *cd)
{
    for (size_t i = 0; i < cd->n; i++)
        free(cd->paths[i]);
    cd->n = 0;
}

/* mkdir -p, recording every directory that mkdir really created. */
static int mkdirs_tracked(const char *path, created_dirs *cd, ns_err *err)
{
    char *copy = strdup(path);
    if (!copy)
        return ns_fail(err, NS_ERR_NOMEM, "out of memory");
    int rc = NS_OK;
    size_t n = strlen(copy);
    for (size_t i = 1; i <= n && rc == NS_OK; i++) {
        if (copy[i] != '/' && copy[i] != '\0')
            continue;
        char saved = copy[i];
        copy[i] = '\0';
        if (mkdir(copy, 0755) == 0) {
            if (cd->n < sizeof cd->paths / sizeof cd->paths[0] && (cd->paths[cd->n] = strdup(copy)))
                cd->n++;
        } else if (errno != EEXIST) {
            rc = ns_fail(err, NS_ERR_IO, "mkdir %s: %s", copy, strerror(errno));
        }
        copy[i] = saved;
    }
    free(copy);
    struct stat st;
    if (rc == NS_OK && (stat(path, &st) != 0 || !S_ISDIR(st.st_mode)))
        rc = ns_fail(err, NS_ERR_IO, "%s: exists and is not a directory", path);
    return rc;
}

/* The output's directory, created if needed and writable; failures are input errors (exit 2). */
static int make_output_dir(const char *path, created_dirs *cd, ns_err *err)
{
    char *copy = strdup(path);
    if (!copy)
        return ns_fail(err, NS_ERR_NOMEM, "out of memory");
    const char *dir = dirname(copy);
    int rc = mkdirs_tracked(dir, cd, err);
    if (rc != NS_OK && rc != NS_ERR_NOMEM) {
        char why[NS_ERR_MSG_MAX];
        snprintf(why, sizeof why, "%s", err->msg);
        rc = ns_fail(err, NS_ERR_INVALID, "output %s: cannot create directory %s (%s)", path, dir,
                     why);
    } else if (rc == NS_OK && access(dir, W_OK | X_OK) != 0) {
        rc = ns_fail(err, NS_ERR_INVALID, "output %s: directory %s is not writable: %s", path, dir,
                     strerror(errno));
    }
    free(copy);
    return rc;
}

static int journal_record(void *user, uint64_t task, const void *payload, size_t len,
                          uint64_t offset, ns_err *err)
{
    sweep_ctx *c = user;
    (void)payload, (void)len;
    if (task >= c->res.n_shards || ns_results_has(&c->res, task))
        return NS_OK; /* cannot happen for this sweep's journal: a duplicate changes nothing */
    NS_TRY(ns_results_set(&c->res, task, offset, err));
    c->from_journal++;
    return NS_OK;
}

/* One temporary of the output removed at the start (common/ns_tmp: OUTPUT.tmp.<pid> of a
 * process that no longer exists on this host). */
static void said_removed(void *user, const char *path)
{
    ns_sweep_say(user, "normsweep: removed %s, left by a run killed while writing the output",
                 path);
}

/* Append this segment's line to CHECKPOINT_DIR/history and keep the whole history. The line
 * ends with the segment number S the workers' journal parts of this segment carry
 * (journal.s<S>.r<R>.nsj). */
static int record_history(sweep_ctx *c, ns_err *err)
{
    char *path = ns_path_join(c->cfg.checkpoint_dir, HISTORY_FILE), host[256] = "unknown";
    if (!path)
        return ns_fail(err, NS_ERR_NOMEM, "out of memory");
    gethostname(host, sizeof host - 1);
    char *cwd = getcwd(NULL, 0); /* where the command ran: its relative paths are from there */
    char *line = ns_str_printf("%s normsweep %s (git %s): %s on %d rank%s (host %s, in %s%s%s)%s; "
                               "journal segment %u\n",
                               c->start_time, PACKAGE_VERSION, ns_build_git_short(),
                               c->opt->command_line ? c->opt->command_line : "run",
                               c->size, c->size == 1 ? "" : "s", host, cwd ? cwd : "?",
                               c->opt->segment_info ? ", " : "",
                               c->opt->segment_info ? c->opt->segment_info : "",
                               c->opt->resume ? " [resumed]" : "",
                               ns_journal_next_segment(c->journal));
    FILE *f = line ? fopen(path, "a") : NULL;
    int rc = NS_OK;
    if (!f || fputs(line, f) == EOF || fflush(f) != 0 || fsync(fileno(f)) != 0)
        rc = line ? ns_fail(err, NS_ERR_IO, "write %s: %s", path, strerror(errno))
                  : ns_fail(err, NS_ERR_NOMEM, "out of memory");
    if (f)
        fclose(f);
    free(line);
    free(cwd);
    size_t len;
    if (rc == NS_OK)
        rc = ns_file_read_all(path, 0, &c->history, &len, err);
    free(path);
    return rc;
}

/* Open the journal (its results into c->res), reporting what the scan found. */
static int open_journal(sweep_ctx *c, ns_err *err)
{
    char hex[NS_SHA256_HEX_LEN + 1];
    const ns_sweep_inputs *in = &c->in;
    NS_TRY(ns_journal_sweep_hash(c->cfg.yaml_text, in->model_ref.sha256, in->tokenizer_ref.sha256,
                                 in->corpus_ref.sha256, c->plan.payload, hex, err));
    ns_journal_scan scan;
    NS_TRY(ns_journal_open(c->cfg.checkpoint_dir, hex, c->plan.payload * sizeof(double),
                           c->opt->resume, journal_record, c, &c->journal, &scan, err));
    if (scan.n_damaged) {
        int in_part = strcmp(scan.first_damaged_file, ns_journal_path(c->journal)) != 0;
        ns_sweep_say(c, "normsweep: %s: %zu damaged record%s skipped (the first at byte %llu%s%s); "
                     "their tasks are computed again", ns_journal_path(c->journal),
                     scan.n_damaged, scan.n_damaged == 1 ? "" : "s",
                     (unsigned long long)scan.first_damaged, in_part ? " of " : "",
                     in_part ? scan.first_damaged_file : "");
    }
    if (scan.torn_bytes)
        ns_sweep_say(c, "normsweep: %s: cut off an incomplete last record (%zu bytes)",
                     ns_journal_path(c->journal), scan.torn_bytes);
    if (scan.torn_parts)
        ns_sweep_say(c, "normsweep: %zu of the %zu part files of %s end in an incomplete record "
                     "(left as they are: no later run writes to them)", scan.torn_parts,
                     scan.n_parts, ns_journal_path(c->journal));
    return NS_OK;
}

/* A --resume with nothing to do: the journal holds every task and the output is the file written
 * from it -- its history attribute is the checkpoint directory's history as it stands (no run
 * segment has started since it was written) and its compression is the one asked for now. A
 * missing, unreadable or other file (another run's, one written before a later segment, a
 * compressed one when --uncompressed is asked) is written again. The data are not re-read:
 * `normsweep verify` checks them against the journal. */
static int output_is_current(const sweep_ctx *c)
{
    if (!c->opt->resume || c->from_journal < c->res.n_shards || !ns_file_is_regular(c->cfg.output))
        return 0;
    char *path = ns_path_join(c->cfg.checkpoint_dir, HISTORY_FILE), *hist = NULL;
    size_t len = 0;
    ns_err e;
    ns_nc_info info = {0};
    int same = path && ns_file_read_all(path, 0, &hist, &len, &e) == NS_OK &&
               ns_nc_info_read(c->cfg.output, &info, &e) == NS_OK;
    if (same) {
        const char *h = ns_nc_info_text(&info, "history");
        const char *z = ns_nc_info_text(&info, "compression");
        same = h && z && strcmp(h, hist) == 0 &&
               (strcmp(z, "none") == 0) == (c->opt->uncompressed != 0);
    }
    ns_nc_info_free(&info);
    free(hist);
    free(path);
    return same;
}

int ns_sweep_open_outputs(sweep_ctx *c, ns_err *err)
{
    created_dirs cd = {.n = 0};
    const char *ckpt = c->cfg.checkpoint_dir;
    char *jpath = ns_path_join(ckpt, NS_JOURNAL_FILE), *stop = ns_path_join(ckpt, STOP_FILE);
    int rc = jpath && stop ? NS_OK : ns_fail(err, NS_ERR_NOMEM, "out of memory");
    int had_journal = jpath && ns_file_exists(jpath);
    if (rc == NS_OK && ns_sweep_stop_requested(c))
        rc = ns_fail(err, NS_ERR_INTERRUPTED, "interrupted before the sweep started; nothing was "
                     "written");
    if (rc == NS_OK && had_journal && !c->opt->resume)
        rc = ns_fail(err, NS_ERR_INVALID, "%s exists: pass --resume to continue that sweep, or "
                     "remove it (or choose another --checkpoint-dir) to start afresh", jpath);
    if (rc == NS_OK)
        rc = make_output_dir(c->cfg.output, &cd, err);
    if (rc == NS_OK && (rc = mkdirs_tracked(ckpt, &cd, err)) != NS_OK && rc != NS_ERR_NOMEM)
        rc = err->code = NS_ERR_INVALID; /* an unusable --checkpoint-dir: input (exit 2) */
    if (rc == NS_OK)
        rc = ns_lock_acquire(ckpt, c->opt->command_line ? c->opt->command_line : "normsweep run",
                             &c->lock, err);
    if (rc == NS_OK)
        rc = open_journal(c, err);
    if (rc == NS_OK && output_is_current(c)) {
        c->complete = 1; /* nothing written: no history line, the output left as it is */
        created_dirs_keep(&cd);
        free(jpath);
        free(stop);
        return NS_OK;
    }
    /* the output's own lock last: a run refused before it leaves the output's directory as it
     * was (not even its time is touched) */
    if (rc == NS_OK)
        rc = ns_lock_acquire_output(c->cfg.output, c->opt->command_line ? c->opt->command_line
                                                                        : "normsweep run",
                                    &c->out_lock, err);
    if (rc == NS_ERR_IO)
        rc = err->code = NS_ERR_INVALID;
    if (rc == NS_OK && unlink(stop) == 0)
        ns_sweep_say(c, "normsweep: removed %s (the stop request of an earlier run segment)", stop);
    if (rc == NS_OK)
        rc = record_history(c, err);
    if (rc != NS_OK) {
        ns_journal_close(c->journal);
        c->journal = NULL;
        if (jpath && !had_journal && c->lock)
            unlink(jpath); /* a journal this run started */
        ns_lock_abandon(c->out_lock);
        c->out_lock = NULL;
        ns_lock_abandon(c->lock);
        c->lock = NULL;
        created_dirs_undo(&cd);
    } else {
        created_dirs_keep(&cd);
        ns_tmp_remove_stale(c->cfg.output, said_removed, c);
    }
    free(jpath);
    free(stop);
    return rc;
}

void ns_sweep_close_outputs(sweep_ctx *c)
{
    ns_journal_close(c->journal);
    c->journal = NULL;
    if (c->finished)
        ns_lock_drop(c->lock); /* nothing left to protect: no lock file stays behind */
    else
        ns_lock_release(c->lock); /* a stopped or failed run: the record names its last holder */
    c->lock = NULL;
    ns_lock_drop(c->out_lock); /* the output is written (or the run stopped): OUTPUT.lock goes */
    c->out_lock = NULL;
}

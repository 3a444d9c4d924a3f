/* ns_verify_lean: a lean archive's journal recomputed from the model (see ns_verify_lean.h). */
#include "archive/ns_verify_lean.h"

#include <stdlib.h>
#include <sys/statvfs.h>

#include "common/ns_file.h"
#include "rows/ns_rows.h"
#include "common/ns_progress.h"

/* Bytes a journal record adds to its payload (head and digest), rounded up; and the slack the
 * file system keeps beside the journal. */
#define RECORD_OVERHEAD 128u
#define FREE_SLACK (64u << 20)

/* Whether M records of P doubles fit dir's free space: a FAIL line when not. */
static int fits(ns_vreport *v, const char *dir, size_t M, size_t P)
{
    struct statvfs fs;
    unsigned long long need = (unsigned long long)M * (P * sizeof(double) + RECORD_OVERHEAD);
    if (statvfs(dir, &fs) != 0)
        return 1; /* unknown: the appends will say so */
    unsigned long long avail = (unsigned long long)fs.f_bavail * fs.f_frsize;
    if (need + FREE_SLACK <= avail)
        return 1;
    ns_vreport_line(v, "FAIL", "sizes: recomputing the %zu tasks of this lean archive needs a "
                    "journal of %llu bytes beside the extraction, which has %llu free (TMPDIR "
                    "chooses another place)", M, need, avail);
    return 0;
}

int ns_verify_lean_journal(ns_vreport *v, const char *dir, const ns_sweep_config *cfg,
                           const ns_plan *plan, const ns_model *model,
                           const ns_corpus *corpus, const char *hash, ns_journal **journal,
                           ns_results *res, int *ok, ns_err *err)
{
    const ns_verify_options *o = v->o;
    size_t M = cfg->shard_count, P = plan->payload;
    *journal = NULL;
    *ok = fits(v, dir, M, P);
    if (!*ok)
        return NS_OK;
    char *jdir = ns_path_join(dir, "recomputed");
    double *buf = malloc((P ? P : 1) * sizeof *buf);
    ns_rows *rows = NULL;
    int rc = jdir && buf ? NS_OK : ns_fail(err, NS_ERR_NOMEM, "out of memory (%zu values)", P);
    if (rc == NS_OK)
        rc = ns_file_mkdirs(jdir, err);
    if (rc == NS_OK)
        rc = ns_journal_open(jdir, hash, P * sizeof(double), 0, NULL, NULL, journal, NULL, err);
    if (rc == NS_OK)
        rc = ns_rows_new(plan, model, NS_KERNEL_FAST, 0, &rows, err);
    ns_progress pr;
    ns_progress_init(&pr, o->hooks.progress, o->hooks.user, o->hooks.progress_live, M, 0);
    for (size_t k = 0; rc == NS_OK && k < M; k++) {
        const int32_t *ids;
        uint64_t at;
        if (o->hooks.stop && *o->hooks.stop) { /* a signal: the caller removes the extraction directory */
            rc = ns_fail(err, NS_ERR_INTERRUPTED, "interrupted after %zu of the %zu tasks of "
                         "this lean archive; the verification did not finish (its extraction "
                         "directory is removed)", k, M);
            break;
        }
        if ((rc = ns_corpus_shard(corpus, cfg->L_max, cfg->shard_first, cfg->shard_stride, k,
                                  &ids, err)) == NS_OK &&
            (rc = ns_rows_run(rows, k, ids, NULL, buf, err)) == NS_OK &&
            (rc = ns_journal_append(*journal, k, buf, NULL, &at, err)) == NS_OK)
            rc = ns_results_set(res, k, at, err);
        ns_progress_update(&pr, k + 1);
    }
    if (rc == NS_OK) {
        ns_progress_finish(&pr);
        char took[32];
        ns_progress_fmt_duration(took, sizeof took, ns_progress_now() - pr.t_start);
        ns_vreport_line(v, "INFO", "journal: the archive is lean (no journal): all %zu tasks "
                        "recomputed from the model on this process in %s", M, took);
    }
    ns_rows_free(rows);
    free(buf);
    free(jdir);
    return rc;
}

/* ns_sweep_reduce: the end of a complete sweep: every rank reduces a contiguous share of the
 * slices (reading its shards' payloads from the journal), the results are gathered on rank 0 in
 * slice order -- so the file does not depend on how many ranks shared the work -- and rank 0
 * writes the NetCDF file and the run summary. When a rank cannot read the journal (a checkpoint
 * directory not shared between nodes: ns_sweep_share.c), rank 0 reduces every slice itself. */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/ns_boot.h"
#include "analysis/ns_boot_shard.h"
#include "analysis/ns_ks.h"
#include "analysis/ns_reduce.h"
#include "analysis/ns_topn.h"
#include "common/ns_blas.h"
#include "io/ns_nc_results.h"
#include "common/ns_progress.h"
#include "common/ns_sys.h"
#include "common/ns_time.h"
#include "sweep/ns_sweep_boot.h"
#include "sweep/ns_sweep_reduce.h"
#include "sweep/ns_sweep_share.h"

/* Rank 0's result store on every rank (offsets of every shard's payload, forward counts). */
static int share_results(sweep_ctx *c, ns_err *err)
{
    size_t n = c->cfg.shard_count;
    if (c->rank != 0) {
        NS_TRY(ns_results_init(&c->res, n, err));
        c->have_res = 1;
    }
    MPI_TRY(MPI_Bcast(c->res.offset, (int)n, MPI_UINT64_T, 0, c->comm), "broadcast offsets");
    MPI_TRY(MPI_Bcast(c->res.forward_count, (int)n, MPI_INT32_T, 0, c->comm), "broadcast counts");
    c->res.n_done = n;
    return NS_OK;
}

/* Slices [first, first + count) of rank r among P ranks. */
static void share_of(size_t nsl, int r, int P, size_t *first, size_t *count)
{
    size_t end; /* the same shares as ns_sweep_spread's */
    ns_boot_shard_share_of(nsl, (size_t)r, (size_t)P, first, &end);
    *count = end - *first;
}

/* Gather each rank's `per` doubles per slice into all (rank 0) in slice order. Rank 0's own share
 * is already in place at the start of all (it reduced into it), so it sends nothing. */
static int gather(sweep_ctx *c, int P, size_t nsl, size_t per, const double *mine, double *all,
                  ns_err *err)
{
    int *counts = NULL, *displs = NULL;
    if (c->rank == 0) {
        counts = malloc((size_t)c->size * sizeof *counts);
        displs = malloc((size_t)c->size * sizeof *displs);
        if (!counts || !displs) {
            free(counts), free(displs);
            return ns_fail(err, NS_ERR_NOMEM, "out of memory");
        }
        for (int r = 0; r < c->size; r++) {
            size_t f, n;
            share_of(nsl, r, P, &f, &n);
            counts[r] = r < P ? (int)(n * per) : 0;
            displs[r] = (int)(f * per);
        }
    }
    size_t f, n;
    share_of(nsl, c->rank, P, &f, &n);
    int mine_n = c->rank < P ? (int)(n * per) : 0;
    int rc = MPI_Gatherv(c->rank == 0 ? MPI_IN_PLACE : mine, mine_n, MPI_DOUBLE, all, counts,
                         displs, MPI_DOUBLE, 0, c->comm);
    free(counts);
    free(displs);
    return rc == MPI_SUCCESS ? NS_OK : ns_sweep_mpi_fail(err, rc, "gather the reduction");
}

/* This rank's share of slices [first, first + count), in the spread's rounds: each round reduces
 * a few slices (their blocks into blocks) and moves their T parts' pieces to the ranks that own
 * the units of work that read them (ns_sweep_spread); every rank takes part in every round. */
static int reduce_rounds(sweep_ctx *c, ns_journal *j, size_t first, double *res, double *smp,
                         ns_sweep_spread *sp, double *blocks, int rc, ns_err *err)
{
    int worst = rc, agreed = 0; /* *sp is set up on every rank */
    MPI_TRY(MPI_Allreduce(&worst, &agreed, 1, MPI_INT, MPI_MAX, c->comm), "agree");
    if (agreed != NS_OK)
        return rc != NS_OK ? rc : ns_fail(err, agreed, "the reduction failed on another rank");
    const ns_plan *p = &c->plan;
    size_t total = p->derived.slice.total;
    size_t stotal = ns_grid_slice_samples(&p->derived, c->cfg.shard_count * p->g.rows);
    size_t rounds = ns_sweep_spread_rounds(sp);
    for (size_t q = 0; q < rounds; q++) {
        size_t f, n;
        ns_sweep_spread_slices(sp, (size_t)c->rank, q, &f, &n);
        if (rc == NS_OK && n)
            rc = ns_results_reduce(&c->res, p, j, c->cfg.ks_alpha, f, n, res + (f - first) * total,
                                   smp ? smp + (f - first) * stotal : NULL, blocks, err);
        worst = rc;
        MPI_TRY(MPI_Allreduce(&worst, &agreed, 1, MPI_INT, MPI_MAX, c->comm), "agree");
        if (agreed != NS_OK)
            return rc != NS_OK ? rc : ns_fail(err, agreed, "the reduction failed on another rank");
        rc = ns_sweep_spread_round(sp, q, blocks, err);
        if (rc != NS_OK)
            return rc;
    }
    return rc;
}

/* Reduce this rank's share; *P receives how many ranks share the work. Rank 0 reduces its share
 * (the first slices) straight into *res and *smp sized for every slice -- the buffers the gather
 * fills and the writer reads -- so its share is neither held twice nor copied (1.5 GB at GPT-2 XL's
 * full grid when it reduces alone); the other ranks' buffers hold their share only. When the
 * intervals are computed (*sp set up), the bootstrap's blocks go in rounds to the ranks that own
 * the units that read them (ns_sweep_spread), so no rank holds them all. */
static int reduce_share(sweep_ctx *c, int *P, double **res, double **smp, ns_sweep_spread *sp,
                        int *have_sp, ns_err *err)
{
    const ns_plan *p = &c->plan;
    size_t S = c->cfg.shard_count * p->g.rows, nsl = p->derived.nslices;
    size_t total = p->derived.slice.total, stotal = ns_grid_slice_samples(&p->derived, S);
    ns_journal *j = c->journal;
    int rc = ns_sweep_attach_journal(c, &j, err); /* fails only on rank 0 (or in MPI) */
    int not_ok = j ? c->size : c->rank, first_not_ok = c->size; /* the first rank that cannot */
    MPI_TRY(MPI_Allreduce(&not_ok, &first_not_ok, 1, MPI_INT, MPI_MIN, c->comm),
            "agree on the journal");
    *P = first_not_ok == c->size ? c->size : 1;
    if (first_not_ok < c->size)
        ns_sweep_say(c, "normsweep: rank %d does not see this run's checkpoint directory %s (no "
                     "readable journal, another run's lock record, or other records at this run's "
                     "offsets: a directory local to its node?): rank 0 reduces every slice itself",
                     first_not_ok, c->cfg.checkpoint_dir);
    if ((size_t)*P > nsl)
        *P = (int)nsl;
    size_t first, count;
    share_of(nsl, c->rank, *P, &first, &count);
    if (c->rank >= *P)
        count = 0;
    size_t held = c->rank == 0 ? nsl : count; /* slices this rank's buffers hold */
    size_t btotal = ns_results_boot_size(p, c->cfg.shard_count);
    int want_boot = ns_results_boot_wanted(p, c->cfg.shard_count, (size_t)c->size, (size_t)*P,
                                           c->opt->boot_max_bytes);
    double *blocks = NULL;
    if (rc == NS_OK) {
        *res = malloc((held * total > 0 ? held * total : 1) * sizeof **res);
        *smp = c->cfg.keep_samples ? malloc((held * stotal > 0 ? held * stotal : 1) * sizeof **smp)
                                   : NULL;
        if (!*res || (c->cfg.keep_samples && !*smp))
            rc = ns_fail(err, NS_ERR_NOMEM, "reduction: out of memory (%zu slices)", held);
    }
    if (rc == NS_OK && want_boot) {
        rc = ns_sweep_spread_init(sp, c->comm, p, c->cfg.ks_alpha, c->cfg.shard_count,
                                  c->cfg.bootstrap_resamples, (size_t)*P,
                                  c->opt->boot_max_bytes, err);
        *have_sp = rc == NS_OK;
        blocks = rc == NS_OK ? malloc((sp->round * btotal > 0 ? sp->round * btotal : 1) *
                                      sizeof *blocks) : NULL;
        if (rc == NS_OK && !blocks)
            rc = ns_fail(err, NS_ERR_NOMEM, "reduction: out of memory (%zu slices' per-shard "
                         "values)", sp->round);
    }
    /* every rank decides alike: on the plan and the agreed rank counts */
    if (want_boot)
        rc = reduce_rounds(c, j, first, *res, *smp, sp, blocks, rc, err);
    else if (rc == NS_OK && count)
        rc = ns_results_reduce(&c->res, p, j, c->cfg.ks_alpha, first, count, *res, *smp, NULL,
                               err);
    free(blocks);
    if (c->rank != 0)
        ns_journal_close(j);
    int worst = rc, agreed = 0;
    MPI_TRY(MPI_Allreduce(&worst, &agreed, 1, MPI_INT, MPI_MAX, c->comm), "agree");
    if (agreed != NS_OK && rc == NS_OK)
        return ns_fail(err, agreed, "the reduction failed on another rank");
    return rc;
}

/* Append a printf-formatted line to the summary. */
static void add(char *buf, size_t size, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static void add(char *buf, size_t size, const char *fmt, ...)
{
    size_t used = strlen(buf);
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf + used, size - used, fmt, ap);
    va_end(ap);
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* The median of v[0..n) (sorted here): the mean of the two middle values for an even n, as
 * numpy's median and the report (postprocess/normsweep_report) compute it. */
static double median_of(double *v, size_t n)
{
    qsort(v, n, sizeof *v, cmp_double);
    return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

/* The run summary: bound findings, and n_crit of the paper's test per L at T = 1 (or the T
 * nearest 1) beside the paper's "fewer than 6 % of the tokens": the median over the heads of
 * n_crit / L, a head where no N of the grid passes counted as above every N -- the rule of the
 * report's headline (docs/STATISTICS.md; tests/summary_report.sh compares the two). A warning
 * when a cell's sample is too small for its KS test (docs/STATISTICS.md, the same rule as the
 * report's): c(alpha) sqrt(2/n) > 0.5, c(alpha) = sqrt(-ln(alpha/2)/2). */
static void summarize(const sweep_ctx *c, const double *all, char *buf, size_t size)
{
    const ns_plan *p = &c->plan;
    const ns_grid *g = &p->g;
    size_t nsl = p->derived.nslices, total = p->derived.slice.total;
    double sums[NS_C_COUNT] = {0};
    ns_slice_layout sl;
    size_t t1 = 0;
    for (size_t t = 1; t < g->nT; t++)
        if (fabs(log(g->T[t])) < fabs(log(g->T[t1])))
            t1 = t;
    buf[0] = '\0';
    for (size_t k = 0; k < nsl; k++) {
        size_t li, hi, ni, Li;
        ns_slice_shape sh;
        ns_plan_slice(p, k, c->cfg.ks_alpha, &li, &hi, &ni, &Li, &sh);
        ns_slice_layout_init(&sl, &sh);
        for (int q = 0; q < NS_C_COUNT; q++)
            for (size_t i = 0;
                 i < ns_count_cells(ns_count_info_of((ns_count_id)q)->dims, g->nT, g->nN, g->neps);
                 i++)
                sums[q] += all[k * total + sl.count[q] + i];
    }
    add(buf, size, "findings: Theorem 1 violated in %.0f of %.0f row checks (expected 0)%s; "
        "Lemma 2's bound in %.0f of %.0f (expected 0)%s; the paper's min(1/(4T), sqrt 2) by "
        "jac_exact in %.0f of %.0f (expected: softmax reaches 1/(2T))\n",
        sums[NS_C_THM1_VIOL], sums[NS_C_THM1_CHECKED], sums[NS_C_THM1_VIOL] > 0 ? " -- A FINDING" : "",
        sums[NS_C_LEMMA2_VIOL], sums[NS_C_LEMMA2_CHECKED],
        sums[NS_C_LEMMA2_VIOL] > 0 ? " -- A FINDING" : "", sums[NS_C_JAC_EXACT_VIOL],
        sums[NS_C_JAC_EXACT_CHECKED]);
    if (sums[NS_C_EMPTY_ROWS] > 0)
        add(buf, size, "empty rows: %.0f (row, T) pairs had mass 0 (every weight 0): their shape "
            "metrics are missing, counted in empty_rows\n", sums[NS_C_EMPTY_ROWS]);
    size_t heads = g->nlayers * g->nheads, n = c->cfg.shard_count * g->rows;
    double crit = sqrt(-log(c->cfg.ks_alpha / 2) / 2) * sqrt(2.0 / (double)n);
    if (crit > 0.5)
        add(buf, size, "warning: %zu rows per cell are too small for the KS test: it cannot "
            "reject a KS distance of 0.5 at alpha = %g (needs c(alpha) sqrt(2/n) <= 0.5); "
            "n_crit says nothing about the distances\n", n, c->cfg.ks_alpha);
    double *frac = malloc((heads ? heads : 1) * sizeof *frac);
    if (!frac)
        return;
    for (size_t ni = 0; ni < g->nnormalizers; ni++) {
        char label[64]; /* with entmax's alpha and sigmoid's b */
        ns_normalizer_label(&g->normalizers[ni], 0, label, sizeof label);
        add(buf, size, "n_crit_expected (the paper's KS test) at T = %g, %s, median over heads "
            "(no N passes: above every N):", g->T[t1], label);
        for (size_t Li = 0; Li < g->nL; Li++) {
            size_t found = 0, known = 0, largest = 0; /* keys: a sink-excluded view's are L - 1 */
            size_t keys = g->L[Li] - (g->normalizers[ni].view == NS_VIEW_SINK_EXCLUDED);
            for (size_t i = 0; i < g->nN; i++)
                if (g->N[i] < keys && g->N[i] > largest)
                    largest = g->N[i];
            for (size_t li = 0; li < g->nlayers; li++)
                for (size_t hi = 0; hi < g->nheads; hi++) {
                    size_t k = ((li * g->nheads + hi) * g->nnormalizers + ni) * g->nL + Li;
                    double nc = all[k * total + sl.n_crit[NS_KS_EXPECTED] + t1];
                    if (nc >= 1.0)
                        found++, frac[known++] = nc / (double)keys;
                    else if (nc == 0.0)
                        frac[known++] = INFINITY;
                }
            add(buf, size, " L=%zu: %zu/%zu heads", g->L[Li], found, heads);
            const char *ratio = keys < g->L[Li] ? "n_crit/(L-1)" : "n_crit/L";
            if (known) {
                double m = median_of(frac, known);
                if (isinf(m))
                    add(buf, size, " (median %s above %.1f %%)", ratio,
                        100.0 * (double)largest / (double)keys);
                else
                    add(buf, size, " (median %s %.1f %%)", ratio, 100.0 * m);
            }
            add(buf, size, Li + 1 < g->nL ? ";" : "");
        }
        add(buf, size, " [the paper: n_crit < 6 %% of L]\n");
    }
    free(frac);
}

/* Why the run writes no intervals: the bytes its largest rank would hold against the limit, and
 * from how many ranks on (all of them reducing) the grid gets them. */
static void say_no_boot(sweep_ctx *c, int reducing)
{
    const ns_plan *p = &c->plan;
    double cap = c->opt->boot_max_bytes > 0 ? c->opt->boot_max_bytes : NS_RESULTS_BOOT_MAX_BYTES;
    double need = ns_results_boot_rank_bytes(p, c->cfg.shard_count, (size_t)c->size,
                                             (size_t)reducing, cap);
    size_t from = ns_plan_boot_min_ranks(&p->g, c->cfg.shard_count, cap);
    char at[96] = "no rank count brings it under the limit", b_need[32], b_cap[32];
    if (from)
        snprintf(at, sizeof at, "they are written from %zu ranks on", from);
    ns_sys_format_bytes(need, b_need, sizeof b_need);
    ns_sys_format_bytes(cap, b_cap, sizeof b_cap);
    ns_sweep_say(c, "normsweep: no bootstrap intervals: their per-shard values need %s on the "
                 "largest of %d rank%s, above the %s limit per rank; %s (docs/STATISTICS.md)",
                 b_need, c->size, c->size == 1 ? "" : "s", b_cap, at);
}

int ns_sweep_reduce_write(sweep_ctx *c, ns_sweep_outcome *out, ns_err *err)
{
    double t0 = ns_progress_now();
    NS_TRY(share_results(c, err));
    int P = 1;
    double *mine = NULL, *mine_s = NULL; /* on rank 0: every slice, its own share first */
    ns_sweep_spread sp;
    int have_sp = 0;
    int rc = reduce_share(c, &P, &mine, &mine_s, &sp, &have_sp, err);
    const ns_plan *p = &c->plan;
    size_t S = c->cfg.shard_count * p->g.rows, nsl = p->derived.nslices;
    size_t total = p->derived.slice.total, stotal = ns_grid_slice_samples(&p->derived, S);
    double *all = c->rank == 0 ? mine : NULL, *all_s = c->rank == 0 ? mine_s : NULL;
    if (rc == NS_OK)
        rc = gather(c, P, nsl, total, mine, all, err);
    if (rc == NS_OK && c->cfg.keep_samples)
        rc = gather(c, P, nsl, stotal, mine_s, all_s, err);
    ns_intervals iv;
    int have_iv = 0;
    if (rc == NS_OK)
        ns_sweep_say(c, "reduce_seconds: %.6f (%d rank%s)", ns_progress_now() - t0, P,
                     P == 1 ? "" : "s");
    if (rc == NS_OK && have_sp) {
        double t1 = ns_progress_now();
        ns_sweep_boot sb = {c->comm, c->rank, c->size, p, c->cfg.shard_count, c->cfg.ks_alpha,
                            c->cfg.bootstrap_resamples};
        rc = ns_sweep_intervals(&sb, all, &sp, &iv, err);
        have_iv = rc == NS_OK && c->rank == 0;
        if (rc == NS_OK)
            ns_sweep_say(c, "bootstrap_seconds: %.6f (%zu resamples of %zu shards, %d rank%s)",
                         ns_progress_now() - t1, c->cfg.bootstrap_resamples, c->cfg.shard_count,
                         c->size, c->size == 1 ? "" : "s");
    } else if (rc == NS_OK) {
        say_no_boot(c, P);
    }
    if (rc == NS_OK && c->rank == 0) {
        char end_time[32], mpi_lib[MPI_MAX_LIBRARY_VERSION_STRING] = "", blas[NS_BLAS_ID_MAX];
        ns_blas_identity(blas, sizeof blas);
        int len = 0;
        ns_iso_now(end_time, sizeof end_time);
        MPI_Get_library_version(mpi_lib, &len);
        mpi_lib[strcspn(mpi_lib, "\n")] = '\0';
        int all_softmax = 1;
        for (size_t i = 0; i < p->g.nnormalizers; i++)
            all_softmax &= ns_topn_rank_is_T_free(&p->g.normalizers[i]); /* no view */
        ns_nc_attr mattrs[NS_MODEL_ATTRS];
        char mbuf[512];
        size_t nm = ns_sweep_model_attrs(&c->mc, mattrs, mbuf, sizeof mbuf);
        ns_provenance prov = {
            .kind = "sweep", .command_line = c->opt->command_line, .history = c->history,
            .model_attrs = mattrs, .n_model_attrs = nm,
            .institution = c->opt->institution, .start_time = c->start_time, .end_time = end_time,
            .model = &c->in.model_ref, .tokenizer = &c->in.tokenizer_ref,
            .corpus = &c->in.corpus_ref, .model_requested = c->cfg.model, .mpi_size = c->size,
            .mpi_library = mpi_lib, .blas = blas,
            .executable_sha256 = c->opt->executable_sha256,
            .sweep_file = c->cfg.source_path, .sweep_yaml = c->cfg.yaml_text,
            .strip_gutenberg = c->cfg.strip_gutenberg, .all_softmax_family = all_softmax,
        };
        ns_results_data d = {
            .grid = &p->g, .derived = &p->derived, .ks_alpha = c->cfg.ks_alpha,
            .n_shards = c->cfg.shard_count,
            .L_max = c->cfg.L_max, .shard_first = c->cfg.shard_first,
            .shard_stride = c->cfg.shard_stride, .corpus_tokens = c->corpus_tokens, .slices = all,
            .samples = all_s, .forward_count = c->res.forward_count,
            .uncompressed = c->opt->uncompressed, .intervals = have_iv ? &iv : NULL,
        };
        rc = ns_nc_results_write(c->cfg.output, &d, &prov, err);
        if (rc == NS_OK) {
            ns_sweep_say(c, "normsweep: wrote %s", c->cfg.output);
            summarize(c, all, out->summary, sizeof out->summary);
        }
    }
    if (have_iv)
        ns_intervals_free(&iv);
    free(mine);
    free(mine_s);
    if (have_sp)
        ns_sweep_spread_free(&sp);
    return rc;
}

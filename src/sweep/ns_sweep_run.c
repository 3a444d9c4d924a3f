/* ns_sweep_run: ns_sweep_run (declared in ns_sweep.h), the sweep's steps on every rank -- rank 0
 * prepares, the checked configuration, the model's shape and the shards' tokens are broadcast,
 * every rank maps the model (checking it is rank 0's file) and builds its rows stage, rank 0
 * opens the outputs, the task loop runs, and a complete sweep is reduced and written. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "common/ns_time.h"
#include "sweep/ns_sweep_ctx.h"
#include "sweep/ns_sweep_master.h"
#include "sweep/ns_sweep_prepare.h"
#include "sweep/ns_sweep_reduce.h"
#include "sweep/ns_sweep_share.h"
#include "sweep/ns_sweep_worker.h"

/* ---- the model file's identity ------------------------------------------------------------- */

/* Which files a rank mapped: rank 0 broadcasts its own, every other rank compares (so the weights
 * used are the ones whose SHA-256 the output and the journal record). */
typedef struct model_ident {
    ns_model_files_id id;
    char host[MPI_MAX_PROCESSOR_NAME + 1];
    char dir[4096];
} model_ident;

static int mapped_ident(const ns_model *m, const char *dir, model_ident *id, ns_err *err)
{
    memset(id, 0, sizeof *id);
    NS_TRY(ns_model_files_ident(m, &id->id, err));
    snprintf(id->dir, sizeof id->dir, "%s", dir);
    int len = 0;
    if (MPI_Get_processor_name(id->host, &len) != MPI_SUCCESS)
        id->host[0] = '\0';
    return NS_OK;
}

/* Other ranks: the files mapped must be rank 0's (devices and inodes on rank 0's node; sizes and
 * modification times everywhere, as inode numbers of a shared file system may differ by node). */
static int check_ident(const sweep_ctx *c, const model_ident *root, ns_err *err)
{
    model_ident mine;
    NS_TRY(mapped_ident(c->model, root->dir, &mine, err));
    int same_node = root->host[0] && strcmp(root->host, mine.host) == 0;
    if (mine.id.what != root->id.what || (same_node && mine.id.where != root->id.where))
        return ns_fail(err, NS_ERR_IO,
                       "%s changed during start-up (rank %d mapped another file than rank 0 "
                       "checked); nothing was written: run again", ns_model_weights_path(c->model),
                       c->rank);
    return NS_OK;
}

/* ---- setup shared by all ranks ------------------------------------------------------------- */

/* Every rank learns the worst status; a rank that was fine gets a message naming the step. */
static int agree(sweep_ctx *c, int rc, ns_err *err, const char *what)
{
    int all = 0;
    if (MPI_Allreduce(&rc, &all, 1, MPI_INT, MPI_MAX, c->comm) != MPI_SUCCESS)
        return ns_fail(err, NS_ERR_LIBRARY, "MPI allreduce failed");
    if (all != NS_OK && rc == NS_OK) {
        if (c->rank == 0)
            ns_fail(err, all, "%s failed on another rank", what);
        else
            err->code = all; /* only a rank that failed itself carries a message */
    }
    return all;
}

/* Rank 0's checked configuration, model shape and identity, and the tokens, to every rank. */
static int broadcast_setup(sweep_ctx *c, model_ident *ident, ns_err *err)
{
    void *packed = NULL;
    size_t len = 0;
    long long n = 0;
    if (c->rank == 0) {
        NS_TRY(ns_sweep_config_pack(&c->cfg, &packed, &len, err));
        n = (long long)len;
    }
    int rc = MPI_Bcast(&n, 1, MPI_LONG_LONG, 0, c->comm);
    if (rc == MPI_SUCCESS && c->rank != 0 && !(packed = malloc(n > 0 ? (size_t)n : 1)))
        rc = MPI_ERR_NO_MEM;
    if (rc == MPI_SUCCESS && n > INT32_MAX)
        rc = MPI_ERR_COUNT;
    if (rc == MPI_SUCCESS)
        rc = MPI_Bcast(packed, (int)n, MPI_BYTE, 0, c->comm);
    if (rc == MPI_SUCCESS)
        rc = MPI_Bcast(&c->mc, (int)sizeof c->mc, MPI_BYTE, 0, c->comm);
    if (rc == MPI_SUCCESS)
        rc = MPI_Bcast(ident, (int)sizeof *ident, MPI_BYTE, 0, c->comm);
    if (rc != MPI_SUCCESS) {
        free(packed);
        return ns_sweep_mpi_fail(err, rc, "broadcast the sweep");
    }
    int st = NS_OK;
    if (c->rank != 0) {
        st = ns_sweep_config_unpack(packed, (size_t)n, &c->cfg, err);
        ns_grid g;
        ns_sweep_config_grid(&c->cfg, &g);
        if (st == NS_OK && (st = ns_plan_init(&c->plan, &g, &c->mc, err)) == NS_OK)
            c->have_plan = 1;
        if (st == NS_OK &&
            !(c->tokens =
                  malloc(c->cfg.shard_count * c->plan.derived.L_fwd * sizeof *c->tokens + 1)))
            st = ns_fail(err, NS_ERR_NOMEM, "out of memory");
    }
    free(packed);
    NS_TRY(agree(c, st, err, "sweep setup"));
    size_t ntok = c->cfg.shard_count * c->plan.derived.L_fwd;
    if (ntok > (size_t)INT32_MAX)
        return ns_fail(err, NS_ERR_INVALID, "too many tokens to broadcast (%zu)", ntok);
    MPI_TRY(MPI_Bcast(c->tokens, (int)ntok, MPI_INT32_T, 0, c->comm), "broadcast the tokens");
    return NS_OK;
}

/* Every rank maps the model (ranks on a node share its pages) and builds its rows stage. */
static int load_everywhere(sweep_ctx *c, const model_ident *ident, ns_err *err)
{
    int rc = NS_OK;
    if (c->rank != 0) {
        rc = ns_model_load(ident->dir, &c->model, err);
        if (rc == NS_OK)
            rc = check_ident(c, ident, err);
    }
    if (rc == NS_OK)
        rc = ns_rows_new(&c->plan, c->model, NS_KERNEL_FAST, 0, &c->rows, err);
    if (rc == NS_OK) {
        c->buf = malloc((NS_SWEEP_RESULT_HEAD + c->plan.payload) * sizeof *c->buf);
        if (c->rank == 0)
            c->rbuf = malloc((NS_SWEEP_RESULT_HEAD + c->plan.payload) * sizeof *c->rbuf);
        if (!c->buf || (c->rank == 0 && !c->rbuf))
            rc = ns_fail(err, NS_ERR_NOMEM, "out of memory");
    }
    rc = agree(c, rc, err, "model load");
    if (rc == NS_ERR_INVALID || rc == NS_ERR_FORMAT || rc == NS_ERR_CHECKSUM)
        rc = NS_ERR_IO; /* rank 0 validated it: a runtime failure elsewhere (exit 1) */
    return rc;
}

static void ctx_free(sweep_ctx *c)
{
    ns_rows_free(c->rows);
    ns_model_free(c->model);
    if (c->have_plan)
        ns_plan_free(&c->plan);
    ns_sweep_config_free(&c->cfg);
    ns_sweep_inputs_free(&c->in);
    if (c->have_res)
        ns_results_free(&c->res);
    ns_sweep_close_outputs(c);
    ns_journal_close(c->part);
    free(c->tokens);
    free(c->buf);
    free(c->rbuf);
    free(c->history);
}

/* Rank 0's verdict to every rank (other ranks' err carries only the code). */
static int share_verdict(sweep_ctx *c, int rc, ns_err *err)
{
    int v = rc;
    if (MPI_Bcast(&v, 1, MPI_INT, 0, c->comm) != MPI_SUCCESS)
        return ns_fail(err, NS_ERR_LIBRARY, "MPI broadcast failed");
    if (c->rank != 0 && v != NS_OK)
        err->code = v;
    return v;
}

/* Rank 0's finding that the run is already complete (c->complete) to every rank; rank 0 says so
 * in out->summary and counts the run as finished. */
static int share_complete(sweep_ctx *c, ns_sweep_outcome *out, ns_err *err)
{
    int done = c->complete;
    MPI_TRY(MPI_Bcast(&done, 1, MPI_INT, 0, c->comm), "broadcast whether the run is complete");
    c->complete = done;
    if (done && c->rank == 0) {
        c->finished = 1;
        snprintf(out->summary, sizeof out->summary,
                 "normsweep: %s is already complete: the journal %s holds all %zu tasks and the "
                 "file was written from it (its history is the checkpoint directory's); nothing "
                 "to do, the file is left as it is (remove it to write it again)\n",
                 c->cfg.output, ns_journal_path(c->journal), c->res.n_shards);
    }
    return NS_OK;
}

int ns_sweep_run(MPI_Comm comm, const ns_sweep_options *opt, const ns_hooks *hooks,
                 ns_sweep_outcome *out, ns_err *err)
{
    sweep_ctx *c = calloc(1, sizeof *c);
    ns_err_clear(err);
    memset(out, 0, sizeof *out);
    if (!c)
        return ns_fail(err, NS_ERR_NOMEM, "out of memory");
    c->comm = comm;
    c->opt = opt;
    c->hooks = hooks;
    MPI_Comm_rank(comm, &c->rank);
    MPI_Comm_size(comm, &c->size);
    out->rank = c->rank;
    out->size = c->size;
    ns_iso_now(c->start_time, sizeof c->start_time);
    model_ident ident;
    memset(&ident, 0, sizeof ident);

    /* 1. Rank 0 reads, validates, resolves and loads; nothing is written before step 4. */
    int rc = NS_OK;
    if (c->rank == 0) {
        if (ns_sweep_stop_requested(c))
            rc = ns_fail(err, NS_ERR_INTERRUPTED,
                         "interrupted before the sweep started; nothing was written");
        if (rc == NS_OK)
            rc = ns_sweep_prepare(c, err);
        if (rc == NS_OK)
            rc = mapped_ident(c->model, c->in.model_ref.path, &ident, err);
    }
    rc = share_verdict(c, rc, err);
    /* 2., 3. The checked sweep and the tokens to every rank; every rank maps the model. */
    if (rc == NS_OK)
        rc = broadcast_setup(c, &ident, err);
    if (rc == NS_OK)
        rc = load_everywhere(c, &ident, err);
    /* 4. Rank 0 creates the outputs and opens the journal (loading its results); a worker that
     * sees the checkpoint directory creates its own part of the journal. */
    if (rc == NS_OK)
        rc = share_verdict(c, c->rank == 0 ? ns_sweep_open_outputs(c, err) : NS_OK, err);
    if (rc == NS_OK && (rc = share_complete(c, out, err)) == NS_OK && c->complete) {
        ctx_free(c); /* a --resume of a finished run: nothing to do, nothing written */
        free(c);
        return NS_OK;
    }
    if (rc == NS_OK)
        rc = ns_sweep_open_part(c, err);
    /* 5. The task loop. */
    if (rc == NS_OK) {
        rc = c->rank == 0 ? ns_sweep_master(c, err) : ns_sweep_worker(c, err);
        if (c->unresponsive) {
            out->unresponsive = 1; /* a collective would hang: leave without one */
            ctx_free(c);
            free(c);
            return rc;
        }
        int worst = rc;
        rc = share_verdict(c, worst, err);
        if (c->rank == 0)
            rc = worst;
    }
    /* 6. A complete sweep is reduced by every rank and written by rank 0. */
    if (rc == NS_OK)
        rc = ns_sweep_reduce_write(c, out, err);
    c->finished = rc == NS_OK;
    ctx_free(c);
    free(c);
    return rc;
}

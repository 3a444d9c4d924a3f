/* ns_sweep_share: which ranks see rank 0's checkpoint directory, and what they do with it. A rank
 * sees it when its own path of the directory holds the lock record this run's rank 0 wrote (host,
 * pid, start): a node-local directory of the same path, or another run's, does not. Such a worker
 * appends its results to its own part of the journal (ns_journal.h) and sends rank 0 only where
 * they lie; at the end such ranks read the journal (every part of it) for their share of the
 * reduction. A rank that does not see it sends its payloads, and rank 0 reduces alone. */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "sweep/ns_sweep_share.h"

/* Rank 0's lock record to every rank; *mine: 1 when this rank's directory holds it. */
static int same_directory(sweep_ctx *c, int *mine, ns_err *err)
{
    char own[1024] = "", rank0[1024] = "";
    if (c->rank == 0)
        (void)ns_lock_peek(c->cfg.checkpoint_dir, rank0, sizeof rank0);
    MPI_TRY(MPI_Bcast(rank0, (int)sizeof rank0, MPI_CHAR, 0, c->comm), "broadcast the lock record");
    *mine = c->rank == 0 || (rank0[0] && ns_lock_peek(c->cfg.checkpoint_dir, own, sizeof own) == 0 &&
                             strcmp(own, rank0) == 0);
    return NS_OK;
}

int ns_sweep_open_part(sweep_ctx *c, ns_err *err)
{
    struct {
        uint32_t segment;
        int parts; /* 0: rank 0 cannot check parts (out of memory): no worker keeps one */
        char hash[65];
    } s = {0, 0, ""};
    int sees = 0;
    ns_sweep_hold(c, "opened", 0);
    NS_TRY(same_directory(c, &sees, err));
    int *all = NULL; /* rank 0: per rank, whether it has a part rank 0 sees */
    if (c->rank == 0) {
        s.segment = ns_journal_next_segment(c->journal);
        memcpy(s.hash, ns_journal_hash(c->journal), sizeof s.hash);
        s.parts = (all = malloc((size_t)c->size * sizeof *all)) != NULL;
        if (!s.parts)
            ns_sweep_say(c, "normsweep: out of memory: every worker journals its results through "
                         "rank 0");
    }
    int rc = MPI_Bcast(&s, (int)sizeof s, MPI_BYTE, 0, c->comm);
    if (rc != MPI_SUCCESS) {
        free(all);
        return ns_sweep_mpi_fail(err, rc, "broadcast the run segment");
    }
    c->segment = s.segment;
    ns_err e; /* no part (say, the file exists: a stopped run's late start): send payloads */
    if (c->rank != 0 && sees && s.parts &&
        ns_journal_create_part(c->cfg.checkpoint_dir, s.hash, c->plan.payload * sizeof(double),
                               s.segment, (uint32_t)c->rank, &c->part, &e) != NS_OK)
        c->part = NULL;
    /* rank 0 must see each part where it looks for it: else (a directory that holds a copy of
     * the lock record), the worker removes its part and sends payloads */
    int have = c->part != NULL, keep = 0;
    if (s.parts) /* collective on every rank alike: s.parts came from rank 0 */
        rc = MPI_Gather(&have, 1, MPI_INT, all, 1, MPI_INT, 0, c->comm);
    for (int w = 1; s.parts && rc == MPI_SUCCESS && c->rank == 0 && w < c->size; w++)
        if (all[w] && ns_journal_check_part(c->journal, c->segment, (uint32_t)w, &e) != NS_OK) {
            ns_sweep_say(c, "normsweep: rank %d journals its results through rank 0 (%s)", w,
                         e.msg);
            all[w] = 0;
        }
    if (s.parts && rc == MPI_SUCCESS)
        rc = MPI_Scatter(all, 1, MPI_INT, &keep, 1, MPI_INT, 0, c->comm);
    free(all);
    if (rc != MPI_SUCCESS)
        return ns_sweep_mpi_fail(err, rc, "agree on the journal's parts");
    if (have && !keep) {
        char *path = strdup(ns_journal_path(c->part));
        ns_journal_close(c->part);
        c->part = NULL;
        if (path)
            (void)unlink(path);
        free(path);
    }
    return NS_OK;
}

int ns_sweep_attach_journal(sweep_ctx *c, ns_journal **j, ns_err *err)
{
    int sees = 0;
    NS_TRY(same_directory(c, &sees, err));
    const uint32_t *ids0 = NULL;
    unsigned long long n = c->rank == 0 ? ns_journal_parts(c->journal, &ids0) : 0;
    MPI_TRY(MPI_Bcast(&n, 1, MPI_UNSIGNED_LONG_LONG, 0, c->comm), "broadcast the journal's parts");
    if (n > INT32_MAX / 2)
        return ns_fail(err, NS_ERR_INVALID, "journal: too many parts to share (%llu)", n);
    uint32_t *ids = c->rank == 0 ? (uint32_t *)ids0 : malloc((n ? 2 * n : 1) * sizeof *ids);
    if (!ids && c->rank != 0)
        return ns_fail(err, NS_ERR_NOMEM, "out of memory (%llu journal parts)", n);
    int rc = MPI_Bcast(ids, (int)(2 * n), MPI_UINT32_T, 0, c->comm);
    if (rc != MPI_SUCCESS) {
        if (c->rank != 0)
            free(ids);
        return ns_sweep_mpi_fail(err, rc, "broadcast the journal's parts");
    }
    if (c->rank == 0)
        return ns_results_check(&c->res, *j, err);
    *j = NULL;
    ns_err e;
    if (sees && ns_journal_attach(c->cfg.checkpoint_dir, c->plan.payload * sizeof(double), ids,
                                  (size_t)n, j, &e) == NS_OK &&
        ns_results_check(&c->res, *j, &e) != NS_OK) {
        ns_journal_close(*j);
        *j = NULL;
    }
    free(ids);
    return NS_OK;
}

/* ns_hold: the test-only hold point of the long commands (run, train, train-grid) and of the
 * writers of a temporary (mkmodel, archive, verify, dump), so that a test
 * catches a run in progress deterministically, however fast the machine (docs/RELIABILITY.md,
 * "How the tests hold a run"). With NORMSWEEP_TEST_HOLD=POINT[:COUNT][@RANK] and
 * NORMSWEEP_TEST_HOLD_DIR=DIR in the environment, the process of rank RANK (default 0) that
 * reaches POINT with a count >= COUNT (default 0), the first time it does, writes DIR/held.RANK
 * and DIR/held ("PID RANK POINT COUNT", atomically) and waits there until DIR/release exists or a
 * stop signal has set the stop flag (at most NS_HOLD_MAX_SECONDS). Several SPECs separated by
 * commas, each naming another rank, hold several ranks at once (each its own point). One hold per
 * process. Points: "mpi-init"
 * (here: the stop handlers installed, before MPI_Init), those of ns_sweep_run ("opened",
 * "journal", "task", "ready") and ns_train_run ("step"), and "temp" (count 0): mkmodel, archive,
 * verify and dump, once their temporary (file or extraction directory) exists and before they
 * complete (the hooks of ns_mkmodel_opts, ns_run_archive_options, ns_verify_options and ns_dump_run). Without NORMSWEEP_TEST_HOLD
 * nothing is held and the commands pass no hook to the library. Not for users: not in --help nor
 * the man page. */
#ifndef NS_HOLD_H
#define NS_HOLD_H

#include <signal.h>

#include "common/ns_hooks.h"

#define NS_HOLD_MAX_SECONDS 300.0

typedef struct ns_hold {
    char point[32];         /* empty: no hold (the variable is not set) */
    unsigned long long count;
    int want_rank, rank;    /* the rank to hold; this process's (before MPI_Init: the launcher's) */
    const char *dir;
    int done;               /* held once already */
    volatile sig_atomic_t *stop;
} ns_hold;

/* Read the environment into *h (stop: the command's stop flag). 0 (also without the variable),
 * or -1 after printing "normsweep CMD: NORMSWEEP_TEST_HOLD...: ..." for a value that is not
 * POINT[:COUNT][@RANK] with a known point (counts and ranks of at most 9 digits), or without an
 * existing NORMSWEEP_TEST_HOLD_DIR. */
int ns_hold_init(ns_hold *h, const char *cmd, volatile sig_atomic_t *stop);

/* The launcher's rank of this process, read before MPI_Init from the launcher's environment
 * (Open MPI, MPICH/PMI, PMIx, Slurm), else 0: who speaks for a command before MPI starts. */
int ns_hold_launcher_rank(void);

/* The hook (user: an ns_hold): hold here when point, count and rank match (see above). */
void ns_hold_at(void *user, const char *point, unsigned long long count);

/* The hook to pass to the library: ns_hold_at when a hold is set, else NULL. */
ns_hold_fn ns_hold_hook(const ns_hold *h);

/* ns_hold_init, then the stage's hooks: hooks->stop = stop, hooks->hold = ns_hold_hook(h),
 * hooks->hold_user = h (the other fields are left as they are). */
int ns_hold_setup(ns_hold *h, const char *cmd, volatile sig_atomic_t *stop, ns_hooks *hooks);

#endif

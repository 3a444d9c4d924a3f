/* ns_lock: one writer per directory. An exclusive lock on DIR/lock held for as long as the
 * owner runs (an open-file-description lock: the kernel drops it when the process dies, however
 * it dies, so a killed run never blocks the next one); the file names its holder (host, pid,
 * start time, command) so a refused second runner can say who holds it. */
#ifndef NS_LOCK_H
#define NS_LOCK_H

#include "common/ns_error.h"

#define NS_LOCK_FILE "lock"

typedef struct ns_lock ns_lock;

/* Take the lock of dir (which must exist) and record the holder at once (see ns_lock_note;
 * what NULL records "starting"). A lock held by another process gives NS_ERR_INVALID: "DIR is in
 * use by another normsweep run (host H, pid P, since T: WHAT); ...". Release with
 * ns_lock_release or ns_lock_abandon, or ns_lock_drop (a sweep that finished: the file goes; a
 * newcomer that opened it meanwhile takes a new one). */
int ns_lock_acquire(const char *dir, const char *what, ns_lock **out, ns_err *err);

/* The lock of an output file: OUTPUT.lock beside it, held by the one run that may write OUTPUT
 * (two runs with different checkpoint directories but one output would otherwise overwrite each
 * other). Refused with NS_ERR_INVALID: "output OUTPUT is being written by another normsweep run
 * (host H, pid P, since T: WHAT); wait for it to end or choose another output". Give it up with
 * ns_lock_drop, which removes the lock file (a killed run leaves it unlocked: taken over). */
#define NS_LOCK_OUTPUT_SUFFIX ".lock"
int ns_lock_acquire_output(const char *output, const char *what, ns_lock **out, ns_err *err);
/* Remove the lock file while still holding it, then release; NULL is fine. */
void ns_lock_drop(ns_lock *lock);

/* Record this process as the holder: "host H, pid P, since T: WHAT" (what: the command line). */
int ns_lock_note(ns_lock *lock, const char *what, ns_err *err);

/* 1 when dir's lock is held -- seen from a new open of the lock file, so also a lock this process
 * took (holder, up to size bytes, receives the holder's record). */
int ns_lock_held_elsewhere(const char *dir, char *holder, size_t size);

/* The holder's record in dir's lock file, whether or not the lock is held (one line, without
 * its newline, into holder): 0, or -1 when there is no readable, non-empty record. Ranks on other
 * nodes compare it with rank 0's to tell that they see the same directory. */
int ns_lock_peek(const char *dir, char *holder, size_t size);

/* Release and free (the file stays, holding the last holder's record); NULL is fine. */
void ns_lock_release(ns_lock *lock);
/* Release, leaving no trace (a run that changed nothing): the lock file is removed when this
 * acquire created it (and its directory gets its times back), else its previous record and
 * times are restored. */
void ns_lock_abandon(ns_lock *lock);

#endif

/* ns_hooks: what a long library stage (the sweep, training, the model writers, archive, verify)
 * is given by the command that calls it: where its message lines and progress lines go, the flag
 * that asks it to stop, and the test-only hold. One type for every stage, so that every command
 * wires them the same way (only src/cli prints and handles signals). Every field may be NULL (or
 * 0): a stage given none says nothing, stops only when done and never holds. Which fields a stage
 * reads, and its hold points, are said where the stage takes its hooks. */
#ifndef NS_HOOKS_H
#define NS_HOOKS_H

#include <signal.h>
#include <stdarg.h>

#include "common/ns_progress.h"

/* Shows one message line (no newline). */
typedef void (*ns_line_fn)(void *user, const char *text);

/* The longest message line, with its NUL: a longer one is cut. */
#define NS_SAY_MAX 2048

/* Format a message line and hand it to line (nothing when line is NULL). The text ends at its
 * first newline: a line callback shows one line. Every stage says its lines through these. */
void ns_say(ns_line_fn line, void *user, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
void ns_vsay(ns_line_fn line, void *user, const char *fmt, va_list ap);

/* Test only (docs/RELIABILITY.md, "How the tests hold a run"; cli/ns_hold.h): called at a named
 * point with a count; may wait there until the test releases it. */
typedef void (*ns_hold_fn)(void *hold_user, const char *point, unsigned long long count);

typedef struct ns_hooks {
    ns_line_fn line;                   /* one message line (rank 0); NULL: silent */
    ns_progress_emit_fn progress;      /* progress lines (rank 0); NULL: none */
    int progress_live;                 /* redraw progress in place (a terminal) */
    void *user;                        /* for line and progress */
    const volatile sig_atomic_t *stop; /* non-zero: stop (checkpointed where the stage can) */
    ns_hold_fn hold;                   /* test only; NULL: none, the usual case */
    void *hold_user;
} ns_hooks;

#endif

/* ns_range: the one way a number a user typed (a command-line option, a key of a sweep or
 * training grid file) becomes a value. Each option or key declares its range once, beside it
 * (bounds, open or closed, and what they come from: the type that stores the value, or what the
 * value means); the text is parsed strictly and checked against it here, with one form of message:
 *   "NAME: expected an integer in 1..2147483647, got '0x10'"
 *   "NAME: 4294967297 is out of range 1..2147483647 (the output stores N as a 32-bit integer)"
 *   "NAME: 0 is out of range [1e-06, 1e+06]"
 * Strict: decimal digits only (no hexadecimal, no octal, no "_"), no surrounding space, no NaN or
 * infinity, no sign on an integer other than "-0", overflow and underflow are out of range. A
 * range never contains a value the program uses to mean "not given": an option's absence is
 * tracked apart from its value. */
#ifndef NS_RANGE_H
#define NS_RANGE_H

#include <stddef.h>
#include <stdint.h>

#include "common/ns_error.h"

#define NS_RANGE_MIN_OPEN 1u /* real: the lower bound itself is excluded */
#define NS_RANGE_MAX_OPEN 2u /* real: the upper bound itself is excluded */

typedef struct ns_range {
    int is_real;             /* 0: an unsigned integer in [umin, umax]; 1: a real in [min, max] */
    uint64_t umin, umax;
    double min, max;
    unsigned flags;          /* NS_RANGE_MIN_OPEN, NS_RANGE_MAX_OPEN (reals only) */
    const char *why;         /* what the bounds come from, shown after the range; or NULL */
} ns_range;

#define NS_RANGE_INT(lo, hi, why) {0, (lo), (hi), 0.0, 0.0, 0u, (why)}
#define NS_RANGE_REAL(lo, hi, flags, why) {1, 0, 0, (lo), (hi), (flags), (why)}

/* Largest values of the types outputs store numbers in. */
#define NS_RANGE_INT32_MAX 2147483647ull
#define NS_RANGE_INT64_MAX 9223372036854775807ull

/* Parse text as an integer of r (an integer range): NS_OK and *out, or NS_ERR_INVALID with
 * "NAME: ..." in err (name: the option or key as the user wrote it). */
int ns_range_parse_u64(const ns_range *r, const char *name, const char *text, uint64_t *out,
                       ns_err *err);
/* Parse text as a real of r (a real range); -0 is 0 for the range check and stored as 0. */
int ns_range_parse_real(const ns_range *r, const char *name, const char *text, double *out,
                        ns_err *err);
/* Parse text as r's kind: an integer range stores into *u, a real range into *d. */
int ns_range_parse(const ns_range *r, const char *name, const char *text, uint64_t *u, double *d,
                   ns_err *err);

/* Check a value already parsed elsewhere (JSON, a computed sum): NULL when inside r, else the
 * reason without the name ("0 is out of range [1e-06, 1e+06]"), in buf. */
const char *ns_range_check_u64(const ns_range *r, uint64_t v, char *buf, size_t size);
const char *ns_range_check_real(const ns_range *r, double v, char *buf, size_t size);

/* The range as text: "1..2147483647" or "[1e-100, 1e+100]", "(0, 1)" (for help and messages). */
void ns_range_format(const ns_range *r, char *buf, size_t size);

#endif

/* ns_range: strict parsing of typed numbers against their declared range (see ns_range.h). */
#include "common/ns_range.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The shortest %g form of x that reads back as x, with the exponent written plainly
 * ("1e-6", "1e100", "0.001"). */
static void fmt_real(double x, char *buf, size_t size)
{
    char t[40];
    for (int p = 1; p <= 17; p++) {
        snprintf(t, sizeof t, "%.*g", p, x);
        if (strtod(t, NULL) == x)
            break;
    }
    char *e = strchr(t, 'e');
    if (e) { /* "e-06" -> "e-6", "e+100" -> "e100" */
        char *d = e + 1, *s = e + 1;
        if (*s == '+')
            s++;
        else if (*s == '-')
            *d++ = *s++;
        while (*s == '0' && s[1])
            s++;
        memmove(d, s, strlen(s) + 1);
    }
    snprintf(buf, size, "%s", t);
}

void ns_range_format(const ns_range *r, char *buf, size_t size)
{
    if (!r->is_real) {
        snprintf(buf, size, "%llu..%llu", (unsigned long long)r->umin,
                 (unsigned long long)r->umax);
        return;
    }
    char lo[40], hi[40];
    fmt_real(r->min, lo, sizeof lo);
    fmt_real(r->max, hi, sizeof hi);
    snprintf(buf, size, "%c%s, %s%c", r->flags & NS_RANGE_MIN_OPEN ? '(' : '[', lo, hi,
             r->flags & NS_RANGE_MAX_OPEN ? ')' : ']');
}

/* "TEXT is out of range RANGE (WHY)" into buf. */
static const char *out_of_range(const ns_range *r, const char *text, char *buf, size_t size)
{
    char range[96];
    ns_range_format(r, range, sizeof range);
    snprintf(buf, size, "%s is out of range %s%s%s%s", text, range, r->why ? " (" : "",
             r->why ? r->why : "", r->why ? ")" : "");
    return buf;
}

const char *ns_range_check_u64(const ns_range *r, uint64_t v, char *buf, size_t size)
{
    if (v >= r->umin && v <= r->umax)
        return NULL;
    char text[32];
    snprintf(text, sizeof text, "%llu", (unsigned long long)v);
    return out_of_range(r, text, buf, size);
}

static int real_inside(const ns_range *r, double v)
{
    int lo = r->flags & NS_RANGE_MIN_OPEN ? v > r->min : v >= r->min;
    int hi = r->flags & NS_RANGE_MAX_OPEN ? v < r->max : v <= r->max;
    return isfinite(v) && lo && hi;
}

const char *ns_range_check_real(const ns_range *r, double v, char *buf, size_t size)
{
    if (real_inside(r, v))
        return NULL;
    char text[40];
    if (isnan(v))
        snprintf(text, sizeof text, "NaN");
    else if (isinf(v))
        snprintf(text, sizeof text, "%sinfinity", v < 0 ? "-" : "");
    else
        fmt_real(v, text, sizeof text);
    return out_of_range(r, text, buf, size);
}

/* The text as typed, shortened for a one-line message. */
static const char *shown(const char *text, char *buf, size_t size)
{
    size_t n = strlen(text);
    if (n < 60)
        snprintf(buf, size, "%s", text);
    else
        snprintf(buf, size, "%.56s...", text);
    return buf;
}

static int expected(const ns_range *r, const char *name, const char *text, ns_err *err)
{
    char range[96], t[64];
    ns_range_format(r, range, sizeof range);
    return ns_fail(err, NS_ERR_INVALID, "%s: expected %s in %s, got '%s'", name,
                   r->is_real ? "a number" : "an integer", range, shown(text, t, sizeof t));
}

int ns_range_parse_u64(const ns_range *r, const char *name, const char *text, uint64_t *out,
                       ns_err *err)
{
    const char *s = text ? text : "";
    int neg = *s == '-';
    const char *d = s + neg;
    if (!*d || strspn(d, "0123456789") != strlen(d))
        return expected(r, name, s, err);
    char why[256], t[64];
    if (neg && strspn(d, "0") != strlen(d)) /* a negative integer: below any unsigned range */
        return ns_fail(err, NS_ERR_INVALID, "%s: %s", name,
                       out_of_range(r, shown(s, t, sizeof t), why, sizeof why));
    errno = 0;
    unsigned long long v = strtoull(d, NULL, 10);
    if (errno == ERANGE || (unsigned long long)(uint64_t)v != v)
        return ns_fail(err, NS_ERR_INVALID, "%s: %s", name,
                       out_of_range(r, shown(s, t, sizeof t), why, sizeof why));
    if (ns_range_check_u64(r, (uint64_t)v, why, sizeof why))
        return ns_fail(err, NS_ERR_INVALID, "%s: %s", name,
                       out_of_range(r, shown(s, t, sizeof t), why, sizeof why));
    *out = (uint64_t)v;
    return NS_OK;
}

/* 1 when s is a decimal number: [+-] digits [. digits] [e [+-] digits], at least one digit in
 * the mantissa. */
static int is_decimal(const char *s)
{
    if (*s == '+' || *s == '-')
        s++;
    size_t a = strspn(s, "0123456789");
    s += a;
    size_t b = 0;
    if (*s == '.') {
        s++;
        b = strspn(s, "0123456789");
        s += b;
    }
    if (a + b == 0)
        return 0;
    if (*s == 'e' || *s == 'E') {
        s++;
        if (*s == '+' || *s == '-')
            s++;
        size_t c = strspn(s, "0123456789");
        if (c == 0)
            return 0;
        s += c;
    }
    return *s == '\0';
}

int ns_range_parse_real(const ns_range *r, const char *name, const char *text, double *out,
                        ns_err *err)
{
    const char *s = text ? text : "";
    if (!is_decimal(s))
        return expected(r, name, s, err);
    errno = 0;
    double v = strtod(s, NULL);
    char why[256], t[64];
    /* overflow (inf) and underflow (0 or a subnormal for a nonzero text) are out of range */
    if (errno == ERANGE || !real_inside(r, v == 0.0 ? 0.0 : v))
        return ns_fail(err, NS_ERR_INVALID, "%s: %s", name,
                       out_of_range(r, shown(s, t, sizeof t), why, sizeof why));
    *out = v == 0.0 ? 0.0 : v; /* -0 is stored as 0 */
    return NS_OK;
}

int ns_range_parse(const ns_range *r, const char *name, const char *text, uint64_t *u, double *d,
                   ns_err *err)
{
    return r->is_real ? ns_range_parse_real(r, name, text, d, err)
                      : ns_range_parse_u64(r, name, text, u, err);
}

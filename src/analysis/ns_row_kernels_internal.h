/* ns_row_kernels_internal: what ns_row.c hands to the kernels of the N-dependent metrics (the
 * reference, ns_row_ref.c, and the incremental one, ns_row_fast.c) for one (row, T), and the
 * kernels' entry points (ns_row_ref.c, ns_row_fast.c, ns_row_gram.c, ns_row_fd.c). Not for use
 * outside src/analysis.
 *
 * Shape key: L = keys of the row, d = head dimension, Ln = rows of the head's Gram matrix. */
#ifndef NS_ROW_KERNELS_INTERNAL_H
#define NS_ROW_KERNELS_INTERNAL_H

#include <stddef.h>

#include "analysis/ns_metrics.h"
#include "analysis/ns_row_math_internal.h"

/* The Gram matrix's leading dimension for Ln rows: 8 doubles more than a row, so that rows a
 * power of two apart do not share the cache's sets (the mirror reads a column of tiles). */
#define NS_GRAM_LD(Ln) ((Ln) + 8)

/* e_i for comparisons in the fast kernel: the plain double alpha_i q_i where it is safely
 * representable (no underflow), else kept as (log alpha_i, q_i) and compared as signed logs. */
typedef struct ns_evalue {
    double v;    /* alpha q when !tiny */
    double la, q;
    int tiny;
} ns_evalue;

static inline ns_evalue ns_ev(double alpha, double la, double q)
{
    ns_evalue e = {alpha * q, la, q, 0};
    e.tiny = la < -600.0 || (e.v != 0.0 && e.v > -1e-280 && e.v < 1e-280);
    return e;
}

static inline int ns_ev_le(ns_evalue x, ns_evalue y)
{
    if (!x.tiny && !y.tiny)
        return x.v <= y.v;
    return ns_slog_le(ns_slog_of(x.la, x.q), ns_slog_of(y.la, y.q));
}

/* One (row, T): inputs shared by both kernels (borrowed from the workspace) and the output. */
typedef struct ns_row_ctx {
    size_t L, d;
    const double *X;      /* (L, d) the row's vectors x_i (unit norm when sphere) */
    const double *gdiag;  /* (L) ||x_i||^2 */
    const double *G;      /* (Ln, Ln) Gram matrix X X^T, full (symmetric), ld = ldg */
    size_t ldg;           /* NS_GRAM_LD(Ln) */
    const double *alpha;  /* (L) weights F(z/T) */
    const double *lalpha; /* (L) log weights (-inf where alpha is exactly 0) */
    const double *xbar;   /* (d) sum_i alpha_i x_i */
    const double *xsum;   /* (d) sum_i x_i */
    const size_t *order;  /* (L) keys by weight, descending (METRICS.md section 3) */
    const size_t *perm;   /* (maxN) the random permutation's prefix for d_random */
    double M, delta;
    const size_t *N;      /* the grid's N, ascending */
    size_t nN;            /* N's computed for this row: those below L (<= lay->nN) */
    int want_d1;          /* 0 when d1 was already stored (T-free ranking, t > 0) */
    size_t t;             /* temperature index */
    const ns_row_layout *lay;
    double *out;          /* the row record */
    /* scratch (sized for L_max and d by the workspace) */
    double *s, *sr;       /* (d) */
    double *v1, *v2, *v3, *v4; /* (L) each */
    double *v5, *v6;           /* (L) each: the fast kernel's per-key scratch */
    double *a2g;               /* (L) alpha_i^2 ||x_i||^2 (fast kernel) */
    double *mtop, *mrand;      /* (L) 1.0 for keys outside the top / random set, else 0.0 */
    double *work;         /* (2 L + 2) */
    unsigned char *in_set, *in_rand; /* (L), all 0 on entry and on return */
} ns_row_ctx;

void ns_row_n_reference(ns_row_ctx *c);
void ns_row_n_fast(ns_row_ctx *c);

/* The head's Gram matrix of x_0..x_{n-1} (X: n x d, gdiag: their ||x_i||^2) into G, full
 * (symmetric), ld NS_GRAM_LD(n), and delta[m] = the smallest distance among x_0..x_m (NaN for
 * m = 0) (ns_row_gram.c). */
void ns_row_gram(const double *X, const double *gdiag, size_t n, size_t d, double *G,
                 double *delta);

/* out[k] = sum over i < L, in key order, of w_i X[i][k] (X: L x d; w NULL: weights 1), k < d:
 * register-blocked, the same operations on every element as the plain loop (so the same bits,
 * and a zero weight adds a zero that changes no bit) (ns_row_gram.c). */
void ns_row_colsum(const double *X, size_t L, size_t d, const double *w, double *out);

/* jac_fd of the softmax family at alpha = softmax(c z) (the fast kernel): out[e] = max over the
 * nu directions u (L apart) of || softmax(c (z + eps_e u)) - alpha ||_2 / eps_e (NaN when nu is
 * 0). w holds L doubles. */
void ns_jac_fd_softmax(const double *z, const double *alpha, size_t L, double c, const double *u,
                       size_t nu, const double *eps, size_t neps, double *w, double *out);

#endif

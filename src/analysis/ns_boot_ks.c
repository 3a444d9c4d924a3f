/* ns_boot_ks: a cell's KS statistic under every bootstrap resample (see ns_boot_ks.h). */
#include "analysis/ns_boot_ks.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/ns_ks.h"
#include "common/ns_simd.h"

#define CACHE 64 /* pairs of sizes whose critical h is kept */

/* One pooled value: the value, its shard and its sample (+1: a, -1: b). */
typedef struct pooled {
    double v;
    uint32_t shard;
    int32_t side;
} pooled;

struct ns_boot_ks {
    size_t S, rows, R;
    pooled *p;            /* (2 S rows) the finite values of both samples, sorted */
    pooled *tmp;          /* (2 S rows) the radix sort's other buffer */
    unsigned char *end;   /* (2 S rows) 1 after the last of equal values */
    int32_t *ca, *cb;     /* (R) weighted counts so far */
    int32_t *WT;          /* (S, R) the multiplicities, transposed */
    int16_t *WT16;        /* the same in 16 bits, or NULL when S rows > INT16_MAX */
    int16_t *c16, *m16;   /* (R) */
    int64_t *cnt;         /* (2 S) each shard's finite values of a, then of b */
    ns_ks_ws *ks;
    size_t ncache, next;
    int64_t cna[CACHE], cnb[CACHE];
    uint64_t ch[CACHE];
    double calpha;
};

void ns_boot_ks_free(ns_boot_ks *w)
{
    if (!w)
        return;
    free(w->p), free(w->tmp), free(w->end);
    free(w->ca), free(w->cb), free(w->cnt), free(w->WT), free(w->WT16), free(w->c16);
    free(w->m16);
    ns_ks_ws_free(w->ks);
    free(w);
}

int ns_boot_ks_new(size_t S, size_t rows, size_t R, const uint32_t *W, ns_boot_ks **out,
                   ns_err *err)
{
    ns_boot_ks *w = calloc(1, sizeof *w);
    size_t n = 2 * S * rows + 1;
    *out = NULL;
    if (w) {
        w->S = S, w->rows = rows, w->R = R, w->calpha = NAN;
        w->p = malloc(n * sizeof *w->p);
        w->tmp = malloc(n * sizeof *w->tmp);
        w->end = malloc(n);
        w->ca = malloc((R + 1) * sizeof *w->ca);
        w->cb = malloc((R + 1) * sizeof *w->cb);
        w->cnt = malloc((2 * S + 1) * sizeof *w->cnt);
        w->WT = malloc((S * R + 1) * sizeof *w->WT);
        if (S * rows <= INT16_MAX) {
            w->WT16 = malloc((S * R + 1) * sizeof *w->WT16);
            w->c16 = malloc((R + 1) * sizeof *w->c16);
            w->m16 = malloc((R + 1) * sizeof *w->m16);
        }
    }
    int small = S * rows <= INT16_MAX;
    if (!w || !w->p || !w->tmp || !w->end || !w->ca || !w->cb || !w->cnt || !w->WT ||
        (small && (!w->WT16 || !w->c16 || !w->m16)) || ns_ks_ws_new(&w->ks, err) != NS_OK) {
        ns_boot_ks_free(w);
        return ns_fail(err, NS_ERR_NOMEM, "bootstrap: out of memory (KS of %zu x %zu values)", S,
                       rows);
    }
    for (size_t s = 0; s < S; s++)
        for (size_t r = 0; r < R; r++) {
            w->WT[s * R + r] = (int32_t)W[r * S + s];
            if (small)
                w->WT16[s * R + r] = (int16_t)W[r * S + s];
        }
    *out = w;
    return NS_OK;
}

/* A finite double's bits made an unsigned key in the order of the values (negatives' bits
 * inverted, the sign bit set on the others): -0 just below +0, nothing between them. */
static uint64_t key(double v)
{
    uint64_t u;
    memcpy(&u, &v, sizeof u);
    return u >> 63 ? ~u : u | 0x8000000000000000ULL;
}

/* Sort p[0..n) by value through tmp: a least-significant-digit radix sort of the keys, a byte a
 * pass, a pass skipped when every key has the same byte there (the exponents of values of like
 * size). Equal values may come in any order (the caller reads k after the last of them), and
 * -0 and +0, equal values, end up next to each other. */
static void sort_by_value(pooled *p, pooled *tmp, size_t n)
{
    size_t cnt[8][256];
    memset(cnt, 0, sizeof cnt);
    for (size_t i = 0; i < n; i++) {
        uint64_t k = key(p[i].v);
        for (int d = 0; d < 8; d++)
            cnt[d][(k >> (8 * d)) & 255]++;
    }
    pooled *src = p, *dst = tmp;
    for (int d = 0; d < 8 && n > 0; d++) {
        if (cnt[d][(key(p[0].v) >> (8 * d)) & 255] == n)
            continue;
        size_t off = 0;
        for (int b = 0; b < 256; b++) {
            size_t c = cnt[d][b];
            cnt[d][b] = off;
            off += c;
        }
        for (size_t i = 0; i < n; i++)
            dst[cnt[d][(key(src[i].v) >> (8 * d)) & 255]++] = src[i];
        pooled *t = src;
        src = dst, dst = t;
    }
    if (src != p)
        memcpy(p, src, n * sizeof *p);
}

/* Pool the finite values of a (side +1) and b (side -1) with their shards, sorted by value
 * (the order among equal values does not matter: k is read after the last of them); returns
 * their number. */
static size_t pool(ns_boot_ks *w, const double *a, const double *b)
{
    size_t m = w->S * w->rows, n = 0;
    memset(w->cnt, 0, 2 * w->S * sizeof *w->cnt);
    for (int q = 0; q < 2; q++) {
        const double *x = q ? b : a;
        for (size_t j = 0; j < m; j++)
            if (isfinite(x[j])) {
                w->p[n++] = (pooled){x[j], (uint32_t)(j / w->rows), q ? -1 : 1};
                w->cnt[(size_t)q * w->S + j / w->rows]++;
            }
    }
    sort_by_value(w->p, w->tmp, n);
    for (size_t i = 0; i < n; i++)
        w->end[i] = i + 1 == n || w->p[i].v != w->p[i + 1].v;
    return n;
}

/* Paired cells (every shard as many values of a as of b): n_a = n_b = n, k = n max |c_a - c_b|,
 * in 16-bit lanes (|c_a - c_b| <= S rows <= INT16_MAX). */
NS_HOT static void k_paired16(ns_boot_ks *w, size_t n, int16_t *c, int16_t *m)
{
    size_t R = w->R;
    for (size_t r = 0; r < R; r++)
        c[r] = 0, m[r] = 0;
    for (size_t i = 0; i < n; i++) {
        const int16_t *wr = w->WT16 + (size_t)w->p[i].shard * R;
        int16_t sg = w->p[i].side > 0 ? 1 : -1;
        if (w->end[i]) /* the count and its maximum in one pass over the lanes */
            for (size_t r = 0; r < R; r++) {
                int16_t v = (int16_t)(c[r] + sg * wr[r]), x = v < 0 ? (int16_t)-v : v;
                c[r] = v;
                m[r] = x > m[r] ? x : m[r];
            }
        else
            for (size_t r = 0; r < R; r++)
                c[r] = (int16_t)(c[r] + sg * wr[r]);
    }
}

/* The same in 32-bit lanes. */
NS_HOT static void k_paired(ns_boot_ks *w, size_t n, const int32_t *WT, int32_t *c, int32_t *m)
{
    size_t R = w->R;
    for (size_t r = 0; r < R; r++)
        c[r] = 0, m[r] = 0;
    for (size_t i = 0; i < n; i++) {
        const int32_t *wr = WT + (size_t)w->p[i].shard * R;
        if (w->p[i].side > 0)
            for (size_t r = 0; r < R; r++)
                c[r] += wr[r];
        else
            for (size_t r = 0; r < R; r++)
                c[r] -= wr[r];
        if (w->end[i])
            for (size_t r = 0; r < R; r++) {
                int32_t x = c[r] < 0 ? -c[r] : c[r];
                m[r] = x > m[r] ? x : m[r];
            }
    }
}

void ns_boot_ks_cell(ns_boot_ks *w, const double *a, const double *b, int64_t *k, int64_t *na,
                     int64_t *nb)
{
    size_t R = w->R, S = w->S, n = pool(w, a, b);
    const int32_t *WT = w->WT;
    int paired = 1, uniform = 1;
    for (size_t s = 0; s < S && paired; s++)
        paired = w->cnt[s] == w->cnt[S + s];
    for (size_t s = 1; s < S && uniform; s++)
        uniform = w->cnt[s] == w->cnt[0] && w->cnt[S + s] == w->cnt[S];
    for (size_t r = 0; r < R; r++) /* a row's multiplicities add up to S */
        na[r] = uniform ? w->cnt[0] * (int64_t)S : 0, nb[r] = uniform ? w->cnt[S] * (int64_t)S : 0;
    for (size_t s = 0; s < S && !uniform; s++)
        for (size_t r = 0; r < R; r++) {
            na[r] += (int64_t)WT[s * R + r] * w->cnt[s];
            nb[r] += (int64_t)WT[s * R + r] * w->cnt[S + s];
        }
    if (paired && w->WT16) {
        k_paired16(w, n, w->c16, w->m16);
        for (size_t r = 0; r < R; r++)
            k[r] = (int64_t)w->m16[r] * na[r];
        return;
    }
    if (paired) {
        k_paired(w, n, WT, w->ca, w->cb);
        for (size_t r = 0; r < R; r++)
            k[r] = (int64_t)w->cb[r] * na[r];
        return;
    }
    for (size_t r = 0; r < R; r++)
        w->ca[r] = w->cb[r] = 0, k[r] = 0;
    for (size_t i = 0; i < n; i++) {
        const int32_t *wr = WT + (size_t)w->p[i].shard * R;
        int32_t *c = w->p[i].side > 0 ? w->ca : w->cb;
        for (size_t r = 0; r < R; r++)
            c[r] += wr[r];
        if (w->end[i])
            for (size_t r = 0; r < R; r++) {
                int64_t x = (int64_t)w->ca[r] * nb[r] - (int64_t)w->cb[r] * na[r];
                x = x < 0 ? -x : x;
                k[r] = x > k[r] ? x : k[r];
            }
    }
}

static int64_t gcd64(int64_t x, int64_t y)
{
    while (y) {
        int64_t t = x % y;
        x = y, y = t;
    }
    return x;
}

int ns_boot_ks_threshold(ns_boot_ks *w, int64_t na, int64_t nb, double alpha, int64_t *kmax,
                         ns_err *err)
{
    if (!(alpha == w->calpha))
        w->ncache = 0, w->next = 0, w->calpha = alpha;
    size_t i = 0;
    while (i < w->ncache && !(w->cna[i] == na && w->cnb[i] == nb))
        i++;
    if (i == w->ncache) {
        uint64_t h;
        NS_TRY(ns_ks_critical_h((uint64_t)na, (uint64_t)nb, alpha, w->ks, &h, err));
        i = w->ncache < CACHE ? w->ncache++ : w->next++ % CACHE;
        w->cna[i] = na, w->cnb[i] = nb, w->ch[i] = h;
    }
    uint64_t g = (uint64_t)gcd64(na, nb), h = w->ch[i];
    /* h <= lcm + 1, so h g <= na nb + g: no overflow for sizes below 2^31 */
    *kmax = (int64_t)(h * g);
    return NS_OK;
}


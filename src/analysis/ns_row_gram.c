/* ns_row_gram: what every row of a head shares on the value side -- the Gram matrix G = X X^T
 * (one cblas_dsyrk, then mirrored so that the fast kernel can read whole rows) and delta's
 * prefix minima (METRICS.md section 6: delta of row m is the smallest distance among
 * x_0..x_m). delta's pair is chosen on the Gram distances and its distance recomputed directly.
 * Also the weighted column sums of X (sum x_i, and xbar = sum alpha_i x_i at every T). */
#include <cblas.h>
#include <math.h>

#include "analysis/ns_row_kernels_internal.h"
#include "common/ns_simd.h"

/* The transpose of the 4 x 4 block at a (rows ld apart) stored at b (rows ld apart). */
NS_INLINE void transpose4(const double *a, double *b, size_t ld)
{
    v4d r0 = load4(a), r1 = load4(a + ld), r2 = load4(a + 2 * ld), r3 = load4(a + 3 * ld);
    v4d t0 = __builtin_shufflevector(r0, r1, 0, 4, 2, 6); /* a00 a10 a02 a12 */
    v4d t1 = __builtin_shufflevector(r0, r1, 1, 5, 3, 7); /* a01 a11 a03 a13 */
    v4d t2 = __builtin_shufflevector(r2, r3, 0, 4, 2, 6);
    v4d t3 = __builtin_shufflevector(r2, r3, 1, 5, 3, 7);
    store4(b, __builtin_shufflevector(t0, t2, 0, 1, 4, 5));
    store4(b + ld, __builtin_shufflevector(t1, t3, 0, 1, 4, 5));
    store4(b + 2 * ld, __builtin_shufflevector(t0, t2, 2, 3, 6, 7));
    store4(b + 3 * ld, __builtin_shufflevector(t1, t3, 2, 3, 6, 7));
}

/* Copy the strict lower triangle of G (n x n, ld) onto the upper one, in 32 x 32 tiles (a
 * column walk of the whole matrix would miss the cache on every element; the padded ld keeps a
 * tile's rows in distinct sets) of 4 x 4 blocks, transposed in registers. A copy: exact. */
NS_HOT static void mirror_lower(double *G, size_t n, size_t ld)
{
    enum { TILE = 32 };
    for (size_t j0 = 0; j0 < n; j0 += TILE)
        for (size_t i0 = j0; i0 < n; i0 += TILE) {
            size_t j1 = j0 + TILE < n ? j0 + TILE : n, i1 = i0 + TILE < n ? i0 + TILE : n;
            for (size_t j = j0; j < j1; j += 4)
                for (size_t i = i0 > j ? i0 : j; i < i1; i += 4) {
                    if (i > j && i + 4 <= i1 && j + 4 <= j1) { /* strictly below the diagonal */
                        transpose4(G + i * ld + j, G + j * ld + i, ld);
                        continue;
                    }
                    size_t jn = j + 4 < j1 ? j + 4 : j1, in = i + 4 < i1 ? i + 4 : i1;
                    for (size_t jj = j; jj < jn; jj++)
                        for (size_t ii = (i > jj + 1 ? i : jj + 1); ii < in; ii++)
                            G[jj * ld + ii] = G[ii * ld + jj];
                }
        }
}

/* The nearest earlier vector of x_j on the Gram distances g_i + g_j - 2 G_ji, i < j: the first
 * index that reaches the minimum (each lane keeps its first strict minimum; then the smallest
 * index among the lanes that reach the overall one). */
NS_HOT static size_t nearest_earlier(const double *gr, const double *gdiag, size_t j)
{
    const v4d gj = splat(gdiag[j]), two = splat(2.0), four = splat(4.0);
    v4d m = splat(INFINITY), idx = {0.0, 1.0, 2.0, 3.0}, bidx = splat(0.0);
    size_t i = 0;
    for (; i + 4 <= j; i += 4) {
        v4d dsq = load4(gdiag + i) + gj - two * load4(gr + i);
        v4i lt = dsq < m;
        m = select4(lt, dsq, m);
        bidx = select4(lt, idx, bidx);
        idx += four;
    }
    double mn = INFINITY, bi = 0.0;
    for (int l = 0; l < 4; l++)
        if (m[l] < mn || (m[l] == mn && bidx[l] < bi))
            mn = m[l], bi = bidx[l];
    size_t best = (size_t)bi;
    for (; i < j; i++) { /* the tail: later indices, so only a strictly smaller one wins */
        double dsq = gdiag[i] + gdiag[j] - 2.0 * gr[i];
        if (dsq < mn)
            mn = dsq, best = i;
    }
    return best;
}

void ns_row_gram(const double *X, const double *gdiag, size_t n, size_t d, double *G,
                 double *delta)
{
    size_t ld = NS_GRAM_LD(n);
    cblas_dsyrk(CblasRowMajor, CblasLower, CblasNoTrans, (int)n, (int)d, 1.0, X, (int)d, 0.0, G,
                (int)ld);
    mirror_lower(G, n, ld);
    double best = INFINITY;
    delta[0] = NAN;
    for (size_t j = 1; j < n; j++) {
        size_t bi = nearest_earlier(G + j * ld, gdiag, j);
        double dd = sqrt(ns_sqdist_scaled(1.0, X + j * d, X + bi * d, d));
        if (dd < best)
            best = dd;
        delta[j] = best;
    }
}

/* Columns k0 .. k0 + 4 B of the weighted sum, the accumulators held in registers across the keys
 * (the plain loop loads and stores out[k] for every key). Per element: acc = 0, then
 * acc += w_i x_ik for i = 0, 1, ... -- the plain loop's operations in its order. */
#define NS_COLSUM_BLOCK(B)                                                                     \
    do {                                                                                       \
        v4d acc[B];                                                                            \
        for (int b = 0; b < (B); b++)                                                          \
            acc[b] = splat(0.0);                                                               \
        for (size_t i = 0; i < L; i++) {                                                       \
            const double *x = X + i * d + k0;                                                  \
            v4d wi = splat(w ? w[i] : 1.0);                                                    \
            for (int b = 0; b < (B); b++)                                                      \
                acc[b] += wi * load4(x + 4 * b);                                               \
        }                                                                                      \
        for (int b = 0; b < (B); b++)                                                          \
            store4(out + k0 + 4 * b, acc[b]);                                                  \
    } while (0)

NS_HOT void ns_row_colsum(const double *X, size_t L, size_t d, const double *w, double *out)
{
    size_t k0 = 0;
    for (; k0 + 32 <= d; k0 += 32)
        NS_COLSUM_BLOCK(8);
    for (; k0 + 4 <= d; k0 += 4)
        NS_COLSUM_BLOCK(1);
    for (; k0 < d; k0++) { /* the last d mod 4 columns */
        double acc = 0.0;
        for (size_t i = 0; i < L; i++)
            acc += (w ? w[i] : 1.0) * X[i * d + k0];
        out[k0] = acc;
    }
}

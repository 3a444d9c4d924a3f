/* ns_boot: shard-bootstrap arithmetic (see ns_boot.h). */
#include "analysis/ns_boot.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/ns_rng.h"
#include "common/ns_simd.h"

const ns_range ns_boot_range_resamples =
    NS_RANGE_INT(NS_BOOT_MIN_RESAMPLES, NS_BOOT_MAX_RESAMPLES,
                 "the report needs at least 1000 resamples; time and memory grow with them");

int ns_boot_weights(uint64_t seed, size_t S, size_t B, uint32_t **W, ns_err *err)
{
    *W = NULL;
    if (S == 0)
        return ns_fail(err, NS_ERR_INVALID, "bootstrap: no shards");
    uint32_t *w = calloc((B + 1) * S, sizeof *w);
    if (!w)
        return ns_fail(err, NS_ERR_NOMEM, "bootstrap: out of memory (%zu resamples of %zu shards)",
                       B, S);
    for (size_t s = 0; s < S; s++)
        w[s] = 1;
    for (size_t b = 0; b < B; b++) {
        uint64_t words[3] = {NS_BOOT_TAG, seed, (uint64_t)b};
        ns_rng r;
        ns_rng_init(&r, ns_rng_key(words, 3));
        uint32_t *row = w + (b + 1) * S;
        for (size_t i = 0; i < S; i++)
            row[ns_rng_below(&r, S)]++;
    }
    *W = w;
    return NS_OK;
}

NS_HOT void ns_boot_wmeans(const uint32_t *w, const double *sum, const double *cnt, size_t S,
                           size_t n, double *scratch, double *out)
{
    double *tot = scratch, *num = scratch + n;
    for (size_t j = 0; j < n; j++)
        tot[j] = 0.0, num[j] = 0.0;
    for (size_t s = 0; s < S; s++) {
        if (!w[s])
            continue;
        double ws = (double)w[s];
        const double *a = sum + s * n;
        for (size_t j = 0; j < n; j++)
            tot[j] += ws * a[j];
        if (cnt) {
            const double *c = cnt + s * n;
            for (size_t j = 0; j < n; j++)
                num[j] += ws * c[j];
        }
    }
    if (!cnt) /* every shard has the same count c_j: the weighted count is c_j S, exactly */
        for (size_t j = 0; j < n; j++)
            num[j] = scratch[2 * n + j];
    for (size_t j = 0; j < n; j++)
        out[j] = num[j] > 0.0 ? tot[j] / num[j] : NAN;
}

/* Columns [j0, j0 + 32) of resample b's sums: eight accumulators of four lanes, each lane one
 * column, so each column's sum runs over the shards in index order. */
NS_INLINE void wsums32(const double *wb, const double *x, size_t S, size_t n, size_t j0,
                       double *out)
{
    v4d a0 = splat(0.0), a1 = a0, a2 = a0, a3 = a0, a4 = a0, a5 = a0, a6 = a0, a7 = a0;
    for (size_t s = 0; s < S; s++) {
        v4d ws = splat(wb[s]);
        const double *xs = x + s * n + j0;
        a0 += ws * load4(xs), a1 += ws * load4(xs + 4);
        a2 += ws * load4(xs + 8), a3 += ws * load4(xs + 12);
        a4 += ws * load4(xs + 16), a5 += ws * load4(xs + 20);
        a6 += ws * load4(xs + 24), a7 += ws * load4(xs + 28);
    }
    store4(out + j0, a0), store4(out + j0 + 4, a1), store4(out + j0 + 8, a2);
    store4(out + j0 + 12, a3), store4(out + j0 + 16, a4), store4(out + j0 + 20, a5);
    store4(out + j0 + 24, a6), store4(out + j0 + 28, a7);
}

NS_HOT void ns_boot_wsums(const double *wd, const double *x, size_t R, size_t S, size_t n,
                          double *out)
{
    for (size_t b = 0; b < R; b++) {
        const double *wb = wd + b * S;
        double *ob = out + b * n;
        size_t j0 = 0;
        for (; j0 + 32 <= n; j0 += 32)
            wsums32(wb, x, S, n, j0, ob);
        for (; j0 + 4 <= n; j0 += 4) {
            v4d a = splat(0.0);
            for (size_t s = 0; s < S; s++)
                a += splat(wb[s]) * load4(x + s * n + j0);
            store4(ob + j0, a);
        }
        for (; j0 < n; j0++) {
            double a = 0.0;
            for (size_t s = 0; s < S; s++)
                a += wb[s] * x[s * n + j0];
            ob[j0] = a;
        }
    }
}

NS_HOT void ns_boot_wmaxes(const uint32_t *w, const double *mx, size_t S, size_t n, double *out)
{
    for (size_t j = 0; j < n; j++)
        out[j] = -INFINITY;
    for (size_t s = 0; s < S; s++)
        if (w[s])
            for (size_t j = 0; j < n; j++)
                if (mx[s * n + j] > out[j])
                    out[j] = mx[s * n + j];
    for (size_t j = 0; j < n; j++)
        if (out[j] == -INFINITY)
            out[j] = NAN;
}

static void select_kth(double *x, size_t l, size_t r, size_t k);

/* The median (or maximum) of v[0..c) (reordered): NaN when c = 0. */
static double small_stat(double *v, size_t c, int use_max)
{
    if (c == 0)
        return NAN;
    if (use_max) {
        double m = v[0];
        for (size_t i = 1; i < c; i++)
            if (v[i] > m)
                m = v[i];
        return m == -INFINITY ? NAN : m;
    }
    for (size_t i = 1; i < c; i++) {
        double k = v[i];
        size_t j = i;
        while (j > 0 && v[j - 1] > k) {
            v[j] = v[j - 1];
            j--;
        }
        v[j] = k;
    }
    return (v[(c - 1) / 2] + v[c / 2]) / 2;
}

void ns_boot_set_stats(const double *x, size_t H, const ns_boot_sets *sets, int use_max,
                       ns_boot_set_ws *ws, double *out)
{
    (void)H;
    for (size_t s = 0; s < sets->nsets; s++) {
        const size_t *idx = sets->idx + sets->start[s];
        size_t m = sets->start[s + 1] - sets->start[s], k = 0;
        for (size_t i = 0; i < m; i++)
            if (!isnan(x[idx[i]]))
                ws->vals[k++] = x[idx[i]];
        if (k <= 32 || use_max) {
            out[s] = small_stat(ws->vals, k, use_max);
            continue;
        }
        /* a large set: the two middle order statistics by selection */
        size_t lo = (k - 1) / 2, hi = k / 2;
        select_kth(ws->vals, 0, k - 1, lo);
        double a = ws->vals[lo], b = a;
        if (hi != lo) {
            b = ws->vals[hi];
            for (size_t i = hi + 1; i < k; i++)
                if (ws->vals[i] < b)
                    b = ws->vals[i];
        }
        out[s] = (a + b) / 2;
    }
}

/* Batcher's odd-even merge sort for n (a power of 2) as comparator pairs (i < j: after the
 * comparator, x[i] <= x[j]); returns their number (at most 191 for n = 32). */
static size_t batcher(size_t n, unsigned char (*pair)[2])
{
    size_t k = 0;
    for (size_t p = 1; p < n; p <<= 1)
        for (size_t q = p; q > 0; q >>= 1)
            for (size_t j = q % p; j + q < n; j += 2 * q)
                for (size_t i = 0; i < q && i + j + q < n; i++)
                    if ((i + j) / (2 * p) == (i + j + q) / (2 * p)) {
                        pair[k][0] = (unsigned char)(i + j);
                        pair[k][1] = (unsigned char)(i + j + q);
                        k++;
                    }
    return k;
}

/* Compare-exchange columns a and b of R values each (lanes: no branches). */
NS_HOT static void cmp_exchange(double *restrict a, double *restrict b, size_t R)
{
    for (size_t r = 0; r < R; r++) {
        double lo = a[r] < b[r] ? a[r] : b[r], hi = a[r] < b[r] ? b[r] : a[r];
        a[r] = lo, b[r] = hi;
    }
}

void ns_boot_set_medians(const double *x, size_t R, size_t H, const ns_boot_sets *sets,
                         ns_boot_batch_ws *ws, double *out)
{
    unsigned char pair[192][2];
    for (size_t s = 0; s < sets->nsets; s++) {
        const size_t *idx = sets->idx + sets->start[s];
        size_t m = sets->start[s + 1] - sets->start[s], n = 1;
        while (n < m)
            n <<= 1;
        double *col = ws->cols;
        int nan = m == 0 || m > NS_BOOT_BATCH_MAX;
        for (size_t i = 0; i < m && !nan; i++) {
            double *c = col + i * R;
            for (size_t r = 0; r < R; r++)
                c[r] = x[r * H + idx[i]];
            for (size_t r = 0; r < R; r++)
                nan |= isnan(c[r]);
        }
        if (nan) { /* the general path, replicate by replicate */
            ns_boot_sets one = {1, idx, (size_t[2]){0, m}};
            for (size_t r = 0; r < R; r++)
                ns_boot_set_stats(x + r * H, H, &one, 0, &ws->one, out + s * R + r);
            continue;
        }
        for (size_t i = m; i < n; i++)
            for (size_t r = 0; r < R; r++) /* padding: +inf sorts above every value */
                col[i * R + r] = INFINITY;
        size_t np = batcher(n, pair);
        for (size_t k = 0; k < np; k++)
            cmp_exchange(col + pair[k][0] * R, col + pair[k][1] * R, R);
        const double *a = col + (m - 1) / 2 * R, *b = col + m / 2 * R;
        for (size_t r = 0; r < R; r++)
            out[s * R + r] = (a[r] + b[r]) / 2;
    }
}

double ns_boot_log(double x)
{
    if (x == INFINITY)
        return INFINITY;
    return isfinite(x) && x > 0.0 ? log(x) : NAN;
}

double ns_boot_slope(const double *u, const double *v, const unsigned char *sel, size_t m)
{
    double su = 0.0, sv = 0.0, num = 0.0, den = 0.0;
    size_t k = 0;
    for (size_t j = 0; j < m; j++)
        if (sel[j])
            su += u[j], sv += v[j], k++;
    if (k < 2)
        return NAN;
    double ub = su / (double)k, vb = sv / (double)k;
    for (size_t j = 0; j < m; j++)
        if (sel[j]) {
            double du = u[j] - ub;
            num += du * (v[j] - vb);
            den += du * du;
        }
    double s = num / den;
    return isfinite(s) ? s : NAN;
}

int ns_boot_ranks(size_t B, size_t *lo, size_t *hi, ns_err *err)
{
    size_t k = (size_t)floor((1.0 - NS_BOOT_LEVEL) / 2 * (double)B + 1e-9);
    if (k < 1)
        return ns_fail(err, NS_ERR_INVALID, "bootstrap: %zu resamples are too few for a %g "
                       "interval", B, NS_BOOT_LEVEL);
    *lo = k - 1;
    *hi = B - k;
    return NS_OK;
}

/* Place the k-th smallest of x[l..r] at x[k] (Hoare selection; x has no NaN). */
static void select_kth(double *x, size_t l, size_t r, size_t k)
{
    while (l < r) {
        double p = x[l + (r - l) / 2];
        size_t i = l, j = r;
        while (i <= j) {
            while (x[i] < p)
                i++;
            while (x[j] > p)
                j--;
            if (i <= j) {
                double t = x[i];
                x[i] = x[j], x[j] = t;
                i++;
                if (j == 0)
                    break;
                j--;
            }
        }
        if (k <= j)
            r = j;
        else if (k >= i)
            l = i;
        else
            return;
    }
}

void ns_boot_interval(double *reps, size_t B, size_t lo_rank, size_t hi_rank, double *lo,
                      double *hi)
{
    for (size_t b = 0; b < B; b++)
        if (isnan(reps[b])) {
            *lo = *hi = NAN;
            return;
        }
    select_kth(reps, 0, B - 1, lo_rank);
    *lo = reps[lo_rank];
    select_kth(reps, lo_rank, B - 1, hi_rank);
    *hi = reps[hi_rank];
}

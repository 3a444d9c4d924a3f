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

/* A resample's drawn shards, WS_CHUNK at a time: their indices and multiplicities. */
#define WS_CHUNK 256

/* Columns [j0, j0 + 32) of one resample's sums over its drawn shards sh[0..k) (weights wt):
 * eight accumulators of four lanes, each lane one column, started from out (the sums so far)
 * and added to shard by shard in index order. */
NS_INLINE void wsums32(const size_t *sh, const double *wt, size_t k, const double *x, size_t n,
                       size_t j0, double *out)
{
    double *o = out + j0;
    v4d a0 = load4(o), a1 = load4(o + 4), a2 = load4(o + 8), a3 = load4(o + 12);
    v4d a4 = load4(o + 16), a5 = load4(o + 20), a6 = load4(o + 24), a7 = load4(o + 28);
    for (size_t t = 0; t < k; t++) {
        v4d ws = splat(wt[t]);
        const double *xs = x + sh[t] * n + j0;
        a0 += ws * load4(xs), a1 += ws * load4(xs + 4);
        a2 += ws * load4(xs + 8), a3 += ws * load4(xs + 12);
        a4 += ws * load4(xs + 16), a5 += ws * load4(xs + 20);
        a6 += ws * load4(xs + 24), a7 += ws * load4(xs + 28);
    }
    store4(o, a0), store4(o + 4, a1), store4(o + 8, a2), store4(o + 12, a3);
    store4(o + 16, a4), store4(o + 20, a5), store4(o + 24, a6), store4(o + 28, a7);
}

/* Columns per block of ns_boot_wsums: the block's S rows within WS_BLOCK_DOUBLES (1 MiB, half a
 * level-2 cache), a multiple of 32, at least 32. */
#define WS_BLOCK_DOUBLES 131072

NS_HOT void ns_boot_wsums(const double *wd, const double *x, size_t R, size_t S, size_t n,
                          double *out)
{
    size_t sh[WS_CHUNK];
    double wt[WS_CHUNK];
    size_t bw = WS_BLOCK_DOUBLES / (S ? S : 1) / 32 * 32;
    bw = bw < 32 ? 32 : bw;
    /* column block by column block, every resample in each: the block's rows stay in the cache
     * (the whole of x, S n doubles, need not: 2.7 MB for 336 shards of GPT-2's 7 x 144 columns) */
    for (size_t jb = 0; jb < n; jb += bw) {
        size_t je = n - jb < bw ? n : jb + bw;
        for (size_t b = 0; b < R; b++) {
            const double *wb = wd + b * S;
            double *ob = out + b * n;
            for (size_t j = jb; j < je; j++)
                ob[j] = 0.0;
            for (size_t s0 = 0; s0 < S; s0 += WS_CHUNK) {
                size_t k = 0, s1 = S - s0 < WS_CHUNK ? S : s0 + WS_CHUNK;
                for (size_t s = s0; s < s1; s++) { /* the drawn shards, without a branch */
                    sh[k] = s, wt[k] = wb[s];
                    k += wb[s] != 0.0;
                }
                size_t j0 = jb;
                for (; j0 + 32 <= je; j0 += 32)
                    wsums32(sh, wt, k, x, n, j0, ob);
                for (; j0 + 4 <= je; j0 += 4) {
                    v4d a = load4(ob + j0);
                    for (size_t t = 0; t < k; t++)
                        a += splat(wt[t]) * load4(x + sh[t] * n + j0);
                    store4(ob + j0, a);
                }
                for (; j0 < je; j0++) {
                    double a = ob[j0];
                    for (size_t t = 0; t < k; t++)
                        a += wt[t] * x[sh[t] * n + j0];
                    ob[j0] = a;
                }
            }
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

/* The comparator networks: sets of up to NET_MAX heads (padded to a power of 2: 256 positions,
 * whose network has NET_PAIRS comparators). */
#define NET_MAX 256
#define NET_PAIRS 3839

/* Batcher's odd-even merge sort for n (a power of 2, at most NET_MAX) as comparator pairs
 * (i < j: after the comparator, x[i] <= x[j]); returns their number (191 for n = 32, NET_PAIRS
 * for n = 256). */
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

/* Of the network's np comparators, keep (in order) those the two middle positions (m - 1) / 2
 * and m / 2 of m values depend on: walking back from the end, a comparator is kept when it
 * writes a position needed later, and then both its inputs are needed. A comparator that
 * touches positions m and up is dropped: they are the padding of the power-of-2 network, which
 * would hold +inf, and there it would leave both values as they are, bit for bit (+inf stays
 * above every value, as cmp_exchange computes it), so the padding need not exist. The middle
 * positions then get the values of the whole network, operation for operation. */
static size_t middle_only(unsigned char (*pair)[2], size_t np, size_t m)
{
    unsigned char need[NET_MAX] = {0}, keep[NET_PAIRS];
    need[(m - 1) / 2] = need[m / 2] = 1;
    for (size_t k = np; k-- > 0;) {
        size_t i = pair[k][0], j = pair[k][1];
        keep[k] = j < m && (need[i] || need[j]);
        if (keep[k])
            need[i] = need[j] = 1;
    }
    size_t q = 0;
    for (size_t k = 0; k < np; k++)
        if (keep[k]) {
            pair[q][0] = pair[k][0], pair[q][1] = pair[k][1];
            q++;
        }
    return q;
}

/* Compare-exchange columns a and b of R values each (lanes: no branches); inlined into the
 * networks' loops, which are compiled for AVX2 and the baseline (NS_HOT). */
NS_INLINE void cmp_exchange(double *restrict a, double *restrict b, size_t R)
{
    for (size_t r = 0; r < R; r++) {
        double lo = a[r] < b[r] ? a[r] : b[r], hi = a[r] < b[r] ? b[r] : a[r];
        a[r] = lo, b[r] = hi;
    }
}

/* v[a] and v[b] of v[0..c) sorted (b = a or a + 1; v reordered), for values without NaN or -0
 * (equal values then have equal bits, so any exact method gives these): for a few values by
 * their ranks (a value's rank: the values below it, and the equal ones before it), else by
 * selection. */
static void two_ranks(double *v, size_t c, size_t a, size_t b, double *va, double *vb)
{
    if (c <= 16) {
        double x = v[0], y = v[0];
        for (size_t i = 0; i < c; i++) {
            size_t rank = 0;
            for (size_t j = 0; j < c; j++)
                rank += (v[j] < v[i]) | ((v[j] == v[i]) & (j < i));
            x = rank == a ? v[i] : x;
            y = rank == b ? v[i] : y;
        }
        *va = x, *vb = y;
        return;
    }
    select_kth(v, 0, c - 1, a);
    double y = v[a];
    if (b != a) {
        y = v[b];
        for (size_t i = b + 1; i < c; i++)
            if (v[i] < y)
                y = v[i];
    }
    *va = v[a], *vb = y;
}

/* The comparators of a set of m heads (1 <= m <= NET_MAX) that its two middle positions
 * depend on, into pair; returns their number (1614 for GPT-2's 144 heads). */
static size_t middle_network(size_t m, unsigned char (*pair)[2])
{
    size_t n = 1;
    while (n < m)
        n <<= 1;
    return middle_only(pair, batcher(n, pair), m);
}

/* Lanes per chunk of replicates for a set of m heads: its m columns fit 32 KiB (a level-1 data
 * cache), at most NS_BOOT_BATCH_MAX lanes and cap values (the size of ws->cols); at least 1. */
static size_t net_lanes(size_t m, size_t cap)
{
    size_t lanes = 4096 / m < NS_BOOT_BATCH_MAX ? 4096 / m : NS_BOOT_BATCH_MAX;
    lanes = cap / m < lanes ? cap / m : lanes;
    return lanes ? lanes : 1;
}

/* The median of set idx[0..m) (m <= NET_MAX) in replicates [r0, r1) of x (R, H) into out[r0..r1)
 * by the comparator network pair[0..np), in chunks of `lanes` replicates (net_lanes). A
 * replicate holding a NaN or a -0 gets ns_boot_set_stats's value instead (its lane of the
 * network, whose comparisons put a NaN anywhere and may order -0 and +0 either way, is not
 * read): every replicate's bits are ns_boot_set_stats's. */
NS_HOT static void net_medians(const double *x, size_t r0, size_t r1, size_t H, const size_t *idx,
                               size_t m, const unsigned char (*pair)[2], size_t np, size_t lanes,
                               ns_boot_batch_ws *ws, double *out)
{
    unsigned char odd[NS_BOOT_BATCH_MAX];
    ns_boot_sets one = {1, idx, (size_t[2]){0, m}};
    double *col = ws->cols;
    for (; r0 < r1; r0 += lanes) {
        size_t c = r1 - r0 < lanes ? r1 - r0 : lanes;
        for (size_t r = 0; r < c; r++) { /* row by row: each replicate's heads are near */
            const double *xr = x + (r0 + r) * H;
            uint64_t bad = 0;
            for (size_t i = 0; i < m; i++) { /* a NaN (exponent all ones, mantissa not 0), a -0 */
                double v = xr[idx[i]];
                uint64_t u;
                memcpy(&u, &v, sizeof u);
                col[i * c + r] = v;
                bad |= (uint64_t)((u << 1) > 0xffe0000000000000ULL) |
                       (uint64_t)(u == 0x8000000000000000ULL);
            }
            odd[r] = (unsigned char)bad;
        }
        for (size_t k = 0; k < np; k++)
            cmp_exchange(col + pair[k][0] * c, col + pair[k][1] * c, c);
        const double *a = col + (m - 1) / 2 * c, *b = col + m / 2 * c;
        for (size_t r = 0; r < c; r++) {
            if (odd[r]) {
                ns_boot_set_stats(x + (r0 + r) * H, H, &one, 0, &ws->one, out + r0 + r);
                ws->full += m > NS_BOOT_BATCH_MAX;
            } else {
                out[r0 + r] = (a[r] + b[r]) / 2;
            }
        }
        if (m > NS_BOOT_BATCH_MAX)
            ws->net += c;
    }
}

/* Sort ord[0..c) by x[ord[i]] (insertion: once per large set and call). */
static void order_by(size_t *ord, size_t c, const double *x)
{
    for (size_t i = 1; i < c; i++) {
        size_t k = ord[i], j = i;
        while (j > 0 && x[ord[j - 1]] > x[k]) {
            ord[j] = ord[j - 1];
            j--;
        }
        ord[j] = k;
    }
}

/* The counts of one replicate's pass over a large set around the pivots p <= q: values below p,
 * equal to p, strictly between (kept in mid), equal to q (when q > p), above q; and whether a -0
 * is among them. */
typedef struct mid_pass {
    size_t below, eq_p, between, eq_q, above;
    int negzero;
} mid_pass;

NS_HOT static mid_pass count_around(const double *xr, const size_t *idx, size_t m, double p,
                                    double q, double *mid)
{
    size_t below = 0, eq_p = 0, between = 0, eq_q = 0, above = 0;
    uint64_t nz = 0;
    size_t two = p != q;
    for (size_t i = 0; i < m; i++) {
        double v = xr[idx[i]];
        uint64_t u;
        memcpy(&u, &v, sizeof u);
        nz |= u == 0x8000000000000000ULL;
        below += v < p;
        eq_p += v == p;
        mid[between] = v;
        between += (v > p) & (v < q);
        eq_q += (v == q) & two;
        above += v > q;
    }
    return (mid_pass){below, eq_p, between, eq_q, above, nz != 0};
}

/* The shared selection's limits: the widest window (in ranks each side of the middle) before a
 * replicate is selected on its own, and the replicates after which a set whose heads missed the
 * first window in more than a quarter of them is selected replicate by replicate. */
#define SHARED_MAX_W 8
#define SHARED_TRIAL 16

/* The median of set idx[0..m) in replicates of x (R, H) into out[0..R), as ns_boot_set_stats
 * gives it, by the shared selection of ns_boot_set_medians (ns_boot.h). Returns R, or, when the
 * heads turn out not to keep their order and m <= NET_MAX, the first replicate it left to the
 * network (a larger set's are then selected one by one). */
static size_t shared_medians(const double *x, size_t R, size_t H, const size_t *idx, size_t m,
                             ns_boot_batch_ws *ws, double *out)
{
    size_t *ord = ws->order, c0 = 0;
    for (size_t i = 0; i < m; i++)
        if (!isnan(x[idx[i]]))
            ord[c0++] = idx[i];
    order_by(ord, c0, x);
    size_t lo0 = c0 ? (c0 - 1) / 2 : 0, hi0 = c0 / 2, w = 2, missed = 0;
    ns_boot_sets one = {1, idx, (size_t[2]){0, m}};
    for (size_t r = 0; r < R; r++) {
        const double *xr = x + r * H;
        if (r >= SHARED_TRIAL && missed * 4 > r && m <= NET_MAX)
            return r; /* the heads do not keep their order: the rest by the network */
        if (r >= SHARED_TRIAL && missed * 4 > r) { /* nor a network: one by one */
            ns_boot_set_stats(xr, H, &one, 0, &ws->one, out + r);
            ws->full++;
            continue;
        }
        for (size_t tries = 0;; tries++) {
            int wide = lo0 < w && hi0 + w >= c0; /* the window holds every value */
            double p = lo0 >= w && c0 ? xr[ord[lo0 - w]] : -INFINITY;
            double q = hi0 + w < c0 ? xr[ord[hi0 + w]] : INFINITY;
            p = isnan(p) ? -INFINITY : p;
            q = isnan(q) ? INFINITY : q;
            if (p > q) {
                double t = p;
                p = q, q = t;
            }
            mid_pass c = count_around(xr, idx, m, p, q, ws->mid);
            ws->passes++;
            if (c.negzero) { /* +0 and -0 compare equal: the full path decides which comes out */
                ns_boot_set_stats(xr, H, &one, 0, &ws->one, out + r);
                ws->full++;
                break;
            }
            size_t n = c.below + c.eq_p + c.between + c.eq_q + c.above;
            if (n == 0) {
                out[r] = NAN;
                break;
            }
            size_t lo = (n - 1) / 2, hi = n / 2, base = c.below + c.eq_p;
            if (!wide && (lo < c.below || hi >= n - c.above)) {
                missed += tries == 0;
                if (2 * w > SHARED_MAX_W) { /* far from the full sample's order: select */
                    ns_boot_set_stats(xr, H, &one, 0, &ws->one, out + r);
                    ws->full++;
                    break;
                }
                w *= 2; /* a middle rank outside the window: widen it */
                continue;
            }
            size_t end = base + c.between;
            int in_lo = lo >= base && lo < end, in_hi = hi >= base && hi < end;
            double a = 0.0, b = 0.0;
            if (in_lo || in_hi) {
                size_t ka = in_lo ? lo - base : hi - base, kb = in_hi ? hi - base : ka;
                two_ranks(ws->mid, c.between, ka, kb, &a, &b);
            }
            double va = lo < base ? p : lo < end ? a : q;
            double vb = hi < base ? p : hi < end ? b : q;
            out[r] = (va + vb) / 2;
            if (tries == 0 && w > 2)
                w--;
            break;
        }
    }
    return R;
}

/* A network kept for the chunks of one call, and how many one call keeps. */
typedef struct net {
    size_t m, np;
    unsigned char pair[NET_PAIRS][2];
} net;
#define NETS 4

/* The first earlier set with the heads of set s, or s. */
static size_t same_set(const ns_boot_sets *sets, size_t s)
{
    const size_t *idx = sets->idx + sets->start[s];
    size_t m = sets->start[s + 1] - sets->start[s];
    for (size_t t = 0; t < s; t++)
        if (sets->start[t + 1] - sets->start[t] == m &&
            !memcmp(sets->idx + sets->start[t], idx, m * sizeof *idx))
            return t;
    return s;
}

void ns_boot_set_medians(const double *x, size_t R, size_t H, const ns_boot_sets *sets,
                         ns_boot_batch_ws *ws, double *out)
{
    net nets[NETS];
    unsigned char pair[NET_PAIRS][2];
    size_t nnets = 0, cap = NS_BOOT_BATCH_MAX * R, lanes = NS_BOOT_BATCH_MAX, *from = ws->from;
    /* each set in turn; with ws->from, what the networks are left is done after, chunk by chunk
     * of replicates over every such set (a chunk's rows stay in the cache from set to set) */
    for (size_t s = 0; s < sets->nsets; s++) {
        const size_t *idx = sets->idx + sets->start[s];
        size_t m = sets->start[s + 1] - sets->start[s], f = R, same = same_set(sets, s);
        if (same < s && m > 0) { /* the heads of an earlier set (flat = all when none is sharp) */
            if (from)
                from[s] = SIZE_MAX; /* copied at the end */
            else
                memcpy(out + s * R, out + same * R, R * sizeof *out);
            continue;
        }
        if (m > NS_BOOT_BATCH_MAX && R >= NS_BOOT_SHARED_MIN_R) {
            f = shared_medians(x, R, H, idx, m, ws, out + s * R);
        } else if (m == 0 || m > NS_BOOT_BATCH_MAX) { /* the general path, replicate by replicate */
            ns_boot_sets one = {1, idx, (size_t[2]){0, m}};
            for (size_t r = 0; r < R; r++)
                ns_boot_set_stats(x + r * H, H, &one, 0, &ws->one, out + s * R + r);
        } else {
            f = 0;
        }
        size_t k = 0;
        while (k < nnets && nets[k].m != m)
            k++;
        if (f < R && from && k == nnets && nnets < NETS) {
            nets[nnets].m = m, nets[nnets].np = middle_network(m, nets[nnets].pair);
            nnets++;
        }
        if (f < R && (!from || k == NETS)) { /* now, set by set */
            net_medians(x, f, R, H, idx, m, (const unsigned char(*)[2])pair,
                        middle_network(m, pair), net_lanes(m, cap), ws, out + s * R);
            f = R;
        }
        if (f < R && net_lanes(m, cap) < lanes)
            lanes = net_lanes(m, cap);
        if (from)
            from[s] = f;
    }
    if (!from)
        return;
    for (size_t r0 = 0; r0 < R; r0 += lanes) {
        size_t r1 = R - r0 < lanes ? R : r0 + lanes;
        for (size_t s = 0; s < sets->nsets; s++) {
            if (from[s] >= r1)
                continue;
            size_t m = sets->start[s + 1] - sets->start[s], k = 0;
            while (nets[k].m != m)
                k++;
            net_medians(x, from[s] > r0 ? from[s] : r0, r1, H, sets->idx + sets->start[s], m,
                        (const unsigned char(*)[2])nets[k].pair, nets[k].np, lanes, ws,
                        out + s * R);
        }
    }
    for (size_t s = 0; s < sets->nsets; s++)
        if (from[s] == SIZE_MAX)
            memcpy(out + s * R, out + same_set(sets, s) * R, R * sizeof *out);
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

/* Sift h[i] down the heap h[0..n): a max-heap (max) or a min-heap. */
static void sift(double *h, size_t n, size_t i, int max)
{
    double v = h[i];
    for (;;) {
        size_t c = 2 * i + 1;
        if (c >= n)
            break;
        if (c + 1 < n && (max ? h[c + 1] > h[c] : h[c + 1] < h[c]))
            c++;
        if (!(max ? h[c] > v : h[c] < v))
            break;
        h[i] = h[c];
        i = c;
    }
    h[i] = v;
}

/* h[0..k) becomes a heap (max: a max-heap), then holds the k smallest (max) or largest of
 * h[0..m) (m >= k), in place: each later value beyond the heap's top goes in, the top out to
 * its place. Returns the top: the k-th smallest (max) or largest of h[0..m). */
static double heap_select(double *h, size_t m, size_t k, int max)
{
    for (size_t i = k / 2; i > 0; i--)
        sift(h, k, i - 1, max);
    for (size_t i = k; i < m; i++)
        if (max ? h[i] < h[0] : h[i] > h[0]) {
            double t = h[i];
            h[i] = h[0], h[0] = t;
            sift(h, k, 0, max);
        }
    return h[0];
}

void ns_boot_interval(double *reps, size_t B, size_t lo_rank, size_t hi_rank, double *lo,
                      double *hi)
{
    int negzero = 0;
    for (size_t b = 0; b < B; b++) {
        if (isnan(reps[b])) {
            *lo = *hi = NAN;
            return;
        }
        negzero |= reps[b] == 0.0 && signbit(reps[b]);
    }
    size_t k = lo_rank + 1, k2 = B - hi_rank;
    if (!negzero && k <= B / 16 && k2 <= B / 16) {
        /* the percentile ranks are near the ends: the k smallest in a max-heap at the front,
         * then the k2 largest of the rest in a min-heap after it (a pass each, few swaps) */
        *lo = heap_select(reps, B, k, 1);
        *hi = heap_select(reps + k, B - k, k2, 0);
        return;
    }
    /* any ranks, or a -0 (equal to +0 with other bits: the selection decides which comes out) */
    select_kth(reps, 0, B - 1, lo_rank);
    *lo = reps[lo_rank];
    select_kth(reps, lo_rank, B - 1, hi_rank);
    *hi = reps[hi_rank];
}

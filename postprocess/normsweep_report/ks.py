"""ks: the two-sample Kolmogorov-Smirnov test as the sweep computes it (scipy.stats.ks_2samp,
method 'auto', two-sided; docs/STATISTICS.md), in the form the bootstrap needs: the statistic of
integer-weighted samples in exact integer arithmetic, and the critical distance below which a
pair of sample sizes passes (p > alpha).

For sizes na, nb the statistic is D = k / (na nb) with k = max over the pooled values v of
|c_a(v) nb - c_b(v) na| (c: how many values of the sample are <= v), an integer; scipy rounds D
to h / lcm(na, nb), h = k / gcd(na, nb), and its exact p-value is non-increasing in h. So
"p > alpha" is "h < h*(na, nb, alpha)" with h* the smallest h whose p-value is <= alpha, found
once per pair of sizes by bisection.
"""
import math

import numpy as np

MAX_EXACT_N = 10000  # scipy's MAX_AUTO_N: the exact p-value up to this size, else asymptotic


def pvalue_exact(na, nb, h):
    """P(D >= h / lcm(na, nb)) for two independent samples of sizes na, nb from one continuous
    distribution: one minus the probability that a uniformly random interleaving (a lattice
    path from (0, 0) to (na, nb)) stays strictly inside |i nb - j na| < h gcd. Probabilities are
    carried along the anti-diagonals i + j = t, each a vector over i."""
    if h <= 0:
        return 1.0
    g = math.gcd(na, nb)
    limit = h * g
    prev = np.array([1.0])  # diagonal t = 0: the point (0, 0)
    for t in range(1, na + nb + 1):
        lo, hi = max(0, t - nb), min(t, na)
        i = np.arange(lo, hi + 1)
        j = t - i
        cur = np.zeros(i.size)
        plo = max(0, t - 1 - nb)  # first i of the previous diagonal
        # from (i - 1, j): an a-step, with probability (na - (i - 1)) / (na + nb - (t - 1))
        k = i - 1 - plo
        ok = (i >= 1) & (k >= 0) & (k < prev.size)
        cur[ok] += prev[k[ok]] * (na - i[ok] + 1) / (na + nb - t + 1)
        # from (i, j - 1): a b-step, with probability (nb - (j - 1)) / (na + nb - (t - 1))
        k = i - plo
        ok = (j >= 1) & (k >= 0) & (k < prev.size)
        cur[ok] += prev[k[ok]] * (nb - j[ok] + 1) / (na + nb - t + 1)
        cur[np.abs(i * nb - j * na) >= limit] = 0.0
        prev = cur
    return float(min(1.0, max(0.0, 1.0 - prev[-1])))


def pvalue(na, nb, h):
    """The two-sided p-value of D = h / lcm(na, nb) as scipy's ks_2samp(method='auto')."""
    if max(na, nb) <= MAX_EXACT_N:
        return pvalue_exact(na, nb, h)
    from scipy.stats import kstwo
    lcm = na // math.gcd(na, nb) * nb
    return float(kstwo.sf(h / lcm, round(na * nb / (na + nb))))


_CRIT = {}


def critical_h(na, nb, alpha):
    """The smallest h with p-value <= alpha (lcm + 1 when none: the test cannot reject)."""
    key = (na, nb, alpha)
    if key not in _CRIT:
        lcm = na // math.gcd(na, nb) * nb
        lo, hi = 1, lcm + 1  # p(lcm + 1) is taken as 0: the answer lies in [1, lcm + 1]
        while lo < hi:
            mid = (lo + hi) // 2
            if mid <= lcm and pvalue(na, nb, mid) > alpha:
                lo = mid + 1
            else:
                hi = mid
        _CRIT[key] = lo
    return _CRIT[key]


def can_reject(na, nb, alpha):
    return critical_h(na, nb, alpha) <= na // math.gcd(na, nb) * nb


def null_floor(na, nb):
    """The typical D of two samples from one distribution, 0.87 sqrt((na + nb) / (na nb)) (the
    mean of the Kolmogorov distribution, sqrt(pi / 2) ln 2 = 0.8687, at these sizes): the noise
    floor below which no estimate of D can go (docs/STATISTICS.md, equivalence margin)."""
    return 0.8687 * math.sqrt((na + nb) / (na * nb)) if na and nb else float("nan")


def critical_distance(na, nb, alpha):
    """The asymptotic critical distance c(alpha) sqrt((na + nb) / (na nb)), c(alpha) =
    sqrt(-ln(alpha / 2) / 2): the smallest D the test rejects at alpha (large samples)."""
    if not na or not nb:
        return float("inf")
    return math.sqrt(-math.log(alpha / 2) / 2) * math.sqrt((na + nb) / (na * nb))


def too_small(na, nb, alpha, d=0.5):
    """A sample too small for its test: it could not reject even a KS distance of d = 0.5 at
    alpha (critical_distance > d; at alpha = 0.01 and equal sizes, fewer than 22 rows). The same
    rule prints the end-of-run summary's warning (src/sweep/ns_sweep_reduce.c)."""
    return critical_distance(na, nb, alpha) > d


class PooledCell:
    """One cell's two samples (a: d, b: the reference), pooled and sorted once, so the statistic
    of any integer reweighting of the shards is a cumulative sum (docs/STATISTICS.md)."""

    def __init__(self, a, b, shard_of_sample):
        ok_a, ok_b = np.isfinite(a), np.isfinite(b)
        vals = np.concatenate([a[ok_a], b[ok_b]])
        side = np.concatenate([np.ones(ok_a.sum(), np.int64), -np.ones(ok_b.sum(), np.int64)])
        shard = np.concatenate([shard_of_sample[ok_a], shard_of_sample[ok_b]])
        order = np.argsort(vals, kind="stable")
        self.vals = vals[order]
        self.side = side[order]
        self.shard = shard[order]
        # evaluate only after the last of each group of equal values (scipy's side='right')
        self.ends = np.append(self.vals[1:] != self.vals[:-1], True) if self.vals.size else \
            np.zeros(0, bool)
        self.shard_a = shard_of_sample[ok_a]
        self.shard_b = shard_of_sample[ok_b]
        self.side = self.side.astype(np.int32)
        self.no_ties = bool(self.ends.all())
        self.paired = np.array_equal(np.sort(self.shard_a), np.sort(self.shard_b))

    def k_of(self, WT):
        """For each column b of WT (shards x resamples, the transposed multiplicity matrix,
        int32, C order): (k, na, nb), the integer statistic and the two weighted sample sizes."""
        na = WT[self.shard_a].sum(axis=0, dtype=np.int64)
        nb = WT[self.shard_b].sum(axis=0, dtype=np.int64)
        if self.vals.size == 0:
            return np.zeros(WT.shape[1], np.int64), na, nb
        w = WT[self.shard]  # (pooled values, resamples)
        if self.paired:
            # every shard holds as many a-values as b-values: na = nb, k = n max |c_a - c_b|
            c = np.cumsum(w * self.side[:, None], axis=0, dtype=np.int32)
            if not self.no_ties:
                c = c[self.ends]
            return np.abs(c).max(axis=0).astype(np.int64) * na, na, nb
        ca = np.cumsum(np.where(self.side[:, None] > 0, w, 0), axis=0, dtype=np.int64)
        cb = np.cumsum(np.where(self.side[:, None] < 0, w, 0), axis=0, dtype=np.int64)
        if not self.no_ties:
            ca, cb = ca[self.ends], cb[self.ends]
        return np.abs(ca * nb[None] - cb * na[None]).max(axis=0), na, nb


def statistic(k, na, nb):
    """D = k / (na nb), NaN when a sample is empty."""
    k, na, nb = (np.asarray(x, dtype=np.int64) for x in (k, na, nb))
    den = na * nb
    return np.where(den > 0, k / np.where(den > 0, den, 1), np.nan)


def passes(k, na, nb, alpha):
    """p > alpha for each (k, na, nb): h = k / gcd(na, nb) below the critical h of the sizes;
    False where a sample is empty (an empty cell never passes, as ns_n_crit)."""
    out = np.zeros(np.shape(k), bool)
    for idx in np.ndindex(*np.shape(k)):
        a, b = int(na[idx]), int(nb[idx])
        if a and b:
            out[idx] = int(k[idx]) // math.gcd(a, b) < critical_h(a, b, alpha)
    return out


def passes_fast(k, na, nb, alpha):
    """passes() for arrays, with one critical value per distinct pair of sizes."""
    k, na, nb = (np.asarray(x, dtype=np.int64) for x in (k, na, nb))
    out = np.zeros(k.shape, bool)
    pairs = np.unique(np.stack([na.ravel(), nb.ravel()], axis=1), axis=0)
    for a, b in pairs:
        if a == 0 or b == 0:
            continue
        sel = (na == a) & (nb == b)
        g = math.gcd(int(a), int(b))
        out[sel] = k[sel] // g < critical_h(int(a), int(b), alpha)
    return out

"""bootstrap: the shard (block) bootstrap of docs/STATISTICS.md, the Python reference.

Resample b (0 <= b < B) draws n_shards shards with replacement from the counter-based generator
keyed (TAG_BOOTSTRAP, seed, b); shard s then counts W[b, s] times (its multiplicity), and every
row of a shard goes with it. The same W serves every cell, head, layer, L, T and N of the file,
so the statistics of one resample are computed on one and the same resampled corpus.

Arithmetic is fixed so another implementation gives the same bits: a per-head mean is
(sum over shards s in index order of W[b, s] * S_s) / (sum over s of W[b, s] * n_s), where S_s
is the sum of the shard's non-missing values in row order and n_s their count; a per-head maximum
is the largest shard maximum among the shards drawn; medians over heads and interval endpoints
are order statistics (the median of an even count is the mean of the middle two).
"""
import numpy as np

from . import rng

DEFAULT_RESAMPLES = 2000
MIN_RESAMPLES = 1000
LEVEL = 0.95


def multiplicities(seed, n_shards, resamples, with_full=False):
    """W[b, s]: how often shard s is drawn in resample b (int64, resamples x n_shards); with
    with_full, a first row of ones (the full sample) before the resamples."""
    W = np.zeros((resamples, n_shards), np.int64)
    for b in range(resamples):
        draws = _draws_vector(seed, b, n_shards)
        np.add.at(W[b], draws, 1)
    if with_full:
        W = np.vstack([np.ones((1, n_shards), np.int64), W])
    return W


def _draws_vector(seed, b, n):
    """rng.bootstrap_draws(seed, b, n), vectorized over the n draws; a resample in which a draw
    is rejected (probability about n / 2^64 per draw) is redone by the scalar generator."""
    k = np.uint64(rng.key((rng.TAG_BOOTSTRAP, seed, b)))
    with np.errstate(over="ignore"):
        ctr = np.arange(1, n + 1, dtype=np.uint64)
        x = k + ctr * np.uint64(rng.GAMMA)
        x = (x ^ (x >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
        x = (x ^ (x >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
        x = x ^ (x >> np.uint64(31))
    limit = rng.MASK - (rng.MASK % n + 1) % n
    if limit < rng.MASK and np.any(x > np.uint64(limit)):
        return np.array(rng.bootstrap_draws(seed, b, n), np.int64)
    return (x % np.uint64(n)).astype(np.int64)


def shard_sums(values, shard_of_sample, n_shards):
    """Per-shard sums (row order) and counts of the non-missing values: values has the sample
    axis last; returns (S, n) of shape (n_shards,) + values.shape[:-1]."""
    shape = values.shape[:-1]
    S = np.zeros((n_shards,) + shape)
    n = np.zeros((n_shards,) + shape, np.int64)
    for j, s in enumerate(shard_of_sample):
        x = values[..., j]
        ok = ~np.isnan(x)
        S[s] += np.where(ok, x, 0.0)
        n[s] += ok
    return S, n


def shard_max(values, shard_of_sample, n_shards):
    """Per-shard maxima of the non-missing values (-inf for a shard without one)."""
    M = np.full((n_shards,) + values.shape[:-1], -np.inf)
    for j, s in enumerate(shard_of_sample):
        x = values[..., j]
        M[s] = np.where(np.isnan(x), M[s], np.maximum(M[s], x))
    return M


def means(values, shard_of_sample, W):
    """The per-cell mean over rows for each row of W (resampled multiplicities; a row of ones is
    the full sample): values' shape less the sample axis, with a leading axis over W's rows."""
    S, n = shard_sums(values, shard_of_sample, W.shape[1])
    return _weighted_mean(S, n, W)


def _weighted_mean(S, n, W):
    """(sum over s in index order of W[:, s] * S[s]) / (W @ n), NaN where the count is 0. The
    counts are integers (exact in any order); the sum runs shard by shard, so its rounding is
    the one the specification fixes. A shard drawn 0 times adds nothing, even an infinite sum."""
    B = W.shape[0]
    flat = S.reshape(S.shape[0], -1)
    cnt = (W.astype(float) @ n.reshape(n.shape[0], -1).astype(float)).reshape((B,) + S.shape[1:])
    tot = np.zeros((B, flat.shape[1]))
    Wf = W.astype(float)
    finite = np.isfinite(flat).all(axis=1)
    with np.errstate(invalid="ignore", divide="ignore"):
        for c0 in range(0, flat.shape[1], CHUNK):  # a block of cells stays in cache
            tc = np.zeros((B, min(CHUNK, flat.shape[1] - c0)))
            tmp = np.empty_like(tc)
            for s in range(flat.shape[0]):
                np.multiply(Wf[:, s, None], flat[s, c0:c0 + CHUNK][None], out=tmp)
                if not finite[s]:
                    tmp[W[:, s] == 0] = 0.0
                tc += tmp
            tot[:, c0:c0 + CHUNK] = tc
        tot = tot.reshape((B,) + S.shape[1:])
        return np.where(cnt > 0, tot / np.where(cnt > 0, cnt, 1), np.nan)


CHUNK = 64


def maxima(values, shard_of_sample, W):
    """The per-cell maximum over rows for each row of W: the largest maximum among the shards
    drawn (multiplicity > 0); NaN where no drawn shard has a value."""
    M = shard_max(values, shard_of_sample, W.shape[1])
    reps = np.full((W.shape[0],) + M.shape[1:], -np.inf)
    for s in range(M.shape[0]):
        drawn = (W[:, s] > 0).reshape((-1,) + (1,) * (M.ndim - 1))
        reps = np.where(drawn, np.maximum(reps, M[s]), reps)
    return np.where(np.isneginf(reps), np.nan, reps)


def median_last(x, mask=None):
    """Median over the last axis of the non-NaN values where mask is True (mask broadcastable
    to x); NaN where none. Even counts: (x_(m-1) + x_(m)) / 2 of the sorted values, m = c / 2;
    +inf sorts above every number (a censored value)."""
    x = np.asarray(x, dtype=float)
    if mask is not None:
        x = np.where(np.broadcast_to(mask, x.shape), x, np.nan)
    s = np.sort(x, axis=-1)  # NaN last
    c = np.sum(~np.isnan(s), axis=-1)
    lo = np.clip((c - 1) // 2, 0, None)
    hi = np.clip(c // 2, 0, s.shape[-1] - 1)
    a = np.take_along_axis(s, lo[..., None], -1)[..., 0]
    b = np.take_along_axis(s, hi[..., None], -1)[..., 0]
    with np.errstate(invalid="ignore"):
        m = (a + b) / 2
    return np.where(c > 0, m, np.nan)


def interval_ranks(resamples, level=LEVEL):
    """The 0-based order statistics of the percentile interval: k - 1 and B - k, with
    k = floor((1 - level) / 2 * B) (for B = 2000: the 50th smallest and the 50th largest)."""
    k = int(np.floor((1 - level) / 2 * resamples + 1e-9))
    if k < 1:
        raise ValueError("too few resamples for a %g interval" % level)
    return k - 1, resamples - k


def mc_ranks(resamples, level=LEVEL):
    """The ranks 1.96 binomial standard deviations either side of each endpoint's rank: the
    range in which the endpoint of another set of B resamples falls 95 % of the time."""
    lo_r, hi_r = interval_ranks(resamples, level)
    p = (lo_r + 1) / resamples
    d = int(np.ceil(1.96 * np.sqrt(resamples * p * (1 - p))))
    return (max(lo_r - d, 0), min(lo_r + d, resamples - 1),
            max(hi_r - d, 0), min(hi_r + d, resamples - 1))


def interval(reps, level=LEVEL):
    """The percentile interval over the leading resample axis and the Monte Carlo error of each
    endpoint (half the spread between the order statistics of mc_ranks): (lo, hi, mc_lo, mc_hi),
    all NaN where a replicate is NaN."""
    B = reps.shape[0]
    lo_r, hi_r = interval_ranks(B, level)
    a1, a2, b1, b2 = mc_ranks(B, level)
    ranks = sorted({lo_r, hi_r, a1, a2, b1, b2})
    part = np.partition(reps, ranks, axis=0)
    bad = np.any(np.isnan(reps), axis=0)
    def at(r):
        return np.where(bad, np.nan, part[r])
    with np.errstate(invalid="ignore"):
        return at(lo_r), at(hi_r), (at(a2) - at(a1)) / 2, (at(b2) - at(b1)) / 2


def percentile_interval(reps, level=LEVEL):
    """(ci_low, ci_high) over the leading resample axis; NaN where any replicate is NaN."""
    return interval(reps, level)[:2]

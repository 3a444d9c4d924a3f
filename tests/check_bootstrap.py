#!/usr/bin/python3
"""check_bootstrap: the report's shard bootstrap (postprocess/normsweep_report: vectorized)
against a plain reimplementation written here from docs/STATISTICS.md alone -- loops, lists and
Python integers, its own SplitMix64, the KS statistic by counting and its p-value from
scipy.stats.ks_2samp on the expanded resample -- on a small hand-made file
(tests/report_fixture.py). The same draws must give the same intervals, bit for bit: every
endpoint of every statistic checked is compared with ==.

    check_bootstrap.py POSTPROCESS_DIR WORK_DIR"""
import math
import os
import sys

import numpy as np
import netCDF4
from scipy.stats import ks_2samp

sys.path.insert(0, sys.argv[1])
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import report_fixture  # noqa: E402
from normsweep_report import load, stats  # noqa: E402

B = 1000
M64 = (1 << 64) - 1
G = 0x9E3779B97F4A7C15


# ---- the generator, from src/analysis/ns_rng.c's definition ----
def mix(x):
    x &= M64
    x ^= x >> 30
    x = (x * 0xBF58476D1CE4E5B9) & M64
    x ^= x >> 27
    x = (x * 0x94D049BB133111EB) & M64
    return x ^ (x >> 31)


def key(words):
    h = mix(0x6E6F726D73776565 + len(words) * G)
    for i in range(len(words)):
        h = mix(h ^ mix(words[i] + (i + 1) * G))
    return h


def resample(seed, b, S):
    """Multiplicities of resample b: S draws below(S) from the stream (tag "bootstrp", seed, b)."""
    k, ctr, w = key([0x626F6F7473747270, seed, b]), 0, [0] * S
    limit = M64 - (M64 % S + 1) % S
    for _ in range(S):
        while True:
            ctr += 1
            x = mix(k + ctr * G)
            if x <= limit:
                break
        w[x % S] += 1
    return w


# ---- statistics, by their written definitions ----
def head_mean(vals, shard_of, w):
    S = len(w)
    sums, cnts = [0.0] * S, [0] * S
    for j in range(len(vals)):
        if not math.isnan(vals[j]):
            sums[shard_of[j]] += vals[j]
            cnts[shard_of[j]] += 1
    tot, cnt = 0.0, 0
    for s in range(S):
        if w[s]:
            tot += w[s] * sums[s]
            cnt += w[s] * cnts[s]
    return tot / cnt if cnt else math.nan


def head_max(vals, shard_of, w):
    m = -math.inf
    for j in range(len(vals)):
        if w[shard_of[j]] and not math.isnan(vals[j]):
            m = max(m, vals[j])
    return m if m > -math.inf else math.nan


def median(xs):
    xs = sorted(x for x in xs if not math.isnan(x))
    if not xs:
        return math.nan
    c = len(xs)
    return (xs[(c - 1) // 2] + xs[c // 2]) / 2


def expand(vals, shard_of, w):
    out = []
    for j in range(len(vals)):
        if not math.isnan(vals[j]):
            out += [vals[j]] * w[shard_of[j]]
    return out


def ks_D(a, b):
    """(D, passes-or-None): D = max over pooled v of |#a<=v nb - #b<=v na| / (na nb)."""
    if not a or not b:
        return math.nan
    na, nb, k = len(a), len(b), 0
    for v in set(a) | set(b):
        ca = sum(1 for x in a if x <= v)
        cb = sum(1 for x in b if x <= v)
        k = max(k, abs(ca * nb - cb * na))
    return k / (na * nb)


def slope(xs, ys):
    u = [math.log(x) for x in xs]
    v = [math.log(y) for y in ys]
    su = sv = 0.0
    for i in range(len(u)):
        su += u[i]
        sv += v[i]
    ub, vb = su / len(u), sv / len(u)
    num = den = 0.0
    for i in range(len(u)):
        num += (u[i] - ub) * (v[i] - vb)
        den += (u[i] - ub) * (u[i] - ub)
    return num / den


def interval(reps):
    if any(math.isnan(x) for x in reps):
        return math.nan, math.nan
    s = sorted(reps)
    k = int(math.floor(0.025 * len(s) + 1e-9))
    return s[k - 1], s[len(s) - k]


def main(post, work):
    path = report_fixture.write(os.path.join(work, "fixture.nc"), file_seed=3)
    ds = netCDF4.Dataset(path)
    ds.set_auto_mask(False)
    g = {k: np.array(ds[k][:]) for k in ("L", "N", "T", "sample_shard")}
    sam = {k: np.array(ds[k + "_sample"][:], float) for k in
           ("distance", "distance_expected", "distance_bound", "ns_frac", "ns_upper", "jac_exact")}
    ent = np.array(ds["entropy_norm_mean"][:], float)
    alpha, seed, S = float(ds.ks_alpha), int(ds.seed), ds.dimensions["shard"].size
    ds.close()
    L, N, T, shard_of = [int(x) for x in g["L"]], [int(x) for x in g["N"]], list(g["T"]), \
        [int(x) for x in g["sample_shard"]]
    nL, nT, nN = len(L), len(T), len(N)
    nl, nh = sam["distance"].shape[4], sam["distance"].shape[5]
    heads = [(l, h) for l in range(nl) for h in range(nh)]
    run = load.Run(path)
    comp = stats.Computed(run, 0, resamples=B, t_ks=range(nT))
    st = comp.stats
    problems = []

    def same(name, idx, lo, hi):
        a, b = float(st[name].lo[idx]), float(st[name].hi[idx])
        ok = (a == lo or (math.isnan(a) and math.isnan(lo))) and \
            (b == hi or (math.isnan(b) and math.isnan(hi)))
        if not ok:
            problems.append("%s%s: report [%r, %r], plain [%r, %r]" % (name, idx, a, b, lo, hi))
        return ok

    ws = [resample(seed, b, S) for b in range(B)]
    # head sets: every head, the sharp heads (entropy_norm mean < 0.5 at L, T), layer 0
    def members(set_name, li, ti):
        if set_name == "all":
            return heads
        if set_name == "sharp":
            return [(l, h) for l, h in heads if ent[0, li, ti, l, h] < 0.5]
        return [(l, h) for l, h in heads if l == 0]
    cache = {}

    def ks_head(li, ti, l, h):
        """Per resample: D at every N, and the head's n_crit / L as (lower, upper]."""
        if (li, ti, l, h) in cache:
            return cache[li, ti, l, h]
        Ds, lo_, hi_ = [], [], []
        for w in ws:
            first, last_tested, d_ = None, None, []
            for ni in range(nN):
                a = expand(sam["distance"][0, li, ti, ni, l, h], shard_of, w)
                e = expand(sam["distance_expected"][0, li, ti, ni, l, h], shard_of, w)
                d_.append(ks_D(a, e))
                if a and e:
                    last_tested = N[ni]
                    if first is None and ks_2samp(a, e).pvalue > alpha:
                        first = ni
            Ds.append(d_)
            if first is not None:
                hi_.append(N[first] / L[li])
                lo_.append((N[first - 1] if first > 0 else 0) / L[li])
            elif last_tested is not None:
                hi_.append(math.inf)
                lo_.append(last_tested / L[li])
            else:
                hi_.append(math.nan)
                lo_.append(math.nan)
        cache[li, ti, l, h] = (Ds, lo_, hi_)
        return cache[li, ti, l, h]
    checked = 0
    for set_name in ("all", "sharp", "layer 0"):
        si = comp.sets.index(set_name)
        for li in range(nL):
            for ti in range(nT):
                hs = members(set_name, li, ti)
                # per-cell medians over heads of per-head means, and of the Theorem 2 gap
                for ni in range(nN):
                    for stem in ("distance", "ns_frac"):
                        reps = [median([head_mean(sam[stem][0, li, ti, ni, l, h], shard_of, w)
                                        for l, h in hs]) for w in ws]
                        same(stem + "_mean_hmedian", (li, ti, ni, si), *interval(reps))
                        checked += 1
                    reps = [median([head_mean(sam["ns_frac"][0, li, ti, ni, l, h], shard_of, w) -
                                    head_mean(sam["ns_upper"][0, li, ti, ni, l, h], shard_of, w)
                                    for l, h in hs]) for w in ws]
                    same("ns_upper_gap_hmedian", (li, ti, ni, si), *interval(reps))
                    checked += 1
                # the largest jac_exact over the set's heads and rows
                reps = []
                for w in ws:
                    m = [head_max(sam["jac_exact"][0, li, ti, l, h], shard_of, w) for l, h in hs]
                    m = [x for x in m if not math.isnan(x)]
                    reps.append(max(m) if m else math.nan)
                same("jac_exact_max_hmax", (li, ti, si), *interval(reps))
                # KS distance and the paper's n_crit read on the grid, per head, per resample
                per = [ks_head(li, ti, l, h) for l, h in hs]
                for ni in range(nN):
                    same("ks_expected_statistic_hmedian", (li, ti, ni, si),
                         *interval([median([p[0][b][ni] for p in per]) for b in range(B)]))
                same("n_crit_expected_frac_hmedian", (li, ti, si),
                     *interval([median([p[2][b] for p in per]) for b in range(B)]))
                same("n_crit_expected_frac_lower_hmedian", (li, ti, si),
                     *interval([median([p[1][b] for p in per]) for b in range(B)]))
                checked += nN + 2
        # the log-log slope of the distance against L at every N, every T
        for ti in range(nT):
            for ni in range(nN):
                Ls = [li for li in range(nL) if L[li] > N[ni]]
                if len(Ls) < 2:
                    continue
                reps = []
                for w in ws:
                    ys = [median([head_mean(sam["distance"][0, li, ti, ni, l, h], shard_of, w)
                                  for l, h in members(set_name, li, ti)]) for li in Ls]
                    reps.append(slope([L[li] for li in Ls], ys))
                same("distance_L_slope", (ti, ni, si), *interval(reps))
                checked += 1
    # the estimate of a statistic is the same formula on the full sample (every shard once)
    ones = [1] * S
    e = median([head_mean(sam["distance"][0, 0, 0, 0, l, h], shard_of, ones) for l, h in heads])
    if float(st["distance_mean_hmedian"].est[0, 0, 0, 0]) != e:
        problems.append("estimate %r, plain %r" % (float(st["distance_mean_hmedian"].est[0, 0, 0, 0]), e))
    for p in problems[:20]:
        print("check_bootstrap:", p)
    print("check_bootstrap: %d intervals compared (B = %d, %d shards), %d differ"
          % (checked, B, S, len(problems)))
    return 1 if problems or checked < 50 else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1], sys.argv[2]))

"""stats: every statistic a verdict, a headline number or a figure of the report uses, with its
95 % shard-bootstrap interval (docs/STATISTICS.md, "What gets an interval").

Three sources, in this order: the per-row samples of the file (keep_samples: true; the Python
reference bootstrap of bootstrap.py), the intervals the reduction wrote into the file
(NAME_ci_low / NAME_ci_high), or neither (point estimates from the reduced statistics, no
interval). Arrays carry a leading "replicate" axis: index 0 is the estimate (the full sample,
every shard once), 1..B the resamples, so every statistic is one formula applied to all of them.
"""
import math

import numpy as np

from . import bootstrap, ks

_LIBM_LOG = np.frompyfunc(math.log, 1, 1)


def clog(x):
    """The natural logarithm by the C library's log() (math.log), element by element: numpy's own
    vectorized log may differ from it in the last bit, and the specification's slopes are defined
    with the C library's (so the C reduction gives the same bits). NaN for x <= 0 or NaN."""
    x = np.asarray(x, dtype=float)
    ok = np.isfinite(x) & (x > 0)
    out = np.full(x.shape, np.nan)
    if ok.any():
        out[ok] = _LIBM_LOG(x[ok]).astype(float)
    out[np.isposinf(x)] = np.inf
    return out

STEMS_N = ("distance", "distance_expected", "distance_random", "distance_bound", "ns_frac",
           "ns_upper", "ns_lower")
TESTS = ("expected", "random")
SHARP_BELOW = 0.5      # a head is sharp at (L, T) when its mean entropy / log L is below this
PLATEAU_SPLIT = 20     # Fig. 2a: "increasing N beyond 20 yields diminishing returns"


class Stat:
    """One named statistic: estimate and interval arrays of dims `dims`, where the interval came
    from (`source`: bootstrap, file or none) and the Monte Carlo error of each endpoint."""

    def __init__(self, name, dims, est, lo=None, hi=None, mc=None, source="none"):
        self.name, self.dims, self.est = name, dims, np.asarray(est, dtype=float)
        def nan():
            return np.full(self.est.shape, np.nan)
        self.lo = nan() if lo is None else np.asarray(lo, dtype=float)
        self.hi = nan() if hi is None else np.asarray(hi, dtype=float)
        self.mc = mc if mc is not None else (nan(), nan())
        self.source = source


class Sets:
    """The head sets every statistic is aggregated over: all heads, the sharp and the flat ones
    (at each (L, T), by the head's mean entropy_norm), and each layer's heads."""

    def __init__(self, run, ni):
        H = len(run.layers) * len(run.heads)
        ent = run["entropy_norm_mean"][ni].reshape(len(run.L), len(run.T), H)
        self.entropy = ent
        shape = ent.shape
        masks = [np.ones(shape, bool), ent < SHARP_BELOW, ent >= SHARP_BELOW]
        names = ["all", "sharp", "flat"]
        for k, layer in enumerate(run.layers):
            m = np.zeros(shape, bool)
            m[..., k * len(run.heads):(k + 1) * len(run.heads)] = True
            masks.append(m)
            names.append("layer %d" % layer)
        self.names = names
        self.mask = np.stack(masks)  # (sets, L, T, H)

    def index(self, name):
        return self.names.index(name)


def aggregate(x, mask_L, how="median"):
    """x: (R, T, [N,] H) for one L; mask_L: (sets, T, H). Returns (R, T, [N,] sets): the median
    (or maximum) over each set's heads."""
    out = []
    for k in range(mask_L.shape[0]):
        m = mask_L[k][:, None, :] if x.ndim == 4 else mask_L[k]
        m = m[None]
        cols = np.flatnonzero(mask_L[k].any(axis=0))
        if cols.size and mask_L[k][:, cols].all():
            # a fixed set of heads (a layer, or every head): its columns alone
            xs = x[..., cols]
            if how == "median":
                out.append(bootstrap.median_last(xs))
            else:
                y = np.where(np.isnan(xs), -np.inf, xs).max(axis=-1)
                out.append(np.where(np.isneginf(y), np.nan, y))
            continue
        if how == "median":
            out.append(bootstrap.median_last(x, m))
        else:
            y = np.where(np.broadcast_to(m, x.shape) & ~np.isnan(x), x, -np.inf).max(axis=-1)
            out.append(np.where(np.isneginf(y), np.nan, y))
    return np.stack(out, axis=-1)


def censored_ncrit(passed, computable, N, L):
    """The paper's n_crit on the grid as an interval (lower, upper] of n_crit / L, per head:
    the first N that passes gives upper = N / L and lower = the grid's previous N / L (0 at the
    first N); no N passes: (largest computable N / L, +inf); nothing computable: NaN, NaN.
    passed, computable: (..., N) booleans."""
    nN = len(N)
    first = np.where(passed.any(axis=-1), passed.argmax(axis=-1), nN)
    anyc = computable.any(axis=-1)
    lastc = np.where(anyc, nN - 1 - computable[..., ::-1].argmax(axis=-1), 0)
    Nf = np.append(np.asarray(N, float), np.inf)
    upper = Nf[first] / L
    prev = np.where(first > 0, Nf[np.maximum(first - 1, 0)], 0.0)
    lower = np.where(first < nN, prev, Nf[lastc]) / L
    return np.where(anyc, lower, np.nan), np.where(anyc, upper, np.nan)


def loglog_slope(x, y, sel):
    """Least-squares slope of log y against log x over the points where sel (from the estimate)
    holds: y (R, ..., m), x (m,), sel (..., m). Sums run over the points in grid order; NaN with
    fewer than two points or where a replicate's y is not positive and finite."""
    u = clog(np.asarray(x, float))
    v = clog(y)
    m = sel.sum(axis=-1)
    su = np.zeros(sel.shape[:-1])
    sv = np.zeros(y.shape[:-1])
    for j in range(len(u)):
        su = su + np.where(sel[..., j], u[j], 0.0)
        sv = sv + np.where(sel[..., j], v[..., j], 0.0)
    with np.errstate(divide="ignore", invalid="ignore"):
        ub, vb = su / m, sv / m
        num = np.zeros(y.shape[:-1])
        den = np.zeros(sel.shape[:-1])
        for j in range(len(u)):
            du = u[j] - ub
            num = num + np.where(sel[..., j], du * (v[..., j] - vb), 0.0)
            den = den + np.where(sel[..., j], du * du, 0.0)
        s = num / den
    return np.where((m >= 2) & np.isfinite(s), s, np.nan)


# Statistics with intervals at every temperature; every other one of the catalogue has them only
# at the claims' temperatures (claim_T), its estimate alone elsewhere: the C reduction's rule
# (analysis/ns_intervals.h, docs/STATISTICS.md "What gets an interval").
EVERY_T = ("entropy_norm", "jac_exact_max", "jac_exact_T_slope")


def claim_T(T):
    """Grid indices of the claims' temperatures: T_ref, the T nearest 1 in log (the first of a
    tie), and its neighbours on the grid."""
    T = np.asarray(T, float)
    ti = int(np.argmin(np.abs(np.log(T))))
    return [t for t in (ti - 1, ti, ti + 1) if 0 <= t < len(T)]


def plateau_points(N, L):
    """(N_a, N_b) indices at context length L: the largest grid N <= 20 and the largest grid
    N > 20 below L (None when the grid has no such N)."""
    a = [k for k, n in enumerate(N) if n <= PLATEAU_SPLIT and n < L]
    b = [k for k, n in enumerate(N) if PLATEAU_SPLIT < n < L]
    return (a[-1] if a else None), (b[-1] if b else None)


class Computed:
    """Per-L per-head arrays reduced to head-set aggregates over every replicate, then the derived
    statistics; `stats` maps each catalogue name to a Stat."""

    def __init__(self, run, ni, resamples=None, t_ks=None, progress=None, use_file_intervals=True):
        self.run, self.ni = run, ni
        self.sets = Sets(run, ni)
        nL, nT, nN = len(run.L), len(run.T), len(run.N)
        self.H = len(run.layers) * len(run.heads)
        self.t_ks = list(range(nT)) if t_ks is None else list(t_ks)
        self.samples = bool(resamples) and run.has_samples()
        self.W = None
        if self.samples:
            self.W = bootstrap.multiplicities(run.seed, run.n_shards, resamples, with_full=True)
            self.WT = np.ascontiguousarray(self.W.T.astype(np.int32))
        R = self.W.shape[0] if self.samples else 1
        S = len(self.sets.names)
        self.agg = {}
        for stem in STEMS_N:
            self.agg[stem] = np.full((R, nL, nT, nN, S), np.nan)
        for name in ("ns_upper_gap", "ns_lower_gap"):
            self.agg[name] = np.full((R, nL, nT, nN, S), np.nan)
        self.agg["jac_exact_max"] = np.full((R, nL, nT, S), np.nan)
        self.agg["entropy_norm"] = np.full((R, nL, nT, S), np.nan)
        for t in TESTS:
            self.agg["D_" + t] = np.full((R, nL, nT, nN, S), np.nan)
            self.agg["ncrit_lo_" + t] = np.full((R, nL, nT, S), np.nan)
            self.agg["ncrit_hi_" + t] = np.full((R, nL, nT, S), np.nan)
        # per-head point estimates (figures) with dims (L, T, [N,] H)
        self.head = {}
        for li in range(nL):
            if progress:
                progress("L = %d" % run.L[li])
            h, reps = self._per_head(li)
            for k, v in h.items():
                self.head.setdefault(k, np.full((nL,) + v.shape[1:], np.nan))[li] = v[0]
            mask_L = self.sets.mask[:, li]
            for k, v in reps.items():
                how = "max" if k == "jac_exact_max" else "median"
                self.agg[k][:, li] = aggregate(v, mask_L, how)
        self._derive()
        self.stats = self._intervals(use_file_intervals)

    # ---- per-head values of one L over every replicate ----
    def _per_head(self, li):
        run, ni, H = self.run, self.ni, self.H
        nT, nN = len(run.T), len(run.N)
        out = {}
        if self.samples:
            shard = run.sample_shard()
            for stem in STEMS_N:
                x = run.sample(stem, ni, li).reshape(nT, nN, H, -1)
                out[stem] = bootstrap.means(x, shard, self.W)
            jx = run.sample("jac_exact", ni, li).reshape(nT, H, -1)
            out["jac_exact_max"] = bootstrap.maxima(jx, shard, self.W)
            en = run.sample("entropy_norm", ni, li).reshape(nT, H, -1)
            out["entropy_norm"] = bootstrap.means(en, shard, self.W)
            self._ks(li, shard, out)
        else:
            for stem in STEMS_N:
                out[stem] = run[stem + "_mean"][ni, li].reshape(1, nT, nN, H)
            out["jac_exact_max"] = run["jac_exact_max"][ni, li].reshape(1, nT, H)
            out["entropy_norm"] = run["entropy_norm_mean"][ni, li].reshape(1, nT, H)
            for t in TESTS:
                out["D_" + t] = run["ks_%s_statistic" % t][ni, li].reshape(1, nT, nN, H)
                nc = run["n_crit_" + t][ni, li].reshape(1, nT, H)
                lo, hi = self._from_ncrit(nc, li)
                out["ncrit_lo_" + t], out["ncrit_hi_" + t] = lo, hi
        out["ns_upper_gap"] = out["ns_frac"] - out["ns_upper"]
        out["ns_lower_gap"] = out["ns_frac"] - out["ns_lower"]
        return out, out

    def _from_ncrit(self, nc, li):
        """The file's n_crit (N, 0 = none, NaN = not computable) as censored (lower, upper]."""
        run = self.run
        N = run.N
        lastc = N[N < run.L[li]].max() if (N < run.L[li]).any() else np.nan
        upper = np.where(nc >= 1, nc / run.L[li], np.where(nc == 0, np.inf, np.nan))
        prev = np.zeros(nc.shape)
        for k in range(1, len(N)):
            prev = np.where(nc == N[k], N[k - 1], prev)
        lower = np.where(nc >= 1, prev / run.L[li], np.where(nc == 0, lastc / run.L[li], np.nan))
        return lower, upper

    def _ks(self, li, shard, out):
        """D of both tests and the censored n_crit, per head, at the temperatures t_ks."""
        run, ni, H = self.run, self.ni, self.H
        nT, nN, R = len(run.T), len(run.N), self.W.shape[0]
        d = run.sample("distance", ni, li).reshape(nT, nN, H, -1)
        for t in TESTS:
            ref = run.sample("distance_" + t, ni, li).reshape(nT, nN, H, -1)
            D = np.full((R, nT, nN, H), np.nan)
            lo = np.full((R, nT, H), np.nan)
            hi = np.full((R, nT, H), np.nan)
            for ti in self.t_ks:
                K = np.zeros((R, nN, H), np.int64)
                NA = np.zeros((R, nN, H), np.int64)
                NB = np.zeros((R, nN, H), np.int64)
                for n in range(nN):
                    for h in range(H):
                        cell = ks.PooledCell(d[ti, n, h], ref[ti, n, h], shard)
                        K[:, n, h], NA[:, n, h], NB[:, n, h] = cell.k_of(self.WT)
                D[:, ti] = ks.statistic(K, NA, NB)
                passed = ks.passes_fast(K, NA, NB, run.ks_alpha)
                comp = (NA > 0) & (NB > 0)
                l_, h_ = censored_ncrit(np.moveaxis(passed, 1, -1), np.moveaxis(comp, 1, -1),
                                        run.N, run.L[li])
                lo[:, ti], hi[:, ti] = l_, h_
            out["D_" + t] = D
            out["ncrit_lo_" + t], out["ncrit_hi_" + t] = lo, hi

    # ---- statistics across cells: slopes and changes, on every replicate ----
    def _derive(self):
        run, a = self.run, self.agg
        L, N, T = run.L, run.N, run.T
        R, nL, nT, nN, S = a["distance"].shape
        self.derived = {}
        for stem in ("distance", "distance_expected"):
            y = np.moveaxis(a[stem], 1, -1)  # (R, T, N, S, L)
            sel = np.isfinite(y[0]) & (y[0] > 0) & (L[None, None, None, :] > N[None, :, None, None])
            a[stem + "_L_slope"] = loglog_slope(L, y, sel)  # (R, T, N, S)
        plat = np.full((R, nL, nT, S), np.nan)
        tight = np.full((R, nL, nT, S), np.nan)
        for li in range(nL):
            ka, kb = plateau_points(N, L[li])
            if ka is None or kb is None:
                continue
            d, b = a["distance"][:, li], a["distance_bound"][:, li]
            with np.errstate(divide="ignore", invalid="ignore"):
                plat[:, li] = (clog(d[:, :, kb]) - clog(d[:, :, ka])) / \
                    (math.log(N[kb]) - math.log(N[ka]))
                tight[:, li] = (clog(b[:, :, kb] / d[:, :, kb]) -
                                clog(b[:, :, ka] / d[:, :, ka]))
        a["distance_N_plateau_slope"] = plat
        a["bound_ratio_N_change"] = tight
        tref = int(np.argmin(np.abs(np.log(T))))
        tsel = T <= T[tref]
        y = np.moveaxis(a["jac_exact_max"], 2, -1)  # (R, L, S, T)
        sel = np.isfinite(y[0]) & (y[0] > 0) & tsel
        a["jac_exact_T_slope"] = loglog_slope(T, y, sel)  # (R, L, S)

    def _intervals(self, use_file):
        out = {}
        dims = {2: ("L", "T", "set"), 3: ("L", "T", "N", "set")}
        for name, v in self.agg.items():
            nm = CATALOGUE_NAME.get(name, name)
            d = CATALOGUE_DIMS.get(name) or dims.get(v.ndim - 2, ())
            if v.shape[0] > 1:
                lo, hi, mlo, mhi = bootstrap.interval(v[1:])
                if name not in EVERY_T and "T" in d:  # no interval off the claims' T
                    keep = np.zeros(len(self.run.T), bool)
                    keep[claim_T(self.run.T)] = True
                    shape = [1] * len(d)
                    shape[d.index("T")] = len(keep)
                    off = ~keep.reshape(shape)
                    lo, hi, mlo, mhi = (np.where(off, np.nan, x) for x in (lo, hi, mlo, mhi))
                out[nm] = Stat(nm, d, v[0], lo, hi, (mlo, mhi), "bootstrap")
                out[nm].reps = v[1:]
            else:
                out[nm] = Stat(nm, d, v[0])
        if not self.samples and use_file:
            from . import intervals_nc
            fi = intervals_nc.read(self.run.path, self.sets.names)
            for nm, st in out.items():
                if nm in fi:
                    e, lo, hi = (np.asarray(x)[self.ni] for x in fi[nm])
                    out[nm] = Stat(nm, st.dims, e, lo, hi, None, "file")
        return out


# The NetCDF names of the statistics (docs/STATISTICS.md, "The intervals in the NetCDF file"):
# <name>, <name>_ci_low, <name>_ci_high, each with a leading normalizer dimension.
CATALOGUE_NAME = {
    "distance": "distance_mean_hmedian", "distance_expected": "distance_expected_mean_hmedian",
    "distance_random": "distance_random_mean_hmedian", "distance_bound": "distance_bound_mean_hmedian",
    "ns_frac": "ns_frac_mean_hmedian", "ns_upper": "ns_upper_mean_hmedian",
    "ns_lower": "ns_lower_mean_hmedian", "ns_upper_gap": "ns_upper_gap_hmedian",
    "ns_lower_gap": "ns_lower_gap_hmedian", "jac_exact_max": "jac_exact_max_hmax",
    "entropy_norm": "entropy_norm_mean_hmedian",
    "D_expected": "ks_expected_statistic_hmedian", "D_random": "ks_random_statistic_hmedian",
    "ncrit_hi_expected": "n_crit_expected_frac_hmedian",
    "ncrit_lo_expected": "n_crit_expected_frac_lower_hmedian",
    "ncrit_hi_random": "n_crit_random_frac_hmedian",
    "ncrit_lo_random": "n_crit_random_frac_lower_hmedian",
    "distance_L_slope": "distance_L_slope", "distance_expected_L_slope": "distance_expected_L_slope",
    "distance_N_plateau_slope": "distance_N_plateau_slope",
    "bound_ratio_N_change": "bound_ratio_N_change", "jac_exact_T_slope": "jac_exact_T_slope",
}
CATALOGUE_DIMS = {
    "distance_L_slope": ("T", "N", "set"), "distance_expected_L_slope": ("T", "N", "set"),
    "distance_N_plateau_slope": ("L", "T", "set"), "bound_ratio_N_change": ("L", "T", "set"),
    "jac_exact_T_slope": ("L", "set"),
}


def shard_subsets(n_shards, first=6):
    """The nested subsets of shards n_crit is re-reduced on: the first 6, 12, 24, ... shards (in
    shard order), and all of them."""
    ks_, k = [], first
    while k < n_shards:
        ks_.append(k)
        k *= 2
    return ks_ + [n_shards]


def ncrit_by_shards(run, ni, ti, test="expected"):
    """n_crit of every head re-reduced on nested subsets of shards (the first k shards): per L,
    the median over heads of n_crit / L (none = +inf) and the heads where an N passes.
    Needs the samples; None without them."""
    if not run.has_samples():
        return None
    sizes = shard_subsets(run.n_shards)
    W = np.zeros((len(sizes), run.n_shards), np.int32)
    for r, k in enumerate(sizes):
        W[r, :k] = 1
    WT = np.ascontiguousarray(W.T)
    shard = run.sample_shard()
    H = len(run.layers) * len(run.heads)
    nT, nN = len(run.T), len(run.N)
    out = {"shards": sizes, "T": float(run.T[ti]), "test": test, "per_L": []}
    for li in range(len(run.L)):
        d = run.sample("distance", ni, li).reshape(nT, nN, H, -1)[ti]
        ref = run.sample("distance_" + test, ni, li).reshape(nT, nN, H, -1)[ti]
        K = np.zeros((len(sizes), nN, H), np.int64)
        NA, NB = K.copy(), K.copy()
        for n in range(nN):
            for h in range(H):
                K[:, n, h], NA[:, n, h], NB[:, n, h] = \
                    ks.PooledCell(d[n, h], ref[n, h], shard).k_of(WT)
        passed = ks.passes_fast(K, NA, NB, run.ks_alpha)
        comp = (NA > 0) & (NB > 0)
        lo, hi = censored_ncrit(np.moveaxis(passed, 1, -1), np.moveaxis(comp, 1, -1), run.N,
                                run.L[li])
        out["per_L"].append({
            "L": int(run.L[li]),
            "median_frac": [float(x) for x in bootstrap.median_last(hi)],
            "found": [int(x) for x in np.sum(np.isfinite(hi), axis=-1)],
            "computable": [int(x) for x in np.sum(~np.isnan(hi), axis=-1)],
            "rows_per_cell": [int(k * run.rows) for k in sizes]})
    return out

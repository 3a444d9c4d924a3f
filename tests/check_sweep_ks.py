#!/usr/bin/python3
"""check_sweep_ks: a `keep_samples: true` sweep's reductions recomputed from its kept samples,
independently of the C code (METRICS.md sections 5-9; issue 12).

Usage: check_sweep_ks.py OUT.nc
Exit 0 when everything agrees, 1 otherwise. Prints what was compared.

For every (normalizer, L, T, N, layer, head):
- ks_expected_* (distance_sample against distance_expected_sample) and ks_random_*
  (distance_sample against distance_random_sample) with scipy.stats.ks_2samp(method='auto'),
  NaN rows dropped from each sample, NaN statistic and p-value where a sample is empty. The
  statistic must be equal (ns_ks evaluates scipy's own floating-point expression of D), the
  p-value within 1e-6 relative: that is the project's contract with scipy (issue 12), set by the
  precision of scipy's paths -- the exact permutation p-value (alternating binomial series for
  equal sizes, lattice-path recursion otherwise) is good to ~1e-13 relative, but its asymptotic
  path (kstwo.sf: Pelz-Good series, Durbin matrices) only to ~1e-7 where it switches method;
  ns_ks takes the same path choice (the largest difference seen is printed). A small sweep has
  at most a few dozen rows per cell, so only the exact path is reached here; tests/test_ks.c
  compares the asymptotic one against scipy fixtures;
- n_crit_expected / n_crit_random per (normalizer, L, T, layer, head), recomputed from scipy's
  p-values: the smallest N of the grid with p > ks_alpha, else the fill value -1; their
  n_crit_*_status 0 (found), 1 (some N is computable and none passes), 2 (no N is computable)
  -- exactly (output layout 2, docs/OUTPUT.md); and n_crit_*_frac = n_crit / L (NaN unless
  found);
- skipped_rows and every *_violations / *_checked / *_vacuous / ns_lower_undefined count, from
  the samples with the rules of METRICS.md (thm1: d > d_bound + 1e-9 |d_bound|; ns_upper:
  ns_frac > ns_upper, vacuous ns_upper >= 1 - 1e-12; ns_lower: ns_frac < ns_lower, vacuous
  ns_lower <= 0, undefined where ns_frac exists and ns_lower is missing; jac_exact and jac_fd
  (per eps) against min(1/(4T), sqrt 2) and jac_exact against jac_lemma2, each with a relative
  1e-6 slack, over every row where the value is defined, without an N dimension: a row's
  Jacobian does not depend on N) -- exactly;
- the statistics <metric>_count and <metric>_quantile at 0 and 1 (min, max) exactly and _mean,
  _std and _quantile at 0.05, 0.5, 0.95 within 64 ulps of
  the sample's largest magnitude (summation order; cells with an infinite value are compared on
  count/min/max only, numpy has no rule for them), and the derived samples: entropy_norm =
  entropy / log(keys of the row), keys = L - sample_row, and n_eff = exp(entropy).
"""
import math
import sys

import numpy as np
import netCDF4
import scipy
from scipy import stats

P_RTOL = 1e-6
STAT_ULPS = 64.0
COUNTS = ["skipped_rows", "thm1_violations", "thm1_checked", "ns_upper_violations",
          "ns_upper_checked", "ns_lower_violations", "ns_lower_checked", "ns_lower_vacuous",
          "ns_upper_vacuous", "ns_lower_undefined", "jac_exact_violations", "jac_exact_checked",
          "lemma2_violations", "lemma2_checked", "jac_fd_violations", "jac_fd_checked"]


def read(ds, name):
    v = ds.variables[name]
    v.set_auto_mask(False)
    return np.array(v[:])


def exceeds(v, b, rel):
    """ns_exceeds: v > b + rel |b|; NaN never violates, nothing exceeds +inf."""
    with np.errstate(invalid="ignore"):
        return ~np.isnan(v) & ~np.isnan(b) & ~np.isinf(b) & (v > b + rel * np.abs(b))


class Report:
    def __init__(self):
        self.bad = 0

    def fail(self, msg):
        self.bad += 1
        if self.bad <= 20:
            print("FAIL " + msg)


def check_ks(ds, rep, Ls, Ns, alpha):
    d = read(ds, "distance_sample")  # (normalizer, L, T, N, layer, head, sample)
    refs = {"expected": read(ds, "distance_expected_sample"),
            "random": read(ds, "distance_random_sample")}
    nn, nL, nT, nN, nl, nh, S = d.shape
    cells = 0
    worst = 0.0
    outcomes = {"found": 0, "none": 0, "not computable": 0}
    for test, ref in refs.items():
        Dv = read(ds, f"ks_{test}_statistic")
        Pv = read(ds, f"ks_{test}_pvalue")
        NC = read(ds, f"n_crit_{test}")
        NF = read(ds, f"n_crit_{test}_frac")
        NS = read(ds, f"n_crit_{test}_status")
        for idx in np.ndindex(nn, nL, nT, nl, nh):
            a_, Li, t, l, h = idx
            ps = []
            for n in range(nN):
                x = d[a_, Li, t, n, l, h]
                y = ref[a_, Li, t, n, l, h]
                x = x[~np.isnan(x)]
                y = y[~np.isnan(y)]
                gotD, gotp = Dv[a_, Li, t, n, l, h], Pv[a_, Li, t, n, l, h]
                where = f"ks_{test} [normalizer {a_} L={Ls[Li]} T index {t} N={Ns[n]} layer {l} head {h}]"
                cells += 1
                if len(x) == 0 or len(y) == 0:
                    ps.append(math.nan)
                    if not (math.isnan(gotD) and math.isnan(gotp)):
                        rep.fail(f"{where}: D {gotD} p {gotp}, expected NaN (empty sample)")
                    continue
                r = stats.ks_2samp(x, y, method="auto")
                ps.append(float(r.pvalue))
                if gotD != r.statistic:
                    rep.fail(f"{where}: D {gotD!r}, scipy {r.statistic!r}")
                err = abs(gotp - r.pvalue) / r.pvalue if r.pvalue > 0 else abs(gotp)
                worst = max(worst, err)
                if not err <= P_RTOL:
                    rep.fail(f"{where}: p {gotp!r}, scipy {r.pvalue!r} (relative {err:.3g})")
            want, status = -1, 2
            if any(not math.isnan(p) for p in ps):
                status = 1
                for n, p in enumerate(ps):
                    if not math.isnan(p) and p > alpha:
                        want, status = Ns[n], 0
                        break
            outcomes[("found", "none", "not computable")[status]] += 1
            got, got_status = int(NC[a_, Li, t, l, h]), int(NS[a_, Li, t, l, h])
            if got != want or got_status != status:
                rep.fail(f"n_crit_{test} [normalizer {a_} L={Ls[Li]} T index {t} layer {l} head {h}]: "
                         f"{got} (status {got_status}), scipy's p-values give {want} (status "
                         f"{status}; p = {ps})")
            wf = want / Ls[Li] if want > 0 else math.nan
            gf = float(NF[a_, Li, t, l, h])
            if not ((math.isnan(wf) and math.isnan(gf)) or gf == wf):
                rep.fail(f"n_crit_{test}_frac [L={Ls[Li]}]: {gf}, expected {wf}")
    return cells, worst, outcomes


def expected_counts(ds, Ts):
    d = read(ds, "distance_sample")
    db = read(ds, "distance_bound_sample")
    f = read(ds, "ns_frac_sample")
    lo = read(ds, "ns_lower_sample")
    up = read(ds, "ns_upper_sample")
    je = read(ds, "jac_exact_sample")   # (normalizer, L, T, layer, head, S): no N
    jl = read(ds, "jac_lemma2_sample")
    jf = read(ds, "jac_fd_sample")      # (normalizer, L, T, eps, layer, head, S)
    jb = np.array([min(1.0 / (4.0 * T), math.sqrt(2.0)) for T in Ts])
    jbT = jb[None, None, :, None, None, None]
    an = ~np.isnan(d)
    with np.errstate(invalid="ignore"):
        up_def = an & ~np.isnan(f) & ~np.isnan(up)
        lo_def = an & ~np.isnan(f) & ~np.isnan(lo)
        w = {
            "skipped_rows": ~an,
            "thm1_checked": an & ~np.isnan(db),
            "thm1_violations": an & exceeds(d, db, 1e-9),
            "ns_upper_checked": up_def,
            "ns_upper_violations": up_def & (f > up),
            "ns_upper_vacuous": up_def & (up >= 1.0 - 1e-12),
            "ns_lower_checked": lo_def,
            "ns_lower_violations": lo_def & (f < lo),
            "ns_lower_vacuous": lo_def & (lo <= 0.0),
            "ns_lower_undefined": an & ~np.isnan(f) & np.isnan(lo),
            "jac_exact_checked": ~np.isnan(je),
            "jac_exact_violations": exceeds(je, jbT, 1e-6),
            "lemma2_checked": ~np.isnan(je) & ~np.isnan(jl),
            "lemma2_violations": exceeds(je, jl, 1e-6),
        }
        jbE = jb[None, None, :, None, None, None, None]
        w["jac_fd_checked"] = ~np.isnan(jf)
        w["jac_fd_violations"] = exceeds(jf, jbE, 1e-6)
    return {k: v.sum(axis=-1) for k, v in w.items()}


def check_counts(ds, rep, Ts):
    want = expected_counts(ds, Ts)
    n = 0
    nonzero = {}
    for name in COUNTS:
        got = read(ds, name)
        exp = want[name]
        if got.shape != exp.shape:
            rep.fail(f"{name}: shape {got.shape}, expected {exp.shape}")
            continue
        diff = np.argwhere(got != exp)
        for idx in diff[:5]:
            rep.fail(f"{name}{tuple(int(i) for i in idx)}: {int(got[tuple(idx)])}, "
                     f"from the samples {int(exp[tuple(idx)])}")
        if len(diff):
            rep.fail(f"{name}: {len(diff)} cells differ")
        n += got.size
        nonzero[name] = int((exp > 0).sum())
    return n, nonzero


def summary_ok(x, stats_vals):
    """count/min/max exact; mean, std, quantiles within 64 ulps of max |x| (finite samples)."""
    x = x[~np.isnan(x)]
    cnt, mean, std, mn, mx, q05, q50, q95 = stats_vals
    if cnt != len(x):
        return f"count {cnt} vs {len(x)}"
    if len(x) == 0:
        return None if all(math.isnan(v) for v in (mean, std, mn, mx, q05, q50, q95)) else "not NaN"
    if mn != x.min() or mx != x.max():
        return f"min/max {mn}, {mx} vs {x.min()}, {x.max()}"
    if not np.isfinite(x).all():
        return None
    tol = STAT_ULPS * np.finfo(float).eps * max(np.abs(x).max(), 1e-300)
    with np.errstate(over="ignore", invalid="ignore"):
        want = [x.mean(), x.std(), *np.quantile(x, [0.05, 0.5, 0.95])]
    for g, w_ in zip((mean, std, q05, q50, q95), want):
        # values near the double limit overflow the sums of squares on both sides (+inf)
        same = g == w_ or (math.isnan(g) and math.isnan(w_)) or abs(g - w_) <= tol
        if not same:
            return f"mean/std/quantiles {[mean, std, q05, q50, q95]} vs {want}"
    return None


def check_stats(ds, rep, Ls):
    stems = ["distance", "distance_d1", "distance_bound", "distance_expected", "distance_random",
             "ns_frac", "ns_lower", "ns_upper", "delta", "jac_exact", "jac_lemma2", "entropy",
             "entropy_norm", "n_eff", "jac_fd"]
    q = [float(x) for x in read(ds, "quantile")]
    if q != [0.0, 0.05, 0.5, 0.95, 1.0]:
        rep.fail(f"quantile coordinate {q}, expected [0, 0.05, 0.5, 0.95, 1]")
        return 0
    cells = 0
    for stem in stems:
        smp = read(ds, f"{stem}_sample")
        qv = read(ds, f"{stem}_quantile")  # (quantile, ...)
        st = [read(ds, f"{stem}_{s}") for s in ("count", "mean", "std")] + \
            [qv[0], qv[4], qv[1], qv[2], qv[3]]  # min, max, q05, q50, q95
        for idx in np.ndindex(*smp.shape[:-1]):
            why = summary_ok(smp[idx], [float(s[idx]) for s in st])
            cells += 1
            if why:
                rep.fail(f"{stem} statistics at {idx}: {why}")
    # derived samples: each row's own number of keys
    rows = read(ds, "sample_row")
    h = read(ds, "entropy_sample")
    keys = np.array(Ls)[None, :, None, None, None, None] - rows[None, None, None, None, None, :]
    with np.errstate(divide="ignore", invalid="ignore"):
        want_norm = np.where(keys >= 2, h / np.log(np.maximum(keys, 1)), np.nan)
    got_norm = read(ds, "entropy_norm_sample")
    ok = np.isclose(got_norm, want_norm, rtol=4 * np.finfo(float).eps, atol=0, equal_nan=True)
    if not ok.all():
        rep.fail(f"entropy_norm_sample differs from entropy / log(L - row) in {int((~ok).sum())} "
                 f"values")
    got_neff = read(ds, "n_eff_sample")
    ok = np.isclose(got_neff, np.exp(h), rtol=4 * np.finfo(float).eps, atol=0, equal_nan=True)
    if not ok.all():
        rep.fail(f"n_eff_sample differs from exp(entropy) in {int((~ok).sum())} values")
    return cells


def main(argv):
    if len(argv) != 2:
        print(__doc__)
        return 2
    ds = netCDF4.Dataset(argv[1])
    rep = Report()
    Ls = [int(x) for x in read(ds, "L")]
    Ns = [int(x) for x in read(ds, "N")]
    Ts = [float(x) for x in read(ds, "T")]
    alpha = float(ds.getncattr("ks_alpha"))
    if ds.getncattr("keep_samples") != "true":
        print("check_sweep_ks: the file has no kept samples")
        return 1
    ks_cells, worst, outcomes = check_ks(ds, rep, Ls, Ns, alpha)
    n_counts, nonzero = check_counts(ds, rep, Ts)
    stat_cells = check_stats(ds, rep, Ls)
    print(f"check_sweep_ks: {ks_cells} KS cells (both tests) against scipy {scipy.__version__} "
          f"ks_2samp(method='auto'), largest relative p difference "
          f"{worst:.2g}; n_crit outcomes {outcomes}; {n_counts} count values recomputed from the "
          f"samples; {stat_cells} statistic cells; {rep.bad} differences")
    print("check_sweep_ks: cells with a non-zero count: " +
          ", ".join(f"{k} {v}" for k, v in nonzero.items()))
    return 1 if rep.bad else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))

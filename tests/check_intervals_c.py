#!/usr/bin/python3
"""check_intervals_c: the bootstrap intervals the C reduction wrote into a sweep file (src/analysis/
ns_intervals.c; docs/STATISTICS.md, "The intervals in the NetCDF file") against the report's
Python reference (postprocess/normsweep_report: rng, bootstrap, stats), which recomputes them from
the same file's per-row samples (keep_samples: true) with the same resamples: every estimate and
both ends of every interval must be the same bits, for every normalizer, cell and head set. Also
checks the layout: head_set names, the attributes the page lists, and that every statistic the
file's bootstrap_statistics names is there.

    check_intervals_c.py POSTPROCESS_DIR FILE.nc [B]

B: the resamples the file must record (the sweep's bootstrap.resamples; default 2000)."""
import math
import sys

import numpy as np
import netCDF4

sys.path.insert(0, sys.argv[1])
from normsweep_report import intervals_nc, load, stats  # noqa: E402

path = sys.argv[2]
want_B = int(sys.argv[3]) if len(sys.argv) > 3 else 2000
problems = []
with netCDF4.Dataset(path) as ds:
    B = int(ds.getncattr("bootstrap_resamples"))
    names = ds.getncattr("bootstrap_statistics").split()
    rule = ds.getncattr("bootstrap_rule")
    for nm in names:
        v = ds[nm]
        for att, want in (("bootstrap_resamples", B), ("confidence_level", 0.95),
                          ("units", "1"), ("ancillary_variables", nm + "_ci_low " + nm + "_ci_high")):
            if v.getncattr(att) != want:
                problems.append("%s:%s = %r, not %r" % (nm, att, v.getncattr(att), want))
        if v.dimensions[0] != "normalizer" or v.dimensions[-1] != "head_set":
            problems.append("%s: dims %s" % (nm, v.dimensions))
if "bootstrp" not in rule or B != want_B:
    problems.append("bootstrap_rule %r, bootstrap_resamples %d" % (rule, B))
missing = [nm for nm in stats.CATALOGUE_NAME.values() if nm not in names]

run = load.Run(path)
if not run.has_samples():
    sys.exit("check_intervals_c: %s has no per-row samples (keep_samples: true)" % path)
checked = 0
for ni in range(len(run.var["normalizer"])):
    comp = stats.Computed(run, ni, resamples=B)  # the KS statistics at every T
    fi = intervals_nc.read(path, comp.sets.names)
    if comp.sets.names != [str(x) for x in netCDF4.chartostring(
            netCDF4.Dataset(path)["head_set_name"][:])]:
        problems.append("head_set_name differs from the report's sets %s" % comp.sets.names)
    for nm in names:
        st = comp.stats[nm]
        e, lo, hi = (np.asarray(x)[ni] for x in fi[nm])
        for what, mine, ref in (("estimate", e, st.est), ("ci_low", lo, st.lo),
                                ("ci_high", hi, st.hi)):
            if mine.shape != ref.shape:
                problems.append("%s %s: shape %s, reference %s" % (nm, what, mine.shape, ref.shape))
                continue
            same = (mine.view(np.int64) == ref.view(np.int64)) | (np.isnan(mine) & np.isnan(ref))
            checked += mine.size
            if not same.all():
                k = np.argwhere(~same)[0]
                problems.append("normalizer %d %s %s: %d of %d differ; first at %s: C %r, "
                                "reference %r" % (ni, nm, what, (~same).sum(), same.size,
                                                  tuple(k), mine[tuple(k)], ref[tuple(k)]))
        # (an n_crit upper end is +inf where no N passes: an interval, not a missing one)
        finite = np.isfinite(lo) & (np.isfinite(hi) | (nm.startswith("n_crit") & (hi == np.inf)))
        if nm.endswith("_hmedian") and not finite.any():
            problems.append("normalizer %d %s: no interval with a finite lower end (the "
                            "comparison is empty)" % (ni, nm))
# Where the intervals are (docs/STATISTICS.md, "At which temperatures"), from the rule as written,
# not from the report's code: the claims' temperatures are the grid's T nearest 1 in log (the
# first of a tie) and its grid neighbours; entropy_norm_mean_hmedian, jac_exact_max_hmax and
# jac_exact_T_slope have intervals at every T, every other statistic with a T axis only at the
# claims' temperatures (NaN ends elsewhere) and its estimate at every T.
with netCDF4.Dataset(path) as ds:
    T = [float(t) for t in ds["T"][:]]
    ref = min(range(len(T)), key=lambda k: (abs(math.log(T[k])), k))
    claim = [k for k in (ref - 1, ref, ref + 1) if 0 <= k < len(T)]
    want_attr = " ".join("%.17g" % T[k] for k in claim)
    if ds.getncattr("bootstrap_interval_T") != want_attr:
        problems.append("bootstrap_interval_T = %r, not %r" % (ds.getncattr("bootstrap_interval_T"),
                                                                want_attr))
    off_T = [k for k in range(len(T)) if k not in claim]
    seen_off = 0
    for nm in names:
        dims = ds[nm].dimensions
        if "T" not in dims:
            continue
        ax = dims.index("T")
        est = np.ma.filled(ds[nm][:], np.nan)
        lo = np.ma.filled(ds[nm + "_ci_low"][:], np.nan)
        every = nm in ("entropy_norm_mean_hmedian", "jac_exact_max_hmax")
        for k in range(len(T)):
            e, l_ = np.take(est, k, axis=ax), np.take(lo, k, axis=ax)
            has_ci = bool(np.isfinite(l_).any())
            if every or k in claim:
                if not has_ci and np.isfinite(e).any():
                    problems.append("%s: no interval at T = %g" % (nm, T[k]))
            else:
                seen_off += 1
                if has_ci:
                    problems.append("%s: an interval at T = %g, not a claims' temperature"
                                    % (nm, T[k]))
                if nm.startswith(("distance_mean", "ns_frac_mean")) and not np.isfinite(e).any():
                    problems.append("%s: no estimate at T = %g" % (nm, T[k]))
print("check_intervals_c: claims' temperatures %s; %d (statistic, T) pairs off them checked to "
      "have estimates and no interval" % (want_attr, seen_off))
for p in problems[:30]:
    print("check_intervals_c:", p)
print("check_intervals_c: %d statistics (%d values) compared bit for bit; without an interval in "
      "the C file: %s; %d problem(s)" % (len(names), checked, " ".join(missing) or "none",
                                           len(problems)))
sys.exit(1 if problems else 0)

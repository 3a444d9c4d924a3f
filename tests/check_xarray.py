#!/usr/bin/python3
"""check_xarray: a sweep file used as a researcher who knows xarray and not normsweep would use it
(docs/OUTPUT.md, issue 34), each answer compared with an independent evaluation from the file's
per-row samples (keep_samples: true) or the KS p-values, with xarray and numpy only.

Usage: check_xarray.py RUN.nc; prints each problem, exit 1 if any.

- selection by the normalizer's name equals selection by position, for every normalizer, and
  `normalizer_s` travels with it;
- `<stem>_quantile.sel(quantile=q)` is the rows' quantile (xarray's own `quantile` over the
  sample dimension; 0 and 1 exactly the minimum and maximum, the others within 64 ulps of the
  sample's largest magnitude: numpy's interpolation and the C code's round differently);
- counts sum without a trap: each count variable has exactly the dimensions of the metric it
  counts, and its sum over the whole file equals the number of (row, cell) pairs the samples
  give, for jac_exact_*, lemma2_*, jac_fd_* (no N: each row once) and thm1_*, exactly;
- n_crit: missing exactly where its status is not "found", the status recomputed from the KS
  p-values (found: the smallest N with p > ks_alpha; none passes; not computable), n_crit_frac =
  n_crit / L and missing where n_crit is; a median over heads never meets a flag value;
- a plot faceted by T draws (matplotlib, Agg)."""
import sys
import warnings

import matplotlib
import numpy as np
import xarray as xr

matplotlib.use("Agg")

STEMS = ("distance", "distance_d1", "distance_bound", "distance_expected", "distance_random",
         "ns_frac", "ns_lower", "ns_upper", "delta", "jac_exact", "jac_lemma2", "entropy",
         "entropy_norm", "n_eff", "jac_fd")
ULPS = 64.0


class Problems(list):
    def add(self, msg):
        self.append(msg)


def check_names(ds, bad):
    for i, name in enumerate(ds.normalizer.values):
        by_name = ds.distance_mean.sel(normalizer=str(name))
        by_pos = ds.distance_mean.isel(normalizer=i)
        if not by_name.identical(by_pos):
            bad.add("distance_mean.sel(normalizer=%r) differs from isel(normalizer=%d)" % (name, i))
        s = float(ds.normalizer_s.sel(normalizer=str(name)))
        if str(name).startswith("ssmax") != (s == s):  # s is NaN unless ssmax
            bad.add("normalizer %r has normalizer_s %r" % (name, s))
    if "normalizer_s" not in ds.distance_mean.coords:
        bad.add("normalizer_s is not a coordinate of distance_mean")


def check_quantiles(ds, bad):
    if list(ds["quantile"].values) != [0.0, 0.05, 0.5, 0.95, 1.0]:
        bad.add("quantile coordinate %s" % list(ds["quantile"].values))
        return 0
    cells = 0
    for stem in STEMS:
        smp = ds[stem + "_sample"]
        q = ds[stem + "_quantile"]
        exact = {0.0: smp.min("sample"), 1.0: smp.max("sample")}
        for p in (0.0, 1.0):
            got = q.sel(quantile=p, drop=True)
            if not got.equals(exact[p].transpose(*got.dims)):
                bad.add("%s_quantile.sel(quantile=%g) is not the rows' %s" %
                        (stem, p, "minimum" if p == 0 else "maximum"))
        finite = np.isfinite(smp).all("sample") | smp.isnull().all("sample")
        scale = np.abs(smp).max("sample") * np.finfo(float).eps * ULPS
        for p in (0.05, 0.5, 0.95):
            got = q.sel(quantile=p, drop=True)
            want = smp.quantile(p, dim="sample", skipna=True).drop_vars("quantile")
            want = want.transpose(*got.dims)
            ok = (np.abs(got - want) <= scale) | (got.isnull() & want.isnull()) | ~finite
            if not bool(ok.all()):
                bad.add("%s_quantile.sel(quantile=%g) differs from the rows' quantile in %d cells"
                        % (stem, p, int((~ok).sum())))
        cells += int(q.size)
    return cells


def count_pairs(ds):
    """{count: (metric it counts, its sum from the samples)}, from the samples alone."""
    jb = ds.jac_bound  # (T): min(1/(4T), sqrt 2), checked against the definition below
    je, jl, jf = ds.jac_exact_sample, ds.jac_lemma2_sample, ds.jac_fd_sample
    d, db = ds.distance_sample, ds.distance_bound_sample

    def over(v, b, rel):
        return v.notnull() & b.notnull() & np.isfinite(b) & (v > b + rel * np.abs(b))

    return {
        "jac_exact_checked": ("jac_exact", je.notnull()),
        "jac_exact_violations": ("jac_exact", over(je, jb, 1e-6)),
        "lemma2_checked": ("jac_exact", je.notnull() & jl.notnull()),
        "lemma2_violations": ("jac_exact", over(je, jl, 1e-6)),
        "jac_fd_checked": ("jac_fd", jf.notnull()),
        "jac_fd_violations": ("jac_fd", over(jf, jb, 1e-6)),
        "thm1_checked": ("distance", d.notnull() & db.notnull()),
        "thm1_violations": ("distance", over(d, db, 1e-9)),
    }


def check_counts(ds, bad):
    T = ds["T"].values
    if not np.array_equal(ds.jac_bound.values, np.minimum(1 / (4 * T), np.sqrt(2.0))):
        bad.add("jac_bound is not min(1/(4T), sqrt 2)")
    sums = {}
    for name, (metric, flags) in count_pairs(ds).items():
        v = ds[name]
        want_dims = tuple(x for x in ds[metric + "_sample"].dims if x != "sample")
        if v.dims != want_dims:
            bad.add("%s has dimensions %s; the quantity %s has %s" % (name, v.dims, metric,
                                                                     want_dims))
            continue
        got, want = int(v.sum()), int(flags.sum())
        sums[name] = got
        if got != want:
            bad.add("%s.sum() = %d; the samples give %d" % (name, got, want))
    # the other counts: each has the dimensions of its cell (the theorems depend on T and N)
    cell = tuple(x for x in ds.distance_sample.dims if x != "sample")
    for name in ("skipped_rows", "ns_upper_violations", "ns_upper_checked", "ns_lower_violations",
                 "ns_lower_checked", "ns_lower_vacuous", "ns_upper_vacuous",
                 "ns_lower_undefined"):
        if ds[name].dims != cell:
            bad.add("%s has dimensions %s, expected %s" % (name, ds[name].dims, cell))
    if int((ds.skipped_rows + ds.distance_count).max()) > int(ds.n_samples.max()):
        bad.add("skipped_rows + distance_count exceeds n_samples")
    return sums


def check_n_crit(ds, bad):
    alpha = float(ds.attrs["ks_alpha"])
    N = ds["N"].values
    outcomes = {}
    for test in ("expected", "random"):
        p = ds["ks_%s_pvalue" % test]  # (normalizer, L, T, N, layer, head)
        passes = (p > alpha).fillna(False)
        computable = p.notnull().any("N")
        first = passes.argmax("N")  # the first N index that passes (0 when none does)
        want_n = xr.where(passes.any("N"), xr.DataArray(N, dims="N")[first], np.nan)
        want_status = xr.where(passes.any("N"), 0, xr.where(computable, 1, 2))
        nc, st, fr = (ds["n_crit_%s%s" % (test, s)] for s in ("", "_status", "_frac"))
        if not nc.fillna(-1).equals(want_n.fillna(-1).transpose(*nc.dims)):
            bad.add("n_crit_%s differs from the smallest N with p > ks_alpha" % test)
        if not st.equals(want_status.transpose(*st.dims).astype(st.dtype)):
            bad.add("n_crit_%s_status differs from the p-values' outcome" % test)
        if not (nc.isnull() == (st != 0)).all():
            bad.add("n_crit_%s is given where its status is not 'found'" % test)
        if not fr.fillna(-1).equals((nc / ds["L"]).fillna(-1).transpose(*fr.dims)):
            bad.add("n_crit_%s_frac is not n_crit / L, missing where n_crit is" % test)
        med = nc.median(["layer", "head"])
        if bool((med < 1).any()):
            bad.add("a median of n_crit_%s over heads is below 1: a flag mixed in" % test)
        outcomes[test] = [int((st == k).sum()) for k in (0, 1, 2)]
    return outcomes


def main(path):
    warnings.filterwarnings("ignore", "All-NaN slice", RuntimeWarning)  # empty (skipped) cells
    bad = Problems()
    ds = xr.open_dataset(path)
    if "sample" not in ds.dims:
        print("check_xarray: %s has no kept samples (keep_samples: true is needed)" % path)
        return 1
    check_names(ds, bad)
    cells = check_quantiles(ds, bad)
    sums = check_counts(ds, bad)
    outcomes = check_n_crit(ds, bad)
    g = ds.distance_mean.isel(normalizer=0).sel(N=ds.N[0]).mean(["layer", "head"]).plot(
        col="T", x="L")
    if len(g.axs.ravel()) != ds.sizes["T"]:
        bad.add("plot(col='T') drew %d panels for %d T" % (len(g.axs.ravel()), ds.sizes["T"]))
    for p in bad:
        print("check_xarray:", p)
    print("check_xarray: normalizers %s; %d quantile cells; count sums %s; n_crit found / none / "
          "not computable %s; %d problems" % (list(ds.normalizer.values), cells, sums, outcomes,
                                             len(bad)))
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1]))

#!/usr/bin/python3
"""check_sweep_norms: a keep_samples sweep over every normalizer (tests/sweep_norms.sh): what the
file says about issue 36's quantities follows exactly from its own per-row samples.

Usage: check_sweep_norms.py ALL.nc LABELS   (LABELS: the expected normalizer labels, '|'-separated)
       check_sweep_norms.py same ALL.nc FOUR.nc   the four normalizers of FOUR.nc have, in ALL.nc,
                                                   bit for bit the same data in every variable
       check_sweep_norms.py views VIEW.nc         a sink_view: true sweep (docs/METRICS.md 8.2)
Exit 0 pass, 1 fail.

views: the normalizer axis is the n listed normalizers, then their sink-excluded views ("NAME,
sink excluded", view = 0 ... 0 1 ... 1); Theorem 1's bound holds (thm1_violations 0) for every
entry and the views checked rows; n_crit_*_frac = n_crit / (L - 1) for a view, n_crit / L
otherwise, exactly (the same division); for softmax (when listed) each row's view mass is
1 - its sink_mass (p_0 = a_0) to 1e-13 absolute (two sums of at most 24 weights); every view's
sink_mass lies in [0, 1].

Checked, per (normalizer, L, T, layer, head) cell, exactly (counts, comparisons) or to 1e-12
relative (a mean of at most 8 doubles summed in another order):
  - the normalizer coordinate: the labels, with their parameters, in the grid's order;
  - mass = 1 exactly on the simplex (softmax, ssmax, sparsemax, entmax15, entmax), in (0, 1]
    for softmax1 and stickbreaking, [0, 1] for softpick, (0, L] for sigmoid (each bound up to
    1e-12 relative: a sum of at most L rounded doubles), >= 0 for relu;
  - empty_rows = the rows with a mass and no sink_mass (mass 0), and an empty row has every shape
    metric missing; skipped_rows = the rows with distance missing that are not empty;
  - sink_mass_mean = the mean of sink_mass_sample; sink_heads_frac = the fraction of the layer's
    heads (with a mean) whose sink_mass_mean exceeds 0.3 (strictly), missing when none has one;
  - stickbreaking: distance_random missing everywhere, ks_random_* missing, n_crit_random_status
    2 (not computable); every other normalizer has distance_random wherever distance is.
"""
import math
import sys

import numpy as np
import netCDF4

SIMPLEX = ("softmax", "ssmax", "sparsemax", "entmax15", "entmax")
SHAPE_TN = ("distance", "distance_d1", "distance_bound", "distance_expected", "ns_frac",
            "ns_upper")
SHAPE_T = ("entropy", "entropy_norm", "sink_mass")


def read(ds, name):
    v = ds.variables[name]
    v.set_auto_mask(False)
    return np.array(v[:])


def check(path, labels):
    fails = []
    ds = netCDF4.Dataset(path)
    got = [str(s) for s in ds.variables["normalizer"][:]]  # _Encoding: read as text
    if got != labels:
        fails.append(f"normalizer labels {got}, want {labels}")
    mass = read(ds, "mass_sample")            # (norm, L, T, layer, head, sample)
    sink = read(ds, "sink_mass_sample")
    dist = read(ds, "distance_sample")        # (norm, L, T, N, layer, head, sample)
    drand = read(ds, "distance_random_sample")
    empty_rows = read(ds, "empty_rows")       # (norm, L, T, layer, head)
    skipped = read(ds, "skipped_rows")        # (norm, L, T, N, layer, head)
    sink_mean = read(ds, "sink_mass_mean")
    frac = read(ds, "sink_heads_frac")        # (norm, L, T, layer)
    n_empty_total = 0
    for ni, lab in enumerate(labels):
        view = lab.endswith(", sink excluded")
        kind = lab.split(" ")[0].rstrip(",")
        m = mass[ni]
        if view and kind in SIMPLEX:  # 1 - p_0 of the row: 0 when every weight is on key 0
            if not np.all((m >= 0) & (m <= 1 + 1e-12)):
                fails.append(f"{lab}: mass outside [0, 1]")
        elif kind in SIMPLEX:
            if not np.all(m == 1.0):
                fails.append(f"{lab}: mass not exactly 1 on the simplex")
        elif kind == "relu":
            if not np.all(m >= 0):
                fails.append(f"{lab}: negative mass")
        elif kind == "sigmoid":  # L weights, each in (0, 1)
            Lc = read(ds, "L").astype(float)[:, None, None, None, None]
            if not np.all((m > 0) & (m <= Lc * (1 + 1e-12))):
                fails.append(f"{lab}: mass outside (0, L]")
        elif kind == "softpick":  # positive part over absolute sum; 0 for an empty row
            if not np.all((m >= 0) & (m <= 1 + 1e-12)):
                fails.append(f"{lab}: mass outside [0, 1]")
        elif not np.all((m > 0) & (m <= 1 + 1e-12)):  # softmax1, stickbreaking
            fails.append(f"{lab}: mass outside (0, 1]")
        empty = ~np.isnan(m) & np.isnan(sink[ni])
        n_empty_total += int(empty.sum())
        if not np.array_equal(empty.sum(axis=-1), empty_rows[ni]):
            fails.append(f"{lab}: empty_rows differs from the samples")
        if np.any(empty & (m != 0)):
            fails.append(f"{lab}: an empty row with a mass other than 0")
        for name in SHAPE_T:
            x = read(ds, name + "_sample")[ni]
            if np.any(empty & ~np.isnan(x)):
                fails.append(f"{lab}: {name} present on an empty row")
        d = dist[ni]                                      # (L, T, N, layer, head, sample)
        emptyN = np.broadcast_to(empty[:, :, None], d.shape)
        for name in SHAPE_TN:
            x = read(ds, name + "_sample")[ni]
            if np.any(emptyN & ~np.isnan(x)):
                fails.append(f"{lab}: {name} present on an empty row")
        want_skip = (np.isnan(d) & ~emptyN).sum(axis=-1)
        if not np.array_equal(want_skip, skipped[ni]):
            fails.append(f"{lab}: skipped_rows differs from the samples")
        s = sink[ni]
        cnt = (~np.isnan(s)).sum(axis=-1)
        with np.errstate(invalid="ignore"):
            mean = np.where(cnt > 0, np.nansum(s, axis=-1) / np.maximum(cnt, 1), np.nan)
        ok = np.isclose(sink_mean[ni], mean, rtol=1e-12, atol=0, equal_nan=True)
        if not ok.all():
            fails.append(f"{lab}: sink_mass_mean differs from the samples' mean")
        sm = sink_mean[ni]                                # (L, T, layer, head)
        with_mean = (~np.isnan(sm)).sum(axis=-1)
        sinks = (sm > 0.3).sum(axis=-1)
        with np.errstate(invalid="ignore", divide="ignore"):
            want = np.where(with_mean > 0, sinks / np.maximum(with_mean, 1), np.nan)
        if not np.array_equal(want, frac[ni], equal_nan=True):
            fails.append(f"{lab}: sink_heads_frac {frac[ni].ravel()[:6]} != {want.ravel()[:6]}")
        r = drand[ni]
        if kind == "stickbreaking":
            if not np.all(np.isnan(r)):
                fails.append(f"{lab}: distance_random present")
            for v in ("ks_random_statistic", "ks_random_pvalue"):
                if not np.all(np.isnan(read(ds, v)[ni])):
                    fails.append(f"{lab}: {v} present")
            if not np.all(read(ds, "n_crit_random_status")[ni] == 2):
                fails.append(f"{lab}: n_crit_random_status is not 2 (not computable) everywhere")
        elif not np.array_equal(np.isnan(r), np.isnan(d)):
            fails.append(f"{lab}: distance_random missing where distance is not")
    for f in fails[:40]:
        print("FAIL:", f)
    print(f"{path}: {len(labels)} normalizers, {n_empty_total} empty (row, T) pairs, "
          f"{len(fails)} failures")
    return 1 if fails else 0


def same(pa, pb):
    """Every variable of B (a sweep over a subset of A's normalizers, A's first ones) equals A's
    data at those normalizers, bit for bit; the other variables equal whole."""
    da, db = netCDF4.Dataset(pa), netCDF4.Dataset(pb)
    nb = len(db.dimensions["normalizer"])
    bad = []
    for name, vb in db.variables.items():
        if name not in da.variables:
            bad.append(f"{name} missing from {pa}")
            continue
        va = da.variables[name]
        va.set_auto_mask(False)
        vb.set_auto_mask(False)
        a, b = np.array(va[:]), np.array(vb[:])
        if "normalizer" in vb.dimensions:
            k = vb.dimensions.index("normalizer")
            a = np.take(a, range(nb), axis=k)
        if a.dtype.kind == "f":
            a, b = a.view(np.uint64 if a.itemsize == 8 else np.uint32), b.view(
                np.uint64 if b.itemsize == 8 else np.uint32)
        if a.shape != b.shape or not np.array_equal(a, b):
            bad.append(name)
    for v in bad[:40]:
        print("FAIL: differs:", v)
    print(f"same {pa} {pb}: {len(db.variables)} variables, {len(bad)} differ")
    return 1 if bad else 0


def views(path):
    ds = netCDF4.Dataset(path)
    labels = [str(s) for s in ds.variables["normalizer"][:]]
    n = len(labels) // 2
    fails = []
    view = read(ds, "view")
    if list(view) != [0] * n + [1] * n or len(labels) != 2 * n:
        fails.append(f"view {list(view)} for {labels}")
    if ds.variables["view"].flag_meanings != "all_keys sink_excluded":
        fails.append("view's flag_meanings")
    for i in range(n):
        if labels[n + i] != labels[i] + ", sink excluded":
            fails.append(f"label {labels[n + i]!r} is not {labels[i]!r} + ', sink excluded'")
    viol, checked = read(ds, "thm1_violations"), read(ds, "thm1_checked")
    if np.any(viol != 0):
        fails.append(f"Theorem 1 violated {int(viol.sum())} times")
    if not checked[n:].sum() > 0:
        fails.append("the views checked Theorem 1 on no row")
    Lc = read(ds, "L")
    for k in ("expected", "random"):
        # (normalizer, L, T, layer, head)
        nc, frac = read(ds, f"n_crit_{k}"), read(ds, f"n_crit_{k}_frac")
        keys = (Lc[None, :] - view[:, None])[:, :, None, None, None]
        want = np.where(nc >= 1, nc / keys, np.nan)
        if not np.array_equal(want, frac, equal_nan=True):  # the same division: exact
            fails.append(f"n_crit_{k}_frac is not n_crit / the view's keys")
    sink, mass = read(ds, "sink_mass_sample"), read(ds, "mass_sample")
    if np.any(sink[n:] < 0) or np.any(sink[n:] > 1):
        fails.append("a view's sink_mass outside [0, 1]")
    if "softmax" in labels[:n]:
        i = labels.index("softmax")
        diff = np.abs(mass[n + i] - (1.0 - sink[i]))
        if not np.all(diff <= 1e-13):
            fails.append(f"softmax's view mass differs from 1 - sink_mass by {np.nanmax(diff):.3g}")
    for f in fails[:40]:
        print("FAIL:", f)
    print(f"views {path}: {n} normalizers and their views, {int(checked[n:].sum())} Theorem 1 "
          f"checks of the views, {len(fails)} failures")
    return 1 if fails else 0


def main(argv):
    if len(argv) == 3 and argv[1] == "views":
        return views(argv[2])
    if len(argv) == 4 and argv[1] == "same":
        return same(argv[2], argv[3])
    if len(argv) == 3:
        return check(argv[1], argv[2].split("|"))
    print(__doc__.split("\n\n")[1], file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv))

#!/usr/bin/python3
"""check_cf: a normsweep sweep file read as CF-1.8 by xarray. Usage: check_cf.py RUN.nc
Prints each problem; exit 1 if any."""
import sys

import numpy as np
import xarray as xr

STATS = ("count", "mean", "std", "min", "max", "q05", "q50", "q95")
INDEX_COORDS = ("normalizer", "L", "N", "layer", "head", "shard", "sample")


def main(path):
    problems = []
    ds = xr.open_dataset(path)  # decodes CF: fill values, coordinates, flags left as attributes
    for a in ("Conventions", "title", "institution", "source", "history", "references", "comment"):
        if not str(ds.attrs.get(a, "")).strip():
            problems.append("global attribute %s missing or empty" % a)
    if not str(ds.attrs.get("Conventions", "")).startswith("CF-1."):
        problems.append("Conventions = %r" % ds.attrs.get("Conventions"))
    if "2508.17821" not in str(ds.attrs.get("references", "")):
        problems.append("references do not cite the paper")
    for c in INDEX_COORDS:
        if c in ds.variables and "units" in ds[c].attrs:
            problems.append("index coordinate %s has units %r" % (c, ds[c].attrs["units"]))
    # the normalizer: an integer coordinate, labelled through an auxiliary coordinate
    if ds["normalizer"].dtype.kind not in "iu":
        problems.append("normalizer coordinate is %s, not an integer" % ds["normalizer"].dtype)
    if "normalizer_name" not in ds.coords:
        problems.append("normalizer_name is not a (label) coordinate of the data")
    else:
        names = [str(x) for x in ds["normalizer_name"].values]
        if names != ["softmax"]:
            problems.append("normalizer labels %r" % names)
    for name, v in ds.data_vars.items():
        stat = name.rsplit("_", 1)[-1]
        if stat in STATS and name.rsplit("_", 1)[0] + "_mean" in ds.data_vars:
            if "cell_methods" not in v.attrs:
                problems.append("%s has no cell_methods" % name)
            if stat == "count" and v.dtype.kind not in "iu":
                problems.append("%s is %s in xarray, not an integer" % (name, v.dtype))
        if "long_name" not in v.attrs and "standard_name" not in v.attrs:
            problems.append("%s has no long_name" % name)
        if name.endswith(("_violations", "_checked", "_vacuous", "_undefined")) or \
                name == "skipped_rows":
            if v.dtype.kind not in "iu":
                problems.append("count %s is %s in xarray, not an integer" % (name, v.dtype))
    for test in ("expected", "random"):
        v = ds["n_crit_" + test]
        if list(np.atleast_1d(v.attrs.get("flag_values", []))) != [0] or \
                v.attrs.get("flag_meanings") != "none_of_the_grid_N_passes":
            problems.append("n_crit_%s: flag attributes %r" % (test, v.attrs))
        raw = xr.open_dataset(path, mask_and_scale=False)["n_crit_" + test]
        if raw.attrs.get("_FillValue") != -1:
            problems.append("n_crit_%s: _FillValue %r, expected -1" % (test, raw.attrs.get("_FillValue")))
    # a selection by label works as CF intends
    try:
        ds["distance_mean"].sel(L=int(ds["L"][-1]), T=float(ds["T"][0]), N=int(ds["N"][0]))
    except Exception as exc:  # noqa: BLE001 - any failure is the finding
        problems.append("selection by coordinate values fails: %s" % exc)
    for p in problems:
        print("check_cf:", p)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1]))

#!/usr/bin/python3
"""check_report: the numbers in a report (report.md table and lines, report.json) equal values
computed here straight from the NetCDF with plain numpy. Usage: check_report.py RUN.nc REPORT_DIR"""
import json
import re
import sys

import netCDF4
import numpy as np


def main(nc_path, rep_dir):
    ds = netCDF4.Dataset(nc_path)
    ds.set_auto_mask(False)
    L = ds["L"][:]; T = ds["T"][:]
    t = int(np.argmin(np.abs(np.log(T))))
    md = open(rep_dir + "/report.md").read()
    js = json.load(open(rep_dir + "/report.json"))
    problems = []
    # n_crit median over all (layer, head) at each L, fill -1 dropped
    nc = ds["n_crit"][0, :, t].astype(float)
    for i, l in enumerate(L):
        vals = nc[i].ravel(); vals = vals[vals >= 0]
        want = float(np.median(vals)) if vals.size else None
        m = re.search(r"^\| %d \| ([^|]+) \|" % l, md, re.M)
        if not m:
            problems.append("no table row for L=%d" % l); continue
        got = m.group(1).strip()
        if want is None:
            if got != "n/a": problems.append("L=%d: n_crit %s, expected n/a" % (l, got))
        elif abs(float(got) - want) > 0.5e-2 * max(1, abs(want)):
            problems.append("L=%d: report n_crit %s, NetCDF median %g" % (l, got, want))
        if js["n_crit"][i]["n_crit_median"] != want:
            problems.append("L=%d: report.json n_crit %r != %r" % (l, js["n_crit"][i]["n_crit_median"], want))
    total = int(ds["violations_exact"][0].sum())
    if not re.search(r"- exact Jacobian: %d$" % total, md, re.M):
        problems.append("exact violation count %d not in report.md" % total)
    if js["violations"]["violations_exact_total"] != total:
        problems.append("report.json exact violations differ")
    for ei, e in enumerate(ds["eps"][:]):
        c = int(ds["violations"][0, :, :, ei].sum())
        if js["violations"]["violations_by_eps"]["%g" % e] != c:
            problems.append("eps=%g violations differ" % e)
    ns = ds["ns_frac_mean"][0, len(L) - 1, t]
    med = np.array([np.median(x[np.isfinite(x)]) if np.isfinite(x).any() else np.nan
                    for x in ns.reshape(ns.shape[0], -1)])
    med = med[np.isfinite(med)]
    if med.size:
        lo, hi = float(med.min()), float(med.max())
        m = re.search(r"from ([0-9]+\.[0-9]+) to ([0-9]+\.[0-9]+)", md)
        if not m or abs(float(m.group(1)) - lo) > 5e-5 or abs(float(m.group(2)) - hi) > 5e-5:
            problems.append("separability range: report %s, NetCDF %.4f..%.4f" % (m and m.groups(), lo, hi))
    used = ds.getncattr("model_used") if "model_used" in ds.ncattrs() else "unknown"
    if "model used: **%s**" % used not in md:
        problems.append("model_used %s not in report" % used)
    for p in problems:
        print("check_report:", p)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1], sys.argv[2]))

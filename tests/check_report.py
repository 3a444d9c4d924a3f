#!/usr/bin/python3
"""check_report: every number of a report (report.json, and the same numbers in report.html)
recomputed here from the NetCDF file with plain numpy, independently of postprocess/report.
Usage: check_report.py RUN.nc REPORT_DIR; prints each problem, exit 1 if any."""
import html
import json
import math
import sys

import netCDF4
import numpy as np


def load(path):
    ds = netCDF4.Dataset(path)
    ds.set_auto_mask(False)
    v = {}
    for name, var in ds.variables.items():
        a = np.array(var[:])
        fill = getattr(var, "_FillValue", None)
        if a.dtype.kind in "iu" and fill is not None:
            a = np.where(a == fill, np.nan, a.astype(float))
        v[name] = a
    attrs = {a: ds.getncattr(a) for a in ds.ncattrs()}
    ds.close()
    return v, attrs


def close(a, b, rel=1e-9):
    """Equal as JSON carries them (the report rounds to 12 decimals)."""
    if a is None or b is None:
        return a is None and b is None
    return abs(a - b) <= rel * max(1.0, abs(a), abs(b)) + 1e-12


def main(nc, rep_dir):
    v, attrs = load(nc)
    rep = json.load(open(rep_dir + "/report.json"))
    page = open(rep_dir + "/report.html", encoding="utf-8").read()
    problems = []
    L, N, T = v["L"].astype(int), v["N"].astype(int), v["T"]
    ti = int(np.argmin(np.abs(np.log(T))))
    li = len(L) - 1
    if rep["T_claims"] != float(T[ti]):
        problems.append("claims at T=%r, expected %r" % (rep["T_claims"], float(T[ti])))
    claims = {c["claim"].split(" (")[0]: c for c in rep["claims"]}

    # n_crit < 6 %: per L, heads found / below 6 % / none / not computable, median fraction
    c = claims["n_crit < 6 % of L"]
    below_majority = 0
    for k, l in enumerate(L):
        nc_ = v["n_crit_expected"][0, k, ti].ravel()
        found = nc_[np.isfinite(nc_) & (nc_ >= 1)]
        d = c["data"][k]
        want = {"L": int(l), "found": int(found.size), "none_found": int(np.sum(nc_ == 0)),
                "not_computable": int(np.sum(np.isnan(nc_))),
                "heads_below_paper": int(np.sum(found / l < 0.06))}
        for key, w in want.items():
            if d[key] != w:
                problems.append("n_crit L=%d: %s %r, expected %r" % (l, key, d[key], w))
        med = float(np.median(found) / l) if found.size else None
        if not close(d["median_frac_found"], med):
            problems.append("n_crit L=%d: median %r, expected %r" % (l, d["median_frac_found"], med))
        below_majority += 2 * want["heads_below_paper"] > nc_.size
    verdict = "reproduced" if below_majority == len(L) else \
        ("contradicted" if below_majority == 0 else "not reproduced")
    if c["verdict"] != verdict:
        problems.append("n_crit verdict %s, expected %s" % (c["verdict"], verdict))

    # N_s/N saturation: median over heads of ns_frac_mean for 1 < N < L_max
    c = claims["N_s/N saturates at 70-85 %"]
    ks = [k for k, n in enumerate(N) if 1 < n < L[li]]
    meds = [float(np.nanmedian(v["ns_frac_mean"][0, li, ti, k])) for k in ks]
    if c["data"]["N"] != [int(N[k]) for k in ks] or \
            not all(close(a, b) for a, b in zip(c["data"]["median_ns_frac"], meds)):
        problems.append("N_s/N medians %r, expected %r" % (c["data"]["median_ns_frac"], meds))

    # gradient bound: violations at the first N (each row once per T), max jac_exact * T
    c = claims["gradient norm <= min(1/(4T), sqrt 2)"]
    viol = int(np.nansum(v["jac_exact_violations"][0, :, :, 0]))
    chk = int(np.nansum(v["jac_exact_checked"][0, :, :, 0]))
    worst = float(np.nanmax(v["jac_exact_max"][0] * T[None, :, None, None]))
    if c["data"]["violations"] != viol or c["data"]["checked"] != chk or \
            not close(c["data"]["max_jac_exact_times_T"], worst):
        problems.append("gradient claim %r, expected %d of %d, %r" % (c["data"], viol, chk, worst))
    if c["verdict"] != ("contradicted" if viol else "reproduced"):
        problems.append("gradient verdict %s with %d violations" % (c["verdict"], viol))
    if worst > 0.5 * (1 + 1e-9):
        problems.append("jac_exact x T = %r exceeds the exact softmax maximum 1/2" % worst)

    # distance linear in L at N nearest 5: log-log slope of median q50 over heads
    c = claims["at N = 5 the distance grows roughly linearly in L"]
    n5 = int(np.argmin(np.abs(N - 5)))
    keep = L > N[n5]
    y = np.array([np.nanmedian(v["distance_q50"][0, k, ti, n5]) for k in np.flatnonzero(keep)])
    x = L[keep].astype(float)
    ok = np.isfinite(y) & (y > 0)
    if ok.sum() >= 2:
        slope = float(np.polyfit(np.log(x[ok]), np.log(y[ok]), 1)[0])
        if not close(c["data"]["slope"], slope, 1e-6):
            problems.append("slope %r, expected %r" % (c["data"]["slope"], slope))

    # the bound tightens for N > 20: d_bound / d of the median q50s
    c = claims["for N > 20 the distance plateaus while the bound tightens"]
    small = [k for k in range(len(N)) if N[k] < L[li] and N[k] <= 20]
    big = [k for k in range(len(N)) if 20 < N[k] < L[li]]
    if small and big:
        r = [float(np.nanmedian(v["distance_bound_q50"][0, li, ti, k]) /
                   np.nanmedian(v["distance_q50"][0, li, ti, k])) for k in (small[-1], big[-1])]
        if not (close(c["data"]["ratio_small"], r[0], 1e-6) and close(c["data"]["ratio_big"], r[1], 1e-6)):
            problems.append("bound ratios %r, expected %r" % (c["data"], r))
    elif c["verdict"] != "not testable":
        problems.append("tightening claim should be not testable on this grid")

    # violations table: each count and its denominator
    want = {
        "thm1": ("thm1_violations", "thm1_checked", (slice(None),)),
        "ns_lower": ("ns_lower_violations", "ns_lower_checked", (slice(None),)),
        "ns_lower_vacuous": ("ns_lower_vacuous", "ns_lower_checked", (slice(None),)),
        "jac_exact": ("jac_exact_violations", "jac_exact_checked", (slice(None), slice(None), 0)),
        "lemma2": ("lemma2_violations", "lemma2_checked", (slice(None), slice(None), 0)),
        "ns_upper_N_gt_1": ("ns_upper_violations", "ns_upper_checked",
                            (slice(None), slice(None), N > 1)),
    }
    for key, (a, b, sl) in want.items():
        got = rep["violations"][key]
        cnt, of = int(np.nansum(v[a][(0,) + sl])), int(np.nansum(v[b][(0,) + sl]))
        if (got["count"], got["of"]) != (cnt, of):
            problems.append("violations %s: %d of %d, expected %d of %d"
                            % (key, got["count"], got["of"], cnt, of))
        if ">%d</td><td>%d<" % (cnt, of) not in page.replace("\n", ""):
            problems.append("violations %s (%d of %d) not in report.html" % (key, cnt, of))
    for e_i, e in enumerate(v["eps"]):
        got = rep["violations"]["jac_fd_eps_%g" % e]
        cnt = int(np.nansum(v["jac_fd_violations"][0, :, :, 0, e_i]))
        if got["count"] != cnt:
            problems.append("jac_fd eps=%g: %d, expected %d" % (e, got["count"], cnt))

    # the HTML carries each claim's measured value and verdict, and the caveat when needed
    for c in rep["claims"]:
        for part in (c["measured"], c["verdict"]):
            if html.escape(part) not in page:
                problems.append("report.html lacks %r" % part)
    used, req = str(attrs.get("model_used")), str(attrs.get("model_requested"))
    needs_caveat = str(attrs.get("model_fallback")) == "true" or "standin" in used
    if needs_caveat != ("id='caveat'" in page):
        problems.append("caveat shown: %s, expected %s" % ("id='caveat'" in page, needs_caveat))
    for p in problems:
        print("check_report:", p)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1], sys.argv[2]))

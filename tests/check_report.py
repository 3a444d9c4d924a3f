#!/usr/bin/python3
"""check_report: the numbers of a report (report.json, and the same in report.html) recomputed
here from the NetCDF file with plain numpy, independently of postprocess/normsweep_report:
the claims' temperature; per L the paper's n_crit (heads found, none found, the median over
heads with "none" above every N) -- which the report recomputes from the per-row samples with its
own KS test, so the file's n_crit checks it; every bound count and its denominator; the point
estimate of each claim that has one on this grid; the verdict of each count-decided claim; the
fields every verdict row must have; and that the page shows each verdict and the caveat.

The file is read in its own layout (docs/OUTPUT.md, output_layout 2): n_crit missing where no N
is found with n_crit_expected_status saying why, the Jacobian counts without an N dimension, the
minimum and maximum at quantile 0 and 1 of <stem>_quantile.

With --sinks, only the sink section and the verdicts of every normalizer entry.

Usage: check_report.py [--sinks] RUN.nc REPORT_DIR; prints each problem, exit 1 if any."""
import html
import json
import math
import sys

import netCDF4
import numpy as np

VERDICTS = ("supported", "contradicted", "inconclusive")
FIELDS = ("verdict", "estimate", "ci_low", "ci_high", "threshold", "grid", "n_samples", "fragile")


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


def num(x):
    return math.inf if x == "inf" else (-math.inf if x == "-inf" else x)


def close(a, b, rel):
    """Equal within rel: the report's means sum shard by shard (docs/STATISTICS.md), numpy's
    pairwise, so the two differ by rounding (a few 1e-16 relative) -- 1e-12 leaves room."""
    a, b = num(a), num(b)
    if a is None or b is None:
        return a is None and b is None
    if math.isinf(a) or math.isinf(b):
        return a == b
    return abs(a - b) <= rel * max(1e-300, abs(a), abs(b))


def heads_mean(v, stem, idx):
    """Each head's mean over rows, from the samples when the file has them."""
    if stem + "_sample" in v:
        return np.nanmean(v[stem + "_sample"][idx], axis=-1).ravel()
    return v[stem + "_mean"][idx].ravel()


def check_sinks(v, rep, page, li, ti):
    """The sink section (METRICS.md 8.1): per normalizer entry and layer at (L_max, T_claims), the
    mean over heads of sink_mass_mean (by math.fsum: an order-free sum, so only the last bits of
    the report's numpy mean may differ: rel 1e-12), the heads whose mean exceeds 0.3 (exact), the
    file's sink_heads_frac (exact) and that it is that count over the heads with a mean; the
    verdicts of every entry, the first entry's equal to the main table's."""
    out = []
    nv = v["normalizer"]
    names = [str(x) for x in (netCDF4.chartostring(nv) if nv.dtype.kind == "S" else nv)]
    if "sink_mass_mean" not in v:
        if rep.get("sinks") is not None:
            out.append("sinks given for a file without sink_mass")
        return out
    s = rep.get("sinks") or []
    if [e["normalizer"] for e in s] != names:
        return out + ["sinks for %r, the file's normalizers %r"
                      % ([e["normalizer"] for e in s], names)]
    for ni, e in enumerate(s):
        m = np.asarray(v["sink_mass_mean"][ni, li, ti], float)
        for k, b in enumerate(e["by_layer"]):
            row = [float(x) for x in m[k] if np.isfinite(x)]
            mean = math.fsum(row) / len(row) if row else None
            if (mean is None) != (b["mean_sink_mass"] is None) or \
                    (mean is not None and not close(b["mean_sink_mass"], mean, 1e-12)):
                out.append("%s layer %d: mean sink mass %r, expected %r"
                           % (names[ni], k, b["mean_sink_mass"], mean))
            above = sum(1 for x in row if x > 0.3)
            if b["sink_heads"] != above or b["heads"] != m.shape[1]:
                out.append("%s layer %d: %d of %d sink heads, expected %d of %d"
                           % (names[ni], k, b["sink_heads"], b["heads"], above, m.shape[1]))
            f = float(v["sink_heads_frac"][ni, li, ti, k])
            if (b["sink_heads_frac"] is None) != (not math.isfinite(f)) or \
                    (math.isfinite(f) and b["sink_heads_frac"] != f):
                out.append("%s layer %d: sink_heads_frac %r, the file's %r"
                           % (names[ni], k, b["sink_heads_frac"], f))
            if row and math.isfinite(f) and f != above / len(row):
                out.append("%s layer %d: the file's sink_heads_frac %r is not %d / %d"
                           % (names[ni], k, f, above, len(row)))
    if "fig8_sink_mass" not in rep["figures"] or "id='sinks'" not in page:
        out.append("the sink section or its figure is missing")
    by = rep.get("claims_by_normalizer") or []
    if [e["normalizer"] for e in by] != names:
        out.append("claims_by_normalizer for %r" % [e["normalizer"] for e in by])
    elif [c["verdict"] for c in by[0]["claims"]] != [c["verdict"] for c in rep["claims"]]:
        out.append("the first normalizer's verdicts differ from the verdict table's")
    for e in by:
        if [c["id"] for c in e["claims"]] != [c["id"] for c in rep["claims"]]:
            out.append("%s: not every claim judged" % e["normalizer"])
        if any(c["verdict"] not in VERDICTS for c in e["claims"]):
            out.append("%s: a verdict that is not one of %s" % (e["normalizer"], VERDICTS))
    return out


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
    claims = {c["id"]: c for c in rep["claims"]}

    # the paper's n_crit per L at T_claims: heads found, none, median with none above every N
    for k, l in enumerate(L):
        nc_ = v["n_crit_expected"][0, k, ti].ravel()
        status = v["n_crit_expected_status"][0, k, ti].ravel()  # 0 found, 1 none, 2 not computable
        if np.any(np.isfinite(nc_) != (status == 0)):
            problems.append("n_crit L=%d: n_crit given where its status says none is found" % l)
        vals = np.sort(np.concatenate([nc_[status == 0] / l, np.full(np.sum(status == 1), np.inf)]))
        c = vals.size
        med = None if not c else (vals[(c - 1) // 2] + vals[c // 2]) / 2
        w = rep["headline"]["n_crit_expected_by_L"][k]
        want = {"L": int(l), "found": int(np.sum(status == 0)), "none_found": int(np.sum(status == 1)),
                "not_computable": int(np.sum(status == 2)), "heads": int(nc_.size)}
        for key, x in want.items():
            if w[key] != x:
                problems.append("n_crit L=%d: %s %r, expected %r" % (l, key, w[key], x))
        if not close(w["median_frac"], med, 0):
            problems.append("n_crit L=%d: median %r, expected %r" % (l, w["median_frac"], med))
        for p in claims["fig3_ncrit"].get("per_L", []):
            if p["L"] == l and p["estimate"] is not None and "samples" in rep["uncertainty"]["source"] \
                    and not close(p["estimate"], med, 0):
                problems.append("fig3_ncrit at L=%d: the report's own n_crit gives %r, the file's "
                                "%r" % (l, p["estimate"], med))

    # every verdict row: its fields and a verdict of the three
    for c in rep["claims"]:
        for f in FIELDS:
            if f not in c:
                problems.append("%s: no %s" % (c["id"], f))
        if c.get("verdict") not in VERDICTS or not isinstance(c.get("fragile"), bool):
            problems.append("%s: verdict %r, fragile %r" % (c["id"], c.get("verdict"),
                                                           c.get("fragile")))
        if c.get("ci_low") is None and c.get("verdict") != "inconclusive" and \
                "count" not in c:
            problems.append("%s: %s without an interval" % (c["id"], c["verdict"]))
        if html.escape(c["claim"]) not in page:
            problems.append("report.html lacks the claim %r" % c["claim"])
    if not any(c["verdict"] == "supported" for c in rep["claims"]):
        problems.append("no supported claim")

    # count-decided claims: recomputed counts and their verdict (the Jacobian's have no N: each
    # row counts once per T)
    for cid, cnt_v, chk_v in (("thm1_bound", "thm1_violations", "thm1_checked"),
                              ("lemma2_general", "lemma2_violations", "lemma2_checked"),
                              ("lemma2_corollary", "jac_exact_violations", "jac_exact_checked")):
        cnt, chk = int(np.nansum(v[cnt_v][0])), int(np.nansum(v[chk_v][0]))
        c = claims[cid]
        if (c["count"], c["checked"]) != (cnt, chk):
            problems.append("%s: %d of %d, expected %d of %d" % (cid, c["count"], c["checked"],
                                                               cnt, chk))
        want = "contradicted" if cnt else ("supported" if chk else "inconclusive")
        if c["verdict"] != want:
            problems.append("%s: verdict %s with %d of %d" % (cid, c["verdict"], cnt, chk))
    q_max = int(np.flatnonzero(v["quantile"] == 1.0)[0])
    jT = np.nanmax(v["jac_exact_quantile"][q_max][0] * T[None, :, None, None])
    if not close(claims["lemma2_corollary"]["max_jac_exact_times_T"], float(jT), 0):
        problems.append("max jac_exact x T %r, expected %r"
                        % (claims["lemma2_corollary"]["max_jac_exact_times_T"], jT))
    if jT > 0.5 * (1 + 1e-9):
        problems.append("jac_exact x T = %r exceeds the exact softmax maximum 1/2" % jT)

    # point estimates, from the samples (or the cell means) with numpy
    below = [k for k, n in enumerate(N) if 1 < n < L[li]]
    if below and N[below[-1]] >= 20:
        k = below[-1]
        med = float(np.median(heads_mean(v, "ns_frac", (0, li, ti, k))))
        if not close(claims["fig4_saturation"]["estimate"], med, 1e-12):
            problems.append("N_s/N estimate %r, expected %r"
                            % (claims["fig4_saturation"]["estimate"], med))
        gaps = [float(np.median(heads_mean(v, "ns_frac", (0, li, ti, kk)) -
                                heads_mean(v, "ns_upper", (0, li, ti, kk)))) for kk in below]
        if not close(claims["thm2_upper"]["estimate"], max(gaps), 1e-9):
            problems.append("Theorem 2 upper gap %r, expected %r"
                            % (claims["thm2_upper"]["estimate"], max(gaps)))
    n5 = int(np.argmin(np.abs(N - 5)))
    keep = np.flatnonzero(L > N[n5])
    if keep.size >= 3 and not claims["fig2b_linear_distance"]["reason"].startswith("the grid"):
        y = np.array([np.median(heads_mean(v, "distance", (0, k, ti, n5))) for k in keep])
        slope = float(np.polyfit(np.log(L[keep].astype(float)), np.log(y), 1)[0])
        if not close(claims["fig2b_linear_distance"]["estimate"], slope, 1e-9):
            problems.append("slope of d against L %r, expected %r"
                            % (claims["fig2b_linear_distance"]["estimate"], slope))

    # the bound-check table: each count and its denominator, in the JSON and on the page
    want = {
        "thm1": ("thm1_violations", "thm1_checked", (slice(None),)),
        "ns_lower": ("ns_lower_violations", "ns_lower_checked", (slice(None),)),
        "ns_lower_vacuous": ("ns_lower_vacuous", "ns_lower_checked", (slice(None),)),
        "jac_exact": ("jac_exact_violations", "jac_exact_checked", (slice(None),)),
        "lemma2": ("lemma2_violations", "lemma2_checked", (slice(None),)),
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
        cnt = int(np.nansum(v["jac_fd_violations"][0, :, :, e_i]))
        if got["count"] != cnt:
            problems.append("jac_fd eps=%g: %d, expected %d" % (e, got["count"], cnt))

    # the model as the file records it: normsweep archive and verify compare these with the NetCDF
    for k, attr in (("requested", "model_requested"), ("used", "model_used"),
                    ("sha256", "model_sha256")):
        if rep["model"][k] != str(attrs.get(attr, "unknown")):
            problems.append("model.%s %r, the file's %s %r" % (k, rep["model"][k], attr,
                                                              attrs.get(attr)))
    # the caveat when the model is a stand-in or a fallback
    used = " ".join(str(attrs.get(a, "")) for a in ("model_used", "model_path", "model_requested"))
    needs_caveat = str(attrs.get("model_fallback")) == "true" or "standin" in used
    if needs_caveat != ("id='caveat'" in page):
        problems.append("caveat shown: %s, expected %s" % ("id='caveat'" in page, needs_caveat))
    problems += check_sinks(v, rep, page, li, ti)
    for p in problems:
        print("check_report:", p)
    return 1 if problems else 0


def sinks_only(nc, rep_dir):
    """--sinks: only the sink section (a file without the quick sweep's grid or samples)."""
    v, _ = load(nc)
    rep = json.load(open(rep_dir + "/report.json"))
    page = open(rep_dir + "/report.html", encoding="utf-8").read()
    T = v["T"]
    problems = check_sinks(v, rep, page, len(v["L"]) - 1, int(np.argmin(np.abs(np.log(T)))))
    if "sink_mass_mean" not in v:
        problems.append("the file has no sink_mass_mean")
    for p in problems:
        print("check_report:", p)
    return 1 if problems else 0


if __name__ == "__main__":
    if sys.argv[1] == "--sinks":
        sys.exit(sinks_only(sys.argv[2], sys.argv[3]))
    sys.exit(main(sys.argv[1], sys.argv[2]))

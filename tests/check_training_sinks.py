#!/usr/bin/python3
"""check_training_sinks: the training page's "sink mass and selectivity" table (training.json's
sink_selectivity, postprocess/normsweep_report/training_sinks.py) against independent references.

    check_training_sinks.py GRID_DIR training.json
        every swept cell's values recomputed here from its sweep.nc (netCDF4 and numpy: the
        entry of the model's own normalizer, largest L, T nearest 1, largest N <= L with values,
        means over heads) and every group's pooled mean and 95 % interval with scipy's Student t;
        the page (training.html beside training.json) has the table.
    check_training_sinks.py --hand-made POSTPROCESS_DIR WORK_DIR
        writes a train-grid directory whose sweep.nc files hold dyadic values chosen here (plus
        decoys at the indices that must not be read), runs postprocess/report --training on it,
        and checks training.json against the values known here exactly, then runs the mode above.

Tolerance: the recomputing mode compares to 1e-12 relative (means of the same few doubles summed
in another order may differ in the last bits); the hand-made mode exactly, except the interval
bounds (scipy's quantile times a square root: 1e-12 relative)."""
import json
import math
import os
import subprocess
import sys

import numpy as np
import netCDF4
from scipy.stats import t as student

KEYS = ("sink_mass", "sink_heads_frac", "mass", "entropy_norm", "n_eff", "ns_frac",
        "n_crit_expected_frac")


def close(a, b, rel=1e-12):
    if a is None or b is None:
        return a is None and b is None
    return a == b or abs(a - b) <= rel * max(abs(a), abs(b))


def fmean(xs):
    xs = [float(x) for x in np.ravel(xs) if math.isfinite(x)]
    return math.fsum(xs) / len(xs) if xs else None


def ref_pool(xs):
    """Mean and the 95 % Student-t interval across seeds (scipy), None-free values only."""
    xs = [x for x in xs if x is not None]
    if not xs:
        return None, None, None, 0
    m = math.fsum(xs) / len(xs)
    if len(xs) < 2:
        return m, None, None, 1
    s = math.sqrt(math.fsum((x - m) ** 2 for x in xs) / (len(xs) - 1))
    half = float(student.ppf(0.975, len(xs) - 1)) * s / math.sqrt(len(xs))
    return m, m - half, m + half, len(xs)


def recompute(path, normalizer):
    with netCDF4.Dataset(path) as ds:
        ds.set_auto_mask(False)
        ds.set_auto_chartostring(False)
        names = [bytes(r).rstrip(b"\0").decode() for r in np.asarray(ds["normalizer"][:])]
        view = (list(np.asarray(ds["view"][:])) if "view" in ds.variables
                else [0] * len(names))
        g = {k: np.asarray(ds[k][:], float) for k in
             ("L", "T", "N", "sink_mass_mean", "sink_heads_frac", "mass_mean",
              "entropy_norm_mean", "n_eff_mean", "ns_frac_mean", "n_crit_expected_frac")}
    own = [i for i, n in enumerate(names)
           if view[i] == 0 and n.split(" ")[0] == normalizer]
    ni = own[0] if own else 0
    li = list(g["L"]).index(max(g["L"]))
    dist = [abs(math.log(t)) for t in g["T"]]
    ti = dist.index(min(dist))
    L = int(g["L"][li])
    ns = g["ns_frac_mean"][ni, li, ti]
    Ns = [(int(n), k) for k, n in enumerate(g["N"]) if n <= L and np.isfinite(ns[k]).any()]
    k = max(Ns)[1] if Ns else None
    at = lambda v: g[v][ni, li, ti]
    return {"analysed_as": names[ni], "own_normalizer": bool(own), "L": L,
            "T": float(g["T"][ti]), "N": int(g["N"][k]) if k is not None else None,
            "sink_mass_layer": [fmean(r) for r in at("sink_mass_mean")],
            "sink_heads_frac_layer": [None if not math.isfinite(x) else float(x)
                                      for x in at("sink_heads_frac")],
            "sink_mass": fmean(at("sink_mass_mean")),
            "sink_heads_frac": fmean(at("sink_heads_frac")),
            "mass": fmean(at("mass_mean")), "entropy_norm": fmean(at("entropy_norm_mean")),
            "n_eff": fmean(at("n_eff_mean")), "ns_frac": fmean(ns[k]) if k is not None else None,
            "n_crit_expected_frac": fmean(at("n_crit_expected_frac"))}


def check_pooled(bad, label, got, values):
    m, lo, hi, n = ref_pool(values)
    if got["n"] != n:
        bad.append("%s: pooled over %s values, expected %d" % (label, got["n"], n))
    for k, want in (("estimate", m), ("ci_low", lo), ("ci_high", hi)):
        if not close(got[k], want):
            bad.append("%s: %s = %r, recomputed %r" % (label, k, got[k], want))


def check_grid(grid, path):
    rep = json.load(open(path))
    sel = rep["sink_selectivity"]
    cells = {c["cell"]: c for c in rep["cells"]}
    bad = []
    swept = sorted(n for n in os.listdir(grid)
                   if os.path.exists(os.path.join(grid, n, "sweep.nc")))
    got = {c["cell"]: c for c in sel["cells"]}
    if sorted(got) != swept:
        bad.append("table cells %s, swept cells %s" % (sorted(got), swept))
    mine = {}
    for name in swept:
        mine[name] = recompute(os.path.join(grid, name, "sweep.nc"), cells[name]["normalizer"])
        for k, want in mine[name].items():
            g = got.get(name, {}).get(k)
            ok = (all(close(a, b) for a, b in zip(g, want)) and len(g) == len(want)
                  if isinstance(want, list) else
                  close(g, want) if isinstance(want, float) else g == want)
            if not ok:
                bad.append("%s: %s = %r, sweep.nc gives %r" % (name, k, g, want))
    # the groups: training normalizer, clip, T and the analysis point; every swept cell in one
    grouped = sorted(n for r in sel["rows"] for n in r["cells"])
    if grouped != swept:
        bad.append("rows hold cells %s" % grouped)
    for r in sel["rows"]:
        m = [mine[n] for n in r["cells"]]
        keys = {(cells[n]["normalizer"], cells[n]["clip"], cells[n]["T"], mine[n]["analysed_as"],
                 mine[n]["L"], mine[n]["T"], mine[n]["N"]) for n in r["cells"]}
        if len(keys) != 1 or keys != {(r["normalizer"], r["clip"], r["T"], r["analysed_as"],
                                       r["L"], r["analysis_T"], r["N"])}:
            bad.append("row %s/%s mixes %s" % (r["normalizer"], r["T"], sorted(map(str, keys))))
        if r["seeds"] != [cells[n]["seed"] for n in r["cells"]]:
            bad.append("row %s: seeds %s" % (r["normalizer"], r["seeds"]))
        for k in KEYS:
            check_pooled(bad, "%s T=%g %s" % (r["normalizer"], r["T"], k), r[k], [x[k] for x in m])
        for j in range(len(r["layers"])):
            for k in ("sink_mass_layer", "sink_heads_frac_layer"):
                check_pooled(bad, "%s layer %d %s" % (r["normalizer"], j, k), r[k][j],
                             [x[k][j] for x in m])
    html = open(os.path.join(os.path.dirname(path), "training.html")).read()
    h2 = "<h2>Sink mass and selectivity</h2>"
    if sel["rows"] and (h2 not in html or html.split(h2)[1].split("</table>")[0].count("<tr>")
                        != len(sel["rows"]) + 1):
        bad.append("training.html lacks the sink mass and selectivity table (one row per group)")
    return bad, sel


# ---- the hand-made grid ----------------------------------------------------------------------

def train_nc(d, norm, T, seed):
    os.makedirs(d, exist_ok=True)
    open(os.path.join(d, "model.safetensors"), "w").close()
    with netCDF4.Dataset(os.path.join(d, "train.nc"), "w") as ds:
        for k, n in (("step", 4), ("eval", 2), ("layer", 2), ("quantile", 2)):
            ds.createDimension(k, n)
        for name, dims, data in (
                ("step", ("step",), [1, 2, 3, 4]), ("loss", ("step",), [10, 9, 8, 7]),
                ("grad_norm", ("step",), [1, 2, 1, 1]),
                ("grad_norm_layer", ("step", "layer"), np.ones((4, 2))),
                ("attn_jac", ("step", "layer", "quantile"), np.ones((4, 2, 2))),
                ("quantile", ("quantile",), [0.5, 0.95]),
                ("attn_jac_above_bound", ("step", "layer"), np.zeros((4, 2))),
                ("eval_step", ("eval",), [0, 4]), ("val_loss", ("eval",), [10.8, 7.0])):
            ds.createVariable(name, "f8", dims)[:] = data
        ds.normsweep_attn_normalizer = norm
        ds.normsweep_attn_temperature = float(T)
        ds.steps = np.int64(4)
        ds.steps_completed = np.int64(4)
        ds.clip = 1.0
        ds.train_options = json.dumps({"seed": seed})


L_AX, T_AX, N_AX = [16, 64, 32], [0.5, 1.0, 2.0], [1, 4, 8, 128]
LI, TI = 1, 1          # L = 64 (the largest, not the last), T = 1
DECOY = 7.0            # at every other index: read there, a value would be off by far


def sweep_nc(path, names, own, v, view=None):
    """v: per quantity the (layer, head) or (layer,) values at (own, L = 64, T = 1); N = 4 gets
    v["ns_frac"], N = 8 nothing (NaN), N = 128 (> L) a decoy."""
    nn, nl, nh = len(names), 2, 3
    with netCDF4.Dataset(path, "w") as ds:
        for k, n in (("normalizer", nn), ("name_strlen", 32), ("L", 3), ("T", 3), ("N", 4),
                     ("layer", nl), ("head", nh)):
            ds.createDimension(k, n)
        ds.createVariable("normalizer", "S1", ("normalizer", "name_strlen"))[:] = \
            netCDF4.stringtochar(np.array(names, "S32"))
        if view is not None:
            ds.createVariable("view", "i4", ("normalizer",))[:] = view
        for k, ax, t in (("L", L_AX, "i4"), ("T", T_AX, "f8"), ("N", N_AX, "i4"),
                         ("layer", [0, 1], "i4"), ("head", [0, 1, 2], "i4")):
            ds.createVariable(k, t, (k,))[:] = ax
        base = ("normalizer", "L", "T")
        for k in ("sink_mass", "mass", "entropy_norm", "n_eff", "n_crit_expected_frac"):
            a = np.full((nn, 3, 3, nl, nh), DECOY)
            a[own, LI, TI] = v[k]
            name = k if k == "n_crit_expected_frac" else k + "_mean"
            ds.createVariable(name, "f8", base + ("layer", "head"))[:] = a
        a = np.full((nn, 3, 3, nl), DECOY)
        a[own, LI, TI] = v["sink_heads_frac"]
        ds.createVariable("sink_heads_frac", "f8", base + ("layer",))[:] = a
        a = np.full((nn, 3, 3, 4, nl, nh), DECOY)
        a[own, LI, TI, 1] = v["ns_frac"]
        a[own, LI, TI, 2] = np.nan
        ds.createVariable("ns_frac_mean", "f8", base + ("N", "layer", "head"))[:] = a


nan = float("nan")


def values(seed, sink0, crit):
    """One cell's values; sink0: the first head's sink mass in layer 0 (differs by seed)."""
    return {"sink_mass": [[sink0, 0.25, nan], [0.125, 0.125, 0.5]],
            "sink_heads_frac": [0.5, seed / 64.0],
            "mass": [[1, 1, 1], [1, 1, 1]] if seed < 10 else [[0.5, 0.25, 0.75], [1, 1, 1.5]],
            "entropy_norm": [[0.5, 0.75, 1.0], [0.25, 0.5, 0.5 + seed / 8.0]],
            "n_eff": [[4, 8, 16], [2, 2, 4 + 6 * seed]],   # mean 6 + seed
            "ns_frac": [[0.25, 0.75, 0.5], [0.5, 0.5, 0.5]],
            "n_crit_expected_frac": crit}


def hand_made(post, work):
    grid = os.path.join(work, "sinks_grid")
    os.makedirs(grid, exist_ok=True)
    open(os.path.join(grid, "training.yaml"), "w").write("# hand-made\n")
    crit = [[0.125, nan, 0.25], [nan, nan, 0.375]]   # n_crit not found in three heads
    cells = {}
    # softmax, three seeds; its own entry first
    for seed, s0 in ((1, 0.5), (2, 0.75), (3, 0.25)):
        n = "softmax-T1-s%d" % seed
        train_nc(os.path.join(grid, n, "model"), "softmax", 1.0, seed)
        cells[n] = values(seed, s0, crit)
        sweep_nc(os.path.join(grid, n, "sweep.nc"), ["softmax", "sigmoid b=-log(L)"], 0, cells[n])
    # sigmoid, two seeds; its own entry the third, after its sink-excluded view (an order no
    # sweep writes -- views come last --, so that taking the view would show)
    for seed, s0 in ((10, 0.875), (11, 0.625)):
        n = "sigmoid-T1-s%d" % seed
        train_nc(os.path.join(grid, n, "model"), "sigmoid", 1.0, seed)
        cells[n] = values(seed, s0, crit)
        sweep_nc(os.path.join(grid, n, "sweep.nc"),
                 ["softmax", "sigmoid b=-log(L), sink excluded", "sigmoid b=-log(L)"], 2,
                 cells[n], view=[0, 1, 0])
    # softmax1, one seed, swept without a softmax1 entry: the first entry, no interval
    n = "softmax1-T1-s4"
    train_nc(os.path.join(grid, n, "model"), "softmax1", 1.0, 4)
    cells[n] = values(4, 0.5, crit)
    sweep_nc(os.path.join(grid, n, "sweep.nc"), ["softmax", "sigmoid b=-log(L)"], 0, cells[n])
    # a trained cell without a sweep: not in the table
    train_nc(os.path.join(grid, "softmax-T0.5-s1", "model"), "softmax", 0.5, 1)
    out = os.path.join(work, "sinks_report")
    r = subprocess.run([sys.executable, os.path.join(post, "report"), "--training", grid,
                        "--out", out, "--format", "png"], capture_output=True, text=True)
    if r.returncode:
        return ["report --training: exit %d: %s%s" % (r.returncode, r.stdout, r.stderr)]
    bad, sel = check_grid(grid, os.path.join(out, "training.json"))
    # exact values known here (dyadic: every mean below is exact in double)
    rows = {r["normalizer"]: r for r in sel["rows"]}
    if sorted(rows) != ["sigmoid", "softmax", "softmax1"] or len(sel["rows"]) != 3:
        return bad + ["rows: %s" % [r["normalizer"] for r in sel["rows"]]]
    want = {  # normalizer: (analysed as, own, seeds, layer-0 sink means per seed, n_eff per seed)
        "softmax": ("softmax", True, [1, 2, 3], [0.375, 0.5, 0.25], [7.0, 8.0, 9.0]),
        "sigmoid": ("sigmoid b=-log(L)", True, [10, 11], [0.5625, 0.4375], [16.0, 17.0]),
        "softmax1": ("softmax", False, [4], [0.375], [10.0])}
    for norm, (entry, own, seeds, l0, neff) in want.items():
        r = rows[norm]
        if (r["analysed_as"], r["own_normalizer"], r["seeds"], r["L"], r["analysis_T"],
                r["N"]) != (entry, own, seeds, 64, 1.0, 4):
            bad.append("%s: analysed as %r own %r seeds %r at L %r T %r N %r" % (
                norm, r["analysed_as"], r["own_normalizer"], r["seeds"], r["L"],
                r["analysis_T"], r["N"]))
        if r["sink_mass_layer"][0]["values"] != l0 or r["n_eff"]["values"] != neff:
            bad.append("%s: layer-0 sink mass %r (want %r), n_eff %r (want %r)" % (
                norm, r["sink_mass_layer"][0]["values"], l0, r["n_eff"]["values"], neff))
        if r["sink_mass_layer"][0]["estimate"] != sum(l0) / len(l0):
            bad.append("%s: pooled layer-0 sink mass %r" % (norm, r["sink_mass_layer"][0]))
        if (r["ns_frac"]["estimate"], r["sink_mass_layer"][1]["estimate"],
                r["n_crit_expected_frac"]["estimate"]) != (0.5, 0.25, 0.25):
            bad.append("%s: N_s/N %r, layer-1 sink mass %r, n_crit/L %r" % (
                norm, r["ns_frac"]["estimate"], r["sink_mass_layer"][1]["estimate"],
                r["n_crit_expected_frac"]["estimate"]))
    # softmax's layer-0 interval: 0.375 +- t(0.975, 2) * 0.125 / sqrt(3)
    half = float(student.ppf(0.975, 2)) * 0.125 / math.sqrt(3)
    got = rows["softmax"]["sink_mass_layer"][0]
    if not (close(got["ci_low"], 0.375 - half) and close(got["ci_high"], 0.375 + half)):
        bad.append("softmax layer-0 interval %r, want 0.375 -+ %r" % (got, half))
    if rows["softmax1"]["sink_mass"]["ci_low"] is not None:
        bad.append("one seed has an interval: %r" % rows["softmax1"]["sink_mass"])
    html = open(os.path.join(out, "training.html")).read()
    if "softmax (not the model's own)" not in html or "0.375 [" not in html:
        bad.append("training.html: no 'not the model's own' note or no interval for softmax")
    return bad


def main(argv):
    if argv[:1] == ["--hand-made"]:
        bad = hand_made(argv[1], argv[2])
    else:
        bad = check_grid(argv[0], argv[1])[0]
    for b in bad:
        print("check_training_sinks:", b)
    print("check_training_sinks: %d problem(s)" % len(bad))
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

#!/usr/bin/python3
"""check_training_report: training.json (postprocess/report --training) against the grid's own
training logs, read here independently: every cell present, its initial and final validation
loss, gradient-norm median and maximum, clipped fraction and the Jacobian's q95 maximum equal to
what train.nc holds (exactly: the report copies the stored doubles), each cell's verdict and each
training claim (per normalizer, clip and T <= 0.1: the paired gap over seeds, its 95 % Student-t
interval and the three answers) recomputed from the rules training.json states.

    check_training_report.py GRID_DIR training.json
"""
import glob
import json
import math
import os
import sys

import numpy as np
import netCDF4
from scipy.stats import t as t_dist


def main(grid, path):
    with open(path) as f:
        rep = json.load(f)
    rules = rep["rules"]
    cells = {c["cell"]: c for c in rep["cells"]}
    logs = sorted(glob.glob(os.path.join(grid, "*", "model", "train.nc")))
    bad = []
    if sorted(cells) != sorted(p.split(os.sep)[-3] for p in logs):
        bad.append("cells %s vs logs %s" % (sorted(cells), logs))
    rows = {}
    for p in logs:
        name = p.split(os.sep)[-3]
        c = cells.get(name)
        if c is None:
            continue
        with netCDF4.Dataset(p) as ds:
            ds.set_auto_mask(False)
            val = np.array(ds["val_loss"][:], float)
            g = np.array(ds["grad_norm"][:], float)
            loss = np.array(ds["loss"][:], float)
            q = list(np.array(ds["quantile"][:], float))
            jac = np.array(ds["attn_jac"][:], float)[:, :, q.index(0.95)]
            norm = ds.getncattr("normsweep_attn_normalizer")
            T = float(ds.getncattr("normsweep_attn_temperature"))
            steps, done = int(ds.getncattr("steps")), int(ds.getncattr("steps_completed"))
            clip = float(ds.getncattr("clip"))
            attrs = ds.ncattrs()
            seed = int(ds.getncattr("seed")) if "seed" in attrs else \
                int(json.loads(ds.getncattr("train_options"))["seed"])  # a string there
        want = {"normalizer": norm, "T": T, "val_loss_initial": val[0], "val_loss_final": val[-1],
                "grad_norm_median": float(np.median(g)), "grad_norm_max": float(g.max()),
                "clipped_fraction": float(np.mean(g > clip)),
                "attn_jac_q95_max": float(np.nanmax(jac)), "steps_completed": done, "seed": seed}
        for k, v in want.items():
            if c[k] != v:
                bad.append("%s: %s = %r, train.nc gives %r" % (name, k, c[k], v))
        finite = bool(np.isfinite(g).all() and np.isfinite(loss).all() and np.isfinite(val).all())
        rows[name] = (norm, T, val[0], val[-1], done == steps, finite, clip, seed)
    # cell verdicts, recomputed from the stated rules: the reference of a cell is the complete,
    # finite cell of the same normalizer, clip and seed with the largest T
    ref = {}
    for name, (norm, T, v0, v1, complete, finite, clip, seed) in rows.items():
        k = (norm, clip, seed)
        if complete and finite and (k not in ref or T > ref[k][0]):
            ref[k] = (T, v1)
    for name, (norm, T, v0, v1, complete, finite, clip, seed) in rows.items():
        if not finite:
            want = "diverged"
        elif not complete:
            want = "incomplete"
        elif not v1 <= v0 - rules["stalled_nats"]:
            want = "stalled"
        elif v1 - ref[(norm, clip, seed)][1] > rules["degraded_nats"]:
            want = "degraded"
        else:
            want = "stable"
        if cells[name]["verdict"] != want:
            bad.append("%s: verdict %s, the rules give %s" % (name, cells[name]["verdict"], want))
    # the training claim per (normalizer, clip, T <= low_T): paired gaps over seeds, a 95 %
    # Student-t interval, and the three answers of training.json's rule
    claims = {(c["normalizer"], c["clip"], c["T"]): c for c in rep["claims"]}
    groups = {(r[0], r[6], r[1]) for r in rows.values() if r[1] <= rules["low_T"]}
    if set(claims) != groups:
        bad.append("claims for %s, cells at T <= low_T: %s" % (sorted(claims), sorted(groups)))
    for key in groups:
        norm, clip, T = key
        low = [r for r in rows.values() if (r[0], r[6], r[1]) == key]
        seeds = {r[7] for r in low}
        gaps = [r[3] - ref[(norm, clip, r[7])][1] for r in low
                if r[5] and r[4] and (norm, clip, r[7]) in ref]
        diverged = sum(1 for r in low if not r[5])
        c = claims.get(key)
        if c is None:
            continue
        has_ref = any(k[0] == norm and k[1] == clip and v[0] > rules["low_T"]
                      for k, v in ref.items())
        if not has_ref or len(seeds) < rules["min_seeds"]:
            want = "inconclusive"
        elif 2 * diverged > len(low):
            want = "supported"
        else:
            m = float(np.mean(gaps))
            h = float(t_dist.ppf(0.975, len(gaps) - 1)) * float(np.std(gaps, ddof=1)) / \
                math.sqrt(len(gaps))
            if not math.isclose(c["estimate"], m, rel_tol=1e-12, abs_tol=1e-15) or \
                    not math.isclose(c["ci_low"], m - h, rel_tol=1e-9, abs_tol=1e-12):
                bad.append("%s: gap %r [%r], expected %r [%r]" % (key, c["estimate"],
                                                                  c["ci_low"], m, m - h))
            if m - h > rules["degraded_nats"]:
                want = "supported"
            elif m + h < rules["degraded_nats"] and not diverged:
                want = "contradicted"
            else:
                want = "inconclusive"
        if c["verdict"] != want or c["seeds"] != len(seeds):
            bad.append("%s: %s with %d seeds, expected %s with %d" % (key, c["verdict"], c["seeds"],
                                                                     want, len(seeds)))
    for b in bad:
        print("check_training_report: " + b, file=sys.stderr)
    print("check_training_report: %d cells checked, %d problem(s)" % (len(rows), len(bad)))
    return 1 if bad or not rows else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1], sys.argv[2]))

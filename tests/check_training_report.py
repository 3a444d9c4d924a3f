#!/usr/bin/python3
"""check_training_report: training.json (postprocess/report --training) against the grid's own
training logs, read here independently: every cell present, its initial and final validation
loss, gradient-norm median and maximum, clipped fraction and the Jacobian's q95 maximum equal to
what train.nc holds (exactly: the report copies the stored doubles), and each verdict recomputed
from the rules training.json states.

    check_training_report.py GRID_DIR training.json
"""
import glob
import json
import math
import os
import sys

import numpy as np
import netCDF4


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
            q = list(np.array(ds["quantile"][:], float))
            jac = np.array(ds["attn_jac"][:], float)[:, :, q.index(0.95)]
            norm = ds.getncattr("normsweep_attn_normalizer")
            T = float(ds.getncattr("normsweep_attn_temperature"))
            steps, done = int(ds.getncattr("steps")), int(ds.getncattr("steps_completed"))
            clip = float(ds.getncattr("clip"))
        want = {"normalizer": norm, "T": T, "val_loss_initial": val[0], "val_loss_final": val[-1],
                "grad_norm_median": float(np.median(g)), "grad_norm_max": float(g.max()),
                "clipped_fraction": float(np.mean(g > clip)),
                "attn_jac_q95_max": float(np.nanmax(jac)), "steps_completed": done}
        for k, v in want.items():
            if c[k] != v:
                bad.append("%s: %s = %r, train.nc gives %r" % (name, k, c[k], v))
        rows[name] = (norm, T, val[0], val[-1], done == steps, bool(np.isfinite(g).all()))
    # verdicts, recomputed from the stated rules
    ref = {}
    for name, (norm, T, v0, v1, complete, finite) in rows.items():
        if complete and finite and (norm not in ref or T > ref[norm][0]):
            ref[norm] = (T, v1)
    for name, (norm, T, v0, v1, complete, finite) in rows.items():
        if not finite:
            want = "diverged"
        elif not complete:
            want = "incomplete"
        elif not v1 <= v0 - rules["stalled_nats"]:
            want = "stalled"
        elif v1 - ref[norm][1] > rules["degraded_nats"]:
            want = "degraded"
        else:
            want = "stable"
        if cells[name]["verdict"] != want:
            bad.append("%s: verdict %s, the rules give %s" % (name, cells[name]["verdict"], want))
    for norm in {r[0] for r in rows.values()}:
        low = [n for n, r in rows.items() if r[0] == norm and r[1] <= rules["low_T"]]
        unstable = [n for n in low if cells[n]["verdict"] in ("diverged", "stalled", "degraded")]
        ans = rep["unstable_at_low_T"][norm]
        if bool(unstable) != ans.startswith("yes"):
            bad.append("%s: answer %r, unstable low-T cells %s" % (norm, ans, unstable))
        elif low and not unstable and (norm not in ref or ref[norm][0] <= rules["low_T"]) and \
                not ans.startswith("open"):
            bad.append("%s: answer %r without a finished cell above T = %g" % (norm, ans,
                                                                              rules["low_T"]))
    for b in bad:
        print("check_training_report: " + b, file=sys.stderr)
    print("check_training_report: %d cells checked, %d problem(s)" % (len(rows), len(bad)))
    return 1 if bad or not rows else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1], sys.argv[2]))

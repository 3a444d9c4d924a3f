#!/usr/bin/python3
"""check_training_seeds: the training page's claim with several seeds per cell, on a hand-made
train-grid directory (three seeds of four normalizers at T = 0.1 and 1; train.nc files written
here): a gap to the reference well above 0.05 nats in every seed is supported, a gap near 0 in
every seed contradicted, a gap whose seeds disagree inconclusive, most seeds diverged supported,
one seed inconclusive; and tests/check_training_report.py recomputes every number of it.

    check_training_seeds.py POSTPROCESS_DIR WORK_DIR"""
import json
import os
import subprocess
import sys

import numpy as np
import netCDF4

post, work = sys.argv[1], sys.argv[2]
grid = os.path.join(work, "seeds_grid")
os.makedirs(grid, exist_ok=True)
open(os.path.join(grid, "training.yaml"), "w").write("# hand-made\n")
rng = np.random.default_rng(3)


def cell(norm, T, seed, final, finite=True):
    d = os.path.join(grid, "%s-T%g-s%d" % (norm, T, seed), "model")
    os.makedirs(d, exist_ok=True)
    open(os.path.join(d, "model.safetensors"), "w").close()
    with netCDF4.Dataset(os.path.join(d, "train.nc"), "w") as ds:
        for k, n in (("step", 10), ("eval", 3), ("layer", 2), ("quantile", 3)):
            ds.createDimension(k, n)
        def var(name, dims, data):
            ds.createVariable(name, "f8", dims)[:] = data
        var("step", ("step",), np.arange(1, 11))
        var("loss", ("step",), np.linspace(10, final, 10) if finite else [np.nan] * 10)
        var("grad_norm", ("step",), rng.uniform(0.5, 2, 10))
        var("grad_norm_layer", ("step", "layer"), rng.uniform(0.1, 1, (10, 2)))
        var("attn_jac", ("step", "layer", "quantile"), rng.uniform(0.1, 1, (10, 2, 3)))
        var("quantile", ("quantile",), [0.5, 0.95, 0.99])
        var("attn_jac_above_bound", ("step", "layer"), np.zeros((10, 2)))
        var("eval_step", ("eval",), [0, 5, 10])
        var("val_loss", ("eval",), [10.8, (10.8 + final) / 2, final])
        ds.normsweep_attn_normalizer = norm
        ds.normsweep_attn_temperature = float(T)
        ds.steps = np.int64(10)
        ds.steps_completed = np.int64(10)
        ds.clip = 1.0
        ds.train_options = json.dumps({"seed": seed, "steps": 10})


# reference T = 1 ends near 5 nats; T = 0.1: per normalizer a gap of ...
gaps = {"softmax": [0.30, 0.32, 0.29],       # well above 0.05 in every seed: supported
        "ssmax": [0.001, -0.002, 0.003],     # near 0 in every seed: contradicted
        "sparsemax": [0.5, -0.4, 0.02],      # seeds disagree: inconclusive
        "entmax15": [None, None, 0.1]}       # two of three seeds diverged: supported
for norm, gs in gaps.items():
    for seed, g in zip((1, 2, 3), gs):
        base = 5.0 + 0.01 * seed
        cell(norm, 1.0, seed, base)
        cell(norm, 0.1, seed, base + (g or 0), finite=g is not None)
cell("onlyone", 1.0, 1, 5.0)
cell("onlyone", 0.1, 1, 6.0)
want = {"softmax": "supported", "ssmax": "contradicted", "sparsemax": "inconclusive",
        "entmax15": "supported", "onlyone": "inconclusive"}
out = os.path.join(work, "seeds_report")
r = subprocess.run([sys.executable, os.path.join(post, "report"), "--training", grid, "--out",
                    out, "--format", "png"], capture_output=True, text=True)
if r.returncode:
    print(r.stdout, r.stderr)
    sys.exit(1)
rep = json.load(open(os.path.join(out, "training.json")))
bad = []
for c in rep["claims"]:
    if c["verdict"] != want[c["normalizer"]]:
        bad.append("%s: %s (%s), expected %s" % (c["normalizer"], c["verdict"], c["reason"],
                                                  want[c["normalizer"]]))
    if c["normalizer"] == "onlyone" and "seed" not in c["reason"]:
        bad.append("onlyone: the reason does not name the seeds: %s" % c["reason"])
if sorted(c["normalizer"] for c in rep["claims"]) != sorted(want):
    bad.append("claims for %s" % [c["normalizer"] for c in rep["claims"]])
r = subprocess.run([sys.executable, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                                 "check_training_report.py"), grid,
                    os.path.join(out, "training.json")], capture_output=True, text=True)
if r.returncode:
    bad.append("check_training_report: " + r.stdout + r.stderr)
for b in bad:
    print("check_training_seeds:", b)
print("check_training_seeds: %d claims, %d problem(s)" % (len(rep["claims"]), len(bad)))
sys.exit(1 if bad else 0)

"""training_sinks: the training page's "sink mass and selectivity" table (issue 36; docs/REPORT.md,
"The training page"). For every cell of a train-grid whose sweep.nc exists, the trained model's
own attention -- the sweep's normalizer entry of the cell's training normalizer (its first entry
when the sweep has none) -- at the sweep's largest L and its T nearest 1: the mean sink_mass per
layer and over all heads, sink_heads_frac, the row mass and the selectivity metrics (entropy /
log L, n_eff, N_s / N at the largest N with values, n_crit / L of the expected-distance KS test),
each a mean over heads of the per-head means the sweep wrote. Per normalizer (and clip, training
T and analysis point) the seeds are pooled: their mean with a 95 % Student-t interval across
seeds when there are at least two, the single value otherwise."""
import math
import os

import numpy as np
import netCDF4

from . import page
from .load import InputError

# (key in a cell's values, column heading, what it is) in the table's order after the layers.
SCALARS = (
    ("sink_mass", "sink mass, all heads",
     "mean over the (layer, head) pairs of sink_mass_mean: the share of a row's mass on the "
     "window's first key (METRICS.md 8.1)"),
    ("sink_heads_frac", "sink heads frac",
     "mean over layers of the sweep's sink_heads_frac: the fraction of a layer's heads whose "
     "sink_mass_mean exceeds 0.3"),
    ("mass", "row mass", "mean over heads of mass_mean: the row's total weight (1 on the simplex)"),
    ("entropy_norm", "entropy / log L", "mean over heads of entropy_norm_mean (1: uniform rows)"),
    ("n_eff", "n_eff", "mean over heads of n_eff_mean = exp(entropy), keys effectively attended"),
    ("ns_frac", "N_s/N", "mean over heads of ns_frac_mean at N (Theorem 2's separable share)"),
    ("n_crit_expected_frac", "n_crit / L",
     "mean over the heads where n_crit_expected was found of n_crit_expected_frac (section 5's "
     "KS test against Theorem 1's expectation); n_crit_heads says how many heads had one"),
)
NEED = ("normalizer", "L", "T", "N", "layer", "sink_mass_mean", "sink_heads_frac", "mass_mean",
        "entropy_norm_mean", "n_eff_mean", "ns_frac_mean", "n_crit_expected_frac")


def _names(ds):
    v = ds.variables["normalizer"]
    v.set_auto_chartostring(False)
    raw = np.asarray(v[:])
    return [s.strip() for s in netCDF4.chartostring(raw, encoding="utf-8").tolist()] \
        if raw.ndim == 2 else [str(s) for s in raw.tolist()]


def _entry(names, views, normalizer):
    """The index of the sweep's entry for the model's own attention, and whether it was found."""
    for i, n in enumerate(names):
        if views[i] == 0 and (n == normalizer or n.startswith(normalizer + " ")):
            return i, True
    return 0, False


def _mean(a):
    a = np.asarray(a, float)
    a = a[np.isfinite(a)]
    return float(a.mean()) if a.size else None


def cell_values(path, normalizer):
    """One swept cell's values (see the module's docstring); None when the sweep predates the
    sink metrics (no sink_mass_mean)."""
    try:
        ds = netCDF4.Dataset(path, "r")
    except OSError as exc:
        raise InputError("%s: not a readable NetCDF file (%s)" % (path, exc))
    try:
        if "sink_mass_mean" not in ds.variables:
            return None
        missing = [v for v in NEED if v not in ds.variables]
        if missing:
            raise InputError("%s: not a normsweep sweep: missing variable(s) %s"
                             % (path, ", ".join(missing)))
        ds.set_auto_mask(False)
        names = _names(ds)
        views = (np.asarray(ds.variables["view"][:], int) if "view" in ds.variables
                 else np.zeros(len(names), int))
        v = {k: np.asarray(ds.variables[k][:], float) for k in NEED if k != "normalizer"}
    finally:
        ds.close()
    ni, own = _entry(names, views, normalizer)
    li = int(np.argmax(v["L"]))
    ti = int(np.argmin(np.abs(np.log(v["T"]))))
    L, T = int(v["L"][li]), float(v["T"][ti])
    ns = v["ns_frac_mean"][ni, li, ti]                      # (N, layer, head)
    ks = [k for k in range(v["N"].size) if v["N"][k] <= L and np.isfinite(ns[k]).any()]
    k = max(ks, key=lambda k: v["N"][k]) if ks else None
    sink = v["sink_mass_mean"][ni, li, ti]                  # (layer, head)
    crit = v["n_crit_expected_frac"][ni, li, ti]
    return {
        "analysed_as": names[ni], "own_normalizer": own, "L": L, "T": T,
        "N": int(v["N"][k]) if k is not None else None,
        "layers": [int(x) for x in v["layer"]],
        "sink_mass_layer": [_mean(r) for r in sink],
        "sink_heads_frac_layer": [None if not math.isfinite(x) else float(x)
                                  for x in v["sink_heads_frac"][ni, li, ti]],
        "sink_mass": _mean(sink),
        "sink_heads_frac": _mean(v["sink_heads_frac"][ni, li, ti]),
        "mass": _mean(v["mass_mean"][ni, li, ti]),
        "entropy_norm": _mean(v["entropy_norm_mean"][ni, li, ti]),
        "n_eff": _mean(v["n_eff_mean"][ni, li, ti]),
        "ns_frac": _mean(ns[k]) if k is not None else None,
        "n_crit_expected_frac": _mean(crit),
        "n_crit_heads": "%d/%d" % (int(np.isfinite(crit).sum()), crit.size),
    }


def pool(values):
    """Seeds' values (None: missing, left out) -> estimate, 95 % t-interval, how many, which."""
    from .training import t_interval
    x = [float(a) for a in values if a is not None]
    if not x:
        return {"estimate": None, "ci_low": None, "ci_high": None, "n": 0, "values": []}
    if len(x) < 2:
        return {"estimate": x[0], "ci_low": None, "ci_high": None, "n": 1, "values": x}
    m, lo, hi = t_interval(x)
    return {"estimate": m, "ci_low": lo, "ci_high": hi, "n": len(x), "values": x}


def table(cells):
    """training.json's "sink_selectivity": per swept cell its values, and per group of cells (same
    training normalizer, clip and T, analysed at the same entry, L, T and N) the seeds pooled."""
    per_cell, groups = [], {}
    for c in cells:
        if not c.swept:
            continue
        vals = cell_values(os.path.join(c.dir, "sweep.nc"), c.normalizer)
        if vals is None:
            continue
        vals.update(cell=c.name, normalizer=c.normalizer, clip=c.clip, train_T=c.T, seed=c.seed)
        per_cell.append(vals)
        key = (c.normalizer, c.clip, c.T, vals["analysed_as"], vals["L"], vals["T"], vals["N"],
               tuple(vals["layers"]))
        groups.setdefault(key, []).append(vals)
    rows = []
    for key, g in groups.items():
        norm, clip, train_T, entry, L, T, N, layers = key
        r = {"normalizer": norm, "clip": clip, "T": train_T, "analysed_as": entry,
             "own_normalizer": g[0]["own_normalizer"], "L": L, "analysis_T": T, "N": N,
             "cells": [v["cell"] for v in g], "seeds": [v["seed"] for v in g],
             "layers": list(layers)}
        for k, _, _ in SCALARS:
            r[k] = pool([v[k] for v in g])
        for k in ("sink_mass_layer", "sink_heads_frac_layer"):
            r[k] = [pool([v[k][j] for v in g]) for j in range(len(layers))]
        rows.append(r)
    return {"cells": per_cell, "rows": rows,
            "rules": {"quantities": {k: d for k, _, d in SCALARS},
                      "analysis": "the sweep's normalizer entry of the cell's training normalizer "
                      "(own_normalizer false: none, its first entry), at its largest L, its T "
                      "nearest 1 and, for N_s/N, the largest N <= L with values",
                      "pooling": "mean over the seeds (cells) of a group with a 95 % Student-t "
                      "interval when at least two have a value; the single value otherwise"}}


def _cell(p):
    if p["n"] >= 2:
        return page.h(page.ci_text(p))
    return page.fmt(p["estimate"], 4) if p["n"] else "n/a"


def html(sel):
    """The page's section: heading, how to read it, the table."""
    rows = sel["rows"]
    if not rows:
        return ""
    layers = sorted({x for r in rows for x in r["layers"]})
    head = (["normalizer", "clip", "T", "seeds", "analysed as"] +
            ["sink mass, layer %d" % x for x in layers] + [s[1] for s in SCALARS])
    body = []
    for r in rows:
        by = dict(zip(r["layers"], r["sink_mass_layer"]))
        body.append(
            [page.h(r["normalizer"]), page.fmt(r["clip"]), page.fmt(r["T"]),
             "%d<br><small>%s</small>" % (len(r["seeds"]), page.h(", ".join(
                 str(s) for s in r["seeds"]))),
             "%s%s<br><small>L = %d, T = %s, N = %s</small>" % (
                 page.h(r["analysed_as"]), "" if r["own_normalizer"] else " (not the model's own)",
                 r["L"], page.fmt(r["analysis_T"]), page.fmt(r["N"]))] +
            [_cell(by[x]) if x in by else "n/a" for x in layers] +
            [_cell(r[k]) + ("<br><small>heads with n_crit: %s</small>" % ", ".join(
                c["n_crit_heads"] for c in sel["cells"] if c["cell"] in r["cells"])
                            if k == "n_crit_expected_frac" else "") for k, _, _ in SCALARS])
    return "\n".join([
        "<h2>Sink mass and selectivity</h2>",
        "<p>Where each trained model parks its attention and how selective it is, side by side "
        "(issue 36): from each cell's sweep (<code>sweep.nc</code>), the model's own attention "
        "at the sweep's largest L and T nearest 1, every number a mean over heads of the "
        "per-head means over rows (docs/REPORT.md, &quot;The training page&quot;). Sink mass: "
        "the share of a row's mass on the window's first key (1/L for a uniform row); sink heads: "
        "the fraction of heads whose mean sink mass exceeds 0.3. With two or more seeds a value "
        "is their mean with a 95 % Student-t interval across seeds; with one, that seed's.</p>",
        page.table(head, body)])

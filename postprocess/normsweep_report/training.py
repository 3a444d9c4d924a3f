"""training: the training page of a `normsweep train-grid` output (docs/REPORT.md, "The training
page"): per-cell verdicts from each training log, and the paper's training claim judged with
the same three answers as the sweep's claims, with an interval across seeds where the grid has
several seeds per (normalizer, T, clip) cell; and, from the cells' sweeps, sink mass beside
selectivity (training_sinks)."""
import json
import math
import os

import numpy as np
import netCDF4

from . import files, page, rules, training_sinks
from .load import InputError
from .rules import SUPPORTED, CONTRADICTED, INCONCLUSIVE

# Thresholds of the training page (written into training.json beside the verdicts).
DEGRADED_NATS = 0.05   # final validation loss this much above the normalizer's T_ref cell
STALLED_NATS = 0.10    # final validation loss must be at least this much below the initial one
LOW_T = 0.1            # the paper's "low temperature": T <= 0.1
MIN_SEEDS = 3          # an interval across seeds needs at least this many seeds


class Cell:
    """One trained model of a grid: its training log (train.nc) and whether its sweep exists."""

    def __init__(self, grid_dir, name):
        self.name = name
        self.dir = os.path.join(grid_dir, name)
        path = os.path.join(self.dir, "model", "train.nc")
        try:
            ds = netCDF4.Dataset(path, "r")
        except OSError as exc:
            raise InputError("%s: not a readable NetCDF file (%s)" % (path, exc))
        try:
            need = ["step", "loss", "grad_norm", "grad_norm_layer", "attn_jac", "quantile",
                    "attn_jac_above_bound", "eval_step", "val_loss"]
            missing = [v for v in need if v not in ds.variables]
            if missing:
                raise InputError("%s: not a normsweep training log: missing variable(s) %s"
                                 % (path, ", ".join(missing)))
            ds.set_auto_mask(False)
            self.v = {k: np.array(ds.variables[k][:], dtype=float) for k in need}
            at = {a: ds.getncattr(a) for a in ds.ncattrs()}
        finally:
            ds.close()
        self.path = path
        self.normalizer = str(at.get("normsweep_attn_normalizer", "softmax"))
        self.T = float(at.get("normsweep_attn_temperature", 1.0))
        self.steps = int(at.get("steps", -1))
        self.done_steps = int(at.get("steps_completed", -1))
        self.clip = float(at.get("clip", 0.0))
        self.seed = _seed(at)
        self.complete = (self.done_steps == self.steps and
                         os.path.exists(os.path.join(self.dir, "model", "model.safetensors")))
        self.swept = os.path.exists(os.path.join(self.dir, "sweep.nc"))

    def summary(self):
        v = self.v
        loss, val, g = v["loss"], v["val_loss"], v["grad_norm"]
        finite = bool(np.all(np.isfinite(loss)) and np.all(np.isfinite(val[:len(v["eval_step"])]))
                      and np.all(np.isfinite(g)))
        q = list(v["quantile"])
        k95 = q.index(0.95) if 0.95 in q else len(q) - 1
        jac95 = np.nanmax(v["attn_jac"][:, :, k95], axis=1) if v["attn_jac"].size else np.array([])
        clipped = float(np.mean(g > self.clip)) if self.clip > 0 and g.size else 0.0
        return {
            "cell": self.name, "normalizer": self.normalizer, "T": self.T, "seed": self.seed,
            "clip": self.clip, "steps": self.steps, "steps_completed": self.done_steps,
            "complete": self.complete, "swept": self.swept, "finite": finite,
            "val_loss_initial": float(val[0]) if val.size else float("nan"),
            "val_loss_final": float(val[-1]) if val.size else float("nan"),
            "grad_norm_median": float(np.nanmedian(g)) if g.size else float("nan"),
            "grad_norm_max": float(np.nanmax(g)) if g.size else float("nan"),
            "clipped_fraction": clipped,
            "attn_jac_q95_max": float(np.nanmax(jac95)) if np.isfinite(jac95).any() else None,
            "attn_above_bound_max": (float(np.nanmax(v["attn_jac_above_bound"]))
                                     if np.isfinite(v["attn_jac_above_bound"]).any() else None),
        }


def _seed(at):
    if "seed" in at:
        return int(at["seed"])
    try:
        return int(json.loads(str(at.get("train_options", "{}"))).get("seed"))
    except (ValueError, TypeError, AttributeError):
        return None


def read_grid(grid_dir):
    if not os.path.isdir(grid_dir):
        raise InputError("%s: no such directory" % grid_dir)
    if not os.path.exists(os.path.join(grid_dir, "training.yaml")):
        raise InputError("%s: not a normsweep train-grid output (no training.yaml)" % grid_dir)
    names = sorted(n for n in os.listdir(grid_dir)
                   if os.path.exists(os.path.join(grid_dir, n, "model", "train.nc")))
    if not names:
        raise InputError("%s: no trained cell yet (no */model/train.nc)" % grid_dir)
    cells = [Cell(grid_dir, n) for n in names]
    cells.sort(key=lambda c: (c.normalizer, c.clip, c.T, c.seed if c.seed is not None else -1))
    return cells


def judge_cells(rows):
    """Per cell: diverged / incomplete / stalled / degraded / stable. The reference of a cell is
    the complete, finite cell of the same normalizer, clip and seed with the largest T."""
    ref = {}
    for r in rows:
        k = (r["normalizer"], r["clip"], r["seed"])
        if r["complete"] and r["finite"] and (k not in ref or r["T"] > ref[k]["T"]):
            ref[k] = r
    for r in rows:
        base = ref.get((r["normalizer"], r["clip"], r["seed"]))
        r["reference_T"] = base["T"] if base else None
        r["gap_to_reference"] = (r["val_loss_final"] - base["val_loss_final"]) if base else None
        if not r["finite"]:
            r["verdict"] = "diverged"
        elif not r["complete"]:
            r["verdict"] = "incomplete"
        elif r["val_loss_final"] > r["val_loss_initial"] - STALLED_NATS:
            r["verdict"] = "stalled"
        elif r["gap_to_reference"] is not None and r["gap_to_reference"] > DEGRADED_NATS:
            r["verdict"] = "degraded"
        else:
            r["verdict"] = "stable"
    return ref


T_975 = {2: 12.706, 3: 4.303, 4: 3.182, 5: 2.776, 6: 2.571, 7: 2.447, 8: 2.365, 9: 2.306,
         10: 2.262}


def t_interval(x):
    """Mean of x and its 95 % Student-t interval (x: the seeds' paired gaps)."""
    n = len(x)
    m = float(np.mean(x))
    if n < 2:
        return m, float("nan"), float("nan")
    from scipy.stats import t as student
    q = float(student.ppf(0.975, n - 1))
    s = float(np.std(x, ddof=1)) / math.sqrt(n)
    return m, m - q * s, m + q * s


def claim_low_T(rows):
    """The paper's training claim per (normalizer, clip): training at T <= 0.1 is worse than at the
    reference T. Statistic: the final validation loss of the T <= 0.1 cell minus the same seed's
    reference cell (paired by seed), its mean over seeds and 95 % t-interval. Supported iff the
    interval lies above DEGRADED_NATS, or a majority of the seeds diverged at T <= 0.1 while
    their reference trained; contradicted iff it lies below DEGRADED_NATS and no seed diverged;
    inconclusive otherwise, and always with fewer than MIN_SEEDS seeds (no interval)."""
    out = []
    groups = sorted({(r["normalizer"], r["clip"]) for r in rows})
    for norm, clip in groups:
        g = [r for r in rows if r["normalizer"] == norm and r["clip"] == clip]
        ref_T = max((r["T"] for r in g if r["complete"] and r["finite"]), default=None)
        for T in sorted({r["T"] for r in g if r["T"] <= LOW_T}):
            low = [r for r in g if r["T"] == T]
            seeds = sorted({r["seed"] for r in low}, key=lambda s: (s is None, s))
            gaps, diverged = [], 0
            for r in low:
                if not r["finite"]:
                    diverged += 1
                elif r["complete"] and r["gap_to_reference"] is not None:
                    gaps.append(r["gap_to_reference"])
            j = {"normalizer": norm, "clip": clip, "T": T, "reference_T": ref_T,
                 "seeds": len(seeds), "diverged": diverged, "gaps": gaps,
                 "threshold": "mean gap > %g nats" % DEGRADED_NATS,
                 "claim": "training at T <= %g is unstable (the paper: \"T <= 0.1 leads to "
                 "unstable gradients\")" % LOW_T}
            e, lo, hi = t_interval(gaps) if gaps else (float("nan"),) * 3
            j.update(estimate=e, ci_low=lo, ci_high=hi)
            if ref_T is None or ref_T <= LOW_T:
                j.update(verdict=INCONCLUSIVE, reason="no finished cell above T = %g to compare "
                         "with" % LOW_T)
            elif len(seeds) < MIN_SEEDS:
                j.update(verdict=INCONCLUSIVE, reason="%d seed(s): an interval across seeds needs "
                         "at least %d (cells: %s)" % (len(seeds), MIN_SEEDS, ", ".join(
                             "%s %s" % (r["cell"], r["verdict"]) for r in low)))
            elif 2 * diverged > len(low):
                j.update(verdict=SUPPORTED, reason="%d of %d seeds diverged at T = %g"
                         % (diverged, len(low), T))
            else:
                v, reason = _gap_rule(lo, hi, diverged)
                j.update(verdict=v, reason=reason)
            out.append(j)
    return out


def _gap_rule(lo, hi, diverged):
    if math.isnan(lo) or math.isnan(hi):
        return INCONCLUSIVE, rules.NO_INTERVAL
    if lo > DEGRADED_NATS:
        return SUPPORTED, "the interval of the gap lies above %g nats" % DEGRADED_NATS
    if hi < DEGRADED_NATS and not diverged:
        return CONTRADICTED, "the interval of the gap lies below %g nats" % DEGRADED_NATS
    return INCONCLUSIVE, "the interval of the gap straddles %g nats%s" % (
        DEGRADED_NATS, " (and %d seed(s) diverged)" % diverged if diverged else "")


def figures(cells, figs_):
    """The three training figures (validation loss against T, gradient-norm and Jacobian
    trajectories), drawn by the sweep report's figure helper (model line, legends below)."""
    import matplotlib.pyplot as plt
    from matplotlib.lines import Line2D
    norms = sorted({c.normalizer for c in cells})
    colors = {n: "C%d" % i for i, n in enumerate(norms)}
    fig, ax = plt.subplots(figsize=(6.4, 4.4))
    for n in norms:
        cs = [c for c in cells if c.normalizer == n and c.v["val_loss"].size]
        Ts = sorted({c.T for c in cs})
        for T in Ts:
            ys = [c.v["val_loss"][-1] for c in cs if c.T == T]
            ax.plot([T] * len(ys), ys, "o", color=colors[n], ms=4, alpha=0.6)
        ax.plot(Ts, [np.mean([c.v["val_loss"][-1] for c in cs if c.T == T]) for T in Ts], "-",
                color=colors[n])
    init = [c.v["val_loss"][0] for c in cells if c.v["val_loss"].size]
    if init:
        ax.axhline(float(np.median(init)), color="grey", ls=":")
    ax.axvline(LOW_T, color="k", lw=0.6, ls="--")
    ax.set_xscale("log")
    ax.set_xlabel("attention temperature T of training")
    ax.set_ylabel("final validation loss (nat/token)")
    ax.grid(True, which="both", alpha=0.3)
    h = [Line2D([], [], color=colors[n], marker="o", label=n) for n in norms]
    h += [Line2D([], [], color="grey", ls=":", label="initial loss (median)"),
          Line2D([], [], color="k", ls="--", label="T = %g" % LOW_T)]
    figs_.save(fig, "fig_training_val_loss", "Final validation loss (all validation windows) "
               "against the training temperature: one point per seed, the line through the "
               "means; the dashed line is T = %g." % LOW_T, h, ncol=3)
    for stem, ylabel, cap in (
            ("grad_norm", "gradient norm (before clipping)",
             "Global gradient norm per step, before clipping; one panel per normalizer."),
            ("attn_jac", "Jacobian norm q95, max over layers",
             "The 95th percentile of the exact attention Jacobian norm over the training "
             "batch's rows, the largest over layers, at the measured steps.")):
        fig, axes = figs_.panels(len(norms), w=4.4, h=3.2)
        Ts = sorted({c.T for c in cells})
        cmap = plt.get_cmap("viridis")
        for ax, n in zip(axes, norms):
            for c in [c for c in cells if c.normalizer == n]:
                st = c.v["step"]
                if stem == "grad_norm":
                    y = c.v["grad_norm"]
                else:
                    q = list(c.v["quantile"])
                    k95 = q.index(0.95) if 0.95 in q else len(q) - 1
                    y = np.nanmax(c.v["attn_jac"][:, :, k95], axis=1)
                ok = np.isfinite(y) & (y > 0)
                ax.plot(st[ok], y[ok], "-", lw=0.9,
                        color=cmap(Ts.index(c.T) / max(1, len(Ts) - 1)))
            ax.set_yscale("log")
            ax.set_title(n)
            ax.set_xlabel("step")
            ax.set_ylabel(ylabel)
            ax.grid(True, which="both", alpha=0.3)
        h = [Line2D([], [], color=cmap(k / max(1, len(Ts) - 1)), label="T = %g" % T)
             for k, T in enumerate(Ts)]
        figs_.save(fig, "fig_training_" + stem, cap, h, ncol=min(6, len(h)))


class _FigSaver:
    """The sweep report's save() conventions for the training figures (no sweep file here)."""

    def __init__(self, out, formats, model_line):
        from . import figures as f
        self.f = f
        self.out, self.formats, self.model_line = out, formats, model_line
        self.names, self.captions = [], {}

    def panels(self, n, w=4.2, h=3.2, cols=3):
        return self.f.Figures.panels(self, n, w, h, cols)

    def save(self, fig, name, caption, handles=None, ncol=2):
        return self.f.Figures.save(self, fig, name, caption, handles, ncol)


def build(grid_dir, out, formats):
    cells = read_grid(grid_dir)
    figs_ = _FigSaver(out, formats, "models trained by normsweep train-grid (%s)"
                      % os.path.basename(os.path.abspath(grid_dir)))
    figures(cells, figs_)
    rows = [c.summary() for c in cells]
    judge_cells(rows)
    verdicts = claim_low_T(rows)
    rep = {"grid": os.path.abspath(grid_dir), "cells": rows, "claims": verdicts,
           "unstable_at_low_T": answers(verdicts),
           "rules": {"low_T": LOW_T, "stalled_nats": STALLED_NATS, "degraded_nats": DEGRADED_NATS,
                     "min_seeds": MIN_SEEDS,
                     "reference": "per normalizer, clip and seed, the complete finite cell of "
                     "largest T",
                     "claim": "supported iff the 95 % t-interval across seeds of the paired gap "
                     "(final validation loss at T <= 0.1 minus the reference) lies above "
                     "degraded_nats, or most seeds diverged; contradicted iff it lies below and "
                     "no seed diverged; else inconclusive; fewer than min_seeds seeds: "
                     "inconclusive"},
           "figures": figs_.names,
           "sink_selectivity": training_sinks.table(cells)}
    write_html(grid_dir, out, rep, figs_)
    files.write_text(os.path.join(out, "training.json"),
                     json.dumps(page.json_safe(rep), indent=1, allow_nan=False))
    return rep


def answers(verdicts):
    """One line per normalizer (and clip) for the console and the page."""
    out = {}
    for v in verdicts:
        key = v["normalizer"] + ("" if not v["clip"] else " (clip %g)" % v["clip"])
        out.setdefault(key, []).append("T = %g: %s (%s)" % (v["T"], v["verdict"], v["reason"]))
    return {k: "; ".join(x) for k, x in out.items()}


def write_html(grid_dir, out, rep, figs_):
    h, fmt = page.h, page.fmt
    rows = rep["cells"]
    p = ["<!DOCTYPE html><html><head><meta charset='utf-8'><title>normsweep training</title>"
         "<style>%s</style></head><body>" % page.CSS,
         "<h1>normsweep training: %s</h1>" % h(os.path.basename(os.path.abspath(grid_dir))),
         "<p>The paper: <i>gradient sensitivity under softmax normalization presents challenges "
         "during training, especially at low temperature</i>. One model per normalizer, "
         "temperature and seed, the same budget (<code>normsweep train-grid</code>).</p>",
         "<h2>Is training at T &le; %g unstable?</h2>" % LOW_T,
         "<p>Judged with the three answers of the sweep report: the statistic is the final "
         "validation loss at T &le; %g minus the same seed's reference (the finished cell of "
         "largest T), its mean over seeds with a 95 %% t-interval; supported when the interval "
         "lies above %g nats (or most seeds diverged), contradicted when it lies below and no "
         "seed diverged, inconclusive otherwise -- and with fewer than %d seeds per cell, "
         "since one seed gives no interval.</p>" % (LOW_T, DEGRADED_NATS, MIN_SEEDS)]
    p.append(page.table(["normalizer", "clip", "T", "seeds", "gap to reference [95 % interval]",
                         "threshold", "verdict"],
                        [[h(v["normalizer"]), fmt(v["clip"]), fmt(v["T"]), str(v["seeds"]),
                          h(page.ci_text(v)), h(v["threshold"]),
                          "%s<br><small>%s</small>" % (page.verdict_span(v["verdict"]),
                                                       h(v["reason"]))]
                         for v in rep["claims"]]))
    p.append("<h2>The cells</h2><p>A cell is <b>diverged</b> if a loss or gradient norm is not "
             "finite, <b>stalled</b> if its final validation loss is not at least %g nats below "
             "the initial one, <b>degraded</b> if it ends more than %g nats above the same "
             "normalizer's (and seed's) cell of largest T, else <b>stable</b> (docs/REPORT.md)."
             "</p>" % (STALLED_NATS, DEGRADED_NATS))
    p.append(page.table(["cell", "seed", "steps", "val loss initial", "final", "gap to ref",
                         "|g| median", "|g| max", "clipped", "Jacobian q95 max", "verdict",
                         "swept"],
                        [[h(r["cell"]), h(r["seed"]), "%d/%d" % (r["steps_completed"], r["steps"]),
                          fmt(r["val_loss_initial"], 4), fmt(r["val_loss_final"], 4),
                          fmt(r["gap_to_reference"], 3), fmt(r["grad_norm_median"]),
                          fmt(r["grad_norm_max"]), "%.0f %%" % (100 * r["clipped_fraction"]),
                          fmt(r["attn_jac_q95_max"]), h(r["verdict"]),
                          "yes" if r["swept"] else "no"] for r in rows]))
    sinks = training_sinks.html(rep["sink_selectivity"])
    if sinks:
        p.append(sinks)
    for name in figs_.names:
        p.append(page.img(out, name, h(figs_.captions[name])))
    p.append("</body></html>")
    files.write_text(os.path.join(out, "training.html"), "\n".join(p))

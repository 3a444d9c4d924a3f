"""build: one sweep's report from its NetCDF file: the statistics and their intervals, the
verdicts, the figures, report.json and report.html (docs/REPORT.md)."""
import os
import time

import numpy as np

from . import bootstrap, claims, figures, page, sinks, stats


def violations(run, ni):
    """Totals with their denominators. Row-level Jacobian counts are taken at the grid's first N
    (every row is analysed there), so each row counts once per T (and eps)."""
    def tot(v, sl=(slice(None),)):
        return int(np.nansum(run[v][(ni,) + sl]))
    n1 = (slice(None), slice(None), 0)
    gt1 = (slice(None), slice(None), run.N > 1)
    eq1 = (slice(None), slice(None), run.N == 1)
    out = {
        "thm1": (tot("thm1_violations"), tot("thm1_checked"),
                 "rows with d > d_bound (Theorem 1; expected 0)"),
        "ns_upper_N_gt_1": (tot("ns_upper_violations", gt1), tot("ns_upper_checked", gt1),
                            "rows with N_s/N above Theorem 2's upper bound, N > 1"),
        "ns_upper_N_1": (tot("ns_upper_violations", eq1), tot("ns_upper_checked", eq1),
                         "the same at N = 1, where N_s/N = 1 always exceeds it"),
        "ns_lower": (tot("ns_lower_violations"), tot("ns_lower_checked"),
                     "rows with N_s/N below Theorem 2's lower bound"),
        "ns_lower_vacuous": (tot("ns_lower_vacuous"), tot("ns_lower_checked"),
                             "rows where the lower bound is <= 0 (vacuous)"),
        "ns_upper_vacuous": (tot("ns_upper_vacuous"), tot("ns_upper_checked"),
                             "rows where the upper bound is >= 1 (vacuous)"),
        "jac_exact": (tot("jac_exact_violations", n1), tot("jac_exact_checked", n1),
                      "rows x T with jac_exact > min(1/(4T), sqrt 2)"),
        "lemma2": (tot("lemma2_violations", n1), tot("lemma2_checked", n1),
                   "rows x T with jac_exact above Lemma 2's general bound (expected 0)"),
    }
    for ei, e in enumerate(run.eps):
        out["jac_fd_eps_%g" % e] = (
            int(np.nansum(run["jac_fd_violations"][ni, :, :, 0, ei])),
            int(np.nansum(run["jac_fd_checked"][ni, :, :, 0, ei])),
            "rows x T with jac_fd (eps = %g) > min(1/(4T), sqrt 2)" % e)
    out["skipped"] = (tot("skipped_rows"), int(np.nansum(run["skipped_rows"][ni]) +
                                               np.nansum(run["distance_count"][ni])),
                      "row x cell pairs skipped because N >= the row's keys")
    return {k: {"count": c, "of": n, "what": w} for k, (c, n, w) in out.items()}


def ncrit_summary(run, ni, ti):
    """Per L at T: the heads where an N of the paper's test passes, where none does, and the
    median over heads of n_crit / L with a head where none passes counted as above every N --
    the numbers the end-of-run summary prints, by the same rule (docs/STATISTICS.md)."""
    out = []
    for li, L in enumerate(run.L):
        nc = run["n_crit_expected"][ni, li, ti].ravel()
        comp = nc[np.isfinite(nc)]
        vals = np.where(comp >= 1, comp / L, np.inf)
        med = float(np.median(vals)) if vals.size else float("nan")
        below = run.N[run.N < L]
        out.append({"L": int(L), "heads": int(nc.size), "found": int(np.sum(comp >= 1)),
                    "none_found": int(np.sum(comp == 0)),
                    "not_computable": int(np.sum(~np.isfinite(nc))),
                    "median_frac": med, "largest_N_tested": int(below.max()) if below.size
                    else None,
                    "rows_per_cell": int(run["n_samples"][li])})
    return out


def build(run, out, formats, resamples=bootstrap.DEFAULT_RESAMPLES, with_training=False,
          progress=None):
    ni = 0
    ti = int(np.argmin(np.abs(np.log(run.T))))
    t_ks = stats.claim_T(run.T)
    t0 = time.time()
    comp = stats.Computed(run, ni, resamples if run.has_samples() else None, t_ks, progress)
    by_shards = stats.ncrit_by_shards(run, ni, ti)
    cost = time.time() - t0
    ctx = claims.Context(run, comp, ni)
    rows = [claims.evaluate(c, ctx) for c in claims.all_claims()]
    li = len(run.L) - 1
    sets = comp.sets
    ent = comp.stats["entropy_norm_mean_hmedian"]
    headline = {
        "L": int(run.L[li]), "T": float(run.T[ti]), "sharp_below": stats.SHARP_BELOW,
        "entropy_norm": {"estimate": float(ent.est[li, ti, 0]), "ci_low": float(ent.lo[li, ti, 0]),
                         "ci_high": float(ent.hi[li, ti, 0])},
        "sharp_heads": int(sets.mask[1, li, ti].sum()), "flat_heads": int(sets.mask[2, li, ti].sum()),
        "n_crit_expected_by_L": ncrit_summary(run, ni, ti),
    }
    file_b = None
    if comp.samples:
        lo_r, hi_r = bootstrap.interval_ranks(resamples)
        desc = ("shard bootstrap computed here from the file's per-row samples: %d resamples of "
                "the %d shards (a shard's %d rows move together), the same resampled shards for "
                "every cell, drawn from the counter-based generator keyed (seed = %d, "
                "\"bootstrap\", resample); 95 %% percentile intervals (order statistics %d and "
                "%d of %d); computed in %.1f s" % (resamples, run.n_shards, run.rows, run.seed,
                                                    lo_r + 1, hi_r + 1, resamples, cost))
        source = "samples"
    elif any(s.source == "file" for s in comp.stats.values()):
        file_b = int(run.attr("bootstrap_resamples", 0))
        lacking = sorted(nm for nm, s in comp.stats.items() if s.source != "file")
        desc = ("the intervals the reduction wrote into the file (NAME_ci_low, NAME_ci_high; %d "
                "resamples)" % file_b)
        if lacking:
            desc += "; without an interval in the file: " + ", ".join(lacking)
        source = "file"
    else:
        desc = "none: the file has neither samples nor intervals"
        source = "none"
    mc = [mc_ratio(r) for r in rows]
    mc = [m for m in mc if m is not None]
    rep = {
        "file": os.path.abspath(run.path),
        "normalizer": run.norm_names[ni],
        "T_claims": float(run.T[ti]),
        # requested, used and sha256 exactly as the file records them: archive and verify check
        # them against the NetCDF (src/archive); name is the model as a reader knows it
        "model": {"requested": str(run.attr("model_requested")),
                  "used": str(run.attr("model_used")), "sha256": str(run.attr("model_sha256")),
                  "name": run.model_name(), "caveat": run.caveat()},
        "uncertainty": {"source": source, "description": desc,
                        "resamples": resamples if comp.samples else
                        (file_b if source == "file" else None),
                        "level": bootstrap.LEVEL, "seed": run.seed, "shards": run.n_shards,
                        "rng_key": ["0x%016x" % bootstrap.rng.TAG_BOOTSTRAP, "seed", "resample"],
                        "seconds": round(cost, 2),
                        "largest_mc_error_over_width": max(mc) if mc else None},
        "warnings": page.warnings_of(run, comp),
        "headline": headline,
        "claims": rows,
        "violations": violations(run, ni),
        "n_crit_by_shards": by_shards,
    }
    rep["sinks"] = sinks.summary(run, li, ti)
    rep["claims_by_normalizer"] = sinks.verdicts(run, rows, resamples, t_ks, progress)
    if len(run.norm_names) > 1:
        rep["note"] = ("the figures and the verdict table are for the first normalizer (%s); the "
                       "file holds %s, whose verdicts are side by side under \"Attention sinks and "
                       "every normalizer\"" % (run.norm_names[0], ", ".join(run.norm_names)))
        rep["warnings"].append(rep["note"])
    figs = figures.Figures(run, comp, ctx, out, formats)
    figs.distance_vs_N()
    figs.distance_vs_L()
    figs.ncrit_vs_L()
    figs.ks_distance_vs_N()
    figs.ncrit_vs_shards(by_shards)
    figs.separability()
    figs.sensitivity()
    figs.entropy()
    for t in range(len(run.T)):
        figs.heads(t)
    if rep["sinks"]:
        sinks.figure(figs, rep["sinks"])
    rep["figures"] = figs.names
    rep["captions"] = figs.captions
    page.write_html(run, out, rep, figs.names, with_training)
    page.write_json(out, rep)
    run.drop_samples()
    return rep


def mc_ratio(row):
    """The larger Monte Carlo error of the two endpoints over the interval's width."""
    lo, hi = row.get("ci_low"), row.get("ci_high")
    err = [e for e in row.get("mc_error") or [] if e is not None]
    if lo is None or hi is None or not err or not np.isfinite(hi - lo) or hi <= lo:
        return None
    return max(err) / (hi - lo)

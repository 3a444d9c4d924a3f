"""sinks: where each head parks its mass, and the paper's verdicts for every normalizer entry of
the file (docs/REPORT.md, "Attention sinks and every normalizer"; METRICS.md 8.1). A sink is the
window's first key: `sink_mass` is the share of a row's mass on it, reduced per (layer, head) to
`sink_mass_mean`; a head is a sink head when that mean exceeds 0.3 (Gu et al.'s criterion; the
file's `sink_heads_frac` per layer). The verdicts are evaluated for each entry of the normalizer
axis -- every normalizer, and with `sink_view: true` each one's view without the sink -- by the
same claims and rules as the first entry's, so a reader sees how much of each claim is the sink."""
import numpy as np

from . import claims, figures, stats

SINK_EPS = 0.3  # Gu et al. (ICLR 2025, arXiv 2410.10781): a head is a sink head above it


def summary(run, li, ti):
    """Per normalizer entry at (L index li, T index ti): the layer x head means of sink_mass, and
    per layer their mean over the heads that have one, the heads above SINK_EPS and the file's
    sink_heads_frac. None when the file has no sink_mass (written before issue 36)."""
    if "sink_mass_mean" not in run.var:
        return None
    out = []
    frac = run.var.get("sink_heads_frac")
    for ni, name in enumerate(run.norm_names):
        m = np.asarray(run["sink_mass_mean"][ni, li, ti], float)  # (layer, head)
        layers = []
        for k, layer in enumerate(run.layers):
            row = m[k]
            have = row[np.isfinite(row)]
            layers.append({
                "layer": int(layer), "heads": int(row.size), "heads_with_mean": int(have.size),
                "mean_sink_mass": float(have.mean()) if have.size else None,
                "sink_heads": int(np.sum(have > SINK_EPS)),
                "sink_heads_frac": (float(frac[ni, li, ti, k]) if frac is not None and
                                    np.isfinite(frac[ni, li, ti, k]) else None)})
        fin = m[np.isfinite(m)]
        out.append({"normalizer": name, "L": int(run.L[li]), "T": float(run.T[ti]),
                    "mean_sink_mass": float(fin.mean()) if fin.size else None,
                    "sink_heads": int(np.sum(fin > SINK_EPS)), "heads": int(m.size),
                    "by_layer": layers,
                    "per_head": [[None if not np.isfinite(x) else float(x) for x in r] for r in m]})
    return out


def verdicts(run, first_rows, resamples, t_ks, progress=None):
    """The claims' verdicts for every normalizer entry: the first entry's rows as built, the
    others evaluated here the same way (their own statistics and intervals)."""
    out = []
    for ni, name in enumerate(run.norm_names):
        if ni == 0:
            rows = first_rows
        else:
            comp = stats.Computed(run, ni, resamples if run.has_samples() else None, t_ks,
                                  progress)
            ctx = claims.Context(run, comp, ni)
            rows = [claims.evaluate(c, ctx) for c in claims.all_claims()]
        out.append({"normalizer": name,
                    "claims": [{k: r.get(k) for k in ("id", "verdict", "estimate", "ci_low",
                                                      "ci_high", "fragile")} for r in rows]})
    return out


def figure(figs, sums):
    """One layer x head map of the mean sink mass per normalizer entry (s: a sink head)."""
    run = figs.run
    fig, axes = figs.panels(len(sums), w=4.2, h=3.2, cols=4)
    for ax, s in zip(axes, sums):
        a = np.array([[np.nan if x is None else x for x in r] for r in s["per_head"]], float)
        im = ax.imshow(np.ma.masked_invalid(a), origin="lower", aspect="auto", cmap="viridis",
                       vmin=0.0, vmax=1.0)
        for (y, x), v in np.ndenumerate(a):
            if np.isfinite(v) and v > SINK_EPS:
                ax.text(x, y, "s", ha="center", va="center", fontsize=figures.MIN_PT + 1,
                        color="w")
        figures.head_map_axes(fig, ax, im, run, s["normalizer"])
    s0 = sums[0]
    figs.save(fig, "fig8_sink_mass", "Fig. 8: the mean share of each head's mass on the window's "
              "first key (sink_mass, METRICS.md 8.1) at L = %d, T = %g, per normalizer entry; s: a "
              "sink head (mean above %g, Gu et al.'s criterion)." % (s0["L"], s0["T"], SINK_EPS))

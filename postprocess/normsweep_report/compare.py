"""compare: several sweeps side by side -- the models of a campaign (`normsweep run
CAMPAIGN.yaml`) or any sweep outputs (docs/REPORT.md, "Several models side by side"): per model the
same statistics, intervals, claims and rules as the single report, one colour per model in every
figure, quantities against L and against depth as a fraction of the model's layers, a verdict
table with one column per model, report.html and report.json."""
import json
import os

import numpy as np
import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
from matplotlib.lines import Line2D  # noqa: E402
from matplotlib.text import Text  # noqa: E402

from . import bootstrap, claims, files, page, stats  # noqa: E402
from .figures import MIN_PT, plain_ticks  # noqa: E402
from .load import InputError, Run  # noqa: E402

# Depth of layer l (0-based) of a model with n layers: the middle of its slice of [0, 1].
DEPTH_RULE = "depth fraction of layer l (0-based) of a model with n layers = (l + 0.5) / n"
N_REF = 5  # the paper's N for the distance-against-L figure (the nearest N of each grid)


def inputs_of(paths):
    """(label, path) per model: a campaign directory (its campaign.json, models in file order) or
    NetCDF files (labelled by their model)."""
    out = []
    for p in paths:
        summary = os.path.join(p, "campaign.json")
        if os.path.isdir(p):
            if not os.path.isfile(summary):
                raise InputError("%s: a directory without campaign.json (not a campaign's output "
                                 "directory)" % p)
            try:
                with open(summary, encoding="utf-8") as f:
                    camp = json.load(f)
                models = [(str(m["id"]), str(m["state"])) for m in camp["models"]]
            except (OSError, ValueError, KeyError, TypeError) as exc:
                raise InputError("%s: not a normsweep campaign summary (%s)" % (summary, exc))
            for mid, state in models:
                nc = os.path.join(p, mid, mid + ".nc")
                if state != "done" or not os.path.isfile(nc):
                    raise InputError("%s: model %s is %s, not done (%s): finish the campaign "
                                     "(normsweep run --resume) or name the finished outputs"
                                     % (summary, mid, state, nc))
                out.append((mid, nc))
        else:
            out.append((None, p))
    if len(out) < 2:
        raise InputError("--compare needs at least two sweeps (got %d)" % len(out))
    return out


class Model:
    """One sweep of the comparison: its Run, statistics and verdicts as the single report has
    them (first normalizer, the temperature nearest 1)."""

    def __init__(self, label, path, resamples, progress):
        self.run = run = Run(path)
        self.label = label or run.model_name()
        self.ni = 0
        self.ti = int(np.argmin(np.abs(np.log(run.T))))
        t_ks = [t for t in (self.ti - 1, self.ti, self.ti + 1) if 0 <= t < len(run.T)]
        self.comp = stats.Computed(run, self.ni, resamples if run.has_samples() else None, t_ks,
                                   progress)
        ctx = claims.Context(run, self.comp, self.ni)
        self.claims = [claims.evaluate(c, ctx) for c in claims.all_claims()]
        self.n_layers = int(run.attr("model_num_layers", 0)) or int(run.layers.max()) + 1
        run.drop_samples()

    def describe(self):
        r = self.run
        return {"label": self.label, "file": os.path.abspath(r.path),
                "model": {"requested": str(r.attr("model_requested")),
                          "used": str(r.attr("model_used")), "sha256": str(r.attr("model_sha256")),
                          "name": r.model_name(), "caveat": r.caveat()},
                "architecture": str(r.attr("model_architecture", "gpt2")),
                "model_type": str(r.attr("model_type", "gpt2")),
                "num_layers": self.n_layers,
                "num_attention_heads": int(r.attr("model_num_attention_heads", len(r.heads))),
                "num_key_value_heads": int(r.attr("model_num_key_value_heads", len(r.heads))),
                "max_positions": int(r.attr("model_max_positions", 0)),
                "normalizer": r.norm_names[self.ni], "T_claims": float(r.T[self.ti]),
                "L": [int(x) for x in r.L], "layers": [int(x) for x in r.layers],
                "depth_fractions": [float((l + 0.5) / self.n_layers) for l in r.layers],
                "claims": self.claims}

    def per_layer(self, values, li):
        """values (L, T, H) per head -> the median over heads of each analysed layer, at L index
        li and the claims' T, with the layers' depth fractions."""
        r = self.run
        v = np.asarray(values[li, self.ti], float).reshape(len(r.layers), len(r.heads))
        with np.errstate(all="ignore"):
            med = np.array([np.nanmedian(row) if np.isfinite(row).any() else np.nan for row in v])
        return (r.layers + 0.5) / self.n_layers, med


def _check_same_grid(models):
    """The claims compare like with like: the same normalizer and the same claims' T."""
    first = models[0]
    for m in models[1:]:
        if m.run.norm_names[0] != first.run.norm_names[0]:
            raise InputError("%s and %s analyse different first normalizers (%s, %s): the "
                             "verdicts would not compare" % (first.run.path, m.run.path,
                                                             first.run.norm_names[0],
                                                             m.run.norm_names[0]))
        if m.run.T[m.ti] != first.run.T[first.ti]:
            raise InputError("%s and %s judge the claims at different T (%g, %g)"
                             % (first.run.path, m.run.path, first.run.T[first.ti], m.run.T[m.ti]))


def _save(fig, out, name, formats):
    for ax in fig.axes:
        plain_ticks(ax)
    fig.tight_layout(rect=(0, 0.12, 1, 1))
    small = [t.get_text() for t in fig.findobj(Text)
             if t.get_visible() and t.get_text() and t.get_fontsize() < MIN_PT]
    if small:
        raise AssertionError("%s: text under %d pt: %s" % (name, MIN_PT, small[:5]))
    for f in formats:
        files.savefig(fig, os.path.join(out, "%s.%s" % (name, f)), dpi=100)
    plt.close(fig)


def _legend(fig, models, colors):
    handles = [Line2D([], [], color=c, marker="o", label=m.label) for m, c in zip(models, colors)]
    fig.legend(handles=handles, loc="lower center", ncol=min(4, len(models)), frameon=False)


def fig_vs_L(models, colors, out, formats):
    """Four panels against L, one line (and interval band) per model."""
    fig, axes = plt.subplots(2, 2, figsize=(9, 7.5))
    panels = [("distance_mean_hmedian", "d (top N), N = %s: median over heads" % N_REF, True),
              ("n_crit_expected_frac_hmedian", "n_crit / L (expected test): median over heads",
               False),
              ("entropy_norm_mean_hmedian", "entropy / log L: median over heads", False),
              ("jac_exact_max_hmax", "largest ||grad alpha|| over heads", True)]
    for ax, (name, title, log) in zip(axes.flat, panels):
        ax.set_xscale("log", base=2)
        if log:
            ax.set_yscale("log")
        for m, c in zip(models, colors):
            st = m.comp.stats[name]
            if st.est.ndim == 4:  # (L, T, N, set)
                ni = int(np.argmin(np.abs(m.run.N - N_REF)))
                idx = (slice(None), m.ti, ni, 0)
            else:
                idx = (slice(None), m.ti, 0)
            e, lo, hi = (np.asarray(a[idx], float) for a in (st.est, st.lo, st.hi))
            ok = np.isfinite(e) & (e > 0 if log else True)
            if ok.any():
                ax.plot(m.run.L[ok], e[ok], "o-", color=c, ms=4)
            okb = ok & np.isfinite(lo) & np.isfinite(hi) & (lo > 0 if log else True)
            if okb.any():
                ax.fill_between(m.run.L[okb], lo[okb], hi[okb], color=c, alpha=0.2, lw=0)
        ax.set_title(title)
        ax.set_xlabel("L (context length)")
    _legend(fig, models, colors)
    name = "figc1_against_L"
    _save(fig, out, name, formats)
    return name, ("Against L, one colour per model, at each model's T nearest 1 (%s): distance "
                  "of the top-N split, n_crit / L, normalised entropy and the largest Jacobian "
                  "norm; bands are each model's 95 %% intervals where its file has them."
                  % ", ".join("%s T = %g" % (m.label, m.run.T[m.ti]) for m in models))


def fig_depth(models, colors, out, formats):
    """Per-layer medians over heads against depth as a fraction of each model's layers, at the
    largest L every model has."""
    common = sorted(set.intersection(*[set(int(x) for x in m.run.L) for m in models]))
    if not common:
        return None, None
    L = common[-1]
    fig, axes = plt.subplots(1, 3, figsize=(12, 4.2))
    panels = [("entropy_norm", "entropy / log L", False), ("distance", "d (top N), N = %d" % N_REF,
                                                          True),
              ("jac_exact_max", "||grad alpha||: max over rows", True)]
    for ax, (key, title, log) in zip(axes, panels):
        if log:
            ax.set_yscale("log")
        for m, c in zip(models, colors):
            li = int(np.where(m.run.L == L)[0][0])
            v = m.comp.head[key]
            if v.ndim == 4:  # (L, T, N, H)
                ni = int(np.argmin(np.abs(m.run.N - N_REF)))
                v = v[:, :, ni]
            x, y = m.per_layer(v, li)
            ok = np.isfinite(y) & (y > 0 if log else True)
            if ok.any():
                ax.plot(x[ok], y[ok], "o-", color=c, ms=4)
        ax.set_xlim(0, 1)
        ax.set_title("%s, L = %d: median over heads" % (title, L))
        ax.set_xlabel("depth (fraction of the model's layers)")
    _legend(fig, models, colors)
    name = "figc2_against_depth"
    _save(fig, out, name, formats)
    return name, ("Against depth, one colour per model: each analysed layer's median over its "
                  "heads at L = %d (the largest L every model has) and each model's T nearest 1; "
                  "%s." % (L, DEPTH_RULE))


def verdict_table(models):
    head = ["claim (figure)"] + [m.label for m in models]
    rows = []
    for k, c in enumerate(models[0].claims):
        r = ["%s<br><small>%s</small>" % (page.h(c["claim"]), page.h(c["figure"]))]
        for m in models:
            j = m.claims[k]
            r.append("%s<br><small>%s%s</small>" % (page.verdict_span(j["verdict"]),
                                                    page.h(page.ci_text(j)),
                                                    "; fragile" if j["fragile"] else ""))
        rows.append(r)
    return page.table(head, rows, "verdicts")


def build(paths, out, formats, resamples=bootstrap.DEFAULT_RESAMPLES, progress=None):
    models = []
    for label, path in inputs_of(paths):
        if progress:
            progress("%s" % path)
        models.append(Model(label, path, resamples, progress))
    labels = [m.label for m in models]
    dup = sorted(set(x for x in labels if labels.count(x) > 1))
    if dup:
        raise InputError("--compare: two sweeps of the same model (%s): compare different models "
                         "or name a campaign directory" % ", ".join(dup))
    _check_same_grid(models)
    colors = ["C%d" % (k % 10) for k in range(len(models))]
    figs, captions = [], {}
    for fn in (fig_vs_L, fig_depth):
        name, cap = fn(models, colors, out, formats)
        if name:
            figs.append(name)
            captions[name] = cap
    rep = {"kind": "comparison", "models": [m.describe() for m in models],
           "colors": dict(zip(labels, colors)), "depth_rule": DEPTH_RULE, "N_reference": N_REF,
           "claims": [{"id": c["id"], "claim": c["claim"], "figure": c["figure"],
                       "verdicts": {m.label: m.claims[k]["verdict"] for m in models}}
                      for k, c in enumerate(models[0].claims)],
           "figures": figs, "captions": captions}
    p = ["<!DOCTYPE html><html><head><meta charset='utf-8'><title>normsweep comparison</title>"
         "<style>%s</style></head><body>" % page.CSS,
         "<h1>normsweep: %d models side by side</h1>" % len(models)]
    for m in models:
        if m.run.caveat():
            p.append("<p class='note'><b>%s:</b> %s</p>" % (page.h(m.label),
                                                            page.h(m.run.caveat())))
    p.append(page.table(["model", "file", "architecture", "layers", "heads (key/value)",
                         "context", "model SHA-256"],
                        [[page.h(d["label"]), page.h(d["file"]), page.h(d["architecture"]),
                          str(d["num_layers"]), "%d (%d)" % (d["num_attention_heads"],
                                                              d["num_key_value_heads"]),
                          str(d["max_positions"]), "<code>%s</code>" % page.h(d["model"]["sha256"])]
                         for d in rep["models"]]))
    p.append("<h2>Verdicts, one column per model</h2><p>The single report's claims, rules and "
             "intervals (docs/STATISTICS.md), judged on each model's own file.</p>")
    p.append(verdict_table(models))
    p.append("<h2>Figures</h2>")
    for name in figs:
        p.append(page.img(out, name, page.h(captions[name])))
    p.append("</body></html>")
    files.write_text(os.path.join(out, "report.html"), "\n".join(p))
    page.write_json(out, rep)
    return rep

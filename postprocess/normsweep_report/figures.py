"""figures: the paper's figures from one sweep, each with its intervals drawn as bands or bars
(docs/REPORT.md, "Figures"). Every figure names the model inside it (with the stand-in caveat
when it applies), keeps legends off the data (below the panels), uses no text under 8 pt at its
saved size, leaves out panels that would be constant (the caption says so), and is saved as
PNG and PDF."""
import math
import os

import numpy as np
import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
from matplotlib.lines import Line2D  # noqa: E402
from matplotlib.patches import Patch  # noqa: E402
from matplotlib.text import Text  # noqa: E402
from matplotlib.ticker import FuncFormatter, NullFormatter  # noqa: E402

from . import bootstrap, claims, files, ks, stats  # noqa: E402

MIN_PT = 8
plt.rcParams.update({"font.size": 9, "axes.titlesize": 9, "axes.labelsize": 9,
                     "xtick.labelsize": 8, "ytick.labelsize": 8, "legend.fontsize": 8,
                     "figure.titlesize": 9})

DIST = (("distance", "d (top N)", "C2", "o-"),
        ("distance_random", "d_random (random N-subset)", "C1", "s-"),
        ("distance_expected", "d_expected (Theorem 1's closed form)", "C0", "d--"),
        ("distance_bound", "d_bound (Theorem 1)", "C3", "^:"))


class Figures:
    """Draws every figure of one run into out/, recording names and captions in order."""

    def __init__(self, run, comp, ctx, out, formats):
        self.run, self.comp, self.ctx, self.out = run, comp, ctx, out
        self.formats = formats
        self.names, self.captions = [], {}
        name = run.model_name()
        self.model_line = "model: %s" % name
        if run.is_standin() or str(run.attr("model_fallback", "false")) == "true":
            self.model_line += " (stand-in, not GPT-2: not comparable with the paper's figures)"
        self.band_note = ("bands: 95 %% shard-bootstrap intervals (at T = %s, where the claims are "
                          "judged; the other panels show estimates only)"
                          % ", ".join("%g" % run.T[t] for t in stats.claim_T(run.T))
                          if comp.samples or
                          any(s.source == "file" for s in comp.stats.values())
                          else "no intervals (the file has neither samples nor intervals)")

    # ---- helpers ----
    def panels(self, n, w=4.2, h=3.2, cols=3):
        cols = min(n, cols)
        rows = (n + cols - 1) // cols
        fig, axes = plt.subplots(rows, cols, figsize=(w * cols, h * rows + 0.9), squeeze=False)
        for k in range(n, rows * cols):
            axes.flat[k].set_visible(False)
        return fig, list(axes.flat[:n])

    def save(self, fig, name, caption, handles=None, ncol=2):
        for ax in fig.axes:
            plain_ticks(ax)
        if handles:
            fig.legend(handles=handles, loc="lower center", ncol=ncol, frameon=False,
                       bbox_to_anchor=(0.5, 0.0))
        fig.text(0.01, 0.995, self.model_line, fontsize=MIN_PT, va="top", ha="left",
                 color="#a00" if "stand-in" in self.model_line else "k")
        rows = (len(handles) + ncol - 1) // ncol if handles else 0
        bottom = min(0.35, (0.25 * rows + 0.1) / fig.get_figheight()) if handles else 0.02
        fig.tight_layout(rect=(0, bottom, 1, 1 - 0.25 / fig.get_figheight()))
        small = [t.get_text() for t in fig.findobj(Text)
                 if t.get_visible() and t.get_text() and t.get_fontsize() < MIN_PT]
        if small:
            raise AssertionError("%s: text under %d pt: %s" % (name, MIN_PT, small[:5]))
        for f in self.formats:
            files.savefig(fig, os.path.join(self.out, "%s.%s" % (name, f)), dpi=100)
        plt.close(fig)
        self.names.append(name)
        self.captions[name] = caption

    def stat(self, name):
        return self.comp.stats[name]

    def band(self, ax, x, st, idx, color, style, label):
        """The estimate as a line, its interval as a band (where finite)."""
        e = np.asarray(st.est[idx], float)
        lo, hi = np.asarray(st.lo[idx], float), np.asarray(st.hi[idx], float)
        x = np.asarray(x, float)
        ok = np.isfinite(e) & (e > 0) if ax.get_yscale() == "log" else np.isfinite(e)
        if not ok.any():
            return None
        line, = ax.plot(x[ok], e[ok], style, color=color, ms=4, label=label)
        okb = ok & np.isfinite(lo) & np.isfinite(hi)
        if ax.get_yscale() == "log":
            okb &= lo > 0
        if okb.any():
            ax.fill_between(x[okb], lo[okb], hi[okb], color=color, alpha=0.2, lw=0)
        return line

    # ---- Fig. 2a / 2b ----
    def _distances(self, x, index, title, xlabel):
        """One panel per T of the four distances of Theorem 1 against x; index(ti) gives the
        statistics' cells for that T."""
        fig, axes = self.panels(len(self.run.T))
        for ti, ax in enumerate(axes):
            ax.set_xscale("log", base=2)
            ax.set_yscale("log")
            for stem, label, color, style in DIST:
                self.band(ax, x, self.stat(stem + "_mean_hmedian"), index(ti), color, style,
                          label)
            ax.set_title(title(ti, ax))
            ax.set_xlabel(xlabel)
            ax.set_ylabel("distance (M = 1 units)")
            ax.grid(True, which="both", alpha=0.3)
        h = [Line2D([], [], color=c, ls=s[1:] or "-", marker=s[0], label=lab)
             for _, lab, c, s in DIST]
        return fig, h

    def distance_vs_N(self):
        run, li = self.run, self.ctx.li
        keep = np.flatnonzero(run.N < run.L[li])
        fig, h = self._distances(run.N[keep], lambda ti: (li, ti, keep, 0),
                                 lambda ti, ax: "T = %g" % run.T[ti], "top-N")
        self.save(fig, "fig2a_distance_vs_N", "Fig. 2a (Theorem 1): the distances against N at "
                  "L = %d, one panel per T; each line is the median over heads of each head's "
                  "mean over rows (%d rows per head); %s. d_expected is Theorem 1's closed-form "
                  "expectation term, not the distance of a random subset."
                  % (run.L[li], self.ctx.rows(li), self.band_note), h)

    def distance_vs_L(self):
        run = self.run
        n5 = int(np.argmin(np.abs(run.N - 5)))
        keep = np.flatnonzero(run.L > run.N[n5])
        sl = self.stat("distance_L_slope")

        def title(ti, ax):
            y = self.stat("distance_mean_hmedian").est[keep, ti, n5, 0]
            if keep.size and np.isfinite(y[0]) and y[0] > 0:
                ax.plot(run.L[keep], y[0] * run.L[keep] / run.L[keep][0], color="grey", lw=0.8,
                        ls="-.")
            return "T = %g; slope of d: %s" % (run.T[ti], _ci(sl, (ti, n5, 0)))
        fig, h = self._distances(run.L[keep], lambda ti: (keep, ti, n5, 0), title,
                                 "context length L")
        h.append(Line2D([], [], color="grey", ls="-.", label="proportional to L"))
        self.save(fig, "fig2b_distance_vs_L", "Fig. 2b (Theorem 1): the distances against L at "
                  "N = %d (the grid's N nearest 5), one panel per T, with the fitted log-log "
                  "slope of d and its interval in each title (1 = linear); %s."
                  % (run.N[n5], self.band_note), h)

    # ---- Fig. 3 ----
    def ncrit_vs_L(self):
        run = self.run
        st, stl = self.stat("n_crit_expected_frac_hmedian"), \
            self.stat("n_crit_expected_frac_lower_hmedian")
        fig, axes = self.panels(len(run.T))
        rng = np.random.default_rng(0)  # horizontal jitter of the points only
        theta = claims.NCRIT_FRAC
        for ti, ax in enumerate(axes):
            ax.set_xscale("log", base=2)
            ax.set_yscale("log")
            ax.axhspan(1e-4, 100 * theta, color="0.92", zorder=0)
            for li, L in enumerate(run.L):
                nc = run["n_crit_expected"][self.ctx.ni, li, ti].ravel()
                found = nc[np.isfinite(nc) & (nc >= 1)]
                x = L * np.exp(rng.uniform(-0.06, 0.06, found.size))
                ax.scatter(x, 100 * found / L, s=10, color="C0", alpha=0.6, zorder=2)
                none = int(np.sum(nc == 0))
                below = run.N[run.N < L]
                if none and below.size:
                    ytop = 100 * below.max() / L
                    ax.scatter([L], [ytop], marker="^", facecolors="none", edgecolors="C3",
                               s=40, zorder=3)
                    ax.annotate("%d" % none, (L, ytop), fontsize=MIN_PT, xytext=(4, 2),
                                textcoords="offset points", color="C3")
                e, lo, hi = st.est[li, ti, 0], stl.lo[li, ti, 0], st.hi[li, ti, 0]
                if np.isfinite(e):
                    ax.plot([L * 1.12], [100 * e], "k_", ms=10, zorder=4)
                if np.isfinite(lo) and lo > 0:
                    top = 100 * hi if np.isfinite(hi) else 100
                    ax.plot([L * 1.12] * 2, [100 * lo, top], "k-", lw=1.2, zorder=4)
            ax.set_ylim(100 * 0.5 / run.L.max(), 100)
            ax.set_title("T = %g" % run.T[ti])
            ax.set_xlabel("context length L")
            ax.set_ylabel("n_crit / L (%)")
            ax.grid(True, which="both", alpha=0.3)
        h = [Patch(color="0.92", label="the paper: below 6 % of L"),
             Line2D([], [], ls="", marker="o", color="C0", label="one head where an N passes"),
             Line2D([], [], ls="", marker="^", mfc="none", color="C3",
                    label="heads where no N passes (count)"),
             Line2D([], [], ls="-", marker="_", color="k", ms=10,
                    label="median over heads, 95 % interval (grid-censored)")]
        self.save(fig, "fig3_critical_N_vs_L", "Fig. 3: the paper's critical N (the first N of "
                  "the grid whose KS test of d against d_expected has p > %g) as a fraction of "
                  "L, one panel per T. The bar is the interval of the median over heads, read "
                  "on the grid (a head's n_crit lies between the previous N and the N found; a "
                  "head where no N passes lies above the largest N); drawn where the samples "
                  "allow it." % run.ks_alpha, h)

    def ks_distance_vs_N(self):
        run, ti = self.run, self.ctx.ti
        fig, axes = self.panels(len(run.L))
        for li, ax in enumerate(axes):
            L = run.L[li]
            keep = np.flatnonzero(run.N < L)
            ax.set_xscale("log", base=2)
            for t, color, label in (("expected", "C0", "D(d, d_expected): the paper's test"),
                                    ("random", "C1", "D(d, d_random)")):
                self.band(ax, run.N[keep], self.stat("ks_%s_statistic_hmedian" % t),
                          (li, ti, keep, 0), color, "o-", label)
            n = self.ctx.rows(li)
            ax.axhline(claims.EQUIV_D, color="k", ls="--", lw=0.8)
            ax.axhline(ks.critical_distance(n, n, run.ks_alpha), color="C3", ls=":", lw=1)
            ax.axhline(ks.null_floor(n, n), color="grey", ls="-.", lw=0.8)
            ax.axvline(claims.NCRIT_FRAC * L, color="0.6", lw=6, alpha=0.3)
            ax.set_ylim(0, 1)
            ax.set_title("L = %d, T = %g (%d rows per head)" % (L, run.T[ti], n))
            ax.set_xlabel("top-N")
            ax.set_ylabel("KS distance D")
            ax.grid(True, alpha=0.3)
        h = [Line2D([], [], color="C0", marker="o", label="D(d, d_expected): the paper's test"),
             Line2D([], [], color="C1", marker="o", label="D(d, d_random)"),
             Line2D([], [], color="k", ls="--", label="equivalence margin %g" % claims.EQUIV_D),
             Line2D([], [], color="C3", ls=":", label="D the test rejects at alpha = %g"
                    % run.ks_alpha),
             Line2D([], [], color="grey", ls="-.", label="typical D of one distribution"),
             Patch(color="0.6", alpha=0.3, label="6 % of L")]
        self.save(fig, "fig3b_ks_distance_vs_N", "Fig. 3b: the effect size behind n_crit: the "
                  "median over heads of the KS distance D against N at T = %g, one panel per L; "
                  "%s. \"Indistinguishable\" is judged by D below the margin, not by a test "
                  "failing to reject." % (run.T[ti], self.band_note), h, ncol=3)

    def ncrit_vs_shards(self, data):
        run = self.run
        if not data:
            return
        fig, axes = self.panels(2, w=4.6, cols=2)
        for k, p in enumerate(data["per_L"]):
            c = "C%d" % k
            y = [100 * v if np.isfinite(v) else np.nan for v in p["median_frac"]]
            axes[0].plot(data["shards"], y, "o-", color=c)
            none = [s for s, v in zip(data["shards"], p["median_frac"]) if np.isinf(v)]
            if none:
                axes[0].plot(none, [100] * len(none), "^", mfc="none", color=c)
            axes[1].plot(data["shards"], [100 * f / max(cc, 1) for f, cc in
                                          zip(p["found"], p["computable"])], "o-", color=c)
        axes[0].set_yscale("log")
        axes[0].set_ylabel("median n_crit / L (%)")
        axes[0].axhline(100 * claims.NCRIT_FRAC, color="k", ls="--", lw=0.8)
        axes[1].set_ylabel("heads where an N passes (%)")
        axes[1].set_ylim(0, 105)
        for ax in axes:
            ax.set_xscale("log", base=2)
            ax.set_xlabel("shards (the first k of the run)")
            ax.grid(True, which="both", alpha=0.3)
        h = [Line2D([], [], color="C%d" % k, marker="o", label="L = %d" % p["L"])
             for k, p in enumerate(data["per_L"])]
        h.append(Line2D([], [], color="k", ls="--", label="6 %"))
        h.append(Line2D([], [], ls="", marker="^", mfc="none", color="k",
                        label="median: no N passes"))
        self.save(fig, "fig3c_critical_N_vs_shards", "Fig. 3c: n_crit against sample size: the "
                  "paper's KS test re-reduced on the first 6, 12, 24, ... shards (%d rows per "
                  "shard) at T = %g. A critical N that has converged does not move with the "
                  "number of shards." % (run.rows, data["T"]), h, ncol=4)

    # ---- Fig. 4 ----
    def separability(self):
        run, li = self.run, self.ctx.li
        keep = [k for k, n in enumerate(run.N) if 1 < n < run.L[li]]
        H = len(run.layers) * len(run.heads)
        fig, axes = self.panels(len(run.T))
        pos = np.arange(len(keep))
        for ti, ax in enumerate(axes):
            ax.axhspan(*claims.SATURATION, color="0.92", zorder=0)
            for j, k in enumerate(keep):
                y = self.comp.head["ns_frac"][li, ti, k].reshape(H) if "ns_frac" in \
                    self.comp.head else np.full(H, np.nan)
                ax.scatter(np.full(H, j) + np.linspace(-0.2, 0.2, H), y, s=6, color="C2",
                           alpha=0.5)
            st = self.stat("ns_frac_mean_hmedian")
            e = st.est[li, ti, keep, 0]
            ax.errorbar(pos + 0.3, e, yerr=_yerr(e, st.lo[li, ti, keep, 0], st.hi[li, ti, keep, 0]),
                        fmt="k_", ms=8, capsize=0)
            up = self.stat("ns_upper_mean_hmedian").est[li, ti, keep, 0]
            lo = self.stat("ns_lower_mean_hmedian").est[li, ti, keep, 0]
            ax.plot(pos, up, "r.-")
            ok = lo > 0
            ax.plot(pos[ok], lo[ok], "b.-")
            ax.set_xticks(pos)
            ax.set_xticklabels([str(run.N[k]) for k in keep])
            ax.set_ylim(0, 1.05)
            ax.set_title("T = %g" % run.T[ti])
            ax.set_xlabel("top-N")
            ax.set_ylabel("N_s / N")
            ax.grid(True, alpha=0.3)
        h = [Line2D([], [], ls="", marker="o", color="C2", label="one head's mean"),
             Line2D([], [], ls="-", marker="_", color="k", label="median over heads, 95 % interval"),
             Line2D([], [], color="r", marker=".", label="Theorem 2 upper bound (median)"),
             Line2D([], [], color="b", marker=".", label="Theorem 2 lower bound where > 0"),
             Patch(color="0.92", label="the paper: 70-85 %")]
        self.save(fig, "fig4_separability_vs_N", "Fig. 4 (Theorem 2): N_s/N against N at L = %d, "
                  "one panel per T (N = 1 left out: N_s/N = 1 trivially). The lower bound is "
                  "drawn only where it is positive (it is vacuous elsewhere; the bound-check "
                  "table gives how often)." % run.L[li], h, ncol=3)

    # ---- Fig. 5 ----
    def sensitivity(self):
        run, li, ni = self.run, self.ctx.li, self.ctx.ni
        T = run.T
        fig, ax = plt.subplots(figsize=(6.4, 4.6))
        ax.set_xscale("log")
        ax.set_yscale("log")
        for ei, e in enumerate(run.eps):
            y = np.nanmax(run["jac_fd_max"][ni, li, :, ei].reshape(len(T), -1), axis=1)
            ax.plot(T, y, "o-", ms=3, color="C%d" % (ei + 1), label="jac_fd, eps = %g" % e)
        st = self.stat("jac_exact_max_hmax")
        line = self.band(ax, T, st, (li, slice(None), 0), "k", "s--", "jac_exact")
        if line is not None:
            line.set_markerfacecolor("none")
        Tf = np.geomspace(T.min(), T.max(), 200)
        ax.plot(Tf, np.minimum(1 / (4 * Tf), math.sqrt(2)), "r--")
        ax.plot(Tf, 1 / (2 * Tf), "m:")
        sl = self.stat("jac_exact_T_slope")
        ax.set_title("L = %d; slope over T <= 1: %s" % (run.L[li], _ci(sl, (li, 0))))
        ax.set_xlabel("temperature T")
        ax.set_ylabel("largest Jacobian norm (rows, heads)")
        ax.grid(True, which="both", alpha=0.3)
        h = [Line2D([], [], color="k", marker="s", mfc="none", ls="--", label="jac_exact (exact)")]
        h += [Line2D([], [], color="C%d" % (ei + 1), marker="o", label="jac_fd, eps = %g" % e)
              for ei, e in enumerate(run.eps)]
        h += [Line2D([], [], color="r", ls="--", label="the paper: min(1/(4T), sqrt 2)"),
              Line2D([], [], color="m", ls=":", label="softmax's exact maximum 1/(2T)")]
        self.save(fig, "fig5_sensitivity_vs_T", "Fig. 5 (Lemma 2): the largest Jacobian norm over "
                  "rows and heads against T at L = %d, with the fitted log-log slope over T <= 1 "
                  "(the paper: -1) and its interval; %s. jac_fd is a secant, not a derivative, "
                  "where eps/T is large." % (run.L[li], self.band_note), h)

    # ---- Fig. 6: layer x head maps ----
    def heads(self, ti):
        run, li, ni = self.run, self.ctx.li, self.ctx.ni
        fields = heat_fields(run, ni, li, ti)
        keep, dropped = [], []
        for f in fields:
            a = np.asarray(f[1], float)
            fin = a[np.isfinite(a)]
            if f[4] is not None and fin.size == 0:
                marks = np.asarray(f[4], float)
                dropped.append("%s: %s" % (f[0], "no N passes for any head" if
                                           np.all(marks == 0) else "no N found for any head"))
            elif f[4] is None and (fin.size == 0 or _constant(fin, f[2], f[3])):
                dropped.append("%s: %s" % (f[0], "missing everywhere" if fin.size == 0 else
                                           "%.3g for every head" % np.median(fin)))
            else:
                keep.append(f)
        if not keep:
            return dropped
        from matplotlib.colors import LogNorm
        fig, axes = self.panels(len(keep), w=3.6, h=3.0, cols=4)
        for ax, (title, a, vmin, vmax, marks) in zip(axes, keep):
            a = np.asarray(a, dtype=float)
            if marks is not None:
                im = ax.imshow(np.ma.masked_invalid(a), origin="lower", aspect="auto",
                               cmap="viridis", norm=LogNorm(vmin=1.0 / run.L[li], vmax=1.0))
                for (y, x), v in np.ndenumerate(marks):
                    if v == 0 or not np.isfinite(v):
                        ax.text(x, y, "x" if v == 0 else "-", ha="center", va="center",
                                fontsize=MIN_PT + 1, color="k")
            else:
                im = ax.imshow(np.ma.masked_invalid(a), origin="lower", aspect="auto",
                               cmap="viridis", vmin=vmin, vmax=vmax)
            head_map_axes(fig, ax, im, run, title)
        cap = ("Fig. 6: layer x head maps at L = %d, T = %g (x: no N of the grid passes; -: not "
               "computable)." % (run.L[li], run.T[ti]))
        if dropped:
            cap += " Constant, not drawn: " + "; ".join(dropped) + "."
        self.save(fig, "fig6_heads_T%g" % run.T[ti], cap)
        return dropped

    # ---- Fig. 7: against entropy ----
    def entropy(self):
        run, li, ni = self.run, self.ctx.li, self.ctx.ni
        H = len(run.layers) * len(run.heads)
        ent = self.comp.sets.entropy[li]  # (T, H)
        kb = [k for k, n in enumerate(run.N) if n < run.L[li]][-1]
        n6 = [k for k, n in enumerate(run.N) if n < claims.NCRIT_FRAC * run.L[li]]
        n6 = n6[-1] if n6 else 0
        nc = run["n_crit_expected"][ni, li].reshape(len(run.T), H)
        ncf = np.where(nc >= 1, nc / run.L[li], np.where(nc == 0, 1.0, np.nan))
        fields = [
            ("N_s/N at N = %d (head mean)" % run.N[kb], run["ns_frac_mean"][ni, li, :, kb], False),
            ("d / d_expected at N = %d" % run.N[n6], run["distance_mean"][ni, li, :, n6] /
             run["distance_expected_mean"][ni, li, :, n6], True),
            ("KS D(d, d_expected) at N = %d" % run.N[n6],
             run["ks_expected_statistic"][ni, li, :, n6], False),
            ("n_crit / L (top: no N passes)", ncf, True),
            ("largest jac_exact x T", run["jac_exact_max"][ni, li] * run.T[:, None, None], False),
        ]
        fig, axes = self.panels(len(fields), w=4.0, h=3.1)
        cmap = plt.get_cmap("viridis")
        for ax, (title, y, logy) in zip(axes, fields):
            y = np.asarray(y, float).reshape(len(run.T), H)
            for ti in range(len(run.T)):
                ax.scatter(ent[ti], y[ti], s=10, color=cmap(ti / max(1, len(run.T) - 1)))
            ax.axvline(0.5, color="k", ls="--", lw=0.8)
            if logy:
                ax.set_yscale("log")
            ax.set_xlim(-0.02, 1.02)
            ax.set_title(title)
            ax.set_xlabel("entropy / log L (head mean)")
            ax.grid(True, alpha=0.3)
        h = [Line2D([], [], ls="", marker="o", color=cmap(ti / max(1, len(run.T) - 1)),
                    label="T = %g" % t) for ti, t in enumerate(run.T)]
        h.append(Line2D([], [], color="k", ls="--", label="sharp | flat (0.5)"))
        self.save(fig, "fig7_vs_entropy", "Fig. 7: the key quantities of each head against its "
                  "normalised attention entropy at L = %d, every T (colour); heads left of the "
                  "dashed line are judged as sharp, right of it as flat." % run.L[li], h, ncol=6)


def head_map_axes(fig, ax, im, run, title):
    """The frame of a layer x head map (Fig. 6, Fig. 8): title, axes named and ticked by the
    run's layers and heads, a colour bar."""
    ax.set_title(title)
    ax.set_xlabel("head")
    ax.set_ylabel("layer")
    ax.set_xticks(range(len(run.heads)))
    ax.set_xticklabels(run.heads)
    ax.set_yticks(range(len(run.layers)))
    ax.set_yticklabels(run.layers)
    fig.colorbar(im, ax=ax, fraction=0.046)


def _plain(x, pos=None):
    return "%g" % x


def plain_ticks(ax):
    """Tick labels as plain numbers (1, 2, 4, 0.01, 1000) instead of mathtext powers, whose
    exponents are set smaller than the 8 pt minimum; minor ticks unlabelled."""
    for axis, scale in ((ax.xaxis, ax.get_xscale()), (ax.yaxis, ax.get_yscale())):
        if scale == "log":
            axis.set_major_formatter(FuncFormatter(_plain))
            axis.set_minor_formatter(NullFormatter())
        elif scale == "symlog":
            axis.set_major_formatter(FuncFormatter(_plain))


def heat_fields(run, ni, li, ti):
    """The layer x head maps of one (L, T): (title, array, vmin, vmax, n_crit marks or None)."""
    below = np.flatnonzero(run.N < run.L[li])
    n5 = below[np.argmin(np.abs(run.N[below] - 5))] if below.size else 0
    nbig = below[-1] if below.size else 0

    def rate(v, c, sl):
        a = np.nansum(run[v][sl], axis=tuple(range(run[v][sl].ndim - 2)))
        b = np.nansum(run[c][sl], axis=tuple(range(run[c][sl].ndim - 2)))
        return np.where(b > 0, a / np.maximum(b, 1), np.nan)
    over_N = (ni, li, ti, slice(1, None))
    return [
        ("d at N = %d (mean)" % run.N[n5], run["distance_mean"][ni, li, ti, n5], None, None, None),
        ("n_crit/L, d vs d_expected", run["n_crit_expected_frac"][ni, li, ti], 0, 1,
         run["n_crit_expected"][ni, li, ti]),
        ("n_crit/L, d vs d_random", run["n_crit_random_frac"][ni, li, ti], 0, 1,
         run["n_crit_random"][ni, li, ti]),
        ("N_s/N at N = %d (mean)" % run.N[nbig], run["ns_frac_mean"][ni, li, ti, nbig], 0, 1,
         None),
        ("entropy / log L (mean)", run["entropy_norm_mean"][ni, li, ti], 0, 1, None),
        ("rate jac_exact > min(1/(4T), sqrt 2)",
         rate("jac_exact_violations", "jac_exact_checked", (ni, li, ti, 0)), 0, 1, None),
        ("rate N_s/N > upper bound (N > 1)",
         rate("ns_upper_violations", "ns_upper_checked", over_N), 0, 1, None),
        ("rate d > d_bound", rate("thm1_violations", "thm1_checked", (ni, li, ti)), 0, 1, None),
    ]


def _constant(v, vmin, vmax):
    """A panel that would look uniform: a spread under 0.5 % of its colour range (or of the
    values' magnitude when the range is free)."""
    spread = float(np.max(v) - np.min(v))
    if vmin is not None and vmax is not None:
        return spread < 0.005 * (vmax - vmin)
    return spread <= 1e-3 * max(abs(float(np.max(v))), abs(float(np.min(v))), 1e-300)


def _yerr(e, lo, hi):
    e, lo, hi = (np.asarray(x, float) for x in (e, lo, hi))
    ok = np.isfinite(lo) & np.isfinite(hi) & np.isfinite(e)
    return np.vstack([np.where(ok, e - lo, 0), np.where(ok, hi - e, 0)])


def _ci(st, idx):
    e, lo, hi = float(st.est[idx]), float(st.lo[idx]), float(st.hi[idx])
    if not math.isfinite(e):
        return "n/a"
    if math.isfinite(lo) and math.isfinite(hi):
        return "%.2f [%.2f, %.2f]" % (e, lo, hi)
    return "%.2f (no interval)" % e

"""claims: the paper's claims, each judged supported / contradicted / inconclusive by the rules
of docs/STATISTICS.md on the statistics of stats.py: the main verdict (every head, the claim's
temperature), the same for sharp and for flat heads, whether the grid can decide, and whether
the verdict is fragile (another verdict under a documented threshold variant, an adjacent
temperature of the grid, or one layer's heads)."""
import math

import numpy as np

from . import ks, rules, stats
from .rules import SUPPORTED, CONTRADICTED, INCONCLUSIVE

NCRIT_FRAC = 0.06            # Fig. 3: "fewer than 6 % of the tokens"
NCRIT_MIN_TOKENS = 4         # the grid resolves theta L only when theta L >= 4 tokens
EQUIV_D = 0.10               # equivalence margin on the KS distance D ("indistinguishable")
SATURATION = (0.70, 0.85)    # Fig. 4: "saturates at 70-85 %"
PLATEAU_MARGIN = 0.2         # Fig. 2a plateau: |d(N) log-log slope| <= 0.2 for N > 20
LINEAR_BAND = (0.8, 1.2)     # Fig. 2b "roughly linearly": log-log slope in [0.8, 1.2]
INV_T_BAND = (-1.2, -0.8)    # Fig. 5 "decays as 1/T": log-log slope in [-1.2, -0.8]
N_NEAR_5 = (5 / 1.5, 5 * 1.5)  # Fig. 2b's N = 5: the grid's nearest N must lie in this range


class Context:
    """What every claim reads: the run, its statistics, the claims' temperature and L."""

    def __init__(self, run, comp, ni=0):
        self.run, self.comp, self.ni = run, comp, ni
        self.st = comp.stats
        self.sets = comp.sets
        T = run.T
        self.ti = int(np.argmin(np.abs(np.log(T))))
        self.li = len(run.L) - 1
        self.adjacent_T = [t for t in stats.claim_T(T) if t != self.ti]
        self.layers = [n for n in comp.sets.names if n.startswith("layer")]

    def get(self, name, *idx):
        """(estimate, lo, hi, mc_lo, mc_hi) of a statistic at an index."""
        s = self.st[name]
        return tuple(float(np.asarray(a)[idx]) for a in (s.est, s.lo, s.hi, s.mc[0], s.mc[1]))

    def source(self, name):
        return self.st[name].source

    def n_heads(self, set_name, li, ti):
        k = self.sets.index(set_name)
        return int(self.sets.mask[k, li, ti].sum())

    def rows(self, li):
        return int(self.run["n_samples"][li])

    def grid_text(self, li=None, ti=None, N=None, L=None, T=None):
        run = self.run
        parts = []
        parts.append("L = %s" % (run.L[li] if li is not None else
                                 ", ".join(str(x) for x in (L if L is not None else run.L))))
        if N is not None:
            parts.append("N = %s" % (", ".join(str(x) for x in N) if hasattr(N, "__len__")
                                     else N))
        parts.append("T = %s" % ("%g" % run.T[ti] if ti is not None else
                                 ", ".join("%g" % x for x in (T if T is not None else run.T))))
        parts.append("%d shards x %d row%s" % (run.n_shards, run.rows, "" if run.rows == 1 else "s"))
        return "; ".join(parts)


def judgement(verdict, reason, est=None, lo=None, hi=None, threshold=None, grid="",
              n_samples=None, n_heads=None, mc=(None, None), extra=None):
    j = {"verdict": verdict, "reason": reason, "estimate": _num(est), "ci_low": _num(lo),
         "ci_high": _num(hi), "threshold": threshold, "grid": grid, "n_samples": n_samples,
         "n_heads": n_heads, "mc_error": [_num(mc[0]), _num(mc[1])]}
    if extra:
        j.update(extra)
    return j


def _num(x):
    if x is None:
        return None
    x = float(x)
    if math.isnan(x):
        return None
    return x if math.isfinite(x) else (float("inf") if x > 0 else float("-inf"))


def cannot_decide(why, **kw):
    return judgement(INCONCLUSIVE, "the grid cannot decide: " + why, **kw)


def mc_close(j, thresholds):
    """True when a threshold lies within the Monte Carlo error of an interval endpoint: another
    set of resamples could move the endpoint across it."""
    for end, err in ((j["ci_low"], j["mc_error"][0]), (j["ci_high"], j["mc_error"][1])):
        if end is None or err is None or not math.isfinite(end):
            continue
        if any(abs(end - t) <= err for t in thresholds):
            return True
    return False


# ---- the claims -------------------------------------------------------------------------------

class Claim:
    """One claim of the paper: judge(ctx, set_name, ti, variant) -> judgement dict."""
    id = ""
    quote = ""
    figure = ""
    statistic = ""
    rule = ""
    variants = ()        # (label, variant) pairs: the documented threshold range
    vary_T = True        # re-judge at the grid's adjacent temperatures
    vary_layers = True   # re-judge on each layer's heads

    def thresholds(self, variant=None):
        return []


class Universal(Claim):
    """A bound that must hold on every row: judged on its violation count."""
    vary_T = False
    vary_layers = False

    def __init__(self, id, quote, figure, statistic, count, checked, first_N_only):
        self.id, self.quote, self.figure, self.statistic = id, quote, figure, statistic
        self.count, self.checked, self.first_N_only = count, checked, first_N_only
        self.rule = ("universal: contradicted by one violation, supported by none in at least "
                     "one check")

    def judge(self, ctx, set_name="all", ti=None, variant=None):
        run, ni = ctx.run, ctx.ni
        c, k = run[self.count][ni], run[self.checked][ni]
        if self.first_N_only:  # row-level values counted once per row (the grid's first N)
            c, k = c[:, :, 0], k[:, :, 0]
        nL, nT, H = c.shape[0], c.shape[1], len(run.layers) * len(run.heads)
        m = ctx.sets.mask[ctx.sets.index(set_name)][:, :, None, :]  # (L, T, 1, H)
        cnt = int(np.nansum(np.where(m, c.reshape(nL, nT, -1, H), 0)))
        chk = int(np.nansum(np.where(m, k.reshape(nL, nT, -1, H), 0)))
        verdict, reason = rules.universal(cnt, chk)
        lo, hi = clopper_pearson(cnt, chk)
        extra = {"count": cnt, "checked": chk,
                 "interval_note": "Clopper-Pearson 95 % on the violation rate with rows taken as "
                 "independent (rows of a shard are not: indicative only); the verdict rests on "
                 "the count"}
        if self.id == "lemma2_corollary":
            jT = run["jac_exact_max"][ni] * run.T[None, :, None, None]
            worst = float(np.nanmax(np.where(ctx.sets.mask[ctx.sets.index(set_name)].reshape(
                jT.shape), jT, np.nan))) if chk else float("nan")
            extra["max_jac_exact_times_T"] = _num(worst)
            reason += ("; the largest jac_exact x T is %.4g (the paper's bound 0.25; softmax's "
                       "exact maximum 0.5, two tied weights)" % worst)
        return judgement(verdict, reason, cnt / chk if chk else None, lo, hi,
                         "0 violations", ctx.grid_text(), ctx.rows(ctx.li),
                         int(ctx.sets.mask[ctx.sets.index(set_name)].any(axis=(0, 1)).sum()),
                         extra=extra)


def clopper_pearson(k, n, level=0.95):
    if not n:
        return None, None
    from scipy.stats import beta
    a = (1 - level) / 2
    lo = 0.0 if k == 0 else float(beta.ppf(a, k, n - k + 1))
    hi = 1.0 if k == n else float(beta.ppf(1 - a, k + 1, n - k))
    return lo, hi


class Interval(Claim):
    """A claim on one statistic at one cell: rule(lo, hi, threshold) with grid checks."""

    def verdict_of(self, lo, hi, variant):
        raise NotImplementedError


class Plateau(Interval):
    id = "fig2a_plateau"
    quote = ("With L=1024, increasing N beyond 20 yields diminishing returns: the distance "
             "plateaus")
    figure = "Fig. 2a"
    statistic = ("log-log slope of d between the grid's largest N <= 20 and its largest N > 20 "
                 "(below L), d = median over heads of each head's mean distance, at the largest L")
    rule = "equivalence: supported iff the interval lies inside [-m, m], m = 0.2"
    variants = (("m = 0.1", 0.1), ("m = 0.3", 0.3))

    def thresholds(self, variant=None):
        m = variant if variant is not None else PLATEAU_MARGIN
        return [-m, m]

    def judge(self, ctx, set_name="all", ti=None, variant=None):
        ti = ctx.ti if ti is None else ti
        li = ctx.li
        run = ctx.run
        from .stats import plateau_points
        ka, kb = plateau_points(run.N, run.L[li])
        m = variant if variant is not None else PLATEAU_MARGIN
        grid = ctx.grid_text(li, ti, N=[run.N[k] for k in (ka, kb) if k is not None])
        kw = dict(threshold="|slope| <= %g" % m, grid=grid, n_samples=ctx.rows(li),
                  n_heads=ctx.n_heads(set_name, li, ti))
        if ka is None or kb is None or run.N[kb] < 2 * run.N[ka]:
            return cannot_decide("it needs an N <= 20 and an N > 20 at least twice as large, "
                                 "below L = %d" % run.L[li], **kw)
        s = ctx.sets.index(set_name)
        e, lo, hi, m0, m1 = ctx.get("distance_N_plateau_slope", li, ti, s)
        v, r = rules.within(lo, hi, -m, m)
        return judgement(v, r, e, lo, hi, mc=(m0, m1), **kw)


class Tightens(Interval):
    id = "fig2a_tightens"
    quote = "while the bound tightens"
    figure = "Fig. 2a"
    statistic = ("change of log(d_bound / d) from the grid's largest N <= 20 to its largest "
                 "N > 20 (medians over heads of each head's mean), at the largest L")
    rule = "supported iff the interval lies below 0 (the ratio falls)"
    variants = (("falls by at least 10 %", math.log(0.9)),)

    def thresholds(self, variant=None):
        return [variant if variant is not None else 0.0]

    def judge(self, ctx, set_name="all", ti=None, variant=None):
        ti = ctx.ti if ti is None else ti
        li = ctx.li
        run = ctx.run
        from .stats import plateau_points
        ka, kb = plateau_points(run.N, run.L[li])
        th = variant if variant is not None else 0.0
        grid = ctx.grid_text(li, ti, N=[run.N[k] for k in (ka, kb) if k is not None])
        kw = dict(threshold="< %g" % th, grid=grid, n_samples=ctx.rows(li),
                  n_heads=ctx.n_heads(set_name, li, ti))
        if ka is None or kb is None:
            return cannot_decide("it needs an N <= 20 and an N > 20 below L = %d" % run.L[li],
                                 **kw)
        s = ctx.sets.index(set_name)
        e, lo, hi, m0, m1 = ctx.get("bound_ratio_N_change", li, ti, s)
        v, r = rules.below(lo, hi, th)
        return judgement(v, r, e, lo, hi, mc=(m0, m1), **kw)


class Linear(Interval):
    figure = "Fig. 2b"
    rule = "equivalence: supported iff the interval lies inside [0.8, 1.2]"
    variants = (("[0.9, 1.1]", (0.9, 1.1)), ("[0.7, 1.3]", (0.7, 1.3)))

    def __init__(self, stem, id, quote):
        self.stem, self.id, self.quote = stem, id, quote
        self.statistic = ("log-log slope against L of the median over heads of each head's mean "
                          "%s, at the grid's N nearest 5 (every L > N)" % stem)

    def thresholds(self, variant=None):
        return list(variant if variant is not None else LINEAR_BAND)

    def judge(self, ctx, set_name="all", ti=None, variant=None):
        ti = ctx.ti if ti is None else ti
        run = ctx.run
        ni5 = int(np.argmin(np.abs(run.N - 5)))
        a, b = variant if variant is not None else LINEAR_BAND
        Ls = [int(x) for x in run.L if x > run.N[ni5]]
        grid = ctx.grid_text(None, ti, N=int(run.N[ni5]), L=Ls)
        kw = dict(threshold="[%g, %g]" % (a, b), grid=grid, n_samples=ctx.rows(ctx.li),
                  n_heads=ctx.n_heads(set_name, ctx.li, ti))
        if not N_NEAR_5[0] <= run.N[ni5] <= N_NEAR_5[1]:
            return cannot_decide("no N of the grid near 5 (nearest: %d)" % run.N[ni5], **kw)
        if len(Ls) < 3 or max(Ls) < 4 * min(Ls):
            return cannot_decide("a slope against L needs at least 3 L spanning a factor 4", **kw)
        s = ctx.sets.index(set_name)
        e, lo, hi, m0, m1 = ctx.get(self.stem + "_L_slope", ti, ni5, s)
        v, r = rules.within(lo, hi, a, b)
        return judgement(v, r, e, lo, hi, mc=(m0, m1), **kw)


def ncrit_decidable(N, L, theta):
    """Why the grid cannot decide "n_crit < theta L" at L (None when it can): the claim needs
    theta L of at least NCRIT_MIN_TOKENS tokens, a grid N below theta L (to support it) and a
    largest N below L at or above theta L (to contradict it)."""
    below_L = [n for n in N if n < L]
    if theta * L < NCRIT_MIN_TOKENS:
        return ("%g %% of L = %d is %.2f tokens: one token is more than a quarter of the "
                "threshold" % (100 * theta, L, theta * L))
    if not any(n < theta * L for n in below_L):
        return "no N of the grid below %g %% of L = %d" % (100 * theta, L)
    if not below_L or max(below_L) < theta * L:
        return ("the largest N below L = %d is %s, below %g %% of L: a head where no N passes "
                "could still have n_crit < %g %%" % (L, max(below_L) if below_L else "none",
                                                     100 * theta, 100 * theta))
    return None


class Ncrit(Interval):
    id = "fig3_ncrit"
    quote = ("fewer than 6 % of the tokens need to be selected before the empirical and "
             "expected distances become statistically indistinguishable")
    figure = "Fig. 3"
    statistic = ("median over heads of n_crit / L (the paper's KS test, d vs d_expected, "
                 "alpha from the file), read on the grid as an interval (previous N, n_crit]; "
                 "at every L where the grid can decide")
    rule = ("supported iff the upper end of the median's interval lies below 6 %; contradicted "
            "iff its lower end lies at or above 6 %; every decidable L must agree")
    variants = (("4 %", 0.04), ("8 %", 0.08))

    def thresholds(self, variant=None):
        return [variant if variant is not None else NCRIT_FRAC]

    def judge_L(self, ctx, li, set_name, ti, theta):
        run = ctx.run
        L = int(run.L[li])
        s = ctx.sets.index(set_name)
        grid = ctx.grid_text(li, ti, N=[int(n) for n in run.N if n < L])
        n = ctx.rows(li)
        kw = dict(threshold="< %g %% of L (%.2f tokens)" % (100 * theta, theta * L), grid=grid,
                  n_samples=n, n_heads=ctx.n_heads(set_name, li, ti))
        why = ncrit_decidable(run.N, L, theta)
        if why:
            return cannot_decide(why, **kw)
        if ks.too_small(n, n, run.ks_alpha):
            return judgement(INCONCLUSIVE, "the sample is too small for its test: %d rows per "
                             "cell cannot reject a KS distance of 0.5 at alpha = %g"
                             % (n, run.ks_alpha), **kw)
        e, _, hi, _, mhi = ctx.get("n_crit_expected_frac_hmedian", li, ti, s)
        el, lo, _, mlo, _ = ctx.get("n_crit_expected_frac_lower_hmedian", li, ti, s)
        if math.isnan(lo) or math.isnan(hi):
            v, r = INCONCLUSIVE, rules.NO_INTERVAL
        elif hi < theta:
            v, r = SUPPORTED, "the median's interval lies below %g %%" % (100 * theta)
        elif lo >= theta:
            v, r = CONTRADICTED, "the median's interval lies at or above %g %%" % (100 * theta)
        else:
            v, r = INCONCLUSIVE, "the median's interval straddles %g %%" % (100 * theta)
        return judgement(v, r, e, lo, hi, mc=(mlo, mhi),
                         extra={"L": L, "estimate_lower": _num(el)}, **kw)

    def judge(self, ctx, set_name="all", ti=None, variant=None):
        ti = ctx.ti if ti is None else ti
        theta = variant if variant is not None else NCRIT_FRAC
        per = [dict(self.judge_L(ctx, li, set_name, ti, theta), L=int(ctx.run.L[li]))
               for li in range(len(ctx.run.L))]
        return over_L(ctx, per, ti, "n_crit / L < %g %%" % (100 * theta))


def over_L(ctx, per, ti, threshold):
    """One answer from per-L judgements: every L where the grid can decide must agree
    (rules.combine). The estimate shown is one that carries the answer: the largest L judged
    as the claim is (a contradicted claim shows an L that contradicts it, not a larger L whose
    interval straddles the threshold); when the answer is inconclusive, the largest decidable L."""
    dec = [j for j in per if not j["reason"].startswith("the grid cannot decide")]
    base = dict(threshold=threshold, n_samples=ctx.rows(ctx.li))
    if not dec:
        j = cannot_decide("at no L of the grid (%s)" % "; ".join(
            "L = %d: %s" % (p["L"], p["reason"][len("the grid cannot decide: "):])
            for p in per), grid=ctx.grid_text(None, ti), **base)
        j["per_L"] = per
        return j
    v = rules.combine(p["verdict"] for p in dec)
    last = next((p for p in reversed(dec) if p["verdict"] == v), dec[-1])
    if v == INCONCLUSIVE and any(p["verdict"] != INCONCLUSIVE for p in dec):
        reason = "depends on L: " + "; ".join("L = %d %s" % (p["L"], p["verdict"]) for p in dec)
    elif v == CONTRADICTED:
        reason = "contradicted at " + ", ".join("L = %d" % p["L"] for p in dec
                                                 if p["verdict"] == CONTRADICTED)
    else:
        reason = "at every decidable L (%s): %s" % (", ".join(str(p["L"]) for p in dec),
                                                   last["reason"])
    undec = [p["L"] for p in per if p not in dec]
    if undec:
        reason += "; the grid cannot decide at L = %s" % ", ".join(str(x) for x in undec)
    j = judgement(v, reason, last["estimate"], last["ci_low"], last["ci_high"],
                  threshold, "%s (estimate shown: L = %d)" % (
                      ctx.grid_text(None, ti, L=[p["L"] for p in dec]), last["L"]),
                  last["n_samples"], last["n_heads"], tuple(last["mc_error"]))
    j["per_L"] = per
    return j


class Equivalence(Interval):
    id = "fig3_equivalence"
    quote = "the empirical and expected distances become statistically indistinguishable"
    figure = "Fig. 3"
    statistic = ("median over heads of the KS distance D between d and d_expected at each N of "
                 "the grid below 6 % of L (an effect size; equivalence margin delta = 0.1)")
    rule = ("equivalence: supported iff at some N below 6 % of L the interval of D lies below "
            "delta; contradicted iff at every such N it lies at or above delta plus D's noise "
            "floor 0.87 sqrt(2/n) (D is biased upward by up to that much); every decidable L must "
            "agree")
    variants = (("delta = 0.05", 0.05), ("delta = 0.15", 0.15))

    def thresholds(self, variant=None):
        return [variant if variant is not None else EQUIV_D]

    def judge_L(self, ctx, li, set_name, ti, delta):
        run = ctx.run
        L = int(run.L[li])
        s = ctx.sets.index(set_name)
        Ns = [k for k, n in enumerate(run.N) if n < NCRIT_FRAC * L]
        n = ctx.rows(li)
        kw = dict(threshold="D < %g" % delta, n_samples=n, n_heads=ctx.n_heads(set_name, li, ti),
                  grid=ctx.grid_text(li, ti, N=[int(run.N[k]) for k in Ns]))
        if NCRIT_FRAC * L < NCRIT_MIN_TOKENS:
            return dict(cannot_decide("6 %% of L = %d is %.2f tokens: one token is more than a "
                                      "quarter of the threshold" % (L, NCRIT_FRAC * L), **kw), L=L)
        if not Ns:
            return dict(cannot_decide("no N of the grid below 6 %% of L = %d" % L, **kw), L=L)
        if run.N[Ns[-1]] < NCRIT_FRAC * L / 2:
            return dict(cannot_decide("the grid's largest N below 6 %% of L = %d is %d, less than "
                                      "half of it" % (L, run.N[Ns[-1]]), **kw), L=L)
        floor = ks.null_floor(n, n)
        vals = [ctx.get("ks_expected_statistic_hmedian", li, ti, k, s) for k in Ns]
        if any(math.isnan(x[1]) or math.isnan(x[2]) for x in vals):
            best = min(range(len(vals)), key=lambda i: np.nan_to_num(vals[i][0], nan=np.inf))
            e, lo, hi, m0, m1 = vals[best]
            return dict(judgement(INCONCLUSIVE, rules.NO_INTERVAL, e, **kw), L=L,
                        N=int(run.N[Ns[best]]), null_floor=floor)
        best = min(range(len(vals)), key=lambda i: vals[i][2])
        e, lo, hi, m0, m1 = vals[best]
        if hi < delta:
            v, r = SUPPORTED, "at N = %d the interval of D lies below %g" % (run.N[Ns[best]], delta)
        elif all(x[1] >= delta + floor for x in vals):
            v, r = CONTRADICTED, ("at every N below 6 %% of L the interval of D lies at or above "
                                  "%g + %.3f (the margin plus D's noise floor at %d rows)"
                                  % (delta, floor, n))
        else:
            v, r = INCONCLUSIVE, ("the interval of D is not below %g at any N below 6 %% of L, "
                                  "nor above %g + %.3f (the noise floor at %d rows) at every one"
                                  % (delta, delta, floor, n))
        j = judgement(v, r, e, lo, hi, mc=(m0, m1), **kw)
        j.update(L=L, N=int(run.N[Ns[best]]), null_floor=floor)
        return j

    def judge(self, ctx, set_name="all", ti=None, variant=None):
        ti = ctx.ti if ti is None else ti
        delta = variant if variant is not None else EQUIV_D
        per = [dict(self.judge_L(ctx, li, set_name, ti, delta), L=int(ctx.run.L[li]))
               for li in range(len(ctx.run.L))]
        return over_L(ctx, per, ti, "D < %g at some N < 6 %% of L" % delta)


class Saturation(Interval):
    id = "fig4_saturation"
    quote = "Geometric separability saturates at 70-85%"
    figure = "Fig. 4"
    statistic = ("median over heads of each head's mean N_s/N at the largest L and its largest "
                 "N below L")
    rule = "equivalence: supported iff the interval lies inside [0.70, 0.85]"
    variants = (("[0.65, 0.90]", (0.65, 0.90)), ("[0.75, 0.80]", (0.75, 0.80)))

    def thresholds(self, variant=None):
        return list(variant if variant is not None else SATURATION)

    def judge(self, ctx, set_name="all", ti=None, variant=None):
        ti = ctx.ti if ti is None else ti
        run, li = ctx.run, ctx.li
        a, b = variant if variant is not None else SATURATION
        ks_ = [k for k, n in enumerate(run.N) if 1 < n < run.L[li]]
        kw = dict(threshold="[%g, %g]" % (a, b), n_samples=ctx.rows(li),
                  n_heads=ctx.n_heads(set_name, li, ti),
                  grid=ctx.grid_text(li, ti, N=int(run.N[ks_[-1]]) if ks_ else None))
        if not ks_ or run.N[ks_[-1]] < 20:
            return cannot_decide("saturation needs an N >= 20 below L = %d" % run.L[li], **kw)
        s = ctx.sets.index(set_name)
        e, lo, hi, m0, m1 = ctx.get("ns_frac_mean_hmedian", li, ti, ks_[-1], s)
        v, r = rules.within(lo, hi, a, b)
        return judgement(v, r, e, lo, hi, mc=(m0, m1), **kw)


class Thm2Bound(Interval):
    figure = "Fig. 4"
    variants = ()

    def __init__(self, which):
        self.which = which
        up = which == "upper"
        self.id = "thm2_%s" % which
        self.quote = ("The red line shows the exponential upper bound from Theorem 2" if up else
                      "the blue line shows the conservative lower bound")
        self.statistic = ("median over heads of (mean N_s/N - mean %s bound) at the largest L, "
                          "each N of the grid with 1 < N < L (Theorem 2 bounds the expected "
                          "fraction)" % which)
        self.rule = ("supported iff at every N the interval lies %s 0; contradicted iff at some N "
                     "it lies %s 0" % (("at or below", "above") if up else ("at or above", "below")))

    def thresholds(self, variant=None):
        return [0.0]

    def judge(self, ctx, set_name="all", ti=None, variant=None):
        ti = ctx.ti if ti is None else ti
        run, li = ctx.run, ctx.li
        ks_ = [k for k, n in enumerate(run.N) if 1 < n < run.L[li]]
        kw = dict(threshold="<= 0" if self.which == "upper" else ">= 0", n_samples=ctx.rows(li),
                  n_heads=ctx.n_heads(set_name, li, ti),
                  grid=ctx.grid_text(li, ti, N=[int(run.N[k]) for k in ks_]))
        if not ks_:
            return cannot_decide("no N with 1 < N < L = %d" % run.L[li], **kw)
        s = ctx.sets.index(set_name)
        name = "ns_%s_gap_hmedian" % self.which
        vals = [ctx.get(name, li, ti, k, s) for k in ks_]
        rule = rules.at_most if self.which == "upper" else rules.at_least
        vs = [rule(x[1], x[2], 0.0) for x in vals]
        v = rules.combine(x[0] for x in vs)
        # show the N closest to violating the bound
        key = (lambda i: vals[i][0]) if self.which == "upper" else (lambda i: -vals[i][0])
        w = max(range(len(vals)), key=lambda i: (np.nan_to_num(key(i), nan=-np.inf)))
        e, lo, hi, m0, m1 = vals[w]
        reason = "%s (at every N: %s)" % (vs[w][1], ", ".join(
            "N=%d %s" % (run.N[k], x[0]) for k, x in zip(ks_, vs))) if v != SUPPORTED else \
            "at every N the interval lies %s 0" % ("at or below" if self.which == "upper" else
                                                   "at or above")
        return judgement(v, reason, e, lo, hi, mc=(m0, m1), extra={"N": int(run.N[ks_[w]])},
                         **kw)


class InvT(Interval):
    id = "fig5_inverse_T"
    quote = "Gradient sensitivity decays as 1/T"
    figure = "Fig. 5"
    statistic = ("log-log slope against T of the largest exact Jacobian norm (over rows and "
                 "heads), least squares over the grid's T <= the model's own T = 1, at the "
                 "largest L")
    rule = "equivalence: supported iff the interval lies inside [-1.2, -0.8]"
    variants = (("[-1.1, -0.9]", (-1.1, -0.9)), ("[-1.3, -0.7]", (-1.3, -0.7)))
    vary_T = False

    def thresholds(self, variant=None):
        return list(variant if variant is not None else INV_T_BAND)

    def judge(self, ctx, set_name="all", ti=None, variant=None):
        run, li = ctx.run, ctx.li
        a, b = variant if variant is not None else INV_T_BAND
        Ts = [t for t in run.T if t <= run.T[ctx.ti]]
        k = ctx.sets.index(set_name)
        heads = int(ctx.sets.mask[k, li][run.T <= run.T[ctx.ti]].any(axis=0).sum())
        kw = dict(threshold="[%g, %g]" % (a, b), n_samples=ctx.rows(li), n_heads=heads,
                  grid=ctx.grid_text(li, None, T=Ts))
        if len(Ts) < 3 or max(Ts) < 10 * min(Ts):
            return cannot_decide("a slope against T needs at least 3 T <= 1 spanning a factor "
                                 "10", **kw)
        s = ctx.sets.index(set_name)
        e, lo, hi, m0, m1 = ctx.get("jac_exact_T_slope", li, s)
        v, r = rules.within(lo, hi, a, b)
        return judgement(v, r, e, lo, hi, mc=(m0, m1), **kw)


def all_claims():
    return [
        Universal("thm1_bound", "the red upper bound is safe but conservative",
                  "Theorem 1 (Fig. 2a, 2b)", "rows with d > d_bound (every cell)",
                  "thm1_violations", "thm1_checked", False),
        Plateau(), Tightens(),
        Linear("distance", "fig2b_linear_distance",
               "With N=5, both the true distance ... grow roughly linearly in L"),
        Linear("distance_expected", "fig2b_linear_expected",
               "With N=5, ... its expectation ... grow roughly linearly in L"),
        Ncrit(), Equivalence(), Saturation(), Thm2Bound("upper"), Thm2Bound("lower"),
        Universal("lemma2_general", "Lemma 2 (Jacobian bound for general normalizers)",
                  "Lemma 2 (Fig. 5)", "rows x T with jac_exact above Lemma 2's general bound",
                  "lemma2_violations", "lemma2_checked", True),
        Universal("lemma2_corollary", "Corollary (softmax instability): ||grad alpha|| <= "
                  "min(1/(4T), sqrt 2)", "Fig. 5 (dashed curve)",
                  "rows x T with jac_exact above min(1/(4T), sqrt 2)",
                  "jac_exact_violations", "jac_exact_checked", True),
        InvT(),
    ]


# ---- a claim's full row: main verdict, sharp and flat heads, fragility -------------------------

def judge_set(claim, ctx, set_name, **kw):
    """claim.judge on a head set, or inconclusive when the set has no head at the claim's cell."""
    j = claim.judge(ctx, set_name=set_name, **kw)
    if j.get("n_heads") == 0:
        j = dict(j, verdict=INCONCLUSIVE, reason="no %s head at this L and T" % set_name)
    return j


def evaluate(claim, ctx):
    main = claim.judge(ctx)
    row = {"id": claim.id, "claim": claim.quote, "figure": claim.figure,
           "statistic": claim.statistic, "rule": claim.rule}
    row.update(main)
    row["by_heads"] = {}
    for name in ("sharp", "flat"):
        j = judge_set(claim, ctx, name)
        row["by_heads"][name] = {k: j[k] for k in ("verdict", "reason", "estimate", "ci_low",
                                                   "ci_high", "n_heads")}
    flips = []
    for label, var in claim.variants:
        j = claim.judge(ctx, variant=var)
        if j["verdict"] != main["verdict"]:
            flips.append("threshold %s: %s" % (label, j["verdict"]))
    if claim.vary_T:
        for t in ctx.adjacent_T:
            j = claim.judge(ctx, ti=t)
            if j["verdict"] != main["verdict"]:
                flips.append("T = %g: %s" % (ctx.run.T[t], j["verdict"]))
    if claim.vary_layers:
        for name in ctx.layers:
            j = judge_set(claim, ctx, name)
            if j["verdict"] != main["verdict"] and j["verdict"] != INCONCLUSIVE and \
                    main["verdict"] != INCONCLUSIVE:
                flips.append("%s alone: %s" % (name, j["verdict"]))
    if main["verdict"] != INCONCLUSIVE and mc_close(main, claim.thresholds()):
        flips.append("an interval endpoint lies within its Monte Carlo error of the threshold")
    row["fragile"] = bool(flips)
    row["fragile_because"] = flips
    row["fragility_checked"] = {
        "thresholds": [label for label, _ in claim.variants],
        "temperatures": ["%g" % ctx.run.T[t] for t in ctx.adjacent_T] if claim.vary_T else [],
        "layers": ctx.layers if claim.vary_layers else []}
    return row

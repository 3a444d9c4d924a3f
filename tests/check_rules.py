#!/usr/bin/python3
"""check_rules: the report's decision rules (docs/STATISTICS.md, "Three answers") on hand-made
cases -- an interval entirely on either side of a threshold, straddling it, touching it, a claim
exactly at its threshold, no interval -- first as bare rules, then through the claims on a
hand-made file whose statistics are set by hand; and "the grid cannot decide" on grids that
cannot decide (tests/report_fixture.py).

    check_rules.py POSTPROCESS_DIR WORK_DIR"""
import math
import os
import sys

import numpy as np

sys.path.insert(0, sys.argv[1])
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import report_fixture  # noqa: E402
from normsweep_report import claims, load, rules, stats  # noqa: E402

S, C, I = "supported", "contradicted", "inconclusive"
problems = []


def expect(what, got, want):
    if got != want:
        problems.append("%s: %r, expected %r" % (what, got, want))


# ---- the bare rules ----
th = 0.06
for lo, hi, want in ((0.01, 0.05, S), (0.01, th, I), (0.02, 0.08, I), (th, 0.08, C),
                     (th, th, C), (0.07, 0.09, C), (0.01, math.inf, I), (th, math.inf, C),
                     (math.nan, 0.05, I), (0.01, math.nan, I)):
    expect("below(%r, %r, 0.06)" % (lo, hi), rules.below(lo, hi, th)[0], want)
expect("below without interval says so", rules.below(math.nan, math.nan, th)[1], rules.NO_INTERVAL)
for lo, hi, want in ((-1, -0.5, S), (-1, 0, S), (-1, 0.1, I), (0.0, 0.1, I), (1e-12, 0.1, C)):
    expect("at_most(%r, %r, 0)" % (lo, hi), rules.at_most(lo, hi, 0.0)[0], want)
for lo, hi, want in ((0.5, 1, S), (0, 1, S), (-0.1, 1, I), (-1, -1e-12, C), (-1, 0, I)):
    expect("at_least(%r, %r, 0)" % (lo, hi), rules.at_least(lo, hi, 0.0)[0], want)
a, b = 0.70, 0.85
for lo, hi, want in ((0.72, 0.80, S), (a, b, S), (a, a, S), (0.69, 0.80, I), (0.80, 0.86, I),
                     (0.5, 0.6999, C), (0.8501, 0.9, C), (0.5, a, I), (b, 0.9, I), (0.6, 0.9, I),
                     (math.nan, math.nan, I)):
    expect("within(%r, %r, 0.70, 0.85)" % (lo, hi), rules.within(lo, hi, a, b)[0], want)
for cnt, chk, want in ((0, 10, S), (1, 10, C), (10, 10, C), (0, 0, I)):
    expect("universal(%d, %d)" % (cnt, chk), rules.universal(cnt, chk)[0], want)
for vs, want in (([S, S], S), ([S, C], C), ([S, I], I), ([I, C], C), ([], I)):
    expect("combine(%r)" % vs, rules.combine(vs), want)

# ---- whether a grid can decide "n_crit < 6 % of L" ----
quick_N = [1, 2, 4, 8, 16, 32, 62]
expect("quick grid at L = 1024", claims.ncrit_decidable(quick_N, 1024, 0.06), None)
expect("quick grid at L = 128", claims.ncrit_decidable(quick_N, 128, 0.06), None)
for N, L, why in ((quick_N, 64, "one token is more than a quarter"),
                  ([1, 2, 4, 8, 16, 32], 1024, "could still have n_crit"),
                  ([1, 2, 4, 8, 16, 32, 61], 1024, "could still have n_crit"),
                  ([100, 200], 1024, "no N of the grid below")):
    got = claims.ncrit_decidable(N, L, 0.06)
    if got is None or why not in got:
        problems.append("ncrit_decidable(%r, %d): %r, expected a reason with %r" % (N, L, got, why))

# ---- the claims on hand-made statistics ----
work = sys.argv[2]
path = report_fixture.write(os.path.join(work, "rules.nc"), L=(128, 256, 512, 1024),
                            N=(1, 2, 4, 8, 16, 32, 62), T=(0.01, 0.1, 1.0, 10.0), shards=30,
                            rows=1, seed=11)
run = load.Run(path)
comp = stats.Computed(run, 0, resamples=None)  # point estimates only: no interval
ctx = claims.Context(run, comp)
for c in claims.all_claims():
    j = c.judge(ctx)
    if isinstance(c, claims.Universal):
        expect("%s without intervals (a count decides)" % c.id, j["verdict"], S)
    elif not j["reason"].startswith("the grid cannot decide"):
        expect("%s without intervals" % c.id, (j["verdict"], j["reason"].endswith(
            rules.NO_INTERVAL) or "no interval" in j["reason"]), (I, True))


def set_stat(name, idx, est, lo, hi):
    st = comp.stats[name]
    st.est[idx], st.lo[idx], st.hi[idx] = est, lo, hi
    st.mc = (np.zeros_like(st.est), np.zeros_like(st.est))


li, ti = len(run.L) - 1, ctx.ti
kmax = len(run.N) - 1  # N = 62 < 1024
sat = claims.Saturation()
for lo, hi, want in ((0.72, 0.80, S), (0.70, 0.85, S), (0.69, 0.80, I), (0.4, 0.6, C),
                     (0.86, 0.9, C)):
    set_stat("ns_frac_mean_hmedian", (li, ti, kmax, 0), (lo + hi) / 2, lo, hi)
    expect("saturation [%g, %g]" % (lo, hi), sat.judge(ctx)["verdict"], want)
# n_crit: the interval of the median (lower end from the grid's previous N) against 6 % at every L
nc = claims.Ncrit()
for lo, hi, want in ((0.001, 0.03, S), (0.001, 0.06, I), (0.03, 0.2, I), (0.06, 0.2, C),
                     (0.06, 0.06, C), (0.07, math.inf, C), (0.01, math.inf, I)):
    for k in range(len(run.L)):
        set_stat("n_crit_expected_frac_hmedian", (k, ti, 0), hi, hi, hi)
        set_stat("n_crit_expected_frac_lower_hmedian", (k, ti, 0), lo, lo, lo)
    j = nc.judge(ctx)
    expect("n_crit in (%g, %g]" % (lo, hi), j["verdict"], want)
    expect("n_crit per L", [p["verdict"] for p in j["per_L"]], [want] * len(run.L))
# one L contradicting decides the claim; one L inconclusive keeps it inconclusive
for k in range(len(run.L)):
    set_stat("n_crit_expected_frac_hmedian", (k, ti, 0), 0.2, 0.2, 0.2)
    set_stat("n_crit_expected_frac_lower_hmedian", (k, ti, 0), 0.07, 0.07, 0.07)
set_stat("n_crit_expected_frac_hmedian", (0, ti, 0), 0.03, 0.03, 0.03)
set_stat("n_crit_expected_frac_lower_hmedian", (0, ti, 0), 0.01, 0.01, 0.01)
expect("n_crit supported at one L, contradicted at the others", nc.judge(ctx)["verdict"], C)
# contradicted at the smallest L only, inconclusive at the larger ones: the claim is contradicted,
# and the estimate shown is that L's (the interval that contradicts it), not the largest L's
set_stat("n_crit_expected_frac_hmedian", (0, ti, 0), 0.2, 0.2, 0.2)
set_stat("n_crit_expected_frac_lower_hmedian", (0, ti, 0), 0.07, 0.07, 0.07)
for k in range(1, len(run.L)):
    set_stat("n_crit_expected_frac_hmedian", (k, ti, 0), 0.2, 0.2, 0.2)
    set_stat("n_crit_expected_frac_lower_hmedian", (k, ti, 0), 0.01, 0.01, 0.01)
j = nc.judge(ctx)
expect("n_crit contradicted at L = 128 only, inconclusive above", (j["verdict"], j["ci_low"],
       j["ci_high"]), (C, 0.07, 0.2))
expect("n_crit contradicted at L = 128 only: the L shown", j["grid"].endswith(
       "(estimate shown: L = 128)"), True)
set_stat("n_crit_expected_frac_hmedian", (0, ti, 0), 0.03, 0.03, 0.03)  # L = 128 supported again
set_stat("n_crit_expected_frac_lower_hmedian", (0, ti, 0), 0.01, 0.01, 0.01)
set_stat("n_crit_expected_frac_hmedian", (1, ti, 0), 0.2, 0.2, 0.2)
set_stat("n_crit_expected_frac_lower_hmedian", (1, ti, 0), 0.03, 0.03, 0.03)
for k in range(2, len(run.L)):
    set_stat("n_crit_expected_frac_hmedian", (k, ti, 0), 0.03, 0.03, 0.03)
    set_stat("n_crit_expected_frac_lower_hmedian", (k, ti, 0), 0.01, 0.01, 0.01)
expect("n_crit supported at three L, inconclusive at one", nc.judge(ctx)["verdict"], I)
# the slope against T: equivalence band around -1
inv = claims.InvT()
for lo, hi, want in ((-1.1, -0.9, S), (-1.2, -0.8, S), (-1.25, -0.9, I), (-2, -1.3, C)):
    set_stat("jac_exact_T_slope", (li, 0), (lo + hi) / 2, lo, hi)
    expect("1/T slope [%g, %g]" % (lo, hi), inv.judge(ctx)["verdict"], want)

# ---- grids that cannot decide ----
small = report_fixture.write(os.path.join(work, "small_grid.nc"), L=(32, 64), N=(1, 2, 4),
                             T=(1.0,), shards=4, rows=1, seed=5)
run2 = load.Run(small)
ctx2 = claims.Context(run2, stats.Computed(run2, 0, resamples=None))
for c, why in ((claims.Ncrit(), "at no L of the grid"),
               (claims.Equivalence(), "one token is more than a quarter"),
               (claims.Saturation(), "saturation needs an N >= 20"),
               (claims.Linear("distance", "x", "x"), "at least 3 L"),
               (claims.Plateau(), "an N > 20"), (claims.InvT(), "at least 3 T")):
    j = c.judge(ctx2)
    if j["verdict"] != I or not j["reason"].startswith("the grid cannot decide") or \
            (why and why not in j["reason"]):
        problems.append("%s on a grid that cannot decide it: %s (%s)" % (c.id, j["verdict"],
                                                                        j["reason"]))
    if not j["grid"]:
        problems.append("%s: no grid named" % c.id)

for p in problems:
    print("check_rules:", p)
print("check_rules: %d problem(s)" % len(problems))
sys.exit(1 if problems else 0)

#!/usr/bin/python3
"""check_file_intervals: the report reads the intervals a sweep file carries (the layout of
docs/STATISTICS.md, "The intervals in the NetCDF file", written here by the reference writer
normsweep_report.intervals_nc) and judges every claim exactly as it does from the same file's
per-row samples; a file with neither samples nor intervals gets no interval and no decided
verdict except the bound counts.

    check_file_intervals.py POSTPROCESS_DIR WORK_DIR"""
import os
import sys

import numpy as np
import netCDF4

sys.path.insert(0, sys.argv[1])
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import report_fixture  # noqa: E402
from normsweep_report import claims, intervals_nc, load, rules, stats  # noqa: E402

work = sys.argv[2]
grid = dict(L=(128, 256, 512, 1024), N=(1, 2, 4, 8, 16, 32, 62), T=(0.01, 0.1, 1.0, 10.0),
            shards=30, rows=1, seed=21)
with_s = report_fixture.write(os.path.join(work, "with_samples.nc"), **grid)
with_i = report_fixture.write(os.path.join(work, "with_intervals.nc"), with_samples=False, **grid)
bare = report_fixture.write(os.path.join(work, "bare.nc"), with_samples=False, **grid)
problems = []

run_s = load.Run(with_s)
comp_s = stats.Computed(run_s, 0, resamples=1000, t_ks=[1, 2, 3])
with netCDF4.Dataset(with_i, "a") as ds:
    intervals_nc.write(ds, comp_s)
run_i, run_b = load.Run(with_i), load.Run(bare)
if run_i.has_samples() or run_b.has_samples():
    problems.append("the copies without samples claim samples")
comp_i = stats.Computed(run_i, 0, resamples=1000)
comp_b = stats.Computed(run_b, 0, resamples=1000)
for nm, st in comp_s.stats.items():
    fi = comp_i.stats[nm]
    if fi.source != "file":
        problems.append("%s: not read from the file (%s)" % (nm, fi.source))
        continue
    for what in ("est", "lo", "hi"):
        a, b = getattr(st, what), getattr(fi, what)
        if not np.array_equal(a, b, equal_nan=True):
            problems.append("%s.%s: the file's differs from the samples'" % (nm, what))
    if comp_b.stats[nm].source != "none" or np.isfinite(comp_b.stats[nm].lo).any():
        problems.append("%s: an interval without samples or intervals" % nm)
ctxs = [claims.Context(r, c) for r, c in ((run_s, comp_s), (run_i, comp_i), (run_b, comp_b))]
decided = 0
for cl in claims.all_claims():
    rs = [claims.evaluate(cl, ctx) for ctx in ctxs]
    keys = ("verdict", "estimate", "ci_low", "ci_high", "by_heads")
    if [rs[0][k] for k in keys] != [rs[1][k] for k in keys]:
        problems.append("%s: from samples %s, from the file's intervals %s"
                        % (cl.id, [rs[0][k] for k in keys[:4]], [rs[1][k] for k in keys[:4]]))
    decided += rs[0]["verdict"] != rules.INCONCLUSIVE
    if not isinstance(cl, claims.Universal) and rs[2]["verdict"] != rules.INCONCLUSIVE:
        problems.append("%s: %s without any interval" % (cl.id, rs[2]["verdict"]))
if decided < 3:
    problems.append("only %d claims decided on the fixture: the comparison is weak" % decided)
for p in problems[:30]:
    print("check_file_intervals:", p)
print("check_file_intervals: %d statistics, %d claims (%d decided), %d problem(s)"
      % (len(comp_s.stats), len(claims.all_claims()), decided, len(problems)))
sys.exit(1 if problems else 0)

#!/bin/sh
# report_stats: the report's statistics, each against an independent evaluation
# (docs/STATISTICS.md):
#  (1) its SplitMix64 generator gives the C generator's bits (tests/rng_vectors, check_rng.py):
#      mix, keys, streams, rejection sampling, the bootstrap's shard draws;
#  (2) the shard bootstrap equals a plain reimplementation from the written specification, interval
#      for interval and bit for bit, on a hand-made file (check_bootstrap.py);
#  (3) each decision rule on hand-made cases (intervals on either side of a threshold, straddling
#      it, touching it, a claim exactly at it, no interval) and "the grid cannot decide" on grids
#      that cannot (check_rules.py);
#  (4) intervals read from the file give the same verdicts as intervals from its samples; without
#      either no interval claim is decided (check_file_intervals.py);
#  (5) the training page's claim with several seeds per cell: each answer on a hand-made grid,
#      every number recomputed by check_training_report.py (check_training_seeds.py).
#  (6) the training page's sink mass and selectivity table on a hand-made grid whose sweep.nc
#      files hold values chosen here: the model's own entry, largest L, T nearest 1, largest N with
#      values, the means over heads and the seeds' means and t-intervals, known exactly
#      (check_training_sinks.py --hand-made).
set -eu
: "${top_srcdir:?}" "${top_builddir:?}" "${PYTHON_DEBIAN:?}"
work=$(mktemp -d "$top_builddir/report-stats.XXXXXX")
trap 'rm -rf "$work"' EXIT
fail() { echo "FAIL: $*"; exit 1; }
pp="$top_srcdir/postprocess"
"$top_builddir/tests/rng_vectors" > "$work/vectors.txt" || fail "rng_vectors"
"$PYTHON_DEBIAN" "$top_srcdir/tests/check_rng.py" "$pp" < "$work/vectors.txt" || fail "generator"
echo "ok 1 - the report's generator gives the C generator's bits"
"$PYTHON_DEBIAN" "$top_srcdir/tests/check_bootstrap.py" "$pp" "$work" || fail "bootstrap"
echo "ok 2 - the bootstrap equals a plain reimplementation, bit for bit"
"$PYTHON_DEBIAN" "$top_srcdir/tests/check_rules.py" "$pp" "$work" || fail "decision rules"
echo "ok 3 - the decision rules and the grid-cannot-decide rule on hand-made cases"
"$PYTHON_DEBIAN" "$top_srcdir/tests/check_file_intervals.py" "$pp" "$work" || fail "file intervals"
echo "ok 4 - intervals from the file judge as intervals from the samples"
"$PYTHON_DEBIAN" "$top_srcdir/tests/check_training_seeds.py" "$pp" "$work" || fail "training seeds"
echo "ok 5 - the training claim across seeds: each of the three answers"
"$PYTHON_DEBIAN" "$top_srcdir/tests/check_training_sinks.py" --hand-made "$pp" "$work" ||
  fail "training sinks"
echo "ok 6 - the training page's sink mass and selectivity: known values, seeds pooled"

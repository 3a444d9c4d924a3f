#!/bin/sh
# bench/bootstrap.sh: what the end-of-run shard bootstrap (docs/STATISTICS.md, "Uncertainty: the
# shard bootstrap": 2000 resamples, every interval of the catalogue the reduction writes) costs
# against the run it belongs to, at -np 2, from the run's own lines:
#   bootstrap_seconds_NAME_np2   the intervals' computation (bootstrap_seconds: the entropies'
#                                broadcast, every rank's units of work, gather; the per-shard
#                                blocks' exchange is in reduce_seconds)
#   NAME_run_seconds_np2         the whole command (start-up, sweep, reduction, bootstrap, write)
#   bootstrap_vs_run_NAME_np2    their ratio
# for three runs:
#   quick            the default sweep (sweeps/quick.yaml, 48 shards; the stand-in model where
#                    GPT-2 cannot be had, as `normsweep` does): checked <= 0.15
#   full_grid_gpt2   THE ISSUE'S MEASURE (issue 33: "keep the cost under 10 % of a full-grid
#                    run"): the full grid (sweeps/full_grid.yaml: 6 L x 39 N x 9 T, every head)
#                    with GPT-2's shape -- a random 124M model from `normsweep mkmodel --preset
#                    gpt2 --seed 1`, 12 layers x 12 heads, 768 wide, as bench/grid.sh uses; GPT-2
#                    is the model the project studies -- on NS_BENCH_BOOT_GPT2_SHARDS (default
#                    224) of its 768 shards, about 7 minutes on 2 cores (info), and on
#                    NS_BENCH_BOOT_GPT2_SHARDS_SMALL (default 112; full_grid_gpt2_small, info).
#                    The whole grid does not fit this machine (its per-shard values alone need
#                    about 30 GiB over all ranks at any rank count, docs/STATISTICS.md), so the
#                    two runs give each time as fixed + per shard (a line through both), and
#                    the bootstrap's share of the whole grid's run, (fixed + 768 x per shard)
#                    for both, is checked <= 0.10 (bootstrap_vs_run_full_grid_gpt2_768_fit_np2).
#                    Both counts are well into the regime of the whole grid: a line through 40
#                    and 112 shards under-predicted a measured 336-shard run (docs/STATISTICS.md,
#                    "Cost, 2026-12-05 (2)"), where the bootstrap's per-shard work had grown.
#                    The per-rank limit of the per-shard values is raised for it
#                    (NORMSWEEP_BOOTSTRAP_MAX_BYTES, NS_BENCH_BOOT_GPT2_MAX_BYTES, default 6 GiB:
#                    at -np 2 a rank holds at most 5 of the 9 groups' worth, 23 MB per shard)
#   full_grid        the same grid with the stand-in model (4 layers x 4 heads, 128 wide: its
#                    forward pass and analysis are about 100 times cheaper than GPT-2's, while
#                    the bootstrap's cost grows with heads, shards and cells, not the model's
#                    width, so its ratio is the worst case) on NS_BENCH_BOOT_SHARDS (default 96)
#                    shards: reported (info), not checked -- even with the work balanced over the
#                    2 ranks its bootstrap is about a fifth of its run (bench/README.md says why)
# Fewer shards than the grid make the full-grid ratios larger, not smaller: the sweep and the
# bootstrap's weighted sums grow with the shards, its medians and intervals do not, so the whole
# grid's ratio is at most the measured one (the fit above measures how much smaller).
# Part of `make bench`; run once, never looped.
set -u
: "${top_srcdir:?}" "${top_builddir:?}"
NORMSWEEP=${NORMSWEEP:-$top_builddir/normsweep}
MPIEXEC=${MPIEXEC:-mpiexec}
. "$top_srcdir/tests/test_env.sh"
. "$top_srcdir/bench/verdict.sh"
work=$(mktemp -d "${TMPDIR:-/tmp}/ns_bench_boot.XXXXXX")
trap 'rm -rf "$work"' EXIT
now() { date +%s.%N; }
# measure NAME SWEEP_FILE TARGET [NOTE]: SWEEP_FILE at -np 2 (output and journal in $work/NAME*);
# prints bootstrap_seconds_NAME_np2, NAME_run_seconds_np2, and checks bootstrap_vs_run_NAME_np2
# against TARGET (<=), or prints it as a figure without a target when TARGET is "info"
measure() {
  boot= wall=
  t0=$(now)
  "$MPIEXEC" --oversubscribe -np 2 "$NORMSWEEP" "$2" --output "$work/$1.nc" \
    --checkpoint-dir "$work/ck.$1" 2> "$work/log.$1" ||
    { tail -n 5 "$work/log.$1"; echo "bootstrap: FAIL: the $1 sweep"; exit 1; }
  t1=$(now)
  boot=$(sed -n 's/^bootstrap_seconds: \([0-9.]*\).*/\1/p' "$work/log.$1")
  wall=$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.3f", b - a }')
  grep -e "^bootstrap_seconds: " -e "^sweep_wall_seconds: " -e "^reduce_seconds: " \
    "$work/log.$1" > "$work/lines"
  ns_indent "$work/lines"
  ns_info "bootstrap_seconds_$1_np2" "${boot:-not measured (no bootstrap_seconds line)}${4:-}"
  ns_info "$1_run_seconds_np2" "$wall"
  ratio=$(awk -v a="${boot:-}" -v b="$wall" 'BEGIN { if (a != "" && b > 0) printf "%.3f", a / b; else print "not measured" }')
  if [ "$3" = info ]; then ns_info "bootstrap_vs_run_$1_np2" "$ratio"
  else ns_check "bootstrap_vs_run_$1_np2" "$ratio" "<=" "$3"; fi
}
measure quick "$top_srcdir/sweeps/quick.yaml" 0.15
# the full grid with the stand-in: the worst case
FG_SHARDS=${NS_BENCH_BOOT_SHARDS:-96}
sed -e "s|^  count: .*|  count: $FG_SHARDS|" -e '/^output:/d' -e '/^checkpoint_dir:/d' \
  "$top_srcdir/sweeps/full_grid.yaml" > "$work/full_grid.yaml"
measure full_grid "$work/full_grid.yaml" info " ($FG_SHARDS of 768 shards, the stand-in)"
rm -rf "$work/ck.full_grid"
# the issue's measure: the full grid at GPT-2's shape, under a raised limit per rank
GPT2_SHARDS=${NS_BENCH_BOOT_GPT2_SHARDS:-224}
GPT2_SMALL=${NS_BENCH_BOOT_GPT2_SHARDS_SMALL:-112}
"$NORMSWEEP" mkmodel --preset gpt2 --seed 1 --out "$work/gpt2" > "$work/mk.log" 2>&1 ||
  { cat "$work/mk.log"; echo "bootstrap: FAIL: mkmodel --preset gpt2"; exit 1; }
NORMSWEEP_BOOTSTRAP_MAX_BYTES=${NS_BENCH_BOOT_GPT2_MAX_BYTES:-6442450944}
export NORMSWEEP_BOOTSTRAP_MAX_BYTES
# gpt2_run NAME SHARDS: the full grid at GPT-2's shape on SHARDS shards (info); its journal goes
gpt2_run() {
  sed -e "s|^model: .*|model: $work/gpt2|" -e "s|^  count: .*|  count: $2|" \
    -e '/^output:/d' -e '/^checkpoint_dir:/d' "$top_srcdir/sweeps/full_grid.yaml" > "$work/$1.yaml"
  measure "$1" "$work/$1.yaml" info " ($2 of 768 shards, GPT-2's shape)"
  rm -rf "$work/ck.$1"
}
gpt2_run full_grid_gpt2_small "$GPT2_SMALL"
boot1=$boot wall1=$wall
gpt2_run full_grid_gpt2 "$GPT2_SHARDS"
# each time as fixed + per shard through both runs, at the whole grid's 768 shards
fit=$(awk -v s1="$GPT2_SMALL" -v s2="$GPT2_SHARDS" -v b1="${boot1:-}" -v b2="${boot:-}" \
  -v w1="$wall1" -v w2="$wall" 'BEGIN {
    if (b1 == "" || b2 == "" || s2 == s1) { print "not measured"; exit }
    pb = (b2 - b1) / (s2 - s1); pw = (w2 - w1) / (s2 - s1)
    fb = b1 - pb * s1; fw = w1 - pw * s1
    printf "%.3f %.4f %.3f %.4f %.3f\n", fb, pb, fw, pw, (fb + 768 * pb) / (fw + 768 * pw) }')
set -- $fit
if [ $# -eq 5 ]; then
  ns_info bootstrap_fixed_seconds_full_grid_gpt2_np2 "$1"
  ns_info bootstrap_seconds_per_shard_full_grid_gpt2_np2 "$2"
  ns_info run_fixed_seconds_full_grid_gpt2_np2 "$3"
  ns_info run_seconds_per_shard_full_grid_gpt2_np2 "$4"
  ns_check bootstrap_vs_run_full_grid_gpt2_768_fit_np2 "$5" "<=" 0.10
else
  ns_check bootstrap_vs_run_full_grid_gpt2_768_fit_np2 "not measured" "<=" 0.10
fi
exit 0

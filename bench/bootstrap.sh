#!/bin/sh
# bench/bootstrap.sh: what the end-of-run shard bootstrap (docs/STATISTICS.md, "Uncertainty: the
# shard bootstrap": 2000 resamples, every interval of the catalogue the reduction writes) costs
# against the run it belongs to. The default sweep (sweeps/quick.yaml, 48 shards; the stand-in
# model where GPT-2 cannot be had, as `normsweep` does) at -np 2, from the run's own lines:
#   bootstrap_seconds_quick_np2   the intervals' computation (bootstrap_seconds: the entropies'
#                                 broadcast, every rank's share of the groups, gather; the
#                                 per-shard blocks' exchange is in reduce_seconds)
#   quick_run_seconds_np2         the whole command (start-up, sweep, reduction, bootstrap, write)
#   bootstrap_vs_run_quick_np2    their ratio (checked; see bench/README.md for the target)
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
t0=$(now)
"$MPIEXEC" --oversubscribe -np 2 "$NORMSWEEP" "$top_srcdir/sweeps/quick.yaml" \
  --output "$work/quick.nc" --checkpoint-dir "$work/ck" 2> "$work/log" ||
  { tail -n 5 "$work/log"; echo "bootstrap: FAIL: the quick sweep"; exit 1; }
t1=$(now)
boot=$(sed -n 's/^bootstrap_seconds: \([0-9.]*\).*/\1/p' "$work/log")
wall=$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.3f", b - a }')
grep -e "^bootstrap_seconds: " -e "^sweep_wall_seconds: " -e "^reduce_seconds: " "$work/log" > "$work/lines"
ns_indent "$work/lines"
ns_info bootstrap_seconds_quick_np2 "${boot:-not measured (no bootstrap_seconds line)}"
ns_info quick_run_seconds_np2 "$wall"
ns_check bootstrap_vs_run_quick_np2 \
  "$(awk -v a="${boot:-}" -v b="$wall" 'BEGIN { if (a != "" && b > 0) printf "%.3f", a / b; else print "not measured" }')" \
  "<=" 0.15
exit 0

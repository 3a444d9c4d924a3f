#!/bin/sh
# bench/sweep.sh: the same small sweep (tests/data/run/slow.yaml.in: 120 shards of the stand-in
# model) at -np 1 and -np 2; prints the parallel efficiency t1 / (2 t2) of the sweep phase (the
# master's wall time from the first task to the last result), the same for the whole command
# (including the serial start-up: reading, tokenizing, loading), and the master's own compute
# time per task. Part of `make bench`; run once, never looped.
set -u
: "${top_srcdir:?}" "${top_builddir:?}"
NORMSWEEP=${NORMSWEEP:-$top_builddir/normsweep}
MPIEXEC=${MPIEXEC:-mpiexec}
. "$top_srcdir/tests/test_env.sh"
. "$top_srcdir/bench/verdict.sh"
work=$(mktemp -d "${TMPDIR:-/tmp}/ns_bench_sweep.XXXXXX")
trap 'rm -rf "$work"' EXIT
sed -e "s|@MODEL@|$NS_TEST_MODEL_DIR|" -e "s|@TOKENIZER@|$NS_TEST_TOKENIZER_DIR|" \
    -e "s|@CORPUS@|$NS_TEST_CORPUS|" "$top_srcdir/tests/data/run/slow.yaml.in" > "$work/bench.yaml"
now() { date +%s.%N; }
run() { # NP -> prints "<sweep wall> <command wall> <master s/task>"
  t0=$(now)
  "$MPIEXEC" --oversubscribe -np "$1" "$NORMSWEEP" "$work/bench.yaml" --output "$work/np$1.nc" \
    --checkpoint-dir "$work/ck$1" 2> "$work/log$1" || { cat "$work/log$1" >&2; echo "0 0 0"; return; }
  t1=$(now)
  sw=$(sed -n 's/^sweep_wall_seconds: //p' "$work/log$1")
  mt=$(sed -n 's/^master_seconds_per_task: //p' "$work/log$1")
  echo "$sw $(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.3f", b - a }') $mt"
}
set -- $(run 1); s1=$1 c1=$2 m1=$3
set -- $(run 2); s2=$1 c2=$2 m2=$3
grep "master computed" "$work/log2"
ns_info sweep_seconds_np1 "$s1"
ns_info sweep_seconds_np2 "$s2"
ns_info master_seconds_per_task_np1 "$m1"
ns_info master_seconds_per_task_np2 "$m2"
ns_info sweep_command_efficiency_np2 "$(awk -v a="$c1" -v b="$c2" 'BEGIN { if (b > 0) printf "%.3f", a / (2 * b) }')"
# the sweep phase at -np 2 against -np 1 on 2 cores (the master computes too): 0.8 leaves room
# for the start-up and the journal traffic the master services
ns_check sweep_efficiency_np2 "$(awk -v a="$s1" -v b="$s2" 'BEGIN { if (b > 0) printf "%.3f", a / (2 * b) }')" ">=" 0.8

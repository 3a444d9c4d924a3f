#!/bin/sh
# bench_run: bench/run's summary counts and re-judges every target line a part prints, whatever
# the case of its name (forward_vs_sgemm_smollm2_L2048 was dropped from the summary, and its part
# reported 0 checks, because the pattern allowed only lower case), and a FAIL fails the bench.
set -u
: "${top_srcdir:?run through make check}"
work=$(mktemp -d "${TMPDIR:-/tmp}/ns_bench_run.XXXXXX")
trap 'rm -rf "$work"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }
cp "$top_srcdir/bench/run" "$top_srcdir/bench/verdict.sh" "$work/"
cat > "$work/fake.sh" <<'PART'
. "$top_srcdir/bench/verdict.sh"
ns_check lower_case_ratio 0.8 ">=" 0.75
ns_check mixed_Case_L2048 0.847 ">=" 0.75
ns_check peak_rss_mb_L8192 242.9 "<=" 1024
ns_info seconds_L8192 286.6
PART
BENCH_PARTS=fake top_builddir=$work sh "$work/run" > "$work/out" 2>&1; rc=$?
[ $rc -eq 0 ] || { cat "$work/out" >&2; fail "bench/run exited $rc on passing checks"; }
grep -qx "part_fake_checks: 3 (target >= 1) PASS" "$work/out" || { cat "$work/out" >&2; fail "the part's checks were not all counted"; }
grep -qx "bench: 5 checks, 0 failed" "$work/out" || { cat "$work/out" >&2; fail "the summary did not count every check"; }
sed -n '/^== bench summary/,$p' "$work/out" | grep -qx "seconds_L8192: 286.6 (info)" || fail "an info line with a capital left the summary"
echo 'ns_check worse_L2048 0.5 ">=" 0.75' >> "$work/fake.sh"
BENCH_PARTS=fake top_builddir=$work sh "$work/run" > "$work/out" 2>&1 && fail "bench/run passed a FAIL"
grep -qx "bench: 6 checks, 1 failed" "$work/out" || { cat "$work/out" >&2; fail "the failed check was not counted"; }
echo "bench_run: ok"

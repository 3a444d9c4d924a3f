#!/bin/sh
# postprocess_report.sh: the quick sweep's NetCDF -> postprocess/report: every figure (PNG and PDF),
# report.md, report.html and report.json exist, and the report's numbers equal the NetCDF's
# (checked by tests/check_report.py, which reads the NetCDF itself). Also: a missing file and a
# NetCDF that is not a sweep give a one-line message and exit 2, not a traceback.
set -eu
: "${top_srcdir:?}" "${top_builddir:?}" "${NORMSWEEP:?}" "${PYTHON_DEBIAN:?}"
work=$(mktemp -d "$top_builddir/postprocess-test.XXXXXX")
trap 'rm -rf "$work"' EXIT
fail() { echo "FAIL: $*"; exit 1; }

run="$work/quick.nc"
$MPIEXEC --oversubscribe -np 2 "$NORMSWEEP" --output "$run" --checkpoint-dir "$work/ckpt" \
  "$top_srcdir/sweeps/quick.yaml" 2> "$work/sweep.log" || { cat "$work/sweep.log"; fail "quick sweep"; }

"$PYTHON_DEBIAN" "$top_srcdir/postprocess/report" "$run" --out "$work/report" > "$work/report.log" 2>&1 ||
  { cat "$work/report.log"; fail "report on the quick sweep"; }
for f in fig2a_distance_vs_N fig2b_distance_vs_L fig3_critical_N_vs_L fig4_separability_vs_N \
         fig5_sensitivity_vs_T fig6_heads_saturation_violations; do
  for ext in png pdf; do
    [ -s "$work/report/$f.$ext" ] || fail "missing figure $f.$ext"
  done
done
for f in report.md report.html report.json; do [ -s "$work/report/$f" ] || fail "missing $f"; done
grep -q 'data:image/png;base64,' "$work/report/report.html" || fail "report.html embeds no figure"
"$PYTHON_DEBIAN" "$top_srcdir/tests/check_report.py" "$run" "$work/report" || fail "report numbers"

# Bad inputs: one line on stderr, exit 2, no traceback.
set +e
"$PYTHON_DEBIAN" "$top_srcdir/postprocess/report" "$work/none.nc" --out "$work/r2" 2> "$work/err1"
rc1=$?
"$PYTHON_DEBIAN" "$top_srcdir/postprocess/report" "$NS_TEST_GOLDEN_DIR/standin_o5000_L64.nc" --out "$work/r3" 2> "$work/err2"
rc2=$?
set -e
[ $rc1 -eq 2 ] || fail "missing file: exit $rc1"
[ $rc2 -eq 2 ] || fail "not a sweep file: exit $rc2"
grep -q 'no such file' "$work/err1" || fail "missing file message: $(cat "$work/err1")"
grep -q 'missing variable' "$work/err2" || fail "not-a-sweep message: $(cat "$work/err2")"
if grep -q Traceback "$work/err1" "$work/err2"; then fail "traceback printed"; fi
echo "ok - report figures and numbers from the quick sweep"

#!/bin/sh
# summary_report: the end-of-run summary (printed by normsweep) and the report
# (postprocess/report) compute each number they share by the same rule, on the same file:
# per L, the heads where an N of the paper's KS test passes and the median over heads of
# n_crit / L (a head where none passes counted above every N); and both warn when a cell's
# sample is too small for its KS test (tests/check_summary_report.py compares them).
#  (1) a small sweep of the stand-in (12 shards x 2 rows: 24 rows per cell, no warning);
#  (2) a sweep with 4 rows per cell, where every head passes at the first N: both warn.
set -eu
: "${top_srcdir:?}" "${top_builddir:?}" "${NORMSWEEP:?}" "${PYTHON_DEBIAN:?}" "${MPIEXEC:?}"
: "${NS_TEST_MODEL_DIR:?}" "${NS_TEST_TOKENIZER_DIR:?}" "${NS_TEST_CORPUS:?}"
work=$(mktemp -d "$top_builddir/summary-report.XXXXXX")
trap 'rm -rf "$work"' EXIT
fail() { echo "FAIL: $*"; exit 1; }
sweep() { # NAME SHARDS ROWS
  cat > "$work/$1.yaml" <<YAML
model: $NS_TEST_MODEL_DIR
tokenizer: $NS_TEST_TOKENIZER_DIR
corpus: $NS_TEST_CORPUS
strip_gutenberg: true
shards: {count: $2, L_max: 256}
grid: {L: [64, 128, 256], N: [1, 2, 4, 8, 16, 32], T: [0.1, 1, 10], eps: [0.1], layers: all, heads: all}
rows: $3
seed: 0
YAML
  $MPIEXEC --oversubscribe -np 2 "$NORMSWEEP" --output "$work/$1.nc" --checkpoint-dir \
    "$work/$1.ckpt" "$work/$1.yaml" 2> "$work/$1.log" || { cat "$work/$1.log"; fail "sweep $1"; }
  "$PYTHON_DEBIAN" "$top_srcdir/postprocess/report" "$work/$1.nc" --out "$work/$1.rep" \
    --format png --quiet > "$work/$1.rep.log" 2>&1 || { cat "$work/$1.rep.log"; fail "report $1"; }
  "$PYTHON_DEBIAN" "$top_srcdir/tests/check_summary_report.py" "$work/$1.log" \
    "$work/$1.rep/report.json" "$4" || fail "summary and report differ on $1"
}
sweep small 12 2 no-warning
echo "ok 1 - summary and report agree on a 24-row sweep"
sweep tiny 4 1 warning
echo "ok 2 - summary and report agree, and both warn, on a 4-row sweep"

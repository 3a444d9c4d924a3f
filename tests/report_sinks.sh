#!/bin/sh
# report_sinks: the report's section "Attention sinks and every normalizer" (METRICS.md 8.1) on a
# small sweep of the stand-in with two normalizers (softmax and softmax1): per normalizer and
# layer the mean sink mass, the sink heads (mean above 0.3) and the file's sink_heads_frac,
# recomputed from the NetCDF by tests/check_report.py --sinks (plain numpy and math.fsum); the
# sink figure; every claim judged for both normalizers, the first one's verdicts those of the
# main table; both normalizers named on the page.
set -eu
: "${top_srcdir:?}" "${top_builddir:?}" "${NORMSWEEP:?}" "${PYTHON_DEBIAN:?}" "${MPIEXEC:?}"
: "${NS_TEST_MODEL_DIR:?}" "${NS_TEST_TOKENIZER_DIR:?}" "${NS_TEST_CORPUS:?}"
work=$(mktemp -d "$top_builddir/report-sinks.XXXXXX")
trap 'rm -rf "$work"' EXIT
fail() { echo "FAIL: $*"; exit 1; }
cat > "$work/s.yaml" <<YAML
model: $NS_TEST_MODEL_DIR
tokenizer: $NS_TEST_TOKENIZER_DIR
corpus: $NS_TEST_CORPUS
strip_gutenberg: true
shards: {count: 12, L_max: 128}
grid: {L: [32, 64, 128], N: [1, 2, 4, 8, 16], T: [0.1, 1, 10], eps: [0.1], layers: all, heads: all}
normalizer: [softmax, softmax1]
rows: 2
seed: 0
YAML
$MPIEXEC --oversubscribe -np 2 "$NORMSWEEP" --output "$work/s.nc" --checkpoint-dir "$work/ckpt" \
  "$work/s.yaml" 2> "$work/s.log" || { cat "$work/s.log"; fail "sweep"; }
"$PYTHON_DEBIAN" "$top_srcdir/postprocess/report" "$work/s.nc" --out "$work/rep" --format png \
  --quiet > "$work/rep.log" 2>&1 || { cat "$work/rep.log"; fail "report"; }
"$PYTHON_DEBIAN" "$top_srcdir/tests/check_report.py" --sinks "$work/s.nc" "$work/rep" ||
  fail "the sink section"
for n in softmax softmax1; do
  grep -q "<th>$n</th>" "$work/rep/report.html" || fail "the verdicts of $n are not on the page"
done
n=$("$PYTHON_DEBIAN" -c 'import json, sys
r = json.load(open(sys.argv[1]))
print(sum(len(e["claims"]) for e in r["claims_by_normalizer"]), 2 * len(r["claims"]))' \
  "$work/rep/report.json")
set -- $n
[ "$1" -eq "$2" ] && [ "$1" -gt 0 ] || fail "claims judged per normalizer: $1, expected $2"
echo "ok - the sink section and every claim for softmax and softmax1 ($1 verdicts)"

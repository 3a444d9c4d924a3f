#!/bin/sh
# postprocess_report.sh: the quick sweep's NetCDF -> postprocess/report: every figure, report.html
# and report.json exist; every number of the report equals the one recomputed from the NetCDF by
# tests/check_report.py; the HTML is real HTML: rendered by headless Chromium and turned into text
# (pdftotext), it shows tables as tables, no markdown syntax, the caveat for the stand-in model,
# the paper-vs-run verdicts, and every figure decoded (skipped, exit 77, without chromium or
# pdftotext: scripts/install-deps installs both). Bad inputs give one line and exit 2.
set -eu
: "${top_srcdir:?}" "${top_builddir:?}" "${NORMSWEEP:?}" "${PYTHON_DEBIAN:?}"
work=$(mktemp -d "$top_builddir/postprocess-test.XXXXXX")
trap 'rm -rf "$work"' EXIT
fail() { echo "FAIL: $*"; exit 1; }

run="$work/quick.nc"
$MPIEXEC --oversubscribe -np 2 "$NORMSWEEP" --output "$run" --checkpoint-dir "$work/ckpt" \
  "$top_srcdir/sweeps/quick.yaml" 2> "$work/sweep.log" || { cat "$work/sweep.log"; fail "quick sweep"; }

"$PYTHON_DEBIAN" "$top_srcdir/postprocess/report" "$run" --out "$work/report" --format png,pdf \
  > "$work/report.log" 2>&1 || { cat "$work/report.log"; fail "report on the quick sweep"; }
T_list=$(ncdump -v T "$run" | sed -n 's/^ T = \(.*\) ;$/\1/p' | tr -d ' ' | tr ',' ' ')
figs="fig2a_distance_vs_N fig2b_distance_vs_L fig3_critical_N_vs_L fig4_separability_vs_N fig5_sensitivity_vs_T"
for t in $T_list; do figs="$figs fig6_heads_T$t"; done
for f in $figs; do
  for ext in png pdf; do
    [ -s "$work/report/$f.$ext" ] || fail "missing figure $f.$ext"
  done
done
for f in report.html report.json; do [ -s "$work/report/$f" ] || fail "missing $f"; done
n_img=$(grep -o 'src="data:image/png;base64,' "$work/report/report.html" | wc -l)
[ "$n_img" -eq "$(echo $figs | wc -w)" ] || fail "report.html embeds $n_img figures, expected $(echo $figs | wc -w)"
grep -q '<table>' "$work/report/report.html" || fail "report.html has no table"
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

# The HTML as a reader sees it: headless Chromium prints it to PDF, pdftotext gives its text.
chrome=$(command -v chromium || command -v chromium-browser || true)
if [ -z "$chrome" ] || ! command -v pdftotext > /dev/null 2>&1; then
  echo "SKIP: rendering report.html needs chromium and pdftotext (scripts/install-deps installs them)"
  exit 77
fi
"$chrome" --headless --no-sandbox --disable-gpu --disable-quic --no-first-run \
  --disable-background-networking --disable-component-update --disable-sync \
  --user-data-dir="$work/chrome" --no-pdf-header-footer --print-to-pdf="$work/report.pdf" \
  "file://$work/report/report.html" > "$work/chrome.log" 2>&1 || { cat "$work/chrome.log"; fail "chromium"; }
pdftotext -layout "$work/report.pdf" "$work/report.txt" || fail "pdftotext"
pdftotext "$work/report.pdf" "$work/report.raw.txt" || fail "pdftotext"   # reading order
txt="$work/report.txt"
# no markdown left: heading hashes, emphasis stars, table rules, link syntax
if grep -nE '^\s*#{1,6} |\*\*|\|\s*-{3}|\]\(' "$txt"; then fail "markdown syntax in the rendered report"; fi
# the paper-vs-run table rendered as a table: its header cells on one line, and each verdict
grep -qE 'claim +this run +verdict +evidence' "$txt" || fail "the claims table is not rendered as a table"
"$PYTHON_DEBIAN" - "$work/report/report.json" "$work/report.raw.txt" <<'EOF' || fail "rendered text lacks report numbers"
import json, re, sys
rep = json.load(open(sys.argv[1])); text = re.sub(r"\s+", " ", open(sys.argv[2]).read())
bad = [c["verdict"] for c in rep["claims"] if c["verdict"] not in text]
for k, v in rep["violations"].items():
    if not re.search(r"\b%d +%d\b" % (v["count"], v["of"]), text):
        bad.append("%s: %d of %d" % (k, v["count"], v["of"]))
if rep["model"]["caveat"] and "Caveat" not in text:
    bad.append("the model caveat")
print("\n".join(bad)); sys.exit(1 if bad else 0)
EOF
# every embedded figure decodes as a PNG of a plausible size
"$PYTHON_DEBIAN" - "$work/report/report.html" <<'EOF' || fail "an embedded figure does not decode"
import base64, re, struct, sys
page = open(sys.argv[1]).read()
for b64 in re.findall(r'src="data:image/png;base64,([^"]+)"', page):
    png = base64.b64decode(b64)
    assert png[:8] == b"\x89PNG\r\n\x1a\n", "not a PNG"
    w, h = struct.unpack(">II", png[16:24])
    assert w >= 400 and h >= 300, "figure of %dx%d" % (w, h)
EOF
echo "ok - report figures, numbers and rendered HTML from the quick sweep"

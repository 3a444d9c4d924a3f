#!/bin/sh
# postprocess_report.sh: the quick sweep with its per-row samples (keep_samples: true) ->
# postprocess/report: every figure (PNG and PDF), report.html and report.json exist; every number
# of the report equals the one recomputed from the NetCDF by tests/check_report.py; the
# end-of-run summary agrees with the report (tests/check_summary_report.py); every figure names
# the model inside it and uses no text under 8 pt; the HTML is real HTML: rendered by headless
# Chromium and turned into text (pdftotext), it shows the verdict table as a table, no markdown
# syntax, the caveat for the stand-in model, every verdict, and every figure decoded (skipped,
# exit 77, without chromium or pdftotext: scripts/install-deps installs both). Bad inputs give
# one line and exit 2.
set -eu
: "${top_srcdir:?}" "${top_builddir:?}" "${NORMSWEEP:?}" "${PYTHON_DEBIAN:?}"
work=$(mktemp -d "$top_builddir/postprocess-test.XXXXXX")
trap 'rm -rf "$work"' EXIT
fail() { echo "FAIL: $*"; exit 1; }

run="$work/quick.nc"
sed 's/^keep_samples: false/keep_samples: true/' "$top_srcdir/sweeps/quick.yaml" > "$work/quick.yaml"
grep -q '^keep_samples: true' "$work/quick.yaml" || fail "quick.yaml has no keep_samples: false line"
$MPIEXEC --oversubscribe -np 2 "$NORMSWEEP" --output "$run" --checkpoint-dir "$work/ckpt" \
  "$work/quick.yaml" 2> "$work/sweep.log" || { cat "$work/sweep.log"; fail "quick sweep"; }

"$PYTHON_DEBIAN" "$top_srcdir/postprocess/report" "$run" --out "$work/report" --format png,pdf \
  --resamples 1000 > "$work/report.log" 2>&1 || { cat "$work/report.log"; fail "report on the quick sweep"; }
figs=$("$PYTHON_DEBIAN" -c 'import json, sys; print(" ".join(json.load(open(sys.argv[1]))["figures"]))' \
  "$work/report/report.json")
for f in fig2a_distance_vs_N fig2b_distance_vs_L fig3_critical_N_vs_L fig3b_ks_distance_vs_N \
    fig3c_critical_N_vs_shards fig4_separability_vs_N fig5_sensitivity_vs_T fig7_vs_entropy \
    fig6_heads_T1; do
  case " $figs " in *" $f "*) ;; *) fail "figure $f not made (made: $figs)";; esac
done
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
"$PYTHON_DEBIAN" "$top_srcdir/tests/check_summary_report.py" "$work/sweep.log" \
  "$work/report/report.json" no-warning || fail "the end-of-run summary and the report differ"

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

# Inside every figure: the model's name (pdftotext), and no text under 8 pt: every font size a
# PDF content stream sets ("SIZE Tf", in points at the figure's own size) is at least 8.
for f in $figs; do
  if command -v pdftotext > /dev/null 2>&1; then
    pdftotext "$work/report/$f.pdf" - | tr -s ' \n' '  ' | grep -q 'model: gpt2-standin' ||
      fail "$f.pdf does not name the model"
  fi
  "$PYTHON_DEBIAN" - "$work/report/$f.pdf" <<'PY' || fail "$f.pdf has text under 8 pt"
import re, sys, zlib
pdf = open(sys.argv[1], "rb").read()
sizes = []
for m in re.finditer(rb"stream\r?\n(.*?)\r?\nendstream", pdf, re.S):
    try:
        data = zlib.decompress(m.group(1))
    except zlib.error:
        data = m.group(1)
    sizes += [float(x) for x in re.findall(rb"([\d.]+) Tf", data)]
if not sizes or min(sizes) < 8:
    print("%s: font sizes %s" % (sys.argv[1], sorted(set(sizes))[:6]))
    sys.exit(1)
PY
done

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
# the verdict table rendered as a table: its first header cells side by side on one line
grep -qE 'claim \(figure\) +statistic +estimate' "$txt" || fail "the verdict table is not rendered as a table"
"$PYTHON_DEBIAN" - "$work/report/report.json" "$work/report.raw.txt" "$txt" <<'EOF' || fail "rendered text lacks report numbers"
import json, re, sys
rep = json.load(open(sys.argv[1])); text = re.sub(r"\s+", " ", open(sys.argv[2]).read())
layout = open(sys.argv[3]).read()  # one table row per line: a count beside its denominator
bad = [c["verdict"] for c in rep["claims"] if c["verdict"] not in text]
bad += [c["id"] for c in rep["claims"] if c["claim"][:30] not in text]
for k, v in rep["violations"].items():
    if not re.search(r"\b%d +%d\b" % (v["count"], v["of"]), layout):
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

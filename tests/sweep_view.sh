#!/bin/sh
# sweep_view: `sink_view: true` (issue 36, docs/METRICS.md section 8.2) on two ranks: the
# normalizer axis holds the listed normalizers, then each one's sink-excluded view; validate
# lists them; tests/check_sweep_norms.py checks every entry against the file's own per-row
# samples (mass, empty_rows, skipped_rows, sink_mass_mean, sink_heads_frac, stick-breaking's
# missing random reference) and, for the views, their labels and `view` variable, Theorem 1's
# bound (0 violations), n_crit_*_frac = n_crit / (L - 1) and softmax's view mass = 1 - sink_mass.
# The listed normalizers have, bit for bit, the data of a `sink_view: false` run of the same
# file (the views add entries and change nothing else); the run archives and `verify`s. Every
# label fits name_strlen's 32 ("sigmoid b=-log(L), sink excluded" is 32 characters), so `same`
# compares the normalizer variable's bytes too.
. "$top_srcdir/tests/sweep_common.sh"
: "${PYTHON_DEBIAN:=/usr/bin/python3}"
check="$top_srcdir/tests/check_sweep_norms.py"
cd "$work" || fail "cd"

# write NAME SINK_VIEW: a tiny keep_samples sweep with sink_view: SINK_VIEW
write() {
  cat > "$1.yaml" <<EOY
model: $NS_TEST_MODEL_DIR
tokenizer: $NS_TEST_TOKENIZER_DIR
corpus: $NS_TEST_CORPUS
strip_gutenberg: false
shards: {count: 4, L_max: 24}
grid:
  L: [8, 24]
  N: [1, 3, 6, 7, 22]
  T: [0.3, 1.0]
  eps: [1.0e-3]
  layers: [0, 3]
  heads: all
normalizer: [softmax, softmax1, sigmoid, sparsemax, stickbreaking]
sink_view: $2
rows: 2
seed: 5
keep_samples: true
output: runs/$1/$1.nc
checkpoint_dir: runs/$1/checkpoint
EOY
}
write view true
write plain false
LISTED="softmax|softmax1|sigmoid b=-log(L)|sparsemax|stickbreaking"
VIEWS="softmax, sink excluded|softmax1, sink excluded|sigmoid b=-log(L), sink excluded|sparsemax, sink excluded|stickbreaking, sink excluded"

"$NORMSWEEP" validate view.yaml > validate.txt 2>&1 || { cat validate.txt >&2; fail "validate"; }
grep -qF "normalizers 10 (softmax softmax1 sigmoid b=-log(L) sparsemax stickbreaking softmax, sink excluded softmax1, sink excluded sigmoid b=-log(L), sink excluded sparsemax, sink excluded stickbreaking, sink excluded)" validate.txt ||
  { cat validate.txt >&2; fail "validate does not list the views"; }
run_np 2 view.yaml 2> view.log || { cat view.log >&2; fail "the sink_view sweep"; }
# the summary's medians: n_crit over the keys a row has, L for a listed entry, L - 1 for a view
grep "^n_crit_expected" view.log > ncrit.txt
[ "$(grep -c ', sink excluded, median over heads.*median n_crit/(L-1) ' ncrit.txt)" -eq 5 ] &&
  [ "$(grep -c 'median n_crit/L ' ncrit.txt)" -eq 5 ] &&
  ! grep ', sink excluded, median' ncrit.txt | grep -q 'n_crit/L ' ||
  { cat ncrit.txt >&2; fail "the summary's n_crit medians do not name their keys (L, or L-1 for a view)"; }
"$PYTHON_DEBIAN" "$check" runs/view/view.nc "$LISTED|$VIEWS" || fail "check_sweep_norms"
"$PYTHON_DEBIAN" "$check" views runs/view/view.nc || fail "check_sweep_norms views"
run_np 1 plain.yaml 2> plain.log || { cat plain.log >&2; fail "the sink_view: false sweep"; }
"$PYTHON_DEBIAN" "$check" same runs/view/view.nc runs/plain/plain.nc ||
  fail "the listed normalizers' data differ from a sink_view: false run's"
if ncdump -h runs/plain/plain.nc | grep -q "int view(normalizer)"; then
  fail "a sink_view: false run has a view variable"
fi

cp view.log runs/view/run.log
"$NORMSWEEP" archive runs/view --out view.tar.gz -q > archive.log 2>&1 || { cat archive.log >&2; fail "archive"; }
"$NORMSWEEP" verify view.tar.gz --sample 1 > verify.log 2>&1 || { cat verify.log >&2; fail "verify"; }
grep -q "verify: PASS" verify.log || { cat verify.log >&2; fail "verify did not pass"; }
echo "ok: sweep_view (5 normalizers and their sink-excluded views: run, checked, equal to sink_view: false where listed, archived, verified)"

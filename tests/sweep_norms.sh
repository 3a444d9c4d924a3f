#!/bin/sh
# sweep_norms: a sweep over all ten normalizers (two entmax alphas and two sigmoid biases among
# them, so the labels must tell them apart) runs on two ranks, writes, reduces, archives and
# `verify`s; tests/check_sweep_norms.py checks the labels, mass, empty_rows, skipped_rows,
# sink_mass_mean and sink_heads_frac, and stick-breaking's missing random reference against the
# file's own per-row samples. The four normalizers of before issue 36 have, bit for bit, the
# same data as in a sweep over them alone (a normalizer's results do not depend on the others).
. "$top_srcdir/tests/sweep_common.sh"
: "${PYTHON_DEBIAN:=/usr/bin/python3}"
check="$top_srcdir/tests/check_sweep_norms.py"
cd "$work" || fail "cd"

# write NAME NORMALIZERS: a tiny keep_samples sweep over NORMALIZERS (a YAML flow list)
write() {
  cat > "$1.yaml" <<EOF
model: $NS_TEST_MODEL_DIR
tokenizer: $NS_TEST_TOKENIZER_DIR
corpus: $NS_TEST_CORPUS
strip_gutenberg: false
shards: {count: 4, L_max: 24}
grid:
  L: [8, 24]
  N: [1, 3, 7]
  T: [0.3, 1.0]
  eps: [1.0e-3]
  layers: [0, 3]
  heads: all
normalizer: $2
rows: 2
seed: 5
keep_samples: true
output: runs/$1/$1.nc
checkpoint_dir: runs/$1/checkpoint
EOF
}
OLD="softmax, {name: ssmax, s: 0.5}, sparsemax, entmax15"
write all "[$OLD, {name: entmax, alpha: 1.3}, {name: entmax, alpha: 2.5}, softmax1, sigmoid, {name: sigmoid, b: -1.5}, softpick, relu, stickbreaking]"
write four "[$OLD]"
LABELS="softmax|ssmax|sparsemax|entmax15|entmax alpha=1.3|entmax alpha=2.5|softmax1|sigmoid b=-log(L)|sigmoid b=-1.5|softpick|relu|stickbreaking"

"$NORMSWEEP" validate all.yaml > validate.txt 2>&1 || { cat validate.txt >&2; fail "validate"; }
grep -q "normalizers 12 (softmax ssmax s=0.5 sparsemax entmax15 entmax alpha=1.3 entmax alpha=2.5 softmax1 sigmoid b=-log(L) sigmoid b=-1.5 softpick relu stickbreaking)" validate.txt ||
  { cat validate.txt >&2; fail "validate does not list the normalizers with their parameters"; }
run_np 2 all.yaml 2> all.log || { cat all.log >&2; fail "the sweep over every normalizer"; }
"$PYTHON_DEBIAN" "$check" runs/all/all.nc "$LABELS" || fail "check_sweep_norms"
run_np 1 four.yaml 2> four.log || { cat four.log >&2; fail "the sweep over the four"; }
"$PYTHON_DEBIAN" "$check" same runs/all/all.nc runs/four/four.nc ||
  fail "the four normalizers' data depend on the other normalizers of the grid"

cp all.log runs/all/run.log
"$NORMSWEEP" archive runs/all --out all.tar.gz -q > archive.log 2>&1 || { cat archive.log >&2; fail "archive"; }
"$NORMSWEEP" verify all.tar.gz --sample 1 > verify.log 2>&1 || { cat verify.log >&2; fail "verify"; }
grep -q "verify: PASS" verify.log || { cat verify.log >&2; fail "verify did not pass"; }
echo "ok: sweep_norms (12 normalizers: run, reduced, checked against the samples, archived, verified)"

#!/bin/sh
# train_norms: `normsweep train` with issue 36's two model normalizers off the simplex, end to end
# on a tiny model and a 400 kB slice of the corpus:
#  (1) the other four of issue 36 refused; --b only with sigmoid, in range, within the 10
#      significant digits config.json keeps (exit 2, nothing written);
#  (2) softmax1 and sigmoid (the default bias, and --b with T = 0.5) train; config.json and
#      train.nc record the normalizer and sigmoid's b (the default -log(ctx) to 10 digits);
#  (3) each trained model's inference forward (`normsweep dump --logits`) attends by its own
#      config.json: every causal weight recomputed from the dumped logits by the defining formula
#      (tests/check_train_norms.py), rows off the simplex;
#  (4) the softmax1 and the sigmoid model run through a sweep over softmax, softmax1 and sigmoid
#      (mass and sink_mass written, the model's attention named in model_attention, sigmoid
#      with its b).
set -u
: "${NORMSWEEP:?run through make check}" "${NS_TEST_TOKENIZER_DIR:?}" "${NS_TEST_CORPUS:?}" \
  "${top_srcdir:?}" "${PYTHON_DEBIAN:=/usr/bin/python3}"
work=$(mktemp -d "${TMPDIR:-/tmp}/ns_train_norms.XXXXXX")
trap 'rm -rf "$work"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }
cd "$work" || fail "cd $work"

sed -n 2000,5500p "$NS_TEST_CORPUS" > small.txt
[ "$(wc -c < small.txt)" -gt 300000 ] || fail "corpus slice too short"
tiny="--layers 1 --heads 2 --embd 16 --ctx 16 --corpus small.txt --no-strip-gutenberg
      --tokenizer $NS_TEST_TOKENIZER_DIR --val-windows 2 --val-every 3 --jac-every 1
      --steps 3 --batch 2 --lr 3e-3"

# expect_invalid LABEL PATTERN ARGS...: exit 2, PATTERN on stderr, no --out directory
expect_invalid() {
  label=$1 pattern=$2; shift 2
  "$NORMSWEEP" train "$@" --out bad_out 2> err; rc=$?
  [ $rc -eq 2 ] || { cat err >&2; fail "$label: exit $rc, expected 2"; }
  grep -q -- "$pattern" err || { cat err >&2; fail "$label: stderr lacks '$pattern'"; }
  [ -e bad_out ] && fail "$label: --out was created"
  return 0
}

# (1) refusals
for n in softpick relu stickbreaking entmax; do
  expect_invalid "$n" "normalizer '$n' is not yet usable in a model or in training" \
    $tiny --normalizer $n
done
expect_invalid "--b with softmax" "--b applies only to --normalizer sigmoid" $tiny --b -2
expect_invalid "--b with softmax1" "--b applies only to --normalizer sigmoid" \
  $tiny --normalizer softmax1 --b -2
expect_invalid "--b out of range" "--b: 1001 is out of range" $tiny --normalizer sigmoid --b 1001
expect_invalid "--b of 11 digits" "more than 10 significant digits" \
  $tiny --normalizer sigmoid --b -1.2345678901
expect_invalid "ssmax's s with sigmoid" "--s applies only to --normalizer ssmax" \
  $tiny --normalizer sigmoid --s 0.5

# (2) three tiny trainings
train() {
  out=$1; shift
  "$NORMSWEEP" train $tiny "$@" --out "$out" 2> "$out.log" || { cat "$out.log" >&2; fail "train $out"; }
  for f in model.safetensors config.json train.nc; do [ -s "$out/$f" ] || fail "$out/$f missing"; done
}
train s1 --normalizer softmax1
train sig --normalizer sigmoid
train sigb --normalizer sigmoid --b -1.25 --temperature 0.5
grep -q '"normsweep_attn_normalizer": "softmax1"' s1/config.json || fail "softmax1 not in config.json"
grep -q 'normsweep_sigmoid_b' s1/config.json && fail "softmax1's config.json names a sigmoid bias"
# the default bias: -log(16) = -2.7725887222397811 to 10 significant digits, in both records
grep -q '"normsweep_sigmoid_b": -2.772588722,' sig/config.json ||
  { cat sig/config.json >&2; fail "the default bias is not -log(ctx) = -2.772588722 in config.json"; }
grep -q '"sigmoid_b": -2.772588722' sig/config.json ||
  fail "normsweep_training's options lack sigmoid_b"
ncdump -h sig/train.nc | grep -q ':normsweep_sigmoid_b = -2.772588722 ;' ||
  fail "train.nc lacks normsweep_sigmoid_b = -2.772588722"
ncdump -h sig/train.nc | grep -q ':normsweep_sigmoid_b_rule = "b = -log(ctx) rounded' ||
  fail "train.nc lacks the default's rule"
grep -q '"normsweep_sigmoid_b": -1.25,' sigb/config.json || fail "--b -1.25 not in config.json"
grep -q '"normsweep_attn_temperature": 0.5,' sigb/config.json || fail "T = 0.5 not in config.json"
ncdump -h sigb/train.nc | grep -q ':normsweep_sigmoid_b_rule = "b as given (--b)' ||
  fail "train.nc: --b's rule"
# the attention Jacobian was logged from the weights (finite: not the NaN of an unknown Jacobian)
for m in s1 sig sigb; do
  ncdump -v attn_jac_mean $m/train.nc | sed -n '/^ attn_jac_mean =/,$p' | sed '1s/^ attn_jac_mean =//' > jac.txt
  grep -q "[0-9]" jac.txt || fail "$m: no attn_jac_mean"
  grep -q "NaN\|_" jac.txt && fail "$m: attn_jac_mean has missing values"
done

# (3) the inference forward attends by the model's own config.json
for m in s1 sig sigb; do
  "$NORMSWEEP" dump --text small.txt --offset 100 --length 16 --model $m --logits \
    --tokenizer "$NS_TEST_TOKENIZER_DIR" --strip-gutenberg false --out $m.nc 2> $m.dump.log ||
    { cat $m.dump.log >&2; fail "dump of the $m model"; }
  "$PYTHON_DEBIAN" "$top_srcdir/tests/check_train_norms.py" $m.nc $m/config.json ||
    fail "the $m model's attention weights"
done

# (4) sweeps of the trained models
for m in s1 sig; do
  cat > $m.yaml <<EOF
model: $m
tokenizer: $NS_TEST_TOKENIZER_DIR
corpus: small.txt
strip_gutenberg: false
shards: {count: 3, L_max: 16}
grid:
  L: [8, 16]
  N: [1, 3]
  T: [0.5, 1.0]
  eps: [1.0e-3]
  layers: [0]
  heads: all
normalizer: [softmax, softmax1, sigmoid]
rows: 2
output: runs/$m/$m.nc
checkpoint_dir: runs/$m/checkpoint
EOF
  "$NORMSWEEP" run $m.yaml 2> $m.run.log || { cat $m.run.log >&2; fail "the sweep of the $m model"; }
  ncdump -h runs/$m/$m.nc > $m.cdl
  for v in mass_mean sink_mass_mean sink_heads_frac distance_mean; do
    grep -q " $v(" $m.cdl || fail "sweep of $m: no $v"
  done
done
grep -q ':model_attention = "softmax1 of q.k / sqrt(head_dim) / 1"' s1.cdl ||
  fail "the sweep's model_attention does not name softmax1"
# with its bias: the default -log(ctx) of the 16-token model, as config.json holds it (10 digits)
grep -q ':model_attention = "sigmoid (b = -2.772588722) of q.k / sqrt(head_dim) / 1"' sig.cdl ||
  fail "the sweep's model_attention does not name sigmoid with its b: $(grep model_attention sig.cdl)"
echo "train_norms: ok"

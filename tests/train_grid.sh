#!/bin/sh
# train_grid: `normsweep train-grid` and the report's training page, end to end on a tiny grid
# (2 normalizers x 2 temperatures, a 1-layer model, a 410 kB slice of the corpus).
#  (1) invalid grids exit 2 naming the file (and line) and the cause, and write nothing;
#  (2) a grid run trains every cell with the grid's options plus its own normalizer and T (a cell's
#      model is byte-identical to `normsweep train` run by hand with those options), records them
#      in config.json, and sweeps each model (the sweep's recorded model is the cell's, by SHA-256);
#      -np 2 trains the same bytes;
#  (3) a second run without --resume is refused; --resume keeps finished cells byte for byte,
#      redoes a removed sweep, refuses a changed grid, and after SIGTERM (exit 3) continues to the
#      bytes of an uninterrupted run;
#  (4) an archive of a cell's sweep verifies (verify uses the model the run was given);
#  (5) postprocess/report --training: training.json's numbers and verdicts recomputed from the
#      train.nc files by tests/check_training_report.py;
#  (6) seeds: as a grid axis (2 normalizers x 2 seeds): cells <normalizer>-T<T>-s<seed> in
#      normalizer, T, seed order, a seeded cell byte-identical to `normsweep train --seed S`; the
#      training page's sink mass and selectivity table, its numbers recomputed from the cells'
#      sweep.nc files (tests/check_training_sinks.py).
set -u
: "${NORMSWEEP:?run through make check}" "${MPIEXEC:?}" "${NS_TEST_TOKENIZER_DIR:?}" "${NS_TEST_CORPUS:?}" \
  "${PYTHON_DEBIAN:?}" "${top_srcdir:?}"
work=$(mktemp -d "${TMPDIR:-/tmp}/ns_train_grid.XXXXXX")
trap 'rm -rf "$work"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }
here=$top_srcdir
. "$top_srcdir/tests/hold.sh"
cd "$work" || fail "cd $work"

sed -n 2000,5500p "$NS_TEST_CORPUS" > small.txt
[ "$(wc -c < small.txt)" -gt 300000 ] || fail "corpus slice too short"

cat > sw.yaml <<EOF
tokenizer: $NS_TEST_TOKENIZER_DIR
corpus: small.txt
strip_gutenberg: false
shards:
  count: 2
  L_max: 32
grid:
  L: [16, 32]
  N: [1, 4, 8]
  T: [1]
  eps: [0.1]
  layers: all
  heads: all
rows: 2
probes: 2
EOF

# grid BODY-EXTRA: a grid file g.yaml with the tiny train: section
grid() {
  cat > g.yaml <<EOF
train:
  layers: 1
  heads: 2
  embd: 16
  ctx: 16
  positions: 32
  batch: 4
  steps: 8
  lr: 3.0e-3
  val-every: 4
  val-windows: 4
  jac-every: 2
  seed: 11
  corpus: small.txt
  tokenizer: $NS_TEST_TOKENIZER_DIR
  strip_gutenberg: false
EOF
  printf '%s\n' "$@" >> g.yaml
}

# expect_invalid LABEL PATTERN: exit 2, PATTERN on stderr, no output directory
expect_invalid() {
  "$NORMSWEEP" train-grid --out bad_out g.yaml 2> err; rc=$?
  [ $rc -eq 2 ] || { cat err >&2; fail "$1: exit $rc, expected 2"; }
  grep -q -- "$2" err || { cat err >&2; fail "$1: stderr lacks '$2'"; }
  [ -e bad_out ] && fail "$1: the output directory was created"
  return 0
}

# (1) invalid grids
grid "normalizers: [softmax]" "temperatures: [1]" "colour: blue"
expect_invalid "unknown key" "g.yaml:19: unknown key 'colour'"
grid "normalizers: [softmax]" "temperatures: [1]"
sed -i 's/^  seed: 11/  temperature: 0.5/' g.yaml
expect_invalid "T in train:" "g.yaml:[0-9]*: train: 'temperature' is set by the grid"
grid "normalizers: [softmax, ssmax]" "temperatures: [1]"
expect_invalid "ssmax without s" "g.yaml: normalizers: ssmax needs ssmax_s"
grid "normalizers: [softmax, softmax]" "temperatures: [1]"
expect_invalid "normalizer twice" "g.yaml:17: normalizers: 'softmax' listed twice"
grid "normalizers: [softmax]" "temperatures: [0.1, 0]"
expect_invalid "T = 0" "g.yaml:18: temperatures: 0 is out of range \[1e-6, 1e6\]"
grid "normalizers: [softmax]" "temperatures: [1]"
sed -i 's/^  steps: 8/  steps: eight/' g.yaml
expect_invalid "bad steps" "the train: options do not make a valid training for cell softmax-T1"
grid "normalizers: [softmax]" "temperatures: [1]" "sweep: sw.yaml"
sed -i 's/^  positions: 32/  positions: 16/' g.yaml
expect_invalid "L_max beyond the model" "shards.L_max 32 exceeds the context of the models trained"
grid "normalizers: [softmax]" "temperatures: [1]" "sweep: nosuch.yaml"
expect_invalid "missing sweep" "nosuch.yaml"
grid "normalizers: [softmax]" "temperatures: [1]" "seeds: [3, 4]"
expect_invalid "seeds with train: seed" "g.yaml:13: train: seed: and seeds: (line 19) both set the seed"
grid "normalizers: [softmax]" "temperatures: [1]" "seeds: [3, 4, 3]"
sed -i '/^  seed: 11/d' g.yaml
expect_invalid "seed twice" "g.yaml:18: seeds: 3 listed twice"
grid "normalizers: [softmax]" "temperatures: [1]" "seeds: [3, '4']"
sed -i '/^  seed: 11/d' g.yaml
expect_invalid "quoted seed" "g.yaml:18: seeds: expected an integer in 0..18446744073709551615, got the quoted string '4'"
grid "normalizers: [softmax]" "temperatures: [1]" "seeds: [18446744073709551616]"
sed -i '/^  seed: 11/d' g.yaml
expect_invalid "seed too large" "g.yaml:18: seeds: 18446744073709551616 is out of range 0..18446744073709551615"
grid "normalizers: [softmax]" "temperatures: [1]" "seeds: []"
sed -i '/^  seed: 11/d' g.yaml
expect_invalid "no seeds" "g.yaml:18: seeds: expected a non-empty list"
"$NORMSWEEP" train-grid nosuch-grid.yaml 2> err; rc=$?
[ $rc -eq 2 ] && grep -q "nosuch-grid.yaml" err || { cat err >&2; fail "missing grid: exit $rc"; }
echo "ok 1 - invalid grids: exit 2, file:line and cause named, nothing written"

# (2) the grid
grid "normalizers: [softmax, entmax15]" "temperatures: [0.1, 1]" "sweep: sw.yaml" "out: out"
"$NORMSWEEP" train-grid g.yaml 2> log || { tail -20 log >&2; fail "grid run"; }
cells="softmax-T0.1 softmax-T1 entmax15-T0.1 entmax15-T1"
for c in $cells; do
  for f in model/model.safetensors model/config.json model/train.nc sweep.nc; do
    [ -s "out/$c/$f" ] || fail "out/$c/$f missing"
  done
  norm=${c%-T*} T=${c#*-T}
  grep -q "\"normsweep_attn_normalizer\": \"$norm\"" "out/$c/model/config.json" ||
    fail "$c: normalizer not in config.json"
  grep -q "\"normsweep_attn_temperature\": $T\b" "out/$c/model/config.json" ||
    fail "$c: temperature $T not in config.json"
  sha=$(sha256sum < "out/$c/model/model.safetensors" | cut -d' ' -f1)
  ncdump -h "out/$c/sweep.nc" | grep -q ":model_sha256 = \"$sha\"" ||
    fail "$c: the sweep did not run on the cell's model"
  ncdump -h "out/$c/sweep.nc" | grep -q ":model_requested = \"out/$c/model\"" ||
    fail "$c: model_requested is not the cell's model"
done
cmp -s g.yaml out/training.yaml || fail "the grid file was not kept as out/training.yaml"
# the same cell by hand: the grid adds exactly its normalizer, T and --out
"$NORMSWEEP" train --layers 1 --heads 2 --embd 16 --ctx 16 --positions 32 --batch 4 --steps 8 \
  --lr 3.0e-3 --val-every 4 --val-windows 4 --jac-every 2 --seed 11 --corpus small.txt \
  --tokenizer "$NS_TEST_TOKENIZER_DIR" --no-strip-gutenberg --normalizer entmax15 \
  --temperature 0.1 --out byhand 2> logh || { cat logh >&2; fail "train by hand"; }
cmp -s byhand/model.safetensors out/entmax15-T0.1/model/model.safetensors ||
  fail "the grid's entmax15-T0.1 differs from normsweep train with the same options"
cmp -s byhand/model.safetensors out/entmax15-T1/model/model.safetensors &&
  fail "T = 0.1 and T = 1 trained the same weights"
# -np 2: the same bytes (one cell, no sweep)
cp g.yaml g2.yaml
sed -i -e 's/^normalizers: .*/normalizers: [softmax]/' -e 's/^temperatures: .*/temperatures: [0.1]/' \
  -e '/^sweep: /d' g2.yaml
"$MPIEXEC" --oversubscribe -np 2 "$NORMSWEEP" train-grid --out out2 g2.yaml 2> lognp2 ||
  { tail -20 lognp2 >&2; fail "grid at -np 2"; }
cmp -s out2/softmax-T0.1/model/model.safetensors out/softmax-T0.1/model/model.safetensors ||
  fail "-np 2 trained other weights than -np 1"
[ -e out2/softmax-T0.1/sweep.nc ] && fail "a grid without sweep: swept"
echo "ok 2 - 4 cells trained with the grid's options (one equal to a hand run, one equal at -np 2), recorded, swept"

# (3) resume
sums() { for c in $cells; do sha256sum "out/$c/model/model.safetensors" "out/$c/sweep.nc"; done; }
sums > before
"$NORMSWEEP" train-grid g.yaml 2> err; rc=$?
[ $rc -eq 2 ] && grep -q "holds a training grid: pass --resume" err || { cat err >&2; fail "rerun: exit $rc"; }
rm out/softmax-T1/sweep.nc
"$NORMSWEEP" train-grid --resume g.yaml 2> log2 || { tail -20 log2 >&2; fail "--resume"; }
[ "$(grep -c 'done before, kept' log2)" -eq 3 ] || { cat log2 >&2; fail "finished cells not kept"; }
grep -v "softmax-T1/sweep.nc" before > b1; sums | grep -v "softmax-T1/sweep.nc" > a1
cmp -s b1 a1 || { diff b1 a1 >&2; fail "--resume changed a finished cell"; }
[ -s out/softmax-T1/sweep.nc ] || fail "--resume did not redo the removed sweep"
for v in distance_quantile ns_frac_mean jac_exact_quantile; do
  ncdump -v "$v" out/softmax-T1/sweep.nc | sed -n "/^ $v =/,\$p" > "r_$v"
  [ -s "r_$v" ] || fail "no $v in the redone sweep"
done
sed -i "s/^  seed: 11/  seed: 12/" g.yaml
"$NORMSWEEP" train-grid --resume g.yaml 2> err; rc=$?
[ $rc -eq 2 ] && grep -q "not the grid out started with" err || { cat err >&2; fail "changed grid: exit $rc"; }
# SIGTERM in the middle of a cell's training (held after step 15, between the checkpoints of
# steps 10 and 20, tests/hold.sh): exit 3, then --resume continues from step 15 to the bytes of an
# uninterrupted run
sed -e 's/^  steps: 8/  steps: 30/' -e 's/^  jac-every: 2/  jac-every: 0\n  checkpoint-every: 10/' \
  g2.yaml > g3.yaml
"$NORMSWEEP" train-grid --out ref3 g3.yaml 2> logr3 || { tail -20 logr3 >&2; fail "uninterrupted grid"; }
hold_at step:15
"$NORMSWEEP" train-grid --out int3 g3.yaml 2> logi3 &
pid=$!
hold_off
[ "$(wait_held $pid)" = $pid ] || fail "the grid's training was not held"
kill -TERM $pid
wait $pid; rc=$?
[ $rc -eq 3 ] && grep -q "train-grid --resume --out int3 g3.yaml continues" logi3 ||
  { cat logi3 >&2; fail "SIGTERM: exit $rc, expected 3 and how to continue"; }
grep -q "stopping at step 15: checkpoint saved" logi3 || { cat logi3 >&2; fail "SIGTERM: not stopped at step 15"; }
"$NORMSWEEP" train-grid --resume --out int3 g3.yaml 2> logres3 || { tail -20 logres3 >&2; fail "--resume after SIGTERM"; }
grep -q "resuming from .* at step 15$" logres3 || { tail -20 logres3 >&2; fail "--resume did not start at step 15"; }
cmp -s ref3/softmax-T0.1/model/model.safetensors int3/softmax-T0.1/model/model.safetensors ||
  fail "the resumed grid's model differs from the uninterrupted one"
echo "ok 3 - a second run refused; --resume keeps finished cells byte for byte, redoes a sweep, continues after SIGTERM with the same bytes"

# (4) the archive of a cell's sweep verifies (the model the run was given, not the file's)
mkdir -p run1 && cp out/softmax-T0.1/sweep.nc run1/ && cp -r out/softmax-T0.1/sweep-checkpoint run1/checkpoint
"$NORMSWEEP" archive run1 --out a.tar.gz -q 2> erra || { cat erra >&2; fail "archive"; }
"$NORMSWEEP" verify a.tar.gz --sample 1 --offline > ver.txt 2>&1 || { cat ver.txt >&2; fail "verify"; }
grep -q "the run was given out/softmax-T0.1/model in place of the sweep file's" ver.txt ||
  { cat ver.txt >&2; fail "verify did not use the given model"; }
echo "ok 4 - a cell's sweep archives and verifies"

# (5) the training page
"$PYTHON_DEBIAN" "$here/postprocess/report" --training out --out rep > rlog 2>&1 ||
  { cat rlog >&2; fail "report --training"; }
for f in training.html training.json fig_training_val_loss.png fig_training_grad_norm.png \
  fig_training_attn_jac.png; do [ -s "rep/$f" ] || fail "rep/$f missing"; done
"$PYTHON_DEBIAN" "$here/tests/check_training_report.py" out rep/training.json ||
  fail "training.json differs from the training logs"
"$PYTHON_DEBIAN" "$here/postprocess/report" --training nowhere --out rep2 2> err; rc=$?
[ $rc -eq 2 ] && grep -q "nowhere: no such directory" err || fail "report --training nowhere: exit $rc"
echo "ok 5 - the training page: numbers and verdicts recomputed from train.nc"

# (6) seeds: as a grid axis, and the page's sink mass and selectivity table. The same tiny budget
# (8 steps of a 1-layer model) and a sweep with the models' own normalizers.
{ cat sw.yaml; echo "normalizer: [softmax, sigmoid]"; } > sw6.yaml
grid "normalizers: [softmax, sigmoid]" "temperatures: [1]" "seeds: [7, 5]" "sweep: sw6.yaml" \
  "out: out6"
sed -i '/^  seed: 11/d' g.yaml
"$NORMSWEEP" train-grid g.yaml 2> log6 || { tail -20 log6 >&2; fail "seeded grid run"; }
order=$(sed -n 's/.*: cell [0-9] of 4: //p' log6 | tr '\n' ' ')
[ "$order" = "softmax-T1-s7 softmax-T1-s5 sigmoid-T1-s7 sigmoid-T1-s5 " ] ||
  { cat log6 >&2; fail "seeded cells: '$order'"; }
for c in $order; do
  [ -s "out6/$c/sweep.nc" ] || fail "out6/$c/sweep.nc missing"
  grep -q "\"normsweep_seed\": \"${c##*-s}\"" "out6/$c/model/config.json" ||
    fail "$c: seed ${c##*-s} not in config.json"
done
"$NORMSWEEP" train --layers 1 --heads 2 --embd 16 --ctx 16 --positions 32 --batch 4 --steps 8 \
  --lr 3.0e-3 --val-every 4 --val-windows 4 --jac-every 2 --corpus small.txt \
  --tokenizer "$NS_TEST_TOKENIZER_DIR" --no-strip-gutenberg --normalizer sigmoid \
  --temperature 1 --seed 5 --out byhand6 2> logh6 || { cat logh6 >&2; fail "seeded train by hand"; }
cmp -s byhand6/model.safetensors out6/sigmoid-T1-s5/model/model.safetensors ||
  fail "the grid's sigmoid-T1-s5 differs from normsweep train --seed 5"
cmp -s byhand6/model.safetensors out6/sigmoid-T1-s7/model/model.safetensors &&
  fail "seeds 5 and 7 trained the same weights"
"$PYTHON_DEBIAN" "$here/postprocess/report" --training out6 --out rep6 > rlog6 2>&1 ||
  { cat rlog6 >&2; fail "report --training (seeds)"; }
"$PYTHON_DEBIAN" "$here/tests/check_training_sinks.py" out6 rep6/training.json ||
  fail "the sink mass and selectivity table differs from the sweeps"
"$PYTHON_DEBIAN" -c '
import json, sys
rows = json.load(open(sys.argv[1]))["sink_selectivity"]["rows"]
got = sorted((r["normalizer"], r["seeds"], r["own_normalizer"], r["sink_mass"]["n"]) for r in rows)
want = [("sigmoid", [5, 7], True, 2), ("softmax", [5, 7], True, 2)]
sys.exit(0 if got == want else "rows: %r" % got)' rep6/training.json || fail "seeds not pooled per normalizer"
"$PYTHON_DEBIAN" "$here/tests/check_training_report.py" out6 rep6/training.json ||
  fail "training.json (seeds) differs from the training logs"
echo "ok 6 - seeds: cells per seed (one equal to train --seed), the page's sink mass and selectivity recomputed from the sweeps"

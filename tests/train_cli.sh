#!/bin/sh
# train_cli: `normsweep train` end to end on a tiny model and a 400 kB slice of the corpus.
#  (1) invalid input exits 2, names the file and the cause, and writes nothing;
#  (2) a tiny run writes a model (config.json records the normalizer and temperature), a training
#      log whose validation loss fell, and the model is readable by `normsweep dump`; the final
#      validation over every window shows its progress (its first and last line, at -np 1 and 2);
#  (3) -np 2 with the same global batch gives the same bytes of model.safetensors as -np 1;
#  (4) SIGTERM mid-run (the run held after step 15, tests/hold.sh) exits 3 with a checkpoint of
#      step 15; --resume continues from it to the same bytes as an uninterrupted run.
set -u
: "${NORMSWEEP:?run through make check}" "${MPIEXEC:?}" "${NS_TEST_TOKENIZER_DIR:?}" \
  "${NS_TEST_CORPUS:?}" "${top_srcdir:?}"
work=$(mktemp -d "${TMPDIR:-/tmp}/ns_train_cli.XXXXXX")
trap 'rm -rf "$work"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }
. "$top_srcdir/tests/hold.sh"
cd "$work" || fail "cd $work"

# ~410 kB of the novel: 105,000 tokens, so the split (blocks of 8192, every 10th held out) has one
# validation block
sed -n 2000,5500p "$NS_TEST_CORPUS" > small.txt
[ "$(wc -c < small.txt)" -gt 300000 ] || fail "corpus slice too short"
tiny="--layers 1 --heads 2 --embd 16 --ctx 16 --corpus small.txt --no-strip-gutenberg
      --tokenizer $NS_TEST_TOKENIZER_DIR --val-windows 4 --jac-every 2"

# expect_invalid LABEL PATTERN ARGS...: exit 2, PATTERN on stderr, no --out directory
expect_invalid() {
  label=$1 pattern=$2; shift 2
  "$NORMSWEEP" train "$@" --out bad_out 2> err; rc=$?
  [ $rc -eq 2 ] || { cat err >&2; fail "$label: exit $rc, expected 2"; }
  grep -q -- "$pattern" err || { cat err >&2; fail "$label: stderr lacks '$pattern'"; }
  [ -e bad_out ] && fail "$label: --out was created"
  return 0
}

# (1) invalid input
head -c 1000 small.txt > bad.txt; printf '\377\376' >> bad.txt
expect_invalid "non-UTF-8 corpus" "bad.txt: not UTF-8 text (invalid byte 0xff at offset 1000" \
  $tiny --corpus bad.txt --steps 2
expect_invalid "heads do not divide embd" "n_embd = 16 is not a multiple of n_head = 3" \
  --layers 1 --heads 3 --embd 16 --ctx 16 --steps 2
expect_invalid "ssmax without s" "ssmax" $tiny --normalizer ssmax --steps 2
mkdir initdir; echo '{ "n_layer": 1,' > initdir/config.json; : > initdir/model.safetensors
expect_invalid "broken --init-from" "initdir/config.json" $tiny --init-from initdir --steps 2

# (2) a tiny run with sparsemax at T = 0.5
"$NORMSWEEP" train $tiny --normalizer sparsemax --temperature 0.5 --steps 30 --batch 4 --lr 3e-3 \
  --val-every 10 --checkpoint-every 10 --out m1 2> log1 || { cat log1 >&2; fail "tiny run"; }
for f in model.safetensors config.json train.nc; do [ -s "m1/$f" ] || fail "m1/$f missing"; done
# the final validation (every window) reports its progress before the summary line
nval=$(sed -n 's/.* validation tokens (\([0-9]*\) windows).*/\1/p' log1)
[ -n "$nval" ] || { cat log1 >&2; fail "no validation window count"; }
grep -n "" log1 | grep -E "normsweep train: final validation: 0 of $nval windows \(0\.0%\), elapsed [0-9]+ s$" |
  cut -d: -f1 > lines
grep -n "" log1 | grep -E "normsweep train: final validation: $nval of $nval windows \(100\.0%\), elapsed [0-9]+ s$" |
  cut -d: -f1 >> lines
grep -n "" log1 | grep "normsweep train: trained 30 steps" | cut -d: -f1 >> lines
[ "$(wc -l < lines)" -eq 3 ] && [ "$(sort -n lines)" = "$(cat lines)" ] ||
  { cat log1 >&2; fail "the final validation's progress (first, last line, then the summary) is not shown"; }
grep -q '"normsweep_attn_normalizer": "sparsemax"' m1/config.json || fail "normalizer not in config.json"
grep -q '"normsweep_attn_temperature": 0.5' m1/config.json || fail "temperature not in config.json"
# the validation loss at steps 0, 10, 20, 30: it must fall (from ~ln 50257 = 10.8) by more than
# 0.1 nats; 30 steps at lr 3e-3 lower it by ~1 nat, a broken gradient leaves it flat or raises it
ncdump -v val_loss m1/train.nc | sed -n '/^ val_loss =/,/;/p' | tr -d 'val_os=;\n' | tr ',' ' ' > vl
set -- $(cat vl)
[ $# -eq 4 ] || fail "expected 4 validation losses, got: $(cat vl)"
awk -v a="$1" -v b="$4" 'BEGIN { exit !(a > 10 && a < 11.5 && b < a - 0.1) }' ||
  fail "validation loss did not fall: $(cat vl)"
ncdump -h m1/train.nc | grep -q 'double attn_jac(step, layer, quantile)' || fail "no attn_jac in the log"
# the written model is an ordinary model: dump runs on it
"$NORMSWEEP" dump --text small.txt --offset 100 --length 12 --model m1 \
  --tokenizer "$NS_TEST_TOKENIZER_DIR" --strip-gutenberg false --out d.nc 2> logd || { cat logd >&2; fail "dump of the trained model"; }
ncdump -h d.nc | grep -q 'attention_weight' || fail "dump wrote no attention_weight"
# sparsemax at T = 0.5 gives exact zeros among the causal weights (softmax never does)
ncdump -v attention_weight d.nc | sed -n '/^ attention_weight =/,$p' | tr ',;' '\n\n' |
  awk '$1 == "0" { z++ } END { exit !(z > 66 * 2) }' ||
  fail "dump of the sparsemax model shows no sparse attention (normalizer ignored?)"

# (3) -np 1 vs -np 2, the same global batch
small="$tiny --steps 12 --batch 4 --val-every 6 --checkpoint-every 4"
"$NORMSWEEP" train $small --out np1 2> lognp1 || { cat lognp1 >&2; fail "np 1"; }
"$MPIEXEC" --oversubscribe -np 2 "$NORMSWEEP" train $small --out np2 2> lognp2 ||
  { cat lognp2 >&2; fail "np 2"; }
cmp np1/model.safetensors np2/model.safetensors || fail "-np 1 and -np 2 models differ"
grep -q "normsweep train: final validation: 100\.0% of $nval windows on 2 ranks (rank 0: [0-9]* of its [0-9]*), elapsed" lognp2 ||
  { cat lognp2 >&2; fail "-np 2: the final validation's progress is not shown"; }
for v in loss grad_norm val_loss; do
  [ "$(ncdump -p 9,17 -v $v np1/train.nc | sed -n "/^ $v =/,\$p")" = \
    "$(ncdump -p 9,17 -v $v np2/train.nc | sed -n "/^ $v =/,\$p")" ] || fail "-np 1 and -np 2: $v differs"
done

# (4) SIGTERM and --resume: 30 steps, held after step 15 (between the checkpoints of steps 10 and
# 20) until SIGTERM arrives; the stop saves step 15, which --resume continues from
long="$tiny --steps 30 --batch 4 --val-every 20 --checkpoint-every 10"
"$NORMSWEEP" train $long --out ref 2> logref || { cat logref >&2; fail "uninterrupted run"; }
hold_at step:15
"$NORMSWEEP" train $long --out int 2> logint &
pid=$!
hold_off
[ "$(wait_held $pid)" = $pid ] || fail "the training was not held"
kill -TERM $pid
wait $pid; rc=$?
[ $rc -eq 3 ] || { cat logint >&2; fail "SIGTERM: exit $rc, expected 3"; }
grep -q "stopping at step 15: checkpoint saved" logint || { cat logint >&2; fail "SIGTERM: not stopped at step 15"; }
[ -e int/model.safetensors ] && fail "model written despite SIGTERM"
"$NORMSWEEP" train $long --out int --resume 2> logres || { cat logres >&2; fail "--resume"; }
grep -q "resuming from .* at step 15$" logres || { cat logres >&2; fail "--resume did not start at step 15"; }
cmp ref/model.safetensors int/model.safetensors || fail "resumed model differs from the uninterrupted one"
echo "train_cli: ok"

#!/bin/sh
# campaign: campaign files (docs/SWEEP.md, "Campaigns"). (1) The shipped sweeps/models.yaml and
# sweeps/pythia-training.yaml validate here: exit 5, each model that cannot be had here named with
# the fetch that would download it, GPT-2 checked on its stand-in; `assets fetch` refuses an
# unconfirmed model by name. (2) A campaign's own mistakes (colliding output names, an unsafe id,
# output:, no models) and a grid one model cannot run exit 2 naming the model and the key, and
# write nothing. (3) The models of sweeps/models.yaml as random stand-ins of their real shapes
# (mkmodel presets, 2 layers each, GPT-2's vocabulary): one command runs them in file order, one
# output, journal and sweep file per model, campaign.json with each model's model_sha256 (equal
# to its output's) and state; each output equals its model's sweep run alone (data and every
# global attribute but the run's own); SIGTERM stops the campaign (exit 3, journal saved), --resume
# continues it to the same data, and a --resume of a finished campaign rewrites nothing.
# (4) postprocess/report --compare on the campaign directory: one column of verdicts per model,
# each model's verdicts those of its own single report, depth fractions (l + 0.5) / n.
. "$top_srcdir/tests/sweep_common.sh"
cd "$work" || fail "cd"
NORMSWEEP_OFFLINE=1; export NORMSWEEP_OFFLINE # no probe of Hugging Face: the same here as anywhere
REPORT="$top_srcdir/postprocess/report"

# ---- (1) the shipped campaign files ----
for f in models pythia-training; do
  "$NORMSWEEP" validate "$top_srcdir/sweeps/$f.yaml" > v.$f 2> e.$f; rc=$?
  [ $rc = 5 ] || { cat v.$f e.$f >&2; fail "validate $f.yaml exited $rc, not 5 (valid, models missing)"; }
done
grep -q "^\[gpt2\] model 1 of 4: gpt2" v.models || { cat v.models >&2; fail "models.yaml: gpt2 not first"; }
grep -q "model:  *gpt2-standin" v.models || { cat v.models >&2; fail "models.yaml: gpt2 not checked on its stand-in"; }
for m in pythia-160m smollm2-135m qwen2.5-0.5b; do
  grep -q "^\[$m\] not here, so checked by schema only: .normsweep assets fetch --accept-unconfirmed $m. would download it (from https://huggingface.co/.*), which cannot be done here: .*unconfirmed" v.models ||
    { cat v.models >&2; fail "validate models.yaml does not name $m as not here"; }
  grep -q "models.yaml:[0-9]*:[0-9]*: \[$m\] model '$m' is not here: .*unconfirmed" e.models ||
    { cat e.models >&2; fail "validate models.yaml: no FILE:LINE:COL problem for $m"; }
done
[ "$(grep -c '^\[pythia-160m_step[0-9]*\] not here, so' v.pythia-training)" = 6 ] ||
  { cat v.pythia-training >&2; fail "pythia-training.yaml: not 6 revisions named as not here"; }
grep -q "valid for the 1 of 4 models here; 3 cannot be had here" v.models || fail "no campaign verdict line"
"$NORMSWEEP" assets fetch pythia-160m@step1000 > f.out 2> f.err && fail "assets fetch of an unconfirmed model succeeded"
grep -q "SHA-256 is unconfirmed.*--accept-unconfirmed pythia-160m@step1000" f.err ||
  { cat f.err >&2; fail "assets fetch does not say why it refuses an unconfirmed model"; }

# ---- (2) mistakes, refused before any work ----
bad() { # bad NAME EXPECTED-REGEX: validate and run of NAME.yaml exit 2 with the message, no output
  "$NORMSWEEP" validate $1.yaml > /dev/null 2> bv.$1; rc=$?
  [ $rc = 2 ] || { cat bv.$1 >&2; fail "validate $1.yaml exited $rc, not 2"; }
  grep -q "$2" bv.$1 || { cat bv.$1 >&2; fail "validate $1.yaml: no message matching '$2'"; }
  "$NORMSWEEP" run $1.yaml > /dev/null 2> br.$1; rc=$?
  [ $rc = 2 ] || { cat br.$1 >&2; fail "run $1.yaml exited $rc, not 2"; }
  grep -q "$2" br.$1 || { cat br.$1 >&2; fail "run $1.yaml: no message matching '$2'"; }
  [ -e out.$1 ] && fail "run $1.yaml wrote out.$1"
  return 0
}
tail_yaml() { # the grid every campaign of this test shares
  cat <<YAML
corpus: $NS_TEST_CORPUS
shards: {count: 4, L_max: ${1:-64}}
grid: {L: [16, ${1:-64}], N: [1, 4], T: [0.5, 1], eps: [0.1], layers: all, heads: all}
rows: 2
output_dir: out.$2
YAML
}
{ printf 'models:\n  - %s\n  - %s/\n' "$NS_TEST_MODEL_DIR" "$work/x/gpt2-standin"; tail_yaml 64 collide; } > collide.yaml
bad collide "collide.yaml:3:5: models: '.*gpt2-standin/' gives the output name 'gpt2-standin', as '.*' (line 2) does"
{ printf 'models:\n  - {name: %s, id: ../up}\n' "$NS_TEST_MODEL_DIR"; tail_yaml 64 badid; } > badid.yaml
bad badid "badid.yaml:2:5: models.id: '../up' is not a safe name"
{ printf 'models: [%s]\noutput: o.nc\n' "$NS_TEST_MODEL_DIR"; tail_yaml 64 outkey; } > outkey.yaml
bad outkey "outkey.yaml:2:1: output: a campaign writes each model's output to OUTPUT_DIR/<id>/<id>.nc"
{ printf 'models: []\n'; tail_yaml 64 empty; } > empty.yaml
bad empty "empty.yaml:1:9: models: 0 models"
# a mistake in the text the models share: reported once, at its line in the campaign file
cat > schema.yaml <<YAML
models:
  - $NS_TEST_MODEL_DIR
  - {name: $work/x/y}
corpus: $NS_TEST_CORPUS
shards: {count: 4, L_max: 64}
grid: {L: [16, 64], N: [0, 4], T: [1], eps: [0.1], layers: all, heads: all}
output_dir: out.schema
YAML
bad schema "schema.yaml:6:25: grid.N: 0 is out of range"
[ "$(grep -c 'grid.N' bv.schema)" = 1 ] || { cat bv.schema >&2; fail "a shared mistake not reported once"; }

# ---- (3) stand-ins of the four models ----
mk() {
  id=$1; shift
  "$NORMSWEEP" mkmodel "$@" --layers 2 --seed 5 --out sm/$id > mk.log 2>&1 ||
    { cat mk.log >&2; fail "mkmodel $id"; }
}
mk gpt2 --preset gpt2
mk pythia-160m --preset pythia-160m --dtype f16
mk smollm2-135m --preset smollm2-135m --vocab 50257 --dtype bf16
mk qwen2.5-0.5b --preset qwen2.5-0.5b --vocab 50257 --dtype bf16
campaign() { # campaign NAME L_MAX: the four stand-ins in sweeps/models.yaml's order and ids
  { echo "models:"
    for m in gpt2 pythia-160m smollm2-135m qwen2.5-0.5b; do
      echo "  - {name: $work/sm/$m, tokenizer: $NS_TEST_TOKENIZER_DIR}"
    done
    echo "normalizer: [softmax, sparsemax]"
    tail_yaml $2 $1; } > $1.yaml
}
campaign toolong 2048   # gpt2's context is 1024: only it is refused, by id and key
"$NORMSWEEP" validate toolong.yaml > tv 2> te && fail "validate toolong.yaml exited 0"
grep -q "toolong.yaml:[0-9]*:[0-9]*: \[gpt2\] shards.L_max: 2048 exceeds the context" te ||
  { cat te >&2; fail "toolong: gpt2's L_max problem not named"; }
grep '\] ' te | grep -v '\[gpt2\]' && { cat te >&2; fail "toolong: problems for models that can run it"; }
grep -q "1 of the 4 models of toolong.yaml have problems" te || fail "toolong: no count of models"

campaign a 64
"$NORMSWEEP" validate a.yaml > va 2> ea || { cat va ea >&2; fail "validate a.yaml"; }
for m in gpt2 pythia-160m smollm2-135m qwen2.5-0.5b; do
  grep -q "^\[$m\] model" va || fail "validate a.yaml: no summary for $m"
done
[ "$(grep -c '  time:  ' va)" = 4 ] || { cat va >&2; fail "validate: not one time estimate per model"; }
[ "$(grep -c '  memory:  ' va)" = 4 ] || fail "validate: not one memory estimate per model"
run_np 2 a.yaml 2> la || { cat la >&2; fail "campaign a exited $?"; }
ids="gpt2 pythia-160m smollm2-135m qwen2.5-0.5b"
[ "$(sed -n 's/.*campaign a.yaml: model \([0-9]\) of 4: \([^ ]*\) .*/\1 \2/p' la | tr '\n' ' ')" = \
  "1 gpt2 2 pythia-160m 3 smollm2-135m 4 qwen2.5-0.5b " ] || { cat la >&2; fail "models not run in file order"; }
/usr/bin/python3 - out.a $ids <<'PY' || fail "campaign.json"
import json, sys, subprocess
d = json.load(open(sys.argv[1] + "/campaign.json"))
assert d["format"] == "normsweep-campaign-1", d["format"]
assert [m["id"] for m in d["models"]] == sys.argv[2:], d["models"]
for m in d["models"]:
    assert m["state"] == "done", m
    assert m["output"] == "%s/%s/%s.nc" % (sys.argv[1], m["id"], m["id"]), m
    hdr = subprocess.run(["ncdump", "-h", m["output"]], capture_output=True, text=True).stdout
    want = ':model_sha256 = "%s"' % m["model_sha256"]
    assert len(m["model_sha256"]) == 64 and want in hdr, (m, "model_sha256 differs from the output's")
PY
for m in $ids; do
  [ -f out.a/$m/checkpoint/journal.nsj ] || fail "no journal for $m"
  grep -q "^output: \"out.a/$m/$m.nc\"" out.a/$m/$m.yaml || fail "$m.yaml does not name its output"
done
cmp -s a.yaml out.a/campaign.yaml || fail "out.a/campaign.yaml is not the campaign file"
# the architectures recorded, as the models are
ncdump -h out.a/smollm2-135m/smollm2-135m.nc | grep -q ':model_num_key_value_heads = 3LL' ||
  fail "smollm2 stand-in: 3 key/value heads not recorded"
ncdump -h out.a/pythia-160m/pythia-160m.nc | grep -q ':model_architecture = "gpt_neox"' ||
  fail "pythia stand-in: architecture not recorded"

# each model's output = its sweep file run alone (data, and every global attribute but the run's
# own: times, command line, history)
globals() {
  ncdump -h "$1" | sed -n '/^\/\/ global attributes:/,$p' |
    grep -v -e ':start_time = ' -e ':end_time = ' -e ':command_line = ' -e ':history = ' \
            -e ':date_created = ' -e '^netcdf '
}
for m in pythia-160m qwen2.5-0.5b; do # alone: the same command on the same paths, the
  mv out.a/$m/$m.nc camp.$m.nc && mv out.a/$m/checkpoint ck.camp.$m || fail "mv" # campaign's aside
  run_np 2 out.a/$m/$m.yaml 2> l.alone || { cat l.alone >&2; fail "$m alone exited $?"; }
  same_data camp.$m.nc out.a/$m/$m.nc "$m: campaign vs alone"
  globals camp.$m.nc > g1; globals out.a/$m/$m.nc > g2
  cmp -s g1 g2 || { diff g1 g2 >&2; fail "$m: global attributes differ from the sweep run alone"; }
  rm -rf out.a/$m/checkpoint && mv camp.$m.nc out.a/$m/$m.nc && mv ck.camp.$m out.a/$m/checkpoint ||
    fail "mv back"
done

# SIGTERM in the second model, then --resume: the same data; a second --resume writes nothing
campaign b 64
hold_at journal:2
"$NORMSWEEP" b.yaml 2> lb1 &
pid=$!
hold_off
held=$(wait_held $pid) || exit 1
# held in model 1 (gpt2) with 2 of its 4 tasks in the journal
kill -TERM "$held"
wait $pid; rc=$?
[ $rc = 3 ] || { cat lb1 >&2; fail "a stopped campaign exited $rc, not 3"; }
grep -q "normsweep run --resume b.yaml continues it" lb1 || { cat lb1 >&2; fail "no resume hint"; }
/usr/bin/python3 -c "
import json; d = json.load(open('out.b/campaign.json'))
s = [m['state'] for m in d['models']]
assert s == ['interrupted', 'pending', 'pending', 'pending'], s" || fail "states after SIGTERM"
"$REPORT" --compare out.b --out repb > /dev/null 2> rb && fail "report --compare of an unfinished campaign exited 0"
grep -q "model gpt2 is interrupted, not done" rb || { cat rb >&2; fail "report --compare: unfinished model not named"; }
run_np 2 b.yaml 2> lb2 && fail "a campaign run again without --resume exited 0"
grep -q "holds a campaign: pass --resume" lb2 || { cat lb2 >&2; fail "no --resume message"; }
run_np 2 b.yaml --resume 2> lb3 || { cat lb3 >&2; fail "resumed campaign exited $?"; }
grep -q "model 1 of 4: gpt2 (.*), resumed" lb3 || { cat lb3 >&2; fail "gpt2 not resumed"; }
for m in $ids; do same_data out.a/$m/$m.nc out.b/$m/$m.nc "$m: resumed vs uninterrupted"; done
for m in $ids; do cp out.b/$m/$m.nc before.$m.nc; done
run_np 2 b.yaml --resume 2> lb4 || { cat lb4 >&2; fail "resume of a finished campaign exited $?"; }
[ "$(grep -c 'already complete' lb4)" = 4 ] || { cat lb4 >&2; fail "finished models not kept"; }
for m in $ids; do cmp -s before.$m.nc out.b/$m/$m.nc || fail "$m rewritten by a --resume of a finished campaign"; done
sed 's/T: \[0.5, 1\]/T: [0.25, 1]/' b.yaml > b2.yaml && cp b2.yaml b.yaml
run_np 1 b.yaml --resume 2> lb5 && fail "--resume of another campaign text exited 0"
grep -q "not the campaign out.b started with" lb5 || { cat lb5 >&2; fail "changed campaign not refused"; }

# ---- (4) side by side ----
"$REPORT" --compare out.a --out rep --format png > rc.out 2> rc.err || { cat rc.err >&2; fail "report --compare exited $?"; }
for m in gpt2 qwen2.5-0.5b; do
  "$REPORT" out.a/$m/$m.nc --out single.$m --format png > /dev/null 2> rs.err ||
    { cat rs.err >&2; fail "single report of $m"; }
done
/usr/bin/python3 - $ids <<'PY' || fail "report --compare's report.json"
import json, sys, os
rep = json.load(open("rep/report.json"))
ids = sys.argv[1:]
assert [m["label"] for m in rep["models"]] == ids, [m["label"] for m in rep["models"]]
assert len(set(rep["colors"].values())) == 4, rep["colors"]
for m in rep["models"]:
    assert m["num_layers"] == 2 and m["depth_fractions"] == [0.25, 0.75], m["depth_fractions"]
kv = {m["label"]: m["num_key_value_heads"] for m in rep["models"]}
assert kv == {"gpt2": 12, "pythia-160m": 12, "smollm2-135m": 3, "qwen2.5-0.5b": 2}, kv
for mid in ("gpt2", "qwen2.5-0.5b"):
    single = json.load(open("single.%s/report.json" % mid))["claims"]
    mine = [m for m in rep["models"] if m["label"] == mid][0]["claims"]
    assert [c["id"] for c in single] == [c["id"] for c in mine]
    for a, b in zip(single, mine):
        for k in ("verdict", "estimate", "ci_low", "ci_high", "threshold"):
            assert a[k] == b[k], (mid, a["id"], k, a[k], b[k])
    assert [c["verdicts"][mid] for c in rep["claims"]] == [c["verdict"] for c in single]
for f in rep["figures"]:
    assert os.path.getsize("rep/%s.png" % f) > 0
assert rep["figures"] == ["figc1_against_L", "figc2_against_depth"], rep["figures"]
PY
grep -q "<th>smollm2-135m</th>" rep/report.html || fail "report.html: no column for smollm2-135m"
echo "campaign: ok"

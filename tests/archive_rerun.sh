#!/bin/sh
# archive_rerun: an archive a referee can rerun on another machine (issue 34). A stand-in run -- the
# sweep names gpt2, which is not available here, so the run falls back to gpt2-standin -- archived
# full (with its journal) and lean with its model (--lean --with-model), then taken to "another
# machine": another directory, another asset cache and mirror, another asset manifest, on which
# gpt2 CAN be had (a random model of the stand-in's shape under that name).
#  1. README.txt pins the model used: its command runs gpt2-standin there and gives the archived
#     data (nc_datadump equal); the sweep run without the pin computes the other gpt2 (data
#     differ); a pin with another SHA-256 or another name is refused (exit 2, nothing written).
#  2. Both archives verify PASS there: the full one with the stand-in in that machine's mirror
#     (the journal reduced, 3 tasks recomputed), the lean one with nothing holding the stand-in
#     but the archive itself (every task recomputed; the model read from the archive).
#  3. The same archives with `model:` changed in their sweep fail: sweep.yaml alone, and
#     sweep.yaml with the NetCDF's sweep_yaml (and sizes and manifest) redone; and the lean
#     archive whose packed model.safetensors was replaced by another fails.
#  4. README.txt of an archive without the model names each file of it with size and SHA-256,
#     and the lean archive holds no journal.
#  5. An archive of format 2 (before the pin: its README.txt and provenance.json as normsweep
#     wrote them then) still verifies.
set -u
: "${NORMSWEEP:?run through make check}" "${top_srcdir:?}" "${top_builddir:?}" \
  "${NS_TEST_TOKENIZER_DIR:?}" "${NS_TEST_CORPUS:?}" "${NS_TEST_MODEL_DIR:?}"
PY=${PYTHON_DEBIAN:-python3}
work=$(mktemp -d "${TMPDIR:-/tmp}/ns_rerun_test.XXXXXX") || exit 1
trap '[ -n "${NS_KEEP:-}" ] || rm -rf "$work"' EXIT
fails=0
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }
cd "$work" || exit 1
# never the network: gpt2 is then not available (the run falls back) and nothing is probed
NORMSWEEP_OFFLINE=1; export NORMSWEEP_OFFLINE
datadump="$top_builddir/tests/nc_datadump"

# expect CODE PATTERN CMD...: exit status CODE and output (stdout+stderr) containing PATTERN
expect() {
  want=$1 pat=$2
  shift 2
  "$@" >out.txt 2>&1
  got=$?
  [ "$got" = "$want" ] || { fail "$* exited $got, want $want"; sed 's/^/  | /' out.txt; return; }
  grep -qF -- "$pat" out.txt || { fail "$*: output lacks '$pat'"; sed 's/^/  | /' out.txt; }
}

# ---- machine A: the run, with the test suite's assets -----------------------------------------
mkdir a && cat > a/tiny.yaml <<EOF
model: gpt2
tokenizer: tokenizer
corpus: war_and_peace
shards: {count: 4, L_max: 32}
grid:
  L: [8, 32]
  N: [1, 4]
  T: [0.5, 1.0]
  eps: [1.0e-3]
  layers: [0, 3]
  heads: [1, 2]
normalizer: [softmax, sparsemax]
rows: 2
seed: 3
output: runs/tiny/tiny.nc
checkpoint_dir: runs/tiny/checkpoint
EOF
(cd a && "$NORMSWEEP" tiny.yaml 2> run.log) || { cat a/run.log; echo "FAIL: the sweep did not run"; exit 1; }
if ! grep -q 'falling back to "gpt2-standin"' a/run.log; then
  echo "SKIP: gpt2 itself is available here, so the run did not fall back to the stand-in"
  exit 77
fi
(cd a && "$NORMSWEEP" archive runs/tiny --out full.tar.gz -q &&
   "$NORMSWEEP" archive runs/tiny --out lean.tar.gz --lean --with-model -q) ||
  { echo "FAIL: archive"; exit 1; }
standin_sha=$(sha256sum "$NS_TEST_MODEL_DIR/model.safetensors" | cut -d' ' -f1)

# ---- 4. what the archives hold ----------------------------------------------------------------
tar tzf a/full.tar.gz > full.txt && tar tzf a/lean.tar.gz > lean.txt || fail "tar cannot list"
grep -qx "full/checkpoint/journal.nsj" full.txt || fail "the full archive lacks the journal"
grep -q "journal" lean.txt && fail "the lean archive holds a journal: $(grep journal lean.txt)"
grep -qx "lean/checkpoint/history" lean.txt || fail "the lean archive lacks checkpoint/history"
grep -qx "lean/model/gpt2-standin/model.safetensors" lean.txt ||
  fail "the lean archive lacks the model (--with-model)"
grep -q "model/" full.txt && fail "the archive without --with-model holds model files"
tar xzf a/full.tar.gz -O full/README.txt > full_readme.txt
for f in config.json model.safetensors vocab.json merges.txt; do
  sha=$(sha256sum "$NS_TEST_MODEL_DIR/$f" | cut -d' ' -f1)
  size=$(wc -c < "$NS_TEST_MODEL_DIR/$f")
  grep -q "gpt2-standin/$f  *$size bytes  sha256 $sha" full_readme.txt ||
    fail "README.txt does not name gpt2-standin/$f with $size bytes and sha256 $sha"
done
grep -q "run --model-pin gpt2-standin@$standin_sha sweep.yaml" full_readme.txt ||
  { fail "README.txt's command does not pin gpt2-standin@$standin_sha"; cat full_readme.txt; }
grep -q "the fallback of gpt2, which the sweep names" full_readme.txt ||
  fail "README.txt does not say the run used the fallback of the sweep's model"

# ---- machine B: another directory, asset cache, mirror and manifest; gpt2 can be had ----------
mkdir -p b/mirror/gpt2 b/cache
"$NORMSWEEP" mkmodel --layers 4 --heads 4 --embd 128 --ctx 64 --vocab 50257 --seed 7 \
  --out b/mirror/gpt2 > /dev/null 2>&1 || fail "mkmodel"
cp "$NS_TEST_MODEL_DIR/vocab.json" "$NS_TEST_MODEL_DIR/merges.txt" b/mirror/gpt2/
cp "$NS_TEST_TOKENIZER_DIR/encoder.json" "$NS_TEST_TOKENIZER_DIR/vocab.bpe" "$NS_TEST_CORPUS" b/mirror/
# B's manifest: this build's, with gpt2's files those of the mirror's model
"$PY" - "$top_srcdir/assets/manifest.json" b/mirror b/manifest.json <<'PYEOF'
import hashlib, json, os, sys
m = json.load(open(sys.argv[1]))
for s in m['sets']:
    if s['name'] == 'gpt2':
        for f in s['files']:
            p = os.path.join(sys.argv[2], f['mirror_path'])
            f['sha256'] = hashlib.sha256(open(p, 'rb').read()).hexdigest()
            f['size'] = os.path.getsize(p)
json.dump(m, open(sys.argv[3], 'w'), indent=2)
PYEOF
cp a/full.tar.gz a/lean.tar.gz b/
# onb DIR CMD...: CMD on machine B, in b/DIR
onb() {
  d=$1
  shift
  (cd "$work/b/$d" && env NORMSWEEP_ASSETS="$work/b/cache" NORMSWEEP_MIRROR="$work/b/mirror" \
     NORMSWEEP_MANIFEST="$work/b/manifest.json" PATH="$(dirname "$NORMSWEEP"):$PATH" "$@")
}

# ---- 2. both archives verify on B -------------------------------------------------------------
# the lean one: nothing on B holds the stand-in but the archive
expect 0 "verify: PASS" onb . "$NORMSWEEP" verify lean.tar.gz
for p in "INFO model: the archive carries it (model/)" "PASS model gpt2-standin: SHA-256 matches" \
         "all 4 tasks recomputed from the model" "INFO recompute: every task was (the archive is lean)" \
         "PASS numbers: every variable of tiny.nc"; do
  grep -qF "$p" out.txt || fail "lean verify on B: no '$p'"
done
[ -e b/cache/gpt2-standin ] && fail "verify of the lean archive put the stand-in into B's cache"
# the full one: B's mirror must hold the stand-in (copied: another mirror than A's)
mkdir -p b/mirror/gpt2-standin && cp "$NS_TEST_MODEL_DIR"/* b/mirror/gpt2-standin/
expect 0 "verify: PASS" onb . "$NORMSWEEP" verify full.tar.gz
grep -q "^PASS journal: all 4 tasks recorded" out.txt || fail "full verify on B: the journal"
[ "$(grep -c '^PASS task' out.txt)" = 3 ] || fail "full verify on B: 3 tasks recomputed"
grep -qF "INFO model: the sweep asked for gpt2; the run used its fallback gpt2-standin" out.txt ||
  fail "full verify on B: the fallback is not named"
rm -r b/mirror/gpt2-standin b/cache/gpt2-standin

# ---- 1. README.txt's recipe on B --------------------------------------------------------------
mkdir b/x && tar xzf b/lean.tar.gz -C b/x || fail "extract"
# the commands README.txt gives: the model into the cache, then the run (its launcher dropped:
# one process gives the same data)
fetch_cmd=$(sed -n 's/^ *\(NORMSWEEP_MANIFEST=.* normsweep assets fetch gpt2-standin .*\)$/\1/p' b/x/lean/README.txt)
run_cmd=$(sed -n '/^3\. Run/,/^4\./p' b/x/lean/README.txt | tr '\n' ' ' |
  sed 's/\\ */ /g; s/^.*\(normsweep run .*rerun\/checkpoint\).*$/\1/' | tr -s ' ')
case "$fetch_cmd" in *"assets fetch gpt2-standin --mirror model"*) ;; *) fail "README.txt: no fetch command for the packed model ('$fetch_cmd')" ;; esac
case "$run_cmd" in "normsweep run --model-pin gpt2-standin@$standin_sha sweep.yaml --output rerun/tiny.nc --checkpoint-dir rerun/checkpoint") ;;
  *) fail "README.txt: unexpected run command '$run_cmd'"; sed -n '/^REPRODUCE/,$p' b/x/lean/README.txt ;; esac
onb x/lean sh -c "$fetch_cmd" > fetch.log 2>&1 || { cat fetch.log; fail "README's fetch command"; }
onb x/lean sh -c "$run_cmd" > rerun.log 2>&1 || { cat rerun.log; fail "README's run command"; }
grep -q "pinned to its fallback 'gpt2-standin'" rerun.log || fail "the rerun does not say it is pinned"
"$datadump" a/runs/tiny/tiny.nc > d_a.txt && "$datadump" b/x/lean/rerun/tiny.nc > d_pin.txt ||
  fail "nc_datadump"
cmp -s d_a.txt d_pin.txt || fail "the pinned rerun's data differ from the archived run's"
# without the pin the sweep computes B's gpt2: other data, recorded as gpt2
onb x/lean "$NORMSWEEP" run sweep.yaml --output nopin/tiny.nc --checkpoint-dir nopin/ck \
  > nopin.log 2>&1 || { cat nopin.log; fail "the run without the pin"; }
"$datadump" b/x/lean/nopin/tiny.nc > d_nopin.txt || fail "nc_datadump"
cmp -s d_a.txt d_nopin.txt && fail "without the pin B's gpt2 gave the stand-in's data"
grep -q "falling back" nopin.log && fail "without the pin, B's gpt2 was not used"
# a pin that does not fit: another SHA-256, another name (nothing written)
other=$(printf '%064d' 7)
expect 2 "the model pin (--model-pin) wants $other" onb x/lean "$NORMSWEEP" run \
  --model-pin "gpt2-standin@$other" sweep.yaml --output bad/tiny.nc --checkpoint-dir bad/ck
expect 2 "'gpt2' (" onb x/lean "$NORMSWEEP" validate --model-pin "gpt2@$standin_sha" sweep.yaml
grep -q "has sha256 .*the model pin (--model-pin) wants $standin_sha" out.txt ||
  fail "a pin on gpt2 with the stand-in's SHA-256 is not refused for its SHA-256"
expect 2 "not the fallback of \"gpt2\"" onb x/lean "$NORMSWEEP" run \
  --model-pin "tokenizer@$standin_sha" sweep.yaml --output bad/tiny.nc --checkpoint-dir bad/ck
expect 2 "expected [NAME@]SHA256" onb x/lean "$NORMSWEEP" run --model-pin "gpt2-standin@123" sweep.yaml
[ -e b/x/lean/bad ] && fail "a refused pin left b/x/lean/bad"

# ---- 3. model: changed in the sweep -----------------------------------------------------------
# edit ARCHIVE OUT WHAT: ARCHIVE with its sweep's model: gpt2 -> gpt2-standin (the model the run
# used): in sweep.yaml only (WHAT=yaml), or also in the NetCDF's sweep_yaml with the sizes and
# the manifest redone (WHAT=both)
edit() {
  rm -rf e && mkdir e && tar xzf "$1" -C e || fail "extract $1"
  top=$(ls e)
  sed -i 's/^model: gpt2$/model: gpt2-standin/' "e/$top/sweep.yaml"
  if [ "$3" = both ]; then
    "$PY" - "e/$top/tiny.nc" "e/$top/sweep.yaml" <<'PYEOF' || fail "netCDF4 edit"
import netCDF4, sys
ds = netCDF4.Dataset(sys.argv[1], 'r+')
ds.setncattr('sweep_yaml', open(sys.argv[2]).read())
ds.close()
PYEOF
  fi
  "$PY" "$top_srcdir/tests/archive_reseal.py" "e/$top" || fail "reseal"
  tar czf "$2" -C e "$top" || fail "repack"
}
for arc in full lean; do
  edit "b/$arc.tar.gz" "b/$arc-m1.tar.gz" yaml
  expect 4 "FAIL sweep.yaml: differs from the sweep_yaml attribute" onb . "$NORMSWEEP" verify "$arc-m1.tar.gz"
  edit "b/$arc.tar.gz" "b/$arc-m2.tar.gz" both
  expect 4 "verify: FAIL" onb . "$NORMSWEEP" verify "$arc-m2.tar.gz"
  grep -q "^FAIL attributes: model_requested is \"gpt2\"" out.txt ||
    { fail "$arc, model: edited: model_requested not named"; sed 's/^/  | /' out.txt; }
done
# the lean archive's model replaced by B's gpt2 (the archive resealed): its SHA-256 is not the
# recorded one, nor the one the archived asset manifest lists for gpt2-standin
rm -rf e && mkdir e && tar xzf b/lean.tar.gz -C e
cp b/mirror/gpt2/model.safetensors e/lean/model/gpt2-standin/model.safetensors
"$PY" "$top_srcdir/tests/archive_reseal.py" e/lean && tar czf b/lean-m3.tar.gz -C e lean || fail "repack"
expect 4 "FAIL model gpt2-standin: cannot be resolved" onb . "$NORMSWEEP" verify lean-m3.tar.gz

# ---- 5. an archive of the previous format (2: no pin in README.txt, no model_files) verifies -----
rm -rf e && mkdir e && tar xzf b/full.tar.gz -C e
"$PY" - e/full <<'PYEOF' || fail "format-2 conversion"
import json, os, sys
top = sys.argv[1]
p = os.path.join(top, 'provenance.json')
prov = json.load(open(p))
prov['format'] = 'normsweep-archive-2'
del prov['files']['model_files']
open(p, 'w').write(json.dumps(prov, indent=2, ensure_ascii=False))
r = os.path.join(top, 'README.txt')
text = open(r).read()
run = prov['run']
text = text[:text.index('\nREPRODUCE\n')] + (
    "\nREPRODUCE\n"
    "1. Build normsweep %s (git %s) as its README says; `normsweep --version` tells.\n"
    "2. Make the inputs available with the SHA-256 above: `normsweep assets fetch` (the\n"
    "   manifest assets-manifest.json says where each file comes from), or a mirror directory\n"
    "   (NORMSWEEP_MIRROR).\n"
    "3. Run, from the extracted directory:\n"
    "     normsweep run sweep.yaml --output tiny.nc --checkpoint-dir checkpoint-again\n"
    "   (any number of ranks gives the same data; `--resume` continues an interrupted run).\n"
    "4. Compare the data with the archived tiny.nc (e.g. with verify, or ncdump of both).\n"
    % (run['normsweep_version'], run['git_commit']))
open(r, 'w').write(text)
PYEOF
"$PY" "$top_srcdir/tests/archive_reseal.py" e/full && tar czf b/full-v2.tar.gz -C e full || fail "repack"
mkdir -p b/mirror/gpt2-standin && cp "$NS_TEST_MODEL_DIR"/* b/mirror/gpt2-standin/
expect 0 "verify: PASS" onb . "$NORMSWEEP" verify full-v2.tar.gz --sample 1
grep -q "^PASS README.txt" out.txt || fail "format 2: README.txt not checked"

[ "$fails" -eq 0 ] || { echo "$fails failure(s)"; exit 1; }
echo "archive_rerun: all checks passed"

#!/bin/sh
# archive_forge: forged provenance fails `normsweep verify`. Archives of a tiny sweep whose NetCDF
# attributes, provenance.json or README.txt were edited consistently -- the member sizes in
# provenance.json and README.txt and every line of MANIFEST.sha256 redone, re-tarred, so that
# only the claim itself is false -- fail (exit 4) naming what changed: the model a stand-in run
# claims as gpt2, ks_alpha, rows, corpus_tokens, metrics_version, a variable's long_name and
# units, an attribute or variable normsweep does not write, a removed attribute, the run's
# history, start time and rank count, provenance.json's fields and README.txt's facts. The honest
# archive passes and verify lists by name every attribute it cannot check.
set -u
: "${NORMSWEEP:?run through make check}" "${top_srcdir:?}" "${NS_TEST_TOKENIZER_DIR:?}" "${NS_TEST_CORPUS:?}"
PY=${PYTHON_DEBIAN:-python3}
work=$(mktemp -d "${TMPDIR:-/tmp}/ns_forge_test.XXXXXX") || exit 1
trap '[ -n "${NS_KEEP:-}" ] || rm -rf "$work"' EXIT
fails=0
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }
cd "$work" || exit 1
# never the network: gpt2 is then not available and the run falls back to gpt2-standin
NORMSWEEP_OFFLINE=1; export NORMSWEEP_OFFLINE

# expect CODE PATTERN CMD...: exit status CODE and output (stdout+stderr) containing PATTERN
expect() {
  want=$1 pat=$2
  shift 2
  "$@" >out.txt 2>&1
  got=$?
  [ "$got" = "$want" ] || { fail "$* exited $got, want $want"; sed 's/^/  | /' out.txt; return; }
  grep -qF -- "$pat" out.txt || { fail "$*: output lacks '$pat'"; sed 's/^/  | /' out.txt; }
}

cat > tiny.yaml <<EOF
model: gpt2
tokenizer: $NS_TEST_TOKENIZER_DIR
corpus: $NS_TEST_CORPUS
shards: {count: 3, L_max: 16}
grid:
  L: [8, 16]
  N: [1, 4]
  T: [0.5, 1.0]
  eps: [1.0e-3]
  layers: [0, 3]
  heads: [1]
normalizer: [softmax, sparsemax]
rows: 2
seed: 3
output: runs/tiny/tiny.nc
checkpoint_dir: runs/tiny/checkpoint
EOF
"$NORMSWEEP" tiny.yaml 2> sweep.log || { cat sweep.log; echo "FAIL: the sweep did not run"; exit 1; }
if ! grep -q 'falling back to "gpt2-standin"' sweep.log; then
  echo "SKIP: gpt2 itself is available here, so the run did not fall back to the stand-in"
  exit 77
fi
cp sweep.log runs/tiny/run.log
cp runs/tiny/checkpoint/history hist.txt
"$NORMSWEEP" archive runs/tiny --out arc.tar.gz -q || { echo "FAIL: archive"; exit 1; }

# ---- the honest archive passes and lists what it cannot check ---------------------------------
expect 0 "verify: PASS" "$NORMSWEEP" verify arc.tar.gz --sample 1
cp out.txt honest.txt
for p in "PASS attributes: tiny.nc holds exactly the" "PASS provenance.json: " "PASS README.txt: "; do
  grep -qF "$p" honest.txt || fail "honest archive: no '$p' line"
done
# every attribute verify cannot recompute is named, with the reason
for a in history start_time end_time command_line mpi_size institution executable_sha256 \
         compiler cflags blas mpi_library netcdf_version hdf5_version os sweep_file model_path \
         shard_forward_count; do
  grep "^INFO not checked" honest.txt | grep -qw -- "$a" ||
    { fail "honest archive: '$a' is not in the list of what verify did not check"; }
done
grep "^INFO not checked" honest.txt | grep -q "provenance.json: created, archiver, machine" ||
  fail "honest archive: provenance.json's unchecked fields are not listed"
grep "^INFO not checked" honest.txt | grep -q "logs/run.log" ||
  fail "honest archive: the log (not checked beyond its SHA-256) is not listed"
# and every attribute it checks is not in that list
for a in model_used model_fallback ks_alpha rows corpus_tokens metrics_version title comment; do
  grep "^INFO not checked" honest.txt | grep -qw -- "$a" && fail "'$a' is listed as not checked"
done

# forge.py TOP EDIT...: edits of the extracted archive TOP, each its fields separated by '|':
# nc|NAME|TYPE|VALUE[|VAR] (TYPE text, int, int64, double, or del to remove it), ncvar|NAME (an
# extra variable), json|DOTTED.KEY|JSON-VALUE (provenance.json), readme|OLD|NEW (README.txt),
# rm|MEMBER (removed, and from provenance.json's and README.txt's lists), sub|MEMBER|OLD|NEW.
cat > forge.py <<'PYEOF'
import json, os, sys
import numpy as np, netCDF4
top = sys.argv[1]
edits = [e.split('|') for e in sys.argv[2:]]
prov_path = os.path.join(top, 'provenance.json')
prov = json.load(open(prov_path))
nc = os.path.join(top, prov['files']['netcdf'])
for e in edits:
    kind = e[0]
    if kind == 'nc':
        name, typ, value = e[1], e[2], e[3]
        ds = netCDF4.Dataset(nc, 'r+')
        obj = ds.variables[e[4]] if len(e) > 4 else ds
        if typ == 'del':
            obj.delncattr(name)
        else:
            v = {'text': str, 'int': np.int32, 'int64': np.int64, 'double': np.float64}[typ](value)
            obj.setncattr(name, v)
        ds.close()
    elif kind == 'ncvar':
        ds = netCDF4.Dataset(nc, 'r+')
        v = ds.createVariable(e[1], 'f8', ('L',))
        v[:] = np.arange(len(ds.dimensions['L']))
        ds.close()
    elif kind == 'json':
        keys, val = e[1].split('.'), json.loads(e[2])
        o = prov
        for k in keys[:-1]:
            o = o[k]
        o[keys[-1]] = val
    elif kind == 'rm':  # a member removed, and from the lists that name it
        os.remove(os.path.join(top, e[1]))
        prov['files']['members'] = [m for m in prov['files']['members'] if m['member'] != e[1]]
        p = os.path.join(top, 'README.txt')
        t = open(p).read().split('\n')
        open(p, 'w').write('\n'.join(l for l in t if not l.startswith('  %s ' % e[1])))
    elif kind == 'sub':  # text replaced in any member
        p = os.path.join(top, e[1])
        t = open(p).read()
        assert e[2] in t, e[2]
        open(p, 'w').write(t.replace(e[2], e[3]))
    elif kind == 'readme':
        p = os.path.join(top, 'README.txt')
        t = open(p).read()
        assert e[1] in t, e[1]
        open(p, 'w').write(t.replace(e[1], e[2]))
open(prov_path, 'w').write(json.dumps(prov, indent=2, ensure_ascii=False))
PYEOF
# forge EDIT...: extract arc.tar.gz into f/, apply the edits, redo every size and the manifest
# (tests/archive_reseal.py), re-tar into f.tar.gz
forge() {
  rm -rf f f.tar.gz && mkdir f && tar xzf arc.tar.gz -C f || { fail "extract"; return 1; }
  "$PY" forge.py f/arc "$@" && "$PY" "$top_srcdir/tests/archive_reseal.py" f/arc ||
    { fail "forge $*"; return 1; }
  tar czf f.tar.gz -C f arc || fail "repack"
}
# forged EDIT... -- PATTERN...: verify of the forged archive exits 4, its redone manifest passes,
# and its output holds every PATTERN
us=$(printf '\037') # separates the edits (which may hold newlines)
forged() {
  edits=
  while [ $# -gt 0 ] && [ "$1" != "--" ]; do edits="$edits$1$us"; shift; done
  shift
  what=$(printf '%s' "$edits" | tr '\037\n' '  ')
  (set -f; IFS=$us; forge $edits) || return
  "$NORMSWEEP" verify f.tar.gz --sample 0 > out.txt 2>&1
  got=$?
  [ "$got" = 4 ] || { fail "forged ($what): verify exited $got, want 4"; sed 's/^/  | /' out.txt; return; }
  grep -q "^PASS manifest" out.txt ||
    { fail "forged ($what): the redone manifest does not pass"; sed 's/^/  | /' out.txt; }
  for p in "$@"; do
    grep -qF -- "$p" out.txt || { fail "forged ($what): output lacks '$p'"; sed 's/^/  | /' out.txt; }
  done
}

# ---- the issue's forgery: the stand-in run claimed as gpt2 ---------------------------------------
standin=$(sha256sum "$NS_TEST_MODEL_DIR/model.safetensors" | cut -d' ' -f1)
forged 'nc|model_used|text|gpt2' 'nc|model_fallback|text|false' -- \
  "FAIL model gpt2: the recorded SHA-256 $standin is not gpt2's: assets-manifest.json lists 248dfc39" \
  'FAIL attributes: model_used is "gpt2"; the sweep, its inputs and journal give "gpt2-standin"' \
  'FAIL attributes: model_fallback is "false"; the sweep, its inputs and journal give "true"' \
  'FAIL provenance.json: inputs.model.used is "gpt2-standin"; tiny.nc says "gpt2"' \
  'FAIL README.txt: line '
grep -q "^PASS model gpt2: SHA-256 matches" out.txt && fail "the forged model still passes as gpt2"
# ... with the title, source and comment made to match, and README.txt and provenance.json too
forged 'nc|model_used|text|gpt2' 'nc|model_fallback|text|false' \
  'nc|title|text|normsweep sweep: limitations of normalization in attention (arXiv 2508.17821) on gpt2' \
  'nc|comment|text|every variable is defined in docs/METRICS.md (version 2)' \
  'json|inputs.model.used|"gpt2"' \
  'readme|gpt2-standin (requested gpt2; fallback true)|gpt2 (requested gpt2; fallback false)' \
  'readme|on gpt2-standin|on gpt2' -- \
  'FAIL attributes: model_used is "gpt2"' 'FAIL attributes: model_fallback is "false"' \
  'FAIL attributes: title is "normsweep sweep: limitations of normalization in attention (arXiv 2508.17821) on gpt2"; the sweep, its inputs and journal give "normsweep sweep: limitations of normalization in attention (arXiv 2508.17821) on gpt2-standin"' \
  'FAIL attributes: comment is "every variable is defined in docs/METRICS.md (version 2)"; the sweep, its inputs and journal give "CAVEAT: the model requested (gpt2) was not available' \
  "FAIL model gpt2: the recorded SHA-256 $standin is not gpt2's"

# ---- other attributes: each edit fails naming the attribute --------------------------------------
forged 'nc|ks_alpha|double|0.05' -- 'FAIL attributes: ks_alpha is 0.05; the sweep, its inputs and journal give 0.01'
forged 'nc|rows|int64|3' -- 'FAIL attributes: rows is 3; the sweep, its inputs and journal give 2'
forged 'nc|corpus_tokens|int64|1000000' -- 'FAIL attributes: corpus_tokens is 1000000; the sweep, its inputs and journal give '
forged 'nc|metrics_version|int|3' -- 'FAIL attributes: metrics_version is 3; the sweep, its inputs and journal give 2'
forged 'nc|long_name|text|mean of the distance to GPT-2|distance_mean' -- \
  'FAIL attributes: distance_mean:long_name is "mean of the distance to GPT-2"; the sweep, its inputs and journal give "mean over rows of Theorem 1 distance'
forged 'nc|units|text|m|jac_exact_mean' -- 'FAIL attributes: jac_exact_mean:units is "m"; the sweep, its inputs and journal give "1"'
# a type change with the same digits is a change
forged 'nc|rows|int|2' -- 'FAIL attributes: rows is a 32-bit integer 2; the sweep, its inputs and journal give a 64-bit integer 2'
forged 'nc|sphere|text|false' -- 'FAIL attributes: sphere is "false"; the sweep, its inputs and journal give "true"'
forged 'nc|tie_rule|text|top-N ties broken at random' -- 'FAIL attributes: tie_rule is "top-N ties broken at random"'
forged 'nc|compression|text|none' -- 'FAIL attributes: compression is "none"; the sweep, its inputs and journal give "shuffle, deflate level 1"'
# nothing can be added that verify ignores, nothing removed
forged 'nc|reviewed_by|text|the referees' -- 'FAIL attributes: reviewed_by = "the referees" is not an attribute normsweep writes'
forged 'nc|note|text|gpt2|distance_mean' -- 'FAIL attributes: distance_mean:note = "gpt2" is not an attribute normsweep writes'
forged 'ncvar|distance_gpt2' -- 'FAIL attributes: variable distance_gpt2 is not one normsweep writes'
forged 'nc|comment|del|' -- 'FAIL attributes: comment is missing (normsweep writes "CAVEAT'
forged 'nc|long_name|del||n_crit_expected' -- 'FAIL attributes: n_crit_expected:long_name is missing'
# a file of another output layout (none: before issue 34) is named, not compared name by name
forged 'nc|output_layout|del|' -- 'FAIL numbers and attributes: tiny.nc is in output layout 1, this normsweep writes layout 2 (docs/OUTPUT.md): verify it with the normsweep that wrote it (version '
# what the run recorded about itself agrees with checkpoint/history
forged 'nc|history|text|2026-01-01T00:00:00Z normsweep 0.1.0: normsweep run tiny.yaml on 64 ranks' -- \
  'FAIL attributes: history differs from checkpoint/history'
forged 'nc|start_time|text|2020-01-01T00:00:00Z' -- 'FAIL attributes: start_time is "2020-01-01T00:00:00Z"; checkpoint/history gives "'
forged 'nc|mpi_size|int64|64' -- 'FAIL attributes: mpi_size is 64; checkpoint/history gives 1'
forged 'nc|command_line|text|mpirun -np 64 normsweep run tiny.yaml' -- \
  "FAIL attributes: command_line is \"mpirun -np 64 normsweep run tiny.yaml\"; checkpoint/history gives \"$NORMSWEEP tiny.yaml\""
# ... and checkpoint/history cannot be taken away to escape that check
forged 'rm|checkpoint/history' -- \
  'FAIL attributes: history cannot be checked: the archive holds no checkpoint/history'
# the hiding of the fallback: the requested model made the used one
forged 'nc|model_requested|text|gpt2-standin' 'nc|model_fallback|text|false' -- \
  'FAIL attributes: model_requested is "gpt2-standin"; the sweep, its inputs and journal give "gpt2"'

# ... nor by calling the run a train-grid cell, history and all (train-grid gives a path)
# (the command as typed: "$NORMSWEEP tiny.yaml")
tg_history="$(sed "s|$NORMSWEEP tiny.yaml|normsweep train-grid --out g g.yaml|" hist.txt)
"
forged 'nc|model_requested|text|gpt2-standin' 'nc|model_fallback|text|false' \
  'nc|command_line|text|normsweep train-grid --out g g.yaml' \
  "sub|checkpoint/history|$NORMSWEEP tiny.yaml|normsweep train-grid --out g g.yaml" \
  "nc|history|text|$tg_history" -- \
  'FAIL attributes: model_requested is "gpt2-standin"; the sweep, its inputs and journal give "gpt2"'

# ---- provenance.json and README.txt against the NetCDF -------------------------------------------
forged 'json|run.corpus_tokens|1000000' -- 'FAIL provenance.json: run.corpus_tokens is 1000000; tiny.nc says '
forged 'json|inputs.corpus.sha256|"0000"' -- 'FAIL provenance.json: inputs.corpus.sha256 is "0000"; tiny.nc says "'
forged 'json|run.reviewed|true' -- 'FAIL provenance.json: run.reviewed is not a field archive writes'
forged 'json|files.netcdf|"sweep.yaml"' -- 'FAIL provenance.json: files.netcdf is "sweep.yaml"; the archive says "tiny.nc"'
forged 'json|format|"normsweep-archive-1"' -- 'FAIL provenance.json: format is "normsweep-archive-1"'
forged 'readme|fallback true|fallback false' -- 'FAIL README.txt: line 13 is "  model      gpt2-standin (requested gpt2; fallback false)"; tiny.nc and the members give "  model      gpt2-standin (requested gpt2; fallback true)"'
forged 'readme|on 1 MPI rank(s)|on 64 MPI rank(s)' -- 'FAIL README.txt: line 5 is "Run from '

# a field given twice in provenance.json (two readers could read two values) is refused
forge
"$PY" - f/arc/provenance.json <<'PYEOF'
import sys
p = sys.argv[1]
t = open(p).read()
open(p, 'w').write(t.replace('"format":', '"format": "normsweep-archive-2",\n  "format":', 1))
PYEOF
(cd f/arc && find . -type f ! -name MANIFEST.sha256 | sed 's|^\./||' | LC_ALL=C sort |
   xargs sha256sum > MANIFEST.sha256) && tar czf f.tar.gz -C f arc || fail "repack"
expect 4 "FAIL provenance.json: not a JSON object: duplicate object key" \
  "$NORMSWEEP" verify f.tar.gz --sample 0

# an unchecked attribute edited is listed as not checked, not passed off as checked
forge 'nc|model_path|text|/elsewhere/gpt2' 'json|inputs.model.path|"/elsewhere/gpt2"'
expect 0 "verify: PASS" "$NORMSWEEP" verify f.tar.gz --sample 0
grep "^INFO not checked" out.txt | grep -qw model_path || fail "model_path is not listed as not checked"

if [ "$fails" -ne 0 ]; then
  echo "archive_forge: $fails failure(s)"
  exit 1
fi
echo "archive_forge: ok"

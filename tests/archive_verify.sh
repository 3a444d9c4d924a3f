#!/bin/sh
# archive_verify: `normsweep archive` of a tiny finished sweep, then `normsweep verify` of the
# archive as made (byte-identical pass) and of tampered copies: a changed NetCDF byte, a missing
# and an unlisted member, a changed model, and altered journal values (exit 4, naming what differs).
# archive refuses another sweep's journal or part (verify of such an archive says so plainly); a
# run that recovered from a damaged journal record verifies, naming the record's byte offset, an
# unrecovered one fails naming it; archive refuses links among the run's files and two files that
# would be one member, keeps permissions, archives logs/ subdirectories and says what it left out.
set -u
: "${NORMSWEEP:?run through make check}" "${top_srcdir:?}" "${MPIEXEC:?}" "${NS_TEST_MODEL_DIR:?}" \
  "${NS_TEST_TOKENIZER_DIR:?}" "${NS_TEST_CORPUS:?}"
PY=${PYTHON_DEBIAN:-python3}
work=$(mktemp -d "${TMPDIR:-/tmp}/ns_archive_test.XXXXXX") || exit 1
trap '[ -n "${NS_KEEP:-}" ] || rm -rf "$work"' EXIT
fails=0
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }
cd "$work" || exit 1
. "$top_srcdir/tests/hold.sh"

# expect CODE PATTERN CMD...: exit status CODE and output (stdout+stderr) containing PATTERN
expect() {
  want=$1 pat=$2
  shift 2
  "$@" >out.txt 2>&1
  got=$?
  [ "$got" = "$want" ] || { fail "$* exited $got, want $want"; sed 's/^/  | /' out.txt; return; }
  grep -qF -- "$pat" out.txt || { fail "$*: output lacks '$pat'"; sed 's/^/  | /' out.txt; }
}

# repack DIR OUT: tar the extracted archive tree DIR/top back into OUT
repack() { tar czf "$2" -C "$1" arc || fail "repack $1"; }

# A tiny sweep: 4 shards of 32 tokens, 2 layers x 2 heads, both through a model directory that
# the test can later replace ($work/model, a link to the stand-in model).
ln -s "$NS_TEST_MODEL_DIR" model
cat > tiny.yaml <<EOF
model: $work/model
tokenizer: $NS_TEST_TOKENIZER_DIR
corpus: $NS_TEST_CORPUS
shards: {count: 4, L_max: 32}
grid:
  L: [8, 32]
  N: [1, 4]
  T: [0.5, 1.0]
  eps: [1.0e-3]
  layers: [0, 2]
  heads: [1, 3]
normalizer: [softmax, sparsemax]
rows: 2
seed: 3
output: runs/tiny/tiny.nc
checkpoint_dir: runs/tiny/checkpoint
EOF
# rank 1 journals its own results in a part of the journal (checkpoint/journal.s1.r1.nsj), so it
# must get one of the 4 tasks at least. Left to itself, a fast rank 0 can finish all 4 (about a
# millisecond each) before rank 1 has even started (it did so in a fresh Debian chroot): so rank 0
# is held at the start of its task loop until rank 1 has sent its first request and is held
# there too (tests/hold.sh); released together, rank 0's first service finds the request and
# answers it with a task before computing any of its own
run_shared sweep.log "$MPIEXEC" --oversubscribe -np 2 "$NORMSWEEP" tiny.yaml ||
  { cat sweep.log; echo "FAIL: the sweep did not run"; exit 1; }
cp sweep.log runs/tiny/run.log
grep -q "workers computed [1-9][0-9]* task(s), .* s per task ([1-9][0-9]* journalled in their own files)" sweep.log ||
  { cat sweep.log; fail "rank 1 journalled none of its results itself"; }

# ---- archive -------------------------------------------------------------------------------
expect 0 "wrote arc.tar.gz" "$NORMSWEEP" archive runs/tiny --out arc.tar.gz
tar tzf arc.tar.gz | sort > members.txt
for m in arc/tiny.nc arc/sweep.yaml arc/checkpoint/journal.nsj arc/checkpoint/journal.s1.r1.nsj \
         arc/checkpoint/history \
         arc/logs/run.log arc/provenance.json arc/MANIFEST.sha256 arc/README.txt \
         arc/assets-manifest.json; do
  grep -qx "$m" members.txt || fail "archive lacks $m"
done
ls | grep -q 'arc.tar.gz.tmp' && fail "archive left a temporary file"
mkdir x && tar xzf arc.tar.gz -C x || fail "tar cannot extract the archive"
(cd x/arc && sha256sum -c --quiet MANIFEST.sha256) || fail "sha256sum -c rejects MANIFEST.sha256"
# every member but the manifest itself is listed: 9 (nc, sweep, journal and rank 1's part,
# history, log, provenance, README, assets manifest)
[ "$(wc -l < x/arc/MANIFEST.sha256)" = 9 ] || fail "the manifest should list 9 members"
grep -q "checkpoint/lock" members.txt && fail "the run's lock file was archived"
cmp -s x/arc/sweep.yaml tiny.yaml || fail "sweep.yaml is not the exact sweep text"
cmp -s x/arc/tiny.nc runs/tiny/tiny.nc || fail "the NetCDF member differs from the run's file"
model_sha=$(sha256sum "$NS_TEST_MODEL_DIR/model.safetensors" | cut -d' ' -f1)
for k in '"format": "normsweep-archive-3"' "\"sha256\": \"$model_sha\"" '"git_commit"' \
         '"compiler"' '"cflags"' '"blas"' '"cpu_model"' '"cores"' '"memory_bytes"' '"uname"'; do
  grep -qF "$k" x/arc/provenance.json || fail "provenance.json lacks $k"
done
"$PY" -c "import json,sys; json.load(open(sys.argv[1]))" x/arc/provenance.json ||
  fail "provenance.json is not valid JSON"
"$PY" -c "import json,sys; f = json.load(open(sys.argv[1]))['files']; sys.exit(not (f['journal'] == 'checkpoint/journal.nsj' and f['journal_parts'] == ['checkpoint/journal.s1.r1.nsj']))" \
  x/arc/provenance.json || fail "provenance.json does not name the journal and its part"
"$PY" -c "import json,sys; json.load(open(sys.argv[1]))" x/arc/assets-manifest.json ||
  fail "assets-manifest.json is not valid JSON"
# README.txt explains the run: its inputs with their sha256, the versions, how to verify and the
# exact command that reproduces it (launcher, rank count, the archived sweep file)
for k in "$model_sha" "normsweep verify" "-np 2 normsweep run --model-pin path@$model_sha sweep.yaml" "netCDF" "HDF5" "MPI" \
         "BLAS" "compiler" "tiny.nc"; do
  grep -qF -- "$k" x/arc/README.txt || fail "README.txt lacks '$k'"
done

# archive errors: one line naming the problem, exit 2, no output file
expect 2 "no such directory" "$NORMSWEEP" archive nowhere --out e.tar.gz
mkdir empty
expect 2 "no NetCDF file" "$NORMSWEEP" archive empty --out e.tar.gz
mkdir -p half/checkpoint && cp runs/tiny/checkpoint/journal.nsj half/checkpoint/
expect 2 "incomplete run" "$NORMSWEEP" archive half --out e.tar.gz
# with its history: the exact command that continues it (the sweep file named), from where it ran
cp runs/tiny/checkpoint/history half/checkpoint/
expect 2 "continue it with the command its checkpoint's history records (--resume added), from the directory it ran in: cd $work && " \
  "$NORMSWEEP" archive half --out e.tar.gz
grep -qF -- "-np 2 $NORMSWEEP tiny.yaml --resume" out.txt ||
  { fail "incomplete run: not the recorded command with --resume"; sed 's/^/  | /' out.txt; }
# pasted (from elsewhere), the line resumes the same sweep: a run of tiny.yaml from a directory
# whose name needs quoting, with its output gone, is written again from its journal
mkdir "cont 'x'" && cd "cont 'x'" || exit 1
"$MPIEXEC" --oversubscribe -np 2 "$NORMSWEEP" ../tiny.yaml --output r/o.nc --checkpoint-dir r/checkpoint \
  2> ../cont.log || { cat ../cont.log; fail "the run to continue did not run"; }
rm r/o.nc
cd "$work" || exit 1
expect 2 "incomplete run" "$NORMSWEEP" archive "cont 'x'/r" --out e.tar.gz
line=$(sed -n 's/.*, from the directory it ran in: //p' out.txt)
case "$line" in
  "cd '$work/cont '\''x'\''' && "*" ../tiny.yaml "*" --resume") ;;
  *) fail "incomplete run: not a line to paste: '$line'" ;;
esac
(cd / && sh -c "$line") > cont2.log 2>&1 || { cat cont2.log; fail "the pasted continuation line failed"; }
grep -q "normsweep: wrote r/o.nc" cont2.log || { cat cont2.log; fail "the pasted line did not write r/o.nc"; }
"$top_builddir/tests/nc_datadump" runs/tiny/tiny.nc > d1.txt && "$top_builddir/tests/nc_datadump" "cont 'x'/r/o.nc" > d2.txt &&
  cmp -s d1.txt d2.txt || fail "the pasted continuation line: data differ from the run of tiny.yaml"
mkdir nojournal && cp runs/tiny/tiny.nc nojournal/
expect 2 "no journal" "$NORMSWEEP" archive nojournal --out e.tar.gz
mkdir notsweep && echo "not netcdf" > notsweep/bogus.nc
expect 2 "bogus.nc" "$NORMSWEEP" archive notsweep --out e.tar.gz
expect 2 "--out X.tar.gz is required" "$NORMSWEEP" archive runs/tiny
expect 2 "must end in .tar.gz" "$NORMSWEEP" archive runs/tiny --out e.zip
[ -e e.tar.gz ] && fail "a failed archive left e.tar.gz behind"
# overrides: the NetCDF and checkpoint directory named explicitly
mkdir -p elsewhere && cp runs/tiny/tiny.nc elsewhere/out.nc
expect 0 "wrote o.tar.gz" "$NORMSWEEP" archive elsewhere --nc elsewhere/out.nc \
  --checkpoint-dir runs/tiny/checkpoint --out o.tar.gz

# ---- verify: the archive as made ------------------------------------------------------------
expect 0 "verify: PASS" "$NORMSWEEP" verify arc.tar.gz
for p in "PASS manifest" "mode: byte-identical" "PASS model $work/model" "PASS tokenizer" \
         "PASS corpus" "PASS journal: all 4 tasks" "seed 20250821: shards" "byte-identical"; do
  grep -qF "$p" out.txt || fail "verify report lacks '$p'"
done
[ "$(grep -c '^PASS task' out.txt)" = 3 ] || fail "the default sample should recompute 3 tasks"
# the sample follows the seed, and is printed
"$NORMSWEEP" verify arc.tar.gz --sample 4 --seed 5 > all.txt 2>&1 || fail "--sample 4 failed"
[ "$(grep -c '^PASS task' all.txt)" = 4 ] || fail "--sample 4 should recompute all 4 tasks"
grep -q "4 of 4 tasks, seed 5" all.txt || fail "--seed not reported"
"$NORMSWEEP" verify arc.tar.gz --sample 2 --seed 11 | grep sample > s1.txt
"$NORMSWEEP" verify arc.tar.gz --sample 2 --seed 11 | grep sample > s2.txt
cmp -s s1.txt s2.txt || fail "the same seed chose different tasks"
expect 0 "mode: tolerance" "$NORMSWEEP" verify arc.tar.gz --tolerant --tolerance 1e-6
expect 0 "SKIP recompute" "$NORMSWEEP" verify arc.tar.gz --sample 0
# another BLAS kernel (OpenBLAS DYNAMIC_ARCH: Prescott is SSE3 only, so every x86-64 CPU runs it):
# the recorded BLAS differs, so verify must switch to the tolerance mode and still pass. Where the
# library cannot switch kernels the build matches and the byte-identical mode must pass instead.
if [ "$(uname -m)" = x86_64 ] && ! grep -q Prescott x/arc/provenance.json; then
  OPENBLAS_CORETYPE=Prescott "$NORMSWEEP" verify arc.tar.gz --sample 4 > k.txt 2>&1 ||
    { fail "verify with the Prescott BLAS kernel failed"; sed 's/^/  | /' k.txt; }
  grep -q "mode: tolerance.*blas recorded" k.txt || grep -q "mode: byte-identical" k.txt ||
    fail "Prescott kernel: no mode line"
fi
expect 0 "verify: PASS" "$NORMSWEEP" verify o.tar.gz

# unusable input and bad options: exit 2
expect 2 "No such file" "$NORMSWEEP" verify missing.tar.gz
expect 2 "not a readable" "$NORMSWEEP" verify tiny.yaml
expect 2 "--sample: expected an integer in 0..2147483647, got 'x'" "$NORMSWEEP" verify arc.tar.gz --sample x
expect 2 "--tolerance: -1 is out of range [0, 1)" "$NORMSWEEP" verify arc.tar.gz --tolerance -1
expect 2 "is required" "$NORMSWEEP" verify

# ---- tampered copies: exit 4 naming what differs ---------------------------------------------
# one byte of the NetCDF changed (in its middle), re-packed with the original manifest
rm -rf t1 && mkdir t1 && tar xzf arc.tar.gz -C t1
size=$(wc -c < t1/arc/tiny.nc)
printf 'Z' | dd of=t1/arc/tiny.nc bs=1 seek=$((size / 2)) conv=notrunc 2>/dev/null
repack t1 t1.tar.gz
expect 4 "member tiny.nc: SHA-256 differs" "$NORMSWEEP" verify t1.tar.gz
grep -q "^verify: FAIL" out.txt || fail "tampered NetCDF: no FAIL verdict"

# a member removed
rm -rf t2 && mkdir t2 && tar xzf arc.tar.gz -C t2 && rm t2/arc/logs/run.log
repack t2 t2.tar.gz
expect 4 "member logs/run.log: listed in the manifest but missing" "$NORMSWEEP" verify t2.tar.gz

# a member added
rm -rf t3 && mkdir t3 && tar xzf arc.tar.gz -C t3 && echo extra > t3/arc/extra.txt
repack t3 t3.tar.gz
expect 4 "member extra.txt: in the archive but not listed" "$NORMSWEEP" verify t3.tar.gz

# the manifest itself removed
rm -rf t4 && mkdir t4 && tar xzf arc.tar.gz -C t4 && rm t4/arc/MANIFEST.sha256
repack t4 t4.tar.gz
expect 4 "no MANIFEST.sha256" "$NORMSWEEP" verify t4.tar.gz

# ---- a changed model: same shape, different weights (mkmodel seed 99) ------------------------
"$NORMSWEEP" mkmodel --layers 4 --heads 4 --embd 128 --ctx 64 --vocab 50257 --seed 99 \
  --out other-model > /dev/null 2>&1 || fail "mkmodel failed"
new_sha=$(sha256sum other-model/model.safetensors | cut -d' ' -f1)
rm model && ln -s "$work/other-model" model
expect 4 "model $work/model: SHA-256 differs: recorded $model_sha, now $new_sha" \
  "$NORMSWEEP" verify arc.tar.gz
grep -q "^SKIP attributes, journal and recomputation" out.txt || fail "changed model: recomputation not skipped"
# a missing model
rm model
expect 4 "model $work/model: cannot be resolved" "$NORMSWEEP" verify arc.tar.gz
ln -s "$NS_TEST_MODEL_DIR" model

# ---- altered journal values (record checksums and manifest redone, so only the values differ) -
# alter_journal DIR TASK SCALE ADD: value 5 of TASK's payload -> value * SCALE + ADD, in whichever
# of DIR's journal files (journal.nsj or a worker's part) holds TASK
alter_journal() {
  "$PY" - "$@" <<'PYEOF'
import glob, hashlib, struct, sys
d, task, scale, add = sys.argv[1], int(sys.argv[2]), float(sys.argv[3]), float(sys.argv[4])
done = False
for src in sorted(glob.glob(d + '/journal*.nsj')):
    data = bytearray(open(src, 'rb').read())
    # layout (src/journal/ns_journal_file_internal.h): 128-byte header with the u64 payload
    # length at offset 16; records of 80 bytes (u32 magic, u32 pad, u64 len, 64 hex sha256 of task+payload), u64 task,
    # payload
    plen = struct.unpack_from('=Q', data, 16)[0]
    pos = 128
    while pos + 88 + plen <= len(data) and not done:
        t = struct.unpack_from('=Q', data, pos + 80)[0]
        if t == task:
            body = pos + 88
            # the first finite, non-zero value at or after index 5
            i = 5
            while True:
                v = struct.unpack_from('=d', data, body + 8 * i)[0]
                if v == v and v not in (0.0, float('inf'), float('-inf')):
                    break
                i += 1
            struct.pack_into('=d', data, body + 8 * i, v * scale + add)
            data[pos + 16:pos + 80] = hashlib.sha256(bytes(data[pos + 80:body + plen])).hexdigest().encode()
            open(src, 'wb').write(data)
            done = True
        pos += 88 + plen
assert done, "task not found"
PYEOF
}
# remanifest DIR: rewrite DIR/arc/MANIFEST.sha256 for the current members
remanifest() {
  (cd "$1/arc" && find . -type f ! -name MANIFEST.sha256 | sed 's|^\./||' | LC_ALL=C sort |
     xargs sha256sum > MANIFEST.sha256) || fail "remanifest $1"
}
# resize DIR: the member sizes DIR/arc/provenance.json and README.txt record (and the manifest),
# redone
resize() { "$PY" "$top_srcdir/tests/archive_reseal.py" "$1/arc" || fail "resize $1"; }
rm -rf t5 && mkdir t5 && tar xzf arc.tar.gz -C t5
alter_journal t5/arc/checkpoint 2 1.0 0.5 || fail "could not alter the journal"
remanifest t5 && repack t5 t5.tar.gz
expect 4 "FAIL task 2 (shard 2): 1 of" "$NORMSWEEP" verify t5.tar.gz --sample 4
grep -q "^PASS manifest" out.txt || fail "altered journal: the re-made manifest should pass"
grep -q "^PASS task 1 " out.txt || fail "altered journal: untouched task 1 should pass"
grep -q "archived .*recomputed" out.txt || fail "altered journal: the values are not shown"
expect 4 "FAIL task 2" "$NORMSWEEP" verify t5.tar.gz --sample 4 --tolerant

# a change of one part in 1e9: a failure byte for byte, within the stated tolerance (1e-4)
rm -rf t6 && mkdir t6 && tar xzf arc.tar.gz -C t6
alter_journal t6/arc/checkpoint 1 1.000000001 0 || fail "could not alter the journal"
remanifest t6 && repack t6 t6.tar.gz
expect 4 "FAIL task 1 (shard 1)" "$NORMSWEEP" verify t6.tar.gz --sample 4
expect 0 "verify: PASS" "$NORMSWEEP" verify t6.tar.gz --sample 4 --tolerant

# a journal record removed (the journal no longer covers every task)
rm -rf t7 && mkdir t7 && tar xzf arc.tar.gz -C t7
"$PY" - t7/arc/checkpoint/journal.s1.r1.nsj <<'PYEOF'
import struct, sys
p = sys.argv[1]; d = open(p, 'rb').read()
plen = struct.unpack_from('=Q', d, 16)[0]
open(p, 'wb').write(d[:len(d) - (88 + plen)])
PYEOF
remanifest t7 && repack t7 t7.tar.gz
expect 4 "FAIL journal: 1 of 4 tasks missing" "$NORMSWEEP" verify t7.tar.gz

# an incomplete record at the end of a worker's part (the worker killed while writing it, before
# it told rank 0; a resume never cuts a part) is not read and not a failure: the run it belongs
# to is whole. At the end of journal.nsj (which a resume would have cut) it fails.
rm -rf torn && cp -r runs/tiny torn
head -c 50 /dev/urandom >> torn/checkpoint/journal.s1.r1.nsj
expect 0 "wrote torn.tar.gz" "$NORMSWEEP" archive torn --out torn.tar.gz
expect 0 "PASS journal: all 4 tasks recorded (" "$NORMSWEEP" verify torn.tar.gz --sample 0
grep -q "^PASS journal: .* and 1 part file; 1 of them ends in an incomplete record of a stopped worker, not read)$" out.txt ||
  { sed 's/^/  | /' out.txt; fail "torn part: verify does not say that the part ends in an incomplete record"; }
rm -rf torn && cp -r runs/tiny torn
head -c 50 /dev/urandom >> torn/checkpoint/journal.nsj
expect 0 "wrote torn.tar.gz" "$NORMSWEEP" archive torn --out torn.tar.gz
expect 4 "FAIL journal: every one of the 4 tasks recorded; journal.nsj ends in an incomplete record" \
  "$NORMSWEEP" verify torn.tar.gz --sample 0

# ---- sizes: verify refuses, before extracting anything, a member larger than provenance.json
# records (here a log replaced by 3 GiB of zeros: a 3 MB archive) or an unrecorded member above
# 1 MiB; nothing is written to TMPDIR (the check reads headers only)
rm -rf t9 && mkdir t9 && tar xzf arc.tar.gz -C t9
truncate -s 3G t9/arc/logs/run.log
(cd t9 && tar cf - arc | gzip -1 > ../t9.tar.gz) || fail "could not pack the 3 GiB member"
rm -rf t9 vtmp && mkdir vtmp
TMPDIR=$work/vtmp expect 4 "FAIL sizes: member logs/run.log holds 3221225472 bytes, more than the" \
  "$NORMSWEEP" verify t9.tar.gz
grep -q "^PASS manifest" out.txt && fail "3 GiB member: the manifest was checked (extracted)"
[ -z "$(ls -A vtmp)" ] || fail "3 GiB member: verify left files in TMPDIR"
rm -f t9.tar.gz
rm -rf t10 && mkdir t10 && tar xzf arc.tar.gz -C t10
head -c 2000000 /dev/zero > t10/arc/extra.bin
remanifest t10 && repack t10 t10.tar.gz
expect 4 "FAIL sizes: member extra.bin holds 2000000 bytes and is not recorded" \
  "$NORMSWEEP" verify t10.tar.gz
expect 0 "PASS sizes: 10 members" "$NORMSWEEP" verify arc.tar.gz --sample 0

# ---- edited published numbers (manifest rewritten to match): the file no longer equals the
# reduction of its journal, and verify names the variable (issue: verify checks the numbers)
# alter_nc IN VAR: add 1 to the first finite value of VAR (n_crit: a found N becomes another)
alter_nc() {
  "$PY" - "$@" <<'PYEOF'
import sys, numpy as np, netCDF4
ds = netCDF4.Dataset(sys.argv[1], 'r+')
v = ds.variables[sys.argv[2]]
v.set_auto_mask(False)
a = v[:]
flat = a.reshape(-1)
i = int(np.flatnonzero(np.isfinite(flat) & (flat > 0))[0])
flat[i] = flat[i] + 1
v[:] = flat.reshape(a.shape)
# where the edit is, as verify names it: each dimension's coordinate value (%.17g, or %d for ints)
idx = np.unravel_index(i, a.shape)
parts = []
for d, k in zip(v.dimensions, idx):
    if d not in ds.variables or ds.variables[d].ndim == 2:
        # a text label: the coordinate itself (normalizer) or beside it (head_set_name)
        lab = ds.variables[d] if d in ds.variables else ds.variables[d + '_name']
        lab.set_auto_chartostring(False)
        parts.append('%s="%s"' % (d, netCDF4.chartostring(lab[k])))
        continue
    c = ds.variables[d]
    c.set_auto_mask(False)
    x = c[k]
    parts.append('%s=%d' % (d, int(x)) if np.issubdtype(c.dtype, np.integer) else '%s=%.17g' % (d, float(x)))
print(', '.join(parts))
ds.close()
PYEOF
}
# (distance_mean_hmedian_ci_low: verify recomputes the bootstrap intervals from the journal too)
for var in distance_mean n_crit_expected thm1_checked distance_mean_hmedian_ci_low; do
  rm -rf t8 && mkdir t8 && tar xzf arc.tar.gz -C t8
  where=$(alter_nc t8/arc/tiny.nc $var) || fail "could not alter $var"
  resize t8 && repack t8 t8.tar.gz   # the edit may change tiny.nc's size (its chunks recompressed)
  expect 4 "FAIL numbers: $var: 1 value differs from the reduction of the journal; first at $where: file" \
    "$NORMSWEEP" verify t8.tar.gz --sample 0
  grep -q "^PASS manifest" out.txt || fail "edited $var: the re-made manifest should pass"
done
expect 0 "PASS numbers: every variable of tiny.nc is byte-identical" "$NORMSWEEP" verify arc.tar.gz

# ---- archive refuses a NetCDF packed with another sweep's journal (nothing written); verify of
# such an archive (made by hand) says so plainly: no temporary path, nothing about resuming
sed -e 's/^seed: 3/seed: 4/' -e 's|runs/tiny|runs/other|g' tiny.yaml > other.yaml
"$NORMSWEEP" other.yaml 2> other.log || { cat other.log; fail "the other sweep did not run"; }
expect 2 "the journal runs/other/checkpoint/journal.nsj belongs to another sweep than runs/tiny/tiny.nc: " \
  "$NORMSWEEP" archive runs/tiny --checkpoint-dir runs/other/checkpoint --out mix.tar.gz
grep -qF "; history: runs/other/checkpoint/history ran '$NORMSWEEP other.yaml' (" out.txt ||
  { fail "another sweep's journal: the message does not say which run it is"; sed 's/^/  | /' out.txt; }
[ "$(wc -l < out.txt)" = 1 ] || fail "another sweep's journal: not one line"
ls | grep -q '^mix.tar.gz' && fail "archive of another sweep's journal left mix.tar.gz or a temporary"
# one of the parts from another sweep: refused too, naming the part
rm -rf mixp && cp -r runs/tiny mixp && cp runs/other/checkpoint/journal.nsj mixp/checkpoint/journal.s1.r1.nsj
expect 2 "the journal part mixp/checkpoint/journal.s1.r1.nsj belongs to another sweep than mixp/tiny.nc" \
  "$NORMSWEEP" archive mixp --out mixp.tar.gz
[ -e mixp.tar.gz ] && fail "archive of another sweep's part wrote mixp.tar.gz"
rm -rf t11 && mkdir t11 && tar xzf arc.tar.gz -C t11
cp runs/other/checkpoint/journal.nsj t11/arc/checkpoint/journal.nsj
resize t11 && remanifest t11 && repack t11 t11.tar.gz
expect 4 "FAIL journal: checkpoint/journal.nsj belongs to another sweep than tiny.nc (" \
  "$NORMSWEEP" verify t11.tar.gz
grep "^FAIL\|^SKIP" out.txt | grep -qi "resum" &&
  { fail "verify of another sweep's journal speaks of resuming"; sed 's/^/  | /' out.txt; }
grep -q "normsweep-verify\." out.txt &&
  { fail "verify of another sweep's journal names a temporary path"; sed 's/^/  | /' out.txt; }

# ---- a run that recovered from a damaged journal record verifies; its archive names the damage --
# One byte flipped in the middle of the first record of journal.nsj, then --resume: the run skips
# the damaged record and computes its task again (a later whole record of that task), with data
# identical to the undamaged run's.
rm -rf rec && cp -r runs/tiny rec && rm -f rec/tiny.nc
plen=$("$PY" -c "import struct,sys; print(struct.unpack_from('=Q', open(sys.argv[1],'rb').read(), 16)[0])" rec/checkpoint/journal.nsj)
off=$((128 + (88 + plen) / 2))
byte=$(od -An -tu1 -j "$off" -N1 rec/checkpoint/journal.nsj | tr -d ' ')
printf "$(printf '\\%03o' $(( (byte + 1) % 256 )))" |
  dd of=rec/checkpoint/journal.nsj bs=1 seek="$off" conv=notrunc status=none
"$NORMSWEEP" run tiny.yaml --output rec/tiny.nc --checkpoint-dir rec/checkpoint --resume 2> rec.log ||
  { cat rec.log; fail "resume of the damaged journal"; }
grep -q "1 damaged record skipped (the first at byte 128)" rec.log || { cat rec.log; fail "the run did not skip the damaged record"; }
"$PY" - runs/tiny/tiny.nc rec/tiny.nc <<'PYEOF' || fail "the recovered run's data differ from the clean run's"
import sys, numpy as np, netCDF4
a, b = netCDF4.Dataset(sys.argv[1]), netCDF4.Dataset(sys.argv[2])
for n, v in a.variables.items():
    if n == 'shard_forward_count':
        continue
    x, y = v[:], b.variables[n][:]
    assert np.array_equal(np.ma.filled(x, 0), np.ma.filled(y, 0)), n
PYEOF
expect 0 "wrote rec.tar.gz" "$NORMSWEEP" archive rec --out rec.tar.gz -q
expect 0 "PASS journal: all 4 tasks recorded (" "$NORMSWEEP" verify rec.tar.gz --sample 0
grep -qF "; 1 damaged record skipped, at byte 128 of checkpoint/journal.nsj, as the run skips it: every task has a whole record)" out.txt ||
  { fail "recovered run: verify does not name the damaged record's byte offset"; sed 's/^/  | /' out.txt; }
# the same damage unrecovered (the archived journal's record damaged): a failure naming the offset
rm -rf t12 && mkdir t12 && tar xzf arc.tar.gz -C t12
byte=$(od -An -tu1 -j "$off" -N1 t12/arc/checkpoint/journal.nsj | tr -d ' ')
printf "$(printf '\\%03o' $(( (byte + 1) % 256 )))" |
  dd of=t12/arc/checkpoint/journal.nsj bs=1 seek="$off" conv=notrunc status=none
remanifest t12 && repack t12 t12.tar.gz
expect 4 "FAIL journal: 1 of 4 tasks missing (first: " "$NORMSWEEP" verify t12.tar.gz
grep -qF "; 1 damaged record, at byte 128 of checkpoint/journal.nsj" out.txt ||
  { fail "unrecovered damage: no byte offset"; sed 's/^/  | /' out.txt; }

# ---- archive and the run directory's files: links refused, modes kept, no name lost ---------
echo "private" > secret.txt && chmod 600 secret.txt
rm -rf lk && cp -r runs/tiny lk && ln -s "$work/secret.txt" lk/other.log
expect 2 "lk/other.log is a symbolic link (to $work/secret.txt): an archive holds regular files only" \
  "$NORMSWEEP" archive lk --out lk.tar.gz
rm lk/other.log && mkdir -p lk/logs && ln -s ../../secret.txt lk/logs/x.log
expect 2 "lk/logs/x.log is a symbolic link (to ../../secret.txt)" "$NORMSWEEP" archive lk --out lk.tar.gz
ls | grep -q '^lk.tar.gz' && fail "a refused archive left lk.tar.gz or a temporary"
# permissions are kept: a 0600 log stays 0600, and the archive is no more readable than it
rm -rf md && cp -r runs/tiny md && chmod 600 md/run.log && chmod 640 md/tiny.nc
expect 0 "wrote md.tar.gz" "$NORMSWEEP" archive md --out md.tar.gz -q
tar tvzf md.tar.gz | grep -q '^-rw------- .* md/logs/run.log$' || { tar tvzf md.tar.gz; fail "the 0600 log lost its mode"; }
tar tvzf md.tar.gz | grep -q '^-rw-r----- .* md/md.nc$\|^-rw-r----- .* md/tiny.nc$' || { tar tvzf md.tar.gz; fail "the 0640 NetCDF lost its mode"; }
[ "$(stat -c %a md.tar.gz)" = 600 ] || fail "the archive of a 0600 log is $(stat -c %a md.tar.gz), want 600"
expect 0 "verify: PASS" "$NORMSWEEP" verify md.tar.gz --sample 0
# two logs that would be one member: refused, naming both
rm -rf col && cp -r runs/tiny col && mkdir -p col/logs && echo "another log" > col/logs/run.log
expect 2 "col/run.log and col/logs/run.log would both be archived as logs/run.log" \
  "$NORMSWEEP" archive col --out col.tar.gz
# files in subdirectories of logs/ are archived with their path; a name no member may have refused
rm -rf sub && cp -r runs/tiny sub && mkdir -p sub/logs/slurm && echo "job 1" > sub/logs/slurm/slurm-1.out
echo "notes" > sub/notes.txt
expect 0 "wrote sub.tar.gz" "$NORMSWEEP" archive sub --out sub.tar.gz
tar tzf sub.tar.gz | grep -qx "sub/logs/slurm/slurm-1.out" || fail "logs/slurm/slurm-1.out was not archived"
grep -qF "left out of the archive (not the NetCDF, its checkpoint, a log or the report): sub/notes.txt" out.txt ||
  { fail "archive does not say what it left out"; sed 's/^/  | /' out.txt; }
expect 0 "verify: PASS" "$NORMSWEEP" verify sub.tar.gz --sample 0
printf 'x' > 'sub/logs/bad\name.log'
expect 2 "sub/logs/bad\\name.log: a name no archive member may have" "$NORMSWEEP" archive sub --out sub2.tar.gz

if [ "$fails" -ne 0 ]; then
  echo "archive_verify: $fails failure(s)"
  exit 1
fi
echo "archive_verify: ok"

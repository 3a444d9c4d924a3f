#!/bin/sh
# io_safety: what the bad-input catalogue cannot show in one command (issue 31): (1) two sweeps
# with different checkpoint directories but one output (the second is refused while the first
# runs; the first completes; no OUTPUT.lock is left); (2) SIGTERM to mkmodel, archive, verify and
# dump while they write their temporary (exit 3, the exact message, no temporary and no
# extraction directory left); (3) temporaries left by dead processes are removed at the next
# start, those of a running process are not; (4) an output inside the checkpoint directory named
# through a bind mount of it (root; skipped when mounting is not possible).
# See docs/RELIABILITY-CATALOGUE.md.
. "$top_srcdir/tests/sweep_common.sh"
mounts=
cleanup() {
  for m in $mounts; do umount "$m" 2> /dev/null || umount -l "$m" 2> /dev/null; done
  for p in $(jobs -p); do kill -9 "$p" 2> /dev/null; done
  rm -rf "$work"
}
trap cleanup EXIT
trap 'exit 1' INT TERM HUP PIPE
cd "$work" || fail "cd"
mkdir tmp
TMPDIR=$work/tmp; export TMPDIR
NORMSWEEP_OFFLINE=1; export NORMSWEEP_OFFLINE

# wait_for GLOB: until a path matching GLOB exists (60 s at most)
wait_for() {
  end=$(( $(date +%s) + 60 ))
  while ! ls -d $1 > /dev/null 2>&1; do
    [ "$(date +%s)" -lt $end ] || fail "nothing matched $1 after 60 s"; sleep 0.01
  done
}
# same_stderr FILE LINE...: FILE holds exactly these lines
same_stderr() {
  f=$1; shift
  printf '%s\n' "$@" > want.txt
  cmp -s want.txt "$f" || { diff want.txt "$f" >&2; fail "stderr of $f differs"; }
}
# a process id that no longer exists (a shell that ran and ended)
dead_pid() { sh -c 'echo $$'; }

"$NORMSWEEP" mkmodel --layers 2 --heads 2 --embd 8 --ctx 64 --vocab 50257 --out m > /dev/null ||
  fail "mkmodel m"
head -c 400000 "$NS_TEST_CORPUS" > wap.txt
cat > s.yaml <<EOF
model: m
tokenizer: $NS_TEST_TOKENIZER_DIR
corpus: wap.txt
strip_gutenberg: false
shards: {count: 60, L_max: 32}
grid: {L: [16, 32], N: [1, 4], T: [1.0]}
EOF

# (1) one output, two checkpoint directories: the second run is refused while the first holds
# OUTPUT.lock (stopped with SIGSTOP once it took it), the first then completes.
"$NORMSWEEP" run s.yaml --output o.nc --checkpoint-dir ckA 2> logA &
pidA=$!
wait_for o.nc.lock
kill -STOP "$pidA"
"$NORMSWEEP" run s.yaml --output o.nc --checkpoint-dir ckB 2> logB; rc=$?
kill -CONT "$pidA"
[ $rc -eq 2 ] || { cat logB >&2; fail "second run on one output: exit $rc, expected 2"; }
grep -qx "normsweep run: output o.nc is being written by another normsweep run (host $(hostname), pid $pidA, since .*: normsweep run s.yaml --output o.nc --checkpoint-dir ckA); wait for it to end or choose another output" logB ||
  { cat logB >&2; fail "second run: message"; }
[ -e ckB ] && fail "the refused run created its checkpoint directory"
wait "$pidA" || { cat logA >&2; fail "the first run failed"; }
[ -s o.nc ] || fail "the first run wrote no output"
[ -e o.nc.lock ] && fail "o.nc.lock left after the run"
# a lock file left by a killed run (unlocked) is taken over and removed at the end
: > o2.nc.lock
"$NORMSWEEP" run s.yaml --output o2.nc --checkpoint-dir ckC 2> logC || { cat logC >&2; fail "run over a stale lock"; }
[ -e o2.nc.lock ] && fail "o2.nc.lock left after the run"
echo "ok 1 - one output, two checkpoint directories: the second run refused, exit 2"

# (2) SIGTERM while a temporary is being written: exit 3, nothing left.
"$NORMSWEEP" mkmodel --preset gpt2 --out mg 2> logmk &
pid=$!
wait_for 'mg/model.safetensors.tmp.*'
kill -TERM "$pid"; wait "$pid"; rc=$?
[ $rc -eq 3 ] || { cat logmk >&2; fail "mkmodel SIGTERM: exit $rc, expected 3"; }
same_stderr logmk "normsweep mkmodel: interrupted by SIGTERM; mg/model.safetensors was not written (its temporary is removed)"
[ -e mg ] && fail "mkmodel SIGTERM left $(ls -A mg)"

mkdir -p run/logs
cp o.nc run/o.nc && cp -r ckA run/checkpoint
head -c 30000000 /dev/urandom > run/logs/big.log   # incompressible: seconds of gzip
"$NORMSWEEP" archive run --out a.tar.gz -q 2> logar &
pid=$!
wait_for 'a.tar.gz.tmp.*'
kill -TERM "$pid"; wait "$pid"; rc=$?
[ $rc -eq 3 ] || { cat logar >&2; fail "archive SIGTERM: exit $rc, expected 3"; }
same_stderr logar "normsweep archive: interrupted by SIGTERM; a.tar.gz was not written (its temporary is removed)"
ls a.tar.gz* > /dev/null 2>&1 && fail "archive SIGTERM left $(ls a.tar.gz*)"

"$NORMSWEEP" archive run --out a.tar.gz -q 2> /dev/null || fail "archive"
"$NORMSWEEP" verify a.tar.gz --offline > /dev/null 2> logv &
pid=$!
wait_for "$TMPDIR/normsweep-verify.$pid.*"
kill -TERM "$pid"; wait "$pid"; rc=$?
[ $rc -eq 3 ] || { cat logv >&2; fail "verify SIGTERM: exit $rc, expected 3"; }
same_stderr logv "normsweep verify: interrupted by SIGTERM; the verification did not finish (its extraction directory is removed)"
[ -n "$(ls -A "$TMPDIR")" ] && fail "verify SIGTERM left $(ls -A "$TMPDIR")"

"$NORMSWEEP" dump --model "$NS_TEST_MODEL_DIR" --tokenizer "$NS_TEST_TOKENIZER_DIR" \
  --text "$NS_TEST_CORPUS" --offset 0 --length 1024 --N 1,2,4,8,16,32,64 --T 0.1,1,10 \
  --out d.nc 2> logd &
pid=$!
wait_for 'd.nc.tmp.*'
kill -TERM "$pid"; wait "$pid"; rc=$?
[ $rc -eq 3 ] || { cat logd >&2; fail "dump SIGTERM: exit $rc, expected 3"; }
same_stderr logd "normsweep dump: interrupted by SIGTERM; d.nc was not written (its temporary is removed)"
ls d.nc* > /dev/null 2>&1 && fail "dump SIGTERM left $(ls d.nc*)"
echo "ok 2 - SIGTERM to mkmodel, archive, verify, dump: exit 3, no temporary left"

# (3) temporaries of dead processes go at the next start (a line says so), a live one stays.
dead=$(dead_pid)
live=$$
mkdir m3
echo junk > m3/model.safetensors.tmp.$dead
echo junk > m3/config.json.tmp.$live
"$NORMSWEEP" mkmodel --layers 1 --heads 2 --embd 8 --ctx 16 --vocab 50 --out m3 > /dev/null 2> log3 ||
  { cat log3 >&2; fail "mkmodel over stale temporaries"; }
same_stderr log3 "normsweep mkmodel: removed m3/model.safetensors.tmp.$dead, left by a normsweep process that no longer runs"
[ -e m3/config.json.tmp.$live ] || fail "mkmodel removed the temporary of a running process"
echo junk > b.tar.gz.tmp.$dead
"$NORMSWEEP" archive run --out b.tar.gz -q 2> log3 || { cat log3 >&2; fail "archive over a stale temporary"; }
same_stderr log3 "normsweep archive: removed b.tar.gz.tmp.$dead, left by a normsweep process that no longer runs" \
  "normsweep archive: wrote b.tar.gz"
mkdir "$TMPDIR/normsweep-verify.$dead.AbCdEf" "$TMPDIR/normsweep-verify.$live.AbCdEf"
echo junk > "$TMPDIR/normsweep-verify.$dead.AbCdEf/x"
"$NORMSWEEP" verify b.tar.gz --offline --sample 1 > /dev/null 2> log3 ||
  { cat log3 >&2; fail "verify over a stale directory"; }
same_stderr log3 "normsweep verify: removed $TMPDIR/normsweep-verify.$dead.AbCdEf, left by a normsweep process that no longer runs"
[ "$(ls -A "$TMPDIR")" = "normsweep-verify.$live.AbCdEf" ] || fail "verify: left in TMPDIR: $(ls -A "$TMPDIR")"
rmdir "$TMPDIR/normsweep-verify.$live.AbCdEf"
echo junk > d3.nc.tmp.$dead
"$NORMSWEEP" dump --model m --tokenizer "$NS_TEST_TOKENIZER_DIR" --text wap.txt --strip-gutenberg false \
  --offset 0 --length 8 --out d3.nc 2> log3 || { cat log3 >&2; fail "dump over a stale temporary"; }
same_stderr log3 "normsweep dump: removed d3.nc.tmp.$dead, left by a normsweep process that no longer runs"
echo junk > o4.nc.tmp.$dead
"$NORMSWEEP" run s.yaml --output o4.nc --checkpoint-dir ck4 2> log3 || { cat log3 >&2; fail "run over a stale temporary"; }
grep -qx "normsweep: removed o4.nc.tmp.$dead, left by a run killed while writing the output" log3 ||
  { cat log3 >&2; fail "run: stale temporary not reported"; }
ls ./*.tmp.* m3/*.tmp.$dead > /dev/null 2>&1 && fail "stale temporaries left: $(ls ./*.tmp.* m3/*.tmp.*)"
echo "ok 3 - temporaries of dead processes removed at the next start, a live one kept"

# (4) the output through a second name (bind mount) of the checkpoint directory: the same
# device and inode, whether the output exists yet (x.nc) or not (the journal itself).
"$NORMSWEEP" run s.yaml --output o5.nc --checkpoint-dir ck5 2> /dev/null || fail "run into ck5"
mkdir alias
if mount --bind ck5 alias 2> /dev/null; then
  mounts="$work/alias"
  for out in alias/x.nc alias/journal.nsj; do
    "$NORMSWEEP" run s.yaml --output $out --checkpoint-dir ck5 --resume 2> log5; rc=$?
    [ $rc -eq 2 ] || { cat log5 >&2; fail "$out through a bind mount: exit $rc, expected 2"; }
    same_stderr log5 "normsweep run: output $out lies inside the checkpoint directory ck5; choose another output path"
  done
  umount alias && mounts=
  echo "ok 4 - an output inside the checkpoint directory through a bind mount is refused"
else
  echo "ok 4 # SKIP cannot bind-mount here (not root?)"
fi

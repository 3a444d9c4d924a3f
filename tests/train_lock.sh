#!/bin/sh
# train_lock: the lock of `normsweep train --out DIR` (DIR/lock, common/ns_lock.h, docs/TRAIN.md):
#  (1) a finished run removes DIR/lock;
#  (2) while a run is held at step 2 (tests/hold.sh), a second run into DIR exits 2 and changes
#      nothing: without --resume for the checkpoint it finds, with --resume naming the holder's pid;
#  (3) the held run stopped by SIGTERM (exit 3) leaves DIR/lock naming it; --resume takes the lock
#      over, finishes, and removes it;
#  (4) a refused run into a finished DIR (no --resume) leaves no lock file behind.
set -u
: "${NORMSWEEP:?run through make check}" "${NS_TEST_TOKENIZER_DIR:?}" "${NS_TEST_CORPUS:?}" \
  "${top_srcdir:?}"
work=$(mktemp -d "${TMPDIR:-/tmp}/ns_train_lock.XXXXXX")
trap 'rm -rf "$work"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }
. "$top_srcdir/tests/hold.sh"
cd "$work" || fail "cd $work"

sed -n 2000,5500p "$NS_TEST_CORPUS" > small.txt
tiny="--layers 1 --heads 2 --embd 16 --ctx 16 --corpus small.txt --no-strip-gutenberg
      --tokenizer $NS_TEST_TOKENIZER_DIR --val-windows 2 --batch 2 --steps 4 --val-every 4
      --checkpoint-every 2"

# (1)
"$NORMSWEEP" train $tiny --out a 2> loga || { cat loga >&2; fail "a tiny run"; }
[ -s a/model.safetensors ] || fail "(1) no model written"
[ -e a/lock ] && fail "(1) a finished run left a/lock: $(cat a/lock)"

# (2) held after step 2's checkpoint
hold_at step:2
"$NORMSWEEP" train $tiny --out b 2> logb &
pid=$!
hold_off
[ "$(wait_held $pid)" = $pid ] || fail "the training was not held"
ls -lR b > before.txt
for resume in "" --resume; do
  "$NORMSWEEP" train $tiny --out b $resume 2> err; rc=$?
  [ $rc -eq 2 ] || { cat err >&2; kill -TERM $pid; fail "(2) a second run ($resume): exit $rc, expected 2"; }
  if [ -z "$resume" ]; then
    want="b/checkpoint/state.bin exists: pass --resume"
  else
    want="b is in use by another normsweep run (host [^,]*, pid $pid, since "
  fi
  grep -q "$want" err || { cat err >&2; kill -TERM $pid; fail "(2) ($resume) stderr lacks '$want'"; }
done
ls -lR b > after.txt
cmp -s before.txt after.txt || { diff before.txt after.txt >&2; kill -TERM $pid; fail "(2) a refused run changed b"; }

# (3)
kill -TERM $pid
wait $pid; rc=$?
[ $rc -eq 3 ] || { cat logb >&2; fail "(3) SIGTERM: exit $rc, expected 3"; }
grep -q "pid $pid, since " b/lock || fail "(3) a stopped run's b/lock does not name it: $(cat b/lock 2>&1)"
"$NORMSWEEP" train $tiny --out b --resume 2> logr || { cat logr >&2; fail "(3) --resume"; }
[ -s b/model.safetensors ] || fail "(3) --resume wrote no model"
[ -e b/lock ] && fail "(3) the resumed, finished run left b/lock: $(cat b/lock)"

# (4)
"$NORMSWEEP" train $tiny --out a 2> err; rc=$?
[ $rc -eq 2 ] || { cat err >&2; fail "(4) a second run into a finished a: exit $rc, expected 2"; }
[ -e a/lock ] && fail "(4) a refused run left a/lock"
echo "train_lock: ok"

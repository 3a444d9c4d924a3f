#!/bin/sh
# sweep_trust: the run-trust guarantees of issue 13, each against the real program under the MPI
# launcher: (1) two runners on one checkpoint directory, 20 times: one is refused (exit 2, naming
# the holder's host and pid), the other's result is right, never a wrong file; (2) a flipped byte
# in the middle of the journal: only that record is skipped and recomputed, the damage's byte
# offset is named, the result is unchanged; (3) a worker that falls silent (held after its first
# task): the master names the silent rank after --stall-timeout, saves the journal and exits 3,
# and --resume completes it; (4) SIGTERM to the launcher: the "interrupted" line and the journal
# are saved; (5) a STOP file left by an earlier segment is removed by the next run (which does not
# stop at once); (6) an OUTPUT.tmp.PID of a dead process is removed, one of a live process is
# kept. Runs caught in progress are held at a chosen point (tests/hold.sh), whatever the machine.
. "$top_srcdir/tests/sweep_common.sh"
make_sweep slow
cd "$work" || fail "cd"
t0=$(date +%s)
step() { echo "sweep_trust: $* ($(( $(date +%s) - t0 )) s)"; }
# 16 shards: about a second at -np 2
sed 's/count: 120/count: 16/' slow.yaml > short.yaml
# (2) needs records of both ranks in ckref: both start held (tests/hold.sh's run_shared)
run_shared logref run_np 2 short.yaml --output ref.nc --checkpoint-dir ckref ||
  { cat logref >&2; fail "reference run"; }
data_cdl ref.nc > ref.cdl

# ---- (1) two runners on one checkpoint directory, 20 times -------------------------------------
# Odd tries start both at once (whoever locks first runs; if the first ends before the second
# starts, the second finds a complete journal). Even tries start the second while the first holds
# the directory (its master is held at the start of its task loop, the directory locked, until the
# second has ended): the second must be refused. Both use --resume, as slurm/full_grid.sh does.
refused=0; try=1
while [ $try -le 20 ]; do
  rm -rf ck c.nc la lb
  [ $((try % 2)) -eq 0 ] && hold_at journal:0
  run_np 2 short.yaml --output c.nc --checkpoint-dir ck --resume 2> la & pa=$!
  hold_off
  if [ $((try % 2)) -eq 0 ]; then
    mpid=$(wait_held $pa) || exit 1
    wait_log la 'master pid [0-9]' $pa
    [ "$mpid" = "$(master_pid la)" ] || fail "try $try: the held process is not the first runner's master"
    run_np 2 short.yaml --output c.nc --checkpoint-dir ck --resume 2> lb; rb=$?
    release
    wait $pa; ra=$?
    [ $rb -eq 2 ] || { cat la lb >&2; fail "try $try: a second runner on a held checkpoint directory exited $rb, expected 2"; }
  else
    run_np 2 short.yaml --output c.nc --checkpoint-dir ck --resume 2> lb & pb=$!
    wait $pa; ra=$?; wait $pb; rb=$?
  fi
  for x in "a $ra" "b $rb"; do
    set -- $x
    case $2 in
      0) ;;
      2) grep -q "ck is in use by another normsweep run (.*host .*pid [0-9]" "l$1" ||
           { cat "l$1" >&2; fail "try $try: runner $1 refused without naming the holder"; }
         refused=$((refused + 1)) ;;
      *) cat "l$1" >&2; fail "try $try: runner $1 exited $2 (expected 0, or 2 when refused)" ;;
    esac
  done
  [ $ra -eq 0 ] || [ $rb -eq 0 ] || fail "try $try: neither runner completed ($ra, $rb)"
  data_cdl c.nc > c.cdl || fail "try $try: no readable output"
  cmp -s ref.cdl c.cdl || fail "try $try: the output differs from an uninterrupted run's"
  try=$((try + 1))
done
[ $refused -ge 10 ] || fail "only $refused of 20 tries refused a runner"
step "(1) 20 tries, $refused refusals, every output right"

# ---- (2) one flipped byte in the middle of a record of journal.nsj and of the worker's part --------
cp -r ckref ckd
part=ckd/journal.s1.r1.nsj
size=$(wc -c < ckd/journal.nsj)
psize=$(wc -c < "$part") || fail "the worker kept no part of the journal"
rec=$(( (size + psize - 256) / 16 ))
[ $((256 + 16 * rec)) -eq $((size + psize)) ] && [ $(( (size - 128) % rec )) -eq 0 ] ||
  fail "journal files of $size and $psize bytes do not hold 16 equal records"
n0=$(( (size - 128) / rec )); n1=$((16 - n0))
[ "$n0" -ge 1 ] && [ "$n1" -ge 1 ] || fail "rank 0 journalled $n0 records, the worker $n1: expected both"
flip() {  # flip FILE RECORD: add 1 to a byte in the middle of the record
  off=$((128 + $2 * rec + rec / 2))
  byte=$(od -An -tu1 -j "$off" -N1 "$1" | tr -d ' ')
  printf "$(printf '\\%03o' $(( (byte + 1) % 256 )))" | dd of="$1" bs=1 seek="$off" conv=notrunc status=none
}
flip ckd/journal.nsj $((n0 / 2))
flip "$part" $((n1 / 2))
cp "$part" damaged.part
run_np 2 short.yaml --output d.nc --checkpoint-dir ckd --resume 2> logd || { cat logd >&2; fail "resume on a damaged journal"; }
grep -q "2 damaged records skipped (the first at byte $((128 + n0 / 2 * rec)))" logd ||
  { cat logd >&2; fail "the damaged records were not named at byte $((128 + n0 / 2 * rec))"; }
grep -q "; 14 already in the journal" logd || { cat logd >&2; fail "valid records after the damage were lost"; }
same_data ref.nc d.nc "damaged records recomputed"
grep -q "\[resumed\]; journal segment 2$" ckd/history || fail "the resumed segment's history line: $(cat ckd/history)"
# an earlier segment's part is never written again, not even to cut its damage
cmp -s "$part" damaged.part || fail "the resumed run changed the first segment's part"
# a late write of the first segment's worker (a node cut off, its pages flushed after the resume)
# lands at the end of its own part: a later --resume reads the same records and reports it
head -c 1000 /dev/urandom >> "$part"
run_np 2 short.yaml --output d2.nc --checkpoint-dir ckd --resume 2> logd2 || { cat logd2 >&2; fail "resume after a late write"; }
grep -q "normsweep: 1 of the [0-9]* part files of ckd/journal.nsj end in an incomplete record" logd2 ||
  { cat logd2 >&2; fail "the late write was not reported"; }
grep -q "; 16 already in the journal" logd2 || { cat logd2 >&2; fail "a late write lost records"; }
[ "$(wc -c < "$part")" -eq $(( $(wc -c < damaged.part) + 1000 )) ] || fail "the old part was cut"
same_data ref.nc d2.nc "after a late write to an old part"
step "(2) flipped bytes in journal.nsj and a part: two records recomputed"

# ---- (3) a silent worker ------------------------------------------------------------------------
# Rank 1 is held once it has reported its first task: the master has sent it the next one and
# hears nothing more from it.
hold_at task:1@1
run_np 2 slow.yaml --output s.nc --checkpoint-dir cks --stall-timeout 3 2> logs & launcher=$!
hold_off
w=$(wait_held $launcher) || exit 1
wait $launcher; rc=$?
[ $rc -eq 3 ] || { cat logs >&2; fail "silent worker: exit $rc, expected 3"; }
# the silence it reports is what the master measured when it looked: at least the 3 s timeout, more
# on a loaded machine (11 s once at load 9 on 2 cores)
s=$(sed -n 's/.*rank 1 has not been heard from for \([0-9]*\) s (task .*/\1/p' logs | head -n 1)
[ -n "$s" ] && [ "$s" -ge 3 ] || { cat logs >&2; fail "the silent rank was not named after at least 3 s"; }
grep -q "continue with --resume" logs || fail "no resume hint after the stall"
kill -KILL "$w" 2> /dev/null
run_np 2 slow.yaml --output s.nc --checkpoint-dir cks --resume 2> logs2 || { cat logs2 >&2; fail "resume after a stall"; }
make_sweep slow
run_np 2 slow.yaml --output sref.nc --checkpoint-dir cksref 2> /dev/null || fail "reference of the slow sweep"
same_data sref.nc s.nc "stall + resume vs uninterrupted"
step "(3) stalled worker named, exit 3, resumed"

# ---- (4) SIGTERM to the launcher ----------------------------------------------------------------
# (the launcher itself, not a subshell around it, receives the signal). Open MPI's launcher passes
# it on to the ranks about a second later (measured: 1.0 s); the master is held with 10 tasks in
# the journal until the signal reaches it, so the run cannot end first however fast the machine.
# Open MPI's launcher then stops the ranks in three steps (ORTE's odls kill: SIGCONT, sleep T,
# SIGTERM, sleep T, SIGKILL; T = odls_base_sigkill_timeout, default 1 s), so the master has T
# seconds after its SIGTERM. At load 9 on 2 cores it once had not printed its interrupted line
# within 1 s (measured at load 11: the line within 1 s in 2 of 2 tries; mpiexec exits about 2T
# after the signal, 2.4 s at T = 1, 5.8 s at T = 3). The journal is whole either way (records are
# written whole; SIGKILL and resume: sweep_resume.sh (1)); the clean stop is under test here, so T
# is 10 s, as docs/RUNNING.md advises on loaded nodes (the step takes about 20 s longer).
hold_at journal:10
OMPI_MCA_odls_base_sigkill_timeout=10 \
  "$MPIEXEC" --oversubscribe -np 2 "$NORMSWEEP" slow.yaml --output t.nc --checkpoint-dir ckt 2> logt & launcher=$!
hold_off
wait_held $launcher > /dev/null || exit 1
kill -TERM $launcher
wait $launcher; rc=$?
[ $rc -ne 0 ] || fail "SIGTERM to the launcher: exit 0"
grep -q "normsweep run: interrupted: [0-9]* of 120 tasks saved in ckt/journal.nsj; continue with --resume" logt ||
  { cat logt >&2; fail "SIGTERM to the launcher: no interrupted line"; }
n=$(sed -n 's/.*interrupted: \([0-9]*\) of 120.*/\1/p' logt)
[ "$n" -ge 10 ] && [ "$n" -lt 120 ] || fail "SIGTERM to the launcher: $n of 120 tasks saved, expected 10 to 119"
run_np 2 slow.yaml --output t.nc --checkpoint-dir ckt --resume 2> logt2 || { cat logt2 >&2; fail "resume after SIGTERM to the launcher"; }
grep -q "; $n already in the journal" logt2 || { cat logt2 >&2; fail "the resume did not find the $n saved tasks"; }
same_data sref.nc t.nc "SIGTERM to the launcher + resume"
step "(4) SIGTERM to the launcher: exit $rc, interrupted line, resumed"

# ---- (5) a STOP file left behind ----------------------------------------------------------------
cp -r cks cku; touch cku/STOP
run_np 2 slow.yaml --output u.nc --checkpoint-dir cku --resume 2> logu || { cat logu >&2; fail "resume with an old STOP file"; }
grep -q "removed cku/STOP (the stop request of an earlier run segment)" logu || fail "STOP file not reported"
[ ! -e cku/STOP ] || fail "STOP file still there"
same_data sref.nc u.nc "resume after an old STOP file"
step "(5) old STOP file removed"

# ---- (6) temporaries of a killed output write ---------------------------------------------------
rm -rf ckv; mkdir outv
sleep 1000 & live=$!
dead=$(sh -c 'echo $$')   # a process that has ended
echo junk > "outv/v.nc.tmp.$dead"; echo junk > "outv/v.nc.tmp.$live"
run_np 2 short.yaml --output outv/v.nc --checkpoint-dir ckv 2> logv || { cat logv >&2; fail "run with stale temporaries"; }
kill $live
[ ! -e "outv/v.nc.tmp.$dead" ] || fail "the dead writer's temporary was kept"
[ -e "outv/v.nc.tmp.$live" ] || fail "a live process's temporary was removed"
grep -q "removed outv/v.nc.tmp.$dead, left by a run killed while writing the output" logv || fail "removal not reported"
step "(6) stale temporary removed, live one kept"
echo "sweep_trust: ok"

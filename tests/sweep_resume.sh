#!/bin/sh
# sweep_resume: (1) SIGKILL a worker mid-run, resume with another rank count: the result equals an
# uninterrupted run's; (2) SIGTERM the master: exit 3 with the journal saved (and its lock
# record), no output file; --resume finishes with identical data and recomputes nothing already
# journaled; (3) a finished run leaves no lock file, and a --resume of it writes nothing unless
# its output is missing or differently compressed. Each run is caught in progress by holding
# its master once 10 tasks are journalled (tests/hold.sh).
. "$top_srcdir/tests/sweep_common.sh"
make_sweep slow
cd "$work" || fail "cd"

run_np 2 slow.yaml --output ref.nc --checkpoint-dir ckref 2> logref || { cat logref >&2; fail "reference run"; }

# a misspelt hold is refused before anything runs (a test must never run unheld by mistake)
NORMSWEEP_TEST_HOLD=jounral:10 NORMSWEEP_TEST_HOLD_DIR=$work "$NORMSWEEP" slow.yaml --output x.nc \
  --checkpoint-dir ckx 2> logx; rc=$?
[ $rc -eq 2 ] && grep -q "NORMSWEEP_TEST_HOLD='jounral:10': expected POINT\[:COUNT\]\[@RANK\]" logx &&
  [ ! -e ckx ] || { cat logx >&2; fail "a misspelt NORMSWEEP_TEST_HOLD: exit $rc"; }

# (1) a worker killed with SIGKILL while the master holds with 10 of the 120 tasks in the journal
hold_at journal:10
run_np 3 slow.yaml --output a.nc --checkpoint-dir cka 2> loga &
launcher=$!
hold_off
master=$(wait_held $launcher) || exit 1
worker=$(workers_of "$master" | head -n 1)
[ -n "$worker" ] || fail "no worker process found"
kill -KILL "$worker"
release
wait "$launcher" && fail "run with a killed worker exited 0"
[ -f a.nc ] && fail "output written despite the killed worker"
[ -f cka/journal.nsj ] || fail "no journal after the killed run"
run_np 2 slow.yaml --output a.nc --checkpoint-dir cka --resume 2> loga2 || { cat loga2 >&2; fail "resume after SIGKILL"; }
done_before=$(sed -n 's/.*; \([0-9]*\) already in the journal.*/\1/p' loga2)
[ "${done_before:-0}" -ge 10 ] || fail "resume found ${done_before:-no} tasks in the journal, expected at least 10"
same_data ref.nc a.nc "SIGKILL + resume vs uninterrupted"

# (2) SIGTERM to the master, held with 10 tasks in the journal (the signal ends the hold)
hold_at journal:10
run_np 2 slow.yaml --output b.nc --checkpoint-dir ckb 2> logb &
launcher=$!
hold_off
master=$(wait_held $launcher) || exit 1
wait_log logb 'master pid [0-9]' $launcher
[ "$master" = "$(master_pid logb)" ] || fail "the held process is not the master"
kill -TERM "$master"
wait "$launcher"; rc=$?
[ $rc -eq 3 ] || { cat logb >&2; fail "SIGTERM to the master: exit $rc, expected 3"; }
grep -q "continue with --resume" logb || fail "no resume hint after SIGTERM"
[ -f b.nc ] && fail "output written despite SIGTERM"
# a stopped run keeps its lock file, naming its last holder (tested further in (3))
grep -q "pid $master, since .*slow.yaml" ckb/lock || fail "a stopped run did not keep its lock record: $(cat ckb/lock 2>&1)"
run_np 1 slow.yaml --output b.nc --checkpoint-dir ckb --resume 2> logb2 || { cat logb2 >&2; fail "resume after SIGTERM"; }
before=$(sed -n 's/.*; \([0-9]*\) already in the journal.*/\1/p' logb2)
computed=$(sed -n 's/.*master computed \([0-9]*\) task.*/\1/p' logb2)
[ "${before:-0}" -ge 10 ] || fail "${before:-no} tasks journalled before SIGTERM, expected at least 10"
[ $((before + computed)) -eq 120 ] || fail "resume recomputed work: $before journaled + $computed computed != 120"
same_data ref.nc b.nc "SIGTERM + resume vs uninterrupted"
[ "$(forward_counts b.nc | tr ',' '\n' | sort -u)" = "1" ] || fail "a shard's forward ran more than once"

# (3) the lock file, kept by the stopped run of (2), is removed by a clean finish; a --resume of
# the finished journal writes nothing: exit 0, the output byte for byte as it was, no history
# line added, no lock file left. Missing output, or --uncompressed asked of a compressed one:
# written again, with the same data.
[ -e ckb/lock ] && fail "the finished resume left ckb/lock"
[ -e ckref/lock ] && fail "the finished reference run left ckref/lock"
cp b.nc b.before; cp ckb/history hist.before
run_np 2 slow.yaml --output b.nc --checkpoint-dir ckb --resume 2> logb3 || { cat logb3 >&2; fail "resume of a finished run"; }
grep -q "normsweep: b.nc is already complete: the journal ckb/journal.nsj holds all 120 tasks" logb3 ||
  { cat logb3 >&2; fail "resume of a finished run does not say it is complete"; }
grep -q "ETA\|already in the journal" logb3 && { cat logb3 >&2; fail "resume of a finished run ran the task loop"; }
cmp -s b.nc b.before || fail "resume of a finished run changed the output"
cmp -s ckb/history hist.before || fail "resume of a finished run added a history line"
[ -e ckb/lock ] && fail "resume of a finished run left ckb/lock"
rm b.nc
run_np 1 slow.yaml --output b.nc --checkpoint-dir ckb --resume 2> logb4 || { cat logb4 >&2; fail "resume with the output gone"; }
grep -q "ETA 0s" logb4 || { cat logb4 >&2; fail "resume with nothing left to compute: no 'ETA 0s'"; }
grep -q "normsweep: wrote b.nc" logb4 || { cat logb4 >&2; fail "resume with the output gone did not write it"; }
same_data ref.nc b.nc "finished journal, output rewritten"
[ "$(wc -l < ckb/history)" -eq $(( $(wc -l < hist.before) + 1 )) ] || fail "the rewrite did not add its history line"
run_np 1 slow.yaml --output b.nc --checkpoint-dir ckb --resume --uncompressed 2> logb5 ||
  { cat logb5 >&2; fail "--uncompressed resume of a finished run"; }
grep -q "normsweep: wrote b.nc" logb5 || { cat logb5 >&2; fail "--uncompressed of a compressed output: not rewritten"; }
ncdump -h b.nc | grep -q ':compression = "none"' || fail "--uncompressed rewrite is compressed"
same_data ref.nc b.nc "finished journal, output rewritten uncompressed"
echo "sweep_resume: ok"

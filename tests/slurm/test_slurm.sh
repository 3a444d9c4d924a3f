#!/bin/bash
# test_slurm.sh: slurm/full_grid.sh on a real one-node Slurm started here (munged, slurmctld,
# slurmd on localhost, on free ports; stopped by PID at the end, whatever happens).
#  1. sbatch on a small sweep: the NetCDF's data equal a direct mpirun run's; the job log is in
#     the run directory; the history records the Slurm job.
#  2. the time-limit path, with a limit shorter than the warning's lead (`sbatch -t 2`: 120 s
#     against the script's --signal=B:USR1@300): the script says so, ignores Slurm's SIGUSR1 and
#     warns the run itself halfway through the limit; the sweep, held until that warning reaches
#     it -> checkpoint -> requeue -> resumed run -> complete, with data equal to an uninterrupted
#     direct run; the history records restart 0 and restart 1.
#  3. scancel while the sweep runs (held): the job ends CANCELLED, is not requeued, its journal
#     kept; the log's continuation line names NORMSWEEP_BIN, and pasted into a shell with no
#     NORMSWEEP_* variable it submits a job that completes the sweep with the direct run's data.
#  4. a failed requeue (a job submitted with --no-requeue gets the warning while its sweep is
#     held): the job ends FAILED with exit code 3, not COMPLETED.
#  5. NORMSWEEP_BIN naming no program: the job ends FAILED with exit code 127 and the log names
#     the program; nothing is launched.
# A sweep that must still be running when a signal comes is held once 2 of its 8 tasks are in the
# journal (the test-only hold, tests/hold.sh; a stop signal ends it), so no machine is fast enough
# to finish it first.
# The requeue delay of the test cluster is Slurm's own (AuthInfo=cred_expire, 15 s here): the
# test never forces a requeued job to start, which could race the revocation of its previous
# launch credential ("Job credential revoked").
# Needs root (installs slurm-wlm and munge with apt when missing). Run by `make check-slurm`.
set -eu
: "${top_srcdir:?}" "${top_builddir:?}" "${NORMSWEEP:?}" "${MPIEXEC:?}"
here="$top_srcdir/tests/slurm"
script="$top_srcdir/slurm/full_grid.sh"
work=$(mktemp -d "$top_builddir/slurm-test.XXXXXX")
cluster="$work/cluster"
fail() { echo "FAIL: $*"; exit 1; }
passed=0
. "$top_srcdir/tests/hold.sh"
cleanup() {
  bash "$here/local_cluster.sh" stop "$cluster" || true
  # Keep the daemons' logs and the job outputs when something failed.
  if [ "$passed" -eq 1 ]; then rm -rf "$work"; else echo "slurm test files kept in $work"; fi
}
trap cleanup EXIT INT TERM

t_start=$(date +%s)
bash "$here/local_cluster.sh" install
bash "$here/local_cluster.sh" start "$cluster"
SLURM_CONF="$cluster/etc/slurm.conf"; export SLURM_CONF
np=2

# Data variables only: header attributes recording times, hosts, MPI size and job ids differ.
data_of() { "$top_builddir/tests/nc_datadump" "$1"; }
same_data() {
  data_of "$1" > "$work/a.txt" || fail "nc_datadump $1"
  data_of "$2" > "$work/b.txt" || fail "nc_datadump $2"
  cmp -s "$work/a.txt" "$work/b.txt" || fail "$3: data differ between $1 and $2"
}

# job_field ID FIELD: one field of scontrol show job (JobState, Restarts, ExitCode, Reason, ...)
job_field() {
  scontrol show job "$1" 2>/dev/null | tr ' ' '\n' | sed -n "s/^$2=//p" | head -n 1
}

# wait_end ID SECONDS: wait until the job has ended (any final state), print that state.
wait_end() {
  local id=$1 limit=$2 t=0 st=""
  while [ $t -lt "$limit" ]; do
    st=$(job_field "$id" JobState)
    case "$st" in
      COMPLETED|FAILED|CANCELLED|TIMEOUT|NODE_FAIL|OUT_OF_MEMORY|BOOT_FAIL|DEADLINE|PREEMPTED)
        echo "$st"; return 0 ;;
    esac
    sleep 2; t=$((t + 2))
  done
  echo "job $id not ended after $limit s (state $st)" >&2
  echo "$st"; return 1
}

# wait_held_job ID: until the job's sweep is held (hold_at before the submission; at most 300 s)
wait_held_job() {
  local t=0
  until [ -s "$work/hold/held" ]; do
    case "$(job_field "$1" JobState)" in
      COMPLETED|FAILED|CANCELLED|TIMEOUT|NODE_FAIL|BOOT_FAIL) fail "job $1 ended before its hold point" ;;
    esac
    [ $t -lt 1500 ] || fail "job $1 not held after 300 s"
    sleep 0.2; t=$((t + 1))
  done
}

# wait_script_end LOG SECONDS: until full_grid.sh has logged its decision (its last line: the
# sweep complete, cancelled, requeueing, a failed requeue or a failed sweep)
wait_script_end() {
  local t=0
  until grep -qE "full_grid.sh: (sweep complete|cancelled|checkpoint saved|normsweep failed)" "$1" 2>/dev/null; do
    [ $t -lt $(( $2 * 5 )) ] || return 1
    sleep 0.2; t=$((t + 1))
  done
}

# submit NAME SWEEP SBATCH-OPTIONS...: submit full_grid.sh from $work (the log starts there and
# is moved into the run directory $work/NAME), print the job id.
submit() {
  local name=$1 sweep=$2; shift 2
  (cd "$work" && NORMSWEEP_SWEEP="$sweep" NORMSWEEP_RUN_DIR="$work/$name" \
    sbatch --parsable -n $np "$@" "$script")
}

export NORMSWEEP_BIN="$NORMSWEEP" OPENBLAS_NUM_THREADS=1
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1

# direct NAME SWEEP: the reference, an uninterrupted mpirun run
direct() {
  "$MPIEXEC" --oversubscribe -np $np "$NORMSWEEP" --output "$work/direct_$1.nc" \
    --checkpoint-dir "$work/direct_$1.ckpt" "$2" 2> "$work/direct_$1.log" ||
    { cat "$work/direct_$1.log"; fail "direct run of $2"; }
}

# ---- 1: plain batch run versus a direct run
small="$here/slurm_small.yaml"
direct small "$small"
id=$(submit run1 "$small" -t 10)
echo "submitted the small sweep as job $id"
st=$(wait_end "$id" 300) || true
log="$work/run1/slurm-$id.out"
[ "$st" = COMPLETED ] || { cat "$log" "$work/slurm-$id.out" 2>/dev/null; fail "small sweep job $id ended $st"; }
[ -f "$log" ] && [ ! -L "$log" ] || fail "job log $log is not in the run directory"
[ "$(readlink "$work/slurm-$id.out")" = "$log" ] || fail "no link from the submit directory to $log"
grep -q "sweep complete" "$log" || { cat "$log"; fail "the log does not end the sweep"; }
grep -q "job $id, nodes $(hostname -s), restart 0, 2 tasks" "$log" || fail "the log lacks the job facts"
grep -q "slurm job $id, nodes $(hostname -s), restart 0" "$work/run1/checkpoint/history" ||
  fail "history does not record the Slurm job: $(cat "$work/run1/checkpoint/history")"
same_data "$work/direct_small.nc" "$work/run1/slurm_small.nc" "batch run"
echo "ok 1 - sbatch slurm/full_grid.sh gives the direct run's data; log and history in the run directory ($(( $(date +%s) - t_start )) s so far)"

# ---- 2: a time limit shorter than the warning's lead -> the script's own warning -> checkpoint
# -> requeue -> completion
# `-t 2` with the script's own --signal=B:USR1@300: Slurm's SIGUSR1 comes at its first limit
# check, which the script ignores; its own warning comes 60 s into the job. The first segment's
# sweep is held with 2 of its 8 tasks in the journal until the warning reaches it, so it cannot
# end first. Once the warning is in the log, the hold is released for good, so the requeued
# segment (given 10 minutes) runs through.
t0=$(date +%s)
hold_at journal:2
id=$(submit run2 "$small" -t 2)
hold_off
echo "submitted the small sweep as job $id with a 2-minute limit (the warning's lead 300 s), held at 2 tasks"
log="$work/run2/slurm-$id.out"
t=0; raised=0; released=0
while [ $t -lt 900 ]; do
  st=$(job_field "$id" JobState)
  case "$st" in COMPLETED|FAILED|CANCELLED|TIMEOUT|NODE_FAIL|BOOT_FAIL) break ;; esac
  if [ $released -eq 0 ] && grep -q "time is nearly up (" "$log" 2>/dev/null; then
    release; released=1
  fi
  if [ $raised -eq 0 ] && [ "$st" = PENDING ] && [ "$(job_field "$id" Restarts)" -ge 1 ]; then
    scontrol update JobId="$id" TimeLimit=10 && raised=1
  fi
  sleep 2; t=$((t + 2))
done
cat "$log"
[ "$st" = COMPLETED ] || fail "job $id ended '$st'"
[ -s "$work/hold/held" ] || fail "job $id: the sweep was never held"
grep -q "full_grid.sh: time limit 120 s is shorter than the warning's lead of 300 s" "$log" ||
  fail "the short time limit was not reported"
grep -q "time is nearly up (the script's own warning, half the time limit)" "$log" ||
  fail "no warning of the script's own seen"
grep -q "time is nearly up (SIGUSR1)" "$log" && fail "Slurm's early SIGUSR1 was taken for the warning"
grep -q "requeueing job $id" "$log" || fail "job $id was not requeued"
grep -q "SIGTERM" "$log" && fail "job $id saw SIGTERM"
n=$(job_field "$id" Restarts); [ "${n:-0}" -ge 1 ] || fail "restart count is ${n:-unset}"
k=$(sed -n 's/.*; \([0-9]*\) already in the journal.*/\1/p' "$log" | tail -n 1)
[ "${k:-0}" -ge 2 ] || fail "the requeued segment found ${k:-no} tasks in the journal, expected at least 2"
h="$work/run2/checkpoint/history"
grep -q "slurm job $id, nodes [^,]*, restart 0)" "$h" && grep -q "slurm job $id, nodes [^,]*, restart 1)" "$h" ||
  fail "history does not record both segments: $(cat "$h")"
same_data "$work/direct_small.nc" "$work/run2/slurm_small.nc" "requeued run"
echo "ok 2 - a time limit shorter than the warning's lead: the script's own warning, checkpoint, requeue ($n restarts, resumed from $k tasks) and completion give the uninterrupted data ($(( $(date +%s) - t0 )) s)"

# ---- 3: scancel cancels: no requeue
t0=$(date +%s)
hold_at journal:2
id=$(submit run3 "$small" -t 10)
hold_off
log="$work/run3/slurm-$id.out"
wait_held_job "$id"
scancel "$id"
st=$(wait_end "$id" 120) || true
# a requeue would come from the script, before its last line (the old script requeued on scancel)
wait_script_end "$log" 120 || { cat "$log"; fail "scancel: the script did not finish"; }
cat "$log"
st=$(job_field "$id" JobState)
[ "$st" = CANCELLED ] || fail "scancel: job $id is $st, not CANCELLED"
[ "$(job_field "$id" Restarts)" = 0 ] || fail "scancel: job $id was restarted"
grep -q "requeueing" "$log" && fail "scancel: job $id tried to requeue"
grep -q "SIGTERM (scancel" "$log" || fail "scancel: the script did not see SIGTERM"
grep -q "full_grid.sh: cancelled (normsweep status" "$log" || fail "scancel: the script did not end as cancelled"
[ -s "$work/run3/checkpoint/journal.nsj" ] || fail "scancel: no journal kept"
[ ! -e "$work/run3/slurm_small.nc" ] || fail "scancel: a complete output from a cancelled run"
# The continuation line, pasted into a shell that has none of the NORMSWEEP_* variables (the
# default NORMSWEEP_BIN, ./normsweep or normsweep on PATH, does not exist here); the rest of the
# environment is kept (OPENBLAS_CORETYPE, say, chooses OpenBLAS's kernels and so the last bits).
line=$(sed -n '/Continue with:$/{n;s/^full_grid.sh:   //p;}' "$log" | tail -n 1)
case "$line" in
  *" NORMSWEEP_BIN=$NORMSWEEP "*) ;;
  *) fail "scancel: the continuation line does not name NORMSWEEP_BIN: '$line'" ;;
esac
no_ns=$(env | sed -n 's/^\(NORMSWEEP_[A-Za-z0-9_]*\)=.*/-u \1/p')
sub=$(cd / && env $no_ns bash -c "$line") ||
  fail "the pasted continuation line failed: $sub"
id2=$(echo "$sub" | sed -n 's/^Submitted batch job \([0-9]*\)$/\1/p')
[ -n "$id2" ] || fail "the pasted continuation line did not submit a job: $sub"
st=$(wait_end "$id2" 300) || true
[ "$st" = COMPLETED ] || { cat "$work/run3/slurm-$id2.out"; fail "the continuation job $id2 ended $st"; }
same_data "$work/direct_small.nc" "$work/run3/slurm_small.nc" "cancelled and continued run"
echo "ok 3 - scancel: job CANCELLED, not requeued, journal kept; its pasted continuation line (NORMSWEEP_BIN included) completes it ($(( $(date +%s) - t0 )) s)"

# ---- 4: the warning on a job that cannot be requeued: FAILED (exit 3), not COMPLETED
t0=$(date +%s)
hold_at journal:2
id=$(submit run4 "$small" -t 10 --no-requeue)
hold_off
log="$work/run4/slurm-$id.out"
wait_held_job "$id"
# What --signal=B:USR1 does at the time limit: SIGUSR1 to the batch shell only.
scancel --batch --signal=USR1 "$id"
st=$(wait_end "$id" 120) || true
cat "$log"
[ "$st" = FAILED ] || fail "failed requeue: job $id ended $st, not FAILED"
[ "$(job_field "$id" ExitCode)" = 3:0 ] || fail "failed requeue: exit code $(job_field "$id" ExitCode), not 3:0"
grep -q "scontrol requeue $id failed" "$log" || fail "failed requeue: not reported in the log"
grep -q "full_grid.sh: continue with: cd .* NORMSWEEP_BIN=$NORMSWEEP .*sbatch " "$log" ||
  fail "failed requeue: the continuation line does not name NORMSWEEP_BIN"
[ -s "$work/run4/checkpoint/journal.nsj" ] || fail "failed requeue: no journal kept"
echo "ok 4 - a failed requeue ends the job FAILED with exit code 3 ($(( $(date +%s) - t0 )) s)"

# ---- 5: a program that is not there: the script's own exit code, not the launcher's
t0=$(date +%s)
id=$(cd "$work" && NORMSWEEP_BIN="$work/no-such-normsweep" NORMSWEEP_SWEEP="$small" \
  NORMSWEEP_RUN_DIR="$work/run5" sbatch --parsable -n $np -t 10 "$script")
st=$(wait_end "$id" 120) || true
log="$work/slurm-$id.out"
cat "$log"
[ "$st" = FAILED ] || fail "missing program: job $id ended $st, not FAILED"
[ "$(job_field "$id" ExitCode)" = 127:0 ] || fail "missing program: exit code $(job_field "$id" ExitCode), not 127:0"
grep -q "full_grid.sh: NORMSWEEP_BIN=$work/no-such-normsweep: no such executable file" "$log" ||
  fail "missing program: not named in the log"
[ ! -e "$work/run5" ] || fail "missing program: a run directory was created"
echo "ok 5 - a missing program ends the job FAILED with exit code 127, named in the log ($(( $(date +%s) - t0 )) s)"
echo "check-slurm: 5 tests passed in $(( $(date +%s) - t_start )) s"
passed=1

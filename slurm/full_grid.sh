#!/bin/bash
# full_grid.sh: run a normsweep sweep as a Slurm batch job that saves a checkpoint shortly before
# its time limit and requeues itself until the sweep is complete; `scancel` cancels it.
#
#   sbatch slurm/full_grid.sh                           # sweeps/full_grid.yaml on 2 ranks
#   sbatch -n 64 -t 12:00:00 slurm/full_grid.sh         # scale up: any directive below can be
#                                                       # overridden on the command line
#   NORMSWEEP_SWEEP=sweeps/ablation.yaml sbatch slurm/full_grid.sh
#
# Submit from the project's top directory, or from anywhere with normsweep installed (the sweep
# is then looked up in the installed sweeps/ too). Environment knobs:
#   NORMSWEEP_SWEEP     sweep file (default sweeps/full_grid.yaml)
#   NORMSWEEP_RUN_DIR   run directory: the NetCDF output, checkpoint/ (journal and history) and
#                       the job log (default runs/<sweep>-<jobid>; the same directory across
#                       the requeues of one job, which is what makes resume work)
#   NORMSWEEP_BIN       the normsweep program (default ./normsweep, else normsweep on PATH)
#   NORMSWEEP_LAUNCHER  "srun", "mpirun", or a whole launch command such as
#                       "mpiexec.mpich -n 4" (default: srun when its MPI plugin list has pmix,
#                       else mpirun)
#   NORMSWEEP_MAX_REQUEUES  give up after this many requeues (default 20)
#   NORMSWEEP_WARNING_LEAD  seconds of the --signal=B:USR1@SECONDS lead (default 300, the
#                       directive below): set it too when you pass another --signal to sbatch
#   OPENBLAS_NUM_THREADS    BLAS threads per rank (default 1: one rank per core)
#
# Defaults that run anywhere: 2 tasks and the partition's own time limit (no --time), so the job
# neither pends on a small partition (Reason=PartitionConfig) nor asks for more time than the
# partition allows (Reason=PartitionTimeLimit). Scale up with -n / -N / -t at submission.
#
# Signals. Slurm sends SIGUSR1 to this script 300 s before the time limit (--signal=B:USR1@300;
# it can arrive up to a minute early): time is nearly up. The script forwards SIGUSR1 to the run
# (mpirun and srun pass it on to every rank) and writes CHECKPOINT_DIR/STOP, which the master
# also polls; normsweep saves its journal and exits with status 3; the script then requeues the
# job (scontrol requeue) and the requeued job resumes from the journal. SIGTERM means cancel
# (scancel, or the time limit itself): Slurm signals every process of the job, normsweep saves
# its journal and stops, and the job is NOT requeued. The log then names the command that
# continues it: cd to the submit directory, every NORMSWEEP_* variable the job had (shell-quoted),
# and sbatch of this script.
#
# A time limit too short for the warning (less than the lead plus the minute by which Slurm may
# send it early; `sbatch -t 2` with the 300 s lead): Slurm's SIGUSR1 would come at once and every
# segment would checkpoint and requeue without progress. The script reads its job's TimeLimit,
# says so in the log, ignores Slurm's SIGUSR1 and sends the warning itself halfway through the
# time limit (a lead of half the limit).
#
# Exit status: 0 the sweep's NetCDF file is complete; 3 checkpoint saved but the job could not be
# requeued (scontrol requeue failed, or NORMSWEEP_MAX_REQUEUES reached: the log says how to
# continue); 127 the normsweep program (NORMSWEEP_BIN) or the launcher is not found or not
# executable (nothing was run); 143 cancelled; otherwise normsweep's status (1 runtime failure,
# 2 invalid input).
#
# The log. Slurm writes the job's output where --output says, and cannot create directories, so
# the default log starts in the submit directory; the script moves it into the run directory as
# slurm-<jobid>.out (Slurm keeps writing to the moved file) and leaves a symbolic link in its
# place, through which the requeued segments append (--open-mode=append) -- so
# `normsweep archive RUN_DIR` finds the whole log. Submitting with --output already inside an
# existing run directory (sbatch -o runs/x/slurm-%j.out, NORMSWEEP_RUN_DIR=runs/x) skips this.
# Each segment prints the job id, node list and restart count; normsweep records the same in
# CHECKPOINT_DIR/history and in the NetCDF file's history attribute.
#
#SBATCH --job-name=normsweep
#SBATCH --ntasks=2
#SBATCH --cpus-per-task=1
#SBATCH --output=slurm-%j.out
#SBATCH --open-mode=append
#SBATCH --requeue
#SBATCH --signal=B:USR1@300

set -u
# A SIGUSR1 before its handler is set (Slurm may send it within the first second when the time
# limit is short) must not kill the script: noted here, handled below.
early_usr1=0
trap 'early_usr1=1' USR1

say() { echo "full_grid.sh: $*"; }
die() { echo "full_grid.sh: $2" >&2; exit "$1"; }

home=${NORMSWEEP_HOME:-${SLURM_SUBMIT_DIR:-$(pwd)}}
cd "$home" || die 1 "cannot cd to $home"

sweep=${NORMSWEEP_SWEEP:-sweeps/full_grid.yaml}
name=$(basename "$sweep" .yaml)
jobid=${SLURM_JOB_ID:-nojob}
run_dir=${NORMSWEEP_RUN_DIR:-runs/$name-$jobid}
bin=${NORMSWEEP_BIN:-}
if [ -z "$bin" ]; then
  if [ -x ./normsweep ]; then bin=./normsweep; else bin=normsweep; fi
fi
restarts=${SLURM_RESTART_COUNT:-0}
max_requeues=${NORMSWEEP_MAX_REQUEUES:-20}
lead=${NORMSWEEP_WARNING_LEAD:-300}
export OPENBLAS_NUM_THREADS=${OPENBLAS_NUM_THREADS:-1}

# The program must be there before anything is launched: a launcher that cannot start it reports
# its own status (srun's 2 would read as normsweep's "invalid input").
case "$bin" in
  */*) [ -f "$bin" ] && [ -x "$bin" ] ||
         die 127 "NORMSWEEP_BIN=$bin: no such executable file (in $home); nothing was run" ;;
  *) command -v "$bin" > /dev/null 2>&1 ||
       die 127 "normsweep program '$bin' not found on PATH (set NORMSWEEP_BIN, or submit from the directory holding ./normsweep); nothing was run" ;;
esac

mkdir -p "$run_dir/checkpoint" || die 1 "cannot create $run_dir/checkpoint"
run_dir=$(cd "$run_dir" && pwd)
output="$run_dir/$name.nc"
log="$run_dir/slurm-$jobid.out"
# The submitted script (Slurm runs a copy of it), for the messages that say how to continue.
script=$(scontrol show job "$jobid" 2>/dev/null | sed -n 's/^ *Command=//p' | head -n 1)
script=${script:-slurm/full_grid.sh}

# Move the job log into the run directory (see "The log" above).
adopt_log() {
  [ -n "${SLURM_JOB_ID:-}" ] || return 0
  local out
  out=$(scontrol show job "$jobid" 2>/dev/null | sed -n 's/^ *StdOut=//p' | head -n 1)
  [ -n "$out" ] || return 0
  case "$out" in "$run_dir"/*) return 0 ;; esac
  if [ -L "$out" ]; then return 0; fi          # a requeued segment: already linked
  [ -f "$out" ] || return 0
  if [ "$(stat -c %d "$out")" = "$(stat -c %d "$run_dir")" ] && mv "$out" "$log" &&
     ln -s "$log" "$out"; then
    say "job log moved to $log (a link to it stays at $out)"
  else
    # Another file system: Slurm keeps its own file; everything from here on goes to the run
    # directory's log as well.
    say "job log continues in $log"
    exec >> "$log" 2>&1
  fi
}
adopt_log

rm -f "$run_dir/checkpoint/STOP"

launcher=${NORMSWEEP_LAUNCHER:-}
if [ -z "$launcher" ]; then
  if srun --mpi=list 2>&1 | grep -q pmix; then launcher=srun; else launcher=mpirun; fi
fi
case "$launcher" in
  srun) launch=(srun --mpi=pmix --kill-on-bad-exit=1) ;;
  mpirun)
    launch=(mpirun)
    [ "$(id -u)" -eq 0 ] && launch+=(--allow-run-as-root)
    ;;
  *) read -r -a launch <<< "$launcher" ;;
esac
command -v "${launch[0]}" > /dev/null 2>&1 ||
  die 127 "launcher '${launch[0]}' not found on PATH (NORMSWEEP_LAUNCHER); nothing was run"

# How to continue this run in a later job: from the submit directory, with every NORMSWEEP_*
# variable this job has (sbatch passes the submitter's environment on), shell-quoted; the run
# directory and the sweep always; not the tests' own NORMSWEEP_TEST_* variables.
continue_line() {
  local line="cd $(printf '%q' "$home") &&" v
  line+=" NORMSWEEP_RUN_DIR=$(printf '%q' "$run_dir") NORMSWEEP_SWEEP=$(printf '%q' "$sweep")"
  for v in $(compgen -e | grep '^NORMSWEEP_' | sort); do
    case "$v" in NORMSWEEP_RUN_DIR|NORMSWEEP_SWEEP|NORMSWEEP_TEST_*) continue ;; esac
    line+=" $v=$(printf '%q' "${!v}")"
  done
  echo "$line sbatch $(printf '%q' "$script")"
}

# seconds HH:MM:SS / D-HH:MM:SS / MM:SS / MM: Slurm's time, in seconds (empty if not a time)
seconds() {
  local t=$1 d=0 h=0 m=0 s=0
  case "$t" in *-*) d=${t%%-*}; t=${t#*-} ;; esac
  IFS=: read -r -a f <<< "$t"
  case ${#f[@]} in
    3) h=${f[0]}; m=${f[1]}; s=${f[2]} ;;
    2) m=${f[0]}; s=${f[1]} ;;
    1) m=${f[0]} ;;
    *) return 0 ;;
  esac
  for x in "$d" "$h" "$m" "$s"; do case "$x" in ''|*[!0-9]*) return 0 ;; esac; done
  echo $(( ((10#$d * 24 + 10#$h) * 60 + 10#$m) * 60 + 10#$s ))
}

say "job $jobid, nodes ${SLURM_JOB_NODELIST:-?}, restart $restarts, ${SLURM_NTASKS:-?} tasks: $sweep -> $output (launcher ${launch[*]}, $(date '+%F %T'))"

child=""
warned=0
cancelled=0
own_warning=0
timer=""
# The time limit against the warning's lead (see "A time limit too short" above).
if [ -n "${SLURM_JOB_ID:-}" ]; then
  job=$(scontrol show job "$jobid" 2>/dev/null | tr ' ' '\n')
  limit=$(seconds "$(echo "$job" | sed -n 's/^TimeLimit=//p' | head -n 1)")
  started=$(date -d "$(echo "$job" | sed -n 's/^StartTime=//p' | head -n 1)" +%s 2>/dev/null)
  if [ -n "$limit" ] && [ "$limit" -lt $(( lead + 60 )) ]; then
    own_warning=1
    at=$(( limit / 2 ))
    in=$(( ${started:-$(date +%s)} + at - $(date +%s) ))
    [ "$in" -gt 0 ] || in=0
    say "time limit ${limit} s is shorter than the warning's lead of ${lead} s (--signal=B:USR1@${lead}) plus the minute Slurm may send it early: Slurm's SIGUSR1 would come at once and every segment would checkpoint and requeue without progress. This job ignores Slurm's SIGUSR1 and warns normsweep itself ${at} s after the job started (in ${in} s), half the limit; submit with a longer -t for longer segments (NORMSWEEP_WARNING_LEAD if you pass another --signal)" >&2
    ( sleep "$in" & s=$!; trap 'kill $s 2>/dev/null; exit 0' TERM; wait $s; kill -USR2 $$ 2>/dev/null ) &
    timer=$!
  fi
fi
on_warning() {
  warned=1
  say "time is nearly up ($1): asking normsweep to checkpoint"
  touch "$run_dir/checkpoint/STOP"
  [ -n "$child" ] && kill -USR1 "$child" 2>/dev/null
}
on_usr1() {
  if [ "$own_warning" -eq 1 ]; then
    say "SIGUSR1 from Slurm ignored: the time limit is shorter than its lead (the script's own warning comes halfway)"
  else
    on_warning SIGUSR1
  fi
}
on_cancel() {
  cancelled=1
  say "SIGTERM (scancel or the time limit): normsweep saves its journal; the job is not requeued"
}
trap on_usr1 USR1
trap 'on_warning "the script'"'"'s own warning, half the time limit"' USR2
trap on_cancel TERM
[ "$early_usr1" -eq 1 ] && on_usr1

# --resume continues from the journal when there is one and starts afresh when there is none;
# a journal of a different sweep in the same directory is refused, never mixed in.
"${launch[@]}" "$bin" --output "$output" --checkpoint-dir "$run_dir/checkpoint" --resume "$sweep" &
child=$!
[ "$warned" -eq 1 ] && kill -USR1 "$child" 2>/dev/null
# `wait` returns early when a trapped signal arrives: keep waiting until the launcher is gone.
while :; do
  wait "$child"
  rc=$?
  kill -0 "$child" 2>/dev/null || break
done
if [ -n "$timer" ]; then kill "$timer" 2>/dev/null; wait "$timer" 2>/dev/null; fi

if [ "$cancelled" -eq 1 ]; then
  say "cancelled (normsweep status $rc); the journal is in $run_dir/checkpoint. Continue with:"
  say "  $(continue_line)"
  exit 143
fi
if [ "$rc" -eq 0 ] && [ -f "$output" ]; then
  say "sweep complete: $output"
  exit 0
fi
# Status 3 is a saved checkpoint. A launcher that returns 0 without the output means the step
# never ran (Slurm aborts a step whose launch races the warning signal): also resumable.
if [ "$rc" -eq 3 ] || { [ "$warned" -eq 1 ] && [ "$rc" -eq 0 ]; }; then
  if [ "$restarts" -ge "$max_requeues" ]; then
    say "checkpoint saved, but $restarts requeues already (NORMSWEEP_MAX_REQUEUES): giving up" >&2
    say "continue with: $(continue_line)" >&2
    exit 3
  fi
  say "checkpoint saved (status $rc): requeueing job $jobid"
  # scontrol requeue ends this script (SIGTERM, which is no cancel now) soon after it succeeds;
  # a failure leaves the job to end here, and it must not end as COMPLETED.
  trap - TERM
  if scontrol requeue "$jobid"; then
    exit 0
  fi
  say "scontrol requeue $jobid failed: the checkpoint is saved in $run_dir/checkpoint" >&2
  say "continue with: $(continue_line)" >&2
  exit 3
fi
say "normsweep failed with status $rc" >&2
exit "$rc"

#!/bin/bash
# full_grid.sh: run a normsweep sweep as a Slurm batch job that checkpoints before its time limit
# and requeues itself until the sweep is complete.
#
#   sbatch slurm/full_grid.sh                       # sweeps/full_grid.yaml, directives below
#   sbatch -N 2 -n 64 -t 12:00:00 slurm/full_grid.sh # any directive can be overridden on the command line
#   NORMSWEEP_SWEEP=sweeps/ablation.yaml sbatch slurm/full_grid.sh
#
# Submit from the project's top directory (or set NORMSWEEP_HOME). Environment knobs:
#   NORMSWEEP_SWEEP     sweep file (default sweeps/full_grid.yaml)
#   NORMSWEEP_RUN_DIR   output + checkpoint directory (default runs/<sweep>-<jobid>; the same
#                       directory across requeues of one job, which is what makes resume work)
#   NORMSWEEP_BIN       the normsweep program (default ./normsweep, else normsweep on PATH)
#   NORMSWEEP_LAUNCHER  "srun" or "mpirun" (default: srun when its MPI plugin list has pmix)
#   NORMSWEEP_MAX_REQUEUES  give up after this many requeues (default 20)
#   OPENBLAS_NUM_THREADS    BLAS threads per rank (default 1: one rank per core)
#
# Time limit handling: Slurm sends SIGTERM to this script (--signal=B:TERM@300, i.e. ~5 minutes
# before the limit; it may arrive up to a minute early). The script asks normsweep to checkpoint
# (SIGUSR1 to the launcher, which forwards it to every rank, plus a STOP file the master polls),
# waits for it to save its journal and exit with status 3, then requeues the job
# (scontrol requeue). The requeued run resumes from the journal. Exit status 0 only when the
# sweep's NetCDF file is complete.
#
#SBATCH --job-name=normsweep
#SBATCH --nodes=1
#SBATCH --ntasks=64
#SBATCH --cpus-per-task=1
#SBATCH --time=24:00:00
#SBATCH --output=normsweep-%x-%j.out
#SBATCH --open-mode=append
#SBATCH --requeue
#SBATCH --signal=B:TERM@300

set -u

home=${NORMSWEEP_HOME:-${SLURM_SUBMIT_DIR:-$(pwd)}}
cd "$home" || { echo "full_grid.sh: cannot cd to $home" >&2; exit 1; }

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
export OPENBLAS_NUM_THREADS=${OPENBLAS_NUM_THREADS:-1}

mkdir -p "$run_dir/checkpoint" || exit 1
output="$run_dir/$name.nc"
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
  *) echo "full_grid.sh: NORMSWEEP_LAUNCHER must be srun or mpirun, not '$launcher'" >&2; exit 2 ;;
esac

# --resume continues from the journal when there is one and starts afresh when there is none;
# a journal of a different sweep in the same directory is refused, never mixed in.

echo "full_grid.sh: job $jobid restart $restarts: $sweep -> $output (launcher $launcher, ${SLURM_NTASKS:-?} ranks)"

stopping=0
on_term() {
  stopping=1
  echo "full_grid.sh: time limit near (SIGTERM): asking normsweep to checkpoint"
  touch "$run_dir/checkpoint/STOP"
  kill -USR1 "$child" 2>/dev/null
}
trap on_term TERM

"${launch[@]}" "$bin" --output "$output" --checkpoint-dir "$run_dir/checkpoint" --resume "$sweep" &
child=$!
# `wait` returns early when a trapped signal arrives: keep waiting until the launcher is gone.
while :; do
  wait "$child"
  rc=$?
  kill -0 "$child" 2>/dev/null || break
done

if [ "$rc" -eq 0 ] && [ -f "$output" ]; then
  echo "full_grid.sh: sweep complete: $output"
  exit 0
fi
# Status 3 is a saved checkpoint. A launcher that returns 0 without the output means the step
# never ran (Slurm aborts a step whose launch races the warning signal): also resumable.
if [ "$rc" -eq 3 ] || [ "$stopping" -eq 1 ] || [ "$rc" -eq 0 ]; then
  if [ "$restarts" -ge "$max_requeues" ]; then
    echo "full_grid.sh: checkpoint saved, but $restarts requeues already: giving up" >&2
    exit 1
  fi
  echo "full_grid.sh: checkpoint saved (status $rc): requeueing job $jobid"
  scontrol requeue "$jobid"
  exit 0
fi
echo "full_grid.sh: normsweep failed with status $rc" >&2
exit "$rc"

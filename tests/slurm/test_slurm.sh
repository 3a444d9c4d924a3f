#!/bin/sh
# test_slurm.sh: slurm/full_grid.sh on a real one-node Slurm started here (munged, slurmctld,
# slurmd on localhost; stopped by PID at the end, whatever happens).
#  1. sbatch on a small sweep; the NetCDF's data equal a direct mpirun run's.
#  2. sbatch with a time limit too short for a longer sweep: SIGTERM before the limit ->
#     checkpoint -> requeue -> resumed run -> complete, with data equal to an uninterrupted run.
# Needs root (installs slurm-wlm and munge with apt when missing). Run by `make check-slurm`.
set -eu
: "${top_srcdir:?}" "${top_builddir:?}" "${NORMSWEEP:?}"
here="$top_srcdir/tests/slurm"
work=$(mktemp -d "$top_builddir/slurm-test.XXXXXX")
cluster="$work/cluster"
fail() { echo "FAIL: $*"; exit 1; }
passed=0
cleanup() {
  sh "$here/local_cluster.sh" stop "$cluster" || true
  # Keep the daemons' logs and the job outputs when something failed.
  if [ "$passed" -eq 1 ]; then rm -rf "$work"; else echo "slurm test files kept in $work"; fi
}
trap cleanup EXIT INT TERM

sh "$here/local_cluster.sh" install
sh "$here/local_cluster.sh" start "$cluster"
SLURM_CONF="$cluster/etc/slurm.conf"; export SLURM_CONF
np=2

# Data variables only: header attributes recording times, hosts, MPI size and job ids differ.
data_of() { "$top_builddir/tests/nc_datadump" "$1"; }

job_state() { scontrol show job "$1" 2>/dev/null | sed -n 's/.*JobState=\([A-Z_]*\).*/\1/p' | head -n 1; }
restart_count() { scontrol show job "$1" 2>/dev/null | sed -n 's/.*Restarts=\([0-9]*\).*/\1/p' | head -n 1; }

# wait_job ID SECONDS: wait for COMPLETED, kicking a requeued (PENDING with a begin time) job.
wait_job() {
  id=$1; limit=$2; t=0
  while [ $t -lt "$limit" ]; do
    st=$(job_state "$id")
    case "$st" in
      COMPLETED) return 0 ;;
      FAILED|CANCELLED|TIMEOUT|NODE_FAIL|OUT_OF_MEMORY|BOOT_FAIL|DEADLINE)
        echo "job $id ended $st"; return 1 ;;
      PENDING) scontrol update JobId="$id" StartTime=now >/dev/null 2>&1 || true ;;
    esac
    sleep 3; t=$((t + 3))
  done
  echo "job $id not complete after $limit s (state $st)"; return 1
}

cd "$top_srcdir"
export NORMSWEEP_BIN="$NORMSWEEP" OPENBLAS_NUM_THREADS=1
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1

# ---- 1: plain batch run versus a direct run
small="$here/slurm_small.yaml"
$MPIEXEC --oversubscribe -np $np "$NORMSWEEP" --output "$work/direct_small.nc" \
  --checkpoint-dir "$work/direct_small.ckpt" "$small" 2> "$work/direct_small.log" ||
  { cat "$work/direct_small.log"; fail "direct run of the small sweep"; }
id=$(NORMSWEEP_SWEEP="$small" NORMSWEEP_RUN_DIR="$work/run1" \
  sbatch --parsable -n $np -t 10 -o "$work/run1.out" slurm/full_grid.sh)
echo "submitted small sweep as job $id"
wait_job "$id" 300 || { cat "$work/run1.out"; fail "small sweep job $id"; }
[ -f "$work/run1/slurm_small.nc" ] || { cat "$work/run1.out"; fail "no NetCDF from job $id"; }
data_of "$work/direct_small.nc" > "$work/a.txt"
data_of "$work/run1/slurm_small.nc" > "$work/b.txt"
cmp -s "$work/a.txt" "$work/b.txt" || fail "batch result differs from the direct run"
echo "ok 1 - sbatch slurm/full_grid.sh gives the direct run's data"

# ---- 2: time limit too short -> signal -> checkpoint -> requeue -> completion
long="$here/slurm_long.yaml"
$MPIEXEC --oversubscribe -np $np "$NORMSWEEP" --output "$work/direct_long.nc" \
  --checkpoint-dir "$work/direct_long.ckpt" "$long" 2> "$work/direct_long.log" ||
  { cat "$work/direct_long.log"; fail "direct run of the long sweep"; }
# 2-minute limit, SIGTERM 60 s before it: slurmctld checks about once a minute, so the signal
# arrives 60-120 s into the run, before the sweep (longer than 2 minutes at -np 2) is done.
id=$(NORMSWEEP_SWEEP="$long" NORMSWEEP_RUN_DIR="$work/run2" \
  sbatch --parsable -n $np -t 2 --signal=B:TERM@60 -o "$work/run2.out" slurm/full_grid.sh)
echo "submitted long sweep as job $id with a 2-minute limit"
wait_job "$id" 900 || { cat "$work/run2.out"; fail "long sweep job $id"; }
cat "$work/run2.out"
grep -q "asking normsweep to checkpoint" "$work/run2.out" || fail "no checkpoint signal seen"
grep -q "requeueing job" "$work/run2.out" || fail "job was not requeued"
n=$(restart_count "$id"); [ "${n:-0}" -ge 1 ] || fail "restart count is ${n:-unset}"
data_of "$work/direct_long.nc" > "$work/a.txt"
data_of "$work/run2/slurm_long.nc" > "$work/b.txt"
cmp -s "$work/a.txt" "$work/b.txt" || fail "requeued result differs from the uninterrupted run"
echo "ok 2 - signal, checkpoint, requeue ($n restarts) and completion give the uninterrupted data"
passed=1

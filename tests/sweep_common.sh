# sweep_common.sh: helpers sourced by the sweep runner's shell tests (tests/sweep_*.sh).
set -u
: "${NORMSWEEP:?run through make check}" "${MPIEXEC:?}" "${NS_TEST_MODEL_DIR:?}" \
  "${NS_TEST_TOKENIZER_DIR:?}" "${NS_TEST_CORPUS:?}" "${top_srcdir:?}"
OMPI_ALLOW_RUN_AS_ROOT=1; export OMPI_ALLOW_RUN_AS_ROOT
OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1; export OMPI_ALLOW_RUN_AS_ROOT_CONFIRM
OMPI_MCA_rmaps_base_oversubscribe=1; export OMPI_MCA_rmaps_base_oversubscribe

work=$(mktemp -d "${TMPDIR:-/tmp}/ns_sweep_test.XXXXXX")
trap 'rm -rf "$work"' EXIT

fail() { echo "FAIL: $*" >&2; exit 1; }

# make_sweep NAME: tests/data/run/NAME.yaml.in with the test assets filled in -> $work/NAME.yaml
make_sweep() {
  sed -e "s|@MODEL@|$NS_TEST_MODEL_DIR|" -e "s|@TOKENIZER@|$NS_TEST_TOKENIZER_DIR|" \
      -e "s|@CORPUS@|$NS_TEST_CORPUS|" "$top_srcdir/tests/data/run/$1.yaml.in" > "$work/$1.yaml"
}

# mpi_launch ARGS...: the MPI launcher with ARGS, in an Open MPI session directory of its own:
# two mpiexec started at the same instant (sweep_trust's two runners) race to create the shared
# /tmp/ompi.HOST.UID, and the loser fails in orte_init ("File exists") before normsweep runs.
# MPICH ignores the variable.
mpi_launch() {
  ompi_tmp=$(mktemp -d "$work/ompi.XXXXXX") || fail "mktemp for an MPI session directory"
  OMPI_MCA_orte_tmpdir_base=$ompi_tmp "$MPIEXEC" --oversubscribe "$@"
}

# run_np NP ARGS...: normsweep under the MPI launcher
run_np() {
  np=$1; shift
  mpi_launch -np "$np" "$NORMSWEEP" "$@"
}

# data_cdl FILE.nc: the file's dimensions, variables (with their attributes) and data, every double
# printed with 17 significant digits (exact round trip) -- everything but the global attributes,
# which record times, hosts, the MPI size and the command line.
data_cdl() {
  ncdump -p 9,17 "$1" | sed -e '1d' -e '/^\/\/ global attributes:/,/^data:/d'
}

# same_data A.nc B.nc LABEL
same_data() {
  data_cdl "$1" > "$work/a.cdl" || fail "ncdump $1"
  data_cdl "$2" > "$work/b.cdl" || fail "ncdump $2"
  if ! cmp -s "$work/a.cdl" "$work/b.cdl"; then
    diff "$work/a.cdl" "$work/b.cdl" | head -20 >&2
    fail "$3: data variables differ between $1 and $2"
  fi
}

# forward_counts FILE.nc: the shard_forward_count values, one line
forward_counts() {
  ncdump -v shard_forward_count "$1" | sed -n '/^ shard_forward_count =/,/;/p' | tr -d ' \n;}' |
    sed 's/shard_forward_count=//'
}

# workers_of MASTER_PID: the pids of normsweep processes started in this directory other than the
# master (read from /proc, so the tests need no procps)
workers_of() {
  here=$(pwd -P)
  for d in /proc/[0-9]*; do
    p=${d#/proc/}
    [ "$(cat "$d/comm" 2>/dev/null)" = normsweep ] || continue
    [ "$p" != "$1" ] && [ "$(readlink "$d/cwd" 2>/dev/null)" = "$here" ] && echo "$p"
  done
  return 0
}

# master_pid LOG: the master's pid, from its first line (of a run still going: after
# wait_log LOG 'master pid [0-9]' PID, tests/hold.sh -- the launcher forwards the line late)
master_pid() { sed -n 's/.*master pid \([0-9]*\).*/\1/p' "$1" | head -n 1; }

# Runs caught in progress are held at a chosen point (hold_at, wait_held, release: tests/hold.sh),
# never started and signalled in the hope that they are still running.
. "$top_srcdir/tests/hold.sh"

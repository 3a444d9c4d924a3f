# hold.sh: helpers, sourced by the shell tests that must catch a run in progress, to hold it at a
# chosen point until the test has done what it needs (a signal, a kill, a file changed under it):
# the test-only hold of src/cli/ns_hold.h, described in docs/RELIABILITY.md ("How the tests hold
# a run"). A test never starts a run and hopes it is still running when it acts: it waits for the
# hold's marker, which the run writes at the point itself, however fast or slow the machine.
# Needs $work (the test's directory) and fail(); start_held also $NORMSWEEP.

# hold_at POINT[:COUNT][@RANK][,...]: normsweep processes started from here on hold at that point
# (NORMSWEEP_TEST_HOLD, with NORMSWEEP_TEST_HOLD_DIR=$work/hold, emptied); until hold_off. A
# process started in the background keeps the variables it was started with.
hold_at() {
  rm -rf "$work/hold" && mkdir "$work/hold" || fail "mkdir $work/hold"
  NORMSWEEP_TEST_HOLD=$1; NORMSWEEP_TEST_HOLD_DIR=$work/hold
  export NORMSWEEP_TEST_HOLD NORMSWEEP_TEST_HOLD_DIR
}
hold_off() { unset NORMSWEEP_TEST_HOLD NORMSWEEP_TEST_HOLD_DIR; }

# alive PID: PID is a process that has not ended (a zombie has)
alive() { [ -r "/proc/$1/status" ] && ! grep -q '^State:[[:space:]]*Z' "/proc/$1/status"; }

# wait_log LOG PATTERN PID: until LOG holds a line matching PATTERN (grep -E). A held run's marker
# is written by the process itself, but its stderr reaches LOG through the MPI launcher's output
# forwarding, which may lag behind: a line printed before the hold point is not yet in LOG when
# the marker is there (seen at load 6 on 2 cores). Fails when PID ended without the line, or after
# 120 s.
wait_log() {
  wl=0
  until grep -Eq "$2" "$1" 2>/dev/null; do
    alive "$3" || grep -Eq "$2" "$1" 2>/dev/null || fail "pid $3 ended before '$2' reached $1"
    wl=$((wl + 1)); [ $wl -lt 6000 ] || fail "'$2' not in $1 after 120 s"
    sleep 0.02
  done
}

# wait_held PID: until a process is held (it wrote $work/hold/held: "PID RANK POINT COUNT");
# prints the held process's pid. Fails when PID (the run's launcher, or the run) ended first, or
# after 120 s.
wait_held() {
  wh=0
  while [ ! -s "$work/hold/held" ]; do
    alive "$1" || [ -s "$work/hold/held" ] || fail "pid $1 ended before its hold point"
    wh=$((wh + 1)); [ $wh -lt 6000 ] || fail "pid $1 not held after 120 s"
    sleep 0.02
  done
  cut -d' ' -f1 "$work/hold/held"
}

# wait_held_rank RANK PID: until rank RANK is held ($work/hold/held.RANK; with several holds,
# hold_at "POINT@0,POINT@1"); prints its pid. Fails as wait_held does.
wait_held_rank() {
  wh=0
  while [ ! -s "$work/hold/held.$1" ]; do
    alive "$2" || [ -s "$work/hold/held.$1" ] ||
      { fail "pid $2 ended before rank $1's hold point"; return 1; }
    wh=$((wh + 1)); [ $wh -lt 6000 ] || { fail "rank $1 of pid $2 not held after 120 s"; return 1; }
    sleep 0.02
  done
  cut -d' ' -f1 "$work/hold/held.$1"
}

# run_shared LOG CMD...: CMD, an MPI launch of normsweep on 2 ranks or more (stderr to LOG), with
# rank 0 held at the start of its task loop until rank 1 has sent its first request and is held
# too; released together, rank 0's first service answers that request with a task before it
# computes one of its own. So rank 1 computes (and journals in its own part) at least one task and
# rank 0 at least one, however fast either starts: left alone, a fast rank 0 can finish a small
# sweep before rank 1 has asked (archive_verify's 4 tasks did, in a fresh Debian chroot). Returns
# CMD's status.
run_shared() {
  rs_log=$1; shift
  hold_at "journal:0@0,ready:0@1"
  "$@" 2> "$rs_log" &
  rs_pid=$!
  hold_off
  wait_held_rank 0 $rs_pid > /dev/null || { cat "$rs_log" >&2; exit 1; }
  wait_held_rank 1 $rs_pid > /dev/null || { cat "$rs_log" >&2; exit 1; }
  release
  wait $rs_pid
}

# held_field N: field N of the marker (1 pid, 2 rank, 3 point, 4 count)
held_field() { cut -d' ' -f"$1" "$work/hold/held"; }

# release: the held process goes on (a stop signal sent to it while held also ends the hold)
release() { : > "$work/hold/release"; }

# start_held POINT PID-VAR LOG ARGS...: $NORMSWEEP ARGS in the background (stderr to LOG), held at
# POINT; once it is held (it is the held process itself, not a launcher), its pid in PID-VAR
start_held() {
  sh_point=$1 sh_var=$2 sh_log=$3; shift 3
  hold_at "$sh_point"
  "$NORMSWEEP" "$@" 2> "$sh_log" &
  sh_pid=$!
  hold_off
  sh_held=$(wait_held $sh_pid) || exit 1
  [ "$sh_held" = "$sh_pid" ] || fail "$sh_log: the held process is not normsweep's"
  eval "$sh_var=\$sh_pid"
}

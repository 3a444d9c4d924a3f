# hold.sh: helpers, sourced by the shell tests that must catch a run in progress, to hold it at a
# chosen point until the test has done what it needs (a signal, a kill, a file changed under it):
# the test-only hold of src/cli/ns_hold.h, described in docs/RELIABILITY.md ("How the tests hold
# a run"). A test never starts a run and hopes it is still running when it acts: it waits for the
# hold's marker, which the run writes at the point itself, however fast or slow the machine.
# Needs $work (the test's directory) and fail().

# hold_at POINT[:COUNT][@RANK]: normsweep processes started from here on hold at that point
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

# held_field N: field N of the marker (1 pid, 2 rank, 3 point, 4 count)
held_field() { cut -d' ' -f"$1" "$work/hold/held"; }

# release: the held process goes on (a stop signal sent to it while held also ends the hold)
release() { : > "$work/hold/release"; }

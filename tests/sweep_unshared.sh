#!/bin/sh
# sweep_unshared: the end-of-run reduction on a checkpoint directory that another rank does not
# share. Rank 1 starts in another working directory, where the (relative) checkpoint path names
# another copy -- as a node-local directory of the same path on another node would: an older
# journal of the same sweep, complete and valid, but with its records in another order. Reading
# it at rank 0's offsets would mix up the shards; rank 1 must notice (the lock file does not
# hold this run's record), rank 0 must reduce alone and say so, and the output must equal a
# normal run's. The same when rank 1's copy also holds this run's lock record (copied there as
# the run starts): rank 1 must see that the records at rank 0's offsets are other shards'. With
# rank 1 started in rank 0's directory by the same wrapper, both ranks reduce (no false alarm).
# A worker that sees the directory journals its own results in a part of the journal there; one
# whose directory merely shows this run's lock record must not (rank 0 could not read them).
. "$top_srcdir/tests/sweep_common.sh"
make_sweep slow
cd "$work" || fail "cd"
sed 's/count: 120/count: 16/' slow.yaml > short.yaml
# the reference at -np 1: its journal is one file (at -np 2 a worker journals its own results in
# a part file of its own, docs/RUNNING.md)
run_np 1 short.yaml --output ref.nc --checkpoint-dir ckref 2> logref || { cat logref >&2; fail "reference run"; }

# the stale copy: the reference journal with its 16 records in reverse order
size=$(wc -c < ckref/journal.nsj)
rec=$(( (size - 128) / 16 ))
[ $((128 + 16 * rec)) -eq "$size" ] || fail "journal of $size bytes is not 16 equal records"
mkdir -p node1/ck
# the reference run finished: it removed its lock file, which is kept only by a stopped or failed
# run (docs/RUNNING.md); the copy carries such an older run's record
[ -e ckref/lock ] && fail "a finished run left its lock file"
echo "host $(hostname), pid 1, since 2026-01-01T00:00:00Z: $NORMSWEEP short.yaml --checkpoint-dir ckref" \
  > node1/ck/lock
{ head -c 128 ckref/journal.nsj
  i=15; while [ $i -ge 0 ]; do tail -c +$((128 + i * rec + 1)) ckref/journal.nsj | head -c $rec; i=$((i - 1)); done
} > node1/ck/journal.nsj
cmp -s node1/ck/journal.nsj ckref/journal.nsj && fail "the reversed journal equals the original"
cp node1/ck/journal.nsj stale.copy

# run_split OUTPUT [DIR [copy-lock]]: rank 1 (Open MPI's or MPICH's numbering) starts in DIR (when
# given), where the relative checkpoint path ck names another directory than rank 0's: a
# node-local directory of the same path. With copy-lock, rank 1 is held before it looks at the
# checkpoint directory (tests/hold.sh; rank 0 has locked it by then), rank 0's lock file is copied
# into DIR/ck, and rank 1 goes on: it finds this run's lock record there from the start. Every
# other path of the sweep is absolute.
run_split() {
  rm -rf ck; mkdir ck
  cat > rank1_cd.sh <<EOF
#!/bin/sh
[ "\${OMPI_COMM_WORLD_RANK:-\${PMI_RANK:-}}" = 1 ] && [ -n "$2" ] && { cd "$2" || exit 9; }
exec "\$@"
EOF
  chmod +x rank1_cd.sh
  [ "${3:-}" = copy-lock ] && hold_at opened@1
  mpi_launch -np 2 "$work/rank1_cd.sh" "$NORMSWEEP" "$work/short.yaml" --output "$1" \
    --checkpoint-dir ck 2> "log_$1" &
  rs_pid=$!
  hold_off
  if [ "${3:-}" = copy-lock ]; then
    wait_held $rs_pid > /dev/null || exit 1
    [ "$(held_field 2)" = 1 ] || fail "the held process is not rank 1"
    [ -s ck/lock ] || fail "rank 0 has not written its lock record before rank 1 looks"
    cp ck/lock "$2/ck/lock" && cp ck/lock lock.copied || fail "copy of rank 0's lock record"
    release
  fi
  wait $rs_pid
}

# rank0_alone OUTPUT DIR LABEL: after run_split OUTPUT DIR: rank 1 was noticed, rank 0 reduced
# alone, the data equal the reference, and DIR's journal (the stale copy) is unchanged
rank0_alone() {
  grep -q "rank 1 does not see this run's checkpoint directory ck .*rank 0 reduces every slice itself" \
    "log_$1" || { cat "log_$1" >&2; fail "$3: rank 1 was not noticed"; }
  grep -q "reduce_seconds: .* (1 rank)" "log_$1" ||
    { cat "log_$1" >&2; fail "$3: rank 1 took part in the reduction"; }
  same_data ref.nc "$1" "$3"
  cmp -s "$2/ck/journal.nsj" stale.copy || fail "$3: rank 1 wrote to the other directory's journal"
  # nor did it keep a part there (rank 0 would not have found it)
  [ -z "$(ls "$2/ck" | grep '^journal\.s')" ] || fail "$3: rank 1 left a part in the other directory"
}

# the directory differs on rank 1: rank 0 reduces alone, the numbers are right
run_split u.nc "$work/node1" || { cat log_u.nc >&2; fail "run with an unshared checkpoint directory"; }
rank0_alone u.nc node1 "unshared checkpoint directory"
echo "sweep_unshared: stale copy on rank 1 noticed, reduced on rank 0, output right"

# rank 1's copy holds this run's lock record too: only the records at rank 0's offsets tell
mkdir -p node2/ck
cp stale.copy node2/ck/journal.nsj
run_split l.nc "$work/node2" copy-lock || { cat log_l.nc >&2; fail "run with a copied lock record"; }
cmp -s lock.copied node2/ck/lock || fail "node2/ck/lock is not rank 0's lock record"
[ -e ck/lock ] && fail "the finished run left its lock file ck/lock"
# rank 1 found the lock record from the start: its part there was refused too
grep -q "normsweep: rank 1 journals its results through rank 0 (read .*ck/journal.s1.r1.nsj" log_l.nc ||
  { cat log_l.nc >&2; fail "copied lock record: rank 0 did not refuse the part it cannot see"; }
rank0_alone l.nc node2 "unshared checkpoint directory with this run's lock record"
echo "sweep_unshared: same lock record, other records: noticed, reduced on rank 0, output right"

# rank 1's directory shows this run's lock record (its lock is a link to rank 0's) but is another
# directory: rank 0 does not find the part rank 1 created there, so rank 1 removes it and sends its
# results instead; none is lost, and rank 0 reduces alone
mkdir -p node3/ck
ln -s "$work/ck/lock" node3/ck/lock
run_split k.nc "$work/node3" || { cat log_k.nc >&2; fail "run with a linked lock record"; }
grep -q "normsweep: rank 1 journals its results through rank 0 (read .*ck/journal.s1.r1.nsj" log_k.nc ||
  { cat log_k.nc >&2; fail "rank 0 did not refuse the part it cannot see"; }
grep -q "workers computed [0-9]* task(s), .* (0 journalled in their own files)" log_k.nc ||
  { cat log_k.nc >&2; fail "rank 1 journalled results where rank 0 cannot read them"; }
[ -z "$(ls node3/ck | grep '^journal')" ] || fail "rank 1 left journal files in its own directory"
grep -q "rank 1 does not see this run's checkpoint directory ck .*rank 0 reduces every slice itself" \
  log_k.nc || { cat log_k.nc >&2; fail "linked lock record: rank 1 took part in the reduction"; }
same_data ref.nc k.nc "linked lock record"
echo "sweep_unshared: lock record seen from another directory: part refused, output right"

# the same launch with rank 1 in rank 0's directory: both ranks share it and reduce
run_split s.nc "" || { cat log_s.nc >&2; fail "run through the wrapper with the shared directory"; }
grep -q "does not see this run's checkpoint directory" log_s.nc && { cat log_s.nc >&2; fail "false alarm"; }
grep -q "reduce_seconds: .* (2 ranks)" log_s.nc || { cat log_s.nc >&2; fail "the reduction was not shared"; }
grep -q "journals its results through rank 0" log_s.nc && { cat log_s.nc >&2; fail "rank 1's part was refused"; }
same_data ref.nc s.nc "shared checkpoint directory through the wrapper"
echo "sweep_unshared: shared directory: both ranks reduce, output right"

#!/bin/sh
# faults: fault injection on tiny sweeps, each ending with `--resume` giving the data of an
# uninterrupted run: (1) disk full while writing the journal and (2) the NetCDF output (and a dump; small
# tmpfs mounts), (3) an unwritable (read-only) output or checkpoint directory, at the start and
# mid-run, (1b) a worker's part over a file size limit (its results go through rank 0 from then
# on), (4) model.safetensors replaced by another model mid-run, (5) SIGTERM at five seeded
# random points of one sweep and once before MPI_Init. Needs root for the tmpfs mounts (parts 1-3
# are skipped otherwise) and gdb for the model replaced during start-up (skipped without it). See
# docs/RELIABILITY-CATALOGUE.md. "Mid-run" is made certain by holding the run at a chosen point
# (tests/hold.sh) while the fault is injected, whatever the machine's speed.
. "$top_srcdir/tests/sweep_common.sh"
mounts=
cleanup() {
  for m in $mounts; do umount "$m" 2> /dev/null || umount -l "$m" 2> /dev/null; done
  rm -rf "$work"
}
trap cleanup EXIT
trap 'exit 1' INT TERM HUP PIPE
cd "$work" || fail "cd"
t0=$(date +%s)
step() { echo "faults: $* ($(( $(date +%s) - t0 )) s)"; }

# Two tiny models with the same shape and different weights; the sweep names the directory mdl.
"$NORMSWEEP" mkmodel --layers 2 --heads 2 --embd 16 --ctx 128 --vocab 50257 --seed 1 --out mA \
  > /dev/null || fail "mkmodel mA"
"$NORMSWEEP" mkmodel --layers 2 --heads 2 --embd 16 --ctx 128 --vocab 50257 --seed 2 --out mB \
  > /dev/null || fail "mkmodel mB"
cp -r mA mdl
head -c 600000 "$NS_TEST_CORPUS" > corpus.txt   # about 140000 tokens, quick to tokenize
# f.yaml: SHARDS shards of 128 tokens
make_fault_sweep() {
  cat > f.yaml <<EOF
model: mdl
tokenizer: $NS_TEST_TOKENIZER_DIR
corpus: corpus.txt
strip_gutenberg: false
shards: {count: $1, L_max: 128}
grid:
  L: [64, 128]
  N: [1, 4, 16]
  T: [0.5, 1.0]
  eps: [1.0e-3]
  layers: all
  heads: all
normalizer: [softmax, sparsemax]
rows: 2
seed: 11
EOF
}
make_fault_sweep 100
"$NORMSWEEP" f.yaml --output ref.nc --checkpoint-dir ckref 2> logref || { cat logref >&2; fail "reference run"; }
ref=ref.nc
step "reference run done"

# expect_rc WANT LOG: the last command's status ($rc) is WANT, else show LOG and fail
expect_rc() { [ "$rc" -eq "$1" ] || { cat "$2" >&2; fail "$3: exit $rc, expected $1"; }; }
# one_line LOG PATTERN: the log's last line matches the grep -x PATTERN, and it is one line
last_line() {
  tail -n 1 "$1" | grep -qx -- "$2" || { cat "$1" >&2; fail "last line of $1 is not '$2'"; }
}
# resume_ok OUT CKPT LABEL [NP]: --resume completes with the reference data
resume_ok() {
  run_np "${4:-1}" f.yaml --output "$1" --checkpoint-dir "$2" --resume 2> "$work/log_resume"; rc=$?
  expect_rc 0 "$work/log_resume" "$3: --resume"
  same_data "$ref" "$1" "$3: resume vs uninterrupted"
}
# whole_records FILE: FILE (a journal file) is its 128-byte header and whole records of 88 bytes
# plus the payload length its header records (src/journal/ns_journal_file_internal.h), else
# fail; prints how many
whole_records() {
  plen=$(od -An -tu8 -j16 -N8 "$1" | tr -d ' ')
  size=$(stat -c %s "$1")
  k=$(( (size - 128) / (88 + plen) ))
  [ "$size" -eq $(( 128 + k * (88 + plen) )) ] ||
    fail "$1: $size bytes are not a header and whole records of $((88 + plen)) bytes"
  echo "$k"
}
# tmpfs DIR SIZE [ro]: a small tmpfs, unmounted by the EXIT trap
tmpfs() {
  mkdir -p "$1" && mount -t tmpfs -o "size=$2${3:+,$3}" tmpfs "$1" 2> /dev/null || return 1
  mounts="$work/$1 $mounts"
}

if ! tmpfs probe 64k; then
  echo "faults: SKIP disk-full and read-only parts: cannot mount a tmpfs (not root?)"
else
  # ---- (1) disk full while writing the journal ---------------------------------------------
  # The journal of this sweep is about 2.8 MB; a 1 MB file system fills up mid-sweep.
  tmpfs j 1m || fail "mount j"
  "$NORMSWEEP" f.yaml --output d1.nc --checkpoint-dir j/ck 2> log1; rc=$?
  expect_rc 1 log1 "journal on a full disk"
  last_line log1 "normsweep run: write j/ck/journal.nsj: No space left on device"
  [ -e d1.nc ] && fail "journal on a full disk: output written"
  ls | grep -q '^d1\.nc' && fail "journal on a full disk: a temporary output file was left: $(ls)"
  mount -o remount,size=16m j || fail "remount j"   # space freed
  cp j/ck/journal.nsj j1.before
  whole_records j1.before > /dev/null
  resume_ok d1.nc j/ck "journal on a full disk"
  # the failed append cut journal.nsj back to its last whole record: the resume cut nothing
  grep -q "cut off an incomplete last record" log_resume &&
    fail "journal on a full disk: the failed append left an incomplete record"
  n=$(sed -n 's/.*; \([0-9]*\) already in the journal.*/\1/p' log_resume)
  [ "${n:-0}" -gt 0 ] || fail "journal on a full disk: nothing was kept in the journal"
  [ "$n" -eq "$(whole_records j1.before)" ] ||
    fail "journal on a full disk: $n tasks kept, but journal.nsj held $(whole_records j1.before) whole records"
  step "disk full (journal): exit 1, resumed from $n tasks"
  # the same at -np 2: the worker's own part fills up too (a worker whose append fails sends that
  # result and the rest to rank 0, whose journal.nsj is on the same full disk): exit 1, and a resume
  # at -np 2 completes
  tmpfs j2 1m || fail "mount j2"
  # (rank 1 must compute tasks: both ranks start held, tests/hold.sh's run_shared)
  run_shared log1b run_np 2 f.yaml --output d1b.nc --checkpoint-dir j2/ck; rc=$?
  expect_rc 1 log1b "journal and part on a full disk"
  grep -q "normsweep run: write j2/ck/journal.nsj: No space left on device" log1b ||
    { cat log1b >&2; fail "journal and part on a full disk: no message naming journal.nsj"; }
  [ -s j2/ck/journal.s1.r1.nsj ] || fail "journal and part on a full disk: the worker kept no part"
  [ -e d1b.nc ] && fail "journal and part on a full disk: output written"
  mount -o remount,size=16m j2 || fail "remount j2"
  resume_ok d1b.nc j2/ck "journal and part on a full disk" 2
  step "disk full (journal and a worker's part, -np 2): exit 1, resumed"

  # ---- (2) disk full while writing the NetCDF output ---------------------------------------
  tmpfs o 256k || fail "mount o"   # the output is about 1.7 MB
  "$NORMSWEEP" f.yaml --output o/d2.nc --checkpoint-dir ck2 2> log2; rc=$?
  expect_rc 1 log2 "NetCDF output on a full disk"
  last_line log2 "normsweep run: o/d2\.nc\.tmp\.[0-9]*: \(enddef\|close\): NetCDF: HDF error (probably: No space left on device: [0-9]* kB free in o)"
  [ -z "$(ls -A o)" ] || fail "NetCDF on a full disk: left behind in o/: $(ls -A o)"
  mount -o remount,size=16m o || fail "remount o"
  resume_ok o/d2.nc ck2 "NetCDF output on a full disk"
  grep -q "master computed 0 task" log_resume || fail "NetCDF on a full disk: resume recomputed tasks"
  step "disk full (NetCDF): exit 1, nothing at the final path, resume recomputed nothing"
  # the same for `normsweep dump` (its writer reports through io/ns_nc_internal.h's NC_TRY): exit 1,
  # the likely cause named, nothing left. HDF5 1.10.8 used to crash at exit after the failed close
  # (SIGSEGV in its exit handler, io/ns_hdf5.h): exit 139 instead of 1
  tmpfs od 64k || fail "mount od"   # the dump is about 150 kB
  "$NORMSWEEP" dump --model mdl --tokenizer "$NS_TEST_TOKENIZER_DIR" --strip-gutenberg false \
    --text corpus.txt --offset 0 --length 128 --out od/d.nc 2> log2d; rc=$?
  expect_rc 1 log2d "dump on a full disk"
  last_line log2d "normsweep dump: od/d\.nc\.tmp\.[0-9]*: [a-z_ ]*: NetCDF: HDF error (probably: No space left on device: [0-9]* kB free in od)"
  [ -z "$(ls -A od)" ] || fail "dump on a full disk: left behind in od/: $(ls -A od)"
  step "disk full (dump): exit 1, the cause named, nothing left"

  # ---- (3) read-only output / checkpoint directory ------------------------------------------
  # Root ignores permission bits, so the directories are read-only mounts.
  tmpfs ro 64k ro || fail "mount ro"
  "$NORMSWEEP" f.yaml --output ro/d3.nc --checkpoint-dir ck3 2> log3; rc=$?
  expect_rc 2 log3 "read-only output directory"
  last_line log3 "normsweep run: output ro/d3.nc: directory ro is not writable: Read-only file system"
  [ -e ck3 ] && fail "read-only output directory: the checkpoint directory was created"
  "$NORMSWEEP" f.yaml --output d3.nc --checkpoint-dir ro/ck 2> log3b; rc=$?
  expect_rc 2 log3b "read-only checkpoint directory"
  last_line log3b "normsweep run: mkdir ro/ck: Read-only file system"
  [ -e d3.nc ] && fail "read-only checkpoint directory: output written"
  # made read-only mid-run: the final write fails, the journal survives, --resume completes
  tmpfs rw 16m || fail "mount rw"
  start_held journal:10 pid log3m f.yaml --output rw/d3.nc --checkpoint-dir ck3m
  # (a read-only bind mount over rw: the run holds rw/d3.nc.lock open for writing, so rw itself
  # cannot be remounted read-only, as a checkpoint directory beside the output would not let it)
  mounts="$work/rw $mounts"
  mount --bind rw rw && mount -o remount,bind,ro rw || fail "rw read-only (bind mount)"
  release
  wait $pid; rc=$?
  expect_rc 1 log3m "output directory made read-only mid-run"
  last_line log3m "normsweep run: rw/d3\.nc\.tmp\.[0-9]*: create: Permission denied (probably: Read-only file system)"
  umount rw || fail "umount the read-only bind mount"
  # (the output's lock file could not be removed: unlocked, the resume takes it over)
  [ -z "$(ls -A rw | grep -vx 'd3\.nc\.lock')" ] || fail "read-only mid-run: left behind: $(ls -A rw)"
  resume_ok rw/d3.nc ck3m "output directory made read-only mid-run"
  [ -e rw/d3.nc.lock ] && fail "read-only mid-run: the resume left rw/d3.nc.lock"
  step "read-only directories: exit 2 at the start, 1 mid-run, resumed"
fi

# ---- (1b) a worker's part over a file size limit (any user) ----------------------------------
# Rank 1 runs under `ulimit -f 200` (102,400 bytes; SIGXFSZ ignored, so a write past it fails
# with EFBIG): its part takes a few records, then an append fails part-way. The worker cuts the
# part back to its last whole record, tells rank 0 why and sends this result and the rest to
# rank 0. The run completes with the reference data, and its archive verifies. (With Open MPI, as
# make check runs it; under MPICH with UCX the limit also stops rank 1's shared-memory files, in
# MPI_Init.)
cat > rank1_fsize.sh <<'EOF'
#!/bin/sh
if [ "${OMPI_COMM_WORLD_RANK:-${PMI_RANK:-}}" = 1 ]; then trap '' XFSZ; ulimit -f 200; fi
exec "$@"
EOF
chmod +x rank1_fsize.sh
# Rank 1 must compute more tasks than its part can hold: both ranks start held (run_shared), so
# rank 1 gets the first task and its share of the rest, whatever the machine's speed.
mkdir run6
run_shared run6/run.log mpi_launch -np 2 ./rank1_fsize.sh "$NORMSWEEP" f.yaml --output run6/d6.nc \
  --checkpoint-dir run6/checkpoint; rc=$?
expect_rc 0 run6/run.log "a worker's part over a file size limit"
grep -qx "normsweep: rank 1: write run6/checkpoint/journal.s1.r1.nsj: File too large: its results go through rank 0 from now on" run6/run.log ||
  { cat run6/run.log >&2; fail "part over a file size limit: rank 0 did not say why rank 1's part stopped"; }
same_data "$ref" run6/d6.nc "part over a file size limit"
k=$(whole_records run6/checkpoint/journal.s1.r1.nsj)
[ "$k" -ge 1 ] || fail "part over a file size limit: no record in the part"
w=$(sed -n 's/.*workers computed \([0-9]*\) task(s).*/\1/p' run6/run.log)
grep -q "workers computed $w task(s), .* s per task ($k journalled in their own files)" run6/run.log &&
  [ "$w" -gt "$k" ] || { cat run6/run.log >&2; fail "part over a file size limit: expected $k of more than $k worker results in the part"; }
"$NORMSWEEP" archive run6 --out a6.tar.gz > /dev/null 2>&1 || fail "archive of run6"
"$NORMSWEEP" verify a6.tar.gz > v6.txt 2>&1 || { cat v6.txt >&2; fail "part over a file size limit: the archive does not verify"; }
grep -q "^PASS journal: all 100 tasks recorded (1968 values each; journal.nsj and 1 part file)$" v6.txt ||
  { cat v6.txt >&2; fail "part over a file size limit: verify's journal line"; }
step "a worker's part over a file size limit: $k of its $w results in the part, the rest through rank 0; same data, archive verifies"

# ---- (4) model.safetensors replaced during a run -----------------------------------------
# Decided behaviour: the model is memory-mapped once; a rename over model.safetensors leaves the
# mapped inode in place, so the running sweep stays consistent (old weights throughout, the
# recorded checksum is the old one). The journal header records the model's checksum, so a later
# --resume with the new file refuses (exit 2), and works again once the old file is back.
start_held journal:10 pid log4 f.yaml --output d4.nc --checkpoint-dir ck4
cp mB/model.safetensors mdl/.new && mv mdl/.new mdl/model.safetensors
release
wait $pid; rc=$?
expect_rc 0 log4 "model replaced mid-run"
same_data ref.nc d4.nc "model replaced mid-run (old inode)"
"$NORMSWEEP" f.yaml --output d4.nc --checkpoint-dir ck4 --resume 2> log4r; rc=$?
expect_rc 2 log4r "--resume after the model changed"
last_line log4r "normsweep run: ck4/journal.nsj belongs to a different sweep (sweep text, model or record size changed); refusing to resume from it"
cmp -s mA/model.safetensors mdl/model.safetensors && fail "the model was not replaced"
cp mA/model.safetensors mdl/.old && mv mdl/.old mdl/model.safetensors
resume_ok d4.nc ck4 "model restored"
cp mA/model.safetensors mdl/.old && mv mdl/.old mdl/model.safetensors
# Replaced during start-up: the run must not use other weights than the recorded checksum's.
# Made deterministic with gdb: the file is replaced when ns_model_load is first entered (on rank 0
# that is validation's load).
# (a) A model named by its path is hashed from its mapped bytes, so rank 0 has no window between
#     checksum and map: the run uses the new file and records its checksum.
# (b) A manifest model (its checksum the manifest's, through the assets directory's stamp): the
#     mapped bytes no longer hash to it. Exit 1, one line naming the file, nothing written.
# (c) On rank 1 of 2 (it mapped another file than rank 0: device, inode, size, mtime): the same.
# Then the next run works.
if command -v gdb > /dev/null 2>&1; then
  # gdb_replace.sh ARGS...: run ARGS under gdb, replacing $REPLACE/model.safetensors (default mdl)
  # by mB's when the model is loaded; exits with the program's status (99: unknown)
  cat > gdb_replace.sh <<'EOF'
#!/bin/sh
out=gdb.$$.out
r=${REPLACE:-mdl}
# LeakSanitizer cannot stop the world of a process under ptrace (a sanitizer build would report a
# tool failure, not a leak): leak checking is off for the traced process only.
[ -n "${ASAN_OPTIONS:-}" ] && ASAN_OPTIONS="$ASAN_OPTIONS:detect_leaks=0" && export ASAN_OPTIONS
gdb -batch -nx -q -ex 'set breakpoint pending on' -ex 'break ns_model_load' -ex run \
  -ex "shell cp mB/model.safetensors $r/.new && mv $r/.new $r/model.safetensors" \
  -ex delete -ex continue --args "$@" > "$out" < /dev/null
code=$(sed -n 's/.*exited with code \([0-9]*\).*/\1/p' "$out" | tail -n 1)
grep -q "exited normally" "$out" && code=0
rm -f "$out"
exit "${code:-99}"
EOF
  cat > rank1_gdb.sh <<'EOF'
#!/bin/sh
[ "${OMPI_COMM_WORLD_RANK:-}" = 1 ] && exec ./gdb_replace.sh "$@"
exec "$@"
EOF
  chmod +x gdb_replace.sh rank1_gdb.sh
  sha_a=$(sha256sum < mA/model.safetensors | cut -d' ' -f1)
  sha_b=$(sha256sum < mB/model.safetensors | cut -d' ' -f1)
  short_a=$(printf %.12s "$sha_a"); short_b=$(printf %.12s "$sha_b")
  # (a) by path
  ./gdb_replace.sh "$NORMSWEEP" f.yaml --output r0.nc --checkpoint-dir ckr0 2> logr0; rc=$?
  expect_rc 0 logr0 "model replaced during start-up (rank 0, by path)"
  cmp -s mB/model.safetensors mdl/model.safetensors || fail "gdb did not replace the model"
  ncdump -h r0.nc | grep -q "model_sha256 = \"$sha_b\"" ||
    fail "model replaced during start-up (rank 0, by path): model_sha256 is not the mapped model's"
  cp mA/model.safetensors mdl/.old && mv mdl/.old mdl/model.safetensors
  # (b) a manifest model, placed in an assets directory (a symlink into the mirror, stamped)
  mkdir -p mir/fm
  cp mA/config.json mA/model.safetensors mir/fm/
  sha_c=$(sha256sum < mA/config.json | cut -d' ' -f1)
  cat > fm.json <<EOF
{"format": "normsweep-assets-1", "sets": [
 {"name": "fm", "kind": "model", "dir": "fm", "main_file": "model.safetensors",
  "files": [{"name": "config.json", "sha256": "$sha_c", "mirror_path": "fm/config.json"},
            {"name": "model.safetensors", "sha256": "$sha_a", "mirror_path": "fm/model.safetensors"}]}
]}
EOF
  sed 's/^model: mdl$/model: fm/' f.yaml > fm.yaml
  grep -q '^model: fm$' fm.yaml || fail "fm.yaml does not name the manifest model"
  NORMSWEEP_MANIFEST=$work/fm.json NORMSWEEP_ASSETS=$work/fa NORMSWEEP_MIRROR=$work/mir
  export NORMSWEEP_MANIFEST NORMSWEEP_ASSETS NORMSWEEP_MIRROR
  "$NORMSWEEP" assets fetch fm > /dev/null 2>&1 || fail "assets fetch fm"
  REPLACE=fa/fm ./gdb_replace.sh "$NORMSWEEP" fm.yaml --output r1.nc --checkpoint-dir ckr1 \
    2> logr1; rc=$?
  expect_rc 1 logr1 "model replaced during start-up (rank 0, manifest model)"
  last_line logr1 "normsweep run: .*/fa/fm/model\.safetensors changed during start-up (sha256 $short_a\.\.\. when checked, $short_b\.\.\. when loaded); nothing was written: run again"
  [ -e r1.nc ] || [ -e ckr1 ] && fail "model replaced during start-up (manifest model): files written"
  cmp -s mB/model.safetensors fa/fm/model.safetensors ||
    fail "gdb did not replace the model (manifest model)"
  # the assets directory's own check finds the replaced file; a fetch puts the manifest's back
  "$NORMSWEEP" assets verify fm > /dev/null 2>&1 && fail "assets verify fm: the replaced file passed"
  "$NORMSWEEP" assets fetch fm > /dev/null 2>&1 || fail "assets fetch fm (repair)"
  "$NORMSWEEP" fm.yaml --output r1.nc --checkpoint-dir ckr1 2> /dev/null ||
    fail "run on the repaired manifest model"
  same_data ref.nc r1.nc "model replaced during start-up (manifest model): the repaired run"
  unset NORMSWEEP_MANIFEST NORMSWEEP_ASSETS NORMSWEEP_MIRROR
  # (c) on rank 1
  "$MPIEXEC" --oversubscribe -np 2 ./rank1_gdb.sh "$NORMSWEEP" f.yaml --output r2.nc \
    --checkpoint-dir ckr2 2> logr2; rc=$?
  expect_rc 1 logr2 "model replaced during start-up (rank 1)"
  grep -qx "normsweep run: rank 1: .*/mdl/model\.safetensors changed during start-up (rank 1 mapped another file than rank 0 checked); nothing was written: run again" logr2 ||
    { cat logr2 >&2; fail "model replaced during start-up (rank 1): no message from rank 1"; }
  [ -e r2.nc ] || [ -e ckr2 ] && fail "model replaced during start-up (rank 1): files written"
  cmp -s mB/model.safetensors mdl/model.safetensors || fail "gdb did not replace the model (rank 1)"
  # with the new model in place, a run goes through and records the new model's checksum
  "$NORMSWEEP" f.yaml --output r3.nc --checkpoint-dir ckr3 2> logr3 ||
    { cat logr3 >&2; fail "run after the replacement"; }
  ncdump -h r3.nc | grep -q "model_sha256 = \"$sha_b\"" ||
    fail "run after the replacement: model_sha256 is not the new model's"
  same_data r3.nc r0.nc "model replaced during start-up (rank 0, by path): the new model's results"
  cp mA/model.safetensors mdl/.old && mv mdl/.old mdl/model.safetensors
  step "model replaced during start-up: by path the mapped model is used and recorded; a manifest model, and on rank 1: exit 1, nothing written"
else
  echo "faults: SKIP model replaced during start-up: gdb is not installed"
fi
step "model replaced: run consistent, resume refused, resumes once restored"

# ---- (5) SIGTERM at five seeded random points ----------------------------------------------
# A sweep of 400 tasks; each run is held once the journal holds a seeded random number of tasks
# (increasing), and SIGTERM ends the hold: with one rank nothing more is computed, so each run
# exits 3 with exactly that many tasks saved, and the next --resume reads them; the last --resume
# completes it.
make_fault_sweep 400
"$NORMSWEEP" f.yaml --output ref5.nc --checkpoint-dir ckref5 2> logref5 ||
  { cat logref5 >&2; fail "reference run (400 tasks)"; }
ref=ref5.nc
points=$(awk 'BEGIN { srand(20250821); while (n < 5) { k = 1 + int(rand() * 399); if (!(k in s)) { s[k]; n++ } }
                      for (k in s) print k }' | sort -n | tr '\n' ' ')
points=$(echo $points)
[ "$(echo $points | wc -w)" -eq 5 ] || fail "five hold points expected: $points"
resume= kept=0 k=0
for K in $points; do
  k=$((k + 1))
  start_held journal:$K pid log5_$k f.yaml --output d5.nc --checkpoint-dir ck5 $resume
  kill -TERM $pid
  wait $pid; rc=$?
  expect_rc 3 log5_$k "SIGTERM $k (held at $K tasks)"
  last_line log5_$k "normsweep run: interrupted: $K of 400 tasks saved in ck5/journal.nsj; continue with --resume"
  [ -e d5.nc ] && fail "SIGTERM $k: output written"
  [ -z "$resume" ] || grep -q "; $kept already in the journal" log5_$k ||
    { cat log5_$k >&2; fail "SIGTERM $k: the run did not start from the $kept tasks saved before"; }
  echo "faults: SIGTERM $k (held at $K tasks): exit 3 with $K of 400 tasks in the journal"
  kept=$K resume=--resume
done
resume_ok d5.nc ck5 "SIGTERM x5"
before=$(sed -n 's/.*; \([0-9]*\) already in the journal.*/\1/p' log_resume)
[ "$before" = "$kept" ] || fail "final resume found $before tasks, the last interruption saved $kept"
# SIGTERM before the sweep started: held where the stop handlers are in place and MPI_Init is
# next; the signal ends the hold. Exit 3, that one line, nothing written.
start_held mpi-init pid log6 f.yaml --output d6.nc --checkpoint-dir ck6
kill -TERM $pid; wait $pid; rc=$?
expect_rc 3 log6 "SIGTERM before MPI_Init"
last_line log6 "normsweep run: interrupted before the sweep started; nothing was written"
[ "$(wc -l < log6)" -eq 1 ] || { cat log6 >&2; fail "SIGTERM before MPI_Init: more than one line"; }
[ -e ck6 ] || [ -e d6.nc ] && fail "SIGTERM before MPI_Init: files written"
step "SIGTERM held at $points tasks and before MPI_Init: resumed to the uninterrupted data"
echo "faults: ok"

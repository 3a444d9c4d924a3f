#!/bin/sh
# sweep_invalid: invalid input exits 2 on every rank and writes nothing (no output, no journal);
# a resume with a different sweep (another seed, another bootstrap.resamples) is refused.
. "$top_srcdir/tests/sweep_common.sh"
make_sweep tiny
cd "$work" || fail "cd"
mkdir out
printf 'model: %s\nshards: {count: 0, L_max: 64}\ngrid: {L: [16], N: [1], T: [-1]}\nbogus: 1\n' \
  "$NS_TEST_MODEL_DIR" > bad.yaml
expect2() {
  label=$1; shift
  "$@" 2> err.log; rc=$?
  [ $rc -eq 2 ] || { cat err.log >&2; fail "$label: exit $rc, expected 2"; }
  [ -z "$(ls -A out)" ] || fail "$label: something was written: $(ls -A out)"
}
expect2 "invalid sweep, -np 2" run_np 2 bad.yaml --output out/x.nc --checkpoint-dir out/ck
grep -q "bad.yaml:2:.*shards.count" err.log || fail "no FILE:LINE message for shards.count"
grep -q "bad.yaml:4:1:.*bogus" err.log || fail "no message for the unknown key"
expect2 "invalid sweep, -np 1" "$NORMSWEEP" bad.yaml --output out/x.nc --checkpoint-dir out/ck
expect2 "missing sweep file" run_np 2 missing.yaml --output out/x.nc --checkpoint-dir out/ck
expect2 "unknown option" "$NORMSWEEP" run --bogus tiny.yaml
expect2 "option without value" "$NORMSWEEP" run tiny.yaml --output
expect2 "output under a regular file" run_np 2 tiny.yaml --output tiny.yaml/sub/x.nc --checkpoint-dir out/ck
"$NORMSWEEP" run --help | grep -q -- "--checkpoint-dir" || fail "--help does not document --checkpoint-dir"

# a journal belongs to one sweep
"$NORMSWEEP" tiny.yaml --output t.nc --checkpoint-dir ck 2> /dev/null || fail "tiny sweep failed"
expect2 "existing journal without --resume" "$NORMSWEEP" tiny.yaml --output out/t.nc --checkpoint-dir ck
grep -q -- "--resume" err.log || fail "no hint to pass --resume"
sed 's/^seed: 7/seed: 8/' tiny.yaml > other.yaml
expect2 "resume with a different sweep" run_np 2 other.yaml --output out/t.nc --checkpoint-dir ck --resume
grep -q "different sweep" err.log || fail "no 'different sweep' message"
{ cat tiny.yaml; echo 'bootstrap: {resamples: 1000}'; } > otherb.yaml
expect2 "resume with a different bootstrap.resamples" run_np 2 otherb.yaml --output out/t.nc --checkpoint-dir ck --resume
grep -q "different sweep" err.log || fail "bootstrap.resamples changed: no 'different sweep' message"
echo "sweep_invalid: ok"

# many bad items from aliases (100,000 references to one bad scalar, 400 kB): at most 100
# diagnostics and a count of the rest, within 1 GB of address space (an 826-byte alias file used
# to print 9.9 million lines using 1.8 GB)
{ printf 'shards: {count: 1, L_max: 64}\nx: &x bad\ngrid: {L: [32], N: [1], T: [*x'
  i=1; while [ $i -lt 100000 ]; do printf ',*x,*x,*x,*x,*x,*x,*x,*x,*x,*x'; i=$((i + 10)); done
  printf ']}\n'; } > bomb.yaml
# (not under AddressSanitizer, whose shadow memory alone reserves terabytes of address space)
if [ -n "${ASAN_OPTIONS:-}" ]; then lim=unlimited; else lim=1000000; fi
( ulimit -v $lim; "$NORMSWEEP" validate bomb.yaml > /dev/null 2> err.log ); rc=$?
[ $rc -eq 2 ] || { tail -3 err.log >&2; fail "alias bomb: exit $rc, expected 2"; }
lines=$(wc -l < err.log)
[ "$lines" -le 102 ] || fail "alias bomb: $lines lines of diagnostics (at most 100 + 2 expected)"
grep -q "more problems not shown" err.log || fail "alias bomb: no count of the problems not shown"
echo "sweep_invalid: alias bomb ok"

#!/bin/sh
# dump_golden: `normsweep dump` on the stand-in model matches every golden/standin_o<OFFSET>_L<LEN>.nc
# (token ids equal; attention weights within 1e-5 absolute; values within 2e-5 relative to
# max(1, max |value|), see tests/test_forward.c for the reasoning), and its user errors exit
# non-zero with a message and leave no output behind.
set -u
: "${NORMSWEEP:?}" "${NS_TEST_MODEL_DIR:?}" "${NS_TEST_GOLDEN_DIR:?}" "${NS_TEST_CORPUS:?}" \
  "${NS_TEST_TOKENIZER_DIR:?}" "${top_builddir:?}"
compare="$top_builddir/tests/nc_compare"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail=0
n_golden=0

dump() {
  "$NORMSWEEP" dump --model "$NS_TEST_MODEL_DIR" --tokenizer "$NS_TEST_TOKENIZER_DIR" \
    --strip-gutenberg false \
    --text "$NS_TEST_CORPUS" "$@"
}

for golden in "$NS_TEST_GOLDEN_DIR"/standin_o*_L*.nc; do
  [ -e "$golden" ] || continue
  name=$(basename "$golden" .nc)
  offset=${name#standin_o}; offset=${offset%%_L*}
  length=${name##*_L}
  out="$tmp/$name.nc"
  n_golden=$((n_golden + 1))
  if ! dump --offset "$offset" --length "$length" --out "$out"; then
    echo "FAIL: dump --offset $offset --length $length exited non-zero"; fail=1; continue
  fi
  echo "== $name"
  if ! "$compare" --weight-tol 1e-5 --value-tol 2e-5 "$golden" "$out"; then
    echo "FAIL: $name differs from the golden file"; fail=1
  fi
done
if [ "$n_golden" -lt 1 ]; then
  echo "FAIL: no golden files standin_o*_L*.nc in $NS_TEST_GOLDEN_DIR"; fail=1
fi

# expect_error STATUS PATTERN ARGS...: the dump exits with STATUS, says PATTERN, writes nothing.
expect_error() {
  want=$1; pattern=$2; shift 2
  rm -f "$tmp"/err.nc "$tmp"/err.nc.tmp*
  dump "$@" >"$tmp/stdout" 2>"$tmp/stderr"
  got=$?
  if [ "$got" -ne "$want" ]; then
    echo "FAIL: dump $* exited $got, expected $want"; cat "$tmp/stderr"; fail=1
  elif ! grep -q -- "$pattern" "$tmp/stderr"; then
    echo "FAIL: dump $*: message lacks '$pattern':"; cat "$tmp/stderr"; fail=1
  elif [ "$(wc -l <"$tmp/stderr")" -ne 1 ]; then
    echo "FAIL: dump $*: expected a one-line message:"; cat "$tmp/stderr"; fail=1
  fi
  if ls "$tmp"/err.nc* >/dev/null 2>&1; then
    echo "FAIL: dump $* left output behind: $(ls "$tmp"/err.nc*)"; fail=1
  fi
}
total=$(wc -c <"$NS_TEST_GOLDEN_DIR/wap_tokens.i32"); total=$((total / 4))
expect_error 2 "only $total tokens" --offset $((total - 10)) --length 11 --out "$tmp/err.nc"
expect_error 2 "only $total tokens" --offset $((total + 5)) --length 1 --out "$tmp/err.nc"
expect_error 2 "(n_ctx = 1024)" --offset 0 --length 1025 --out "$tmp/err.nc"
expect_error 2 "missing --out" --offset 0 --length 8
expect_error 2 "--length: 0 is out of range 1..1048576" --offset 0 --length 0 --out "$tmp/err.nc"
expect_error 2 "--offset: -3 is out of range 0..9223372036854775807" --offset -3 --length 8 --out "$tmp/err.nc"
expect_error 2 "unknown option '--bogus'" --bogus --offset 0 --length 8 --out "$tmp/err.nc"
expect_error 2 "$tmp/no-such.txt" --text "$tmp/no-such.txt" --offset 0 --length 8 --out "$tmp/err.nc"
expect_error 2 "$tmp/no-dir" --offset 0 --length 8 --out "$tmp/no-dir/err.nc"
# a model directory without model.safetensors
mkdir "$tmp/model" && cp "$NS_TEST_MODEL_DIR/config.json" "$tmp/model/"
expect_error 1 "model.safetensors" --model "$tmp/model" --offset 0 --length 8 --out "$tmp/err.nc"

# the last window that fits is accepted, and --help works
if ! dump --offset $((total - 3)) --length 3 --out "$tmp/last.nc" ||
   ! "$compare" "$tmp/last.nc" "$tmp/last.nc" >/dev/null; then
  echo "FAIL: the last 3 tokens of the text were not dumped"; fail=1
fi
if ! "$NORMSWEEP" dump --help | grep -q -- "--offset TOK"; then
  echo "FAIL: dump --help"; fail=1
fi

# command_line records the command as typed: the program's path and every word, shell-quoted
mkdir "$tmp/a b"
if ! dump --offset 5 --length 4 --out "$tmp/a b/it's.nc" 2>/dev/null; then
  echo "FAIL: dump into a directory whose name has a space"; fail=1
else
  want="$NORMSWEEP dump --model $NS_TEST_MODEL_DIR --tokenizer $NS_TEST_TOKENIZER_DIR --strip-gutenberg false --text $NS_TEST_CORPUS --offset 5 --length 4 --out '$tmp/a b/it'\\''s.nc'"
  got=$(/usr/bin/python3 -c 'import sys, netCDF4; print(netCDF4.Dataset(sys.argv[1]).command_line)' \
    "$tmp/a b/it's.nc")
  [ "$got" = "$want" ] || { echo "FAIL: command_line is '$got', want '$want'"; fail=1; }
fi
exit $fail

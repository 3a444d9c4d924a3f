#!/bin/sh
# tokenize_cli: `normsweep tokenize` prints the GPT-2 ids of a small file (checked by hand
# against encoder.json), handles --help, and fails with a one-line error on bad input.
set -u
fail=0
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
small="$top_srcdir/tests/data/tokenize_small.txt"

# pre-tokens "Hello| world|!| It|'s| 1234| <U+1F642>|\n | trailing|  \n" (ids from encoder.json)
expected='15496 995 0 632 338 1105 2682 32485 198 220 25462 220 220 198'
if "$NORMSWEEP" tokenize --tokenizer "$NS_TEST_TOKENIZER_DIR" "$small" >"$tmp/out" 2>"$tmp/err"; then
  got=$(tr '\n' ' ' <"$tmp/out" | sed 's/ $//')
  if [ "$got" != "$expected" ]; then
    echo "FAIL: ids: got '$got', expected '$expected'"; fail=1
  fi
else
  echo "FAIL: tokenize exited non-zero: $(cat "$tmp/err")"; fail=1
fi

# Hugging Face file names give the same ids
if "$NORMSWEEP" tokenize --tokenizer "$NS_TEST_MODEL_DIR" "$small" >"$tmp/out_hf" 2>"$tmp/err"; then
  cmp -s "$tmp/out" "$tmp/out_hf" || { echo "FAIL: vocab.json + merges.txt ids differ"; fail=1; }
else
  echo "FAIL: tokenize (HF names) exited non-zero: $(cat "$tmp/err")"; fail=1
fi

# --help goes to stdout with status 0
if "$NORMSWEEP" tokenize --help >"$tmp/help" 2>&1; then
  grep -q -- '--tokenizer' "$tmp/help" || { echo "FAIL: --help does not mention --tokenizer"; fail=1; }
else
  echo "FAIL: tokenize --help exited non-zero"; fail=1
fi

# expect_error STATUS NEEDLE ARGS...: fails with STATUS, one stderr line containing NEEDLE, no stdout
expect_error() {
  want=$1; needle=$2; shift 2
  "$NORMSWEEP" tokenize "$@" >"$tmp/eout" 2>"$tmp/eerr"
  st=$?
  lines=$(wc -l <"$tmp/eerr")
  if [ "$st" -ne "$want" ] || [ "$lines" -ne 1 ] || ! grep -q -- "$needle" "$tmp/eerr" || [ -s "$tmp/eout" ]; then
    echo "FAIL: tokenize $*: status $st (want $want), stderr: $(cat "$tmp/eerr")"; fail=1
  fi
}
expect_error 1 "$tmp/nonexistent.txt" --tokenizer "$NS_TEST_TOKENIZER_DIR" "$tmp/nonexistent.txt"
expect_error 2 "expected one FILE" --tokenizer "$NS_TEST_TOKENIZER_DIR"
expect_error 2 "unknown option '--bogus'" --bogus "$small"
mkdir "$tmp/tok"
printf '{"a": 0,\n' >"$tmp/tok/encoder.json"
printf '#version: 0.2\n' >"$tmp/tok/vocab.bpe"
expect_error 2 "encoder.json:2:" --tokenizer "$tmp/tok" "$small"
rm "$tmp/tok/vocab.bpe"
expect_error 1 "vocab.bpe: missing" --tokenizer "$tmp/tok" "$small"

exit $fail

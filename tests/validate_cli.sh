#!/bin/sh
# validate_cli: `normsweep validate` on the good and bad sweep files of tests/data/sweeps (exit
# codes, the exact FILE:LINE:COL messages each bad file lists in its "# expect:" lines, summaries),
# on the shipped sweeps and the embedded default.
set -u
: "${NORMSWEEP:?run through make check}" "${top_srcdir:?}" "${NS_TEST_DATA_DIR:?}"

fails=0
tmp=$(mktemp -d "${TMPDIR:-/tmp}/validate_cli.XXXXXX") || exit 1
trap 'rm -rf "$tmp"' EXIT INT TERM

fail() {
  echo "FAIL: $*"
  fails=$((fails + 1))
}

# run EXPECTED_STATUS ARGS...: runs normsweep validate ARGS, stdout in $tmp/out, stderr in $tmp/err
run() {
  want=$1
  shift
  "$NORMSWEEP" validate "$@" >"$tmp/out" 2>"$tmp/err"
  got=$?
  if [ "$got" -ne "$want" ]; then
    fail "normsweep validate $*: exit $got, expected $want"
    sed 's/^/    stderr: /' "$tmp/err"
    return 1
  fi
  return 0
}

# check_expectations FILE: the problem lines on stderr are exactly the file's expectations, in order
check_expectations() {
  file=$1
  grep -E '^# expect(-prefix)?: ' "$file" >"$tmp/want"
  grep -v '^normsweep validate: ' "$tmp/err" | grep -v '^normsweep: WARNING' |
    grep -v '^\[' >"$tmp/got"
  nwant=$(wc -l <"$tmp/want")
  ngot=$(wc -l <"$tmp/got")
  if [ "$nwant" -eq 0 ] || [ "$nwant" -ne "$ngot" ]; then
    fail "$file: $ngot problems printed, $nwant expected"
    sed 's/^/    got: /' "$tmp/got"
    return
  fi
  i=1
  while [ "$i" -le "$nwant" ]; do
    w=$(sed -n "${i}p" "$tmp/want")
    g=$(sed -n "${i}p" "$tmp/got")
    case "$w" in
      "# expect-prefix: "*)
        p=${w#"# expect-prefix: "}
        case "$g" in "$p"*) ;; *) fail "$file: line $i: got '$g', expected prefix '$p'" ;; esac ;;
      *)
        e=${w#"# expect: "}
        [ "$g" = "$e" ] || fail "$file: line $i: got '$g', expected '$e'" ;;
    esac
    i=$((i + 1))
  done
  # the last line counts the problems
  n_err=$(grep -c -v ': warning: ' "$tmp/got")
  if [ "$n_err" -eq 1 ]; then word=problem; else word=problems; fi
  grep -qx "normsweep validate: $n_err $word in $(basename "$file")" "$tmp/err" ||
    fail "$file: no final 'normsweep validate: $n_err $word in ...' line"
}

# --help, bad options
run 0 --help && grep -q '^Usage: normsweep validate' "$tmp/out" || fail "--help prints no usage"
run 2 --frobnicate && grep -q "unknown option '--frobnicate'" "$tmp/err" ||
  fail "unknown option not named"
run 2 a.yaml b.yaml && grep -q 'one sweep file at a time' "$tmp/err" || fail "two files accepted"
[ -s "$tmp/out" ] && fail "output written on a usage error"

# an unreadable sweep file: exit 2, its name and the reason
run 2 "$tmp/missing.yaml" &&
  grep -qx "normsweep validate: $tmp/missing.yaml: cannot open: No such file or directory" "$tmp/err" ||
  fail "missing file message"

# Bad files are checked from their directory, so their names in messages are the bare file names.
cd "$NS_TEST_DATA_DIR/sweeps" || exit 1
n_bad=0
for f in bad_*.yaml; do
  n_bad=$((n_bad + 1))
  run 2 --schema-only "$f" || continue
  check_expectations "$f"
  [ -s "$tmp/out" ] && fail "$f: a summary was printed for an invalid file"
done
[ "$n_bad" -ge 20 ] || fail "only $n_bad bad files found"
for f in badfull_*.yaml; do
  run 2 "$f" || continue
  check_expectations "$f"
done

# good files: valid, with a summary
for f in good_*.yaml; do
  run 0 --schema-only "$f" || continue
  grep -qx "$f: valid" "$tmp/out" || fail "$f: no '$f: valid' line"
  [ -s "$tmp/err" ] && fail "$f: unexpected stderr: $(cat "$tmp/err")"
done

# skipped (L, N) cells are counted and listed; layers `all` expanded from the model
if run 0 goodfull_standin.yaml; then
  grep -qx '  skipped:     5 (L, N) cells with N >= L: (8,8) (8,16) (8,32) (16,16) (16,32)' "$tmp/out" ||
    fail "goodfull_standin: skipped cells line: $(grep skipped "$tmp/out")"
  grep -qx '  tasks:       4 (one forward pass per shard)' "$tmp/out" || fail "goodfull_standin: tasks"
  grep -q '^               layers 4 (0 1 2 3), heads 2 (0 3), normalizers 1 (softmax)$' "$tmp/out" ||
    fail "goodfull_standin: layers/heads line"
  grep -q '^  cells:       96 (normalizer x L x T x N x layer x head), 40 of them skipped$' "$tmp/out" ||
    fail "goodfull_standin: cells line: $(grep cells: "$tmp/out")"
fi
cd "$top_srcdir" || exit 1

# the embedded default is sweeps/quick.yaml, and both validate against the stand-in and the corpus
run 0 && grep -qx '<embedded>: valid' "$tmp/out" || fail "embedded default not valid"
# (the time line holds the sgemm rate measured at that moment)
grep -v -e '^<embedded>: valid$' -e '^  time: ' "$tmp/out" >"$tmp/embedded"
run 0 sweeps/quick.yaml && grep -qx 'sweeps/quick.yaml: valid' "$tmp/out" || fail "quick.yaml not valid"
grep -v -e '^sweeps/quick.yaml: valid$' -e '^  time: ' "$tmp/out" >"$tmp/quick"
grep -q '^  time:        at least .* s per task (.* GFLOP forward' "$tmp/out" || fail "no time estimate"
cmp -s "$tmp/embedded" "$tmp/quick" || fail "embedded default and sweeps/quick.yaml differ"
grep -qx '  tasks:       48 (one forward pass per shard)' "$tmp/quick" || fail "quick: 48 tasks"
# B and the bootstrap's memory per rank: the 27.1 MiB of per-shard values (16 heads x 5 L x 48
# shards x (14 x 5 T x 7 N + 3 x 5 T + 3 distances x 5 T x 7 N x 4 rows) doubles) on one rank,
# plus its one round of reduced blocks (every slice: 27.1 MiB < 32 MiB)
grep -qx '  bootstrap:   2000 resamples of the 48 shards (95 % percentile intervals, docs/STATISTICS.md)' "$tmp/quick" ||
  fail "quick: bootstrap line"
grep -q "^               bootstrap per-shard values per rank (each holds at most its share of the groups): 54.2 MiB on 1 rank, .*; limit 1.0 GiB per rank\$" "$tmp/quick" ||
  fail "quick: the bootstrap's memory"
grep -qx '               bootstrap intervals: written on any number of ranks' "$tmp/quick" ||
  fail "quick: the bootstrap's rank count"
# the full grid's per-shard values (3.3 GiB on one rank, 9 groups of one normalizer and T)
# exceed the 1 GiB limit below 5 ranks: validate names the rank count that writes intervals
run 0 sweeps/full_grid.yaml && grep -q '^               bootstrap intervals: written on 5 ranks or more; no bootstrap intervals will be written on fewer' "$tmp/out" ||
  fail "full_grid: no word of the bootstrap's limit per rank"
for f in sweeps/ablation.yaml sweeps/normalizers.yaml sweeps/full_grid.yaml; do
  run 0 --schema-only "$f" && grep -qx "$f: valid" "$tmp/out" || fail "$f not valid"
done
grep -q '^  skipped:     13 (L, N) cells with N >= L' "$tmp/out" || fail "full_grid skipped count"
run 0 --schema-only sweeps/ablation.yaml
grep -qx '  skipped:     2 (L, N) cells with N >= L: (32,100) (64,100)' "$tmp/out" ||
  fail "ablation skipped cells"
# the paper's grid, validated in full (its 796 shards must fit the corpus) and keeping samples
run 0 sweeps/paper.yaml && grep -qx 'sweeps/paper.yaml: valid' "$tmp/out" || fail "paper.yaml not valid"
grep -qx '  tasks:       796 (one forward pass per shard)' "$tmp/out" || fail "paper.yaml: 796 tasks"
grep -q 'keep_samples true' "$tmp/out" || fail "paper.yaml does not keep its samples"

if [ "$fails" -ne 0 ]; then
  echo "$fails failure(s)"
  exit 1
fi
echo "validate_cli: all checks passed"
exit 0

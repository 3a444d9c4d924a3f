#!/bin/sh
# dump_metrics: `normsweep dump --N ...` on the stand-in model writes METRICS.md's per-(layer,
# head) metrics of the last row, and tests/check_dump_metrics.py recomputes them independently
# in numpy float64 (tolerances and their reasons are in that file's docstring). Also: the
# attention weights and values of a metrics dump still match the golden file, reruns with the
# same seed are bitwise equal and another seed changes distance_random only, corrupted metrics
# are caught (negative controls), and bad options (and an --out whose directory is missing)
# exit 2 with one line and no output.
set -u
: "${NORMSWEEP:?}" "${NS_TEST_MODEL_DIR:?}" "${NS_TEST_GOLDEN_DIR:?}" "${NS_TEST_CORPUS:?}" \
  "${NS_TEST_TOKENIZER_DIR:?}" "${top_srcdir:?}" "${top_builddir:?}" "${PYTHON_DEBIAN:=/usr/bin/python3}"
check="$top_srcdir/tests/check_dump_metrics.py"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail=0
ok() { echo "ok: $*"; }
bad() { echo "FAIL: $*"; fail=1; }

# offsets count tokens of the whole file, as the golden files do
dump() {
  "$NORMSWEEP" dump --model "$NS_TEST_MODEL_DIR" --tokenizer "$NS_TEST_TOKENIZER_DIR" \
    --strip-gutenberg false --text "$NS_TEST_CORPUS" "$@"
}
py() { "$PYTHON_DEBIAN" "$check" "$@"; }

# run NAME ARGS...: dump to $tmp/NAME.nc, then recompute and compare every metric
run() {
  name=$1; shift
  if ! dump "$@" --out "$tmp/$name.nc"; then
    bad "dump $* exited non-zero"; return 1
  fi
  if py check "$tmp/$name.nc"; then ok "$name: metrics recomputed"; else bad "$name: metrics differ"; fi
}

# A: L = 64, a T grid from 0.01 (Lemma 2 overflows to +inf) to 4, N from 1 to beyond L (NaN)
GRID_A="--N 1,2,4,8,63,64,100 --T 0.01,0.1,0.5,1,4 --eps 1e-5,1e-3 --logits"
run A --offset 5000 --length 64 $GRID_A --seed 7
# the metrics sink leaves the dump's own variables as they were: compare with the golden file
if "$top_builddir/tests/nc_compare" --weight-tol 1e-5 --value-tol 2e-5 \
     "$NS_TEST_GOLDEN_DIR/standin_o5000_L64.nc" "$tmp/A.nc" >/dev/null; then
  ok "A: attention_weight and value match golden/standin_o5000_L64.nc"
else
  bad "A: attention_weight/value differ from the golden file"
fi
if "$PYTHON_DEBIAN" - "$tmp/A.nc" <<'EOF'; then ok "A: jac_lemma2 is +inf at T = 0.01 somewhere"; else bad "A: no +inf jac_lemma2 (the overflow path is untested)"; fi
import sys, numpy as np, netCDF4
v = netCDF4.Dataset(sys.argv[1])["jac_lemma2"]; v.set_auto_mask(False)
sys.exit(0 if np.isposinf(v[0]).any() else 1)
EOF
# same seed: bitwise equal; another seed: deterministic metrics equal, distance_random differs
if dump --offset 5000 --length 64 $GRID_A --seed 7 --out "$tmp/A_same.nc" &&
   py same "$tmp/A.nc" "$tmp/A_same.nc"; then ok "A: rerun with seed 7 is identical"; else bad "A: rerun differs"; fi
if dump --offset 5000 --length 64 $GRID_A --seed 8 --out "$tmp/A_seed8.nc" &&
   py reseed "$tmp/A.nc" "$tmp/A_seed8.nc"; then ok "A: seed 8 changes distance_random only"; else bad "A: reseed"; fi

# B: L = 128, raw vectors (sphere false, M = max norm), probes 0 (jac_fd replayed exactly)
run B --offset 200000 --length 128 --N 1,3,8,16,127 --T 0.25,1,2 --eps 1e-4,1e-2 --logits \
  --probes 0 --sphere false
# C: scalable softmax
run C --offset 5000 --length 64 --N 2,5,40 --T 1,3 --normalizer ssmax --s 0.5 --logits
# D: no logits: T = 1 (the default) is recomputed from the float32 attention weights
run D --offset 5000 --length 64 --N 1,4,16
# E: one key: every N is skipped (NaN), delta is NaN, the Jacobian is 0
run E --offset 5000 --length 1 --N 1 --T 0.5,1 --logits

# Negative controls: the checker must reject a dump whose metric is off by 1e-6 relative (jac_fd:
# 0.1%, on a probes = 0 dump), and distance_random replaced by the top-N distance.
if dump --offset 7000 --length 32 --N 1,2,5 --T 0.5,1 --eps 1e-3 --logits --probes 0 \
     --out "$tmp/K.nc" && py check "$tmp/K.nc" >/dev/null; then
  for spec in distance:1.000001 distance_d1:1.000001 distance_bound:1.000001 \
              distance_expected:1.000001 distance_random:1.000001 distance_random:=distance \
              ns_frac:1.000001 ns_lower:1.000001 ns_upper:1.000001 delta:1.000001 \
              jac_exact:1.000001 jac_lemma2:1.000001 jac_fd:1.001 sink_mass:1.000001 \
              mass:1.000001; do
    var=${spec%%:*}; how=${spec#*:}
    py corrupt "$tmp/K.nc" "$tmp/K_bad.nc" "$var" "$how" || { bad "corrupt $spec"; continue; }
    if py check "$tmp/K_bad.nc" >/dev/null; then
      bad "negative control: $var $how was not detected"
    fi
  done
  ok "negative controls"
else
  bad "K: control dump"
fi

# Option errors: exit 2, one line naming the problem, no output (nor temporary) left behind.
expect_error() {
  pattern=$1; shift
  rm -f "$tmp"/err.nc*
  dump --offset 5000 --length 16 --out "$tmp/err.nc" "$@" >"$tmp/stdout" 2>"$tmp/stderr"
  got=$?
  if [ "$got" -ne 2 ]; then
    bad "dump $* exited $got, expected 2"; cat "$tmp/stderr"
  elif ! grep -qF -- "$pattern" "$tmp/stderr"; then
    bad "dump $*: message lacks '$pattern':"; cat "$tmp/stderr"
  elif [ "$(wc -l <"$tmp/stderr")" -ne 1 ]; then
    bad "dump $*: expected a one-line message:"; cat "$tmp/stderr"
  fi
  if ls "$tmp"/err.nc* >/dev/null 2>&1; then bad "dump $* left output behind"; fi
}
expect_error "--T: 0 is out of range [1e-100, 1e100]" --N 4 --T 0
expect_error "--T: -1 is out of range [1e-100, 1e100]" --N 4 --T 1,-1
expect_error "--T: expected a number in [1e-100, 1e100], got 'abc'" --N 4 --T abc
expect_error "--T: expected a number in [1e-100, 1e100], got 'inf'" --N 4 --T inf
expect_error "--T: empty item in '1,,2'" --N 4 --T 1,,2
expect_error "--eps: 0 is out of range [1e-100, 1e100]" --N 4 --eps 0
expect_error "--N: empty list" --N ""
expect_error "--N: empty item in '4,'" --N 4,
expect_error "--N: 0 is out of range 1..2147483647" --N 0,4
expect_error "--N: expected an integer in 1..2147483647, got '2.5'" --N 2.5
expect_error "--N: 4 appears more than once" --N 4,2,4
expect_error "--normalizer: unknown normalizer 'softermax'" --N 4 --normalizer softermax
expect_error "--normalizer ssmax needs its parameter --s" --N 4 --normalizer ssmax
expect_error "--s applies only to --normalizer ssmax" --N 4 --s 2
expect_error "--normalizer entmax needs its parameter --alpha A" --N 4 --normalizer entmax
expect_error "--alpha: 1 is out of range (1, 1e3]" --N 4 --normalizer entmax --alpha 1
expect_error "--alpha applies only to --normalizer entmax, not to softmax" --N 4 --alpha 1.5
expect_error "--b applies only to --normalizer sigmoid, not to relu" --N 4 --normalizer relu --b 1
expect_error "--b: 2000 is out of range [-1e3, 1e3]" --N 4 --normalizer sigmoid --b 2000
expect_error "--normalizer: unknown normalizer 'softmax2'" --N 4 --normalizer softmax2
expect_error "--b needs --N" --b 1
expect_error "--sphere: expected true or false, got 'yes'" --N 4 --sphere yes
expect_error "--probes: 5000 is out of range 0..4096" --N 4 --probes 5000
expect_error "--seed: -1 is out of range 0..18446744073709551615" --N 4 --seed -1
expect_error "--T needs --N" --T 1
expect_error "option --N needs a value" --N

# --out in a directory that is missing or not a directory: exit 2, found before any work
# (the option comes last, so it overrides expect_error's own --out)
touch "$tmp/plain"
expect_error "--out $tmp/missing/x.nc: directory $tmp/missing: No such file or directory" \
  --out "$tmp/missing/x.nc"
expect_error "--out $tmp/plain/x.nc: $tmp/plain is not a directory" --out "$tmp/plain/x.nc"
if ls "$tmp/missing" "$tmp"/plain?* >/dev/null 2>&1; then bad "--out errors left files behind"; fi

if "$NORMSWEEP" dump --help | grep -q -- "--N LIST"; then ok "dump --help lists --N"; else bad "dump --help"; fi
exit $fail

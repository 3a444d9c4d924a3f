#!/bin/sh
# ns_frac_exact: N_s/N of METRICS.md section 6 is exact on real rows at small T (issue 12). Four
# held-out windows of the stand-in model (tokens used by no other test) are dumped with their
# logits at T = 0.01 and 0.1, and tests/check_ns_exact.py recomputes N_s of every (layer, head, T,
# N) at 50 digits with mpmath from the file's float32 logits and values; ns_frac must be equal,
# not close. Windows: softmax on unit vectors (L = 64, also with every e_i at 50 digits, which
# checks the checker's float64 filter), softmax on raw vectors (L = 128, intervals widened so that
# many comparisons take the 50-digit path), scalable softmax (L = 96), softmax at L = 300. A
# negative control changes one cell by one key and must be caught.
# Exit 77 (skip) only when python3-mpmath is not installed.
set -u
: "${NORMSWEEP:?}" "${NS_TEST_MODEL_DIR:?}" "${NS_TEST_CORPUS:?}" "${NS_TEST_TOKENIZER_DIR:?}" \
  "${top_srcdir:?}" "${PYTHON_DEBIAN:=/usr/bin/python3}"
check="$top_srcdir/tests/check_ns_exact.py"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

if ! "$PYTHON_DEBIAN" -c 'import mpmath' 2>/dev/null; then
  echo "SKIP: python3-mpmath is not installed"
  exit 77
fi

fail=0
dump() {
  name=$1; shift
  if ! "$NORMSWEEP" dump --model "$NS_TEST_MODEL_DIR" --tokenizer "$NS_TEST_TOKENIZER_DIR" \
       --text "$NS_TEST_CORPUS" --strip-gutenberg false --logits --T 0.01,0.1 "$@" \
       --out "$tmp/$name.nc"; then
    echo "FAIL: dump $name ($*)"; fail=1; return 1
  fi
}
check() {
  "$PYTHON_DEBIAN" "$check" "$@"
  rc=$?
  [ "$rc" -eq 77 ] && exit 77
  return $rc
}

dump A --offset 150000 --length 64 --N 1,2,3,5,8,13,21,34,55,63,89 &&
  { check "$tmp/A.nc" && check "$tmp/A.nc" --full ||
    { echo "FAIL: A (softmax, sphere, L = 64)"; fail=1; }; }
dump B --offset 600000 --length 128 --N 1,2,4,8,16,32,64,127 --sphere false &&
  { check "$tmp/B.nc" --widen 1 || { echo "FAIL: B (softmax, raw vectors, L = 128)"; fail=1; }; }
dump C --offset 333333 --length 96 --N 1,3,9,27,81,95 --normalizer ssmax --s 0.5 &&
  { check "$tmp/C.nc" || { echo "FAIL: C (ssmax s = 0.5, L = 96)"; fail=1; }; }
dump D --offset 700000 --length 300 --N 1,2,4,8,16,32,64,128,256,299 &&
  { check "$tmp/D.nc" || { echo "FAIL: D (softmax, sphere, L = 300)"; fail=1; }; }

# Negative control: N_s of one cell (layer 2, head 1, T = 0.01, N = 13) off by one key.
if [ -f "$tmp/A.nc" ]; then
  "$PYTHON_DEBIAN" - "$tmp/A.nc" "$tmp/A_bad.nc" <<'EOF' || { echo "FAIL: negative control setup"; fail=1; }
import shutil, sys, netCDF4
shutil.copy(sys.argv[1], sys.argv[2])
ds = netCDF4.Dataset(sys.argv[2], "a")
N = list(ds["N"][:]); n = N.index(13)
v = ds["ns_frac"]; v.set_auto_mask(False)
f = float(v[0, n, 2, 1])
v[0, n, 2, 1] = (round(f * 13) + (1 if f < 1 else -1)) / 13
ds.close()
EOF
  if check "$tmp/A_bad.nc" --only 2:1 >/dev/null; then
    echo "FAIL: negative control: an ns_frac off by one key was not detected"; fail=1
  else
    echo "ok: negative control detected"
  fi
fi
exit $fail

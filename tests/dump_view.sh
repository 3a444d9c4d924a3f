#!/bin/sh
# dump_view: `normsweep dump --N ... --sink-view`, the sink-excluded view of issue 36 (docs/
# METRICS.md section 8.2) for softmax, softmax1, sigmoid (its default bias, -log of the full
# row's L), sparsemax, entmax (alpha 1.3), relu with raw vectors (M of keys 1..) and
# stickbreaking on the stand-in model: mass, p, sink_mass, every Theorem 1/2 quantity (and the
# bound holding), entropy, jac_exact (the block of the Jacobian with z_0 held fixed) and jac_fd
# recomputed by tests/check_dump_norms.py from the published formulas over all L keys, key 0
# dropped and the rest renormalised. The label says the view; --sink-view needs --N. Negative
# controls: a mass, a sink_mass, a distance and a jac_exact moved by 1e-6 relative are caught.
set -u
: "${NORMSWEEP:?}" "${NS_TEST_MODEL_DIR:?}" "${NS_TEST_CORPUS:?}" "${NS_TEST_TOKENIZER_DIR:?}" \
  "${top_srcdir:?}" "${PYTHON_DEBIAN:=/usr/bin/python3}"
check="$top_srcdir/tests/check_dump_norms.py"
corrupt="$top_srcdir/tests/check_dump_metrics.py"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail=0
ok() { echo "ok: $*"; }
bad() { echo "FAIL: $*"; fail=1; }

dump() {
  "$NORMSWEEP" dump --tokenizer "$NS_TEST_TOKENIZER_DIR" --strip-gutenberg false \
    --text "$NS_TEST_CORPUS" "$@"
}
GRID="--N 1,2,3,8,30,31 --T 0.3,2 --eps 1e-3,1e-1 --logits --probes 0 --sink-view"

# run NAME ARGS...: dump the stand-in's window's view to $tmp/NAME.nc and recompute it
run() {
  name=$1; shift
  if ! dump --model "$NS_TEST_MODEL_DIR" --offset 5000 --length 32 $GRID "$@" \
       --out "$tmp/$name.nc"; then
    bad "dump $name exited non-zero"; return
  fi
  if "$PYTHON_DEBIAN" "$check" "$tmp/$name.nc"; then ok "$name: recomputed"; else bad "$name"; fi
}
run softmax --normalizer softmax
run softmax1 --normalizer softmax1
run sigmoid --normalizer sigmoid
run sparsemax --normalizer sparsemax
run entmax13 --normalizer entmax --alpha 1.3
run relu --normalizer relu --sphere false
run stick --normalizer stickbreaking
"$PYTHON_DEBIAN" - "$tmp" <<'PY' || bad "labels of the normalizer attribute"
import sys, netCDF4
want = {"softmax": "softmax, sink excluded", "sigmoid": "sigmoid b=-log(L), sink excluded",
        "entmax13": "entmax alpha=1.3, sink excluded"}
bad = [(k, netCDF4.Dataset(f"{sys.argv[1]}/{k}.nc").normalizer) for k in want
       if netCDF4.Dataset(f"{sys.argv[1]}/{k}.nc").normalizer != want[k]]
print("labels:", bad or "as expected")
sys.exit(1 if bad else 0)
PY

# Negative controls on the softmax1 view
for spec in mass:1.000001 sink_mass:1.000001 distance:1.000001 jac_exact:1.000001; do
  var=${spec%%:*}; how=${spec#*:}
  "$PYTHON_DEBIAN" "$corrupt" corrupt "$tmp/softmax1.nc" "$tmp/bad.nc" "$var" "$how" ||
    { bad "corrupt $spec"; continue; }
  if "$PYTHON_DEBIAN" "$check" "$tmp/bad.nc" >/dev/null; then bad "negative control: $spec not caught"; fi
done
ok "negative controls"

out=$(dump --model "$NS_TEST_MODEL_DIR" --offset 5000 --length 8 --sink-view --out "$tmp/x.nc" 2>&1)
if [ $? -eq 2 ] && echo "$out" | grep -q -- "--sink-view needs --N"; then
  ok "--sink-view without --N: exit 2"
else
  bad "--sink-view without --N: $out"
fi
if "$NORMSWEEP" dump --help | grep -q -- "--sink-view"; then ok "dump --help lists --sink-view"; else bad "dump --help"; fi
exit $fail

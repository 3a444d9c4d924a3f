#!/bin/sh
# dump_norms: `normsweep dump --N ... --normalizer NAME` with issue 36's normalizers (softmax1,
# sigmoid with its default and an explicit bias, softpick, relu, entmax at two alphas,
# stickbreaking) on the stand-in model, every metric -- mass, sink_mass, the shape metrics on
# p = a / m, the Jacobians of a -- recomputed by tests/check_dump_norms.py from the published
# formulas (mpmath; tolerances and their reasons in its docstring). A model whose logits are all
# exactly 0 (mkmodel --arch llama --init-std 1e-25: every q . k underflows float32) makes every
# softpick and relu row empty: counted exactly, every shape metric missing. Negative controls: a
# mass, a sink_mass, a distance and a jac_fd moved by 1e-6 relative must be caught (the option
# errors of --alpha and --b are tests/dump_metrics.sh's).
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
GRID="--N 1,2,3,8,31,40 --T 0.3,2 --eps 1e-3,1e-1 --logits --probes 0"

# run NAME ARGS...: dump the stand-in's window to $tmp/NAME.nc and recompute it
run() {
  name=$1; shift
  if ! dump --model "$NS_TEST_MODEL_DIR" --offset 5000 --length 32 $GRID "$@" \
       --out "$tmp/$name.nc"; then
    bad "dump $name exited non-zero"; return
  fi
  if "$PYTHON_DEBIAN" "$check" "$tmp/$name.nc"; then ok "$name: recomputed"; else bad "$name"; fi
}
run softmax1 --normalizer softmax1
run sigmoid --normalizer sigmoid
run sigmoid_b --normalizer sigmoid --b -1.5
run softpick --normalizer softpick
run relu --normalizer relu --sphere false
run entmax13 --normalizer entmax --alpha 1.3
run entmax25 --normalizer entmax --alpha 2.5
run stick --normalizer stickbreaking
"$PYTHON_DEBIAN" - "$tmp" <<'EOF' || bad "labels of the normalizer attribute"
import sys, netCDF4
want = {"softmax1": "softmax1", "sigmoid": "sigmoid b=-log(L)", "sigmoid_b": "sigmoid b=-1.5",
        "entmax13": "entmax alpha=1.3", "stick": "stickbreaking"}
bad = [(k, netCDF4.Dataset(f"{sys.argv[1]}/{k}.nc").normalizer) for k in want
       if netCDF4.Dataset(f"{sys.argv[1]}/{k}.nc").normalizer != want[k]]
print("labels:", bad or "as expected")
sys.exit(1 if bad else 0)
EOF

# Negative controls on the softpick dump
for spec in mass:1.000001 sink_mass:1.000001 distance:1.000001 jac_fd:1.000001; do
  var=${spec%%:*}; how=${spec#*:}
  "$PYTHON_DEBIAN" "$corrupt" corrupt "$tmp/softpick.nc" "$tmp/bad.nc" "$var" "$how" ||
    { bad "corrupt $spec"; continue; }
  if "$PYTHON_DEBIAN" "$check" "$tmp/bad.nc" >/dev/null; then bad "negative control: $spec not caught"; fi
done
ok "negative controls"

# Empty rows: a model whose logits are all exactly 0
if "$NORMSWEEP" mkmodel --arch llama --layers 2 --heads 2 --embd 16 --ctx 64 --vocab 50257 --seed 3 \
     --init-std 1e-25 --out "$tmp/zero" >/dev/null 2>&1; then
  for n in softpick relu; do
    if dump --model "$tmp/zero" --offset 5000 --length 16 --N 1,4 --T 0.5,1,2 --logits \
         --probes 0 --normalizer $n --out "$tmp/zero_$n.nc" &&
       "$PYTHON_DEBIAN" "$check" "$tmp/zero_$n.nc" --expect-empty 12; then
      ok "zero logits, $n: 12 of 12 (layer, head, T) rows empty"
    else
      bad "zero logits, $n"
    fi
  done
  # the same rows are uniform for the others: softmax1 sink_mass = 1/16 (32 ulps: a / m, m a
  # sum of 16 doubles)
  if dump --model "$tmp/zero" --offset 5000 --length 16 --N 1,4 --T 0.5 --logits \
       --normalizer softmax1 --out "$tmp/zero_s1.nc" &&
     "$PYTHON_DEBIAN" - "$tmp/zero_s1.nc" <<'EOF'; then ok "zero logits, softmax1: sink_mass 1/16"; else bad "zero logits softmax1 sink_mass"; fi
import sys, numpy as np, netCDF4
v = netCDF4.Dataset(sys.argv[1])["sink_mass"]; v.set_auto_mask(False)
sys.exit(0 if np.all(np.abs(np.asarray(v[:]) - 1 / 16) <= 32 * 2.0 ** -52 / 16) else 1)
EOF
else
  bad "mkmodel --init-std 1e-25"
fi

if "$NORMSWEEP" dump --help | grep -q -- "--alpha A"; then ok "dump --help lists --alpha"; else bad "dump --help"; fi
exit $fail

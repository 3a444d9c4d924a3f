#!/bin/sh
# simd_clones: the analysis's hot loops are compiled for AVX2 and for the x86-64 baseline and
# picked at run time (src/common/ns_simd.h); both must give the same bits. tests/analysis_payload
# (the library as the program uses it) and tests/analysis_payload_base (the same library built
# with -DNS_NO_CLONES: baseline only) write every metric of 17 heads x 4 normalizers x 2 kernels
# x sphere on/off; the two files must be byte-identical. On a machine without AVX2 both run
# the baseline, and the test says so.
set -u
: "${top_builddir:?}"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
b=$top_builddir/tests
"$b/analysis_payload" "$tmp/clones.bin" >"$tmp/clones.txt" || { echo "FAIL: analysis_payload"; exit 1; }
"$b/analysis_payload_base" "$tmp/base.bin" >"$tmp/base.txt" || { echo "FAIL: analysis_payload_base"; exit 1; }
echo "clones:   $(cat "$tmp/clones.txt")"
echo "baseline: $(cat "$tmp/base.txt")"
if grep -q avx2 /proc/cpuinfo 2>/dev/null; then
  echo "this CPU has AVX2: the clones run their AVX2 versions"
else
  echo "this CPU has no AVX2: both programs run the baseline (the comparison checks less)"
fi
# the payload must be real: many doubles, most of them finite
n=$(sed 's/ .*//' "$tmp/clones.txt")
if [ "${n:-0}" -lt 100000 ]; then echo "FAIL: only ${n:-0} doubles"; exit 1; fi
if cmp "$tmp/clones.bin" "$tmp/base.bin"; then
  echo "ok: byte-identical ($(wc -c <"$tmp/clones.bin") bytes)"
else
  echo "FAIL: the AVX2 and baseline builds differ"; exit 1
fi

#!/bin/sh
# bench/forward.sh: part of `make bench`. Writes a random 124M-shaped GPT-2 with `normsweep mkmodel`
# (weights memory-mapped, as in a sweep), then runs
# bench/bench_forward at L=1024 with 2 OpenBLAS threads: median of 5 forward passes and of 5 passes
# of an sgemm-only loop over exactly the same GEMM shapes.
# Targets: forward_vs_sgemm >= 0.6, forward_peak_rss_mb <= 1536.
set -eu
: "${top_builddir:?}" "${NORMSWEEP:=$top_builddir/normsweep}"
bin="$top_builddir/bench/bench_forward"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
"$NORMSWEEP" mkmodel --preset gpt2 --seed 1 --out "$tmp/gpt2" >"$tmp/mkmodel.log" 2>&1 ||
  { echo "forward: mkmodel failed: $(tail -n 1 "$tmp/mkmodel.log")" >&2; exit 1; }
OPENBLAS_NUM_THREADS=2 "$bin" --model "$tmp/gpt2" --L 1024 --reps 5

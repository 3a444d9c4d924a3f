#!/bin/sh
# bench/forward.sh: part of `make bench`. Writes a random 124M-shaped GPT-2 with `normsweep mkmodel`
# (weights memory-mapped, as in a sweep), then runs bench/bench_forward at L=1024 with 2 OpenBLAS
# threads: median of 5 forward passes and of 5 passes of an sgemm-only loop over exactly the same
# GEMM shapes (interleaved, so load from other jobs falls on both).
# Targets: forward_vs_sgemm >= 0.75 (issue 14), forward_peak_rss_mb <= 1536.
set -u
: "${top_builddir:?}" "${top_srcdir:?}" "${NORMSWEEP:=$top_builddir/normsweep}"
. "$top_srcdir/bench/verdict.sh"
bin="$top_builddir/bench/bench_forward"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
"$NORMSWEEP" mkmodel --preset gpt2 --seed 1 --out "$tmp/gpt2" >"$tmp/mkmodel.log" 2>&1 ||
  { ns_check forward_vs_sgemm "not measured (mkmodel failed: $(tail -n 1 "$tmp/mkmodel.log"))" ">=" 0.75; exit 1; }
OPENBLAS_NUM_THREADS=2 "$bin" --model "$tmp/gpt2" --L 1024 --reps 5 > "$tmp/out" 2>&1 ||
  { cat "$tmp/out"; exit 1; }
ns_indent "$tmp/out"
for k in forward_seconds forward_gflops sgemm_gflops; do ns_info $k "$(ns_value $k "$tmp/out")"; done
ns_check forward_vs_sgemm "$(ns_value forward_vs_sgemm "$tmp/out")" ">=" 0.75
ns_check forward_peak_rss_mb "$(ns_value forward_peak_rss_mb "$tmp/out")" "<=" 1536

#!/bin/sh
# bench/analysis.sh: the analysis of one shard of sweeps/full_grid.yaml (all 144 heads of a random
# 124M-shaped GPT-2 from `normsweep mkmodel`, every L, N, T and eps of the grid) against the
# forward pass of the same shard, both single-threaded (the sweep runs one BLAS thread per rank):
# medians of 3 (bench/bench_analysis). Target: analysis_vs_forward <= 0.25 (issue 14).
set -u
: "${top_builddir:?}" "${top_srcdir:?}" "${NORMSWEEP:=$top_builddir/normsweep}"
. "$top_srcdir/bench/verdict.sh"
bin="$top_builddir/bench/bench_analysis"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT INT TERM
"$NORMSWEEP" mkmodel --preset gpt2 --seed 1 --out "$tmp/gpt2" >"$tmp/mk.log" 2>&1 ||
  { ns_check analysis_vs_forward "not measured (mkmodel failed: $(tail -n 1 "$tmp/mk.log"))" "<=" 0.25; exit 1; }
OPENBLAS_NUM_THREADS=1 "$bin" "$top_srcdir/sweeps/full_grid.yaml" "$tmp/gpt2" 3 fast > "$tmp/out" 2>&1 ||
  { cat "$tmp/out"; exit 1; }
ns_indent "$tmp/out"
ns_info analysis_forward_seconds_1t "$(ns_value forward_seconds_1t "$tmp/out")"
ns_info analysis_seconds "$(ns_value analysis_seconds "$tmp/out")"
ns_info payload_bytes_per_task "$(ns_value payload_bytes_per_task "$tmp/out")"
ns_check analysis_vs_forward "$(ns_value analysis_vs_forward "$tmp/out")" "<=" 0.25

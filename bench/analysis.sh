#!/bin/sh
# bench/analysis.sh: the analysis of one shard of sweeps/full_grid.yaml (all 144 heads of a random
# 124M-shaped GPT-2 from `normsweep mkmodel`, every L, N, T and eps of the grid) against the
# forward pass of the same shard, both single-threaded (the sweep runs one BLAS thread per rank):
# medians of 3 (bench/bench_analysis). Target: analysis_vs_forward_full_grid <= 0.25 (issue 14). The
# same for one shard of sweeps/ablation.yaml, reported (analysis_vs_forward_ablation).
set -u
: "${top_builddir:?}" "${top_srcdir:?}" "${NORMSWEEP:=$top_builddir/normsweep}"
. "$top_srcdir/bench/verdict.sh"
bin="$top_builddir/bench/bench_analysis"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT INT TERM
"$NORMSWEEP" mkmodel --preset gpt2 --seed 1 --out "$tmp/gpt2" >"$tmp/mk.log" 2>&1 ||
  { ns_check analysis_vs_forward_full_grid "not measured (mkmodel failed: $(tail -n 1 "$tmp/mk.log"))" "<=" 0.25; exit 1; }
# the full grid (the target) and the ablation grid (its N grid is 5 values, not 39: what is left is
# the part of the analysis that does not grow with N)
for grid in full_grid ablation; do
  OPENBLAS_NUM_THREADS=1 "$bin" "$top_srcdir/sweeps/$grid.yaml" "$tmp/gpt2" 3 fast > "$tmp/$grid" 2>&1 ||
    { cat "$tmp/$grid"; ns_check analysis_vs_forward_full_grid "not measured ($grid failed)" "<=" 0.25; exit 1; }
  ns_indent "$tmp/$grid"
done
ns_info analysis_forward_seconds_1t "$(ns_value forward_seconds_1t "$tmp/full_grid")"
ns_info analysis_seconds_full_grid "$(ns_value analysis_seconds "$tmp/full_grid")"
ns_info analysis_seconds_ablation "$(ns_value analysis_seconds "$tmp/ablation")"
ns_info payload_bytes_per_task_full_grid "$(ns_value payload_bytes_per_task "$tmp/full_grid")"
ns_info analysis_vs_forward_ablation "$(ns_value analysis_vs_forward "$tmp/ablation")"
ns_check analysis_vs_forward_full_grid "$(ns_value analysis_vs_forward "$tmp/full_grid")" "<=" 0.25

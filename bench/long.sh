#!/bin/sh
# bench/long.sh: part of `make bench` (issue 35's long contexts and the Llama layout). Writes a
# random SmolLM2-135M-shaped Llama model (`mkmodel --preset smollm2-135m`: 30 layers, 9 query
# heads over 3 key/value heads, hidden 576, F32, 538 MB memory-mapped), then
#   - bench_forward at L = 2048 with 2 BLAS threads against the sgemm-only loop of the same GEMMs:
#     forward_vs_sgemm_smollm2_L2048 >= 0.75 (as the GPT-2 124M target of bench/forward.sh);
#   - bench_forward at L = 8192 (the model's context), one thread, one pass keeping the last 64
#     rows: forward_seconds_smollm2_L8192_1t, and forward_peak_rss_mb_smollm2_L8192 <= 1024 (peak
#     RSS beyond the resident mapped weights: workspace, BLAS buffers, everything the pass touches);
#   - bench_analysis of bench/long_context.yaml (every head, the last 4 rows of L = 8192, 9 N,
#     3 T) against the forward pass, one thread: analysis_seconds_smollm2_L8192 and the ratio.
set -u
: "${top_builddir:?}" "${top_srcdir:?}" "${NORMSWEEP:=$top_builddir/normsweep}"
. "$top_srcdir/bench/verdict.sh"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT INT TERM
"$NORMSWEEP" mkmodel --preset smollm2-135m --seed 1 --out "$tmp/smol" >"$tmp/mk.log" 2>&1 ||
  { ns_check forward_vs_sgemm_smollm2_L2048 "not measured (mkmodel failed: $(tail -n 1 "$tmp/mk.log"))" ">=" 0.75; exit 1; }
OPENBLAS_NUM_THREADS=2 "$top_builddir/bench/bench_forward" --model "$tmp/smol" --L 2048 --reps 3 \
  > "$tmp/f2048" 2>&1 || { cat "$tmp/f2048"; exit 1; }
ns_indent "$tmp/f2048"
OPENBLAS_NUM_THREADS=1 "$top_builddir/bench/bench_forward" --model "$tmp/smol" --L 8192 --reps 0 \
  --rows 64 > "$tmp/f8192" 2>&1 || { cat "$tmp/f8192"; exit 1; }
ns_indent "$tmp/f8192"
OPENBLAS_NUM_THREADS=1 "$top_builddir/bench/bench_analysis" "$top_srcdir/bench/long_context.yaml" \
  "$tmp/smol" 1 fast > "$tmp/a8192" 2>&1 || { cat "$tmp/a8192"; exit 1; }
ns_indent "$tmp/a8192"
ns_info forward_seconds_smollm2_L2048 "$(ns_value forward_seconds "$tmp/f2048")"
ns_info forward_seconds_smollm2_L8192_1t "$(ns_value forward_seconds "$tmp/f8192")"
ns_info forward_gflops_smollm2_L8192_1t "$(ns_value forward_gflops "$tmp/f8192")"
ns_info analysis_seconds_smollm2_L8192 "$(ns_value analysis_seconds "$tmp/a8192")"
ns_info analysis_vs_forward_smollm2_L8192 "$(ns_value analysis_vs_forward "$tmp/a8192")"
ns_check forward_vs_sgemm_smollm2_L2048 "$(ns_value forward_vs_sgemm "$tmp/f2048")" ">=" 0.75
ns_check forward_peak_rss_mb_smollm2_L8192 "$(ns_value forward_peak_rss_mb "$tmp/f8192")" "<=" 1024

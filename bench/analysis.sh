#!/bin/sh
# bench/analysis.sh: analysis of all 144 heads of one L_max = 1024 shard on the ablation grid,
# timed against one forward pass of a random 124M GPT-2 (made here with `normsweep mkmodel`);
# falls back to synthetic logits/values when the model cannot be made.
set -u
: "${top_builddir:=$(pwd)}"
bin="$top_builddir/bench/bench_analysis"
if [ ! -x "$bin" ]; then
  echo "analysis_vs_forward: not built ($bin missing; run make bench)"
  exit 0
fi
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT INT TERM
if [ -n "${NORMSWEEP:-}" ] && "$NORMSWEEP" mkmodel --preset gpt2 --out "$tmp/gpt2" >"$tmp/mk.log" 2>&1; then
  "$bin" "$tmp/gpt2"
else
  echo "analysis: no random model (mkmodel failed: $(tail -n 1 "$tmp/mk.log" 2>/dev/null)); synthetic data"
  "$bin"
fi

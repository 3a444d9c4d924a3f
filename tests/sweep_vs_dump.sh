#!/bin/sh
# sweep_vs_dump: every per-row value a sweep keeps (keep_samples) equals what `normsweep dump`
# computes for the same window: shard k, row r of context length L is the last row of the window
# [k * L_max, k * L_max + L - r). This checks the sweep's slicing of logits/values per head, its
# row order (sample = shard-major, then r) and its cell layout against an independent path.
# Tolerance: exact when the window is the shard's full forward (same sgemm shapes); otherwise a
# relative 1e-4, because a forward over fewer tokens may round its float32 logits differently in
# the last bits (the metrics are otherwise computed identically, in double).
. "$top_srcdir/tests/sweep_common.sh"
make_sweep two
cd "$work" || fail "cd"
"$NORMSWEEP" two.yaml --output two.nc --checkpoint-dir ck 2> log || { cat log >&2; fail "sweep"; }

# values VAR FILE: the variable's values, one per line (NaN, Infinity, _ kept as text)
values() {
  ncdump -p 9,17 -v "$1" "$2" | sed -n "/^ $1 =/,/;/p" | sed -e "s/^ $1 =//" -e 's/;//' |
    tr ',' '\n' | tr -d ' ' | sed '/^$/d'
}
stems="distance distance_d1 distance_bound distance_expected distance_random ns_frac ns_lower ns_upper delta jac_exact jac_lemma2 entropy entropy_norm n_eff jac_fd"
for stem in $stems; do values "${stem}_sample" two.nc > "s_$stem"; done
S=4   # 2 shards x 2 rows
Li=0
for L in 24 48; do
  for k in 0 1; do
    for r in 0 1; do
      len=$((L - r))
      "$NORMSWEEP" dump --text "$NS_TEST_CORPUS" --offset $((k * 48)) --length $len \
        --model "$NS_TEST_MODEL_DIR" --tokenizer "$NS_TEST_TOKENIZER_DIR" --strip-gutenberg false \
        --N 1,3,30 --T 0.5,2 \
        --eps 1e-3,0.1 --seed 5 --out d.nc 2> dlog || { cat dlog >&2; fail "dump $k $len"; }
      exact=0; [ $len -eq 48 ] && exact=1
      for stem in $stems; do
        # dump keys its random draws (distance_random, the jac_fd probes) with shard = 0
        # (delta has no normalizer dimension: the same index formula holds with one normalizer)
        if [ $k -ne 0 ] && { [ $stem = distance_random ] || [ $stem = jac_fd ]; }; then continue; fi
        values "$stem" d.nc > d_vals
        n=$(wc -l < d_vals)
        # the sweep's index of (Li, x, sample) is (Li * n + x) * S + s, s = k * 2 + r
        awk -v n="$n" -v S=$S -v Li=$Li -v s=$((k * 2 + r)) -v exact=$exact -v what="$stem L=$L shard=$k r=$r" '
          function num(t) { return t ~ /^-?[0-9.]+([eE][-+]?[0-9]+)?$/ }
          NR == FNR { d[FNR - 1] = $0; next }
          { sw[FNR - 1] = $0 }
          END {
            bad = 0
            for (x = 0; x < n; x++) {
              a = d[x]; b = sw[(Li * n + x) * S + s]
              if (num(a) && num(b)) {
                diff = a - b; if (diff < 0) diff = -diff
                m = a < 0 ? -a : a
                tol = exact ? 0 : 1e-4 * (m > 1e-3 ? m : 1e-3)
                if (diff > tol) { bad++; if (bad < 4) print what " x=" x ": dump " a " sweep " b > "/dev/stderr" }
              } else if (a != b && !((a == "NaN" || a == "_") && (b == "NaN" || b == "_"))) {
                bad++; if (bad < 4) print what " x=" x ": dump " a " sweep " b > "/dev/stderr"
              }
            }
            exit bad > 0
          }' d_vals "s_$stem" || fail "$stem differs from dump (L=$L shard=$k r=$r)"
      done
    done
  done
  Li=$((Li + 1))
done
echo "sweep_vs_dump: ok"

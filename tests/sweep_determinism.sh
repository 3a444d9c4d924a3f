#!/bin/sh
# sweep_determinism: the tiny sweep's data variables are byte-identical for -np 1, 2 and 4 (and
# with more ranks than tasks), each shard's forward runs once, and the file carries the schema.
. "$top_srcdir/tests/sweep_common.sh"
make_sweep tiny
cd "$work" || fail "cd"
for np in 1 2 4; do
  run_np $np tiny.yaml --output np$np.nc --checkpoint-dir ck$np 2> log$np || {
    cat log$np >&2; fail "-np $np exited with $?"; }
  [ -f np$np.nc ] || fail "-np $np wrote no file"
done
same_data np1.nc np2.nc "-np 1 vs -np 2"
same_data np1.nc np4.nc "-np 1 vs -np 4"
# more ranks (8) than tasks (6): idle ranks exit cleanly
run_np 8 tiny.yaml --output np8.nc --checkpoint-dir ck8 2> log8 || { cat log8 >&2; fail "-np 8 failed"; }
same_data np1.nc np8.nc "-np 1 vs -np 8"
grep -q "4 ranks" log4 || fail "log of -np 4 does not name 4 ranks"
grep -q "^master_seconds_per_task: " log2 || fail "no master time per task in the log"

# each of the 6 shards' forward ran exactly once
[ "$(forward_counts np4.nc)" = "1,1,1,1,1,1" ] || fail "shard_forward_count is $(forward_counts np4.nc)"
# the schema (docs/OUTPUT.md): coordinates, statistics, KS, counts and provenance
hdr=$(ncdump -h np1.nc)
for v in "char normalizer(normalizer, name_strlen)" "double quantile(quantile)" \
         "int L(L)" "int N(N)" "double T(T)" "double eps(eps)" \
         "int layer(layer)" "int head(head)" \
         "double distance_mean(normalizer, L, T, N, layer, head)" \
         "int distance_count(normalizer, L, T, N, layer, head)" \
         "double delta_quantile(quantile, L, layer, head)" \
         "double jac_exact_quantile(quantile, normalizer, L, T, layer, head)" \
         "double entropy_mean(normalizer, L, T, layer, head)" \
         "double n_eff_std(normalizer, L, T, layer, head)" \
         "double jac_fd_quantile(quantile, normalizer, L, T, eps, layer, head)" \
         "double ks_expected_statistic(normalizer, L, T, N, layer, head)" \
         "double ks_expected_pvalue(normalizer, L, T, N, layer, head)" \
         "double ks_random_statistic(normalizer, L, T, N, layer, head)" \
         "double ks_random_pvalue(normalizer, L, T, N, layer, head)" \
         "int n_crit_expected(normalizer, L, T, layer, head)" \
         "int n_crit_random(normalizer, L, T, layer, head)" \
         "int n_crit_expected_status(normalizer, L, T, layer, head)" \
         "double n_crit_expected_frac(normalizer, L, T, layer, head)" \
         "int n_samples(L)" "double jac_bound(T)" \
         "int thm1_violations(normalizer, L, T, N, layer, head)" \
         "int ns_upper_violations(normalizer, L, T, N, layer, head)" \
         "int ns_lower_vacuous(normalizer, L, T, N, layer, head)" \
         "int jac_exact_violations(normalizer, L, T, layer, head)" \
         "int jac_fd_violations(normalizer, L, T, eps, layer, head)" \
         "int jac_fd_checked(normalizer, L, T, eps, layer, head)" \
         "int lemma2_violations(normalizer, L, T, layer, head)" \
         "int skipped_rows(normalizer, L, T, N, layer, head)" \
         "int ns_lower_undefined(normalizer, L, T, N, layer, head)" \
         "double distance_random_sample(normalizer, L, T, N, layer, head, sample)" \
         "int shard_forward_count(shard)"; do
  printf '%s\n' "$hdr" | grep -qF "$v" || fail "missing variable: $v"
done
for a in Conventions title institution source history references comment metrics_contract \
         metrics_version normsweep_version git_commit sweep_yaml model_sha256 tokenizer_sha256 \
         corpus_sha256 model_requested model_used mpi_size mpi_library blas compiler cflags \
         start_time end_time command_line tie_rule quantile_method violation_rules ns_rule \
         random_selection n_crit_rule output_layout; do
  printf '%s\n' "$hdr" | grep -q "^		:$a = " || fail "missing global attribute $a"
done
ncdump -h np4.nc | grep -q ':mpi_size = 4' || fail "mpi_size not recorded"
# 6 shards x 2 rows per cell
ncdump -v n_samples np1.nc | grep -q "n_samples = 12, 12 ;" || fail "n_samples is not 12"
# nothing is skipped in this grid (every N < every L - rows + 1)
[ "$(ncdump -v skipped_rows np1.nc | sed -n '/^ skipped_rows =/,/;/p' | tr -d ' \n;' |
     sed 's/skipped_rows=//' | tr ',' '\n' | sort -u)" = 0 ] || fail "skipped_rows should all be 0"
echo "sweep_determinism: ok"

#!/bin/sh
# sweep_ks_scipy: a keep_samples sweep (tests/data/run/ks.yaml.in, two ranks) whose ks_* and
# n_crit_* agree with scipy.stats.ks_2samp(method='auto') recomputed from the kept samples (p to
# 1e-6 relative, D and n_crit exactly), and whose every count (skipped rows, violations, checked,
# vacuous, undefined) and statistic follow from the same samples (issue 12;
# tests/check_sweep_ks.py says what and why). A negative control corrupts a p-value, an n_crit
# and a count in a copy of the file: each must be caught.
. "$top_srcdir/tests/sweep_common.sh"
: "${PYTHON_DEBIAN:=/usr/bin/python3}"
check="$top_srcdir/tests/check_sweep_ks.py"
make_sweep ks
cd "$work" || fail "cd"
run_np 2 ks.yaml --output ks.nc --checkpoint-dir ck 2> log || { cat log >&2; fail "sweep"; }
"$PYTHON_DEBIAN" "$check" ks.nc || fail "the sweep's KS tests, n_crit or counts differ from scipy/numpy"

"$PYTHON_DEBIAN" - ks.nc bad.nc <<'EOF' || fail "negative control setup"
import shutil, sys, netCDF4
shutil.copy(sys.argv[1], sys.argv[2])
ds = netCDF4.Dataset(sys.argv[2], "a")
for name in ("ks_expected_pvalue", "n_crit_random", "thm1_checked"):
    ds[name].set_auto_mask(False)
p = ds["ks_expected_pvalue"][1, 2, 2, 0, 1, 1]
ds["ks_expected_pvalue"][1, 2, 2, 0, 1, 1] = p * (1 + 1e-5)
ds["n_crit_random"][0, 2, 1, 1, 2] = ds["n_crit_random"][0, 2, 1, 1, 2] + 3
ds["thm1_checked"][0, 1, 3, 1, 0, 0] = ds["thm1_checked"][0, 1, 3, 1, 0, 0] - 1
ds.close()
EOF
"$PYTHON_DEBIAN" "$check" bad.nc > bad.log 2>&1 && fail "negative control: a corrupted file passed"
for what in "FAIL ks_expected \[normalizer 1 L=48 T index 2 N=3 layer 1 head 1\]: p" \
            "FAIL n_crit_random \[normalizer 0 L=48 T index 1 layer 1 head 2\]" \
            "FAIL thm1_checked(0, 1, 3, 1, 0, 0)"; do
  grep -q "$what" bad.log || { cat bad.log >&2; fail "negative control: not caught: $what"; }
done
echo "ok: sweep_ks_scipy (negative controls caught)"

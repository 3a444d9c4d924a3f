#!/bin/sh
# sweep_intervals: the shard-bootstrap intervals the C reduction writes into a sweep file
# (docs/STATISTICS.md, "The intervals in the NetCDF file"; issue 33):
# - the same sweep at -np 1, 2 and 4 writes byte-identical intervals (every NAME, NAME_ci_low,
#   NAME_ci_high and head_set_name);
# - they equal, bit for bit, the report's independent Python reference recomputed from the same
#   file's per-row samples (tests/check_intervals_c.py); a copy with one interval end moved by one
#   unit in the last place fails that check, naming the variable;
# - so do those of a random model with 2 layers x 20 heads (sets above 32 heads: the selection
#   shared across replicates);
# - with `bootstrap: {resamples: 1000}` the file records B = 1000 (global and per-variable
#   attributes) and its intervals are again the Python reference's, bit for bit, with B = 1000;
#   `verify` of its archive recomputes them with the recorded B and passes byte-identical;
# - spread over the ranks in units of work (a group's means, its KS tests at one L; given by
#   estimated time, analysis/ns_boot_units.h): with 3 groups (one normalizer, 3 T, two of them
#   the claims') the intervals at -np 1, 2, 3 and 4 (a rank owning no means unit) are
#   byte-identical; under a per-rank limit
#   (NORMSWEEP_BOOTSTRAP_MAX_BYTES) that 3 ranks meet and 1 does not, validate names 3 ranks, a
#   run at -np 1 writes none and says why, and one at -np 3 writes the uncapped ones;
# - a run without keep_samples gets intervals in its report.json, read from the file.
# (`verify` recomputing them and failing on an edited one: tests/archive_verify.sh; identical
# across a resume: tests/sweep_resume.sh compares every variable.)
. "$top_srcdir/tests/sweep_common.sh"
: "${PYTHON_DEBIAN:=/usr/bin/python3}"
make_sweep ks
cd "$work" || fail "cd"
for np in 1 2 4; do
  run_np $np ks.yaml --output np$np.nc --checkpoint-dir ck$np 2> log$np || { cat log$np >&2; fail "sweep -np $np"; }
  grep -q "^bootstrap_seconds: " log$np || { cat log$np >&2; fail "-np $np: no bootstrap_seconds line"; }
done
vars=$("$PYTHON_DEBIAN" -c 'import sys, netCDF4
ds = netCDF4.Dataset(sys.argv[1])
names = ds.getncattr("bootstrap_statistics").split()
print(",".join(["head_set_name"] + [n + s for n in names for s in ("", "_ci_low", "_ci_high")]))' np1.nc) ||
  fail "np1.nc: no bootstrap_statistics attribute"
[ "$(echo "$vars" | tr ',' '\n' | wc -l)" -eq 67 ] || fail "not the 22 statistics of the catalogue with intervals: $vars"
for np in 1 2 4; do
  ncdump -p 9,17 -v "$vars" np$np.nc | sed -n '/^data:/,$p' > iv$np.cdl || fail "ncdump np$np.nc"
done
grep -q "^ distance_mean_hmedian_ci_low =" iv1.cdl || fail "no interval data dumped"
cmp -s iv1.cdl iv2.cdl || { diff iv1.cdl iv2.cdl | head >&2; fail "intervals differ: -np 1 vs -np 2"; }
cmp -s iv1.cdl iv4.cdl || { diff iv1.cdl iv4.cdl | head >&2; fail "intervals differ: -np 1 vs -np 4"; }

"$PYTHON_DEBIAN" "$top_srcdir/tests/check_intervals_c.py" "$top_srcdir/postprocess" np2.nc > ref.log 2>&1 ||
  { cat ref.log >&2; fail "the C intervals differ from the Python reference"; }
cat ref.log

# negative control: one upper end moved by one ulp
cp np2.nc bad.nc
"$PYTHON_DEBIAN" - bad.nc <<'PYEOF' || fail "negative control setup"
import sys, numpy as np, netCDF4
ds = netCDF4.Dataset(sys.argv[1], "a")
v = ds["ns_frac_mean_hmedian_ci_high"]
v.set_auto_mask(False)
a = v[:]
i = np.flatnonzero(np.isfinite(a.reshape(-1)))[3]
a.reshape(-1)[i] = np.nextafter(a.reshape(-1)[i], np.inf)
v[:] = a
ds.close()
PYEOF
"$PYTHON_DEBIAN" "$top_srcdir/tests/check_intervals_c.py" "$top_srcdir/postprocess" bad.nc > bad.log 2>&1 &&
  fail "negative control: a file with an edited interval passed"
grep -q "ns_frac_mean_hmedian ci_high: 1 of " bad.log || { cat bad.log >&2; fail "negative control: not named"; }

# B from the sweep file: 1000 resamples
{ cat ks.yaml; echo 'bootstrap: {resamples: 1000}'; } > b1000.yaml
"$NORMSWEEP" validate b1000.yaml > val.log 2>&1 || { cat val.log >&2; fail "validate b1000.yaml"; }
grep -q "^  bootstrap:   1000 resamples of the 12 shards" val.log || { cat val.log >&2; fail "validate does not print B"; }
run_np 2 b1000.yaml --output runb/b1000.nc --checkpoint-dir runb/checkpoint 2> logb || { cat logb >&2; fail "sweep with B = 1000"; }
grep -q "^bootstrap_seconds: .* (1000 resamples of 12 shards" logb || { cat logb >&2; fail "B = 1000: no bootstrap_seconds line naming it"; }
"$PYTHON_DEBIAN" "$top_srcdir/tests/check_intervals_c.py" "$top_srcdir/postprocess" runb/b1000.nc 1000 > refb.log 2>&1 ||
  { cat refb.log >&2; fail "B = 1000: the C intervals differ from the Python reference"; }
cat refb.log
"$PYTHON_DEBIAN" "$top_srcdir/tests/check_intervals_c.py" "$top_srcdir/postprocess" runb/b1000.nc 2000 > refb2.log 2>&1 &&
  fail "B = 1000: the check passed a file that records 1000 resamples when told 2000"
grep -q "bootstrap_resamples 1000" refb2.log || { cat refb2.log >&2; fail "B = 1000: the recorded B not named"; }
cmp -s np2.nc runb/b1000.nc && fail "B = 1000 wrote the same file as B = 2000"
"$NORMSWEEP" archive runb --out b1000.tar.gz > arc.log 2>&1 ||
  { cat arc.log >&2; fail "archive of the B = 1000 run"; }
"$NORMSWEEP" verify b1000.tar.gz --sample 1 > ver.log 2>&1 || { cat ver.log >&2; fail "verify of the B = 1000 run"; }
grep -q "mode: byte-identical" ver.log && grep -q "verify: PASS" ver.log ||
  { cat ver.log >&2; fail "verify of the B = 1000 run: not a byte-identical pass"; }

# more than 32 heads: a random model of 2 layers x 20 heads, so the sets "all" (40) and often
# "sharp" or "flat" take the selection shared across replicates (ns_boot_set_medians) and the
# layers (20) the comparator network at a size the stand-in does not have; its C intervals again
# equal the Python reference, bit for bit
"$NORMSWEEP" mkmodel --layers 2 --heads 20 --embd 80 --ctx 64 --vocab 50257 --seed 5 \
  --out wide > wmk.log 2>&1 || { cat wmk.log >&2; fail "mkmodel of 2 x 20 heads"; }
sed -e "s|^model: .*|model: $work/wide|" -e 's/^  layers: .*/  layers: all/' \
    -e 's/^normalizer: .*/normalizer: [softmax]/' -e 's/^  T: .*/  T: [0.01, 1.0]/' ks.yaml > wide.yaml
grep -q '^  layers: all' wide.yaml && grep -q "^model: $work/wide" wide.yaml ||
  fail "wide.yaml: the sed did not apply"
run_np 2 wide.yaml --output wide.nc --checkpoint-dir ckw 2> logw || { cat logw >&2; fail "sweep of 2 x 20 heads"; }
"$PYTHON_DEBIAN" "$top_srcdir/tests/check_intervals_c.py" "$top_srcdir/postprocess" wide.nc > refw.log 2>&1 ||
  { cat refw.log >&2; fail "40 heads: the C intervals differ from the Python reference"; }
cat refw.log

# the blocks' pieces spread over the ranks by unit of work (a group's means, or its KS tests at
# one L; ns_sweep_spread): one normalizer and 3 T make 3 groups, 3 means units and 9 KS units; at
# -np 4 one rank owns no means unit, at -np 2 and 3 the two claims' groups' means go to two ranks
sed -e 's/^normalizer: .*/normalizer: [softmax]/' -e 's/^  T: .*/  T: [0.01, 0.3, 1.0]/' \
    -e 's/^keep_samples: true/keep_samples: false/' ks.yaml > g3.yaml
grep -q '^normalizer: \[softmax\]' g3.yaml && grep -q '^  T: \[0.01, 0.3, 1.0\]' g3.yaml ||
  fail "g3.yaml: the sed did not apply"
g3_intervals() { # FILE.nc > the interval variables' data
  ncdump -p 9,17 -v "$vars" "$1" | sed -n '/^data:/,$p'
}
for np in 1 2 3 4; do
  run_np $np g3.yaml --output g3_np$np.nc --checkpoint-dir g3ck$np 2> g3log$np || { cat g3log$np >&2; fail "3 groups: sweep -np $np"; }
  g3_intervals g3_np$np.nc > g3iv$np.cdl || fail "ncdump g3_np$np.nc"
done
grep -q "^ ns_frac_mean_hmedian_ci_low =" g3iv1.cdl || fail "3 groups: no interval data dumped"
cmp -s g3iv1.cdl g3iv2.cdl || { diff g3iv1.cdl g3iv2.cdl | head >&2; fail "3 groups: intervals differ: -np 1 vs -np 2"; }
cmp -s g3iv1.cdl g3iv3.cdl || { diff g3iv1.cdl g3iv3.cdl | head >&2; fail "3 groups: intervals differ: -np 1 vs -np 3"; }
cmp -s g3iv1.cdl g3iv4.cdl || { diff g3iv1.cdl g3iv4.cdl | head >&2; fail "3 groups: intervals differ: -np 1 vs -np 4 (a rank owns no means unit)"; }

# the limit is per rank. Counted by hand for g3.yaml (12 shards x 3 rows, 5 N, 3 L x 2 layers x
# 4 heads = 24 slices, 3 groups): a T part is (14 x 5 + 3) x 12 + 3 x 5 x 12 x 3 = 1416 doubles,
# a slice's block 3 of them (33984 bytes). A limit of 600000 bytes also cuts the rounds to an
# eighth of it, 75000 bytes: 2 slices. One rank holds the 3 groups' 72 parts and a round of 2
# reduced blocks, 883584 bytes; of two ranks the largest holds at most 2 groups' worth (48 parts:
# the caps on its units) and 2 blocks twice (reduced, and sorted by destination): 679680; of
# three, 1 group's worth and 2 blocks twice: 407808 -- so intervals are written from 3 ranks on: none at -np 1 (the run says so, the file
# has none), and at -np 3 (each rank reducing its 8 slices in 4 rounds) exactly the uncapped
# ones.
NORMSWEEP_BOOTSTRAP_MAX_BYTES=600000 "$NORMSWEEP" validate g3.yaml > g3val.log 2>&1 || { cat g3val.log >&2; fail "validate g3.yaml"; }
grep -q "862.9 KiB on 1 rank, 663.8 KiB on 2, " g3val.log ||
  { cat g3val.log >&2; fail "validate: not the per-rank figures counted by hand"; }
grep -q "bootstrap intervals: written on 3 ranks or more; no bootstrap intervals will be written on fewer" g3val.log ||
  { cat g3val.log >&2; fail "validate: not the smallest rank count counted by hand (3)"; }
"$NORMSWEEP" validate g3.yaml > g3val0.log 2>&1 || { cat g3val0.log >&2; fail "validate g3.yaml"; }
grep -q "bootstrap intervals: written on any number of ranks" g3val0.log ||
  { cat g3val0.log >&2; fail "validate: the default limit should allow every rank count"; }
NORMSWEEP_BOOTSTRAP_MAX_BYTES=much "$NORMSWEEP" validate g3.yaml > g3bad.log 2>&1
[ $? -eq 2 ] && grep -q "NORMSWEEP_BOOTSTRAP_MAX_BYTES is \"much\"" g3bad.log ||
  { cat g3bad.log >&2; fail "a bad NORMSWEEP_BOOTSTRAP_MAX_BYTES: not refused naming it"; }
for np in 1 3; do
  NORMSWEEP_BOOTSTRAP_MAX_BYTES=600000 run_np $np g3.yaml --output g3cap$np.nc --checkpoint-dir g3cck$np 2> g3clog$np ||
    { cat g3clog$np >&2; fail "capped: sweep -np $np"; }
done
grep -q "no bootstrap intervals: their per-shard values need 862.9 KiB on the largest of 1 rank, above the 585.9 KiB limit per rank; they are written from 3 ranks on" g3clog1 ||
  { cat g3clog1 >&2; fail "capped -np 1: the run does not say why it writes no intervals"; }
grep -q "^bootstrap_seconds: " g3clog1 && fail "capped -np 1: it computed intervals"
ncdump -h g3cap1.nc | grep -q -e "bootstrap_resamples" -e "_ci_low" && fail "capped -np 1: the file has intervals"
grep -q "^bootstrap_seconds: " g3clog3 || { cat g3clog3 >&2; fail "capped -np 3: no intervals computed"; }
g3_intervals g3cap3.nc > g3cap3.cdl || fail "ncdump g3cap3.nc"
cmp -s g3iv1.cdl g3cap3.cdl || { diff g3iv1.cdl g3cap3.cdl | head >&2; fail "capped -np 3: intervals differ from the uncapped -np 1 ones"; }
echo "ok: 3 groups at -np 1, 2, 3, 4 and under a 600000-byte limit at -np 3 (4 rounds): identical intervals; none at -np 1 under it"

# without samples: the report reads the file's intervals
sed 's/^keep_samples: true/keep_samples: false/' ks.yaml > nosamp.yaml
run_np 2 nosamp.yaml --output nosamp.nc --checkpoint-dir cks 2> logs || { cat logs >&2; fail "sweep without samples"; }
"$PYTHON_DEBIAN" "$top_srcdir/postprocess/report" nosamp.nc --out rep --format png --quiet > rep.log 2>&1 ||
  { cat rep.log >&2; fail "report of the run without samples"; }
"$PYTHON_DEBIAN" - rep/report.json <<'PYEOF' || fail "report.json of a run without samples has no intervals"
import json, math, sys
d = json.load(open(sys.argv[1]))
u = d["uncertainty"]
assert u["source"] == "file" and u["resamples"] == 2000, u
with_ci = [c["id"] for c in d["claims"]
           if c.get("ci_low") is not None and math.isfinite(c["ci_low"]) and c["ci_low"] <= c["estimate"] <= c["ci_high"]]
for cid in ("fig4_saturation", "thm2_upper", "thm2_lower", "fig5_inverse_T", "fig2a_plateau"):
    assert cid in with_ci, (cid, with_ci)
print("report.json without samples: intervals on", ", ".join(with_ci))
PYEOF
echo "ok: sweep_intervals"

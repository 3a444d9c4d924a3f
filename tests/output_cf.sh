#!/bin/sh
# output_cf: the sweep's NetCDF file follows CF-1.8 as xarray and the netCDF tools read it
# (tests/check_cf.py, the rules of docs/OUTPUT.md "CF": global attributes, UDUNITS units checked
# with udunits2, cell_methods / coordinates / ancillary_variables naming what the variable has,
# flag variables, the normalizer as a text coordinate, counts integers in xarray), with and
# without kept samples (without: no sample dimension or variable); check_cf fails on copies with
# each rule broken (units "nat", cell_methods "sample: mean", a value outside flag_values, a
# sample dimension left in a file without samples); `history` gains one line per run segment, naming the git commit of
# the binary, with the Slurm job, node list and restart count when the segment ran under Slurm;
# `nccopy -d 5` (and -k nc4) copies it with the same data; `--uncompressed` writes the same data
# without filters and says so in the `compression` attribute.
. "$top_srcdir/tests/sweep_common.sh"
make_sweep two
cd "$work" || fail "cd"
# two run segments: the first under a (simulated) Slurm job, then a --resume that writes the file
# again (removed first: a --resume of a finished run whose output is in place writes nothing)
SLURM_JOB_ID=4242 SLURM_JOB_NODELIST=node[01-02] SLURM_RESTART_COUNT=1 \
  "$NORMSWEEP" two.yaml --output o.nc --checkpoint-dir ck 2> log1 || { cat log1 >&2; fail "first segment"; }
rm o.nc
"$NORMSWEEP" two.yaml --output o.nc --checkpoint-dir ck --resume 2> log2 || { cat log2 >&2; fail "second segment"; }
"$PYTHON_DEBIAN" "$top_srcdir/tests/check_cf.py" o.nc || fail "CF checks"
# without kept samples: no sample dimension, sample, sample_shard or sample_row
sed 's/^keep_samples: true/keep_samples: false/' two.yaml > lean.yaml
grep -q '^keep_samples: false' lean.yaml || fail "two.yaml has no keep_samples line"
"$NORMSWEEP" lean.yaml --output lean.nc --checkpoint-dir cklean 2> loglean ||
  { cat loglean >&2; fail "keep_samples: false run"; }
"$PYTHON_DEBIAN" "$top_srcdir/tests/check_cf.py" lean.nc || fail "CF checks without samples"
ncdump -h lean.nc | grep -Eq '^	sample = |^	[a-z]+ [a-z_0-9]+\(.*sample\)|sample_shard|sample_row' &&
  fail "keep_samples: false, yet the sample dimension or its variables are in the file"
# each rule broken in a copy: check_cf names it
broken() { # NAME PYTHON-EDIT EXPECTED-MESSAGE
  cp "$4" "b_$1.nc" && "$PYTHON_DEBIAN" -c "import netCDF4, numpy as np
ds = netCDF4.Dataset('b_$1.nc', 'r+')
$2
ds.close()" || fail "edit $1"
  "$PYTHON_DEBIAN" "$top_srcdir/tests/check_cf.py" "b_$1.nc" > "cf_$1.txt" &&
    fail "check_cf passes a file with $1"
  grep -qF "$3" "cf_$1.txt" || { cat "cf_$1.txt" >&2; fail "check_cf does not name $1"; }
}
broken nat "ds['entropy_mean'].units = 'nat'" "units 'nat' (entropy_mean): not a UDUNITS dimensionless unit" o.nc
broken cell_methods "ds['distance_mean'].cell_methods = 'sample: mean'" \
  "distance_mean: cell_methods names 'sample', not a dimension of the variable" lean.nc
broken flag "v = ds['n_crit_random_status']; v.set_auto_mask(False); a = v[:]; a.flat[0] = 7; v[:] = a" \
  "n_crit_random_status: values [7] are not among flag_values" o.nc
broken sample "ds.createDimension('sample', 3); v = ds.createVariable('sample_row', 'i4', ('sample',)); v.long_name = 'x'" \
  "keep_samples: false, yet the file has sample" lean.nc
hist=$(ncdump -h o.nc | sed -n 's/^\t\t:history = "\(.*\)" ;$/\1/p')
[ "$(printf '%b' "$hist" | grep -c .)" -eq 2 ] || fail "history has not one line per segment: $hist"
printf '%b' "$hist" | head -n 1 | grep -q "slurm job 4242, nodes node\[01-02\], restart 1" ||
  fail "the Slurm segment is not recorded: $hist"
# each segment names the commit the binary was built from (segments of one journal computed by
# different commits can be told apart)
# (12 digits of the hash, "-dirty" kept)
commit=$("$NORMSWEEP" --version | sed -n '1s/.*(git \([^)]*\)).*/\1/p' |
  sed 's/^\([0-9a-f]\{12\}\)[0-9a-f]*/\1/')
[ -n "$commit" ] || fail "normsweep --version names no git commit"
[ "$(printf '%b' "$hist" | grep -c "normsweep [^ ]* (git $commit): ")" -eq 2 ] ||
  fail "history does not name the commit $commit on every line: $hist"
for opt in "-d 5" "-k nc4" "-d 1 -s"; do
  nccopy $opt o.nc copy.nc || fail "nccopy $opt"
  same_data o.nc copy.nc "nccopy $opt"
  rm -f copy.nc
done
# --uncompressed (a third segment, from the complete journal): the same data, no filter on any
# variable, and the `compression` attribute says so; the compressed file's numeric variables all
# carry shuffle + deflate level 1 (file sizes are not compared: in a file this small the chunk
# index and metadata outweigh what deflate saves)
"$NORMSWEEP" two.yaml --output u.nc --checkpoint-dir ck --resume --uncompressed 2> log3 ||
  { cat log3 >&2; fail "--uncompressed segment"; }
same_data o.nc u.nc "--uncompressed"
"$PYTHON_DEBIAN" - o.nc u.nc <<'PY' || fail "compression of o.nc / u.nc"
import sys, netCDF4
for path, want in ((sys.argv[1], "shuffle, deflate level 1"), (sys.argv[2], "none")):
    ds = netCDF4.Dataset(path)
    if ds.getncattr("compression") != want:
        sys.exit(f"{path}: compression {ds.getncattr('compression')!r}, expected {want!r}")
    n = 0
    for name, v in ds.variables.items():
        if v.dtype == str or v.dtype.kind == "S" or (v.ndim == 1 and v.dimensions[0] == name):
            continue
        f = v.filters()
        got = (bool(f.get("zlib")), bool(f.get("shuffle")), f.get("complevel", 0))
        expect = (True, True, 1) if want != "none" else (False, False, 0)
        if got != expect:
            sys.exit(f"{path}: {name} has filters {f}, expected zlib/shuffle/level {expect}")
        n += 1
    if n < 50:
        sys.exit(f"{path}: only {n} numeric data variables checked")
PY
echo "output_cf: ok"

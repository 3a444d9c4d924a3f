#!/bin/sh
# output_cf: the sweep's NetCDF file follows CF-1.8 as xarray and the netCDF tools read it
# (tests/check_cf.py: global attributes, the normalizer as an integer coordinate with a label,
# no units on index coordinates, cell_methods on every statistic, flag attributes on n_crit,
# counts integers in xarray); `history` gains one line per run segment, naming the git commit of
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
    if n < 100:
        sys.exit(f"{path}: only {n} numeric data variables checked")
PY
echo "output_cf: ok"

#!/bin/sh
# output_xarray: the sweep file as an xarray user reads it (issue 34; docs/OUTPUT.md): the five
# lines that open docs/OUTPUT.md, extracted and run exactly, on a run's file; tests/check_xarray.py
# (selection by the normalizer's name -- two ssmax named by their s --, quantiles by value, counts
# that sum to the rows the samples give, n_crit and its status from the p-values, a faceted plot);
# the report reads the file and the same data written in layout 1 (tests/layout1.py) to the same
# report.json, and refuses a file of an unknown output_layout with one line naming the file and
# the layout (exit 2); a model given as a directory is called by its base name, never "path"
# (model_used, model_given_as = "path", the title, validate's output, the report).
. "$top_srcdir/tests/sweep_common.sh"
make_sweep tiny
cd "$work" || fail "cd"
sed 's/^normalizer: .*/normalizer: [softmax, sparsemax, {name: ssmax, s: 0.43}, {name: ssmax, s: 2}]/' \
  tiny.yaml > four.yaml
grep -q 'name: ssmax, s: 2' four.yaml || fail "tiny.yaml has no normalizer line"
"$NORMSWEEP" four.yaml --output four.nc --checkpoint-dir ck 2> log || { cat log >&2; fail "sweep"; }

# the example, exactly as docs/OUTPUT.md opens (its first python block, five lines)
sed -n '/^```python$/,/^```$/p' "$top_srcdir/docs/OUTPUT.md" | sed '1d;$d' > example.py
sed -n '/^```python$/=' "$top_srcdir/docs/OUTPUT.md" | head -n 1 | grep -qx 3 ||
  fail "docs/OUTPUT.md does not open with the python example"
[ "$(sed -n '/^```python$/,/^```$/p' "$top_srcdir/docs/OUTPUT.md" | sed -n '1,/^```$/p' | wc -l)" -eq 7 ] ||
  fail "the example is not five lines"
sed -n '1,5p' example.py > example5.py
mkdir -p runs/quick && cp four.nc runs/quick/quick.nc
"$PYTHON_DEBIAN" example5.py > example.out 2>&1 || { cat example.out >&2; fail "the OUTPUT.md example"; }
grep -q "rows x T above min(1/(4T), sqrt 2)" example.out || { cat example.out >&2; fail "example output"; }
cat example.out

"$PYTHON_DEBIAN" "$top_srcdir/tests/check_xarray.py" four.nc || fail "xarray checks"
"$PYTHON_DEBIAN" -c "import xarray as xr, sys
names = [str(x) for x in xr.open_dataset('four.nc').normalizer.values]
sys.exit(0 if names == ['softmax', 'sparsemax', 'ssmax s=0.43', 'ssmax s=2'] else 'names %r' % names)" ||
  fail "normalizer names"

# a grid where every N is skipped at L = 2 (n_crit not computable there) and rows are skipped:
# the Jacobian counts still count every row once
sed -e 's/^  L: .*/  L: [2, 16]/' -e 's/^  N: .*/  N: [2, 4]/' -e 's/^normalizer: .*/normalizer: softmax/' \
  tiny.yaml > skip.yaml
"$NORMSWEEP" skip.yaml --output skip.nc --checkpoint-dir ckskip 2> logskip || { cat logskip >&2; fail "sweep skip"; }
"$PYTHON_DEBIAN" "$top_srcdir/tests/check_xarray.py" skip.nc || fail "xarray checks (skipped rows)"
"$PYTHON_DEBIAN" -c "import xarray as xr, sys
ds = xr.open_dataset('skip.nc')
st = ds.n_crit_expected_status
sys.exit(0 if (st == 2).any() and (st == 0).any() and int(ds.skipped_rows.sum()) > 0 else
         'not every outcome: status %s, skipped %d' % (sorted(set(st.values.ravel())), int(ds.skipped_rows.sum())))" ||
  fail "the skipped grid lacks an outcome"

# the report: layout 2 and the same data in layout 1 give the same report; another layout: one line
"$PYTHON_DEBIAN" "$top_srcdir/tests/layout1.py" four.nc old.nc || fail "layout 1 copy"
ncdump -h old.nc | grep -q "output_layout" && fail "the layout 1 copy has output_layout"
for f in four old; do
  "$PYTHON_DEBIAN" "$top_srcdir/postprocess/report" $f.nc --out rep_$f --resamples 1000 \
    > rep_$f.log 2>&1 || { cat rep_$f.log >&2; fail "report on $f.nc"; }
done
"$PYTHON_DEBIAN" - rep_four/report.json rep_old/report.json <<'PY' || fail "the two layouts' reports differ"
import json, re, sys
def load(p):
    r = json.load(open(p))
    r.pop("file")
    r["uncertainty"].pop("seconds")
    r["uncertainty"]["description"] = re.sub(r"computed in [0-9.]+ s", "", r["uncertainty"]["description"])
    return r
a, b = load(sys.argv[1]), load(sys.argv[2])
if a != b:
    sys.exit("report.json of layout 2 and layout 1 differ: %s" %
             [k for k in a if a.get(k) != b.get(k)])
PY
# a model given as a directory is called by the directory's base name, never "path": in the
# file (model_used, model_given_as, title), validate's output and the report
base=$(basename "$NS_TEST_MODEL_DIR")
"$PYTHON_DEBIAN" - four.nc "$base" <<'PY' || fail "the model's name in the file"
import sys, netCDF4
ds = netCDF4.Dataset(sys.argv[1])
got = (ds.model_used, ds.model_given_as, ds.title.rsplit(" on ", 1)[-1])
sys.exit(0 if got == (sys.argv[2], "path", sys.argv[2]) else "model_used, model_given_as, title: %r" % (got,))
PY
"$NORMSWEEP" validate four.yaml > val.txt 2>&1 || { cat val.txt >&2; fail "validate"; }
grep -q "^  model:       $base (" val.txt || { cat val.txt >&2; fail "validate does not call the model $base"; }
grep -q "path (" val.txt && { cat val.txt >&2; fail "validate calls an input 'path'"; }
"$PYTHON_DEBIAN" -c "import json, sys; m = json.load(open('rep_four/report.json'))['model']
sys.exit(0 if m['used'] == sys.argv[1] else 'report model %r' % m)" "$base" || fail "the report's model"
grep -q " on path" rep_four/report.html && fail "the report calls the model 'path'"

"$PYTHON_DEBIAN" -c "import netCDF4; ds = netCDF4.Dataset('four.nc', 'r+'); ds.output_layout = 3; ds.close()"
"$PYTHON_DEBIAN" "$top_srcdir/postprocess/report" four.nc --out rep3 > rep3.log 2>&1; rc=$?
[ $rc -eq 2 ] || { cat rep3.log >&2; fail "layout 3: exit $rc, expected 2"; }
[ "$(wc -l < rep3.log)" -eq 1 ] && grep -q "^report: four.nc: written in output layout 3; this report reads layouts 1 and 2" rep3.log ||
  { cat rep3.log >&2; fail "layout 3: not one line naming the file and the layout"; }
echo "output_xarray: ok"

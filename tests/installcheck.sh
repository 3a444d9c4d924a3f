#!/bin/sh
# installcheck: the installed normsweep, run from a directory outside the source and build trees
# (make installcheck; make distcheck runs it on its temporary prefix):
#  - every installed file is there: normsweep, normsweep-report, the man page, and in
#    $(pkgdatadir) the manifest, the sweeps, the Slurm script (executable) and every doc;
#  - the installed normsweep uses the installed manifest and finds the installed sweeps by name
#    (`normsweep validate ablation.yaml`); NORMSWEEP_DATADIR overrides the place;
#  - it runs a tiny sweep at -np 2 whose data are byte-identical to the build tree's normsweep's;
#  - the installed normsweep-report finds its installed package and reports on that sweep.
set -eu
: "${bindir:?}" "${pkgdatadir:?}" "${mandir:?}" "${NS_SWEEPS:?}" "${NS_DIST_DOCS:?}"
: "${NORMSWEEP:?}" "${MPIEXEC:?}"
ns="$bindir/normsweep"
work=$(mktemp -d "${TMPDIR:-/tmp}/ns_installcheck.XXXXXX")
trap 'rm -rf "$work"' EXIT
work=$(cd "$work" && pwd -P)
fail() { echo "FAIL: $*"; exit 1; }
cd "$work"
pkg=$(cd "$pkgdatadir" && pwd -P) || fail "no $pkgdatadir"

# ---- the installed files
[ -x "$ns" ] || fail "$ns not installed"
[ -x "$bindir/normsweep-report" ] || fail "normsweep-report not installed"
[ -f "$pkg/postprocess/normsweep_report/cli.py" ] || fail "the report's package not installed"
[ -f "$mandir/man1/normsweep.1" ] || fail "man page not installed"
[ -f "$pkg/assets/manifest.json" ] || fail "manifest not installed"
[ -x "$pkg/slurm/full_grid.sh" ] || fail "slurm/full_grid.sh not installed executable"
for f in $NS_SWEEPS $NS_DIST_DOCS; do
  [ -f "$pkg/$f" ] || fail "$f not installed in $pkg"
done
echo "ok 1 - installed: normsweep, normsweep-report, man page, manifest, $(echo $NS_SWEEPS | wc -w) sweeps, the Slurm script, $(echo $NS_DIST_DOCS | wc -w) docs"

# ---- the installed data found by the installed program
"$ns" --version | grep -q '^normsweep [0-9]' || fail "--version"
"$bindir/normsweep-report" --help > /dev/null || fail "normsweep-report --help"
"$ns" assets list > list.txt 2>&1 || { cat list.txt; fail "assets list"; }
grep -q "^manifest: *$pkg/assets/manifest.json\$" list.txt || { cat list.txt; fail "not the installed manifest"; }
"$ns" validate --schema-only ablation.yaml > v.txt 2>&1 || { cat v.txt; fail "validate ablation.yaml"; }
grep -q "^$pkg/sweeps/ablation.yaml: valid\$" v.txt || { cat v.txt; fail "ablation.yaml not found in $pkg/sweeps"; }
"$ns" validate --schema-only sweeps/normalizers.yaml > v.txt 2>&1 || { cat v.txt; fail "validate sweeps/normalizers.yaml"; }
grep -q "^$pkg/sweeps/normalizers.yaml: valid\$" v.txt || { cat v.txt; fail "sweeps/normalizers.yaml not found"; }
rc=0; NORMSWEEP_DATADIR="$work/nowhere" "$ns" validate --schema-only ablation.yaml > v.txt 2>&1 || rc=$?
[ "$rc" -eq 2 ] || { cat v.txt; fail "NORMSWEEP_DATADIR=nowhere: exit $rc, not 2"; }
mkdir -p other/sweeps && printf 'model: gpt2-standin\n' > other/sweeps/mine.yaml
rc=0; NORMSWEEP_DATADIR="$work/other" "$ns" validate --schema-only mine.yaml > v.txt 2>&1 || rc=$?
grep -q "^$work/other/sweeps/mine.yaml" v.txt || { cat v.txt; fail "NORMSWEEP_DATADIR not used"; }
echo "ok 2 - the installed normsweep uses the installed manifest and sweeps; NORMSWEEP_DATADIR overrides"

# ---- a tiny sweep, installed program versus build tree's
cat > tiny.yaml <<'YAML'
model: gpt2-standin
tokenizer: tokenizer
corpus: war_and_peace
strip_gutenberg: true
shards: {count: 4, L_max: 64}
grid: {L: [32, 64], N: [1, 4, 16], T: [0.1, 1], eps: [0.1], layers: all, heads: all}
normalizer: softmax
rows: 2
seed: 0
YAML
"$MPIEXEC" --oversubscribe -np 2 "$ns" --output inst.nc --checkpoint-dir inst.ckpt tiny.yaml \
  2> inst.log || { cat inst.log; fail "installed normsweep on tiny.yaml"; }
"$MPIEXEC" --oversubscribe -np 2 "$NORMSWEEP" --output build.nc --checkpoint-dir build.ckpt \
  tiny.yaml 2> build.log || { cat build.log; fail "build tree's normsweep on tiny.yaml"; }
data() { ncdump -p 9,17 "$1" | sed -e '1d' -e '/^\/\/ global attributes:/,/^data:/d'; }
data inst.nc > inst.cdl && data build.nc > build.cdl || fail "ncdump"
cmp -s inst.cdl build.cdl || fail "the installed normsweep's data differ from the build tree's"
ncdump -h inst.nc | grep -q "sweep_file = \"$work/tiny.yaml\"\|sweep_file = \"tiny.yaml\"" ||
  fail "sweep_file not recorded: $(ncdump -h inst.nc | grep sweep_file)"
echo "ok 3 - the installed normsweep runs a tiny sweep at -np 2: same data as the build tree's"

# ---- the installed report, with its installed package (not the source tree's)
"$bindir/normsweep-report" inst.nc --out rep --format png --quiet > rep.log 2>&1 ||
  { cat rep.log; fail "normsweep-report on the tiny sweep"; }
[ -s rep/report.html ] && [ -s rep/report.json ] || fail "normsweep-report wrote no report"
# the reduction writes bootstrap intervals (issue 33): the installed report must read them from
# the file, and find every statistic of the catalogue there (the KS-based ones included)
grep -q "^report: intervals: the intervals the reduction wrote into the file" rep.log ||
  { cat rep.log; fail "normsweep-report: does not say it used the file's intervals"; }
grep -q "without an interval in the file" rep.log &&
  { cat rep.log; fail "normsweep-report: statistics without an interval in the file"; }
echo "ok 4 - the installed normsweep-report reports on it"

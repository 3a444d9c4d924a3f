#!/bin/sh
# report_files: the report writes every file through a temporary renamed into place
# (postprocess/normsweep_report/files.py; docs/REPORT.md, exit status):
#  (1) no temporary left; a killed report's temporaries removed and named by the next report, a
#      live process's and other files left alone; SIGTERM raised inside the third file's write:
#      exit 3, the files before it new, that one and the later ones as before, no temporary
#      (check_report_files.py: deterministic, the signal comes from inside the write);
#  (2) a full disk (a tmpfs with 96 kB left, root only: skipped otherwise) mid-report: exit 1, one
#      line naming the cause, every file either as before or new and complete, no temporary.
set -eu
: "${top_srcdir:?}" "${top_builddir:?}" "${PYTHON_DEBIAN:?}"
work=$(mktemp -d "$top_builddir/report-files.XXXXXX")
mounted=""
trap '[ -z "$mounted" ] || umount "$mounted" 2> /dev/null; rm -rf "$work"' EXIT
fail() { echo "FAIL: $*"; exit 1; }
pp="$top_srcdir/postprocess"

"$PYTHON_DEBIAN" "$top_srcdir/tests/check_report_files.py" "$pp" "$work" || fail "check_report_files"
echo "ok 1 - temporaries: none left, stale ones removed, SIGTERM mid-write leaves whole files"

mkdir "$work/full"
if ! mount -t tmpfs -o size=4m tmpfs "$work/full" 2> /dev/null; then
  echo "ok 2 # SKIP a full disk: cannot mount a tmpfs (not root?)"
  exit 0
fi
mounted="$work/full"
out="$work/full/out"
"$PYTHON_DEBIAN" "$top_srcdir/postprocess/report" "$work/files.nc" --out "$out" --resamples 1000 \
  --quiet --format png > "$work/log1" 2>&1 || { cat "$work/log1"; fail "report onto the tmpfs"; }
cp -r "$out" "$work/before"
head -c 98304 /dev/zero > "$work/full/reserve"
head -c 8000000 /dev/zero > "$work/full/filler" 2> /dev/null || :   # fills the rest: ENOSPC
rm "$work/full/reserve"                                          # 96 kB free again
rc=0
"$PYTHON_DEBIAN" "$top_srcdir/postprocess/report" "$work/files.nc" --out "$out" --resamples 1000 \
  --quiet --format png > "$work/log2" 2>&1 || rc=$?
[ "$rc" -eq 1 ] || { cat "$work/log2"; fail "a full disk: exit $rc, expected 1"; }
grep -q "^report: $out/[a-z0-9_.]*: No space left on device$" "$work/log2" ||
  { cat "$work/log2"; fail "a full disk: no line naming the cause"; }
ls "$out" | grep -q '\.tmp\.' && fail "a full disk: temporaries left: $(ls "$out")"
"$PYTHON_DEBIAN" - "$work/before" "$out" <<'PYEOF' || fail "a full disk: a file is neither as before nor complete"
import json, os, sys
before, out = sys.argv[1], sys.argv[2]
new = 0
assert sorted(os.listdir(before)) == sorted(os.listdir(out)), (os.listdir(before), os.listdir(out))
for name in os.listdir(out):
    a = open(os.path.join(before, name), "rb").read()
    b = open(os.path.join(out, name), "rb").read()
    if a == b:
        continue
    new += 1
    if name.endswith(".png"):
        assert b.startswith(b"\x89PNG") and b.endswith(b"IEND\xaeB`\x82"), name
    elif name.endswith(".json"):
        json.loads(b)
    elif name.endswith(".html"):
        assert b.rstrip().endswith(b"</html>"), name
print("report_files: a full disk: %d file(s) new and complete, %d byte-identical to before"
      % (new, len(os.listdir(out)) - new))
PYEOF
echo "ok 2 - a full disk mid-report: exit 1, every file as before or complete, no temporary"

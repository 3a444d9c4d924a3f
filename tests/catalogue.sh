#!/bin/sh
# catalogue: runs every bad-input case of tests/catalogue/*.cat and asserts, for each, the exact
# stderr (whole lines, temp paths through placeholders), the exact exit status, an empty stdout,
# and that nothing in the case's directory (outputs, journals, checkpoint dirs) was created,
# changed or removed, and no temporary file was left in TMPDIR. Format: tests/catalogue/README.
# Usage (outside make check): tests/catalogue.sh [-v] [CASE-NAME-PATTERN]
set -u
: "${NORMSWEEP:?run through make check}" "${top_srcdir:?}" "${NS_TEST_TOKENIZER_DIR:?}"
: "${MPIEXEC:=mpiexec}"
verbose=0
[ "${1:-}" = "-v" ] && { verbose=1; shift; }
only=${1:-}

cat_dir=$top_srcdir/tests/catalogue
work=$(mktemp -d "${TMPDIR:-/tmp}/ns_catalogue.XXXXXX") || exit 1
work=$(cd "$work" && pwd -P)
trap 'chmod -R u+w "$work" 2>/dev/null; rm -rf "$work"' EXIT
trap 'exit 1' INT TERM HUP PIPE
SRC=$(cd "$top_srcdir" && pwd -P)
TOK=$NS_TEST_TOKENIZER_DIR
BASE=$work/base
NORMSWEEP_OFFLINE=1; export NORMSWEEP_OFFLINE   # never try the network from the catalogue
export NORMSWEEP MPIEXEC TOK BASE SRC cat_dir
OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_rmaps_base_oversubscribe=1
export OMPI_ALLOW_RUN_AS_ROOT OMPI_ALLOW_RUN_AS_ROOT_CONFIRM OMPI_MCA_rmaps_base_oversubscribe
start=$(date +%s)

# ---- helpers available to the cases' setup: and run: lines ---------------------------------
cat > "$work/helpers.sh" <<'EOF'
ns() { "$NORMSWEEP" "$@"; }
# (--quiet: without the launcher's own multi-line banner about ranks that exited non-zero)
ns_np2() { "$MPIEXEC" --quiet --oversubscribe -np 2 "$NORMSWEEP" "$@"; }
# model DIR: a copy of the tiny mkmodel model (2 layers, 2 heads, n_embd 8, n_ctx 64, vocab 50257)
model() { cp -r "$BASE/m0" "$1"; }
# poke FILE OFFSET PRINTF-STRING: overwrite bytes in place
poke() { printf "$3" | dd of="$1" bs=1 seek="$2" conv=notrunc status=none; }
# st_edit FILE PYTHON: rewrite a safetensors file: the code sees its header h (a dict, in file
# order) and data d (bytes) and may change both, or set pre (bytes written before the header)
st_edit() {
  /usr/bin/python3 - "$1" "$2" <<'PY'
import json, struct, sys
p, code = sys.argv[1], sys.argv[2]
b = open(p, "rb").read()
n = struct.unpack("<Q", b[:8])[0]
h, d, pre = json.loads(b[8:8 + n]), b[8 + n:], b""
exec(code)
t = pre + json.dumps(h, separators=(",", ":")).encode()
t += b" " * ((8 - len(t) % 8) % 8)
open(p, "wb").write(struct.pack("<Q", len(t)) + t + d)
PY
}
# tokdir DIR: a copy of the GPT-2 tokenizer (encoder.json + vocab.bpe)
tokdir() { mkdir -p "$1" && cp "$TOK/encoder.json" "$TOK/vocab.bpe" "$1/"; }
# corpus FILE: the catalogue's small text (200 sentences, 2001 GPT-2 tokens)
corpus() { cp "$BASE/c.txt" "$1"; }
# sweep FILE: tests/catalogue/base.yaml.in with model m, tokenizer $TOK, corpus c.txt (m and
# c.txt are made when absent: a link to the tiny model, a copy of the small text)
sweep() {
  [ -e m ] || ln -s "$BASE/m0" m
  [ -e c.txt ] || corpus c.txt
  sed -e "s|@MODEL@|m|" -e "s|@TOK@|$TOK|" -e "s|@CORPUS@|c.txt|" "$cat_dir/base.yaml.in" > "$1"
}
EOF

# ---- shared fixtures: the tiny model, the small text, a finished tiny run ------------------
mkdir -p "$BASE/run" "$work/tmp" "$work/c"
"$NORMSWEEP" mkmodel --layers 2 --heads 2 --embd 8 --ctx 64 --vocab 50257 --out "$BASE/m0" \
  > /dev/null || { echo "FAIL: mkmodel of the catalogue's tiny model"; exit 1; }
i=0
while [ $i -lt 200 ]; do printf 'The quick brown fox jumps over the lazy dog. '; i=$((i + 1)); done \
  > "$BASE/c.txt"
( cd "$BASE/run" && . "$work/helpers.sh" && sweep s.yaml &&
  ns run s.yaml --output run.nc --checkpoint-dir checkpoint > /dev/null 2> run.log ) ||
  { cat "$BASE/run/run.log"; echo "FAIL: the catalogue's tiny run"; exit 1; }

# ---- parse the catalogue: one directory per case under $work/cases -------------------------
mkdir "$work/cases"
awk -v out="$work/cases" '
  function fail(msg) { printf "%s:%d: %s\n", FILENAME, FNR, msg > "/dev/stderr"; bad = 1 }
  /^#/ || /^[ \t]*$/ { next }
  /^case: / {
    name = substr($0, 7)
    if (name !~ /^[a-z0-9][a-z0-9-]*$/) { fail("bad case name \"" name "\""); next }
    if (name in seen) { fail("duplicate case " name); next }
    seen[name] = 1; dir = out "/" name; system("mkdir \"" dir "\"")
    printf "%s\n", FILENAME > (dir "/file"); close(dir "/file"); next
  }
  /^(what|setup|run|exit|stderr|xfail): / || /^stderr:$/ {
    if (dir == "") { fail("field before the first case:"); next }
    k = $0; sub(/:.*/, "", k); v = $0; sub(/^[a-z]+: ?/, "", v)
    printf "%s\n", v >> (dir "/" k); close(dir "/" k); next
  }
  { fail("unrecognised line: " $0) }
  END { exit bad }' "$cat_dir"/*.cat || { echo "FAIL: the catalogue does not parse"; exit 1; }

# snapshot DIR: every entry (type, path, size, mode, mtime, link target) and every file's sha256
snapshot() {
  ( cd "$1" && find . -printf '%y %p %s %m %T@ %l\n' | LC_ALL=C sort &&
    find . -type f -exec sha256sum {} + | LC_ALL=C sort -k 2 )
}
# normalise FILE: temp and source paths replaced by placeholders
normalise() {
  sed -e "s|$W|@W@|g" -e "s|$BASE|@BASE@|g" -e "s|$TOK|@TOK@|g" -e "s|$SRC|@SRC@|g" \
      -e "s|$top_srcdir|@SRC@|g" \
      -e "s|this machine's [0-9.]* [KMGTPE]*i*B of memory|this machine's @MEM@ of memory|" "$1"
}

total=0 passed=0 failed=0 xfailed=0 xpassed=0
failures= xfail_list= xpass_list=
for cdir in "$work"/cases/*; do
  name=${cdir##*/}
  [ -n "$only" ] && case $name in $only) ;; *) continue ;; esac
  total=$((total + 1))
  problems=
  problem() { problems="$problems
    $*"; }
  for k in what run exit stderr; do
    [ -f "$cdir/$k" ] || problem "catalogue entry lacks '$k:'"
  done
  W=$work/c/$name
  mkdir "$W"
  if [ -z "$problems" ] && [ -f "$cdir/setup" ]; then
    ( cd "$W" && . "$work/helpers.sh" && set -e && . "$cdir/setup" ) > "$cdir/setup.log" 2>&1 ||
      problem "setup failed: $(cat "$cdir/setup.log")"
  fi
  if [ -z "$problems" ]; then
    snapshot "$W" > "$cdir/before"
    TMPDIR=$work/tmp timeout 60 sh -c '. "$1"; cd "$2" && eval "$3"' sh "$work/helpers.sh" "$W" \
      "$(cat "$cdir/run")" > "$cdir/stdout" 2> "$cdir/stderr.raw"
    rc=$?
    snapshot "$W" > "$cdir/after"
    normalise "$cdir/stderr.raw" > "$cdir/got"
    want=$(cat "$cdir/exit")
    if [ $rc -eq 124 ]; then problem "timed out after 60 s"
    elif [ $rc -ge 128 ]; then problem "killed by signal $((rc - 128)) (crash)"
    elif [ $rc -ne "$want" ]; then problem "exit $rc, expected $want"
    fi
    if ! cmp -s "$cdir/got" "$cdir/stderr"; then
      problem "stderr differs (- expected, + got):
$(diff "$cdir/stderr" "$cdir/got" | sed -n 's/^</      -/p; s/^>/      +/p')"
    fi
    [ -s "$cdir/stdout" ] && problem "unexpected stdout: $(head -c 300 "$cdir/stdout")"
    if ! cmp -s "$cdir/before" "$cdir/after"; then
      problem "files created, changed or removed:
$(diff "$cdir/before" "$cdir/after" | sed -n 's/^</      before:/p; s/^>/      after: /p' | head -20)"
    fi
    # (Open MPI's session directories ompi.* are the launcher's, removed asynchronously)
    left=$(ls -A "$work/tmp" | grep -v '^ompi\.')
    [ -n "$left" ] && problem "left in TMPDIR: $left"
    rm -rf "$work/tmp"/* "$work/tmp"/.[!.]* 2>/dev/null
  fi
  file=$(basename "$(cat "$cdir/file")")
  if [ -f "$cdir/xfail" ]; then
    if [ -n "$problems" ]; then
      xfailed=$((xfailed + 1)); xfail_list="$xfail_list
  $name ($file): $(cat "$cdir/xfail")"
      echo "XFAIL: $name"
      [ $verbose -eq 1 ] && echo "$problems"
    else
      xpassed=$((xpassed + 1)); xpass_list="$xpass_list $name"
      echo "XPASS: $name (fixed? remove its xfail: line)"
    fi
  elif [ -n "$problems" ]; then
    failed=$((failed + 1)); failures="$failures $name"
    echo "FAIL: $name ($file): $(cat "$cdir/what")$problems"
  else
    passed=$((passed + 1))
    [ $verbose -eq 1 ] && echo "PASS: $name"
  fi
  rm -rf "$W"
done

echo "catalogue: $total cases, $passed passed, $failed failed, $xfailed expected failures" \
  "(known bugs), $xpassed unexpectedly passed; $(( $(date +%s) - start )) s"
if [ -n "$xfail_list" ]; then
  echo "EXPECTED TO FAIL (known bugs, see the xfail: lines in tests/catalogue/*.cat):$xfail_list"
fi
[ -z "$only" ] && [ $total -lt 30 ] && { echo "FAIL: only $total cases"; exit 1; }
[ $failed -eq 0 ] && [ $xpassed -eq 0 ] || { echo "FAIL:$failures$xpass_list"; exit 1; }
exit 0

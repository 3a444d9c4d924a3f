#!/bin/sh
# structure_selftest: tests/check_structure.py finds exactly the breaches planted in the fixture
# trees of tests/data/structure/ and none in the clean one: circles through calls only (3 units),
# through an include and a call, and through a header's inline function; a facade header that
# makes no circle; an arrow against the modules table, a foreign private header, a library and a
# single text outside their homes, a .c over 800 lines and a function over 150 (generated here),
# printing, exit and an unused public function; the known list excusing a listed breach and
# failing on lines it no longer finds (and saying when a known circle grew); a broken modules
# table.
set -u
: "${top_srcdir:?}" "${PYTHON_DEBIAN:=/usr/bin/python3}"
fixtures="$top_srcdir/tests/data/structure"
check="$top_srcdir/tests/check_structure.py"
work=$(mktemp -d "${TMPDIR:-/tmp}/ns_structure.XXXXXX") || exit 99
trap 'rm -rf "$work"' EXIT
fail() { echo "FAIL: $*"; exit 1; }

# expect NAME STATUS EXPECTED_FILE ARGS...: the checker's --keys output and exit status
expect() {
  name=$1 want_rc=$2 want=$3; shift 3
  "$PYTHON_DEBIAN" "$check" --keys "$@" > "$work/$name.out" 2>&1
  rc=$?
  LC_ALL=C sort "$work/$name.out" > "$work/$name.got"
  LC_ALL=C sort "$want" > "$work/$name.sorted"
  if ! cmp -s "$work/$name.got" "$work/$name.sorted"; then
    diff "$work/$name.sorted" "$work/$name.got"
    fail "$name: the breaches found differ from the planted ones (< planted, > found)"
  fi
  [ "$rc" = "$want_rc" ] || fail "$name: exit status $rc, expected $want_rc"
  echo "ok - $name: $(wc -l < "$work/$name.sorted") line(s) as planted, exit $rc"
}

# 1. the clean tree: nothing
: > "$work/none"
expect good 0 "$work/none" "$fixtures/good/src"

# 2. the bad tree (tests/data/structure/bad/ holds what differs from good/, laid over a copy of
# it), with a generated 801-line .c holding a 160-line function
# (made writable: a distcheck's source tree is read-only, and cp keeps the modes)
cp -R "$fixtures/good" "$work/bad" && chmod -R u+w "$work/bad" &&
  cp -R "$fixtures/bad/." "$work/bad" && chmod -R u+w "$work/bad" || exit 99
{
  echo "/* ns_big: written by structure_selftest.sh (over 800 lines, one function over 150). */"
  echo "int ns_big_count(int n);"
  echo "int ns_big_count(int n)"
  echo "{"
  i=0; while [ $i -lt 158 ]; do echo "    n += $i;"; i=$((i + 1)); done
  echo "}"
  i=0; while [ $i -lt 638 ]; do echo "/* filler $i */"; i=$((i + 1)); done
} > "$work/bad/src/store/ns_big.c"
[ "$(wc -l < "$work/bad/src/store/ns_big.c")" = 801 ] || fail "ns_big.c is not 801 lines"
cat > "$work/bad.want" <<'END'
src/calc: circle among ns_a, ns_b, ns_c
src/calc: circle among ns_m, ns_n
src/calc: circle among ns_p, ns_q
src/calc/ns_nc.c: NetCDF, `#include <netcdf.h>`, outside its home store
src/cli/ns_cli.c: the bound, `ns_bound(`, outside its home calc/ns_bound.c, calc/ns_calc.h, store
src/cli/ns_cli.h: public ns_cli_unused() is never used by the program
src/store/ns_big.c: more than 800 lines
src/store/ns_big.c:4: a function of 160 lines (at most 150)
src/store/ns_store.c includes calc/ns_a_internal.h, a private header of calc
src/store/ns_store.c includes cli/ns_cli.h: store may not include cli
src/store/ns_store.c: the ISO 8601 time format, `"%Y-%m-%dT%H:%M:%SZ"`, outside its home common/ns_time.c
src/store/ns_store.c:21: process control outside src/cli: exit(2);
src/store/ns_store.c:22: prints outside src/cli: fprintf(stderr, "", when);
END
expect bad 1 "$work/bad.want" "$work/bad/src"

# 3. a known list: a listed breach is excused; a line no longer found fails, be it a circle that
# grew (ns_c joined, said so) or a breach of a rule the list cannot excuse (printing, said so)
cat > "$work/known.txt" <<'END'
# comment lines and blank lines are ignored

src/store/ns_store.c includes cli/ns_cli.h: store may not include cli
src/calc: circle among ns_a, ns_b
src/store/ns_store.c:22: prints outside src/cli: fprintf(stderr, "", when);
END
grep -v ': store may not include cli$' "$work/bad.want" > "$work/known.want"
echo 'fixed: src/calc: circle among ns_a, ns_b' >> "$work/known.want"
echo 'fixed: src/store/ns_store.c:22: prints outside src/cli: fprintf(stderr, "", when);' \
  >> "$work/known.want"
expect known 1 "$work/known.want" --known "$work/known.txt" "$work/bad/src"
"$PYTHON_DEBIAN" "$check" --known "$work/known.txt" "$work/bad/src" > "$work/known.long" 2>&1
grown="^changed: the known 'src/calc: circle among ns_a, ns_b' now reads"
grown="$grown 'src/calc: circle among ns_a, ns_b, ns_c': ns_c joined it"
grep -q "$grown" "$work/known.long" || { cat "$work/known.long"; fail "the grown circle is not explained"; }
grep -q "ns_c -> ns_a: ns_c.c calls ns_a_step" "$work/known.long" ||
  fail "the circle's edges are not listed"
grep -q "^not excused: 'src/store/ns_store.c:22: prints outside src/cli: .*' is a breach of rule 2" \
  "$work/known.long" || fail "a listed breach of rule 2 is not refused"

# 4. every breach of the bad tree listed: nothing new, nothing stale, exit 0
grep -v -e ':[0-9]*: ' -e 'public .* never used' "$work/bad.want" > "$work/all.txt"
grep -e ':[0-9]*: ' -e 'public .* never used' "$work/bad.want" > "$work/rest.want"
expect listed 1 "$work/rest.want" --known "$work/all.txt" "$work/bad/src"
# ... and with the breaches the list cannot excuse mended, the rest listed: exit 0
rm -f "$work/bad/src/store/ns_big.c"
sed -i -e '/if (path\[0\] == 0)/d' -e '/exit(2);/d' -e '/fprintf(stderr/d' \
  "$work/bad/src/store/ns_store.c"
sed -i -e 's|^#include "calc/ns_q.h"|#include "calc/ns_q.h"\n#include "cli/ns_cli.h"|' \
  -e 's|ns_q_count(argc))|ns_q_count(argc) + ns_cli_unused())|' "$work/bad/src/cli/main.c"
grep -v -e ':[0-9]*: ' -e 'public .* never used' -e 'ns_big' "$work/bad.want" > "$work/left.txt"
expect all_listed 0 "$work/none" --known "$work/left.txt" "$work/bad/src"

# 5. a broken modules table
cat > "$work/table.want" <<'END'
docs/STRUCTURE.md: cli may include nosuch, a module the table has no row for
docs/STRUCTURE.md: no homes table (between <!-- homes --> and <!-- /homes -->)
docs/STRUCTURE.md: src/extra/ has no row in the modules table (add one: its job and the modules it may include)
docs/STRUCTURE.md: the modules table has a circle among calc, store
END
expect table 1 "$work/table.want" "$fixtures/table/src"

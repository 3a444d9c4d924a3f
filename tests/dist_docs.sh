#!/bin/sh
# dist_docs: every file of docs/ is in NS_DOCS (Makefile.am), the list `make dist` ships and
# `make install` installs, and nothing listed is missing (README links to all of them).
set -eu
: "${top_srcdir:?}" "${NS_DIST_DOCS:?run through make check}"
have=$(cd "$top_srcdir" && ls -A docs | sed 's|^|docs/|' | sort)
listed=$(printf '%s\n' $NS_DIST_DOCS | sort)
if [ "$have" != "$listed" ]; then
  echo "FAIL: docs/ and NS_DOCS in Makefile.am differ (< in docs/ only, > listed only):"
  printf '%s\n' "$have" > dist_docs.have.tmp
  printf '%s\n' "$listed" > dist_docs.listed.tmp
  diff dist_docs.have.tmp dist_docs.listed.tmp | grep '^[<>]' || true
  rm -f dist_docs.have.tmp dist_docs.listed.tmp
  exit 1
fi
# Every docs/*.md the README links to exists (and so is shipped).
for d in $(grep -o 'docs/[A-Za-z0-9_.-]*\.md' "$top_srcdir/README.md" | sort -u); do
  [ -f "$top_srcdir/$d" ] || { echo "FAIL: README links to $d, which does not exist"; exit 1; }
done
echo "ok - the $(echo "$listed" | wc -l) files of docs/ are all in NS_DOCS"

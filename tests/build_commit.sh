#!/bin/sh
# build_commit: the binary names the source it was compiled from, not the one it was configured
# from. `normsweep --version` shows what scripts/git-commit says of the source tree now (make
# reruns it before every build, so a commit or an edit since configure shows); and
# scripts/git-commit itself, in throw-away trees:
#  - a git work tree: its HEAD commit; "-dirty" when a tracked file differs from it, not for an
#    untracked file; back to the bare hash once the change is committed;
#  - a directory inside a work tree that is not its top (a release tarball unpacked in a
#    checkout, as distcheck does): the tarball's .git-commit, never the outer tree's HEAD;
#  - no git and no .git-commit: "unknown".
# The git cases need git (skipped with a note where there is none, e.g. a minimal chroot).
# Also configure's summary (config.log) names the data directory as the path it is
# (PREFIX/share/normsweep), not as make's unexpanded ${datarootdir}.
set -eu
: "${NORMSWEEP:?run through make check}" "${top_srcdir:?}" "${top_builddir:?}"
tmp=$(mktemp -d "${TMPDIR:-/tmp}/ns_build_commit.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
fail=0
bad() { echo "FAIL: $*"; fail=1; }
gc() { sh "$top_srcdir/scripts/git-commit" "$1"; }

mine=$("$NORMSWEEP" --version | sed -n '1s/.*(git \([^)]*\)).*/\1/p')
tree=$(gc "$top_srcdir")
[ "$mine" = "$tree" ] || bad "normsweep --version says git '$mine', the source tree is '$tree'"
echo "binary and source tree: $mine"

mkdir "$tmp/plain"
[ "$(gc "$tmp/plain")" = unknown ] || bad "no git, no .git-commit: '$(gc "$tmp/plain")'"
echo 0123456789abcdef0123456789abcdef01234567 > "$tmp/plain/.git-commit"
[ "$(gc "$tmp/plain")" = 0123456789abcdef0123456789abcdef01234567 ] ||
  bad "a tarball's .git-commit is not used: '$(gc "$tmp/plain")'"

if command -v git > /dev/null 2>&1; then
  r=$tmp/repo
  git init -q "$r"
  git -C "$r" config user.email t@example.org
  git -C "$r" config user.name test
  echo a > "$r/f"
  git -C "$r" add f
  git -C "$r" commit -q -m one
  h1=$(git -C "$r" rev-parse HEAD)
  [ "$(gc "$r")" = "$h1" ] || bad "clean tree: '$(gc "$r")', HEAD $h1"
  echo new > "$r/untracked"
  [ "$(gc "$r")" = "$h1" ] || bad "an untracked file made the tree '$(gc "$r")'"
  echo b > "$r/f"
  [ "$(gc "$r")" = "$h1-dirty" ] || bad "edited tracked file: '$(gc "$r")', want $h1-dirty"
  git -C "$r" commit -q -a -m two
  h2=$(git -C "$r" rev-parse HEAD)
  [ "$h2" != "$h1" ] && [ "$(gc "$r")" = "$h2" ] || bad "after the commit: '$(gc "$r")', HEAD $h2"
  mkdir "$r/normsweep-0.1.0"
  [ "$(gc "$r/normsweep-0.1.0")" = unknown ] ||
    bad "a directory inside a work tree took its HEAD: '$(gc "$r/normsweep-0.1.0")'"
  echo "$h1" > "$r/normsweep-0.1.0/.git-commit"
  [ "$(gc "$r/normsweep-0.1.0")" = "$h1" ] ||
    bad "a tarball inside a work tree: '$(gc "$r/normsweep-0.1.0")', want its .git-commit $h1"
else
  echo "note: no git here; the work-tree cases were not run"
fi

summary=$(sed -n 's/^  prefix: *\(.*\)$/\1/p' "$top_builddir/config.log" | tail -n 1)
data=${summary#* (data: }; data=${data%)}
case "$data" in
  *'$'*|[!/]*|"$summary") bad "configure's summary: 'prefix: $summary', want the data directory as an absolute path" ;;
esac
exit $fail

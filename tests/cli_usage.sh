#!/bin/sh
# cli_usage: the help texts agree with each other and with the man page.
#  - `normsweep --help` lists --version and every command; `--version` names the version;
#  - every command's --help goes to stdout with status 0 and has the same shape: a first line
#    "Usage: normsweep COMMAND", an "Options:" section with "-h, --help  show this help", and an
#    "Exit status:" line;
#  - every option in a command's usage lines is in that command's SYNOPSIS in man/normsweep.1,
#    and every option there is in the usage lines;
#  - every option in a command's usage lines is described in its Options section, and every
#    option described there is in the usage lines unless they say [OPTIONS];
#  - `normsweep --help` opens with run's usage lines, word for word;
#  - the environment that changes what run and validate fetch (NORMSWEEP_OFFLINE) is named in
#    both --help texts and in the man page's ENVIRONMENT.
set -eu
: "${NORMSWEEP:?run through make check}" "${top_srcdir:?}"
tmp=$(mktemp -d "${TMPDIR:-/tmp}/ns_cli_usage.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
fail=0
bad() { echo "FAIL: $*"; fail=1; }

"$NORMSWEEP" --help > "$tmp/help" || bad "normsweep --help exited $?"
grep -q -- '--version' "$tmp/help" || bad "--help does not list --version"
grep -q '^Usage: normsweep ' "$tmp/help" || bad "--help: no Usage line"
grep -q 'SIGUSR1' "$tmp/help" || bad "--help: exit 3 does not name SIGUSR1"
"$NORMSWEEP" --version > "$tmp/version" || bad "--version exited $?"
grep -q "^normsweep $(sed -n 's/.*AC_INIT(\[normsweep\], \[\([^]]*\)\].*/\1/p' "$top_srcdir/configure.ac") (git " \
  "$tmp/version" || bad "--version: $(head -n 1 "$tmp/version")"
cmds=$(sed -n '/^Commands:/,/^$/p' "$tmp/help" | sed -n 's/^  \([a-z][a-z-]*\) .*/\1/p')
[ "$(echo $cmds | wc -w)" -ge 8 ] || bad "--help lists only: $cmds"

# The man page's SYNOPSIS as plain text, one line per command (.br separates them).
sed -n '/^\.SH SYNOPSIS/,/^\.SH /p' "$top_srcdir/man/normsweep.1" | sed -e '1d' -e '$d' |
  sed -e 's/\\f[BIRP]//g' -e 's/\\-/-/g' -e 's/^\.B //' | tr '\n' ' ' | sed 's/\.br/\n/g' \
  > "$tmp/synopsis"
options() { grep -o -- '--*[a-zA-Z][a-zA-Z-]*' | grep -v -- '^-[a-z]*[A-Z]' | sort -u; }

for c in $cmds; do
  if ! "$NORMSWEEP" "$c" --help > "$tmp/h" 2> "$tmp/e"; then bad "$c --help exited non-zero"; continue; fi
  [ -s "$tmp/e" ] && bad "$c --help wrote to stderr"
  first=$(head -n 1 "$tmp/h")
  case "$first" in
    "Usage: normsweep $c "*|"Usage: normsweep [$c] "*) ;;
    *) bad "$c --help starts with '$first'" ;;
  esac
  grep -q '^Options' "$tmp/h" || bad "$c --help has no Options section"
  grep -q '^  -h, --help  *show this help$' "$tmp/h" || bad "$c --help lacks '-h, --help  show this help'"
  grep -q '^Exit status: ' "$tmp/h" || bad "$c --help has no 'Exit status:' line"
  # usage lines: up to the first blank line, the launcher example dropped
  sed '/^$/q' "$tmp/h" | grep -v 'mpirun' | sed "s/normsweep \[*$c\]* //" | options > "$tmp/u"
  if [ "$c" = run ]; then
    grep -E "^ *normsweep \[run\]" "$tmp/synopsis" | options > "$tmp/m"
  else
    grep -E "^ *normsweep $c " "$tmp/synopsis" | sed "s/normsweep $c //" | options > "$tmp/m"
  fi
  # the Options section, up to "Exit status:": each line "  -x, --opt ARG  text" or
  # "  --a N --b N  text" describes a group of options (its first column, up to two spaces)
  sed -n '/^Options/,/^Exit status/p' "$tmp/h" | grep -E '^ {2,4}-' | sed -e 's/^ *//' -e 's/  .*//' |
    sed -e 's/\[[^]]*\]//g' > "$tmp/groups"
  options < "$tmp/groups" > "$tmp/o"
  missing=$(comm -23 "$tmp/u" "$tmp/o" | tr '\n' ' ')
  [ -z "$missing" ] || bad "$c: in the usage lines but not described under Options: $missing"
  if ! sed '/^$/q' "$tmp/h" | grep -q '\[OPTIONS\]'; then
    while read -r g; do
      printf '%s\n' "$g" | options > "$tmp/g"
      grep -qx -- '--help' "$tmp/g" && continue
      [ -n "$(comm -12 "$tmp/u" "$tmp/g")" ] ||
        bad "$c: described under Options but missing from the usage lines: $g"
    done < "$tmp/groups"
  fi
  [ -s "$tmp/m" ] || { bad "man page SYNOPSIS has no line for $c"; continue; }
  if ! cmp -s "$tmp/u" "$tmp/m"; then
    bad "$c: options differ between --help (<) and the man page SYNOPSIS (>): $(diff "$tmp/u" "$tmp/m" | grep '^[<>]' | tr '\n' ' ')"
  fi
done
# normsweep --help's usage lines for run are run --help's
"$NORMSWEEP" run --help | sed -n '1,/^$/p' | grep -v mpirun | sed '/^$/d' > "$tmp/run_usage"
head -n "$(wc -l < "$tmp/run_usage")" "$tmp/help" > "$tmp/top_usage"
cmp -s "$tmp/run_usage" "$tmp/top_usage" ||
  bad "normsweep --help's first usage lines differ from run --help's: $(diff "$tmp/top_usage" "$tmp/run_usage" | grep '^[<>]' | tr '\n' ' ')"
for c in run validate; do
  "$NORMSWEEP" $c --help | grep -q 'NORMSWEEP_OFFLINE=1' || bad "$c --help does not name NORMSWEEP_OFFLINE=1"
done
sed -n '/^\.SH ENVIRONMENT/,/^\.SH /p' "$top_srcdir/man/normsweep.1" | grep -q '^\.B NORMSWEEP_OFFLINE$' ||
  bad "man page ENVIRONMENT lacks NORMSWEEP_OFFLINE"
[ $fail -eq 0 ] && echo "ok - --help, --version, $(echo $cmds | wc -w) commands' --help and the man page agree"
exit $fail

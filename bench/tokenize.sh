#!/bin/sh
# bench/tokenize.sh: tokenize the whole corpus (War and Peace) 5 times; the median encode time
# (tokenizer loading excluded) against the tokenizer's documented bound of 2 s (docs/TOKENIZER.md;
# the one absolute target of `make bench`), and the token count.
set -u
: "${top_builddir:=$(pwd)}" "${top_srcdir:?}"
. "$top_srcdir/bench/verdict.sh"
bin="$top_builddir/bench/bench_tokenize"
tmp=$(mktemp); trap 'rm -f "$tmp"' EXIT
if [ ! -x "$bin" ]; then
  ns_check tokenize_wap_seconds "not built" "<" 2; exit 1
fi
"$bin" "${NS_TEST_TOKENIZER_DIR:?}" "${NS_TEST_CORPUS:?}" 5 > "$tmp" || { cat "$tmp"; exit 1; }
ns_indent "$tmp"
ns_check tokenize_wap_seconds "$(ns_value tokenize_wap_seconds "$tmp")" "<" 2
ns_info tokenize_wap_tokens "$(ns_value tokenize_wap_tokens "$tmp")"
ns_info tokenize_wap_mb_per_second "$(ns_value tokenize_wap_mb_per_second "$tmp")"

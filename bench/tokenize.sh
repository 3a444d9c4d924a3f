#!/bin/sh
# bench/tokenize.sh: tokenize the whole corpus (War and Peace) 5 times; prints the median
# encode time (tokenizer loading excluded) as tokenize_wap_seconds and the token count.
set -eu
: "${top_builddir:=$(pwd)}"
bin="$top_builddir/bench/bench_tokenize"
if [ ! -x "$bin" ]; then
  echo "bench/tokenize.sh: $bin is not built (run make bench)" >&2
  exit 1
fi
"$bin" "${NS_TEST_TOKENIZER_DIR:?}" "${NS_TEST_CORPUS:?}" 5

#!/bin/sh
# tokenizer_ref: normsweep's tokenizer.json encoding against Hugging Face's tokenizers run at test
# time -- the Rust library transformers uses, through its official Node binding, from the
# manifest's `tokref` asset (npm tarball pinned by SHA-256): the hard strings, 2000 random strings
# and every Unicode code point in context for Qwen3, Llama 3 and the plain-ByteLevel tokenizer;
# 23 tokenizer.json variants built from GPT-2's files (Split behaviours and invert, String
# patterns, empty matches, lookbehind, nested Sequences, add_prefix_space, use_regex, normalizers,
# added-token flags, ignore_merges, merges as pairs; byte_fallback, unk and fuse_unk on a small
# vocabulary) on the hard and 400 random strings; the one documented difference (U+11938). Every
# comparison is id for id. NS_TOKREF_FULL=1 adds all of War and Peace, raw and stripped.
# Needs node (Debian's nodejs, installed by scripts/install-deps) on x86_64 Linux: without them the
# test is skipped, saying why -- except under CI (CI set), where that is a failure.
set -u
: "${NORMSWEEP:?run through make check}" "${top_srcdir:?}" "${top_builddir:?}"
: "${NORMSWEEP_ASSETS:?}" "${NS_TEST_TOKENIZER_DIR:?}" "${NS_TEST_CORPUS:?}"
PY=${PYTHON_DEBIAN:-/usr/bin/python3}
R=$top_srcdir/tests/tokref
BATCH=$top_builddir/tests/tok_batch
REF=$NORMSWEEP_ASSETS/tokref
tmp=$(mktemp -d /tmp/ns_tok_ref.XXXXXX) || exit 1
trap 'rm -rf "$tmp"' EXIT INT TERM
fails=0
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }
cannot() { # REASON: skip (77), or fail under CI
  echo "tokenizer_ref: cannot run the reference: $*"
  if [ -n "${CI:-}" ]; then echo "FAIL: CI must run this test"; exit 1; fi
  echo "SKIP: install Debian's nodejs (scripts/install-deps) and fetch the tokref asset"; exit 77
}
command -v node > /dev/null 2>&1 || cannot "node is not installed (Debian package nodejs)"
[ "$(uname -m)" = x86_64 ] || cannot "the reference's binary is for x86_64 Linux, this is $(uname -m)"
need="tokref qwen3-tokenizer llama3-tokenizer claude-tokenizer"
if ! "$NORMSWEEP" assets fetch $need --dir "$NORMSWEEP_ASSETS" > "$tmp/fetch" 2>&1; then
  sed 's/^/  | /' "$tmp/fetch" | tail -n 8
  # (not a failure under CI either: a CI machine may have no route or no CA for the registry; an
  # install step can fix node, nothing in the project can fix the network)
  echo "tokenizer_ref: the assets $need could not be had (npm registry, or a mirror's npm/; docs/ASSETS.md)"
  echo "SKIP: the reference and the tokenizer.json files come from npm"; exit 77
fi
node -e "require('$REF/tokenizers.linux-x64-gnu.node')" > "$tmp/node" 2>&1 ||
  cannot "node cannot load the reference: $(head -n 2 "$tmp/node")"

# The reference's results are kept per machine, keyed by the SHA-256 of the reference binary, the
# tokenizer.json and the strings (the CI stages check, distcheck and sanitizers share them).
cache=${NS_TOKREF_CACHE:-${XDG_CACHE_HOME:-${HOME:-$tmp}/.cache}/normsweep/tokref-results}
mkdir -p "$cache" 2> /dev/null || cache=$tmp
refsum=$(sha256sum "$REF/tokenizers.linux-x64-gnu.node" "$R/ref.js" | sha256sum | cut -c1-16)

# reference TOKENIZER STRINGS.json: the reference's ids into $tmp/ref (from the cache when there)
reference() {
  key=$refsum-$(cat "$1" "$2" | sha256sum | cut -c1-32)
  if [ -s "$cache/$key" ]; then cp "$cache/$key" "$tmp/ref"; return 0; fi
  node "$R/ref.js" strings "$REF" "$1" "$2" > "$tmp/ref" 2> "$tmp/ref.err" || return 1
  cp "$tmp/ref" "$cache/$key.tmp$$" 2> /dev/null && mv "$cache/$key.tmp$$" "$cache/$key"
  return 0
}

# compare NAME TOKENIZER STRINGS.json: the reference's and normsweep's ids, string by string
compare() {
  reference "$2" "$3" ||
    { fail "$1: the reference failed: $(tail -n 2 "$tmp/ref.err")"; return; }
  "$BATCH" "$2" "$3" > "$tmp/ns" 2> "$tmp/ns.err" ||
    { fail "$1: tok_batch failed: $(cat "$tmp/ns.err")"; return; }
  n=$(wc -l < "$tmp/ref")
  if cmp -s "$tmp/ref" "$tmp/ns"; then
    echo "$1: $n strings, ids identical to the reference's"
  else
    fail "$1: $(diff "$tmp/ref" "$tmp/ns" | grep -c '^<') of $n strings differ from the reference"
    "$PY" - "$3" "$tmp/ref" "$tmp/ns" <<'EOF'
import json, sys
s = json.load(open(sys.argv[1], encoding="utf-8"))
a = open(sys.argv[2]).read().split("\n"); b = open(sys.argv[3]).read().split("\n")
shown = 0
for i, (x, y) in enumerate(zip(a, b)):
    if x != y and shown < 3:
        shown += 1
        print("  | string %d %r: reference %s, normsweep %s" % (i, s[i][:60], x[:80], y[:80]))
EOF
  fi
}

"$PY" "$R/strings.py" hard > "$tmp/hard.json"
"$PY" "$R/strings.py" random 2026 2000 > "$tmp/random.json"
"$PY" "$R/strings.py" random 17 400 > "$tmp/r400.json"
"$PY" "$R/strings.py" codepoints > "$tmp/cps.json"
"$PY" "$R/strings.py" codepoints compat > "$tmp/cps_compat.json"
"$PY" -c 'import json,sys; json.dump(json.load(open(sys.argv[1]))+json.load(open(sys.argv[2])), open(sys.argv[3],"w"), ensure_ascii=False)' \
  "$tmp/hard.json" "$tmp/r400.json" "$tmp/mix.json"
for t in qwen3-tokenizer llama3-tokenizer claude-tokenizer; do
  tj=$NORMSWEEP_ASSETS/$t/tokenizer.json
  compare "$t hard" "$tj" "$tmp/hard.json"
  compare "$t random" "$tj" "$tmp/random.json"
  cps=$tmp/cps.json; [ $t = claude-tokenizer ] && cps=$tmp/cps_compat.json # NFKC
  compare "$t code points" "$tj" "$cps"
done

"$PY" "$R/variants.py" "$NS_TEST_TOKENIZER_DIR/encoder.json" "$NS_TEST_TOKENIZER_DIR/vocab.bpe" \
  "$tmp/var" > "$tmp/variants" || fail "variants.py"
for v in $(cat "$tmp/variants"); do
  compare "variant $v" "$tmp/var/$v/tokenizer.json" "$tmp/mix.json"
done
[ "$(wc -l < "$tmp/variants")" -eq 23 ] || fail "expected 23 variants, got $(wc -l < "$tmp/variants")"

# The documented difference: U+11938 = U+11935 U+11930 (a canonical decomposition of Unicode 13).
# utf8proc composes the pair under NFC; Hugging Face's normalization tables predate it.
printf '["\\ud806\\udd35\\ud806\\udd30", "\\ud806\\udd38"]\n' > "$tmp/known.json"
q=$NORMSWEEP_ASSETS/qwen3-tokenizer/tokenizer.json
reference "$q" "$tmp/known.json" || fail "the reference failed on U+11938"
"$BATCH" "$q" "$tmp/known.json" > "$tmp/ns"
[ "$(sed -n 1p "$tmp/ns")" = "$(sed -n 2p "$tmp/ns")" ] ||
  fail "U+11935 U+11930 is not composed to U+11938 under NFC"
[ "$(sed -n 1p "$tmp/ref")" != "$(sed -n 2p "$tmp/ref")" ] &&
  [ "$(sed -n 2p "$tmp/ref")" = "$(sed -n 2p "$tmp/ns")" ] ||
  fail "the reference no longer differs on U+11938 as docs/TOKENIZER.md says: update both"

if [ -n "${NS_TOKREF_FULL:-}" ]; then
  "$PY" "$R/golden.py" strip "$NS_TEST_CORPUS" "$tmp/body.txt"
  for t in qwen3-tokenizer llama3-tokenizer claude-tokenizer; do
    for text in "$NS_TEST_CORPUS" "$tmp/body.txt"; do
      node "$R/ref.js" file "$REF" "$NORMSWEEP_ASSETS/$t/tokenizer.json" "$text" "$tmp/ref.i32" \
        2> /dev/null || { fail "$t $text: the reference failed"; continue; }
      "$NORMSWEEP" tokenize --tokenizer "$NORMSWEEP_ASSETS/$t" "$text" > "$tmp/ns.txt"
      "$PY" -c 'import struct,sys; d=open(sys.argv[1],"rb").read(); a=[int(x) for x in open(sys.argv[2])]
sys.exit(list(struct.unpack("<%di" % (len(d)//4), d)) != a)' "$tmp/ref.i32" "$tmp/ns.txt" &&
        echo "$t $(basename "$text"): $(wc -l < "$tmp/ns.txt") ids, the reference's" ||
        fail "$t $text: differs from the reference"
    done
  done
fi

[ $fails -eq 0 ] || { echo "tokenizer_ref: $fails failure(s)"; exit 1; }
echo "tokenizer_ref: all comparisons identical"

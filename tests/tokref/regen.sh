#!/bin/sh
# regen.sh: remake tests/data/tokref/golden.json -- the ids of Hugging Face's tokenizers (Rust,
# through its Node binding) for War and Peace (raw and its Gutenberg body) and the hard strings,
# for every tokenizer.json asset -- with node and the manifest's `tokref`, `qwen3-tokenizer`,
# `llama3-tokenizer`, `claude-tokenizer` and `war_and_peace` assets (fetched into ASSETS).
#   tests/tokref/regen.sh [ASSETS]      (default: $NORMSWEEP_ASSETS, else build/assets)
# Needs ./normsweep (scripts/build) for the fetch. Takes a few minutes (the reference encodes each
# text in one piece). Review the diff: the ids of a tokenizer whose file did not change must not.
set -eu
top=$(cd "$(dirname "$0")/../.." && pwd)
assets=${1:-${NORMSWEEP_ASSETS:-$top/build/assets}}
command -v node > /dev/null || { echo "regen.sh: node is needed (Debian package nodejs)" >&2; exit 2; }
"$top/normsweep" assets fetch tokref qwen3-tokenizer llama3-tokenizer claude-tokenizer \
  war_and_peace --dir "$assets"
mkdir -p "$top/tests/data/tokref"
/usr/bin/python3 "$top/tests/tokref/golden.py" make "$assets" "$top/tests/data/tokref/golden.json"
echo "regen.sh: wrote tests/data/tokref/golden.json"

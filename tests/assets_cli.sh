#!/bin/sh
# assets_cli: `normsweep assets list|fetch|verify|path` on a temporary mirror and manifest (exit
# codes, skipped optional sets -- also one whose download fails after its probe answered, from a
# local HTTP server --, symlink vs copy, checksum failures), then on the suite's assets.
set -u
: "${NORMSWEEP:?run through make check}"
tmp=$(mktemp -d /tmp/ns_assets_cli.XXXXXX) || exit 1
trap 'rm -rf "$tmp"' EXIT INT TERM
fails=0
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }
# expect CODE DESCRIPTION -- COMMAND...: run it, keep stdout+stderr in $tmp/out
expect() {
  want=$1; what=$2; shift 3
  "$@" >"$tmp/out" 2>&1; got=$?
  [ "$got" -eq "$want" ] || { fail "$what: exit $got, expected $want"; sed 's/^/  | /' "$tmp/out"; }
}
has() { grep -F -q -- "$1" "$tmp/out" || { fail "$2: output lacks '$1'"; sed 's/^/  | /' "$tmp/out"; }; }

# ---- a small mirror and its manifest
m=$tmp/mirror
mkdir -p "$m/tok"
printf '{"a": 1}\n' >"$m/tok/encoder.json"
printf '#version: 0.2\na b\n' >"$m/tok/vocab.bpe"
sha() { sha256sum "$1" | cut -d' ' -f1; }
s_enc=$(sha "$m/tok/encoder.json"); s_voc=$(sha "$m/tok/vocab.bpe")
s_wanted=$(printf 'other\n' | sha256sum | cut -d' ' -f1)
cat >"$tmp/manifest.json" <<EOF
{"format": "normsweep-assets-1", "sets": [
 {"name": "tok", "kind": "tokenizer", "main_file": "vocab.bpe",
  "files": [{"name": "encoder.json", "sha256": "$s_enc", "mirror_path": "tok/encoder.json"},
            {"name": "vocab.bpe", "sha256": "$s_voc", "mirror_path": "tok/vocab.bpe"}]},
 {"name": "net", "kind": "model", "main_file": "m.bin", "fetch": "if-available",
  "files": [{"name": "m.bin", "sha256": "$s_wanted", "mirror_path": "net/m.bin",
             "urls": ["http://127.0.0.1:1/m.bin"]}]},
 {"name": "mironly", "kind": "data", "main_file": "g.bin", "fetch": "if-available",
  "files": [{"name": "g.bin", "sha256": "$s_wanted", "mirror_path": "golden/g.bin"}]}
]}
EOF
# a set whose mirror file does not have the manifest's checksum
cat >"$tmp/wrong.json" <<EOF
{"format": "normsweep-assets-1", "sets": [
 {"name": "wrong", "kind": "data", "main_file": "encoder.json",
  "files": [{"name": "encoder.json", "sha256": "$s_voc", "mirror_path": "tok/encoder.json"}]}
]}
EOF
NORMSWEEP_MANIFEST=$tmp/manifest.json; export NORMSWEEP_MANIFEST
suite_assets=${NORMSWEEP_ASSETS:-}
unset NORMSWEEP_OFFLINE NORMSWEEP_ASSETS
A=$tmp/a; B=$tmp/b

expect 0 "help" -- "$NORMSWEEP" assets --help
has "normsweep assets fetch" "help"
expect 0 "fetch --help" -- "$NORMSWEEP" assets fetch --help
has "--offline" "fetch --help"
expect 2 "no subcommand" -- "$NORMSWEEP" assets
expect 2 "unknown subcommand" -- "$NORMSWEEP" assets frobnicate
expect 2 "unknown option" -- "$NORMSWEEP" assets fetch --bogus
expect 2 "unknown set" -- "$NORMSWEEP" assets fetch nosuch --dir "$A" --mirror "$m"
has "unknown asset set 'nosuch'" "unknown set"
expect 2 "path without SET" -- "$NORMSWEEP" assets path --dir "$A"

# default fetch: tok placed; optional sets that cannot be had are skipped, not failures
expect 0 "default fetch" -- "$NORMSWEEP" assets fetch --dir "$A" --mirror "$m"
has "net: skipped" "default fetch"
has "127.0.0.1:1" "default fetch"
has "mironly: skipped" "default fetch"
has "golden/g.bin" "default fetch"
has "sha256 $s_voc" "default fetch"
[ -L "$A/tok/vocab.bpe" ] || fail "default fetch should symlink tok/vocab.bpe"
[ "$(readlink "$A/tok/vocab.bpe")" = "$(cd "$m/tok" && pwd -P)/vocab.bpe" ] || fail "symlink target"
expect 0 "fetch tok again" -- "$NORMSWEEP" assets fetch tok --dir "$A" --mirror "$m"
has "[assets-dir]" "fetch tok again"

# explicitly requested sets that cannot be had do fail, naming URL / mirror path / offline
expect 1 "fetch net" -- "$NORMSWEEP" assets fetch net --dir "$A" --mirror "$m"
has "http://127.0.0.1:1/m.bin" "fetch net"
has "$m/net/m.bin" "fetch net"
expect 1 "fetch net --offline" -- "$NORMSWEEP" assets fetch net --dir "$A" --mirror "$m" --offline
has "offline" "fetch net --offline"
expect 1 "fetch mironly" -- "$NORMSWEEP" assets fetch mironly --dir "$A" --mirror "$m"
has "golden/g.bin" "fetch mironly"
expect 1 "fetch wrong" -- env NORMSWEEP_MANIFEST="$tmp/wrong.json" "$NORMSWEEP" assets fetch --dir "$A" --mirror "$m"
has "checksum mismatch" "fetch wrong"
has "$s_enc" "fetch wrong names the file's sum"
has "$s_voc" "fetch wrong names the manifest's sum"
[ -e "$A/wrong/encoder.json" ] && fail "fetch wrong left the file"
ls -A "$A/wrong" 2>/dev/null | grep -q tmp && fail "fetch wrong left a temporary"

# --copy makes regular files
expect 0 "fetch --copy" -- "$NORMSWEEP" assets fetch tok --copy --dir "$B" --mirror "$m"
[ -f "$B/tok/vocab.bpe" ] && [ ! -L "$B/tok/vocab.bpe" ] || fail "--copy should make a regular file"
cmp -s "$B/tok/vocab.bpe" "$m/tok/vocab.bpe" || fail "--copy content differs"

# list, path, verify
expect 0 "list" -- "$NORMSWEEP" assets list --dir "$A" --mirror "$m"
has "verified" "list"
has "$s_enc" "list"
has "link -> " "list"
has "from http://127.0.0.1:1/m.bin" "list"
expect 0 "path tok" -- "$NORMSWEEP" assets path tok --dir "$A"
[ "$(cat "$tmp/out")" = "$A/tok" ] || fail "path tok printed '$(cat "$tmp/out")'"
expect 1 "path net (absent)" -- "$NORMSWEEP" assets path net --dir "$A"
has "normsweep assets fetch net" "path net"
expect 0 "verify tok" -- "$NORMSWEEP" assets verify tok --dir "$B"
printf '#version: 0.2\nX Y\n' >"$B/tok/vocab.bpe"   # same size, other bytes
expect 4 "verify corrupted" -- "$NORMSWEEP" assets verify --dir "$B"
has "$s_voc" "verify corrupted"
has "vocab.bpe" "verify corrupted"
expect 0 "fetch repairs" -- "$NORMSWEEP" assets fetch tok --copy --dir "$B" --mirror "$m"
cmp -s "$B/tok/vocab.bpe" "$m/tok/vocab.bpe" || fail "fetch did not repair the corrupted copy"

# a broken manifest is a usage error
printf '{"format": "normsweep-assets-1", "sets": [' >"$tmp/broken.json"
expect 2 "broken manifest" -- env NORMSWEEP_MANIFEST="$tmp/broken.json" "$NORMSWEEP" assets list --dir "$A"
has "broken.json" "broken manifest"

# ---- "sha256": "unconfirmed" (the real models of docs/MODELS.md): never downloaded without
# --accept-unconfirmed, used when present or in the mirror (its sum computed and printed)
mkdir -p "$m/uncm" && printf 'weights\n' >"$m/uncm/w.bin"
cat >"$tmp/unconf.json" <<EOF
{"format": "normsweep-assets-1", "sets": [
 {"name": "unc", "kind": "model", "main_file": "w.bin", "fetch": "if-available",
  "files": [{"name": "w.bin", "sha256": "unconfirmed", "size": null, "mirror_path": "unc/w.bin",
             "urls": ["http://127.0.0.1:1/w.bin"]}]},
 {"name": "uncm", "kind": "model", "main_file": "w.bin", "fetch": "if-available",
  "files": [{"name": "w.bin", "sha256": "unconfirmed", "mirror_path": "uncm/w.bin",
             "urls": ["http://127.0.0.1:1/w.bin"]}]}
]}
EOF
U="env NORMSWEEP_MANIFEST=$tmp/unconf.json $NORMSWEEP"
expect 1 "fetch unconfirmed" -- $U assets fetch unc --dir "$tmp/u" --mirror "$m"
has "unc/w.bin: not in the mirror" "fetch unconfirmed"
has "its SHA-256 is unconfirmed in the manifest" "fetch unconfirmed"
has "normsweep assets fetch --accept-unconfirmed unc" "fetch unconfirmed"
grep -q "download failed" "$tmp/out" && fail "fetch unconfirmed tried the download"
expect 1 "fetch unconfirmed --accept-unconfirmed" -- \
  $U assets fetch unc --accept-unconfirmed --dir "$tmp/u" --mirror "$m"
has "download failed: http://127.0.0.1:1/w.bin" "fetch unconfirmed --accept-unconfirmed"
expect 0 "default fetch, unconfirmed sets" -- $U assets fetch --dir "$tmp/u" --mirror "$m"
has "unc: skipped (optional)" "default fetch, unconfirmed sets"
has "is unconfirmed" "default fetch, unconfirmed sets"
has "sha256 $(sha "$m/uncm/w.bin")" "default fetch, unconfirmed sets (the mirror's file used)"
expect 0 "list unconfirmed" -- $U assets list --dir "$tmp/u" --mirror "$m"
grep -q "w.bin  *missing  *unconfirmed" "$tmp/out" ||
  { fail "list does not say unconfirmed"; sed 's/^/  | /' "$tmp/out"; }
expect 2 "--accept-unconfirmed outside fetch" -- $U assets list --accept-unconfirmed

# ---- an optional set whose host answers the probe but whose download then fails: a default fetch
# skips it (a network hiccup must not fail `make check`'s assets), a named fetch fails; a download
# with the wrong checksum fails either way. A local server: HEAD 200 for every path; GET
# /flaky.bin 503, GET /bad.bin 200 with bytes whose SHA-256 is not the manifest's.
"${PYTHON_DEBIAN:-/usr/bin/python3}" -c '
import http.server, os, sys
class H(http.server.BaseHTTPRequestHandler):
    def log_message(self, *a): pass
    def do_HEAD(self):
        self.send_response(200); self.send_header("Content-Length", "6"); self.end_headers()
    def do_GET(self):
        if self.path == "/bad.bin":
            self.send_response(200); self.send_header("Content-Length", "6"); self.end_headers()
            self.wfile.write(b"wrong\n")
        else:
            self.send_error(503)
s = http.server.HTTPServer(("127.0.0.1", 0), H)
open(sys.argv[1] + ".tmp", "w").write(str(s.server_address[1]))
os.rename(sys.argv[1] + ".tmp", sys.argv[1])
s.serve_forever()' "$tmp/port" &
srv=$!
trap 'kill $srv 2>/dev/null; rm -rf "$tmp"' EXIT INT TERM
w=0; while [ ! -s "$tmp/port" ] && [ $w -lt 600 ]; do sleep 0.1; w=$((w + 1)); done
port=$(cat "$tmp/port" 2>/dev/null)
[ -n "$port" ] || fail "the local HTTP server did not start"
for set in flaky bad; do
  cat >"$tmp/$set.json" <<EOF
{"format": "normsweep-assets-1", "sets": [
 {"name": "tok", "kind": "tokenizer", "main_file": "vocab.bpe",
  "files": [{"name": "encoder.json", "sha256": "$s_enc", "mirror_path": "tok/encoder.json"},
            {"name": "vocab.bpe", "sha256": "$s_voc", "mirror_path": "tok/vocab.bpe"}]},
 {"name": "$set", "kind": "data", "main_file": "$set.bin", "fetch": "if-available",
  "files": [{"name": "$set.bin", "sha256": "$s_wanted", "mirror_path": "srv/$set.bin",
             "urls": ["http://127.0.0.1:$port/$set.bin"]}]}
]}
EOF
done
F="env NORMSWEEP_MANIFEST=$tmp/flaky.json $NORMSWEEP"
expect 0 "default fetch, optional download failing after the probe" -- $F assets fetch --dir "$tmp/f" --mirror "$m"
has "flaky: skipped (optional): " "default fetch, failing download"
has "download failed: http://127.0.0.1:$port/flaky.bin" "default fetch, failing download"
has "tok: ok" "default fetch, failing download (the other sets placed)"
[ -e "$tmp/f/flaky/flaky.bin" ] && fail "a failed download left flaky.bin"
expect 1 "named fetch, download failing after the probe" -- $F assets fetch flaky --dir "$tmp/f" --mirror "$m"
has "download failed: http://127.0.0.1:$port/flaky.bin" "named fetch, failing download"
Bd="env NORMSWEEP_MANIFEST=$tmp/bad.json $NORMSWEEP"
expect 1 "default fetch, optional download with a wrong checksum" -- $Bd assets fetch --dir "$tmp/f" --mirror "$m"
has "$(printf 'wrong\n' | sha256sum | cut -d' ' -f1)" "default fetch, wrong checksum (the sum got named)"
has "1 FAILED" "default fetch, wrong checksum"
[ -e "$tmp/f/bad/bad.bin" ] && fail "a download with the wrong checksum was kept"
kill $srv 2>/dev/null

# ---- the project's manifest and the suite's assets (fetched before the tests by check_DATA)
unset NORMSWEEP_MANIFEST
if [ -n "${NS_TEST_TOKENIZER_DIR:-}" ] && [ -n "$suite_assets" ]; then
  NORMSWEEP_ASSETS=$suite_assets; export NORMSWEEP_ASSETS
  expect 0 "list (project manifest)" -- "$NORMSWEEP" assets list
  has "gpt2-standin" "list (project manifest)"
  has "248dfc3911869ec493c76e65bf2fcf7f615828b0254c12b473182f0f81d3a707" "list shows the GPT-2 sum"
  expect 0 "path tokenizer" -- "$NORMSWEEP" assets path tokenizer
  [ "$(cat "$tmp/out")" = "$NS_TEST_TOKENIZER_DIR" ] || fail "path tokenizer: '$(cat "$tmp/out")' != $NS_TEST_TOKENIZER_DIR"
  expect 0 "verify tokenizer corpus" -- "$NORMSWEEP" assets verify tokenizer war_and_peace
fi

[ "$fails" -eq 0 ] && echo "assets_cli: all checks passed"
[ "$fails" -eq 0 ]

// ref.js: the reference the tokenizer tests compare normsweep with -- Hugging Face's tokenizers
// (Rust, through its official Node binding, the library transformers uses) and, as a second
// opinion, @huggingface/tokenizers (JavaScript, the tokenizers of transformers.js). Both come from
// the manifest's `tokref` asset set (npm tarballs pinned by SHA-256). Ids are those of
// encode(text, add_special_tokens = false).
//
//   node ref.js strings TOKREF_DIR TOKENIZER_JSON STRINGS.json
//       one line per string of the JSON array: the Rust ids separated by spaces
//   node ref.js strings-js TOKREF_DIR TOKENIZER_JSON STRINGS.json
//       the same, and on stderr one line "js-differs INDEX" per string where the JavaScript ids
//       differ
//   node ref.js file TOKREF_DIR TOKENIZER_JSON TEXT OUT.i32
//       the ids of the whole UTF-8 file TEXT as little-endian int32 (Rust); stderr says whether
//       the JavaScript ids agree
'use strict';
const fs = require('fs');
const path = require('path');

function load(dir, tj) {
  const rust = require(path.resolve(dir, 'tokenizers.linux-x64-gnu.node'));
  const js = require(path.resolve(dir, 'tokenizers.cjs'));
  const json = JSON.parse(fs.readFileSync(tj, 'utf8'));
  const cfgPath = path.join(path.dirname(tj), 'tokenizer_config.json');
  const cfg = fs.existsSync(cfgPath) ? JSON.parse(fs.readFileSync(cfgPath, 'utf8')) : {};
  return { rust: rust.Tokenizer.fromString(JSON.stringify(json)), js: new js.Tokenizer(json, cfg) };
}

function same(a, b) {
  return a.length === b.length && a.every((x, i) => x === b[i]);
}

async function main() {
  const [mode, dir, tj, input, out] = process.argv.slice(2);
  const t = load(dir, tj);
  if (mode === 'strings' || mode === 'strings-js') {
    const strings = JSON.parse(fs.readFileSync(input, 'utf8'));
    const enc = await t.rust.encodeBatch(strings, { addSpecialTokens: false });
    const lines = [];
    for (let i = 0; i < strings.length; i++) {
      const ids = enc[i].getIds();
      lines.push(ids.join(' '));
      if (mode !== 'strings-js') continue;
      let jsIds = null;
      try {
        jsIds = t.js.encode(strings[i], { add_special_tokens: false }).ids;
      } catch (e) {
        jsIds = [];
      }
      if (!same(ids, jsIds)) process.stderr.write(`js-differs ${i}\n`);
    }
    process.stdout.write(lines.join('\n') + (lines.length ? '\n' : ''));
  } else if (mode === 'file') {
    const text = fs.readFileSync(input, 'utf8');
    const ids = (await t.rust.encode(text, null, { addSpecialTokens: false })).getIds();
    fs.writeFileSync(out, Buffer.from(Int32Array.from(ids).buffer));
    const jsIds = t.js.encode(text, { add_special_tokens: false }).ids;
    process.stderr.write(`rust ${ids.length} ids; javascript ${same(ids, jsIds) ? 'agrees' : 'DIFFERS'}\n`);
  } else {
    process.stderr.write('usage: node ref.js strings|strings-js|file TOKREF_DIR TOKENIZER_JSON INPUT [OUT]\n');
    process.exit(2);
  }
}
main().catch((e) => { process.stderr.write(`ref.js: ${e.stack || e}\n`); process.exit(1); });

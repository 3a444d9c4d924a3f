#!/usr/bin/env python3
"""gen_seeds: write the committed seed corpora fuzz/corpus/<parser>/ (small, hand-made inputs).

Usage: fuzz/gen_seeds.py [OUTDIR]   (default: the fuzz/corpus directory beside this script)
Python 3 standard library only. Real-data seeds (the stand-in model's header, corpus chunks) are
not committed: scripts/fuzz adds them from the assets directory at fuzz time."""
import gzip
import hashlib
import io
import json
import os
import shutil
import struct
import subprocess
import sys
import tarfile
import tempfile


def write(outdir, parser, name, data):
    d = os.path.join(outdir, parser)
    os.makedirs(d, exist_ok=True)
    if isinstance(data, str):
        data = data.encode("utf-8")
    with open(os.path.join(d, name), "wb") as f:
        f.write(data)


def tokenizer_seeds(out):
    p = "tokenizer"
    write(out, p, "ascii.txt", "Hello, world! It's a test: they're 12,345 tokens  long.\n\n\tTabs\r\n")
    write(out, p, "contractions.txt", "I'm you'll he'd we've she's it'S DON'T 'tis\n")
    write(out, p, "spaces.txt", "a  b   c    d\n\n\n   \t  \u00a0x  ")
    write(out, p, "unicode.txt", "na\u00efve caf\u00e9 \u4e2d\u6587 \U0001f600\U0001f44d\u200d "
          "\u0394\u03b5\u03bb\u03c4\u03b1 \u0928\u092e\u0938\u094d\u0924\u0947 1\u00bd")
    write(out, p, "numbers.txt", "3.14159 1e-5 0x1F 100000000000 -42 \u0663\u0664")
    write(out, p, "special.txt", "<|endoftext|> <|endoftext|>Text\n")
    # Invalid UTF-8: lone continuation bytes, overlong forms, encoded surrogates, truncated
    # sequences, bytes that never occur (0xC0, 0xF5..0xFF), and NUL.
    write(out, p, "invalid_utf8.bin", b"ok \x80\xbf lone \xc0\xaf overlong \xed\xa0\x80 surrogate "
          b"\xe2\x82 cut \xf0\x9f\x98 cut4 \xf5\xff\xfe end\x00nul \xc3")
    write(out, p, "bytes.bin", bytes(range(256)))
    write(out, p, "empty.txt", b"")
    write(out, p, "long_word.txt", "x" * 600 + " " + "ab" * 300)


def safetensors_file(tensors, metadata=None, pad=True, raw_header=None):
    """tensors: list of (name, dtype, shape, data bytes); laid out back to back."""
    header = {}
    if metadata is not None:
        header["__metadata__"] = metadata
    data = b""
    for name, dtype, shape, blob in tensors:
        header[name] = {"dtype": dtype, "shape": shape, "data_offsets": [len(data), len(data) + len(blob)]}
        data += blob
    h = raw_header if raw_header is not None else json.dumps(header, separators=(",", ":")).encode()
    if pad:
        h += b" " * ((8 - (8 + len(h)) % 8) % 8)
    return struct.pack("<Q", len(h)) + h + data


def safetensors_seeds(out):
    p = "safetensors"
    f32 = struct.pack("<6f", 1.0, -2.5, 0.0, 3.25, float("inf"), -0.0)
    f16 = struct.pack("<4H", 0x3C00, 0xC000, 0x7C00, 0x0001)
    bf16 = struct.pack("<4H", 0x3F80, 0xC020, 0x7FC0, 0x0001)
    write(out, p, "f32.st", safetensors_file([("w", "F32", [2, 3], f32)]))
    write(out, p, "mixed.st", safetensors_file(
        [("a.weight", "F16", [2, 2], f16), ("a.bias", "BF16", [4], bf16),
         ("mask", "BOOL", [3], b"\x01\x00\x01"), ("ids", "I64", [1], struct.pack("<q", -7)),
         ("scalar", "F32", [], struct.pack("<f", 0.5)), ("empty", "F32", [0, 4], b"")],
        metadata={"format": "pt", "note": "seed"}))
    write(out, p, "gpt2_names.st", safetensors_file(
        [("wte.weight", "F32", [4, 2], bytes(32)), ("wpe.weight", "F32", [2, 2], bytes(16)),
         ("h.0.ln_1.weight", "F32", [2], bytes(8)), ("h.0.attn.c_attn.weight", "F32", [2, 6], bytes(48))]))
    write(out, p, "empty_header.st", safetensors_file([], pad=False, raw_header=b"{}"))
    # Malformed on purpose (each exercises one rejection path).
    write(out, p, "bad_overlap.st", struct.pack("<Q", 96) +
          b'{"a":{"dtype":"F32","shape":[2],"data_offsets":[0,8]},"b":{"dtype":"F32","shape":[2],"data_offsets":[4,12]}}'[:96]
          + bytes(16))
    write(out, p, "bad_dtype.st", safetensors_file([("x", "F12", [1], bytes(4))]))
    write(out, p, "bad_len.st", struct.pack("<Q", 1 << 40) + b"{}")
    write(out, p, "bad_json.st", safetensors_file([], raw_header=b'{"a":{"dtype":"F32",'))
    write(out, p, "bad_range.st", safetensors_file(
        [], raw_header=b'{"a":{"dtype":"F32","shape":[4],"data_offsets":[0,1000]}}'))
    write(out, p, "bad_shape.st", safetensors_file(
        [], raw_header=b'{"a":{"dtype":"F32","shape":[4294967296,4294967296,16],"data_offsets":[0,0]}}'))


def config_seeds(out):
    p = "config"
    base = {"model_type": "gpt2", "n_layer": 12, "n_head": 12, "n_embd": 768, "n_positions": 1024,
            "n_ctx": 1024, "vocab_size": 50257, "layer_norm_epsilon": 1e-05,
            "activation_function": "gelu_new", "n_inner": None}
    write(out, p, "gpt2.json", json.dumps(base, indent=2))
    small = dict(base, n_layer=2, n_head=2, n_embd=8, n_inner=16)
    del small["n_positions"]
    write(out, p, "small_n_ctx.json", json.dumps(small))
    write(out, p, "bad_types.json", json.dumps(dict(base, n_head="12", layer_norm_epsilon=[1])))
    write(out, p, "bad_values.json", json.dumps(dict(base, n_embd=770, n_layer=-1)))
    write(out, p, "bad_act.json", json.dumps(dict(base, activation_function="relu")))
    write(out, p, "huge.json", json.dumps(dict(base, n_embd=2**62, vocab_size=2**63 - 1)))
    write(out, p, "not_object.json", "[1, 2, 3]")
    write(out, p, "duplicate.json", '{"n_layer": 1, "n_layer": 2}')
    llama = {"model_type": "llama", "hidden_size": 576, "intermediate_size": 1536,
             "num_hidden_layers": 30, "num_attention_heads": 9, "num_key_value_heads": 3,
             "max_position_embeddings": 8192, "vocab_size": 49152, "rms_norm_eps": 1e-05,
             "rope_theta": 100000, "rope_scaling": None, "hidden_act": "silu",
             "tie_word_embeddings": True}
    write(out, p, "llama.json", json.dumps(llama, indent=2))
    write(out, p, "qwen2.json", json.dumps(dict(
        llama, model_type="qwen2", hidden_size=896, num_attention_heads=14, num_key_value_heads=2,
        intermediate_size=4864, sliding_window=32768, use_sliding_window=False,
        max_window_layers=24, rope_parameters={"rope_type": "default", "rope_theta": 1e6},
        rope_theta=1e6)))
    write(out, p, "mistral.json", json.dumps(dict(llama, model_type="mistral", head_dim=64,
                                                  sliding_window=4096)))
    write(out, p, "llama_bad.json", json.dumps(dict(
        llama, num_key_value_heads=4, rope_scaling={"type": "linear", "factor": 2.0},
        rope_interleaved=True)))
    neox = {"model_type": "gpt_neox", "hidden_size": 512, "intermediate_size": 2048,
            "num_hidden_layers": 6, "num_attention_heads": 8, "max_position_embeddings": 2048,
            "vocab_size": 50304, "layer_norm_eps": 1e-05, "rotary_pct": 0.25,
            "rotary_emb_base": 10000, "use_parallel_residual": True, "hidden_act": "gelu"}
    write(out, p, "gpt_neox.json", json.dumps(neox, indent=2))
    write(out, p, "gpt_neox_bad.json", json.dumps(dict(neox, rotary_pct=0.01, hidden_act="relu")))


def sweep_seeds(out):
    p = "sweep_yaml"
    write(out, p, "minimal.yaml", "shards: {count: 1, L_max: 8}\ngrid: {L: [8], N: [1]}\n")
    write(out, p, "ranges.yaml",
          "model: gpt2\nshards:\n  count: 2\n  L_max: 64\n  first: 10\n  stride: 70\n"
          "grid:\n  L: {from: 8, to: 64, step: 8}\n  N: [1, 2, 4]\n  T: [0.5, 1, 2.0e0]\n"
          "  eps: [1.0e-3]\n  layers: [0, 3]\n  heads: {from: 0, to: 3, step: 1}\n"
          "normalizer: [softmax, {name: ssmax, s: 0.5}, sparsemax]\nrows: 2\nsphere: false\nseed: 18446744073709551615\n")
    write(out, p, "anchors.yaml", "grid: &g {L: [4], N: [1]}\nshards: {count: 1, L_max: 4}\nx: *g\n")
    write(out, p, "flow.yaml", "{shards: {count: 3, L_max: 16}, grid: {L: [16], N: [1, 2], T: [1]}, "
          "keep_samples: yes, output: 'out.nc', checkpoint_dir: \"ck\"}\n")
    write(out, p, "bad_mixed.yaml", "shards: [1, 2]\ngrid:\n  L: []\n  N: [0, -1, x]\n\t bad\n")


def train_grid_seeds(out):
    p = "train_grid"
    with open(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "sweeps",
                           "training.yaml"), "rb") as f:
        write(out, p, "shipped.yaml", f.read())
    with open(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "sweeps",
                           "training-sinks.yaml"), "rb") as f:
        write(out, p, "shipped_sinks.yaml", f.read())
    write(out, p, "minimal.yaml", "train: {steps: 2}\nnormalizers: [softmax]\ntemperatures: [1]\n")
    write(out, p, "flow.yaml", "{train: {preset: tiny, strip_gutenberg: false, lr_min: 0.1}, "
          "normalizers: [ssmax, entmax15], ssmax_s: 0.5, temperatures: [1e-6, 1e6, 0.1], "
          "sweep: s.yaml, out: o}\n")
    write(out, p, "seeds.yaml", "train: {steps: 2}\nnormalizers: [softmax, sigmoid]\n"
          "temperatures: [1, 0.5]\nseeds: [0, 18446744073709551615, 2]\n")
    write(out, p, "bad_seeds.yaml", "train: {seed: 1}\nnormalizers: [softmax]\ntemperatures: [1]\n"
          "seeds: [1, '2', -1, 18446744073709551616, 1]\n")
    write(out, p, "bad.yaml", "train: [1]\nnormalizers: [softmax, softmax]\ntemperatures: [0]\n"
          "train: {temperature: 2}\n")


def tar_gz(entries):
    """entries: list of (name, kind, payload): kind "file" (bytes), "dir", "symlink" (target)."""
    raw = io.BytesIO()
    with tarfile.open(fileobj=raw, mode="w", format=tarfile.PAX_FORMAT) as tf:
        for name, kind, payload in entries:
            ti = tarfile.TarInfo(name)
            ti.mtime = 0
            ti.uname = ti.gname = ""
            if kind == "file":
                ti.size = len(payload)
                tf.addfile(ti, io.BytesIO(payload))
            elif kind == "dir":
                ti.type = tarfile.DIRTYPE
                ti.mode = 0o755
                tf.addfile(ti)
            else:
                ti.type = tarfile.SYMTYPE
                ti.linkname = payload
                tf.addfile(ti)
    out = io.BytesIO()
    with gzip.GzipFile(fileobj=out, mode="wb", mtime=0) as gz:
        gz.write(raw.getvalue())
    return out.getvalue()


def manifest(files):
    return "".join("%s  %s\n" % (hashlib.sha256(d).hexdigest(), n) for n, d in sorted(files.items())).encode()


def archive_seeds(out):
    p = "archive"
    files = {"run.nc": b"CDF\x01fake", "sweep.yaml": b"shards: {count: 1, L_max: 8}\n",
             "checkpoint/journal.bin": bytes(range(32))}
    good = [("top", "dir", None)] + [("top/" + n, "file", d) for n, d in files.items()]
    write(out, p, "good.tar.gz", tar_gz(good + [("top/MANIFEST.sha256", "file", manifest(files))]))
    tampered = dict(files, **{"run.nc": b"CDF\x01FAKE"})
    write(out, p, "tampered.tar.gz", tar_gz([("top/" + n, "file", d) for n, d in tampered.items()] +
                                            [("top/MANIFEST.sha256", "file", manifest(files))]))
    write(out, p, "no_manifest.tar.gz", tar_gz([("top/run.nc", "file", b"x")]))
    write(out, p, "traversal.tar.gz", tar_gz([("top/../escape", "file", b"x"), ("/abs", "file", b"y")]))
    write(out, p, "symlink.tar.gz", tar_gz([("top/link", "symlink", "/etc/passwd")]))
    write(out, p, "two_tops.tar.gz", tar_gz([("a/x", "file", b"1"), ("b/y", "file", b"2")]))
    write(out, p, "duplicate.tar.gz", tar_gz([("top/x", "file", b"1"), ("top/x", "file", b"2")]))
    write(out, p, "not_gzip.bin", b"PK\x03\x04 not an archive")


def manifest_seeds(out):
    p = "manifest"
    files = {"run.nc": b"abc", "sweep.yaml": b""}
    write(out, p, "good.txt", manifest(files))
    write(out, p, "mixed.txt", manifest({"run.nc": b"abd", "other.nc": b""}) +
          b"not a line\n" + b"e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855  sweep.yaml\n" * 2 +
          b"E3B0C44298FC1C149AFBF4C8996FB92427AE41E4649B934CA495991B7852B855 *x\r\n")
    write(out, p, "empty.txt", b"")


NC_CDL = """netcdf seed {
dimensions:
  L = 4 ;
  N = 2 ;
  row = UNLIMITED ;
variables:
  float mean(L, N) ;
    mean:units = "1" ;
  int count(row) ;
// global attributes:
  :title = "normsweep sweep" ;
  :normsweep_version = "0.1.0" ;
  :git_commit = "unknown" ;
  :seed = 0LL ;
  :ks_alpha = 0.01 ;
  :shard_count = 8 ;
  :list = 1, 2, 3 ;
data:
  mean = 1, 2, 3, 4, 5, 6, 7, 8 ;
  count = 1, 2 ;
}
"""


def nc_seeds(out):
    p = "nc_read"
    if not shutil.which("ncgen"):
        print("gen_seeds: ncgen not found (apt-get install netcdf-bin): nc_read seeds not written",
              file=sys.stderr)
        return
    with tempfile.TemporaryDirectory() as tmp:
        cdl = os.path.join(tmp, "seed.cdl")
        with open(cdl, "w") as f:
            f.write(NC_CDL)
        # kind 1: classic, 2: 64-bit offset, 5: CDF-5, 3: NetCDF-4 (HDF5)
        for kind, name in ((1, "classic.nc"), (2, "offset64.nc"), (5, "cdf5.nc"), (3, "netcdf4.nc")):
            dst = os.path.join(tmp, name)
            cdl_k = cdl if kind in (3, 5) else cdl + ".k"
            if kind not in (3, 5):  # 64-bit integer attributes need CDF-5 or NetCDF-4
                with open(cdl_k, "w") as f:
                    f.write(NC_CDL.replace("0LL", "0"))
            subprocess.run(["ncgen", "-k", str(kind), "-o", dst, cdl_k], check=True)
            with open(dst, "rb") as f:
                write(out, p, name, f.read())
    write(out, p, "truncated_classic.nc", b"CDF\x01\x00\x00\x00\x00\x00\x00\x00\x0a")
    write(out, p, "hdf5_magic_only.nc", b"\x89HDF\r\n\x1a\n" + bytes(40))


def tokenizer_json_seeds(out):
    """Small Hugging Face tokenizer.json files (byte-level BPE on a few letters) exercising every
    option the loader implements, each followed by "\n--\n" and a text to encode."""
    p = "tokenizer_json"
    letters = "abcdefghijklmnopqrstuvwxyz\u0120\u010a"
    vocab = {"<unk>": 0}
    for c in letters:
        vocab[c] = len(vocab)
    for code in ["<0x%02X>" % b for b in (0xC3, 0xA9, 0xC4, 0xA0, 0x31)]:
        vocab[code] = len(vocab)
    merges = ["t h", "th e", "\u0120 th", "a n", "an d", "\u0120 a", "e r"]
    for m in merges:
        vocab[m.replace(" ", "")] = len(vocab)

    def tok(pre, normalizer=None, added=(), model=None, post=None):
        m = {"type": "BPE", "dropout": None, "unk_token": None, "continuing_subword_prefix": None,
             "end_of_word_suffix": None, "fuse_unk": False, "byte_fallback": False,
             "ignore_merges": False, "vocab": vocab, "merges": merges}
        m.update(model or {})
        return {"version": "1.0", "truncation": None, "padding": None, "added_tokens": list(added),
                "normalizer": normalizer, "pre_tokenizer": pre, "post_processor": post,
                "decoder": {"type": "ByteLevel", "add_prefix_space": False, "trim_offsets": True,
                            "use_regex": True}, "model": m}

    bl = {"type": "ByteLevel", "add_prefix_space": False, "trim_offsets": True, "use_regex": True}
    bl_plain = dict(bl, use_regex=False)

    def split(pattern, behavior, invert=False, key="Regex"):
        return {"type": "Split", "pattern": {key: pattern}, "behavior": behavior, "invert": invert}

    def seq(*steps):
        return {"type": "Sequence", "pretokenizers": list(steps)}

    def added(i, content, **kw):
        a = {"id": i, "content": content, "single_word": False, "lstrip": False, "rstrip": False,
             "normalized": False, "special": True}
        a.update(kw)
        return a

    llama = ("(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|\\p{N}{1,3}| ?[^\\s\\p{L}\\p{N}]+"
             "[\\r\\n]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+")
    text = "the band and the THE caf\u00e9 it's 12345 \u4e2d \n\n x<mask> y  <s>"
    n = len(vocab)
    seeds = {
        "bytelevel": tok(bl),
        "prefix_space": tok(dict(bl, add_prefix_space=True)),
        "llama_split": tok(seq(split(llama, "Isolated"), bl_plain), model={"ignore_merges": True}),
        "behaviors": tok(seq(split("\\s+", "MergedWithPrevious"), split("[.,]", "MergedWithNext"),
                             split("\\p{P}", "Contiguous"), split("e", "Removed", key="String"),
                             split("\\p{L}+", "Isolated", invert=True), bl_plain)),
        "nfc_added": tok(bl, normalizer={"type": "Sequence", "normalizers": [{"type": "NFKD"},
                                                                              {"type": "NFC"}]},
                         added=[added(n, "<mask>", lstrip=True, rstrip=True),
                                added(n + 1, "caf\u00e9", normalized=True, special=False),
                                added(vocab["the"], "the", single_word=True, special=False)]),
        "fallback_unk": tok(bl, model={"byte_fallback": True, "unk_token": "<unk>", "fuse_unk": True}),
        "pairs": tok(bl, model={"merges": [m.split(" ") for m in merges]}),
        "template": tok(bl, added=[added(n, "<s>")],
                        post={"type": "TemplateProcessing",
                              "single": [{"SpecialToken": {"id": "<s>", "type_id": 0}},
                                         {"Sequence": {"id": "A", "type_id": 0}}],
                              "pair": [], "special_tokens": {"<s>": {"id": "<s>", "ids": [n],
                                                                     "tokens": ["<s>"]}}}),
    }
    for name, t in seeds.items():
        write(out, p, name + ".json", json.dumps(t, ensure_ascii=False) + "\n--\n" + text)
    write(out, p, "invalid_text.json", (json.dumps(seeds["bytelevel"]) + "\n--\nok ").encode() +
          b"\xff\xc3(")
    write(out, p, "truncated.json", json.dumps(seeds["bytelevel"])[:200])


def main():
    outdir = sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(os.path.abspath(__file__)), "corpus")
    tokenizer_seeds(outdir)
    tokenizer_json_seeds(outdir)
    safetensors_seeds(outdir)
    config_seeds(outdir)
    sweep_seeds(outdir)
    train_grid_seeds(outdir)
    archive_seeds(outdir)
    manifest_seeds(outdir)
    nc_seeds(outdir)


if __name__ == "__main__":
    main()

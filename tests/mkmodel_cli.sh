#!/bin/sh
# mkmodel_cli: `normsweep mkmodel` options, exit codes, determinism and the Hugging Face layout.
set -u
: "${NORMSWEEP:?}" "${PYTHON_DEBIAN:=python3}" "${top_srcdir:?}"
tmp=$(mktemp -d "${TMPDIR:-/tmp}/ns_mkmodel_cli.XXXXXX") || exit 1
trap 'rm -rf "$tmp"' EXIT
fails=0
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }

# expect CODE PATTERN ARGS...: exit status CODE and stderr+stdout matching PATTERN
expect() {
    want=$1 pat=$2
    shift 2
    "$NORMSWEEP" mkmodel "$@" >"$tmp/out" 2>&1
    got=$?
    [ "$got" = "$want" ] || fail "mkmodel $* exited $got, want $want: $(cat "$tmp/out")"
    grep -q -- "$pat" "$tmp/out" || fail "mkmodel $*: output lacks '$pat': $(cat "$tmp/out")"
    [ "$want" = 0 ] || [ "$(wc -l <"$tmp/out")" -le 1 ] || fail "mkmodel $*: error is not one line"
}

tiny="--layers 2 --heads 2 --embd 8 --ctx 16 --vocab 32"
expect 0 "Usage: normsweep mkmodel" --help
expect 2 "--out DIR is required" $tiny
expect 2 "--vocab is required without --preset" --layers 2 --heads 2 --embd 8 --ctx 16 --out "$tmp/x"
expect 2 "--layers: expected an integer in 1..1024, got 'x'" --layers x --heads 2 --embd 8 --ctx 16 --vocab 32 --out "$tmp/x"
expect 2 "--layers: -1 is out of range 1..1024" --layers -1 --heads 2 --embd 8 --ctx 16 --vocab 32 --out "$tmp/x"
expect 2 "--embd: 0 is out of range 1..65536" --layers 1 --heads 2 --embd 0 --ctx 16 --vocab 32 --out "$tmp/x"
expect 2 "--seed: -3 is out of range" $tiny --seed -3 --out "$tmp/x"
expect 2 "--seed: 18446744073709551616 is out of range" $tiny --seed 18446744073709551616 --out "$tmp/x"
expect 2 "--dtype 'f64' is not one of" $tiny --dtype f64 --out "$tmp/x"
expect 2 "unknown preset 'gpt5'" --preset gpt5 --out "$tmp/x"
expect 2 "n_embd = 8 is not a multiple of n_head = 3" --layers 2 --heads 3 --embd 8 --ctx 16 --vocab 32 --out "$tmp/x"
expect 2 "unknown option '--bogus'" $tiny --bogus --out "$tmp/x"
expect 2 "option --out needs a value" $tiny --out
expect 2 "unexpected argument 'extra'" $tiny --out "$tmp/x" extra
[ -e "$tmp/x" ] && fail "a rejected command created its output directory"

# Success, determinism, seeds.
expect 0 "2144 parameters" $tiny --seed 42 --out "$tmp/a"
expect 0 "wrote" $tiny --seed 42 --out "$tmp/b"
expect 0 "wrote" $tiny --seed 43 --out "$tmp/c"
expect 0 "seed 18446744073709551615" $tiny --seed 18446744073709551615 --out "$tmp/max"
cmp -s "$tmp/a/model.safetensors" "$tmp/b/model.safetensors" || fail "same seed, different weights"
cmp -s "$tmp/a/config.json" "$tmp/b/config.json" || fail "same seed, different config.json"
cmp -s "$tmp/a/model.safetensors" "$tmp/c/model.safetensors" && fail "different seeds, same weights"
[ "$(ls "$tmp/a" | tr '\n' ' ')" = "config.json model.safetensors " ] || fail "unexpected files: $(ls "$tmp/a")"
# Re-running over an existing model replaces it atomically (same content for the same seed).
expect 0 "wrote" $tiny --seed 43 --out "$tmp/a"
cmp -s "$tmp/a/model.safetensors" "$tmp/c/model.safetensors" || fail "overwrite did not replace the model"
[ "$(ls "$tmp/a" | wc -l)" = 2 ] || fail "temporary files left behind: $(ls "$tmp/a")"

# An output path that is a regular file: I/O error, exit 1, nothing written.
: >"$tmp/file"
expect 1 "$tmp/file" $tiny --out "$tmp/file"

# Preset with overrides: the MLP width follows --embd.
expect 0 "wrote" --preset gpt2 --layers 1 --heads 4 --embd 16 --ctx 8 --vocab 50 --out "$tmp/p" --dtype f16
expect 0 "wrote" $tiny --dtype bf16 --out "$tmp/bf"

# The Hugging Face layout, checked with Python's json/struct only.
"$PYTHON_DEBIAN" - "$tmp" <<'EOF' || fail "layout check (see above)"
import json, struct, sys
tmp = sys.argv[1]

def header(path):
    with open(path, "rb") as f:
        n = struct.unpack("<Q", f.read(8))[0]
        h = json.loads(f.read(n))
        size = f.seek(0, 2)
    return n, h, size

def check(d, L, H, C, P, V, F, dtype, esize):
    cfg = json.load(open(f"{tmp}/{d}/config.json"))
    assert (cfg["n_layer"], cfg["n_head"], cfg["n_embd"], cfg["n_positions"], cfg["vocab_size"]) == (L, H, C, P, V), cfg
    assert cfg["activation_function"] == "gelu_new" and cfg["layer_norm_epsilon"] == 1e-5, cfg
    assert cfg["model_type"] == "gpt2" and cfg["n_inner"] is None, cfg
    n, h, size = header(f"{tmp}/{d}/model.safetensors")
    assert (8 + n) % 8 == 0, "data section not 8-byte aligned"
    assert h.pop("__metadata__") == {"format": "pt"}
    want = {"wte.weight": [V, C], "wpe.weight": [P, C], "ln_f.weight": [C], "ln_f.bias": [C]}
    for l in range(L):
        p = f"h.{l}."
        want.update({p + "ln_1.weight": [C], p + "ln_1.bias": [C],
                     p + "attn.c_attn.weight": [C, 3 * C], p + "attn.c_attn.bias": [3 * C],
                     p + "attn.c_proj.weight": [C, C], p + "attn.c_proj.bias": [C],
                     p + "ln_2.weight": [C], p + "ln_2.bias": [C],
                     p + "mlp.c_fc.weight": [C, F], p + "mlp.c_fc.bias": [F],
                     p + "mlp.c_proj.weight": [F, C], p + "mlp.c_proj.bias": [C],
                     p + "attn.bias": [1, 1, P, P]})
    assert set(h) == set(want), set(h) ^ set(want)
    end = 0
    for k, v in h.items():  # back to back, in file order
        assert v["dtype"] == dtype and v["shape"] == want[k], (k, v)
        b, e = v["data_offsets"]
        numel = 1
        for s in v["shape"]:
            numel *= s
        assert b == end and e - b == numel * esize, (k, v)
        end = e
    assert 8 + n + end == size, "data section size"

check("a", 2, 2, 8, 16, 32, 32, "F32", 4)
check("p", 1, 4, 16, 8, 50, 64, "F16", 2)
check("bf", 2, 2, 8, 16, 32, 32, "BF16", 2)
# LayerNorm weight 1 and bias 0 in the F32 file; the causal mask.
n, h, size = header(f"{tmp}/a/model.safetensors")
with open(f"{tmp}/a/model.safetensors", "rb") as f:
    def read(name):
        b, e = h[name]["data_offsets"]
        f.seek(8 + n + b)
        return struct.unpack(f"<{(e - b) // 4}f", f.read(e - b))
    assert read("h.1.ln_2.weight") == (1.0,) * 8 and read("h.1.ln_2.bias") == (0.0,) * 8
    m = read("h.0.attn.bias")
    assert all(m[r * 16 + c] == (1.0 if c <= r else 0.0) for r in range(16) for c in range(16))
    w = read("wte.weight")
    assert len(set(w)) == len(w) and max(abs(x) for x in w) < 0.2
EOF

# Every architecture: presets with the released configs' keys and values, the tensors the
# *ForCausalLM models save, shards with their index; options that do not apply are refused.
expect 2 "--arch 'gptj' is not one of" --arch gptj $tiny --out "$tmp/x"
expect 2 "--kv-heads does not apply to --arch gpt2" $tiny --kv-heads 1 --out "$tmp/x"
expect 2 "--rotary-pct does not apply to --arch llama" --arch llama $tiny --rotary-pct 0.5 --out "$tmp/x"
expect 2 "--kv-heads does not apply to --arch gpt_neox" --arch gpt-neox $tiny --kv-heads 1 --out "$tmp/x"
expect 2 "--preset pythia-70m is a gpt_neox model, not --arch llama" --arch llama --preset pythia-70m --out "$tmp/x"
expect 2 "heads = 4 must be a multiple of kv-heads = 3" --arch llama --layers 1 --heads 4 --kv-heads 3 --embd 16 --ctx 8 --vocab 32 --out "$tmp/x"
expect 2 "rotary-pct = 0.1 gives 0 rotary dimensions" --arch gpt-neox --layers 1 --heads 2 --embd 16 --ctx 8 --vocab 32 --rotary-pct 0.1 --out "$tmp/x"
expect 2 "--shards: 0 is out of range 1..4096" $tiny --shards 0 --out "$tmp/x"
expect 2 "--init 'half' is not hf or full" --arch qwen2 $tiny --init half --out "$tmp/x"
[ -e "$tmp/x" ] && fail "a rejected command created its output directory"
small="--layers 2 --ctx 64 --vocab 100"
expect 0 "llama: 2 layers, 9 heads, 3 key/value heads, head_dim 64" --preset smollm2-135m $small --out "$tmp/smol"
expect 0 "qwen2: 2 layers, 14 heads, 2 key/value heads" --preset qwen2.5-0.5b $small --dtype bf16 --shards 3 --out "$tmp/qwen"
expect 0 "gpt_neox: 2 layers, 8 heads" --preset pythia-70m $small --dtype f16 --out "$tmp/py70"
expect 0 "gpt_neox: 2 layers, 12 heads" --arch gpt-neox --preset pythia-160m $small --shards 2 --out "$tmp/py160"
expect 0 "mistral" --arch mistral --layers 1 --heads 4 --kv-heads 2 --embd 32 --head-dim 4 --ctx 16 --vocab 40 --out "$tmp/mis"
# the same seed: byte-identical shards and index
expect 0 "qwen2" --preset qwen2.5-0.5b $small --dtype bf16 --shards 3 --out "$tmp/qwen2"
for f in model-00001-of-00003.safetensors model-00002-of-00003.safetensors \
         model-00003-of-00003.safetensors model.safetensors.index.json config.json; do
  cmp -s "$tmp/qwen/$f" "$tmp/qwen2/$f" || fail "same seed, different $f"
done
# rewriting a sharded model as one file removes the index (a loader would read the stale shards)
expect 0 "qwen2" --preset qwen2.5-0.5b $small --out "$tmp/qwen2"
[ ! -e "$tmp/qwen2/model.safetensors.index.json" ] || fail "stale index left behind"
"$PYTHON_DEBIAN" "$top_srcdir/tests/mkmodel_layout.py" "$tmp" || fail "decoder layout check (see above)"
# (that they load, with the config intended: tests/test_models)

[ "$fails" = 0 ] && echo "mkmodel_cli: all checks passed"
[ "$fails" = 0 ]

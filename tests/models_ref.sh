#!/bin/sh
# models_ref: `normsweep dump` on random models of every architecture -- GPT-2; Llama with
# grouped-query attention, sharded BF16, tied embeddings; Llama with plain multi-head attention,
# every bias and untied embeddings; Qwen2 (q/k/v biases, GQA, F16); Mistral with head_dim other
# than hidden/heads and a single key/value head; GPT-NeoX with partial rotary and parallel residual
# (F16, sharded), and sequential with half the head rotated and no attention biases -- against
# tests/ref_models.py, an independent float64 implementation written from Hugging Face's model
# definitions: attention weights within 1e-5 absolute, values and logits within 1e-5 relative to
# their largest magnitude (float32 forward: a dot product of K terms rounds to ~sqrt(K) 6e-8
# relative, the few layers of these models compound it to ~1e-6; a wrong convention -- rotary
# pairing, GQA grouping, a missing bias, the residual form -- gives 1e-2 and more). Also: GQA with
# its key/value heads repeated (num_key_value_heads = num_attention_heads) equals plain multi-head
# attention; the model SHA-256 of a sharded model is `sha256sum` of its shards hashed again; and
# config options that are not implemented are refused before any work (exit 2, the file and the
# key named).
set -u
: "${NORMSWEEP:?}" "${NS_TEST_CORPUS:?}" "${NS_TEST_TOKENIZER_DIR:?}" "${PYTHON_DEBIAN:?}" \
  "${top_srcdir:?}"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*"; exit 1; }
ref() { "$PYTHON_DEBIAN" "$top_srcdir/tests/ref_models.py" "$@"; }

mk() {
  name=$1; shift
  "$NORMSWEEP" mkmodel "$@" --ctx 128 --vocab 50257 --seed 11 --out "$tmp/$name" > "$tmp/mk.log" 2>&1 ||
    { cat "$tmp/mk.log"; fail "mkmodel $name"; }
}
dump() {
  "$NORMSWEEP" dump --model "$1" --tokenizer "$NS_TEST_TOKENIZER_DIR" --strip-gutenberg false \
    --text "$NS_TEST_CORPUS" --offset 20000 --length 48 --logits --out "$2" > "$tmp/dump.log" 2>&1
}

mk gpt2 --layers 2 --heads 4 --embd 64
mk llama_gqa --arch llama --layers 3 --heads 4 --kv-heads 2 --embd 64 --inner 96 --tied true \
  --dtype bf16 --shards 3 --init full --init-std 0.15
mk llama_mha --arch llama --layers 2 --heads 4 --embd 64 --inner 80 --tied false \
  --attention-bias true --mlp-bias true --rope-theta 500 --init full --init-std 0.15
mk qwen2 --arch qwen2 --layers 2 --heads 6 --kv-heads 2 --embd 48 --inner 96 --tied false \
  --rope-theta 1000000 --dtype f16 --init full --init-std 0.15
mk mistral --arch mistral --layers 2 --heads 4 --kv-heads 1 --embd 64 --head-dim 8 --inner 64 \
  --init full --init-std 0.2
mk neox_parallel --arch gpt-neox --layers 3 --heads 4 --embd 64 --rotary-pct 0.25 --dtype f16 \
  --shards 2 --init full --init-std 0.15
mk neox_sequential --arch gpt-neox --layers 2 --heads 4 --embd 64 --rotary-pct 0.5 \
  --parallel-residual false --attention-bias false --rope-theta 500 --init full --init-std 0.15

for m in gpt2 llama_gqa llama_mha qwen2 mistral neox_parallel neox_sequential; do
  dump "$tmp/$m" "$tmp/$m.nc" || { cat "$tmp/dump.log"; fail "dump $m"; }
  ref compare "$tmp/$m" "$tmp/$m.nc" || fail "$m differs from the float64 reference"
done

# GQA = multi-head attention with each key/value head repeated for its query heads
ref expand-gqa "$tmp/llama_gqa" "$tmp/llama_mha_of_gqa" || fail "expand-gqa"
dump "$tmp/llama_mha_of_gqa" "$tmp/expanded.nc" || { cat "$tmp/dump.log"; fail "dump expanded"; }
"$PYTHON_DEBIAN" - "$tmp/llama_gqa.nc" "$tmp/expanded.nc" <<'EOF' || fail "GQA != its expansion"
import sys
import netCDF4
import numpy as np
a, b = (netCDF4.Dataset(p) for p in sys.argv[1:3])
assert a.model_num_key_value_heads == 2 and b.model_num_key_value_heads == 4
for v in ("attention_weight", "value", "logit"):
    x, y = np.array(a[v][:], dtype=np.float64), np.array(b[v][:], dtype=np.float64)
    fin = np.isfinite(x)
    assert (fin == np.isfinite(y)).all()
    d = np.abs(x[fin] - y[fin]).max() / max(np.abs(y[fin]).max(), 1e-300)
    print("GQA vs its expansion: %s max rel diff %.3g (%s)" % (
        v, d, "bitwise" if np.array_equal(x[fin], y[fin]) else "float32 rounding"))
    assert d <= 1e-6
EOF

# the SHA-256 of sharded weights: of the text `sha256sum` prints for the shards (byte order)
want=$(cd "$tmp/llama_gqa" && LC_ALL=C sha256sum model-*-of-00003.safetensors | sha256sum | cut -c1-64)
got=$(ncdump -h "$tmp/llama_gqa.nc" | sed -n 's/.*:model_sha256 = "\(.*\)" ;/\1/p')
[ "$want" = "$got" ] || fail "sharded model_sha256 $got, sha256sum of the shards gives $want"
one=$(sha256sum "$tmp/gpt2/model.safetensors" | cut -c1-64)
got=$(ncdump -h "$tmp/gpt2.nc" | sed -n 's/.*:model_sha256 = "\(.*\)" ;/\1/p')
[ "$one" = "$got" ] || fail "single-file model_sha256 $got, file SHA-256 $one"
ncdump -h "$tmp/neox_parallel.nc" | grep -q ':model_rotary_dim = 4LL' || fail "rotary_dim not recorded"
ncdump -h "$tmp/qwen2.nc" | grep -q ':model_num_key_value_heads = 2LL' || fail "kv heads not recorded"

# refused before any work: exit 2, one line naming config.json and the key; nothing written
refuse() { # BASE KEY PY-EDIT [LENGTH]
  rm -rf "$tmp/r"; cp -r "$tmp/$1" "$tmp/r"
  "$PYTHON_DEBIAN" -c "import json,sys; p='$tmp/r/config.json'; c=json.load(open(p)); $3; json.dump(c, open(p,'w'))"
  "$NORMSWEEP" dump --model "$tmp/r" --tokenizer "$NS_TEST_TOKENIZER_DIR" --text "$NS_TEST_CORPUS" \
    --offset 0 --length "${4:-16}" --out "$tmp/r.nc" > "$tmp/r.log" 2>&1
  st=$?
  [ $st -eq 2 ] || { cat "$tmp/r.log"; fail "$2: exit $st, expected 2"; }
  [ "$(wc -l < "$tmp/r.log")" -eq 1 ] || { cat "$tmp/r.log"; fail "$2: not one line"; }
  grep -q "$2" "$tmp/r.log" || { cat "$tmp/r.log"; fail "$2: not named"; }
  [ ! -e "$tmp/r.nc" ] || fail "$2: an output was written"
  echo "refused: $(cat "$tmp/r.log")"
}
refuse llama_mha '/r/config.json: key "rope_scaling"' "c['rope_scaling']={'type':'linear','factor':2.0}"
refuse llama_mha '"rope_parameters.rope_type"' "c['rope_parameters']={'rope_type':'yarn','factor':4.0}"
refuse llama_mha '"rope_interleaved"' "c['rope_interleaved']=True"
refuse llama_mha '"partial_rotary_factor"' "c['partial_rotary_factor']=0.5"
refuse llama_mha '"hidden_act"' "c['hidden_act']='relu'"
refuse llama_mha '"model_type" = "qwen3"' "c['model_type']='qwen3'"
refuse llama_mha '"num_key_value_heads"' "c['num_key_value_heads']=3"
refuse llama_mha '"normsweep_attn_normalizer"' "c['normsweep_attn_normalizer']='sparsemax'"
refuse qwen2 '"use_mrope"' "c['use_mrope']=True"
refuse qwen2 '"sliding_window" = 16' "c['use_sliding_window']=True; c['sliding_window']=16; c['max_window_layers']=0" 20
refuse mistral '"sliding_window" = 8' "c['sliding_window']=8" 9
refuse neox_sequential '"rotary_pct"' "c['rotary_pct']=0.01"
refuse neox_sequential '"hidden_act"' "c['hidden_act']='silu'"
refuse neox_sequential '"rope_scaling"' "c['rope_scaling']={'type':'dynamic','factor':2.0}"
# a sliding window no shorter than L is no restriction: accepted
rm -rf "$tmp/w"; cp -r "$tmp/mistral" "$tmp/w"
"$PYTHON_DEBIAN" -c "import json; p='$tmp/w/config.json'; c=json.load(open(p)); c['sliding_window']=48; json.dump(c, open(p,'w'))"
dump "$tmp/w" "$tmp/w.nc" || { cat "$tmp/dump.log"; fail "sliding_window = L refused"; }
echo "models_ref: all architectures match the float64 reference"

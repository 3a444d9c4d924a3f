#!/bin/sh
# models_sweep: sweeps end to end on random models of the Llama layout (grouped-query attention,
# 4 query heads over 2 key/value heads) and GPT-NeoX (partial rotary, parallel residual), written by
# `normsweep mkmodel`: `validate` names the architecture and the key/value heads, `run` at -np 1
# and 2 gives byte-identical data variables, every query head is a head of the output, and the
# output records the architecture (model_architecture, model_num_key_value_heads, model_rotary_dim).
# The sharded llama model also runs as a manifest's model set, with the path run's data and the
# same model_sha256 (the shards' sha256sum listing's SHA-256, computed here by sha256sum); archive
# --with-model refuses the sharded model given by its directory (exit 2, nothing written).
. "$top_srcdir/tests/sweep_common.sh"
cd "$work" || fail "cd"
mk() {
  name=$1; shift
  "$NORMSWEEP" mkmodel "$@" --ctx 256 --vocab 50257 --seed 3 --init-std 0.1 --out "$name" \
    > mk.log 2>&1 || { cat mk.log >&2; fail "mkmodel $name"; }
}
mk llama --arch llama --layers 2 --heads 4 --kv-heads 2 --embd 64 --inner 128 --dtype bf16 --shards 2
mk neox --arch gpt-neox --layers 2 --heads 4 --embd 64 --rotary-pct 0.25
for m in llama neox; do
  cat > $m.yaml <<YAML
model: $work/$m
tokenizer: $NS_TEST_TOKENIZER_DIR
corpus: $NS_TEST_CORPUS
shards: {count: 5, L_max: 200}
grid: {L: [40, 200], N: [1, 4, 16], T: [0.5, 1], eps: [1.0e-3], layers: all, heads: all}
normalizer: [softmax, sparsemax]
rows: 3
YAML
  "$NORMSWEEP" validate $m.yaml > val.$m 2>&1 || { cat val.$m >&2; fail "validate $m"; }
  grep -q "model: .*, $( [ $m = llama ] && echo 'llama, 2 layers, 4 heads (2 key/value)' || echo 'gpt_neox, 2 layers, 4 heads'), n_ctx 256" val.$m ||
    { cat val.$m >&2; fail "validate $m does not describe the model"; }
  for np in 1 2; do
    run_np $np $m.yaml --output $m$np.nc --checkpoint-dir ck$m$np 2> log$m$np ||
      { cat log$m$np >&2; fail "$m -np $np exited with $?"; }
  done
  same_data ${m}1.nc ${m}2.nc "$m: -np 1 vs -np 2"
  hdr=$(ncdump -h ${m}1.nc)
  echo "$hdr" | grep -q "head = 4 ;" || fail "$m: the output does not have 4 query heads"
  echo "$hdr" | grep -q ":model_architecture = \"$( [ $m = llama ] && echo llama || echo gpt_neox)\"" ||
    fail "$m: model_architecture not recorded"
  echo "$hdr" | grep -q ":model_num_key_value_heads = $( [ $m = llama ] && echo 2 || echo 4)LL" ||
    fail "$m: model_num_key_value_heads not recorded"
  echo "$hdr" | grep -q ":model_rotary_dim = $( [ $m = llama ] && echo 16 || echo 4)LL" ||
    fail "$m: model_rotary_dim not recorded"
  # every statistic computed: distance_count > 0 somewhere for every head
  ncdump -v distance_count ${m}1.nc | grep -q " [1-9]" || fail "$m: no distance counted"
done
# The sharded llama model as a manifest's model set (main_file model.safetensors.index.json;
# docs/ASSETS.md, "Sharded models"): it runs, gives the path run's data, and both record the
# weights' identity of docs/MODELS.md, computed here by sha256sum from the shards' bytes.
mkdir -p mir/shardy
cp llama/config.json llama/model.safetensors.index.json llama/model-*.safetensors mir/shardy/ ||
  fail "copy the sharded model into a mirror"
files=""
for f in $(cd mir/shardy && ls); do
  files="$files${files:+,}{\"name\": \"$f\", \"sha256\": \"$(sha256sum mir/shardy/$f | cut -d' ' -f1)\", \"mirror_path\": \"shardy/$f\"}"
done
printf '{"format": "normsweep-assets-1", "sets": [{"name": "shardy", "kind": "model", "main_file": "model.safetensors.index.json", "files": [%s]}]}\n' \
  "$files" > shardy.json
want=$(cd llama && LC_ALL=C sha256sum model-*-of-*.safetensors | sha256sum | cut -d' ' -f1)
sed "s|^model: .*|model: shardy|" llama.yaml > shardy.yaml
NORMSWEEP_MANIFEST=$work/shardy.json NORMSWEEP_MIRROR=$work/mir NORMSWEEP_ASSETS=$work/ma
export NORMSWEEP_MANIFEST NORMSWEEP_MIRROR NORMSWEEP_ASSETS
run_np 1 shardy.yaml --output shardy.nc --checkpoint-dir ckshardy 2> logshardy ||
  { cat logshardy >&2; fail "the sharded manifest model: exit $?"; }
unset NORMSWEEP_MANIFEST NORMSWEEP_MIRROR NORMSWEEP_ASSETS
same_data llama1.nc shardy.nc "the sharded model by its manifest set and by its path"
for f in llama1.nc shardy.nc; do
  ncdump -h $f | grep -q ":model_sha256 = \"$want\"" ||
    fail "$f: model_sha256 is not the shards' sha256sum listing's SHA-256 ($want)"
done
ncdump -h shardy.nc | grep -q ':model_used = "shardy"' || fail "shardy.nc: model_used is not the set"

# archive --with-model of the sharded model given by its directory: refused, saying why and what
# to do (its files are not recorded), exit 2, nothing written.
set +e
"$NORMSWEEP" archive . --nc llama1.nc --checkpoint-dir ckllama1 --with-model --out wm.tar.gz \
  2> wm.err
rc=$?
set -e
[ $rc -eq 2 ] || { cat wm.err >&2; fail "archive --with-model of a sharded path model: exit $rc, expected 2"; }
grep -q "is sharded (model.safetensors.index.json and its shards" wm.err ||
  { cat wm.err >&2; fail "archive --with-model: the refusal does not say the model is sharded"; }
[ ! -e wm.tar.gz ] || fail "archive --with-model wrote wm.tar.gz after refusing"
echo "models_sweep: llama and gpt-neox sweeps byte-identical at -np 1 and 2; the sharded model by its manifest set; archive --with-model refuses it given by path"

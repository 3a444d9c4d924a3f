#!/usr/bin/python3
"""mkmodel_layout.py TMP: the Llama-layout and GPT-NeoX directories tests/mkmodel_cli.sh wrote
(smol, qwen, py70, py160, mis), checked with json/struct only: every tensor LlamaForCausalLM /
Qwen2ForCausalLM / GPTNeoXForCausalLM saves, with its shape and dtype; each shard's tensors mapped
to it by the index, the index naming no other, metadata.total_size the data bytes; config.json
with the released configs' keys and values."""
import json
import struct
import sys

tmp = sys.argv[1]


def tensors(d):
    """{name: (dtype, shape)} over the single file or the index's shards, checking the index."""
    try:
        index = json.load(open(f"{d}/model.safetensors.index.json"))
        shards = sorted(set(index["weight_map"].values()))
    except FileNotFoundError:
        index, shards = None, ["model.safetensors"]
    out, total = {}, 0
    for s in shards:
        with open(f"{d}/{s}", "rb") as f:
            n = struct.unpack("<Q", f.read(8))[0]
            h = json.loads(f.read(n))
        h.pop("__metadata__")
        for k, v in h.items():
            assert k not in out
            out[k] = (v["dtype"], v["shape"])
            total += v["data_offsets"][1] - v["data_offsets"][0]
            assert index is None or index["weight_map"][k] == s, (k, s)
    assert index is None or (set(index["weight_map"]) == set(out) and
                             index["metadata"]["total_size"] == total), "index"
    assert index is None or len(shards) > 1
    return out


def llama(C, F, H, KV, D, V, L, bias_qkv=False):
    w = {"model.embed_tokens.weight": [V, C], "model.norm.weight": [C]}
    for l in range(L):
        p = f"model.layers.{l}."
        w.update({p + "input_layernorm.weight": [C], p + "post_attention_layernorm.weight": [C],
                  p + "self_attn.q_proj.weight": [H * D, C], p + "self_attn.k_proj.weight": [KV * D, C],
                  p + "self_attn.v_proj.weight": [KV * D, C], p + "self_attn.o_proj.weight": [C, H * D],
                  p + "mlp.gate_proj.weight": [F, C], p + "mlp.up_proj.weight": [F, C],
                  p + "mlp.down_proj.weight": [C, F]})
        if bias_qkv:
            w.update({p + "self_attn.q_proj.bias": [H * D], p + "self_attn.k_proj.bias": [KV * D],
                      p + "self_attn.v_proj.bias": [KV * D]})
    return w


def neox(C, F, V, L):
    w = {"gpt_neox.embed_in.weight": [V, C], "gpt_neox.final_layer_norm.weight": [C],
         "gpt_neox.final_layer_norm.bias": [C], "embed_out.weight": [V, C]}
    for l in range(L):
        p = f"gpt_neox.layers.{l}."
        for n in ("input_layernorm", "post_attention_layernorm"):
            w.update({p + n + ".weight": [C], p + n + ".bias": [C]})
        for n, o, i in (("attention.query_key_value", 3 * C, C), ("attention.dense", C, C),
                        ("mlp.dense_h_to_4h", F, C), ("mlp.dense_4h_to_h", C, F)):
            w.update({p + n + ".weight": [o, i], p + n + ".bias": [o]})
    return w


def check(d, want, dtype, cfg_want):
    got = tensors(f"{tmp}/{d}")
    assert set(got) == set(want), set(got) ^ set(want)
    for k, (dt, shape) in got.items():
        assert dt == dtype and shape == want[k], (k, dt, shape)
    cfg = json.load(open(f"{tmp}/{d}/config.json"))
    for k, v in cfg_want.items():
        assert cfg.get(k, "absent") == v, (d, k, cfg.get(k, "absent"), v)


check("smol", llama(576, 1536, 9, 3, 64, 100, 2), "F32", {
    "architectures": ["LlamaForCausalLM"], "model_type": "llama", "hidden_size": 576,
    "intermediate_size": 1536, "num_attention_heads": 9, "num_key_value_heads": 3,
    "num_hidden_layers": 2, "max_position_embeddings": 64, "rms_norm_eps": 1e-05,
    "rope_theta": 100000.0, "rope_scaling": None, "tie_word_embeddings": True, "hidden_act": "silu",
    "attention_bias": False, "mlp_bias": False, "initializer_range": 0.04166666667,
    "torch_dtype": "float32", "head_dim": "absent"})
check("qwen", llama(896, 4864, 14, 2, 64, 100, 2, True), "BF16", {
    "architectures": ["Qwen2ForCausalLM"], "model_type": "qwen2", "num_key_value_heads": 2,
    "rope_theta": 1000000.0, "rms_norm_eps": 1e-06, "tie_word_embeddings": True,
    "use_sliding_window": False, "sliding_window": 32768, "max_window_layers": 24,
    "torch_dtype": "bfloat16"})
check("py70", neox(512, 2048, 100, 2), "F16", {
    "architectures": ["GPTNeoXForCausalLM"], "model_type": "gpt_neox", "rotary_pct": 0.25,
    "rotary_emb_base": 10000.0, "use_parallel_residual": True, "layer_norm_eps": 1e-05,
    "hidden_act": "gelu", "tie_word_embeddings": False, "torch_dtype": "float16"})
check("py160", neox(768, 3072, 100, 2), "F32", {"num_attention_heads": 12, "hidden_size": 768})
mis = llama(32, 128, 4, 2, 4, 40, 1)
mis["lm_head.weight"] = [40, 32]
check("mis", mis, "F32", {"architectures": ["MistralForCausalLM"], "head_dim": 4,
                          "sliding_window": None, "num_key_value_heads": 2})
print("mkmodel_layout: smol, qwen, py70, py160, mis as Hugging Face saves them")

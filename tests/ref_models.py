#!/usr/bin/python3
"""ref_models.py: an independent float64 reference of the causal models normsweep reads, written
from the published definitions (Hugging Face transformers' modeling_gpt2.py, modeling_llama.py,
modeling_qwen2.py, modeling_mistral.py, modeling_gpt_neox.py and their configuration files), not
from normsweep's C code: its own safetensors reader (single file or shards named by
model.safetensors.index.json; F32, F16, BF16), its own config reading with Hugging Face's defaults,
and the forward pass in numpy float64.

Usage:
  ref_models.py compare MODEL_DIR DUMP.nc [--weight-tol 1e-5] [--value-tol 1e-5]
      run the reference over DUMP.nc's token_id and compare every layer's attention_weight (and
      logit when present) over query heads and value (as each query head sees it): prints the
      maximum errors and exits 1 when a tolerance is exceeded.
  ref_models.py expand-gqa SRC_DIR DST_DIR
      write DST_DIR: the same Llama-layout model with plain multi-head attention
      (num_key_value_heads = num_attention_heads), each key/value head's k_proj/v_proj rows (and
      biases) repeated for every query head of its group -- what grouped-query attention means.
"""
import json
import math
import os
import struct
import sys

import numpy as np

# ---------------------------------------------------------------- safetensors

DTYPES = {"F32": (4, "<f4"), "F16": (2, "<f2"), "BF16": (2, None), "F64": (8, "<f8"),
          "I64": (8, "<i8"), "I32": (4, "<i4"), "U8": (1, "u1"), "BOOL": (1, "u1")}


def read_safetensors(path):
    """{name: float64 array} of the float tensors of one file."""
    with open(path, "rb") as f:
        data = f.read()
    (n,) = struct.unpack("<Q", data[:8])
    header = json.loads(data[8:8 + n])
    base = 8 + n
    out = {}
    for name, t in header.items():
        if name == "__metadata__":
            continue
        b, e = t["data_offsets"]
        raw = data[base + b:base + e]
        shape = tuple(t["shape"])
        if t["dtype"] == "BF16":
            u = np.frombuffer(raw, dtype="<u2").astype(np.uint32) << 16
            arr = u.view(np.float32).astype(np.float64)
        elif t["dtype"] in ("F32", "F16", "F64"):
            arr = np.frombuffer(raw, dtype=DTYPES[t["dtype"]][1]).astype(np.float64)
        else:
            continue
        out[name] = arr.reshape(shape)
    return out


def read_weights(d):
    single = os.path.join(d, "model.safetensors")
    if os.path.exists(single):
        return read_safetensors(single)
    with open(os.path.join(d, "model.safetensors.index.json")) as f:
        index = json.load(f)
    tensors = {}
    for shard in sorted(set(index["weight_map"].values())):
        tensors.update(read_safetensors(os.path.join(d, shard)))
    return tensors


def write_safetensors(path, tensors):
    """tensors: {name: float32 array}; F32, header padded to 8 bytes."""
    header, off, blobs = {}, 0, []
    for name in sorted(tensors):
        a = np.ascontiguousarray(tensors[name], dtype="<f4")
        header[name] = {"dtype": "F32", "shape": list(a.shape), "data_offsets": [off, off + a.nbytes]}
        off += a.nbytes
        blobs.append(a.tobytes())
    h = json.dumps(header, separators=(",", ":")).encode()
    h += b" " * ((8 - len(h) % 8) % 8)
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(h)) + h + b"".join(blobs))


# ---------------------------------------------------------------- the definitions

def get(w, *names):
    """The first of names present (head-model exports carry a prefix, base models none)."""
    for n in names:
        if n in w:
            return w[n]
    raise KeyError(names[0])


def layernorm(x, g, b, eps):
    mu = x.mean(-1, keepdims=True)
    var = ((x - mu) ** 2).mean(-1, keepdims=True)
    return (x - mu) / np.sqrt(var + eps) * g + b


def rmsnorm(x, g, eps):
    # LlamaRMSNorm: x * rsqrt(mean(x^2) + eps), then the gain
    return g * (x / np.sqrt((x * x).mean(-1, keepdims=True) + eps))


def gelu_tanh(x):
    return 0.5 * x * (1.0 + np.tanh(math.sqrt(2.0 / math.pi) * (x + 0.044715 * x ** 3)))


ERF = np.vectorize(math.erf)


def gelu_erf(x):
    return 0.5 * x * (1.0 + ERF(x / math.sqrt(2.0)))


def silu(x):
    return x / (1.0 + np.exp(-x))


ACT = {"gelu_new": gelu_tanh, "gelu_pytorch_tanh": gelu_tanh, "gelu": gelu_erf, "silu": silu,
       "swish": silu}


def rotate_half(x):
    h = x.shape[-1] // 2
    return np.concatenate([-x[..., h:], x[..., :h]], axis=-1)


def rope(x, dim, theta):
    """HF apply_rotary_pos_emb on x (heads, L, dim): inv_freq = 1 / theta^(arange(0, dim, 2)/dim),
    emb = cat(freqs, freqs), x cos + rotate_half(x) sin."""
    L = x.shape[1]
    inv = 1.0 / theta ** (np.arange(0, dim, 2, dtype=np.float64) / dim)
    freqs = np.outer(np.arange(L, dtype=np.float64), inv)
    emb = np.concatenate([freqs, freqs], axis=-1)
    return x * np.cos(emb)[None] + rotate_half(x) * np.sin(emb)[None]


def attention(q, k, v, scale):
    """q (H, L, D), k and v (H, L, D) already repeated per query head: logits, weights, output."""
    L = q.shape[1]
    z = np.einsum("hqd,hkd->hqk", q, k) * scale
    mask = np.tril(np.ones((L, L), dtype=bool))
    zm = np.where(mask[None], z, -np.inf)
    zm = zm - zm.max(-1, keepdims=True)
    e = np.exp(zm)
    w = e / e.sum(-1, keepdims=True)
    return z, w, np.einsum("hqk,hkd->hqd", w, v)


def cfg_get(cfg, key, default):
    v = cfg.get(key, default)
    return default if v is None else v


def forward(model_dir, tokens):
    """Per layer (z, w, v): logits and weights (H, L, L), values (H, L, D) per query head."""
    with open(os.path.join(model_dir, "config.json")) as f:
        cfg = json.load(f)
    w = read_weights(model_dir)
    mt = cfg.get("model_type", "gpt2")
    if mt == "gpt2":
        return forward_gpt2(cfg, w, tokens)
    if mt == "gpt_neox":
        return forward_neox(cfg, w, tokens)
    return forward_llama(cfg, w, tokens, mt)


def forward_gpt2(cfg, w, tokens):
    L, C, H = len(tokens), cfg["n_embd"], cfg["n_head"]
    D, eps, out = C // H, cfg["layer_norm_epsilon"], []
    x = get(w, "wte.weight", "transformer.wte.weight")[tokens] + \
        get(w, "wpe.weight", "transformer.wpe.weight")[:L]
    for l in range(cfg["n_layer"]):
        p = lambda n: get(w, "h.%d.%s" % (l, n), "transformer.h.%d.%s" % (l, n))
        h = layernorm(x, p("ln_1.weight"), p("ln_1.bias"), eps)
        qkv = h @ p("attn.c_attn.weight") + p("attn.c_attn.bias")  # Conv1D: x W + b
        q, k, v = (qkv[:, i * C:(i + 1) * C].reshape(L, H, D).transpose(1, 0, 2) for i in range(3))
        z, a, o = attention(q, k, v, 1.0 / math.sqrt(D))
        out.append((z, a, v))
        x = x + o.transpose(1, 0, 2).reshape(L, C) @ p("attn.c_proj.weight") + p("attn.c_proj.bias")
        h = layernorm(x, p("ln_2.weight"), p("ln_2.bias"), eps)
        x = x + gelu_tanh(h @ p("mlp.c_fc.weight") + p("mlp.c_fc.bias")) @ p("mlp.c_proj.weight") \
            + p("mlp.c_proj.bias")
    return out


def linear(w, name, x):
    """nn.Linear: x W^T (+ b when the checkpoint has the bias)."""
    y = x @ w[name + ".weight"].T
    return y + w[name + ".bias"] if name + ".bias" in w else y


def forward_llama(cfg, w, tokens, mt):
    L, C, H = len(tokens), cfg["hidden_size"], cfg["num_attention_heads"]
    KV = cfg_get(cfg, "num_key_value_heads", H)
    D = cfg_get(cfg, "head_dim", C // H)
    eps = cfg_get(cfg, "rms_norm_eps", 1e-6)
    theta = cfg_get(cfg, "rope_theta", 10000.0)
    act = ACT[cfg_get(cfg, "hidden_act", "silu")]
    pre = "model." if "model.embed_tokens.weight" in w else ""
    x = w[pre + "embed_tokens.weight"][tokens]
    out = []
    for l in range(cfg["num_hidden_layers"]):
        n = "%slayers.%d." % (pre, l)
        h = rmsnorm(x, w[n + "input_layernorm.weight"], eps)
        q = linear(w, n + "self_attn.q_proj", h).reshape(L, H, D).transpose(1, 0, 2)
        k = linear(w, n + "self_attn.k_proj", h).reshape(L, KV, D).transpose(1, 0, 2)
        v = linear(w, n + "self_attn.v_proj", h).reshape(L, KV, D).transpose(1, 0, 2)
        q, k = rope(q, D, theta), rope(k, D, theta)
        k, v = np.repeat(k, H // KV, axis=0), np.repeat(v, H // KV, axis=0)  # repeat_kv
        z, a, o = attention(q, k, v, D ** -0.5)
        out.append((z, a, v))
        x = x + linear(w, n + "self_attn.o_proj", o.transpose(1, 0, 2).reshape(L, H * D))
        h = rmsnorm(x, w[n + "post_attention_layernorm.weight"], eps)
        x = x + linear(w, n + "mlp.down_proj",
                       act(linear(w, n + "mlp.gate_proj", h)) * linear(w, n + "mlp.up_proj", h))
    return out


def forward_neox(cfg, w, tokens):
    L, C, H = len(tokens), cfg["hidden_size"], cfg["num_attention_heads"]
    D = C // H
    eps = cfg_get(cfg, "layer_norm_eps", 1e-5)
    rp = cfg_get(cfg, "rope_parameters", {})
    pct = rp.get("partial_rotary_factor", cfg_get(cfg, "rotary_pct", 0.25))
    theta = rp.get("rope_theta", cfg_get(cfg, "rotary_emb_base", 10000.0))
    rot = int(D * pct)  # GPTNeoXAttention's rotary_ndims
    act = ACT[cfg_get(cfg, "hidden_act", "gelu")]
    parallel = cfg_get(cfg, "use_parallel_residual", True)
    pre = "gpt_neox." if "gpt_neox.embed_in.weight" in w else ""
    x = w[pre + "embed_in.weight"][tokens]
    out = []
    for l in range(cfg["num_hidden_layers"]):
        n = "%slayers.%d." % (pre, l)
        h = layernorm(x, w[n + "input_layernorm.weight"], w[n + "input_layernorm.bias"], eps)
        qkv = linear(w, n + "attention.query_key_value", h).reshape(L, H, 3 * D)  # per head
        q, k, v = (qkv[:, :, i * D:(i + 1) * D].transpose(1, 0, 2) for i in range(3))
        q = np.concatenate([rope(q[..., :rot], rot, theta), q[..., rot:]], axis=-1)
        k = np.concatenate([rope(k[..., :rot], rot, theta), k[..., rot:]], axis=-1)
        z, a, o = attention(q, k, v, D ** -0.5)
        out.append((z, a, v))
        att = linear(w, n + "attention.dense", o.transpose(1, 0, 2).reshape(L, C))

        def mlp(y):
            return linear(w, n + "mlp.dense_4h_to_h", act(linear(w, n + "mlp.dense_h_to_4h", y)))
        ln2 = lambda y: layernorm(y, w[n + "post_attention_layernorm.weight"],
                                  w[n + "post_attention_layernorm.bias"], eps)
        if parallel:
            x = x + att + mlp(ln2(x))
        else:
            x = x + att
            x = x + mlp(ln2(x))
    return out


# ---------------------------------------------------------------- commands

def compare(model_dir, nc_path, wtol, vtol):
    import netCDF4
    with netCDF4.Dataset(nc_path) as ds:
        tokens = np.array(ds["token_id"][:], dtype=np.int64)
        got_w = np.array(ds["attention_weight"][:], dtype=np.float64)
        got_v = np.array(ds["value"][:], dtype=np.float64)
        got_z = np.array(ds["logit"][:], dtype=np.float64) if "logit" in ds.variables else None
    ref = forward(model_dir, tokens)
    ew = ev = ez = 0.0
    wmax = 0.0
    L = len(tokens)
    tril = np.tril(np.ones((L, L), dtype=bool))
    for l, (z, a, v) in enumerate(ref):
        ew = max(ew, np.abs(got_w[l] - a).max())
        wmax = max(wmax, a[:, tril].max() if L > 1 else 1.0)
        ev = max(ev, np.abs(got_v[l] - v).max() / max(np.abs(v).max(), 1e-300))
        if got_z is not None:
            gz = got_z[l][:, tril]
            ez = max(ez, np.abs(gz - z[:, tril]).max() / max(np.abs(z[:, tril]).max(), 1e-300))
    print("%s: layers %d, L %d: attention weight max abs err %.3g (largest weight %.3f); value max "
          "rel err %.3g; logit max rel err %s" % (os.path.basename(model_dir.rstrip("/")), len(ref),
                                                  L, ew, wmax, ev,
                                                  "%.3g" % ez if got_z is not None else "-"))
    ok = ew <= wtol and ev <= vtol and (got_z is None or ez <= vtol)
    # attention far from uniform, or the comparison proves little
    ok = ok and (L < 8 or wmax > 0.5)
    return 0 if ok else 1


def expand_gqa(src, dst):
    with open(os.path.join(src, "config.json")) as f:
        cfg = json.load(f)
    w = read_weights(src)
    H = cfg["num_attention_heads"]
    KV = cfg_get(cfg, "num_key_value_heads", H)
    D = cfg_get(cfg, "head_dim", cfg["hidden_size"] // H)
    out = {}
    for name, a in w.items():
        if (".k_proj." in name or ".v_proj." in name) and a.shape[0] == KV * D:
            a = np.repeat(a.reshape((KV, D) + a.shape[1:]), H // KV, axis=0).reshape(
                (H * D,) + a.shape[1:])
        out[name] = a.astype(np.float32)
    cfg["num_key_value_heads"] = H
    os.makedirs(dst, exist_ok=True)
    write_safetensors(os.path.join(dst, "model.safetensors"), out)
    with open(os.path.join(dst, "config.json"), "w") as f:
        json.dump(cfg, f, indent=2)
    return 0


def main(argv):
    if len(argv) >= 4 and argv[1] == "compare":
        wtol = vtol = 1e-5
        rest = argv[4:]
        while rest:
            if rest[0] == "--weight-tol":
                wtol = float(rest[1])
            elif rest[0] == "--value-tol":
                vtol = float(rest[1])
            else:
                break
            rest = rest[2:]
        return compare(argv[2], argv[3], wtol, vtol)
    if len(argv) == 4 and argv[1] == "expand-gqa":
        return expand_gqa(argv[2], argv[3])
    print(__doc__, file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv))

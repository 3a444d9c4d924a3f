#!/usr/bin/python3
"""check_train_torch: the trainer's gradient (tests/train_grad_export) against PyTorch autograd.

Usage: check_train_torch.py DIR [DIR...]   (each DIR written by train_grad_export)

Rebuilds the same GPT-2 in PyTorch, float64, from the exported parameter block -- token +
position embeddings, pre-LayerNorm blocks, causal attention with scale 1/sqrt(D) and the model's
normalizer F applied to each causal row of z / T, tanh GELU, ln_f, the LM head tied to wte, summed
cross-entropy -- and compares the loss and every parameter tensor's gradient with the C ones.
The normalizers are written here independently of the C code: softmax and scalable softmax
(softmax of s log(n) z / T over a row of n keys) through torch.softmax, sparsemax from the sorted
cumulative sums (autograd through the threshold), 1.5-entmax with its threshold found by
bisection and the backward from the closed form d alpha = sqrt(alpha) (dy - sum(sqrt(alpha) dy) /
sum(sqrt(alpha))). Issue 36's two model normalizers whose weights need not sum to 1, from their
defining formulas with autograd through them: softmax1 exp(y_j) / (1 + sum_k exp(y_k)) (E. Miller,
"Attention Is Off By One"), computed with the maximum of y and the implicit 0 logit subtracted
from every exponent, and sigmoid 1 / (1 + exp(-(y_j + b))) with b the model's bias (Ramapuram
et al. 2024), y = z / T.

Exit 0 when every relative error is <= 1e-10, 1 otherwise, 77 when torch is missing.
"""
import math
import os
import sys

try:
    import torch
except ImportError:
    print("check_train_torch: SKIP: python3-torch is not installed")
    sys.exit(77)

torch.set_default_dtype(torch.float64)

# Both sides compute in double; they differ only in the order of operations (BLAS vs ATen
# reductions, sort- vs bisection-found thresholds), i.e. roundings of 1.1e-16 accumulated over a
# graph of depth ~30: observed worst errors are 1e-15..5e-15. 1e-10 leaves a wide margin for other
# BLAS/ATen builds while a wrong term (a missing 1/T, a transposed weight, a dropped residual)
# gives 1e-2..1.
TOL = 1e-10


def sparsemax(z):
    zs, _ = torch.sort(z, descending=True)
    k = torch.arange(1, z.numel() + 1, dtype=z.dtype)
    cs = torch.cumsum(zs, 0)
    support = (1 + k * zs) > cs
    kk = int(support.nonzero().max()) + 1
    tau = (cs[kk - 1] - 1) / kk
    return torch.clamp(z - tau, min=0)


class Entmax15(torch.autograd.Function):
    @staticmethod
    def forward(ctx, y):
        x = y / 2
        lo, hi = float(x.max()) - 1.0, float(x.max())  # sum [x - tau]_+^2 is 1 in [lo, hi]
        for _ in range(200):
            mid = (lo + hi) / 2
            if float(torch.clamp(x - mid, min=0).pow(2).sum()) > 1.0:
                lo = mid
            else:
                hi = mid
        a = torch.clamp(x - (lo + hi) / 2, min=0).pow(2)
        a = a / a.sum()  # the bisection's last ulps
        ctx.save_for_backward(a)
        return a

    @staticmethod
    def backward(ctx, g):
        (a,) = ctx.saved_tensors
        s = a.sqrt()
        d = s * g
        return d - s * d.sum() / s.sum()


def softmax1(y):
    m = torch.clamp(y.max(), min=0.0)  # the implicit logit 0 takes part in the shift
    e = torch.exp(y - m)
    return e / (torch.exp(-m) + e.sum())


def sigmoid(x):
    return 1.0 / (1.0 + torch.exp(-x))


def normalize(z, kind, s, T):
    n = z.numel()
    if kind == "softmax":
        return torch.softmax(z / T, 0)
    if kind == "ssmax":
        return torch.softmax(s * math.log(n) * z / T, 0)
    if kind == "sparsemax":
        return sparsemax(z / T)
    if kind == "entmax15":
        return Entmax15.apply(z / T)
    if kind == "softmax1":
        return softmax1(z / T)
    if kind == "sigmoid":
        return sigmoid(z / T + s)  # s: the normalizer's parameter, here the bias b
    raise ValueError(kind)


def layernorm(x, w, b, eps):
    mu = x.mean(-1, keepdim=True)
    var = ((x - mu) ** 2).mean(-1, keepdim=True)
    return (x - mu) / torch.sqrt(var + eps) * w + b


def gelu(x):
    return 0.5 * x * (1 + torch.tanh(math.sqrt(2 / math.pi) * (x + 0.044715 * x ** 3)))


def run(d):
    meta = {}
    for line in open(os.path.join(d, "meta.txt")):
        k, *v = line.split()
        meta[k] = v
    L, H, C = int(meta["n_layer"][0]), int(meta["n_head"][0]), int(meta["n_embd"][0])
    eps, kind = float(meta["ln_eps"][0]), meta["normalizer"][0]
    s, T = float(meta["param"][0]), float(meta["T"][0])  # param: ssmax's s or sigmoid's b
    toks = [int(t) for t in meta["tokens"]]
    inp, tgt = torch.tensor(toks[:-1]), torch.tensor(toks[1:])
    n = len(inp)
    D = C // H
    block = torch.tensor(memoryview(open(os.path.join(d, "params.f64"), "rb").read()).cast("d").tolist())
    grad_c = torch.tensor(memoryview(open(os.path.join(d, "grads.f64"), "rb").read()).cast("d").tolist())
    P = {}
    for line in open(os.path.join(d, "tensors.txt")):
        name, off, numel, rows, cols = line.split()
        off, numel, rows, cols = int(off), int(numel), int(rows), int(cols)
        t = block[off:off + numel].clone()
        t = t.view(rows, cols) if cols else t
        P[name] = (t.requires_grad_(), off, numel)
    p = {k: v[0] for k, v in P.items()}

    x = p["wte.weight"][inp] + p["wpe.weight"][:n]
    for l in range(L):
        pre = "h.%d." % l
        h = layernorm(x, p[pre + "ln_1.weight"], p[pre + "ln_1.bias"], eps)
        qkv = h @ p[pre + "attn.c_attn.weight"] + p[pre + "attn.c_attn.bias"]
        q, k, v = qkv[:, :C], qkv[:, C:2 * C], qkv[:, 2 * C:]
        heads = []
        for hd in range(H):
            sl = slice(hd * D, (hd + 1) * D)
            z = q[:, sl] @ k[:, sl].T / math.sqrt(D)
            rows = []
            for m in range(n):
                a = normalize(z[m, :m + 1], kind, s, T)
                rows.append(torch.cat([a, torch.zeros(n - m - 1)]))
            heads.append(torch.stack(rows) @ v[:, sl])
        att = torch.cat(heads, 1)
        x = x + att @ p[pre + "attn.c_proj.weight"] + p[pre + "attn.c_proj.bias"]
        h = layernorm(x, p[pre + "ln_2.weight"], p[pre + "ln_2.bias"], eps)
        f = gelu(h @ p[pre + "mlp.c_fc.weight"] + p[pre + "mlp.c_fc.bias"])
        x = x + f @ p[pre + "mlp.c_proj.weight"] + p[pre + "mlp.c_proj.bias"]
    x = layernorm(x, p["ln_f.weight"], p["ln_f.bias"], eps)
    logits = x @ p["wte.weight"].T
    loss = torch.nn.functional.cross_entropy(logits, tgt, reduction="sum")
    loss.backward()

    loss_c = float(meta["loss_sum"][0])
    worst, worst_name = abs(float(loss) - loss_c) / abs(loss_c), "loss"
    for name, (t, off, numel) in P.items():
        gt = t.grad.reshape(-1)
        gc = grad_c[off:off + numel]
        rel = float((gt - gc).norm() / max(float(gt.norm()), 1e-300))
        if rel > worst:
            worst, worst_name = rel, name
    ok = worst <= TOL
    print("%-9s P=%-5g T=%-5g loss %.12f (C %.12f); worst relative error %.3g (%s)%s"
          % (kind, s, T, float(loss), loss_c, worst, worst_name, "" if ok else "  FAIL"))
    return ok


if __name__ == "__main__":
    if len(sys.argv) < 2:
        print(__doc__)
        sys.exit(2)
    results = [run(d) for d in sys.argv[1:]]
    sys.exit(0 if all(results) else 1)

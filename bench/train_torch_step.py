#!/usr/bin/python3
"""train_torch_step: PyTorch doing the training step bench_train times -- the same GPT-2 shape
(token + position embeddings, pre-LayerNorm blocks, causal softmax attention, tanh GELU, ln_f, LM
head tied to wte, vocab 50257), float32, forward + backward + an AdamW update, one thread.

Usage: train_torch_step.py [--layers 4] [--heads 4] [--embd 128] [--ctx 256] [--batch 1]
                            [--reps 5]
Prints `name: value` lines: torch_train_step_tokens_per_s and torch_forward_tokens_per_s (medians
over reps after one warm-up). Needs Debian's python3-torch.
"""
import argparse
import math
import statistics
import sys
import time

try:
    import torch
except ImportError:
    print("train_torch_step: python3-torch is not installed", file=sys.stderr)
    sys.exit(77)

ap = argparse.ArgumentParser()
for k, v in (("layers", 4), ("heads", 4), ("embd", 128), ("ctx", 256), ("batch", 1), ("reps", 5)):
    ap.add_argument("--" + k, type=int, default=v)
a = ap.parse_args()
torch.set_num_threads(1)
torch.manual_seed(0)
V, C, H, T, B = 50257, a.embd, a.heads, a.ctx, a.batch


class Block(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.ln_1, self.ln_2 = torch.nn.LayerNorm(C), torch.nn.LayerNorm(C)
        self.c_attn, self.c_proj = torch.nn.Linear(C, 3 * C), torch.nn.Linear(C, C)
        self.c_fc, self.mlp_proj = torch.nn.Linear(C, 4 * C), torch.nn.Linear(4 * C, C)

    def forward(self, x):
        q, k, v = self.c_attn(self.ln_1(x)).split(C, dim=2)
        q, k, v = (t.view(B, T, H, C // H).transpose(1, 2) for t in (q, k, v))
        z = q @ k.transpose(-2, -1) / math.sqrt(C // H)
        z = z.masked_fill(torch.triu(torch.ones(T, T, dtype=torch.bool), 1), float("-inf"))
        y = (torch.softmax(z, -1) @ v).transpose(1, 2).reshape(B, T, C)
        x = x + self.c_proj(y)
        return x + self.mlp_proj(torch.nn.functional.gelu(self.c_fc(self.ln_2(x)), approximate="tanh"))


class GPT(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.wte, self.wpe = torch.nn.Embedding(V, C), torch.nn.Embedding(T, C)
        self.h = torch.nn.ModuleList(Block() for _ in range(a.layers))
        self.ln_f = torch.nn.LayerNorm(C)

    def forward(self, idx, tgt):
        x = self.wte(idx) + self.wpe(torch.arange(T))
        for blk in self.h:
            x = blk(x)
        logits = self.ln_f(x) @ self.wte.weight.T
        return torch.nn.functional.cross_entropy(logits.view(-1, V), tgt.view(-1))


model = GPT()
opt = torch.optim.AdamW(model.parameters(), lr=1e-3, betas=(0.9, 0.95), weight_decay=0.1)
idx, tgt = torch.randint(0, V, (B, T)), torch.randint(0, V, (B, T))
steps, fwds = [], []
for r in range(a.reps + 1):
    t0 = time.perf_counter()
    opt.zero_grad(set_to_none=True)
    loss = model(idx, tgt)
    loss.backward()
    opt.step()
    t1 = time.perf_counter()
    with torch.no_grad():
        model(idx, tgt)
    t2 = time.perf_counter()
    if r:
        steps.append(t1 - t0)
        fwds.append(t2 - t1)
print("torch %s, %d layers, %d heads, n_embd %d, ctx %d, batch %d, 1 thread"
      % (torch.__version__, a.layers, H, C, T, B))
print("torch_train_step_tokens_per_s: %.1f" % (B * T / statistics.median(steps)))
print("torch_forward_tokens_per_s: %.1f" % (B * T / statistics.median(fwds)))

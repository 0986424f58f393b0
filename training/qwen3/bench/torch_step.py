#!/usr/bin/python3
"""PyTorch peer of BenchmarkTrainStep (training/qwen3/bench_test.go): the same Qwen3-shaped decoder (RMSNorm,
grouped-query attention with per-head q/k RMSNorm, RoPE theta 1e6, SwiGLU, untied LM head; the model of
../shared/bench/torch_qwen3_cpu.py) timing forward + backward + AdamW and a forward pass on fixed tokens.

It reports the median wall time AND the median CPU time (all threads of the process) per step, so that
thread oversubscription shows. Thread counts are explicit: torch intra-op threads = --threads, inter-op 1;
OpenBLAS threads come from OPENBLAS_NUM_THREADS (set it to 1: torch's own threads call BLAS).

Setup (Debian 12): apt-get install -y --no-install-recommends python3-torch libopenblas0-pthread
Usage: OPENBLAS_NUM_THREADS=1 /usr/bin/python3 torch_step.py --threads 2
Last line: "torch train_step_ms=<wall> train_step_cpu_ms=<cpu> forward_ms=<wall> forward_cpu_ms=<cpu> ..."
"""
import argparse
import statistics
import time

import torch
import torch.nn as nn
import torch.nn.functional as F

p = argparse.ArgumentParser()
for name, default in dict(dim=256, layers=4, heads=4, kv=2, batch=8, seq=128, vocab=4096, steps=7, threads=1).items():
    p.add_argument("--" + name, type=int, default=default)
a = p.parse_args()
torch.set_num_threads(a.threads)
torch.set_num_interop_threads(1)
torch.manual_seed(0)
D, L, H, KV, B, S, V = a.dim, a.layers, a.heads, a.kv, a.batch, a.seq, a.vocab
HD, FF = D // H, 3 * D


class RMSNorm(nn.Module):
    def __init__(self, n):
        super().__init__()
        self.weight = nn.Parameter(torch.ones(n))

    def forward(self, x):
        return self.weight * x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + 1e-6)


def rotate(x, cos, sin):
    return x * cos + torch.cat([-x[..., HD // 2:], x[..., :HD // 2]], -1) * sin


class Block(nn.Module):
    def __init__(self):
        super().__init__()
        self.norm1, self.norm2, self.qnorm, self.knorm = RMSNorm(D), RMSNorm(D), RMSNorm(HD), RMSNorm(HD)
        self.q = nn.Linear(D, H * HD, bias=False)
        self.k = nn.Linear(D, KV * HD, bias=False)
        self.v = nn.Linear(D, KV * HD, bias=False)
        self.o = nn.Linear(H * HD, D, bias=False)
        self.gate, self.up, self.down = nn.Linear(D, FF, bias=False), nn.Linear(D, FF, bias=False), nn.Linear(FF, D, bias=False)

    def forward(self, x, cos, sin, causal):
        h = self.norm1(x)
        q = rotate(self.qnorm(self.q(h).view(B, S, H, HD)).transpose(1, 2), cos, sin)
        k = rotate(self.knorm(self.k(h).view(B, S, KV, HD)).transpose(1, 2), cos, sin).repeat_interleave(H // KV, 1)
        v = self.v(h).view(B, S, KV, HD).transpose(1, 2).repeat_interleave(H // KV, 1)
        scores = (q @ k.transpose(-1, -2)) / HD ** 0.5
        attn = scores.masked_fill(causal, float("-inf")).softmax(-1)
        x = x + self.o((attn @ v).transpose(1, 2).reshape(B, S, H * HD))
        h = self.norm2(x)
        return x + self.down(F.silu(self.gate(h)) * self.up(h))


class Decoder(nn.Module):
    def __init__(self):
        super().__init__()
        self.embed = nn.Embedding(V, D)
        self.blocks = nn.ModuleList([Block() for _ in range(L)])
        self.norm = RMSNorm(D)
        self.head = nn.Linear(D, V, bias=False)

    def forward(self, ids):
        freq = 1.0 / (1e6 ** (torch.arange(0, HD, 2).float() / HD))
        angles = torch.arange(S).float()[:, None] * freq[None]
        angles = torch.cat([angles, angles], -1)
        causal = torch.triu(torch.ones(S, S, dtype=torch.bool), 1)
        x = self.embed(ids)
        for blk in self.blocks:
            x = blk(x, angles.cos(), angles.sin(), causal)
        return self.head(self.norm(x))


model = Decoder()
opt = torch.optim.AdamW(model.parameters(), lr=1e-3)
ids = torch.randint(0, V, (B, S))


def timed(fn, n):
    walls, cpus = [], []
    for _ in range(n):
        w0, c0 = time.perf_counter(), time.process_time()
        fn()
        walls.append((time.perf_counter() - w0) * 1e3)
        cpus.append((time.process_time() - c0) * 1e3)
    return statistics.median(walls), statistics.median(cpus)


def step():
    opt.zero_grad()
    logits = model(ids)
    F.cross_entropy(logits[:, :-1].reshape(-1, V), ids[:, 1:].reshape(-1)).backward()
    opt.step()


def forward():
    with torch.no_grad():
        torch.log_softmax(model(ids), -1)


timed(step, 1)  # warm-up
step_wall, step_cpu = timed(step, a.steps)
timed(forward, 1)
fwd_wall, fwd_cpu = timed(forward, a.steps)
print(f"torch {torch.__version__} threads={a.threads} shape dim={D} layers={L} heads={H}/{KV} batch={B} seq={S} vocab={V}")
print(f"torch train_step_ms={step_wall:.0f} train_step_cpu_ms={step_cpu:.0f} forward_ms={fwd_wall:.0f} forward_cpu_ms={fwd_cpu:.0f}")

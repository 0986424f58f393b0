#!/usr/bin/env python3
"""PyTorch side of the GPU benchmarks (training/gpu/run.sh): the same
measurements as `qwen3bench -mode decode` and `-mode trainstep`, on Hugging
Face transformers' Qwen3ForCausalLM with random weights of the same shape.

decode: transformers `generate` (greedy, default dynamic KV cache, eager
PyTorch, no stop token: min_new_tokens = max_new_tokens) at each batch size,
timed with new_tokens and with 1 new token, so prefill and the per-token
decode step separate exactly as in the Go benchmark.

trainstep: forward + backward + AdamW (torch.optim.AdamW defaults, state in the
parameters' dtype) with global-norm clipping 1.0 on batch × seq tokens; loss
is transformers' causal-LM loss (mean next-token NLL), as in the Go benchmark.

Usage: torch_bench.py --shape 1.7b --dtype bf16 --batches 1,16,64 --prompt_len 128 --new_tokens 128
                      --train_batch 16 --seq 512 --out torch_bench.json [--modes decode,trainstep]
Prints progress on stderr and writes one JSON document.
"""
import argparse
import contextlib
import json
import statistics
import sys
import time

import torch

ap = argparse.ArgumentParser()
ap.add_argument("--shape", choices=["tiny", "1.7b"], default="1.7b")
ap.add_argument("--dtype", choices=["bf16", "f32"], default="bf16")
ap.add_argument("--modes", default="decode,trainstep")
ap.add_argument("--batches", default="1,16,64")
ap.add_argument("--prompt_len", type=int, default=128)
ap.add_argument("--new_tokens", type=int, default=128)
ap.add_argument("--train_batch", type=int, default=16)
ap.add_argument("--seq", type=int, default=512)
ap.add_argument("--reps", type=int, default=2)
ap.add_argument("--device", default="cuda" if torch.cuda.is_available() else "cpu")
ap.add_argument("--max_seconds", type=float, default=0, help="stop starting new measurements after this long")
ap.add_argument("--out", default="")
args = ap.parse_args()
t_start = time.time()


def log(*a):
    print(*a, file=sys.stderr, flush=True)


def out_of_time():
    return args.max_seconds > 0 and time.time() - t_start > args.max_seconds


from transformers import Qwen3Config, Qwen3ForCausalLM  # noqa: E402  (after argparse: --help without transformers)
import transformers  # noqa: E402

dev = torch.device(args.device)
dtype = torch.bfloat16 if args.dtype == "bf16" else torch.float32
if args.shape == "1.7b":
    cfg = Qwen3Config(vocab_size=151936, hidden_size=2048, intermediate_size=6144, num_hidden_layers=28,
                      num_attention_heads=16, num_key_value_heads=8, head_dim=128, max_position_embeddings=40960,
                      rms_norm_eps=1e-6, rope_theta=1000000.0, tie_word_embeddings=True, attention_bias=False)
else:  # qwen3.TinyConfig(4096), as qwen3bench -shape tiny
    cfg = Qwen3Config(vocab_size=4096, hidden_size=64, intermediate_size=128, num_hidden_layers=2,
                      num_attention_heads=4, num_key_value_heads=2, head_dim=16, max_position_embeddings=4096,
                      rms_norm_eps=1e-6, rope_theta=10000.0, tie_word_embeddings=True, attention_bias=False)


def sync():
    if dev.type == "cuda":
        torch.cuda.synchronize()


torch.manual_seed(1)
t0 = time.time()
prev = torch.get_default_dtype()
torch.set_default_dtype(dtype)
with (dev if hasattr(dev, "__enter__") else contextlib.nullcontext()):  # torch >= 2.0: allocate on dev directly
    model = Qwen3ForCausalLM(cfg)
torch.set_default_dtype(prev)
model = model.to(dev).eval()
sync()
params = sum(p.numel() for p in model.parameters())
elem = torch.finfo(dtype).bits // 8
report = {"framework": "pytorch", "torch": torch.__version__, "transformers": transformers.__version__,
          "device": torch.cuda.get_device_name() if dev.type == "cuda" else "cpu", "shape": args.shape,
          "dtype": args.dtype, "params": params, "param_bytes": params * elem,
          "attn_implementation": getattr(model.config, "_attn_implementation", None),
          "setup_seconds": time.time() - t0, "decode": [], "trainstep": [], "notes": []}
log(f"torch {torch.__version__} transformers {transformers.__version__} on {report['device']}: "
    f"{params / 1e9:.3f}B parameters ({args.dtype}), attention {report['attn_implementation']}")


def kv_bytes(batch, ctx):
    return 2 * cfg.num_hidden_layers * cfg.num_key_value_heads * cfg.head_dim * ctx * batch * elem


def bench_decode():
    P, N = args.prompt_len, args.new_tokens
    g = torch.Generator().manual_seed(3)
    for b in [int(x) for x in args.batches.split(",")]:
        if out_of_time():
            report["notes"].append(f"decode batch {b} skipped: --max_seconds reached")
            continue
        ids = torch.randint(0, cfg.vocab_size, (b, P), generator=g).to(dev)
        mask = torch.ones_like(ids)

        def call(n):
            sync()
            t = time.perf_counter()
            with torch.no_grad():
                out = model.generate(ids, attention_mask=mask, max_new_tokens=n, min_new_tokens=n, do_sample=False,
                                     pad_token_id=0, use_cache=True)
            sync()
            assert out.shape[1] == P + n, out.shape
            return time.perf_counter() - t

        first = call(N)
        call(1)
        full, pre = [], []
        for _ in range(args.reps):
            full.append(call(N))
            pre.append(call(1))
        gen_s, pre_s = statistics.median(full), statistics.median(pre)
        step = (gen_s - pre_s) / (N - 1)
        kv = kv_bytes(b, P + N // 2)
        r = {"batch": b, "prompt_len": P, "new_tokens": N, "first_call_seconds": first, "generate_seconds": gen_s,
             "prefill_seconds": pre_s, "generate_seconds_all": full, "decode_step_ms": 1000 * step,
             "tokens_per_s": b * N / gen_s, "decode_tokens_per_s": b / step if step > 0 else None,
             "kv_bytes_per_step": kv, "bytes_per_step": report["param_bytes"] + kv}
        report["decode"].append(r)
        log(f"torch decode batch {b}: {r['tokens_per_s']:.1f} tokens/s (decode step {r['decode_step_ms']:.2f} ms, "
            f"prefill {pre_s:.3f} s)")


def bench_trainstep():
    model.train()
    params_list = [p for p in model.parameters() if p.requires_grad]
    opt = torch.optim.AdamW(params_list, lr=1e-4)
    b, s = args.train_batch, args.seq
    g = torch.Generator().manual_seed(5)
    ids = torch.randint(0, cfg.vocab_size, (b, s), generator=g).to(dev)
    losses, times = [], []
    if dev.type == "cuda":
        torch.cuda.reset_peak_memory_stats()
    for i in range(args.reps + 1):
        sync()
        t = time.perf_counter()
        loss = model(input_ids=ids, labels=ids).loss
        loss.backward()
        torch.nn.utils.clip_grad_norm_(params_list, 1.0)
        opt.step()
        opt.zero_grad(set_to_none=True)
        losses.append(float(loss.item()))
        sync()
        times.append(time.perf_counter() - t)
    step_s = statistics.median(times[1:])
    r = {"batch": b, "seq": s, "tokens": b * s, "first_step_seconds": times[0], "step_seconds": step_s,
         "step_seconds_all": times[1:], "tokens_per_s": b * s / step_s, "losses": losses,
         "optimizer": "torch.optim.AdamW (default implementation), state in the parameters' dtype",
         "peak_memory_gb": torch.cuda.max_memory_allocated() / 1e9 if dev.type == "cuda" else None}
    report["trainstep"].append(r)
    log(f"torch train step {b} x {s}: {step_s:.3f} s ({r['tokens_per_s']:.0f} tokens/s), loss {losses[0]:.4f} -> {losses[-1]:.4f}")
    model.eval()


modes = args.modes.split(",")
try:
    if "decode" in modes:
        bench_decode()
    if "trainstep" in modes and not out_of_time():
        bench_trainstep()
except Exception as e:  # keep what was measured
    report["error"] = f"{type(e).__name__}: {e}"
    log("torch_bench:", report["error"])
report["total_seconds"] = time.time() - t_start
text = json.dumps(report, indent=2)
if args.out:
    with open(args.out, "w") as f:
        f.write(text + "\n")
else:
    print(text)
sys.exit(1 if "error" in report else 0)

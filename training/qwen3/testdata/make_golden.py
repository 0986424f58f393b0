#!/usr/bin/env python3
"""Golden data for training/qwen3: a Qwen3ForCausalLM built by Hugging Face
transformers from random weights, its safetensors and config, and the logits it
computes. The Go tests load the weights with this package and compare.

  --shape tiny (default): hidden 64, 2 layers, vocab 512, float32 weights; the
      logits of a left-padded batch at every position and 8 greedy tokens
      (golden_test.go, TestGoldenTransformers). CPU is enough; with CUDA the
      script also records CUDA logits.
  --shape 1.7b: Qwen3-1.7B's shape (28 layers, hidden 2048, vocab 151936),
      bfloat16 weights (about 4 GB on disk), float32 reference logits at a few
      (row, position) pairs of a left-padded batch (the saved bfloat16 weights
      loaded in float32, eager attention, no TF32), the relative error of
      transformers' own bfloat16 forward at those positions, and 8 greedy float32
      tokens with each step's top-1 − top-2 margin (golden_large_test.go,
      TestGoldenTransformersLarge). Meant for a GPU machine (training/gpu/run.sh).
      --layers N shortens it for a quick check.

Needs torch and transformers (>= 4.51, which has Qwen3; 5.x works too).
Usage: python3 make_golden.py [OUTDIR] [--shape tiny|1.7b] [--layers N] [--device cpu|cuda]
(default OUTDIR: golden_tiny or golden_1.7b next to this file)
"""
import argparse
import contextlib
import json
import os
import time

import torch
import transformers
from transformers import Qwen3Config, Qwen3ForCausalLM

here = os.path.dirname(os.path.abspath(__file__))
ap = argparse.ArgumentParser()
ap.add_argument("out", nargs="?", default=None)
ap.add_argument("--shape", choices=["tiny", "1.7b"], default="tiny")
ap.add_argument("--layers", type=int, default=0, help="override the number of layers (quick checks)")
ap.add_argument("--device", default="cuda" if torch.cuda.is_available() else "cpu")
args = ap.parse_args()
out = args.out or os.path.join(here, "golden_tiny" if args.shape == "tiny" else "golden_1.7b")
os.makedirs(out, exist_ok=True)
t_start = time.time()


def on_device(dev):
    """Creates tensors on dev directly (torch >= 2.0); older torch creates them on the CPU."""
    return dev if hasattr(dev, "__enter__") else contextlib.nullcontext()


def perturb_norms(model):
    with torch.no_grad():
        for name, p in model.named_parameters():
            if "norm" in name:  # make the norm weights matter
                p.add_(0.1 * torch.randn_like(p))


def load_saved(dtype, **kw):
    """Loads the model saved in out onto args.device in dtype (the keyword is dtype in transformers 5,
    torch_dtype before)."""
    key = "dtype" if int(transformers.__version__.split(".")[0]) >= 5 else "torch_dtype"
    return Qwen3ForCausalLM.from_pretrained(out, **{key: dtype}, **kw).to(torch.device(args.device)).eval()


def rel_err(got, want):
    got, want = got.double(), want.double()
    return float(((got - want).norm() / want.norm()).item())


def tiny():
    torch.manual_seed(1234)
    cfg = Qwen3Config(vocab_size=512, hidden_size=64, intermediate_size=128, num_hidden_layers=args.layers or 2,
                      num_attention_heads=4, num_key_value_heads=2, head_dim=16, max_position_embeddings=512,
                      rms_norm_eps=1e-6, rope_theta=10000.0, tie_word_embeddings=True, attention_bias=False)
    model = Qwen3ForCausalLM(cfg).eval()
    perturb_norms(model)
    model.save_pretrained(out)  # safetensors (transformers 5 has no safe_serialization argument)

    rows = [[5, 17, 301, 44, 9, 250, 3], [88, 7], [1, 2, 3, 4]]
    width = max(len(r) for r in rows)
    ids = [[0] * (width - len(r)) + r for r in rows]  # left padding
    mask = [[0] * (width - len(r)) + [1] * len(r) for r in rows]
    pos = [[0] * (width - len(r)) + list(range(len(r))) for r in rows]
    with torch.no_grad():
        logits = model(input_ids=torch.tensor(ids), attention_mask=torch.tensor(mask),
                       position_ids=torch.tensor(pos)).logits
        greedy = model.generate(torch.tensor([rows[0]]), attention_mask=torch.ones(1, len(rows[0]), dtype=torch.long),
                                max_new_tokens=8, min_new_tokens=8, do_sample=False, pad_token_id=0)
    golden = {"input_ids": ids, "attention_mask": mask, "position_ids": pos,
              "logits": logits.tolist(), "greedy_prompt": rows[0], "greedy_new": greedy[0, len(rows[0]):].tolist()}
    if torch.cuda.is_available():
        m = model.cuda()
        with torch.no_grad():
            golden["cuda_logits"] = m(input_ids=torch.tensor(ids).cuda(), attention_mask=torch.tensor(mask).cuda(),
                                      position_ids=torch.tensor(pos).cuda()).logits.cpu().tolist()
    return golden


def large():
    dev = torch.device(args.device)
    torch.backends.cuda.matmul.allow_tf32 = False
    torch.backends.cudnn.allow_tf32 = False
    torch.manual_seed(1234)
    cfg = Qwen3Config(vocab_size=151936, hidden_size=2048, intermediate_size=6144, num_hidden_layers=args.layers or 28,
                      num_attention_heads=16, num_key_value_heads=8, head_dim=128, max_position_embeddings=40960,
                      rms_norm_eps=1e-6, rope_theta=1000000.0, tie_word_embeddings=True, attention_bias=False)
    t0 = time.time()
    with on_device(dev):
        model = Qwen3ForCausalLM(cfg)
    model = model.to(dev).eval()
    perturb_norms(model)
    model = model.to(torch.bfloat16)  # the saved weights; the float32 reference upcasts exactly these
    init_s = time.time() - t0
    t0 = time.time()
    model.save_pretrained(out)
    save_s = time.time() - t0

    g = torch.Generator().manual_seed(7)
    width = 16
    rows = [torch.randint(0, cfg.vocab_size, (width,), generator=g).tolist(),
            torch.randint(0, cfg.vocab_size, (9,), generator=g).tolist()]
    ids = [[0] * (width - len(r)) + r for r in rows]
    mask = [[0] * (width - len(r)) + [1] * len(r) for r in rows]
    pos = [[0] * (width - len(r)) + list(range(len(r))) for r in rows]
    check = [[0, 0], [0, width - 1], [1, width - len(rows[1])], [1, width - 1]]
    inputs = dict(input_ids=torch.tensor(ids, device=dev), attention_mask=torch.tensor(mask, device=dev),
                  position_ids=torch.tensor(pos, device=dev))

    def at_checks(logits):
        return torch.stack([logits[i, j].float().cpu() for i, j in check])

    # The references come from the saved files, loaded as a user loads them. The in-memory model would be
    # wrong: .to(torch.bfloat16) also rounds RoPE's inverse frequencies (a floating-point buffer) to bfloat16,
    # and .float() cannot restore them, so every position but 0 would be rotated off (a relative error of
    # ~3e-3 in float32 logits, seen on an H200); from_pretrained computes them afresh in float32.
    del model
    with torch.no_grad():
        model = load_saved(torch.bfloat16)
        bf16 = at_checks(model(**inputs).logits)  # transformers' own bfloat16 run (default attention)
        del model
        model = load_saved(torch.float32, attn_implementation="eager")
        inv_freq_dtype = str(model.model.rotary_emb.inv_freq.dtype)
        f32 = at_checks(model(**inputs).logits)
        prompt = torch.tensor([rows[0]], device=dev)
        gen = model.generate(prompt, attention_mask=torch.ones_like(prompt), max_new_tokens=8, min_new_tokens=8,
                             do_sample=False, pad_token_id=0, output_scores=True, return_dict_in_generate=True)
    margins = []
    for s in gen.scores:
        top = torch.topk(s[0].float(), 2).values
        margins.append(float(top[0] - top[1]))
    return {"shape": "1.7b", "num_hidden_layers": cfg.num_hidden_layers, "rope_inv_freq_dtype": inv_freq_dtype,
            "input_ids": ids, "attention_mask": mask, "position_ids": pos, "check": check,
            "logits_f32": [[float(f"{x:.7g}") for x in row] for row in f32.tolist()],
            "torch_bf16_rel_err": [rel_err(bf16[k], f32[k]) for k in range(len(check))],
            "greedy_prompt": rows[0], "greedy_new": gen.sequences[0, width:].tolist(), "greedy_margins": margins,
            "seconds": {"init": init_s, "save": save_s}}


golden = tiny() if args.shape == "tiny" else large()
golden["versions"] = {"torch": torch.__version__, "transformers": transformers.__version__,
                      "device": torch.cuda.get_device_name() if args.device.startswith("cuda") else "cpu"}
golden.setdefault("seconds", {})["total"] = time.time() - t_start
with open(os.path.join(out, "golden.json"), "w") as f:
    json.dump(golden, f)
print("wrote", out, json.dumps({k: golden[k] for k in ("versions", "seconds")}),
      "torch bf16 rel err:", golden.get("torch_bf16_rel_err"))

#!/usr/bin/env python3
"""Summary of a training/gpu/run.sh run: reads the result files of one run
directory and prints a Markdown report (ratios against PyTorch, the
memory-bandwidth bound of decoding, correctness checks, the GRPO step
breakdown), and writes the key numbers as JSON. Standard library only.

Usage: summary.py RESULTS_DIR [--gpu "NVIDIA H100 80GB HBM3"] [--json summary.json]
"""
import argparse
import json
import os
import re

# Peak memory bandwidth (bytes/s) by GPU name, from NVIDIA's data sheets.
BANDWIDTH = [  # (substring test, bandwidth, label), first match wins
    (lambda n: "H200" in n, 4.8e12, "H200 (4.8 TB/s)"),
    (lambda n: "H100" in n and "NVL" in n, 3.9e12, "H100 NVL (3.9 TB/s)"),
    (lambda n: "H100" in n and "PCIE" in n.upper(), 2.0e12, "H100 PCIe (2.0 TB/s)"),
    (lambda n: "H100" in n, 3.35e12, "H100 SXM (3.35 TB/s)"),
    (lambda n: "A100" in n and "80GB" in n, 2.0e12, "A100 80GB (2.0 TB/s)"),
    (lambda n: "A100" in n, 1.55e12, "A100 40GB (1.55 TB/s)"),
]


def bandwidth(gpu):
    for test, bw, label in BANDWIDTH:
        if test(gpu or ""):
            return bw, label
    return None, "unknown GPU: no bandwidth bound"


def load(d, name):
    try:
        with open(os.path.join(d, name)) as f:
            return json.load(f)
    except (OSError, ValueError):
        return None


def read(d, name):
    try:
        with open(os.path.join(d, name), errors="replace") as f:
            return f.read()
    except OSError:
        return ""


def read_jsonl(d, name):
    """The JSON records of a .jsonl file, skipping lines that do not parse (a run cut short)."""
    recs = []
    for line in read(d, name).strip().splitlines():
        try:
            recs.append(json.loads(line))
        except ValueError:
            pass
    return recs


def fmt(x, spec=".3g"):
    if x is None:
        return "–"
    if isinstance(x, str):
        return x
    return format(x, spec)


def test_status(log, name):
    m = re.search(r"--- (PASS|FAIL|SKIP): %s\b" % re.escape(name), log)
    return m.group(1) if m else ("not run" if not log else "no result")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("dir")
    ap.add_argument("--gpu", default="")
    ap.add_argument("--json", default="")
    a = ap.parse_args()
    d = a.dir
    gpu = a.gpu or read(d, "gpu_name.txt").strip()
    bw, bw_label = bandwidth(gpu)
    summary = {"gpu": gpu, "bandwidth_bytes_per_s": bw, "bandwidth_label": bw_label}
    lines = [f"# GPU run summary", "", f"GPU: {gpu or 'none (dry run)'}; memory-bandwidth bound: {bw_label}", ""]

    # Steps.
    status = read(d, "status.tsv").strip().splitlines()
    if status:
        mem = []  # (epoch seconds, MiB in use) from run.sh's nvidia-smi sampler
        for row in read(d, "gpu_memory.txt").splitlines():
            try:
                t, mib = row.split()
                mem.append((int(t), int(mib)))
            except ValueError:
                pass
        lines += ["## Steps", "", "| step | result | seconds | peak GPU memory MiB | note |", "|---|---|---|---|---|"]
        steps = []
        for row in status:
            f = row.split("\t") + ["", "", "", "", "", ""]
            peak = None
            if f[4].isdigit() and f[5].isdigit():
                inside = [m for t, m in mem if int(f[4]) <= t <= int(f[5])]
                peak = max(inside) if inside else None
            lines.append(f"| {f[0]} | {f[1]} | {f[2]} | {fmt(peak, '.0f')} | {f[3]} |")
            steps.append({"step": f[0], "result": f[1], "seconds": f[2], "note": f[3], "peak_gpu_memory_mib": peak})
        summary["steps"] = steps
        rest = [st["step"] for st in steps if st["result"] == "skipped" and st["note"].startswith("budget")]
        rest += [st["step"] for st in steps if st["result"] == "timeout"]
        if rest:
            summary["rerun"] = "GPU_STEPS=" + ",".join(rest) + " bash training/gpu/run.sh"
            lines += ["", f"Out of time for {', '.join(rest)}: run `{summary['rerun']}` (a fresh machine: add "
                      "golden_py_tiny,golden_py_large before go_golden_* steps)."]
        lines.append("")

    # Correctness.
    lines += ["## Correctness", ""]
    golden_log = read(d, "go_golden_notf32.log")
    for t in ("TestGoldenTransformers", "TestGoldenTransformersLarge"):
        lines.append(f"- {t} (XLA, TF32 off): {test_status(golden_log, t)}")
    tf32_log = read(d, "go_golden_tf32.log")
    if tf32_log:
        lines.append(f"- TestGoldenTransformers (XLA, TF32 on, tolerance 5e-3): {test_status(tf32_log, 'TestGoldenTransformers')}")
    gl = load(d, "golden_large.json")
    if gl:
        for dt in ("Float32", "BFloat16"):
            errs = gl.get(dt + "_rel_err")
            if errs:
                lines.append(f"  - 1.7B-shaped {dt} logits vs transformers float32: worst relative error {max(errs):.2e} "
                             f"(tolerance {gl.get(dt + '_tolerance', 0):.1e}; transformers' own bf16: "
                             f"{max(gl.get('torch_bf16_rel_err') or [0]):.2e})")
        if "greedy_go" in gl:
            same = gl["greedy_go"] == gl["greedy_transformers"]
            lines.append(f"  - greedy generation with the KV cache (float32): {'identical' if same else 'DIFFERENT'} "
                         f"({gl['greedy_go']} vs {gl['greedy_transformers']})")
        summary["golden_large"] = {k: v for k, v in gl.items() if k.endswith("_rel_err") or k.startswith("greedy")}
    suite = read(d, "go_qwen3_suite.log")
    if suite:
        fails = re.findall(r"--- FAIL: (\S+)", suite)
        ok = re.search(r"^(ok|PASS)\b", suite, re.M) is not None and not fails
        lines.append(f"- whole training/qwen3 test suite on XLA (TF32 off): {'PASS' if ok else 'FAIL ' + ' '.join(fails) if fails else 'no result'}")
    for mode in ("notf32", "tf32"):
        c = load(d, f"grpo_compare_{mode}.json")
        log = read(d, f"grpo_compare_{mode}.log")
        if not c and not log:
            continue
        lines.append(f"- GRPO step CPU vs GPU ({'TF32 off' if mode == 'notf32' else 'TF32 on'}): "
                     f"{test_status(log, 'TestGRPOStepMatchesCPU')}")
        for case in ("fresh-old", "old-ref-kl"):
            r = (c or {}).get(case)
            if r:
                lines.append(f"  - {case}: loss {r['loss_other']:.7g} vs {r['loss_cpu']:.7g} (rel {r['loss_rel_err']:.1e}), "
                             f"grad norm {r['grad_norm_other']:.6g} vs {r['grad_norm_cpu']:.6g}, worst gradient rel "
                             f"{r['worst_grad_rel_err']:.1e} ({r['worst_grad_tensor']}), AdamW update flips "
                             f"{r['update_flip_fraction']:.1e}; tolerances {c.get('tolerances')}")
        summary["grpo_compare_" + mode] = {k: {kk: vv for kk, vv in v.items() if kk != "per_tensor_grad_update_rel_err"}
                                           for k, v in (c or {}).items() if isinstance(v, dict) and "loss_cpu" in v}
    lines.append("")

    # Decode.
    go, pt = load(d, "go_decode.json"), load(d, "torch_bench.json")
    if go or pt:
        shape = (go or pt or {}).get("shape")
        lines += [f"## Decode ({shape}-shaped, {(go or pt or {}).get('dtype')}) vs transformers generate", "",
                  "| batch | Go tokens/s | transformers tokens/s | ratio (goal ≥ 3) | Go decode step ms | transformers "
                  "decode step ms | bound step ms | Go % of bound (goal ≥ 50) | transformers % of bound |",
                  "|---|---|---|---|---|---|---|---|---|"]
        gres = {r["batch"]: r for r in (go or {}).get("results") or []}
        pres = {r["batch"]: r for r in (pt or {}).get("decode") or []}
        rows = []
        for b in sorted(set(gres) | set(pres)):
            g, p = gres.get(b, {}), pres.get(b, {})
            ratio = g["tokens_per_s"] / p["tokens_per_s"] if g and p else None
            nbytes = g.get("bytes_per_step") or p.get("bytes_per_step")
            bound_ms = 1000 * nbytes / bw if bw and nbytes else None
            gfrac = bound_ms / g["decode_step_ms"] if bound_ms and g.get("decode_step_ms") else None
            pfrac = bound_ms / p["decode_step_ms"] if bound_ms and p.get("decode_step_ms") else None
            lines.append(f"| {b} | {fmt(g.get('tokens_per_s'), '.1f')} | {fmt(p.get('tokens_per_s'), '.1f')} | "
                         f"{fmt(ratio, '.2f')} | {fmt(g.get('decode_step_ms'), '.2f')} | {fmt(p.get('decode_step_ms'), '.2f')} | "
                         f"{fmt(bound_ms, '.2f')} | {fmt(gfrac and 100 * gfrac, '.0f')} | {fmt(pfrac and 100 * pfrac, '.0f')} |")
            rows.append({"batch": b, "go_tokens_per_s": g.get("tokens_per_s"), "torch_tokens_per_s": p.get("tokens_per_s"),
                         "ratio": ratio, "go_decode_step_ms": g.get("decode_step_ms"),
                         "torch_decode_step_ms": p.get("decode_step_ms"), "bound_step_ms": bound_ms,
                         "go_fraction_of_bound": gfrac, "torch_fraction_of_bound": pfrac,
                         "go_prefill_s": g.get("prefill_seconds"), "torch_prefill_s": p.get("prefill_seconds"),
                         "go_first_call_s": g.get("first_call_seconds")})
        summary["decode"] = rows
        lines += ["", "tokens/s: batch × new tokens / whole generate call (prefill included); decode step: "
                  "(T(new tokens) − T(1 token)) / (new tokens − 1); bound: (weights + KV cache at the average context) "
                  "/ peak bandwidth.", ""]
        for name, rep in (("Go", go), ("transformers", pt)):
            if rep and rep.get("error"):
                lines.append(f"- {name} decode error: {rep['error']}")

    # Train step.
    gt = load(d, "go_trainstep.json")
    if gt or pt:
        g = ((gt or {}).get("results") or [{}])[0]
        p = ((pt or {}).get("trainstep") or [{}])[0]
        ratio = g["step_seconds"] / p["step_seconds"] if g.get("step_seconds") and p.get("step_seconds") else None
        lines += ["## Forward + backward + AdamW", "",
                  "| tokens | Go s/step | PyTorch eager s/step | Go / PyTorch (goal ≤ 1.0) | Go first step (compile) s | PyTorch peak GB |",
                  "|---|---|---|---|---|---|",
                  f"| {g.get('batch', p.get('batch'))} × {g.get('seq', p.get('seq'))} | {fmt(g.get('step_seconds'))} | "
                  f"{fmt(p.get('step_seconds'))} | {fmt(ratio, '.2f')} | {fmt(g.get('first_step_seconds'), '.1f')} | "
                  f"{fmt(p.get('peak_memory_gb'), '.1f')} |", ""]
        summary["trainstep"] = {"go_step_s": g.get("step_seconds"), "torch_step_s": p.get("step_seconds"), "ratio": ratio,
                                "go_first_step_s": g.get("first_step_seconds"), "go_losses": g.get("losses"),
                                "torch_losses": p.get("losses")}
        if gt and gt.get("error"):
            lines.append(f"- Go train step error: {gt['error']}")
        if pt and pt.get("error"):
            lines.append(f"- PyTorch error: {pt['error']}")

    # GRPO step.
    gs = load(d, "grpo_step.json")
    if gs:
        lines += [f"## Full GRPO step ({(gs.get('extra') or {}).get('questions')} questions × "
                  f"{(gs.get('extra') or {}).get('generations')} generations, {gs.get('params', 0) / 1e9:.2f}B parameters, "
                  f"{gs.get('dtype')})", "",
                  "| step | total s | rollout s | generation s | environment s | loss+backward+update s | generated tokens/s | turns/episode | reward |",
                  "|---|---|---|---|---|---|---|---|---|"]
        for m in gs.get("results") or []:
            lines.append(f"| {fmt(m.get('step'), '.0f')} | {fmt(m.get('step_time'))} | {fmt(m.get('time/rollout'))} | "
                         f"{fmt(m.get('time/generation'))} | {fmt(m.get('time/environment'))} | {fmt(m.get('time/loss_backward'))} | "
                         f"{fmt(m.get('tokens/s'), '.0f')} | {fmt(m.get('turns/mean'), '.2f')} | {fmt(m.get('reward'))} |")
        lines += [""] + [f"- {n}" for n in gs.get("notes") or []]
        if gs.get("error"):
            lines.append(f"- error: {gs['error']}")
        lines.append("")
        summary["grpo_step"] = gs.get("results")

    # Compile-time probe (issue 53 item 2).
    probes = [(n, load(d, f"compile_{n}.json")) for n in ("default", "autotune0", "triton", "notriton", "cache1", "cache2")]
    if any(r for _, r in probes):
        lines += ["## Compile-time probe: a tiny training step's first call (compilation + 1 step)", "",
                  "| XLA flags | first step s | later step s |", "|---|---|---|"]
        flags = {"default": "the project's (qwen3.DefaultXLAFlags; before 2026-11-28 XLA's own)",
                 "autotune0": "--xla_gpu_autotune_level=0", "triton": "--xla_gpu_enable_triton_gemm=true",
                 "notriton": "--xla_gpu_enable_triton_gemm=false",
                 "cache1": "--xla_gpu_per_fusion_autotune_cache_dir (empty cache)",
                 "cache2": "--xla_gpu_per_fusion_autotune_cache_dir (filled by the run before)"}
        summary["compile_probe"] = {}
        for n, r in probes:
            if not r:
                continue
            res = ((r or {}).get("results") or [{}])[0]
            lines.append(f"| {flags[n]} | {fmt(res.get('first_step_seconds'), '.2f')} | {fmt(res.get('step_seconds'), '.4f')} |")
            summary["compile_probe"][n] = {"first_step_s": res.get("first_step_seconds"), "step_s": res.get("step_seconds"),
                                           "error": (r or {}).get("error")}
        lines.append("")

    # Short training run.
    recs = read_jsonl(d, "train_tiny_metrics.jsonl")
    tlog = read(d, "train_tiny.log")
    if recs or tlog:
        lines += ["## Short GRPO run with `train` on the GPU backend (tiny preset)", ""]
        if recs:
            lines.append("| step | reward | success | loss | grad norm | step s |")
            lines.append("|---|---|---|---|---|---|")
            for r in recs:
                lines.append(f"| {fmt(r.get('step'), '.0f')} | {fmt(r.get('reward'))} | {fmt(r.get('success_rate'))} | "
                             f"{fmt(r.get('loss'))} | {fmt(r.get('grad_norm'))} | {fmt(r.get('step_time'))} |")
        m = re.search(r"model \(greedy\): .*", tlog)
        if m:
            lines.append("")
            lines.append(f"- evaluation: {m.group(0)}")
        summary["train_tiny"] = recs
        lines.append("")

    # The notebook's preset on the GPU backend.
    plog = read(d, "train_preset.log")
    if plog:
        st = next((st for st in summary.get("steps", []) if st["step"] == "train_preset"), {})
        secs, result = st.get("seconds"), st.get("result")
        lines += ["## The notebook's preset on the GPU backend (`train -preset tiny -seed 42 all`)", "",
                  f"- wall time: {fmt(secs)} s ({fmt(result)}; the CPU numbers are in BENCHMARKS.md, \"notebooks — wall time\")"]
        evals = re.findall(r"\b(random|untrained|sft|grpo) +on ([a-z_]+): +(greedy [^\r\n]*)", plog)
        lines += [f"- {p} on {sp}: {r}" for p, sp, r in evals]
        times = [r["step_time"] for r in read_jsonl(d, "train_preset_metrics.jsonl") if "step_time" in r]
        if times:
            lines.append(f"- GRPO step: mean {sum(times) / len(times):.3f} s over {len(times)} logged steps")
        summary["train_preset"] = {"seconds": secs, "result": result, "evaluations": evals, "grpo_step_times": times}
        lines.append("")

    text = "\n".join(lines)
    print(text)
    if a.json:
        with open(a.json, "w") as f:
            json.dump(summary, f, indent=2)


if __name__ == "__main__":
    main()

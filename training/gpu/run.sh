#!/usr/bin/env bash
# The GPU kit: every GPU check and benchmark of issue 9 (part A) in one run,
# on a machine with an NVIDIA GPU, PyTorch, transformers and JAX's CUDA PJRT
# plugin (jax-cuda13-pjrt) but no Go toolchain: the binaries come from
# training/gpu/bundle/bin.tgz, made by build.sh on a machine with Go.
#
#   bash training/gpu/run.sh                  (results in $OUT, else training/gpu/out)
#   GPU_DRYRUN=1 bash training/gpu/run.sh     (no GPU: backend "go", tiny shapes; python parts
#                                              only where torch and transformers import)
#   GPU_STEPS='golden*,go_decode' bash training/gpu/run.sh   (only these steps: names or glob patterns)
#   GPU_GRPO_SHAPE=tiny                       (the GRPO step with the tiny preset instead of 1.7B-shaped layers)
#
# Steps, in order of what is least known (a GPU machine is lent rarely, ~15
# minutes in all with its start: one call of <= 9 minutes), each with its own
# time limit inside a total budget (GPU_BUDGET_S, default 540 s: the device
# tool allows 600 s per command), continuing after failures; every output
# line is stamped with the seconds since its step began:
#   xla_smoke                        one tiny generation on the XLA backend (else the Go GPU steps are skipped)
#   train_preset                     the notebook's preset (`train -preset tiny -seed 42 all`) on the GPU
#                                    backend, timed, with compile/programs and compile/seconds in its metrics
#   grpo_step                        full GRPO steps of 1.7B-shaped layers (8 questions x 4 generations,
#                                    max_new_tokens 64, 4-turn episodes, with the environment; 3 steps)
#   compile_default, compile_autotune0, compile_triton
#                                    a tiny training step's first call (compilation) with the project's
#                                    XLA flags (Triton GEMMs off), autotuning off, Triton GEMMs on;
#   compile_cache1, compile_cache2   the same twice with XLA's persistent autotuning cache
#   go_decode, torch_bench           decode throughput at batch 1, 16, 64 (1.7B-shaped, bf16), Go vs
#                                    transformers generate; PyTorch eager forward+backward+AdamW, 16 x 512
#   go_trainstep                     Go forward+backward+AdamW, 16 x 512 tokens
#   train_tiny                       a short real run of `train` (tiny model) on the GPU backend
#   golden_py_tiny, golden_py_large  transformers golden data: tiny random Qwen3 and a
#                                    Qwen3-1.7B-shaped random model (bf16, ~4 GB on local disk)
#   go_golden_notf32                 TestGoldenTransformers + TestGoldenTransformersLarge on XLA, TF32 off
#                                    (logits in f32 and bf16, greedy generation with the KV cache)
#   grpo_compare_notf32              one GRPO loss + gradient + AdamW step, CPU vs GPU in one process
#   grpo_compare_tf32, go_golden_tf32, qwen3_suite   the same checks with TF32 on; the whole
#                                    training/qwen3 test suite on XLA
# Then summary.py writes summary.md / summary.json (ratios, memory-bandwidth bound from the GPU's
# name) and everything is packed into results.tar.gz. $OUT receives run.log, summary.md,
# summary.json and results.tar.gz (the device tool brings back at most 8 files).
set -uo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
cd "$root" || exit 1
start=$(date +%s)
dry="${GPU_DRYRUN:-0}"
budget="${GPU_BUDGET_S:-540}"
only="${GPU_STEPS:-}"
out="${OUT:-$root/training/gpu/out}"
mkdir -p "$out"
: > "$out/run.log"
exec > >(tee -a "$out/run.log") 2>&1
R="$(mktemp -d /tmp/gpukit-results.XXXXXX)"   # result files, packed at the end
BIN="$(mktemp -d /tmp/gpukit-bin.XXXXXX)"
: > "$R/status.tsv"
export GOSQLENV_DATA_DIR="${GOSQLENV_DATA_DIR:-/tmp/gpukit-data/bundled}"   # the bundled SQL dataset (generated, ~1 s)
export PYTHONUNBUFFERED=1
elapsed() { echo $(( $(date +%s) - start )); }
note() { printf '%s\t%s\t%s\t%s\t%s\t%s\n' "$1" "$2" "$3" "$4" "${5:-}" "${6:-}" >> "$R/status.tsv"; }  # name result s note [start end]
selected() { # GPU_STEPS: comma-separated step names or glob patterns (golden*)
  [ -z "$only" ] && return 0
  local w ws
  IFS=, read -ra ws <<< "$only"
  for w in "${ws[@]}"; do
    # shellcheck disable=SC2053  # $w is a pattern on purpose
    [[ "$1" == $w ]] && return 0
  done
  return 1
}

# step NAME LIMIT_S[:MIN_S] LOG CMD...: runs CMD under a time limit (shortened
# to the budget left; skipped when less than MIN_S is left), its output to the
# terminal and to $R/LOG, and records the result.
step() {
  local name="$1" limit="${2%%:*}" min=15 log="$3"
  [[ "$2" == *:* ]] && min="${2##*:}"
  shift 3
  selected "$name" || return 0
  local left=$(( start + budget - $(date +%s) ))
  if (( left < min )); then
    echo "=== $name: skipped, ${left}s of the ${budget}s budget left (needs ${min}s): run it again with GPU_STEPS=$name"
    note "$name" skipped 0 "budget: ${left}s left, needs ${min}s"
    return 0
  fi
  (( limit > left )) && limit=$left
  echo "=== $name (limit ${limit}s; $(elapsed)s elapsed; $(date -u +%H:%M:%S) UTC) ==="
  local t0 rc res
  t0=$(date +%s)
  # Progress lines ("\r…") become lines of their own, each stamped with the
  # seconds since the step began, so run.log shows every phase as it happens.
  timeout -k 10 "$limit" "$@" 2>&1 | stdbuf -o0 tr '\r' '\n' | stamp "$t0" | tee "$R/$log"
  rc=${PIPESTATUS[0]}
  case $rc in
    0) res=ok ;;
    124 | 137) res=timeout ;;
    *) res="fail(rc=$rc)" ;;
  esac
  echo "=== $name: $res in $(( $(date +%s) - t0 ))s"
  note "$name" "$res" $(( $(date +%s) - t0 )) "log $log" "$t0" "$(date +%s)"
  return "$rc"
}
skip() { selected "$1" || return 0; echo "=== $1: skipped ($2)"; note "$1" skipped 0 "$2"; }
# stamp T0: prefixes each non-empty line with the seconds since T0.
stamp() { local line; while IFS= read -r line; do [ -n "$line" ] && printf '[%4ds] %s\n' $(( $(date +%s) - $1 )) "$line"; done; }

# ---- binaries ----
if [ ! -f training/gpu/bundle/bin.tgz ] && command -v go >/dev/null; then
  echo "no bundle: building it (training/gpu/build.sh)"
  bash training/gpu/build.sh || { echo "run.sh: build failed"; exit 1; }
fi
if ! tar -C "$BIN" -xzf training/gpu/bundle/bin.tgz; then
  echo "run.sh: training/gpu/bundle/bin.tgz is missing: run training/gpu/build.sh on a machine with Go and carry training/gpu/bundle"
  exit 1
fi
cat "$BIN/MANIFEST"

# ---- python with torch + transformers, and the CUDA plugin of its JAX ----
py=""
for c in ${GPU_PYTHON:-} python3 /opt/torch/.venv/bin/python3 /usr/bin/python3; do
  if command -v "$c" >/dev/null && "$c" -c 'import torch, transformers' 2>/dev/null; then py="$c"; break; fi
done
site_of_plugin() { # prints the site-packages holding jax_plugins/xla_cuda13, if any
  local c
  for c in ${GPU_PYTHON:-} "$py" python3 /opt/torch/.venv/bin/python3 /usr/bin/python3; do
    if [ -z "$c" ] || ! command -v "$c" >/dev/null; then continue; fi
    "$c" - <<'EOF' 2>/dev/null && return 0
import importlib.util, os, sys
spec = importlib.util.find_spec("jax_plugins.xla_cuda13")
if not spec or not spec.submodule_search_locations:
    sys.exit(1)
print(os.path.dirname(os.path.dirname(list(spec.submodule_search_locations)[0])))
EOF
  done
  local d
  for d in /opt/*/.venv/lib/python3*/site-packages /usr/local/lib/python3*/dist-packages /usr/lib/python3/dist-packages \
           "$HOME"/.local/lib/python3*/site-packages; do
    [ -f "$d/jax_plugins/xla_cuda13/xla_cuda_plugin.so" ] && { echo "$d"; return 0; }
  done
  return 1
}

gpu_name=""
if [ "$dry" = 1 ]; then
  echo "GPU_DRYRUN=1: backend go, tiny shapes"
  XLA=go
  XLA_STRICT=go
  export GOMLX_BACKEND=go
else
  nvidia-smi || echo "run.sh: nvidia-smi failed"
  gpu_name="$(nvidia-smi --query-gpu=name --format=csv,noheader 2>/dev/null | sed -n 1p)"
  sp="$(site_of_plugin)" || { echo "run.sh: no jax_plugins/xla_cuda13 found (pip install 'jax[cuda13]'); set GPU_PYTHON"; sp=""; }
  plugin="$sp/jax_plugins/xla_cuda13/xla_cuda_plugin.so"
  echo "CUDA PJRT plugin: $plugin"
  # GOPJRT_CUDA_CHECKS=0: go-xla v0.4.13 warns "Can't find nvidia/ subdirectory next to the cuda plugin ... in \"\""
  # on every start although LD_LIBRARY_PATH (below) finds the libraries (seen on the first H200 run).
  export GOMLX_BACKEND="xla:$plugin" GOMLX_NO_AUTO_INSTALL=1 GOPJRT_CUDA_CHECKS=0
  libs=""
  for d in "$sp"/nvidia/*/lib; do [ -d "$d" ] && libs="${libs:+$libs:}$d"; done
  export LD_LIBRARY_PATH="${libs}${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
  if [ -d "$sp/nvidia/cu13" ]; then
    export XLA_FLAGS="${XLA_FLAGS:+$XLA_FLAGS }--xla_gpu_cuda_data_dir=$sp/nvidia/cu13"
  elif [ -d /usr/local/cuda ]; then
    export XLA_FLAGS="${XLA_FLAGS:+$XLA_FLAGS }--xla_gpu_cuda_data_dir=/usr/local/cuda"
  fi
  XLA="xla:$plugin"
  XLA_STRICT="xla:$plugin,notf32"
  echo "GOMLX_BACKEND=$GOMLX_BACKEND"
  echo "LD_LIBRARY_PATH=$LD_LIBRARY_PATH"
  echo "XLA_FLAGS=${XLA_FLAGS:-}"
fi
echo "$gpu_name" > "$R/gpu_name.txt"
if [ "$dry" != 1 ] && command -v nvidia-smi >/dev/null; then
  # GPU memory in use (MiB) every 2 s as "epoch-seconds MiB": summary.py gives each step its peak.
  while sleep 2; do
    echo "$(date +%s) $(nvidia-smi --query-gpu=memory.used --format=csv,noheader,nounits 2>/dev/null | sed -n 1p)"
  done > "$R/gpu_memory.txt" &
  smi_pid=$!
  trap 'kill "$smi_pid" 2>/dev/null' EXIT
fi
echo "python: ${py:-none with torch+transformers}"
if [ -n "$py" ]; then
  "$py" - <<'EOF' 2>&1 | tee "$R/versions.txt"
import importlib.metadata as md, platform
for p in ("torch", "transformers", "jax", "jaxlib", "jax-cuda13-pjrt", "jax-cuda13-plugin", "safetensors"):
    try:
        print(p, md.version(p))
    except Exception:
        print(p, "absent")
print("python", platform.python_version())
EOF
fi
echo "glibc: $(ldd --version 2>&1 | sed -n 1p)"

# ---- shapes ----
if [ "$dry" = 1 ]; then
  shape=tiny
  decode_args=(-batch "1,4" -prompt_len 16 -new_tokens 8 -reps 2)
  train_args=(-batch 2 -seq 64 -reps 2)
  grpo_args=(-questions 2 -generations 2 -grpo_steps 2 -max_new_tokens 16 -max_completion_length 48 -step_budget 3
             -length_bucket 64 -micro_batch 2)
  torch_args=(--shape tiny --batches "1,4" --prompt_len 16 --new_tokens 8 --train_batch 2 --seq 64 --device cpu)
  large_args=(--shape 1.7b --layers 2 --device cpu)
  preset_args=(-max_steps 2 -sft_max_questions 8 -sft_epochs 1 -max_eval_questions 2 -eval_steps 0)
else
  shape=1.7b
  decode_args=(-batch "1,16,64" -prompt_len 128 -new_tokens 128 -reps 3)
  train_args=(-batch 16 -seq 512 -reps 3)
  # Prompts of the tiny preset's tokenizer are 380-1100 tokens: bucket 512 keeps XLA compilations few; one
  # episode (up to 4 turns = rows) per micro-batch, one row per loss call (loss_rows): at 2,560 tokens the
  # 28-layer backward keeps ~0.9 GB of float32 attention scores per row and layer (82 GiB for 4 rows, H200 2026-11-28).
  grpo_args=(-questions 8 -generations 4 -grpo_steps 3 -max_new_tokens 64 -max_completion_length 256 -step_budget 4
             -length_bucket 512 -micro_batch 1 -loss_rows 1)
  torch_args=(--shape 1.7b --batches "1,16,64" --prompt_len 128 --new_tokens 128 --train_batch 16 --seq 512)
  large_args=(--shape 1.7b)
  preset_args=()   # the notebook's preset as it is
fi
qdir=training/qwen3
large_dir="$root/$qdir/testdata/golden_1.7b"

# ---- XLA smoke test ----
xla_ok=1
only_saved="$only" only=""   # the smoke test always runs
step xla_smoke 90 xla_smoke.log "$BIN/qwen3bench" -backend "$XLA" -mode decode -shape tiny -dtype f32 -batch 1 \
  -prompt_len 16 -new_tokens 8 -reps 1 -out "$R/xla_smoke.json" || xla_ok=0
only="$only_saved"
if [ "$xla_ok" = 0 ]; then
  echo "run.sh: the XLA backend does not work here: skipping the Go GPU steps (see xla_smoke.log)"
fi
gostep() { if [ "$xla_ok" = 1 ]; then step "$@"; else skip "$1" "XLA backend failed its smoke test"; fi; }

# ---- (1) the notebook's preset on the GPU: its wall time and compile/seconds (unknown since static_shapes) ----
# The notebook's CPU preset (the pre-trained tiny base, SFT, GRPO, every evaluation; seed 42 as the notebook) on
# the GPU backend: its wall time is status.tsv's seconds; its evaluations are in the log.
gostep train_preset 200:90 train_preset.log "$BIN/train" -preset tiny -seed 42 -backend "$XLA" \
  -output_dir "$R/train_preset" "${preset_args[@]}" all
[ -f "$R/train_preset/eval_summary.json" ] && cp "$R/train_preset/eval_summary.json" "$R/train_preset_eval_summary.json"
[ -f "$R/train_preset/metrics.jsonl" ] && cp "$R/train_preset/metrics.jsonl" "$R/train_preset_metrics.jsonl"

# ---- (2) a full GRPO step of Qwen3-1.7B-shaped layers (static shapes: auto, on for XLA) ----
gostep grpo_step 200:120 grpo_step.log "$BIN/qwen3bench" -backend "$XLA" -mode grpostep -shape "${GPU_GRPO_SHAPE:-$shape}" -dtype bf16 \
  "${grpo_args[@]}" -out "$R/grpo_step.json"
# ---- (2b) compile time (issue 53 item 2): the first step of a tiny training program (compilation + one
# step) with the project's XLA flags (Triton GEMMs off: qwen3.DefaultXLAFlags), with XLA's own default
# (Triton GEMMs on) and with autotuning off. H200, 2026-11-28: 14.3 s with Triton, 7.1 s without, 7.5 s
# with autotuning off.
probe_args=(-mode trainstep -shape tiny -dtype f32 -batch 8 -seq 512 -reps 1)
gostep compile_default 45:20 compile_default.log "$BIN/qwen3bench" -backend "$XLA" "${probe_args[@]}" -out "$R/compile_default.json"
gostep compile_autotune0 45:20 compile_autotune0.log env XLA_FLAGS="${XLA_FLAGS:-} --xla_gpu_autotune_level=0" \
  "$BIN/qwen3bench" -backend "$XLA" "${probe_args[@]}" -out "$R/compile_autotune0.json"
gostep compile_triton 45:20 compile_triton.log env XLA_FLAGS="${XLA_FLAGS:-} --xla_gpu_enable_triton_gemm=true" \
  "$BIN/qwen3bench" -backend "$XLA" "${probe_args[@]}" -out "$R/compile_triton.json"
# XLA's persistent autotuning cache: the same probe twice with one cache directory (the second run should
# skip autotuning); a candidate default for qwen3.DefaultXLAFlags, not set before it is measured.
for k in 1 2; do
  gostep compile_cache$k 45:20 compile_cache$k.log env XLA_FLAGS="${XLA_FLAGS:-} --xla_gpu_per_fusion_autotune_cache_dir=$R/autotune_cache" \
    "$BIN/qwen3bench" -backend "$XLA" "${probe_args[@]}" -out "$R/compile_cache$k.json"
done
# ---- (3) benchmarks: Go vs PyTorch, same shapes, same run (decode and train-step ratios) ----
gostep go_decode 180:90 go_decode.log "$BIN/qwen3bench" -backend "$XLA" -mode decode -shape "$shape" -dtype bf16 \
  "${decode_args[@]}" -max_seconds 120 -out "$R/go_decode.json"
if [ -n "$py" ]; then
  step torch_bench 180:60 torch_bench.log "$py" training/gpu/torch_bench.py "${torch_args[@]}" --max_seconds 120 \
    --out "$R/torch_bench.json"
else
  skip torch_bench "no python with torch and transformers"
fi
gostep go_trainstep 180:90 go_trainstep.log "$BIN/qwen3bench" -backend "$XLA" -mode trainstep -shape "$shape" -dtype bf16 \
  "${train_args[@]}" -out "$R/go_trainstep.json"

# ---- (4) a short real run of train with other settings ----
gostep train_tiny 240:60 train_tiny.log "$BIN/train" -model_name tiny -backend "$XLA" -output_dir "$R/train_tiny" \
  -max_steps 4 -logging_steps 1 -sft_max_questions 8 -sft_epochs 1 -max_train_questions 32 -max_eval_questions 4 \
  -max_new_tokens 48 -max_completion_length 144 -step_budget 4 -learning_rate 1e-4 all
[ -f "$R/train_tiny/metrics.jsonl" ] && cp "$R/train_tiny/metrics.jsonl" "$R/train_tiny_metrics.jsonl"
# ---- (5) goldens, last: they passed on the H200 (2026-11-28) ----
if [ -n "$py" ]; then
  step golden_py_tiny 90 golden_py_tiny.log "$py" "$qdir/testdata/make_golden.py" --shape tiny
  step golden_py_large 180:60 golden_py_large.log "$py" "$qdir/testdata/make_golden.py" "$large_dir" "${large_args[@]}"
else
  skip golden_py_tiny "no python with torch and transformers"
  skip golden_py_large "no python with torch and transformers"
fi

# golden comparison on the GPU, TF32 off
gostep go_golden_notf32 180:60 go_golden_notf32.log env -C "$qdir" QWEN3_TEST_BACKEND="$XLA_STRICT" \
  QWEN3_GOLDEN_LARGE_DIR="$large_dir" QWEN3_GOLDEN_OUT="$R/golden_large.json" \
  "$BIN/qwen3.test" -test.run 'TestGoldenTransformers' -test.v -test.count 1

# one GRPO step, CPU vs GPU
gostep grpo_compare_notf32 90 grpo_compare_notf32.log env -C training TRAINING_COMPARE_BACKEND="$XLA_STRICT" \
  TRAINING_COMPARE_OUT="$R/grpo_compare_notf32.json" "$BIN/training.test" -test.run TestGRPOStepMatchesCPU -test.v

# ---- extras while time is left: TF32 on, and the whole qwen3 suite on the GPU ----
gostep grpo_compare_tf32 60:30 grpo_compare_tf32.log env -C training TRAINING_COMPARE_BACKEND="$XLA" \
  TRAINING_COMPARE_OUT="$R/grpo_compare_tf32.json" "$BIN/training.test" -test.run TestGRPOStepMatchesCPU -test.v
gostep go_golden_tf32 60:30 go_golden_tf32.log env -C "$qdir" QWEN3_TEST_BACKEND="$XLA" \
  "$BIN/qwen3.test" -test.run '^TestGoldenTransformers$' -test.v -test.count 1
gostep qwen3_suite 150:40 go_qwen3_suite.log env -C "$qdir" QWEN3_TEST_BACKEND="$XLA_STRICT" \
  QWEN3_GOLDEN_LARGE_DIR=/nonexistent "$BIN/qwen3.test" -test.v -test.count 1

# ---- summary and results ----
[ -n "${smi_pid:-}" ] && kill "$smi_pid" 2>/dev/null
rm -rf "$R/train_tiny/checkpoint-"* "$R/train_tiny/sft/checkpoint-"* "$R/train_preset/checkpoint-"* "$R/train_preset/sft/checkpoint-"* 2>/dev/null
for d in golden_tiny golden_1.7b; do
  if [ -d "$qdir/testdata/$d" ]; then
    mkdir -p "$R/$d"
    cp "$qdir/testdata/$d"/*.json "$R/$d/" 2>/dev/null
    [ "$d" = golden_tiny ] && cp "$qdir/testdata/$d"/*.safetensors "$R/$d/" 2>/dev/null
  fi
done
cp "$BIN/MANIFEST" "$R/bundle_MANIFEST.txt"
sumpy="${py:-python3}"
"$sumpy" training/gpu/summary.py "$R" --gpu "$gpu_name" --json "$R/summary.json" > "$R/summary.md" ||
  echo "run.sh: summary.py failed"
cp "$R/summary.md" "$R/summary.json" "$out/" 2>/dev/null
tar -C "$R" -czf "$out/results.tar.gz" .
echo
cat "$R/summary.md"
echo
echo "run.sh: done in $(elapsed)s; results in $out (run.log, summary.md, summary.json, results.tar.gz)"
rm -rf "$BIN"

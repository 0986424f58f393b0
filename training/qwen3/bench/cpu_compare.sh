#!/usr/bin/env bash
# Compares the pure-Go backend's training step (BenchmarkTrainStep) with
# PyTorch eager (torch_step.py, the same model) on this CPU, interleaved, at
# 1 and 2 threads, reporting wall and CPU time per step (CPU time / wall =
# cores kept busy). OpenBLAS gets 1 thread (torch's own threads call it).
#
#   bash training/qwen3/bench/cpu_compare.sh [rounds]     # from the repository root
#
# Needs: Go (GOTOOLCHAIN=auto), python3-torch and libopenblas0-pthread (Debian).
# GOMLX_GO_SIMD_AVX512=false in the environment makes the Go side use its
# AVX2 kernels on an AVX-512 CPU (what an AVX2-only machine runs).
set -euo pipefail
cd "$(dirname "$0")/.."
rounds=${1:-3}
export GOTOOLCHAIN=auto GOEXPERIMENT=simd CGO_ENABLED=1
bin=$(mktemp -d)/qwen3.test
go test -c -o "$bin" .
echo "# $(lscpu | sed -n 's/^Model name: *//p'), $(nproc) CPUs, AVX2: $(grep -qw avx2 /proc/cpuinfo && echo yes || echo no), AVX-512: $(grep -qw avx512f /proc/cpuinfo && echo yes || echo no), load $(cut -d' ' -f1-3 /proc/loadavg)"
echo "# GOMLX_GO_SIMD_AVX512=${GOMLX_GO_SIMD_AVX512:-unset}"
echo "# $(go version), $(/usr/bin/python3 -c 'import torch; print("torch", torch.__version__)')"
go_step() { # $1 threads, $2 backend config, $3 label
  GOMAXPROCS=$1 QWEN3_TEST_BACKEND=$2 "$bin" -test.run=NONE -test.bench=TrainStep -test.benchtime=5x |
    awk -v l="$3" '/^Benchmark/ {sub(/^BenchmarkTrainStep\//, "", $1); sub(/-[0-9]+$/, "", $1)
      for (i = 2; i < NF; i++) { if ($(i+1) == "ns/op") w = $i / 1e6; if ($(i+1) == "cpu-ms/op") c = $i; if ($(i+1) == "cores") k = $i }
      printf "%-34s %-24s %8.0f ms wall %8.0f ms CPU  (%s cores)\n", l, $1, w, c, k}'
}
for r in $(seq "$rounds"); do
  echo "## round $r"
  for t in 1 2; do
    go_step $t go "go, $t thread(s)"
    go_step $t go:num_executors=8 "go, $t thread(s), 8 executors (old)"
    OPENBLAS_NUM_THREADS=1 /usr/bin/python3 bench/torch_step.py --threads $t | awk -v t=$t '/train_step_ms/ {
      split($2,a,"="); split($3,b,"="); split($4,c,"="); split($5,d,"=");
      printf "%-34s %-24s %8.0f ms wall %8.0f ms CPU  (%.2f cores)\n", "torch, " t " thread(s)", "train step", a[2], b[2], b[2]/a[2];
      printf "%-34s %-24s %8.0f ms wall %8.0f ms CPU  (%.2f cores)\n", "torch, " t " thread(s)", "forward", c[2], d[2], d[2]/c[2] }'
  done
done

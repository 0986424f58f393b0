#!/usr/bin/env bash
# Compares the training steps of this checkout with those of another commit,
# interleaved on this machine: the pre-training/SFT step of the tiny base
# (BenchmarkNLLStep/shuffled: 16 oracle turns, forward + backward + AdamW)
# and BenchmarkTrainStep (batch 8 × 128, dim 256, 4 layers: the PyTorch
# anchor's shape), each with the AVX-512 kernels where the CPU has them and
# with the AVX2 kernels (GOMLX_GO_SIMD_AVX512=false), at GOMAXPROCS 2.
# Wall and CPU time per step (user + system, all threads).
#
#   bash training/qwen3/bench/step_compare.sh BASE_COMMIT [rounds] [steps]
#
# The base is built from a temporary worktree with this checkout's benchmark
# files (training/sft_bench_test.go, internal/cputime), so both sides are
# timed by the same harness; the code under test is the base's.
set -euo pipefail
base=${1:?base commit}
rounds=${2:-3}
steps=${3:-10}
root=$(git rev-parse --show-toplevel)
cd "$root"
export GOTOOLCHAIN=auto GOEXPERIMENT=simd CGO_ENABLED=1
work=$(mktemp -d)
trap 'git worktree remove --force "$work/base" >/dev/null 2>&1 || true; rm -rf "$work"' EXIT
git worktree add -q --detach "$work/base" "$base"
mkdir -p "$work/base/internal"
cp -r internal/cputime "$work/base/internal/"
cp training/sft_bench_test.go "$work/base/training/"
(cd "$work/base" && go test -c -o "$work/training-base.test" ./training && go test -c -o "$work/qwen3-base.test" ./training/qwen3)
go test -c -o "$work/training-new.test" ./training
go test -c -o "$work/qwen3-new.test" ./training/qwen3
echo "# $(lscpu | sed -n 's/^Model name: *//p'), $(nproc) CPUs, AVX2: $(grep -qw avx2 /proc/cpuinfo && echo yes || echo no), AVX-512: $(grep -qw avx512f /proc/cpuinfo && echo yes || echo no), load $(cut -d' ' -f1-3 /proc/loadavg)"
echo "# base $(git rev-parse --short "$base"), new $(git rev-parse --short HEAD)$(git diff --quiet HEAD || echo ' (with uncommitted changes)'), $(go version)"
row() { # $1 label; reads go test -bench output
  awk -v l="$1" '/^Benchmark/ {
    for (i = 1; i <= NF; i++) { if ($(i+1) == "ns/op") w = $i / 1e6; if ($(i+1) == "cpu-ms/op") c = $i; if ($(i+1) == "cores") k = $i }
    printf "%-44s %8.0f ms wall %8.0f ms CPU  (%.2f cores)\n", l, w, c, k }'
}
for r in $(seq "$rounds"); do
  echo "## round $r"
  for kernels in avx512 avx2; do
    avx512=true
    [ "$kernels" = avx2 ] && avx512=false
    for side in base new; do
      (cd training && GOMLX_GO_SIMD_AVX512=$avx512 GOMAXPROCS=2 "$work/training-$side.test" -test.run '^$' \
        -test.bench 'NLLStep/shuffled' -test.benchtime "${steps}x") | row "NLL step, $kernels kernels, $side"
      (cd training/qwen3 && GOMLX_GO_SIMD_AVX512=$avx512 GOMAXPROCS=2 "$work/qwen3-$side.test" -test.run '^$' \
        -test.bench 'TrainStep/forward\+backward' -test.benchtime "${steps}x") | row "TrainStep, $kernels kernels, $side"
    done
  done
done

#!/usr/bin/env bash
# Builds the GPU kit's bundle on a machine with Go (cgo): the test binaries of
# training/qwen3 and training, and the commands train and qwen3bench, stripped
# and packed into training/gpu/bundle/bin.tgz (gitignored), for a GPU machine
# that has no Go toolchain. Then, there: bash training/gpu/run.sh (see README,
# GPU). The binaries need glibc >= 2.34 and nothing else at start-up; the
# CUDA plugin and libraries come from the GPU machine's JAX installation.
#
#   bash training/gpu/build.sh            (prints the bundle's size; fails above 60 MiB)
#
# If this machine's python3 has torch and transformers, it also writes the
# tiny transformers golden data (training/qwen3/testdata/golden_tiny);
# otherwise run.sh makes it on the GPU machine.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
cd "$root"
export GOTOOLCHAIN="${GOTOOLCHAIN:-auto}"   # go.mod asks for a newer toolchain than some machines have
export GOEXPERIMENT=simd                     # the CPU backend is ~14x faster with it (the CPU side of comparisons)
export CGO_ENABLED=1                         # XLA/PJRT and SQLite need cgo
command -v go >/dev/null || { echo "build.sh: no Go toolchain on this machine" >&2; exit 1; }
command -v gcc >/dev/null || command -v cc >/dev/null || { echo "build.sh: cgo needs a C compiler" >&2; exit 1; }

bundle="$root/training/gpu/bundle"
stage="$(mktemp -d)"
trap 'rm -rf "$stage"' EXIT
ldflags="-s -w"
start=$(date +%s)
go test -c -trimpath -ldflags="$ldflags" -o "$stage/qwen3.test" ./training/qwen3
go test -c -trimpath -ldflags="$ldflags" -o "$stage/training.test" ./training
go build -trimpath -ldflags="$ldflags" -o "$stage/train" ./training/cmd/train
go build -trimpath -ldflags="$ldflags" -o "$stage/qwen3bench" ./training/cmd/qwen3bench
{
  echo "built $(date -u +%Y-%m-%dT%H:%M:%SZ) on $(uname -srm)"
  echo "commit $(git rev-parse --short HEAD 2>/dev/null || echo unknown)$(git diff --quiet 2>/dev/null || echo ' (with uncommitted changes)')"
  go version
  echo "GOEXPERIMENT=$GOEXPERIMENT CGO_ENABLED=$CGO_ENABLED ldflags=$ldflags"
  ldd --version 2>&1 | sed -n 1p
  (cd "$stage" && ls -l qwen3.test training.test train qwen3bench)
} > "$stage/MANIFEST"
mkdir -p "$bundle"
rm -f "$bundle/bin.tgz"
tar -C "$stage" -czf "$bundle/bin.tgz" MANIFEST qwen3.test training.test train qwen3bench
cp "$stage/MANIFEST" "$bundle/MANIFEST"
bytes=$(stat -c %s "$bundle/bin.tgz")
echo "bundle: $bundle/bin.tgz, $((bytes / 1024 / 1024)) MiB ($(du -sh "$stage" | cut -f1) unpacked), built in $(( $(date +%s) - start )) s"
if (( bytes > 60 * 1024 * 1024 )); then
  echo "build.sh: the bundle is over 60 MiB: the device tool carries 64 MiB with the working tree" >&2
  exit 1
fi

if python3 -c 'import torch, transformers' 2>/dev/null; then
  python3 training/qwen3/testdata/make_golden.py --shape tiny
else
  echo "python3 has no torch+transformers here: run.sh makes the golden data on the GPU machine"
fi
echo "carry: training/gpu/bundle   then, on the GPU machine: bash training/gpu/run.sh"

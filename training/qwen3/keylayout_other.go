//go:build !(amd64 && goexperiment.simd)

package qwen3

// goMatMulAVX512 reports whether the pure-Go backend multiplies matrices
// with its AVX-512 kernels: never without GOEXPERIMENT=simd on amd64.
const goMatMulAVX512 = false

//go:build !(amd64 && goexperiment.simd)

package qwen3

// goMatMulAVX512 reports whether the pure-Go backend multiplies matrices
// with its AVX-512 kernels: never without GOEXPERIMENT=simd on amd64.
const goMatMulAVX512 = false

// goMatMulAVX2 reports whether the pure-Go backend has its AVX2 matrix
// kernels: never without GOEXPERIMENT=simd on amd64.
const goMatMulAVX2 = false

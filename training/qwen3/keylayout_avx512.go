//go:build amd64 && goexperiment.simd

package qwen3

import (
	"simd/archsimd"

	"github.com/gomlx/compute/support/envutil"
)

// goMatMulAVX512 reports whether the pure-Go backend multiplies matrices
// with its AVX-512 kernels: the same test the backend makes (the CPU has
// AVX-512 and $GOMLX_GO_SIMD_AVX512 does not turn it off).
var goMatMulAVX512 = goKernelsAllowed(envutil.GoBackendSIMD_AVX512, archsimd.X86.AVX512())

// goMatMulAVX2 reports whether the pure-Go backend has its AVX2 matrix
// kernels (the CPU has AVX2 and $GOMLX_GO_SIMD_AVX2 does not turn them off):
// the ones it uses when goMatMulAVX512 is false.
var goMatMulAVX2 = goKernelsAllowed(envutil.GoBackendSIMD_AVX2, archsimd.X86.AVX2())

// goKernelsAllowed is the backend's test for a family of its SIMD kernels:
// the CPU has the instructions and the environment variable env (default
// true) does not turn them off.
func goKernelsAllowed(env string, cpuHas bool) bool {
	allowed, err := envutil.ReadBool(env, true)
	return err == nil && allowed && cpuHas
}

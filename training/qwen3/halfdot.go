package qwen3

import (
	"fmt"
	"math"
	"os"
	"sync"

	"github.com/gomlx/compute"
	"github.com/gomlx/compute/dtypes"
	. "github.com/gomlx/gomlx/core/graph"
	"github.com/gomlx/gomlx/core/tensors"
)

// Half-precision matrix products on the pure-Go backend.
//
// The pure-Go backend of github.com/gomlx/compute v0.1.14 gains nothing from
// bfloat16 arithmetic (its bfloat16 matrix products run at about half the
// speed of float32's), and its large AVX2 kernel for bfloat16 and float16 is
// wrong: above about 2²² multiply-adds every 4th output row (rows 3, 7, 11,
// …) is garbage. upstream/bf16avx2 reproduces it for an upstream report. On
// that backend the model therefore computes every matrix product whose
// operands are bfloat16 or float16 in float32: the operands convert
// exactly, the sums are float32 and the result is rounded to the model's
// dtype — what a GPU's bfloat16 matrix product with float32 accumulation
// computes. Other backends (XLA) use their native half-precision kernels.

// halfProductsInFloat32 reports whether matrix products of half-precision
// operands are computed in float32 on backend.
func halfProductsInFloat32(backend compute.Backend) bool {
	return isGoBackend(backend)
}

func isHalf(dtype dtypes.DType) bool {
	return dtype == dtypes.BFloat16 || dtype == dtypes.Float16
}

// CheckHalfMatMul multiplies a 300×256 by a 256×256 matrix of small integers
// (exact in every dtype; 19.7 M multiply-adds, above the size where the
// pure-Go backend switches to its large kernels) with backend's native
// kernel in dtype (bfloat16 or float16) and in float32, and returns an error
// naming the output rows that differ beyond dtype's rounding. It checks
// the backend itself, not the model, which never uses the native
// half-precision kernel of the pure-Go backend (see dotGeneral).
func CheckHalfMatMul(backend compute.Backend, dtype dtypes.DType) error {
	if !isHalf(dtype) {
		return fmt.Errorf("qwen3: CheckHalfMatMul: %s is not a half-precision dtype", dtype)
	}
	const m, k, n = 300, 256, 256
	a, b := integerMatrices(m, k, n)
	product := func(dt dtypes.DType) ([]float32, error) {
		e, err := NewExec(backend, func(x, y *Node) *Node {
			return ConvertDType(DotGeneral(ConvertDType(x, dt), []int{1}, nil, ConvertDType(y, dt), []int{0}, nil), dtypes.Float32)
		})
		if err != nil {
			return nil, err
		}
		defer e.Finalize()
		out, err := e.Call(tensors.FromFlatDataAndDimensions(a, m, k), tensors.FromFlatDataAndDimensions(b, k, n))
		if err != nil {
			return nil, err
		}
		return tensors.CopyFlatData[float32](out[0])
	}
	want, err := product(dtypes.Float32)
	if err != nil {
		return fmt.Errorf("qwen3: float32 matrix product on %q: %w", backend.String(), err)
	}
	got, err := product(dtype)
	if err != nil {
		return fmt.Errorf("qwen3: %s matrix product on %q: %w", dtype, backend.String(), err)
	}
	var bad []int
	for r := 0; r < m; r++ {
		for c := 0; c < n; c++ {
			w, g := float64(want[r*n+c]), float64(got[r*n+c])
			// One rounding of the output: relative 2⁻⁸ for bfloat16.
			if math.Abs(g-w) > math.Abs(w)/128+0.5 {
				bad = append(bad, r)
				break
			}
		}
	}
	if len(bad) == 0 {
		return nil
	}
	return fmt.Errorf("qwen3: the %q backend's own %s matrix product is wrong on this CPU: %d of %d output rows differ from float32 (first rows %v)",
		backend.String(), dtype, len(bad), m, bad[:min(len(bad), 8)])
}

// integerMatrices returns an m×k and a k×n matrix (row-major) of integers
// in [-4, 4]: exact in every dtype, with every partial sum of their product
// exact in float32, so that a half-precision product may differ from the
// float32 one only by the rounding of its output.
func integerMatrices(m, k, n int) (a, b []float32) {
	a, b = make([]float32, m*k), make([]float32, k*n)
	for i := range a {
		a[i] = float32((i*7+3)%9 - 4)
	}
	for i := range b {
		b[i] = float32((i*5+1)%9 - 4)
	}
	return a, b
}

var halfKernelNote sync.Once

// noteHalfKernel tells, once per process, that a half-precision model on
// the pure-Go backend computes its matrix products in float32, when the
// backend's own half-precision kernel is wrong on this CPU.
func noteHalfKernel(backend compute.Backend, dtype dtypes.DType) {
	if !isHalf(dtype) || !halfProductsInFloat32(backend) {
		return
	}
	halfKernelNote.Do(func() {
		if err := CheckHalfMatMul(backend, dtype); err != nil {
			fmt.Fprintf(os.Stderr, "warning: %v; this %s model computes its matrix products in float32 instead, so its results are right (float32 precision is faster on the CPU)\n", err, dtype)
		}
	})
}

// Command bf16avx2 is a minimal, self-contained reproduction, for an upstream
// report to github.com/gomlx/compute, of wrong bfloat16 (and float16) matrix
// products in the pure-Go backend's large AVX2 kernel.
//
// It multiplies an M×K by a K×N matrix of small integers (exact in bfloat16,
// and with sums exact in float32) once in float32 and once in bfloat16, and
// reports the output rows that differ. Run it on an amd64 CPU with AVX2, with
// Go's SIMD experiment (on a CPU with AVX-512, GOMLX_GO_SIMD_AVX512=false
// selects the AVX2 kernels):
//
//	GOEXPERIMENT=simd GOMLX_GO_SIMD_AVX512=false go run ./training/qwen3/upstream/bf16avx2
//
// With github.com/gomlx/compute v0.1.14 it prints that every 4th output row
// (3, 7, 11, …) is wrong once M·K·N is above about 2²² multiply-adds, and
// exits with status 1; without GOEXPERIMENT=simd, with AVX-512, or in float32
// the products are exact and it exits with status 0. Flags set the sizes and
// the dtype (-dtype f16 shows the same for float16).
package main

import (
	"flag"
	"fmt"
	"math"
	"os"

	"github.com/gomlx/compute/dtypes"
	"github.com/gomlx/compute/gobackend"
	. "github.com/gomlx/gomlx/core/graph"
	"github.com/gomlx/gomlx/core/tensors"
)

func main() {
	m := flag.Int("m", 256, "rows of the left operand")
	k := flag.Int("k", 256, "contracted dimension")
	n := flag.Int("n", 256, "columns of the right operand")
	half := flag.String("dtype", "bf16", "half-precision dtype to test: bf16 or f16")
	flag.Parse()
	dtype := dtypes.BFloat16
	if *half == "f16" {
		dtype = dtypes.Float16
	}
	backend, err := gobackend.New("")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	// Integers in [-4, 4]: every product and every partial sum is exact in
	// float32, and every input is exact in bfloat16/float16, so the two
	// dtypes must agree up to the final rounding of the output to dtype.
	a, b := make([]float32, *m**k), make([]float32, *k**n)
	for i := range a {
		a[i] = float32((i*7+3)%9 - 4)
	}
	for i := range b {
		b[i] = float32((i*5+1)%9 - 4)
	}
	matmul := func(dt dtypes.DType) []float32 {
		out := MustExecOnce(backend, func(x, y *Node) *Node {
			return ConvertDType(MatMul(ConvertDType(x, dt), ConvertDType(y, dt)), dtypes.Float32)
		}, tensors.FromFlatDataAndDimensions(a, *m, *k), tensors.FromFlatDataAndDimensions(b, *k, *n))
		return tensors.MustCopyFlatData[float32](out)
	}
	want, got := matmul(dtypes.Float32), matmul(dtype)
	var bad []int
	worst := 0.0
	for r := 0; r < *m; r++ {
		rowBad := false
		for c := 0; c < *n; c++ {
			w, g := float64(want[r**n+c]), float64(got[r**n+c])
			// One rounding of the output to an 8-bit (bf16) or 11-bit (f16)
			// mantissa: relative error ≤ 2⁻⁸; allow 2⁻⁷ plus an absolute 0.5.
			if e := math.Abs(g - w); e > math.Abs(w)/128+0.5 {
				rowBad = true
				worst = math.Max(worst, e/math.Max(math.Abs(w), 1))
			}
		}
		if rowBad {
			bad = append(bad, r)
		}
	}
	fmt.Printf("%s matmul [%d,%d]x[%d,%d] (%d multiply-adds) on the go backend (%s)\n",
		dtype, *m, *k, *k, *n, *m**k**n, backend.Description())
	if len(bad) == 0 {
		fmt.Println("OK: equal to float32 up to the output's rounding")
		return
	}
	show := bad
	if len(show) > 12 {
		show = show[:12]
	}
	fmt.Printf("WRONG: %d of %d output rows differ from float32 (rows %v…), worst relative error %.3g\n",
		len(bad), *m, show, worst)
	os.Exit(1)
}

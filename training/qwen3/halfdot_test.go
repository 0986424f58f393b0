package qwen3

import (
	"fmt"
	"math"
	"os"
	"os/exec"
	"runtime"
	"strings"
	"testing"

	"github.com/gomlx/compute/dtypes"
	. "github.com/gomlx/gomlx/core/graph"
	"github.com/gomlx/gomlx/core/tensors"
)

// childEnv marks a test process started by alsoWithAVX2Kernels.
const childEnv = "GOSQLENV_TEST_AVX2_CHILD"

// alsoWithAVX2Kernels runs the calling test once more in a child process
// whose pure-Go backend may not use its AVX-512 kernels
// (GOMLX_GO_SIMD_AVX512=false), so that the AVX2 kernels — wrong for large
// half-precision products in compute v0.1.14 — are exercised on AVX-512
// machines too. It does nothing in the child itself or without SIMD.
func alsoWithAVX2Kernels(t *testing.T) {
	t.Helper()
	if os.Getenv(childEnv) != "" || !SIMDBuild || runtime.GOARCH != "amd64" {
		return
	}
	cmd := exec.Command(os.Args[0], "-test.run=^"+t.Name()+"$", "-test.count=1", "-test.v")
	cmd.Env = append(os.Environ(), childEnv+"=1", "GOMLX_GO_SIMD_AVX512=false")
	out, err := cmd.CombinedOutput()
	if err != nil || !strings.Contains(string(out), "--- PASS: "+t.Name()) {
		t.Errorf("with the AVX2 kernels (GOMLX_GO_SIMD_AVX512=false): %v\n%s", err, out)
		return
	}
	for _, line := range strings.Split(string(out), "\n") {
		if strings.Contains(line, "_test.go:") {
			t.Log("AVX2 kernels:", strings.TrimSpace(line))
		}
	}
}

// TestHalfPrecisionProductsLong: the model's matrix products (kernels.dot)
// of bfloat16 and float16 operands, at a size where the pure-Go backend
// uses its large kernels (300×256 by 256×256), equal float32's up to the
// rounding of the output, with the AVX-512 and with the AVX2 kernels. The
// backend's own half-precision kernel is checked and reported.
func TestHalfPrecisionProductsLong(t *testing.T) {
	alsoWithAVX2Kernels(t)
	const m, k, n = 300, 256, 256
	a, b := integerMatrices(m, k, n)
	for _, dtype := range []dtypes.DType{dtypes.Float32, dtypes.BFloat16, dtypes.Float16} {
		out := MustExecOnce(testBackend, func(x, y *Node) *Node {
			x, y = ConvertDType(x, dtype), ConvertDType(y, dtype)
			return ConvertDType(kernels{}.dot(x, []int{1}, nil, y, []int{0}, nil), dtypes.Float32)
		}, tensors.FromFlatDataAndDimensions(a, m, k), tensors.FromFlatDataAndDimensions(b, k, n))
		got := tensors.MustCopyFlatData[float32](out)
		var wrongRows []int
		for r := 0; r < m; r++ {
			for c := 0; c < n; c++ {
				var want float64
				for j := 0; j < k; j++ {
					want += float64(a[r*k+j]) * float64(b[j*n+c])
				}
				// The inputs and every partial sum are exact; only the output
				// is rounded to dtype (relative 2⁻⁸ for bfloat16).
				if math.Abs(float64(got[r*n+c])-want) > math.Abs(want)/128+0.5 {
					wrongRows = append(wrongRows, r)
					break
				}
			}
		}
		if len(wrongRows) > 0 {
			t.Errorf("%s: %d of %d rows wrong (first %v)", dtype, len(wrongRows), m, wrongRows[:min(8, len(wrongRows))])
		}
		if dtype != dtypes.Float32 {
			native := "right"
			if err := CheckHalfMatMul(testBackend, dtype); err != nil {
				native = err.Error()
			}
			t.Logf("%s, AVX2 kernels only: %v; backend's native kernel: %s", dtype, os.Getenv(childEnv) != "", native)
		}
	}
}

// TestBFloat16LongSequence: a bfloat16 model's logits over 300 tokens, alone
// and in a right-padded batch, are close to the float32 model's at every
// position (bfloat16 keeps 8 bits of mantissa: relative error ≤ 5 %), with
// the AVX-512 and with the AVX2 kernels. Its matrix products are above the
// size where the pure-Go backend uses its large kernels.
func TestBFloat16LongSequence(t *testing.T) {
	alsoWithAVX2Kernels(t)
	cfg := TinyConfig(512)
	cfg.HiddenSize, cfg.IntermediateSize, cfg.HeadDim = 128, 384, 32
	m32, m16 := tinyModel(t, cfg, dtypes.Float32), tinyModel(t, cfg, dtypes.BFloat16)
	seq := func(n, seed int) []int32 {
		s := make([]int32, n)
		for i := range s {
			s[i] = int32((i*seed + 11) % cfg.VocabSize)
		}
		return s
	}
	for _, batch := range [][][]int32{
		{seq(300, 7)},
		{seq(300, 7), seq(170, 13), seq(45, 29)},
	} {
		want, err := m32.Logits(batch)
		if err != nil {
			t.Fatal(err)
		}
		got, err := m16.Logits(batch)
		if err != nil {
			t.Fatal(err)
		}
		var wrong []string
		worst := 0.0
		for b, s := range batch {
			for j := range s {
				w := make([]float64, cfg.VocabSize)
				for i, v := range want[b][j] {
					w[i] = float64(v)
				}
				e := relErr(got[b][j], w)
				worst = math.Max(worst, e)
				if e > 0.05 {
					wrong = append(wrong, fmt.Sprintf("%d/%d", b, j))
				}
			}
		}
		t.Logf("batch of %d: worst relative error %.4f", len(batch), worst)
		if len(wrong) > 0 {
			t.Errorf("batch of %d: bfloat16 logits off by more than 5 %% at %d positions (sequence/position %v …)",
				len(batch), len(wrong), wrong[:min(8, len(wrong))])
		}
	}
}

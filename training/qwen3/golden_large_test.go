package qwen3

import (
	"context"
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/gomlx/compute/dtypes"
	"github.com/gomlx/go-xla/compute/xla"
	"github.com/gomlx/gomlx/core/tensors"
)

// testTF32 says whether the test backend runs float32 matrix products in
// TF32 (XLA on CUDA does by default; "xla:<plugin>,notf32" turns it off).
func testTF32() bool {
	b, ok := testBackend.(*xla.Backend)
	return ok && b.DotGeneralUseTF32
}

// goldenF32Tol is the relative error allowed between float32 logits and
// transformers' float32 logits: 1e-4 (different summation orders), or 5e-3
// when matrix products round their inputs to TF32 (10 mantissa bits, unit
// roundoff 4.9e-4, compounded over the layers).
func goldenF32Tol() float64 {
	if testTF32() {
		return 5e-3
	}
	return 1e-4
}

// largeGolden is what testdata/make_golden.py --shape 1.7b writes: a
// left-padded batch, transformers' float32 logits at a few (row, position)
// pairs (computed from the saved bfloat16 weights upcast to float32, eager
// attention, no TF32), the relative error of transformers' own bfloat16 run
// at those positions, and greedy float32 generation with the top-1 − top-2
// logit margin of each step.
type largeGolden struct {
	InputIDs        [][]int32   `json:"input_ids"`
	AttentionMask   [][]int32   `json:"attention_mask"`
	PositionIDs     [][]int32   `json:"position_ids"`
	Check           [][2]int    `json:"check"`
	LogitsF32       [][]float64 `json:"logits_f32"`
	TorchBF16RelErr []float64   `json:"torch_bf16_rel_err"`
	GreedyPrompt    []int32     `json:"greedy_prompt"`
	GreedyNew       []int32     `json:"greedy_new"`
	GreedyMargins   []float64   `json:"greedy_margins"`
}

// TestGoldenTransformersLarge compares with a Qwen3-1.7B-shaped random model
// built by transformers (testdata/make_golden.py --shape 1.7b, about 4 GB, so
// made on the GPU machine by training/gpu/run.sh; skipped where it is
// absent). Float32: logits within goldenF32Tol and the same greedy tokens
// (unless the reference's margin is a near-tie). Bfloat16: logits within
// twice transformers' own bfloat16 error plus 1e-3 — both round weights and
// activations to 8-bit mantissas, in different orders. $QWEN3_GOLDEN_OUT,
// when set, receives the measured errors as JSON.
func TestGoldenTransformersLarge(t *testing.T) {
	dir := os.Getenv("QWEN3_GOLDEN_LARGE_DIR")
	if dir == "" {
		dir = filepath.Join("testdata", "golden_1.7b")
	}
	data, err := os.ReadFile(filepath.Join(dir, "golden.json"))
	if err != nil {
		t.Skip("no large transformers golden data: run testdata/make_golden.py --shape 1.7b (training/gpu/run.sh does)")
	}
	var g largeGolden
	if err := json.Unmarshal(data, &g); err != nil {
		t.Fatal(err)
	}
	if len(g.Check) != len(g.LogitsF32) || len(g.Check) != len(g.TorchBF16RelErr) {
		t.Fatalf("golden.json: %d check positions, %d logit rows, %d bf16 errors", len(g.Check), len(g.LogitsF32), len(g.TorchBF16RelErr))
	}
	report := map[string]any{"backend": testBackend.Name(), "device": testBackend.Description(), "tf32": testTF32(),
		"torch_bf16_rel_err": g.TorchBF16RelErr}
	defer func() {
		if path := os.Getenv("QWEN3_GOLDEN_OUT"); path != "" {
			out, _ := json.MarshalIndent(report, "", "  ")
			if err := os.WriteFile(path, out, 0o644); err != nil {
				t.Error(err)
			}
		}
	}()
	b, w := len(g.InputIDs), len(g.InputIDs[0])
	for _, dt := range []dtypes.DType{dtypes.Float32, dtypes.BFloat16} {
		t.Run(dt.String(), func(t *testing.T) {
			m, _, err := LoadModel(context.Background(), testBackend, dir, LoadOptions{DType: dt})
			if err != nil {
				t.Fatal(err)
			}
			defer func() {
				for _, x := range m.Weights() {
					x.FinalizeAll()
				}
			}()
			flat := func(x [][]int32) *tensors.Tensor { return tensors.FromFlatDataAndDimensions(slices.Concat(x...), b, w) }
			logits, err := m.batchLogits(Batch{IDs: flat(g.InputIDs), Mask: flat(g.AttentionMask), Positions: flat(g.PositionIDs), T: w})
			if err != nil {
				t.Fatal(err)
			}
			v := m.Config.VocabSize
			var errs []float64
			for k, c := range g.Check {
				off := (c[0]*w + c[1]) * v
				errs = append(errs, relErr(logits[off:off+v], g.LogitsF32[k]))
			}
			worst := slices.Max(errs)
			tol := goldenF32Tol()
			if dt == dtypes.BFloat16 {
				tol = 2*slices.Max(g.TorchBF16RelErr) + 1e-3
			}
			report[dt.String()+"_rel_err"], report[dt.String()+"_tolerance"] = errs, tol
			t.Logf("%s on %s: relative error of the logits %v (worst %.2e, tolerance %.2e; transformers bf16 %v)",
				dt, testBackend.Name(), errs, worst, tol, g.TorchBF16RelErr)
			if worst > tol {
				t.Errorf("%s logits: worst relative error %.2e against transformers' float32 > %.2e", dt, worst, tol)
			}
			if dt != dtypes.Float32 {
				return
			}
			gen, err := m.Generate(context.Background(), [][]int32{g.GreedyPrompt}, GenerateOptions{MaxNewTokens: len(g.GreedyNew)})
			if err != nil {
				t.Fatal(err)
			}
			report["greedy_go"], report["greedy_transformers"] = gen.Tokens[0], g.GreedyNew
			for i := range g.GreedyNew {
				if i >= len(gen.Tokens[0]) || gen.Tokens[0][i] != g.GreedyNew[i] {
					margin := math.Inf(1)
					if i < len(g.GreedyMargins) {
						margin = g.GreedyMargins[i]
					}
					// A near-tie (margin within the logits' error) may flip legitimately.
					if margin < 1e-3*math.Max(1, maxAbs(g.LogitsF32)) || testTF32() {
						t.Logf("greedy token %d: %v vs transformers %v at a near-tie (margin %g)", i, gen.Tokens[0], g.GreedyNew, margin)
						return
					}
					t.Fatalf("greedy generation %v, transformers %v (first difference at token %d, margin %g)", gen.Tokens[0], g.GreedyNew, i, margin)
				}
			}
			t.Logf("greedy generation with the KV cache: %d tokens equal to transformers'", len(g.GreedyNew))
		})
	}
}

func maxAbs(rows [][]float64) float64 {
	m := 0.0
	for _, r := range rows {
		for _, x := range r {
			m = math.Max(m, math.Abs(x))
		}
	}
	return m
}

package qwen3

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/gomlx/compute/dtypes"
	"github.com/gomlx/gomlx/core/tensors"
)

// TestGoldenTransformers compares with a tiny Qwen3 built by Hugging Face
// transformers (testdata/make_golden.py): the weights load, the logits of a
// left-padded batch match transformers' within float32 tolerance, and greedy
// generation gives the same tokens.
func TestGoldenTransformers(t *testing.T) {
	dir := filepath.Join("testdata", "golden_tiny")
	data, err := os.ReadFile(filepath.Join(dir, "golden.json"))
	if err != nil {
		t.Skip("no transformers golden data: run testdata/make_golden.py on a machine with torch and transformers")
	}
	var g struct {
		InputIDs      [][]int32     `json:"input_ids"`
		AttentionMask [][]int32     `json:"attention_mask"`
		PositionIDs   [][]int32     `json:"position_ids"`
		Logits        [][][]float64 `json:"logits"`
		GreedyPrompt  []int32       `json:"greedy_prompt"`
		GreedyNew     []int32       `json:"greedy_new"`
	}
	if err := json.Unmarshal(data, &g); err != nil {
		t.Fatal(err)
	}
	m, _, err := LoadModel(context.Background(), testBackend, dir, LoadOptions{DType: dtypes.Float32})
	if err != nil {
		t.Fatal(err)
	}
	b, w := len(g.InputIDs), len(g.InputIDs[0])
	flat := func(x [][]int32) *tensors.Tensor { return tensors.FromFlatDataAndDimensions(slices.Concat(x...), b, w) }
	logits, err := m.batchLogits(Batch{IDs: flat(g.InputIDs), Mask: flat(g.AttentionMask), Positions: flat(g.PositionIDs), T: w})
	if err != nil {
		t.Fatal(err)
	}
	v := m.Config.VocabSize
	worst := 0.0
	defer func() {
		t.Logf("worst relative error of the logits against transformers: %.2e (tolerance %.0e)", worst, goldenF32Tol())
	}()
	for i := range g.InputIDs {
		for j := range g.InputIDs[i] {
			if g.AttentionMask[i][j] == 0 {
				continue
			}
			off := (i*w + j) * v
			e := relErr(logits[off:off+v], g.Logits[i][j])
			worst = max(worst, e)
			if e > goldenF32Tol() {
				t.Errorf("row %d position %d: relative error %.2e against transformers", i, j, e)
			}
		}
	}
	gen, err := m.Generate(context.Background(), [][]int32{g.GreedyPrompt}, GenerateOptions{MaxNewTokens: len(g.GreedyNew)})
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(gen.Tokens[0], g.GreedyNew) {
		if testTF32() { // TF32 rounding may flip near-ties of a random model
			t.Logf("greedy generation %v, transformers %v (TF32: not an error)", gen.Tokens[0], g.GreedyNew)
			return
		}
		t.Fatalf("greedy generation %v, transformers %v", gen.Tokens[0], g.GreedyNew)
	}
}

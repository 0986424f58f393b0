package training

import (
	"math"
	"testing"

	"github.com/gomlx/compute/dtypes"
	"github.com/gomlx/compute/gobackend"
	"github.com/gomlx/gomlx/core/tensors"
	"github.com/gosqlenv/gosqlenv/training/optim"
	"github.com/gosqlenv/gosqlenv/training/qwen3"
)

// TestNLLStepAccumulation: one optimizer step over a batch split into three
// micro-batches (gradients accumulated, the running sums donated) gives the
// same loss and weights as the whole batch in one micro-batch.
func TestNLLStepAccumulation(t *testing.T) {
	backend, err := gobackend.New("")
	if err != nil {
		t.Fatal(err)
	}
	newLearner := func() *Learner {
		w, err := qwen3.RandomWeights(qwen3.TinyConfig(64), 5, dtypes.Float32)
		if err != nil {
			t.Fatal(err)
		}
		m, err := qwen3.New(backend, w)
		if err != nil {
			t.Fatal(err)
		}
		return NewLearner(m, optim.AdamWConfig{MaxGradNorm: 1})
	}
	var batch []Sample
	for i := 0; i < 6; i++ {
		n := 5 + 3*i
		s := Sample{IDs: make([]int32, n), Mask: make([]int32, n), LogProbs: make([]float32, n)}
		for j := range s.IDs {
			s.IDs[j] = int32((i*13 + j*7) % 64)
			if j >= 3 {
				s.Mask[j] = 1 // a 3-token prompt, then the completion
			}
		}
		batch = append(batch, s)
	}
	whole, split := newLearner(), newLearner()
	a, err := whole.NLLStep(batch, 1, 8, 1e-2)
	if err != nil {
		t.Fatal(err)
	}
	b, err := split.NLLStep(batch, 3, 8, 1e-2)
	if err != nil {
		t.Fatal(err)
	}
	if math.Abs(a.Loss-b.Loss) > 1e-5*math.Abs(a.Loss) || a.Tokens != b.Tokens || math.Abs(a.GradNorm-b.GradNorm) > 1e-4*a.GradNorm {
		t.Errorf("whole batch %+v, three micro-batches %+v", a, b)
	}
	wa, wb := whole.Model.Weights(), split.Model.Weights()
	for i := range wa {
		x, y := tensors.MustCopyFlatData[float32](wa[i]), tensors.MustCopyFlatData[float32](wb[i])
		for j := range x {
			// AdamW's first step moves every weight by about lr = 1e-2, so an
			// absolute 1e-5 is a 0.1 % agreement on the update.
			if d := math.Abs(float64(x[j] - y[j])); d > 1e-5 {
				t.Fatalf("weight %d [%d]: %g vs %g after one step", i, j, x[j], y[j])
			}
		}
	}
	// A second accumulated step works on the donated sums' successors.
	if _, err := split.NLLStep(batch, 3, 8, 1e-2); err != nil {
		t.Fatal(err)
	}
}

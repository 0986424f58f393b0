package training

import (
	"math"
	"slices"
	"strings"
	"testing"

	"github.com/gomlx/compute"
	"github.com/gomlx/compute/dtypes"
	"github.com/gomlx/compute/dtypes/bfloat16"
	"github.com/gomlx/compute/gobackend"
	"github.com/gomlx/gomlx/core/graph"
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
		return NewLearner(randomModel(t, backend, qwen3.TinyConfig(64), 5, dtypes.Float32), optim.AdamWConfig{MaxGradNorm: 1})
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

// TestMixedPrecisionUpdatesEveryWeight: at a GRPO-sized learning rate, a
// bfloat16 model trained through the Learner's float32 master weights
// changes the same fraction of its weights as a float32 model (±1 %),
// RMSNorm scales (≈1, where a bfloat16 step is 2⁻⁸) included; a save and
// load of the learner keeps the master weights exactly.
func TestMixedPrecisionUpdatesEveryWeight(t *testing.T) {
	backend, err := gobackend.New("")
	if err != nil {
		t.Fatal(err)
	}
	cfg := qwen3.TinyConfig(64)
	batch := syntheticSamples(4, 12, 3, 17, 5)
	const lr, steps = 5e-6, 10
	changed := map[dtypes.DType]float64{}
	normChanged := map[dtypes.DType]float64{}
	for _, dtype := range []dtypes.DType{dtypes.Float32, dtypes.BFloat16} {
		model := randomModel(t, backend, cfg, 9, dtype)
		l := NewLearner(model, optim.AdamWConfig{MaxGradNorm: 1})
		master, err := l.MasterWeights()
		if err != nil {
			t.Fatal(err)
		}
		before := make([][]float32, len(master)) // copied: the Learner frees its master weights as it replaces them
		for i, w := range master {
			if w.DType() != dtypes.Float32 {
				t.Fatalf("%s: master weights are %s, want float32", cfg.Weights()[i].Name, w.DType())
			}
			before[i] = tensors.MustCopyFlatData[float32](w)
		}
		for s := 0; s < steps; s++ {
			r, err := l.NLLStep(batch, 2, 8, lr)
			if err != nil {
				t.Fatal(err)
			}
			if !isFinite(r.Loss) || !isFinite(r.GradNorm) {
				t.Fatalf("%s step %d: loss %g, gradient norm %g", dtype, s, r.Loss, r.GradNorm)
			}
		}
		after, err := l.MasterWeights()
		if err != nil {
			t.Fatal(err)
		}
		var total, moved, norms, normsMoved int
		for i, spec := range cfg.Weights() {
			if after[i].DType() != dtypes.Float32 {
				t.Fatalf("%s: master weights are %s, want float32", spec.Name, after[i].DType())
			}
			x, y := before[i], tensors.MustCopyFlatData[float32](after[i])
			isNorm := strings.HasSuffix(spec.Name, "norm.weight")
			for j := range x {
				if !isFinite(float64(y[j])) {
					t.Fatalf("%s %s[%d] = %g after training", dtype, spec.Name, j, y[j])
				}
				total++
				if isNorm {
					norms++
				}
				if x[j] != y[j] {
					moved++
					if isNorm {
						normsMoved++
					}
				}
			}
		}
		changed[dtype] = float64(moved) / float64(total)
		normChanged[dtype] = float64(normsMoved) / float64(norms)

		if dtype == dtypes.BFloat16 {
			// The model itself holds the master weights rounded to bfloat16.
			for i, spec := range cfg.Weights() {
				got := model.Weights()[i]
				want := tensors.MustCopyFlatData[float32](after[i])
				rounded := tensors.MustCopyFlatData[bfloat16.BFloat16](got)
				for j := range want {
					if rounded[j] != bfloat16.FromFloat32(want[j]) {
						t.Fatalf("%s[%d]: model holds %v, the master weight %v rounds to %v", spec.Name, j, rounded[j], want[j], bfloat16.FromFloat32(want[j]))
					}
				}
			}
			// Save and load keep the float32 master weights.
			dir := t.TempDir()
			if err := l.Save(dir, dtypes.BFloat16, ""); err != nil {
				t.Fatal(err)
			}
			l2 := NewLearner(randomModel(t, backend, cfg, 1, dtypes.BFloat16), optim.AdamWConfig{MaxGradNorm: 1})
			if err := l2.Load(dir); err != nil {
				t.Fatal(err)
			}
			loaded, err := l2.MasterWeights()
			if err != nil {
				t.Fatal(err)
			}
			for i, spec := range cfg.Weights() {
				if a, b := tensors.MustCopyFlatData[float32](loaded[i]), tensors.MustCopyFlatData[float32](after[i]); !slices.Equal(a, b) {
					t.Fatalf("%s: master weights differ after Save and Load: %v vs %v", spec.Name, a[:4], b[:4])
				}
			}
		}
	}
	t.Logf("weights changed after %d steps at lr %g: float32 %.2f %%, bfloat16 with master weights %.2f %%; norm scales %.2f %% / %.2f %%",
		steps, lr, 100*changed[dtypes.Float32], 100*changed[dtypes.BFloat16], 100*normChanged[dtypes.Float32], 100*normChanged[dtypes.BFloat16])
	if d := math.Abs(changed[dtypes.Float32] - changed[dtypes.BFloat16]); d > 0.01 {
		t.Errorf("fraction of weights changed: float32 %.4f, bfloat16 %.4f (differ by more than 1 %%)", changed[dtypes.Float32], changed[dtypes.BFloat16])
	}
	if normChanged[dtypes.BFloat16] < 0.99 {
		t.Errorf("only %.2f %% of the RMSNorm scales changed in bfloat16", 100*normChanged[dtypes.BFloat16])
	}
}

// TestLearnerFreesWhatItReplaces: an optimizer step frees the device memory
// of the state it replaces (the AdamW moments, the gradient sums, a
// half-precision model's float32 master weights, the model weights its
// previous step installed) at once instead of leaving it to Go's garbage
// collector, which does not see device memory; it keeps the weights it did
// not make, which others share (the GRPO reference model holds the initial
// ones), and the next steps and a checkpoint still work.
func TestLearnerFreesWhatItReplaces(t *testing.T) {
	backend, err := gobackend.New("")
	if err != nil {
		t.Fatal(err)
	}
	model := randomModel(t, backend, qwen3.TinyConfig(64), 3, dtypes.BFloat16)
	batch := syntheticSamples(4, 10, 4, 11, 3)
	l := NewLearner(model, optim.AdamWConfig{MaxGradNorm: 1})
	initial := model.Weights()
	if _, err := l.NLLStep(batch, 2, 8, 1e-3); err != nil {
		t.Fatal(err)
	}
	master, err := l.MasterWeights()
	if err != nil {
		t.Fatal(err)
	}
	installed := model.Weights()
	replaced := map[string][]*tensors.Tensor{"exp_avg": l.m, "exp_avg_sq": l.v, "master": master}
	if _, err := l.NLLStep(batch, 2, 8, 1e-3); err != nil {
		t.Fatal(err)
	}
	for name, ts := range replaced {
		for i, x := range ts {
			if x.Ok() {
				t.Fatalf("%s[%d] (%s) still holds its memory after the step that replaced it", name, i, x.Shape())
			}
		}
	}
	// The weights the Learner did not make stay (the GRPO reference model
	// keeps the initial ones); those its previous step installed are freed.
	for i := range initial {
		if !initial[i].Ok() {
			t.Fatalf("initial model weight %d was freed: weights the Learner did not make are their owners'", i)
		}
		if installed[i].Ok() {
			t.Fatalf("model weight %d installed by the first step still holds its memory after the second step replaced it", i)
		}
	}
	// Gradients summed and then dropped are freed too.
	sumOfFirst := func(w, _ []*graph.Node) (*graph.Node, []*graph.Node) {
		return graph.ConvertDType(graph.ReduceAllSum(w[0]), dtypes.Float32), nil
	}
	for range 2 {
		if _, _, err := l.accumulate("sum_of_first", sumOfFirst, nil); err != nil {
			t.Fatal(err)
		}
	}
	sums := l.acc
	l.Discard()
	for i, x := range sums {
		if x.Ok() {
			t.Fatalf("gradient sum %d still holds its memory after Discard", i)
		}
	}
	// The learner goes on: another step, a checkpoint.
	if _, err := l.NLLStep(batch, 2, 8, 1e-3); err != nil {
		t.Fatal(err)
	}
	if err := l.Save(t.TempDir(), dtypes.BFloat16, ""); err != nil {
		t.Fatal(err)
	}
}

// randomModel is a model of cfg with random weights (seed) in dtype on backend.
func randomModel(t *testing.T, backend compute.Backend, cfg qwen3.Config, seed uint64, dtype dtypes.DType) *qwen3.Model {
	t.Helper()
	w, err := qwen3.RandomWeights(cfg, seed, dtype)
	if err != nil {
		t.Fatal(err)
	}
	m, err := qwen3.New(backend, w)
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// syntheticSamples makes n samples of length tokens of a 64-token
// vocabulary: token j of sample i is (i·a + j·b) mod 64, the first prompt
// tokens are the prompt and the rest the completion.
func syntheticSamples(n, length, prompt, a, b int) []Sample {
	var batch []Sample
	for i := 0; i < n; i++ {
		s := Sample{IDs: make([]int32, length), Mask: make([]int32, length), LogProbs: make([]float32, length)}
		for j := range s.IDs {
			s.IDs[j] = int32((i*a + j*b) % 64)
			if j >= prompt {
				s.Mask[j] = 1
			}
		}
		batch = append(batch, s)
	}
	return batch
}

// TestTrainingStateBytes: mixed precision costs float32 master weights and
// float32 gradient sums on top of the half-precision weights.
func TestTrainingStateBytes(t *testing.T) {
	cfg := qwen3.TinyConfig(64)
	n := cfg.NumParameters()
	if got, want := TrainingStateBytes(cfg, dtypes.Float32), (StateBytes{Weights: 4 * n, Moments: 8 * n, Gradients: 4 * n}); got != want {
		t.Errorf("float32: %+v, want %+v", got, want)
	}
	if got, want := TrainingStateBytes(cfg, dtypes.BFloat16).Total(), 18*n; got != want {
		t.Errorf("bfloat16: %d bytes, want %d (2+4+8+4 per parameter)", got, want)
	}
}

package training

import (
	"encoding/json"
	"math"
	"math/rand/v2"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/gomlx/compute"
	"github.com/gomlx/compute/dtypes"
	"github.com/gomlx/gomlx/core/tensors"
	"github.com/gosqlenv/gosqlenv/training/optim"
	"github.com/gosqlenv/gosqlenv/training/qwen3"
)

// TestGRPOStepMatchesCPU runs one GRPO loss + gradient + AdamW step of a tiny
// float32 model on the pure-Go CPU backend and on the backend named by
// $TRAINING_COMPARE_BACKEND (the GPU: "xla:<plugin>" or "xla:<plugin>,notf32")
// in the same process, and compares the loss, the metric sums, every
// weight's gradient and the updated weights. Skipped when the variable is
// unset (training/gpu/run.sh sets it); "go" compares the CPU with itself.
// $TRAINING_COMPARE_OUT, when set, receives the measured differences as JSON.
//
// Tolerances. In float32 without TF32 both sides compute the same sums in a
// different order: relative differences of order 1e-6; 1e-4 leaves room
// for reductions over thousands of terms. CUDA runs float32 matrix products
// in TF32 by default (inputs rounded to 10 mantissa bits, unit roundoff
// 2^-11 ≈ 4.9e-4), and the gradient of a two-layer model chains about ten
// products: relative differences of a few 1e-3 are expected, so 3e-2 for
// gradients and 1e-2 for the loss. AdamW's first step moves each weight by
// lr·g/(|g|+ε) ≈ lr·sign(g): a component flips when its gradient lies within
// the gradient's error of zero, about a fraction e of them for a relative
// error e. The test counts the components whose update differs by more than
// lr/2 and allows a fraction 1e-3 of them (2e-2 with TF32); the relative L2
// difference of the updates is reported.
func TestGRPOStepMatchesCPU(t *testing.T) {
	spec := os.Getenv("TRAINING_COMPARE_BACKEND")
	if spec == "" {
		t.Skip("set TRAINING_COMPARE_BACKEND (e.g. xla:/path/xla_cuda_plugin.so) to compare a backend with the CPU")
	}
	tf32 := strings.HasPrefix(spec, "xla:") && !strings.Contains(spec, "notf32") && !strings.Contains(spec, "tf32=false")
	tolLoss, tolGrad, tolFlip := 1e-5, 1e-4, 1e-3
	if tf32 {
		tolLoss, tolGrad, tolFlip = 1e-2, 3e-2, 2e-2
	}
	cpu, err := qwen3.NewBackend("go")
	if err != nil {
		t.Fatal(err)
	}
	other, err := qwen3.NewBackend(spec)
	if err != nil {
		t.Fatal(err)
	}
	cfg := TinyModelConfig(512)
	w, err := qwen3.RandomWeights(cfg, 5, dtypes.Float32)
	if err != nil {
		t.Fatal(err)
	}
	report := map[string]any{"backend": spec, "device": other.Description(), "tf32": tf32,
		"tolerances": map[string]float64{"loss": tolLoss, "grad": tolGrad, "update_flip_fraction": tolFlip}}
	cases := []struct {
		name string
		lc   LossConfig
		tree bool // the prefix-tree layout of the loss (prefix_sharing)
	}{
		{"fresh-old", LossConfig{Epsilon: 0.2, Temperature: 1, FreshOld: true}, false},
		{"old-ref-kl", LossConfig{Epsilon: 0.2, EpsilonHigh: 0.28, Beta: 0.04, Temperature: 0.9}, false},
		{"tree-fresh-old", LossConfig{Epsilon: 0.2, Temperature: 1, FreshOld: true}, true},
		{"tree-old-ref-kl", LossConfig{Epsilon: 0.2, EpsilonHigh: 0.28, Beta: 0.04, Temperature: 0.9}, true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			a := grpoStepOn(t, cpu, w, c.lc, c.tree)
			b := grpoStepOn(t, other, w, c.lc, c.tree)
			res := map[string]any{"loss_cpu": a.loss, "loss_other": b.loss, "grad_norm_cpu": a.gradNorm, "grad_norm_other": b.gradNorm}
			lossErr := math.Abs(a.loss-b.loss) / math.Max(math.Abs(a.loss), 1e-12)
			res["loss_rel_err"] = lossErr
			if lossErr > tolLoss {
				t.Errorf("loss %.8g on the CPU, %.8g on %s (relative difference %.2e > %.0e)", a.loss, b.loss, spec, lossErr, tolLoss)
			}
			for j := range a.extras {
				if d := math.Abs(a.extras[j]-b.extras[j]) / math.Max(math.Abs(a.extras[j]), 1); d > tolGrad {
					t.Errorf("metric sum %d: %.8g on the CPU, %.8g on %s", j, a.extras[j], b.extras[j], spec)
				}
			}
			if d := math.Abs(a.gradNorm-b.gradNorm) / a.gradNorm; d > tolGrad {
				t.Errorf("gradient norm %.8g on the CPU, %.8g on %s", a.gradNorm, b.gradNorm, spec)
			}
			var worstGrad, worstUpdate float64
			var worstGradName, worstUpdateName string
			perTensor := map[string][2]float64{}
			flips, total := 0, 0
			for i, ws := range cfg.Weights() {
				ge := relL2(b.grads[i], a.grads[i])
				ua, ub := diff(a.weights[i], w.Tensors[ws.Name]), diff(b.weights[i], w.Tensors[ws.Name])
				ue := relL2(ub, ua)
				for j := range ua {
					if math.Abs(float64(ua[j]-ub[j])) > compareLR/2 {
						flips++
					}
				}
				total += len(ua)
				perTensor[ws.Name] = [2]float64{ge, ue}
				if ge > worstGrad {
					worstGrad, worstGradName = ge, ws.Name
				}
				if ue > worstUpdate {
					worstUpdate, worstUpdateName = ue, ws.Name
				}
				if ge > tolGrad {
					t.Errorf("%s: gradient relative difference %.2e > %.0e", ws.Name, ge, tolGrad)
				}
			}
			flipFrac := float64(flips) / float64(total)
			res["update_flip_fraction"] = flipFrac
			if flipFrac > tolFlip {
				t.Errorf("AdamW step: %d of %d weights (%.2e) moved differently by more than lr/2 (> %.0e)", flips, total, flipFrac, tolFlip)
			}
			res["worst_grad_rel_err"], res["worst_grad_tensor"] = worstGrad, worstGradName
			res["worst_update_rel_err"], res["worst_update_tensor"] = worstUpdate, worstUpdateName
			res["per_tensor_grad_update_rel_err"] = perTensor
			report[c.name] = res
			t.Logf("%s vs CPU: loss %.8g / %.8g (rel %.2e), grad norm %.6g / %.6g, worst gradient rel %.2e (%s), worst update rel %.2e (%s), update flips %.2e",
				spec, b.loss, a.loss, lossErr, b.gradNorm, a.gradNorm, worstGrad, worstGradName, worstUpdate, worstUpdateName, flipFrac)
		})
	}
	if path := os.Getenv("TRAINING_COMPARE_OUT"); path != "" {
		data, _ := json.MarshalIndent(report, "", "  ")
		if err := os.WriteFile(path, data, 0o644); err != nil {
			t.Error(err)
		}
	}
}

// compareLR is the learning rate of the compared AdamW step.
const compareLR = 1e-3

type stepResult struct {
	loss, gradNorm float64
	extras         []float64
	grads          [][]float32 // per weight, Config.Weights order
	weights        [][]float32 // after the AdamW step
}

// compareBatch is a fixed micro-batch of 4 samples whose completions (the
// weighted tokens) follow a prompt, with positive and negative advantages
// and sampling log-probs near the model's: right-padded rows, or prefix
// trees (tree; samples 1 and 3 then share sample 0's first 12 tokens).
func compareBatch(vocab int, tree bool) lossBatch {
	rng := rand.New(rand.NewPCG(11, 12))
	var samples []Sample
	for i, n := range []int{40, 29, 64, 17} {
		s := Sample{IDs: make([]int32, n), Mask: make([]int32, n), LogProbs: make([]float32, n), Episode: i}
		for j := range s.IDs {
			s.IDs[j] = int32(rng.IntN(vocab))
			if j >= n/2 {
				s.Mask[j], s.LogProbs[j] = 1, float32(-math.Log(float64(vocab))+0.3*rng.NormFloat64())
			}
		}
		samples = append(samples, s)
	}
	idx := []int{0, 1, 2, 3}
	weights, err := TokenWeights(samples, []int{0, 0, 0, 0}, len(samples), 64, "dapo")
	if err != nil {
		panic(err)
	}
	adv := []float64{1, -0.5, 0.25, -0.75}
	if tree {
		copy(samples[1].IDs[:12], samples[0].IDs)
		copy(samples[3].IDs[:12], samples[0].IDs)
		lb, err := packTreeSamples(samples, idx, weights, adv, 0)
		if err != nil {
			panic(err)
		}
		return lb
	}
	mb := packSamples(samples, idx, weights, 0, 64, fixedShape{})
	return lossBatch{model: []*tensors.Tensor{mb.ids, mb.mask, mb.positions}, weights: mb.weights,
		advantages: mb.perRow(adv), samplingLogp: mb.samplingLogp}
}

// grpoStepOn runs the trainer's loss graph (Learner.accumulate with
// GRPOTrainer.lossGraph) and one AdamW step on backend, from fresh copies of
// the weights and the batch (a tensor lives on one backend), and returns the
// results copied to the host.
func grpoStepOn(t *testing.T, backend compute.Backend, w *qwen3.Weights, lc LossConfig, tree bool) stepResult {
	t.Helper()
	mb := compareBatch(w.Config.VocabSize, tree)
	fresh := &qwen3.Weights{Config: w.Config, Tensors: map[string]*tensors.Tensor{}}
	for name, x := range w.Tensors {
		fresh.Tensors[name] = tensors.FromFlatDataAndDimensions(tensors.MustCopyFlatData[float32](x), x.Shape().Dimensions...)
	}
	model, err := qwen3.New(backend, fresh)
	if err != nil {
		t.Fatal(err)
	}
	l := NewLearner(model, optim.AdamWConfig{MaxGradNorm: 1})
	tr := &GRPOTrainer{Config: GRPOConfig{Temperature: lc.Temperature}, Learner: l}
	key, graph := tr.lossGraphOf(mb, lc)
	loss, extras, err := l.accumulate(key, graph, append(slices.Clone(mb.model),
		mb.weights, mb.advantages, mb.samplingLogp, mb.samplingLogp, mb.samplingLogp))
	if err != nil {
		t.Fatalf("%s: %v", backend.Name(), err)
	}
	res := stepResult{loss: loss, extras: extras}
	for _, g := range l.acc {
		res.grads = append(res.grads, tensors.MustCopyFlatData[float32](g))
	}
	if res.gradNorm, err = l.Apply(compareLR); err != nil {
		t.Fatalf("%s: %v", backend.Name(), err)
	}
	for _, x := range model.Weights() {
		res.weights = append(res.weights, tensors.MustCopyFlatData[float32](x))
	}
	return res
}

func relL2(got, want []float32) float64 {
	var num, den float64
	for i := range want {
		d := float64(got[i]) - float64(want[i])
		num += d * d
		den += float64(want[i]) * float64(want[i])
	}
	if den == 0 {
		return math.Sqrt(num)
	}
	return math.Sqrt(num / den)
}

// diff returns after − before (before is the initial weight tensor).
func diff(after []float32, before *tensors.Tensor) []float32 {
	b := tensors.MustCopyFlatData[float32](before)
	out := make([]float32, len(after))
	for i := range out {
		out[i] = after[i] - b[i]
	}
	return out
}

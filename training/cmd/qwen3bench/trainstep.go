package main

import (
	"fmt"
	"os"
	"slices"
	"time"

	"github.com/gomlx/compute"
	"github.com/gomlx/compute/dtypes"
	"github.com/gomlx/compute/shapes"
	. "github.com/gomlx/gomlx/core/graph"
	"github.com/gomlx/gomlx/core/tensors"
	"github.com/gosqlenv/gosqlenv/training/optim"
	"github.com/gosqlenv/gosqlenv/training/qwen3"
)

// -mode trainstep: forward + backward + AdamW on a synthetic batch.

// TrainStepResult is one batch size of -mode trainstep.
type TrainStepResult struct {
	Batch        int       `json:"batch"`
	Seq          int       `json:"seq"`
	Tokens       int       `json:"tokens"`
	FirstStep    float64   `json:"first_step_seconds"`
	StepSecs     float64   `json:"step_seconds"`
	StepAll      []float64 `json:"step_seconds_all"`
	TokensPerSec float64   `json:"tokens_per_s"`
	Losses       []float64 `json:"losses"`
	GradNorms    []float64 `json:"grad_norms"`
}

// benchTrainStep times one compiled program doing forward, backward and
// AdamW (the BenchmarkTrainStep graph of training/qwen3 at this shape). The
// weights and moments are donated to the step, so the device holds one copy.
func benchTrainStep(o Options, m *qwen3.Model, r *Report) error {
	step := trainStepExec(m)
	r.Notes = append(r.Notes, "loss: mean next-token NLL over all tokens; AdamW with float32 moments and global-norm clipping 1.0; "+
		"float32 master weights (the forward and backward in the model's dtype); weights and moments donated")
	for _, b := range o.Batches {
		if r.outOfTime() {
			r.Notes = append(r.Notes, fmt.Sprintf("batch %d skipped: -max_seconds reached", b))
			continue
		}
		res, weights, err := benchTrainBatch(o, m, step, b)
		if err != nil {
			return err
		}
		r.add(res)
		fmt.Fprintf(os.Stderr, "train step batch %d × %d: %.3f s (%.0f tokens/s; first step %.1f s), loss %.4f → %.4f\n",
			b, o.Seq, res.StepSecs, res.TokensPerSec, res.FirstStep, res.Losses[0], res.Losses[len(res.Losses)-1])
		if m.DType == dtypes.Float32 { // the model's own weights were donated: keep them valid for the next batch size
			if err := m.SetWeights(weights); err != nil {
				return err
			}
		}
	}
	return nil
}

// trainStepExec compiles one training step: the mean next-token NLL, its
// gradient and an AdamW update. Its inputs are the weights, both moments,
// then ids, mask, positions, the step number and the learning rate; its
// outputs the loss, the new weights and moments, and the gradient norm.
// The step keeps float32 weights; a half-precision model computes the
// forward and backward on them rounded to its dtype (mixed precision, as
// training.Learner does), and the gradients reach the float32 weights
// through the conversion.
func trainStepExec(m *qwen3.Model) *Exec {
	cfg, dtype := m.Config, m.DType
	n := len(cfg.Weights())
	return MustNewExec(m.Backend(), func(g *Graph, in []*Node) []*Node {
		w, mo, ve := in[:n], in[n:2*n], in[2*n:3*n]
		ids, mask, pos, stepN, lr := in[3*n], in[3*n+1], in[3*n+2], in[3*n+3], in[3*n+4]
		compute := w
		if dtype != dtypes.Float32 {
			compute = make([]*Node, n)
			for i, x := range w {
				compute[i] = ConvertDType(x, dtype)
			}
		}
		logp, _ := qwen3.TokenLogProbs(cfg, compute, ids, mask, pos, 1)
		loss := Neg(ReduceAllMean(logp))
		grads := Gradient(loss, w...)
		nw, nm, nv, norm := optim.AdamWStep(optim.AdamWConfig{MaxGradNorm: 1}, w, grads, mo, ve, stepN, lr)
		return append(append(append(append([]*Node{loss}, nw...), nm...), nv...), norm)
	})
}

// benchTrainBatch times o.Reps training steps (after a first, compiling
// one) on a fixed synthetic batch of b sequences of o.Seq tokens, from the
// model's weights and zero moments. It returns the result and the trained
// weights.
func benchTrainBatch(o Options, m *qwen3.Model, step *Exec, b int) (TrainStepResult, []*tensors.Tensor, error) {
	cfg, backend := m.Config, m.Backend()
	n := len(cfg.Weights())
	res := TrainStepResult{Batch: b, Seq: o.Seq, Tokens: b * o.Seq}
	seqs := make([][]int32, b)
	for i := range seqs {
		seqs[i] = make([]int32, o.Seq)
		for j := range seqs[i] {
			seqs[i][j] = int32((i*131 + j*17 + 5) % cfg.VocabSize)
		}
	}
	batch := qwen3.PadRight(seqs, 0, 0)
	weights, err := float32Weights(backend, m.Weights())
	if err != nil {
		return res, nil, err
	}
	moments := make([]*tensors.Tensor, 0, 2*n)
	for range 2 {
		for _, spec := range cfg.Weights() {
			moments = append(moments, tensors.FromShape(shapes.Make(dtypes.Float32, spec.Shape...)))
		}
	}
	one := func(i int) (float64, error) {
		args := make([]any, 0, 3*n+5)
		for _, t := range slices.Concat(weights, moments) {
			d, err := DonateTensorBuffer(t, backend, 0)
			if err != nil {
				return 0, err
			}
			args = append(args, d)
		}
		args = append(args, batch.IDs, batch.Mask, batch.Positions, tensors.FromScalar(float32(i+1)), tensors.FromScalar(float32(1e-4)))
		t0 := time.Now()
		out, err := step.Call(args...)
		if err != nil {
			return 0, fmt.Errorf("train step batch %d: %w", b, err)
		}
		loss := float64(tensors.MustCopyFlatData[float32](out[0])[0]) // waits for the step
		secs := time.Since(t0).Seconds()
		weights, moments = out[1:1+n], out[1+n:1+3*n]
		res.Losses = append(res.Losses, loss)
		res.GradNorms = append(res.GradNorms, float64(tensors.MustCopyFlatData[float32](out[1+3*n])[0]))
		return secs, nil
	}
	if res.FirstStep, err = one(0); err != nil {
		return res, nil, err
	}
	for k := range o.Reps {
		t, err := one(k + 1)
		if err != nil {
			return res, nil, err
		}
		res.StepAll = append(res.StepAll, t)
	}
	res.StepSecs = median(res.StepAll)
	res.TokensPerSec = float64(res.Tokens) / res.StepSecs
	return res, weights, nil
}

// float32Weights returns the weights themselves when they are float32, or
// float32 copies of them.
func float32Weights(backend compute.Backend, ws []*tensors.Tensor) ([]*tensors.Tensor, error) {
	if len(ws) == 0 || ws[0].DType() == dtypes.Float32 {
		return ws, nil
	}
	e, err := NewExec(backend, func(g *Graph, in []*Node) []*Node {
		out := make([]*Node, len(in))
		for i, w := range in {
			out[i] = ConvertDType(w, dtypes.Float32)
		}
		return out
	})
	if err != nil {
		return nil, err
	}
	defer e.Finalize()
	return e.Call(ws)
}

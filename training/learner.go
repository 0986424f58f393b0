package training

import (
	"fmt"
	"math"
	"sync"

	"github.com/gomlx/compute/dtypes"
	"github.com/gomlx/compute/shapes"
	. "github.com/gomlx/gomlx/core/graph"
	"github.com/gomlx/gomlx/core/tensors"
	"github.com/gosqlenv/gosqlenv/training/optim"
	"github.com/gosqlenv/gosqlenv/training/qwen3"
)

// lossGraph builds a micro-batch loss from the model weights and the
// micro-batch inputs; extras are scalar metric sums returned with it.
type lossGraph func(weights, inputs []*Node) (loss *Node, extras []*Node)

// Learner owns a model's optimisation: gradient accumulation over
// micro-batches and AdamW steps with global-norm clipping. The model's
// weights are replaced after each step, so generation sees them at once.
type Learner struct {
	Model *qwen3.Model
	Opt   optim.AdamWConfig

	m, v  []*tensors.Tensor // AdamW moments, float32
	acc   []*tensors.Tensor // accumulated gradients (nil: none yet)
	Steps int               // optimizer steps taken

	mu    sync.Mutex
	execs map[string]*Exec
}

// NewLearner starts an optimiser with zero moments.
func NewLearner(model *qwen3.Model, opt optim.AdamWConfig) *Learner {
	l := &Learner{Model: model, Opt: opt, execs: map[string]*Exec{}}
	for k := 0; k < 2; k++ {
		for _, spec := range model.Config.Weights() {
			t := tensors.FromShape(shapes.Make(dtypes.Float32, spec.Shape...))
			if k == 0 {
				l.m = append(l.m, t)
			} else {
				l.v = append(l.v, t)
			}
		}
	}
	return l
}

func (l *Learner) exec(key string, fn func(g *Graph, in []*Node) []*Node) (*Exec, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if e, ok := l.execs[key]; ok {
		return e, nil
	}
	e, err := NewExec(l.Model.Backend(), fn)
	if err != nil {
		return nil, fmt.Errorf("learner: build %s: %w", key, err)
	}
	e.WithName("learner_" + key).SetMaxCache(64)
	l.execs[key] = e
	return e, nil
}

// accumulate runs one micro-batch's loss graph (compiled once per key and
// input shapes), adds its gradients to the accumulator and returns the loss
// and the extra metric sums.
func (l *Learner) accumulate(key string, fn lossGraph, inputs []*tensors.Tensor) (loss float64, extras []float64, err error) {
	n := len(l.Model.Config.Weights())
	e, err := l.exec("grad_"+key, func(g *Graph, in []*Node) []*Node {
		w := in[:n]
		lossNode, ex := fn(w, in[n:])
		out := append([]*Node{lossNode}, ex...)
		return append(out, Gradient(lossNode, w...)...)
	})
	if err != nil {
		return 0, nil, err
	}
	args := append(l.Model.Weights(), inputs...)
	out, err := e.Call(args)
	if err != nil {
		return 0, nil, fmt.Errorf("learner: %s: %w", key, err)
	}
	grads := out[len(out)-n:]
	metrics := out[:len(out)-n]
	loss = scalar(metrics[0])
	for _, t := range metrics[1:] {
		extras = append(extras, scalar(t))
	}
	if l.acc == nil {
		l.acc = grads
		return loss, extras, nil
	}
	add, err := l.exec("accumulate", func(g *Graph, in []*Node) []*Node {
		out := make([]*Node, n)
		for i := range out {
			out[i] = Add(in[i], in[n+i])
		}
		return out
	})
	if err != nil {
		return 0, nil, err
	}
	// The running sums are donated (updated in place where the backend can):
	// they are replaced by the result, so a model's worth of memory is saved.
	sums := make([]any, 0, 2*n)
	for _, t := range l.acc {
		d, err := DonateTensorBuffer(t, l.Model.Backend(), 0)
		if err != nil {
			l.acc = nil
			return 0, nil, fmt.Errorf("learner: accumulate gradients: %w", err)
		}
		sums = append(sums, d)
	}
	for _, t := range grads {
		sums = append(sums, t)
	}
	if l.acc, err = add.Call(sums...); err != nil {
		l.acc = nil
		return 0, nil, fmt.Errorf("learner: accumulate gradients: %w", err)
	}
	return loss, extras, nil
}

// Apply takes one AdamW step with the accumulated gradients at learning rate
// lr, installs the new weights in the model, clears the accumulator and
// returns the gradients' global norm (before clipping).
func (l *Learner) Apply(lr float64) (gradNorm float64, err error) {
	if l.acc == nil {
		return 0, fmt.Errorf("learner: no gradients to apply")
	}
	n := len(l.Model.Config.Weights())
	e, err := l.exec("adamw", func(g *Graph, in []*Node) []*Node {
		w, gr, m, v := in[:n], in[n:2*n], in[2*n:3*n], in[3*n:4*n]
		nw, nm, nv, norm := optim.AdamWStep(l.Opt, w, gr, m, v, in[4*n], in[4*n+1])
		return append(append(append(nw, nm...), nv...), norm)
	})
	if err != nil {
		return 0, err
	}
	args := append(append(append(append(l.Model.Weights(), l.acc...), l.m...), l.v...),
		tensors.FromScalar(float32(l.Steps+1)), tensors.FromScalar(float32(lr)))
	out, err := e.Call(args)
	if err != nil {
		return 0, fmt.Errorf("learner: AdamW step: %w", err)
	}
	if err := l.Model.SetWeights(out[:n]); err != nil {
		return 0, err
	}
	l.m, l.v, l.acc = out[n:2*n], out[2*n:3*n], nil
	l.Steps++
	return scalar(out[3*n]), nil
}

// Discard drops accumulated gradients.
func (l *Learner) Discard() { l.acc = nil }

func scalar(t *tensors.Tensor) float64 {
	switch t.DType() {
	case dtypes.Float64:
		return tensors.MustCopyFlatData[float64](t)[0]
	default:
		return float64(tensors.MustCopyFlatData[float32](t)[0])
	}
}

// microBatch is a padded micro-batch of samples.
type microBatch struct {
	ids, mask, positions *tensors.Tensor // [B, T] int32
	weights              *tensors.Tensor // [B, T] float32
	samplingLogp         *tensors.Tensor // [B, T] float32
	rows                 []int           // sample index of each row (-1: padding row)
}

// packSamples pads samples to a common length (rounded up to bucket) and the
// batch to a power of two; padding rows have zero weight.
func packSamples(samples []Sample, idx []int, weights [][]float32, pad int32, bucket int) microBatch {
	longest := 0
	for _, i := range idx {
		longest = max(longest, len(samples[i].IDs))
	}
	if bucket > 0 {
		longest = (longest + bucket - 1) / bucket * bucket
	}
	rows := 1
	for rows < len(idx) {
		rows *= 2
	}
	ids, mask, pos := make([]int32, rows*longest), make([]int32, rows*longest), make([]int32, rows*longest)
	w, sl := make([]float32, rows*longest), make([]float32, rows*longest)
	mb := microBatch{rows: make([]int, rows)}
	for r := 0; r < rows; r++ {
		mb.rows[r] = -1
		for t := 0; t < longest; t++ {
			ids[r*longest+t] = pad
		}
		if r >= len(idx) {
			continue
		}
		s := samples[idx[r]]
		mb.rows[r] = idx[r]
		for t := range s.IDs {
			o := r*longest + t
			ids[o], mask[o], pos[o] = s.IDs[t], 1, int32(t)
			w[o], sl[o] = weights[idx[r]][t], s.LogProbs[t]
		}
	}
	mb.ids = tensors.FromFlatDataAndDimensions(ids, rows, longest)
	mb.mask = tensors.FromFlatDataAndDimensions(mask, rows, longest)
	mb.positions = tensors.FromFlatDataAndDimensions(pos, rows, longest)
	mb.weights = tensors.FromFlatDataAndDimensions(w, rows, longest)
	mb.samplingLogp = tensors.FromFlatDataAndDimensions(sl, rows, longest)
	return mb
}

// perRow builds a [B] float32 tensor from per-sample values.
func (mb microBatch) perRow(values []float64) *tensors.Tensor {
	out := make([]float32, len(mb.rows))
	for r, i := range mb.rows {
		if i >= 0 {
			out[r] = float32(values[i])
		}
	}
	return tensors.FromFlatDataAndDimensions(out, len(out))
}

func isFinite(x float64) bool { return !math.IsNaN(x) && !math.IsInf(x, 0) }

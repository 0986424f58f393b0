package training

import (
	"fmt"
	"slices"
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
//
// A model in bfloat16 or float16 is trained in mixed precision: the Learner
// keeps float32 master weights, float32 gradient sums and float32 AdamW
// moments; the forward and backward passes run in the model's dtype, AdamW
// updates the master weights and the model gets them rounded to its dtype.
// Without master weights an update smaller than half a bfloat16 step
// (|w|·2⁻⁹) would be rounded away: at lr 5e-6 most weights of a std-0.02
// model and every RMSNorm scale (≈1) would never change.
type Learner struct {
	Model *qwen3.Model
	Opt   optim.AdamWConfig

	master    []*tensors.Tensor // float32 master weights (nil: the model is float32)
	installed []*tensors.Tensor // the model weights the master weights were rounded to
	m, v      []*tensors.Tensor // AdamW moments, float32
	acc       []*tensors.Tensor // accumulated gradients, float32 when mixed (nil: none yet)
	stepped   []*tensors.Tensor // the model weights this Learner's last Apply installed
	Steps     int               // optimizer steps taken

	mu    sync.Mutex
	execs map[string]*Exec
}

// NewLearner starts an optimiser with zero moments. The master weights of a
// half-precision model are taken from the model at the first step.
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
	// Inputs are bucketed (lengths, batch rows, prefix-tree rows and scored
	// tokens), so the programs are bounded; a long run meets more than 64.
	e.WithName("learner_" + key).SetMaxCache(-1)
	l.execs[key] = e
	return e, nil
}

// accumulate runs one micro-batch's loss graph (compiled once per key and
// input shapes), adds its gradients to the accumulator and returns the loss
// and the extra metric sums.
func (l *Learner) accumulate(key string, fn lossGraph, inputs []*tensors.Tensor) (loss float64, extras []float64, err error) {
	n := len(l.Model.Config.Weights())
	mixed := l.mixed()
	e, err := l.exec("grad_"+key, func(g *Graph, in []*Node) []*Node {
		w := in[:n]
		lossNode, ex := fn(w, in[n:])
		out := append([]*Node{lossNode}, ex...)
		for _, grad := range Gradient(lossNode, w...) {
			if mixed {
				// Summed over micro-batches and fed to AdamW in float32.
				grad = ConvertDType(grad, dtypes.Float32)
			}
			out = append(out, grad)
		}
		return out
	})
	if err != nil {
		return 0, nil, err
	}
	args := slices.Concat(l.Model.Weights(), inputs)
	out, err := qwen3.Run(e, args)
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
		d, err := qwen3.Donate(t, l.Model.Backend())
		if err != nil {
			l.acc = nil
			return 0, nil, fmt.Errorf("learner: accumulate gradients: %w", err)
		}
		sums = append(sums, d)
	}
	for _, t := range grads {
		sums = append(sums, t)
	}
	if l.acc, err = qwen3.Run(add, sums...); err != nil {
		l.acc = nil
		return 0, nil, fmt.Errorf("learner: accumulate gradients: %w", err)
	}
	// The micro-batch's gradients are in the sums now.
	qwen3.Free(grads)
	return loss, extras, nil
}

// mixed reports whether the model computes in a narrower dtype than the
// float32 of the optimizer (mixed precision, with master weights).
func (l *Learner) mixed() bool { return l.Model.DType != dtypes.Float32 }

// masterWeights returns the float32 weights AdamW updates: the model's own
// for a float32 model; for a half-precision model the master weights,
// (re)made from the model's when the model's weights were replaced by
// something other than this Learner (a new model, a checkpoint loaded into
// it, another trainer's steps).
func (l *Learner) masterWeights() ([]*tensors.Tensor, error) {
	current := l.Model.Weights()
	if !l.mixed() {
		return current, nil
	}
	if l.master != nil && slices.Equal(current, l.installed) {
		return l.master, nil
	}
	n := len(current)
	e, err := l.exec("master", func(g *Graph, in []*Node) []*Node {
		out := make([]*Node, n)
		for i, w := range in {
			out[i] = ConvertDType(w, dtypes.Float32)
		}
		return out
	})
	if err != nil {
		return nil, err
	}
	master, err := qwen3.Run(e, current)
	if err != nil {
		return nil, fmt.Errorf("learner: float32 master weights: %w", err)
	}
	qwen3.Free(l.master) // made for weights the model no longer has
	l.master, l.installed = master, current
	return master, nil
}

// Apply takes one AdamW step with the accumulated gradients at learning rate
// lr, installs the new weights in the model (freeing the device memory of
// those its previous step installed: copy model weights to be kept past the
// next step, e.g. with Model.HostWeights), clears the accumulator and
// returns the gradients' global norm (before clipping). With mixed
// precision the step updates the float32 master weights and the model gets
// them rounded to its dtype.
func (l *Learner) Apply(lr float64) (gradNorm float64, err error) {
	if l.acc == nil {
		return 0, fmt.Errorf("learner: no gradients to apply")
	}
	n := len(l.Model.Config.Weights())
	weights, err := l.masterWeights()
	if err != nil {
		return 0, err
	}
	mixed, modelDType := l.mixed(), l.Model.DType
	e, err := l.exec("adamw", func(g *Graph, in []*Node) []*Node {
		w, gr, m, v := in[:n], in[n:2*n], in[2*n:3*n], in[3*n:4*n]
		nw, nm, nv, norm := optim.AdamWStep(l.Opt, w, gr, m, v, in[4*n], in[4*n+1])
		out := append(append(append(nw, nm...), nv...), norm)
		if mixed {
			for _, w := range nw {
				out = append(out, ConvertDType(w, modelDType))
			}
		}
		return out
	})
	if err != nil {
		return 0, err
	}
	// The gradient sums, the moments and the weights AdamW updates when they
	// are the Learner's own (master weights, or those its previous step
	// installed) are donated: the backend may update them in place, so a
	// step needs no second copy of the state.
	previous := l.Model.Weights()
	ownWeights := mixed || (l.stepped != nil && slices.Equal(previous, l.stepped))
	args := make([]any, 0, 4*n+2)
	for i, group := range [][]*tensors.Tensor{weights, l.acc, l.m, l.v} {
		for _, t := range group {
			if i == 0 && !ownWeights {
				args = append(args, t)
				continue
			}
			d, err := qwen3.Donate(t, l.Model.Backend())
			if err != nil {
				return 0, fmt.Errorf("learner: AdamW step: %w", err)
			}
			args = append(args, d)
		}
	}
	args = append(args, tensors.FromScalar(float32(l.Steps+1)), tensors.FromScalar(float32(lr)))
	out, err := qwen3.Run(e, args...)
	if err != nil {
		// The donated state is gone: this Learner cannot step again.
		l.acc, l.m, l.v = nil, nil, nil
		return 0, fmt.Errorf("learner: AdamW step: %w", err)
	}
	modelWeights := out[:n]
	if mixed {
		modelWeights = out[3*n+1:]
		l.master, l.installed = out[:n], modelWeights
	}
	if err := l.Model.SetWeights(modelWeights); err != nil {
		return 0, err
	}
	// The moments, the gradient sums and the old master weights were
	// donated. Also replaced: the model weights this Learner's previous step
	// installed, in half precision (weights it did not make — a base model,
	// a loaded checkpoint, the GRPO reference — are left to their owners).
	if mixed && l.stepped != nil && slices.Equal(previous, l.stepped) {
		qwen3.Free(previous)
	}
	l.m, l.v, l.acc, l.stepped = out[n:2*n], out[2*n:3*n], nil, modelWeights
	l.Steps++
	return scalar(out[3*n]), nil
}

// MasterWeights returns the float32 weights the optimizer updates, in
// Config.Weights order: the model's weights for a float32 model, the master
// weights for a half-precision one (the model holds them rounded). The
// master weights are the Learner's: the next step frees them (device memory
// is freed as the state is replaced), so copy what is to be kept.
func (l *Learner) MasterWeights() ([]*tensors.Tensor, error) { return l.masterWeights() }

// StateBytes is the memory the training state takes, by part.
type StateBytes struct {
	Weights   int64 // the model's weights, in its dtype
	Master    int64 // float32 master weights (0 for a float32 model)
	Moments   int64 // AdamW's two float32 moments
	Gradients int64 // the gradient sums across micro-batches (float32 when mixed)
}

// Total is the sum of the parts.
func (s StateBytes) Total() int64 { return s.Weights + s.Master + s.Moments + s.Gradients }

// TrainingStateBytes is the memory of a Learner's state for a model of cfg
// in dtype: weights, master weights, moments and gradient sums (activations
// and the compiled programs' scratch space come on top).
func TrainingStateBytes(cfg qwen3.Config, dtype dtypes.DType) StateBytes {
	n := cfg.NumParameters()
	s := StateBytes{Weights: n * int64(dtype.Size()), Moments: 2 * 4 * n, Gradients: n * int64(dtype.Size())}
	if dtype != dtypes.Float32 {
		s.Master, s.Gradients = 4*n, 4*n
	}
	return s
}

// Discard drops accumulated gradients.
func (l *Learner) Discard() { qwen3.Free(l.acc); l.acc = nil }

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
func packSamples(samples []Sample, idx []int, weights [][]float32, pad int32, bucket int, fixed fixedShape) microBatch {
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
	if fixed.rows > 0 {
		rows = max(fixed.rows, len(idx))
	}
	if fixed.length > 0 {
		longest = max(fixed.length, longest)
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

// fixedShape, when set, is the shape of every micro-batch of a phase
// (static_shapes): rows and length (0: bucketed to the micro-batch's own
// size, as without static shapes). A micro-batch that would not fit keeps
// its own larger size.
type fixedShape struct{ rows, length int }

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

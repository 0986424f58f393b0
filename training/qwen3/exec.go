package qwen3

import (
	"fmt"
	"slices"
	"sync"

	"github.com/gomlx/compute"
	"github.com/gomlx/compute/dtypes"
	. "github.com/gomlx/gomlx/core/graph"
	"github.com/gomlx/gomlx/core/tensors"
)

// Model is a Qwen3 model on a compute backend. Its weights are plain inputs
// of every compiled program (never baked-in constants), so an optimizer that
// replaces them with SetWeights changes what the very next call computes.
// A Model is safe for concurrent use.
type Model struct {
	Config  Config
	DType   dtypes.DType
	backend compute.Backend

	mu      sync.RWMutex
	weights []*tensors.Tensor // Config.Weights() order

	execMu sync.Mutex
	execs  map[string]*Exec

	// keysInCache is the layout of the generation's key cache (see
	// keysByDim).
	keysInCache keyLayout
}

// New puts weights on backend as a model. The weights' dtype (float32,
// bfloat16 or float16) is the model's compute dtype; softmax, log-softmax and
// norms' statistics are always computed in float32.
func New(backend compute.Backend, w *Weights) (*Model, error) {
	cfg := w.Config
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	m := &Model{Config: cfg, backend: backend, execs: map[string]*Exec{}}
	ts := make([]*tensors.Tensor, 0, len(w.Tensors))
	for _, spec := range cfg.Weights() {
		t, ok := w.Tensors[spec.Name]
		if !ok {
			return nil, fmt.Errorf("qwen3: weight %s is missing", spec.Name)
		}
		if !slices.Equal(t.Shape().Dimensions, spec.Shape) {
			return nil, fmt.Errorf("qwen3: weight %s has shape %v, want %v", spec.Name, t.Shape().Dimensions, spec.Shape)
		}
		if m.DType == dtypes.InvalidDType {
			m.DType = t.DType()
		} else if t.DType() != m.DType {
			return nil, fmt.Errorf("qwen3: weight %s is %s but the others are %s", spec.Name, t.DType(), m.DType)
		}
		ts = append(ts, t)
	}
	switch m.DType {
	case dtypes.Float32, dtypes.BFloat16, dtypes.Float16:
	default:
		return nil, fmt.Errorf("qwen3: unsupported weight dtype %s (want float32, bfloat16 or float16)", m.DType)
	}
	m.weights = ts
	if isGoBackend(backend) && goMatMulAVX512 {
		m.keysInCache = keysByDim
	}
	noteHalfKernel(backend, m.DType)
	return m, nil
}

// Backend is the model's compute backend.
func (m *Model) Backend() compute.Backend { return m.backend }

// Weights returns the current weight tensors in Config.Weights order.
func (m *Model) Weights() []*tensors.Tensor {
	m.mu.RLock()
	defer m.mu.RUnlock()
	return slices.Clone(m.weights)
}

// SetWeights replaces the weights (e.g. after an optimizer step); shapes and
// dtype must not change.
func (m *Model) SetWeights(ws []*tensors.Tensor) error {
	specs := m.Config.Weights()
	if len(ws) != len(specs) {
		return fmt.Errorf("qwen3: SetWeights got %d tensors, want %d", len(ws), len(specs))
	}
	for i, t := range ws {
		if !slices.Equal(t.Shape().Dimensions, specs[i].Shape) || t.DType() != m.DType {
			return fmt.Errorf("qwen3: SetWeights: %s is %s%v, want %s%v", specs[i].Name, t.DType(), t.Shape().Dimensions, m.DType, specs[i].Shape)
		}
	}
	m.mu.Lock()
	m.weights = slices.Clone(ws)
	m.mu.Unlock()
	return nil
}

// HostWeights copies the current weights into a Weights value (for Save).
func (m *Model) HostWeights() *Weights {
	w := &Weights{Config: m.Config, Tensors: map[string]*tensors.Tensor{}}
	for i, spec := range m.Config.Weights() {
		w.Tensors[spec.Name] = m.Weights()[i]
	}
	return w
}

// exec returns (building once) the executor named key.
func (m *Model) exec(key string, fn func(g *Graph, inputs []*Node) []*Node) (*Exec, error) {
	m.execMu.Lock()
	defer m.execMu.Unlock()
	if e, ok := m.execs[key]; ok {
		return e, nil
	}
	e, err := NewExec(m.backend, fn)
	if err != nil {
		return nil, fmt.Errorf("qwen3: build %s: %w", key, err)
	}
	e.WithName("qwen3_" + key).SetMaxCache(64)
	m.execs[key] = e
	return e, nil
}

// call runs an executor on the weights followed by args.
func (m *Model) call(e *Exec, args ...*tensors.Tensor) ([]*tensors.Tensor, error) {
	in := make([]any, len(args))
	for i, t := range args {
		in[i] = t
	}
	return m.callAny(e, in...)
}

// callAny runs an executor on the weights followed by args, which may hold
// donated buffers (DonateTensorBuffer) besides tensors.
func (m *Model) callAny(e *Exec, args ...any) ([]*tensors.Tensor, error) {
	in := make([]any, 0, len(m.weights)+len(args))
	for _, w := range m.Weights() {
		in = append(in, w)
	}
	in = append(in, args...)
	out, err := Run(e, in...)
	if err != nil {
		return nil, fmt.Errorf("qwen3 on backend %s: %w", m.backend.Name(), err)
	}
	return out, nil
}

// Batch is a padded batch of sequences with its mask and positions.
type Batch struct {
	IDs, Mask, Positions *tensors.Tensor // [B, T] int32
	Lengths              []int
	T                    int
	LeftPadded           bool
}

// PadRight packs sequences into a right-padded batch of length T (at least
// the longest sequence; 0 means exactly that), positions 0, 1, ….
func PadRight(seqs [][]int32, pad int32, t int) Batch {
	return padBatch(seqs, pad, t, false)
}

// PadLeft packs sequences into a left-padded batch (for generation): every
// sequence ends at T−1; positions count real tokens from 0.
func PadLeft(seqs [][]int32, pad int32, t int) Batch {
	return padBatch(seqs, pad, t, true)
}

func padBatch(seqs [][]int32, pad int32, t int, left bool) Batch {
	for _, s := range seqs {
		t = max(t, len(s))
	}
	b := len(seqs)
	ids, mask, pos := make([]int32, b*t), make([]int32, b*t), make([]int32, b*t)
	lengths := make([]int, b)
	for i, s := range seqs {
		off := 0
		if left {
			off = t - len(s)
		}
		row := ids[i*t : (i+1)*t]
		for j := range row {
			row[j] = pad
		}
		for j, tok := range s {
			ids[i*t+off+j] = tok
			mask[i*t+off+j] = 1
			pos[i*t+off+j] = int32(j)
		}
		lengths[i] = len(s)
	}
	return Batch{
		IDs: tensors.FromFlatDataAndDimensions(ids, b, t), Mask: tensors.FromFlatDataAndDimensions(mask, b, t),
		Positions: tensors.FromFlatDataAndDimensions(pos, b, t), Lengths: lengths, T: t, LeftPadded: left,
	}
}

// BucketLength rounds a sequence length up to the next of 16, 24, 32, 48,
// 64, 96, … (2ᵏ and 1.5·2ᵏ): at most a third of a bucketed sequence is
// padding, and all lengths up to 40,960 fall in 24 buckets.
func BucketLength(t int) int {
	b := 16
	for b < t {
		if b&(b-1) == 0 {
			b += b / 2 // 2ᵏ → 1.5·2ᵏ
		} else {
			b = b / 3 * 4 // 1.5·2ᵏ → 2ᵏ⁺¹
		}
	}
	return b
}

// bucketBatch pads a batch of sequences with empty rows to the next power
// of two, so that Logits and Score compile one program per bucket of
// lengths and batch sizes, not one per distinct call.
func bucketBatch(seqs [][]int32) [][]int32 {
	rows := 1
	for rows < len(seqs) {
		rows *= 2
	}
	return append(slices.Clone(seqs), make([][]int32, rows-len(seqs))...)
}

// bucketedExec returns the executor named key for programs whose input
// shapes are bucketed (BucketLength, BucketRows, the generation length
// bucket): the number of programs it compiles is bounded by the buckets,
// so its cache is not limited to 64 — a long run meets more combinations
// of batch sizes and lengths than that.
func (m *Model) bucketedExec(key string, fn func(g *Graph, inputs []*Node) []*Node) (*Exec, error) {
	e, err := m.exec(key, fn)
	if err != nil {
		return nil, err
	}
	return e.SetMaxCache(-1), nil
}

// batchLogits returns the flat float32 logits [B, T, V] of a batch.
func (m *Model) batchLogits(b Batch) ([]float32, error) {
	n := len(m.weights)
	e, err := m.bucketedExec("logits", func(g *Graph, in []*Node) []*Node {
		return []*Node{Logits(m.Config, in[:n], in[n], in[n+1], in[n+2])}
	})
	if err != nil {
		return nil, err
	}
	out, err := m.call(e, b.IDs, b.Mask, b.Positions)
	if err != nil {
		return nil, err
	}
	return tensors.MustCopyFlatData[float32](out[0]), nil
}

// Logits computes the float32 logits of every position of every sequence
// (right-padded internally, to bucketed lengths and batch sizes):
// result[b][t] has Config.VocabSize values.
func (m *Model) Logits(seqs [][]int32) ([][][]float32, error) {
	longest := 0
	for _, s := range seqs {
		longest = max(longest, len(s))
	}
	b := PadRight(bucketBatch(seqs), 0, BucketLength(longest))
	flat, err := m.batchLogits(b)
	if err != nil {
		return nil, err
	}
	v := m.Config.VocabSize
	res := make([][][]float32, len(seqs))
	for i, s := range seqs {
		res[i] = make([][]float32, len(s))
		for j := range s {
			off := (i*b.T + j) * v
			res[i][j] = flat[off : off+v]
		}
	}
	return res, nil
}

// Score returns, for each sequence, the log-probability of each token given
// the ones before it (len(seq)−1 values) and the entropy of each of those
// next-token distributions, at the given sampling temperature (≤ 0 means 1).
func (m *Model) Score(seqs [][]int32, temperature float64) (logp, entropy [][]float32, err error) {
	n := len(m.weights)
	key := fmt.Sprintf("score_t%g", temperature)
	e, err := m.bucketedExec(key, func(g *Graph, in []*Node) []*Node {
		lp, ent := TokenLogProbs(m.Config, in[:n], in[n], in[n+1], in[n+2], temperature)
		return []*Node{lp, ent}
	})
	if err != nil {
		return nil, nil, err
	}
	longest := 2
	for _, s := range seqs {
		longest = max(longest, len(s))
	}
	b := PadRight(bucketBatch(seqs), 0, BucketLength(longest))
	out, err := m.call(e, b.IDs, b.Mask, b.Positions)
	if err != nil {
		return nil, nil, err
	}
	lpFlat := tensors.MustCopyFlatData[float32](out[0])
	entFlat := tensors.MustCopyFlatData[float32](out[1])
	w := b.T - 1
	for i, s := range seqs {
		k := max(len(s)-1, 0)
		logp = append(logp, slices.Clone(lpFlat[i*w:i*w+k]))
		entropy = append(entropy, slices.Clone(entFlat[i*w:i*w+k]))
	}
	return logp, entropy, nil
}

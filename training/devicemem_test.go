package training

import (
	"context"
	"runtime/debug"
	"testing"

	"github.com/gomlx/compute/dtypes"
	"github.com/gomlx/compute/gobackend"
	"github.com/gosqlenv/gosqlenv/training/qwen3"
	"sync"

	"github.com/gomlx/compute"
	"github.com/gomlx/compute/shapes"
)

// memBackend wraps a compute backend and counts the bytes of its live
// buffers: those a program returned or data was uploaded to, until they are
// finalized or donated to a program. It is what a GPU holds: a buffer that
// only Go's collector would release (never finalized) stays counted, as
// device memory stays taken on XLA until the collector runs, which does not
// see device memory.
type memBackend struct {
	compute.Backend
	mu         sync.Mutex
	live, peak int64
	sizes      map[*memBuffer]int64
}

func newMemBackend(b compute.Backend) *memBackend {
	return &memBackend{Backend: b, sizes: map[*memBuffer]int64{}}
}

// Live returns the bytes of live buffers now and the most there were.
func (b *memBackend) Live() (live, peak int64) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.live, b.peak
}

// ResetPeak makes the peak the bytes live now.
func (b *memBackend) ResetPeak() {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.peak = b.live
}

func (b *memBackend) track(buf compute.Buffer) compute.Buffer {
	if buf == nil {
		return nil
	}
	var n int64
	if s, err := buf.Shape(); err == nil {
		n = int64(s.Memory())
	}
	w := &memBuffer{Buffer: buf, owner: b}
	b.mu.Lock()
	b.sizes[w] = n
	b.live += n
	b.peak = max(b.peak, b.live)
	b.mu.Unlock()
	return w
}

func (b *memBackend) release(w *memBuffer) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if n, ok := b.sizes[w]; ok {
		b.live -= n
		delete(b.sizes, w)
	}
}

func (b *memBackend) Builder(name string) compute.Builder {
	return memBuilder{Builder: b.Backend.Builder(name), owner: b}
}

func (b *memBackend) BufferFromFlatData(dev compute.DeviceNum, flat any, shape shapes.Shape) (compute.Buffer, error) {
	buf, err := b.Backend.BufferFromFlatData(dev, flat, shape)
	if err != nil {
		return nil, err
	}
	return b.track(buf), nil
}

func (b *memBackend) NewSharedBuffer(dev compute.DeviceNum, shape shapes.Shape) (compute.Buffer, any, error) {
	buf, flat, err := b.Backend.NewSharedBuffer(dev, shape)
	if err != nil {
		return nil, nil, err
	}
	return b.track(buf), flat, nil
}

// memBuffer is a buffer of a memBackend.
type memBuffer struct {
	compute.Buffer
	owner *memBackend
}

func (w *memBuffer) Backend() compute.Backend { return w.owner }

func (w *memBuffer) Finalize() error {
	w.owner.release(w)
	return w.Buffer.Finalize()
}

func (w *memBuffer) CopyToDevice(dev compute.DeviceNum) (compute.Buffer, error) {
	buf, err := w.Buffer.CopyToDevice(dev)
	if err != nil {
		return nil, err
	}
	return w.owner.track(buf), nil
}

type memBuilder struct {
	compute.Builder
	owner *memBackend
}

func (b memBuilder) Compile() (compute.Executable, error) {
	e, err := b.Builder.Compile()
	if err != nil {
		return nil, err
	}
	return memExecutable{Executable: e, owner: b.owner}, nil
}

type memExecutable struct {
	compute.Executable
	owner *memBackend
}

// Execute unwraps the inputs, forgets the donated ones (the program owns
// them now) and tracks the outputs.
func (e memExecutable) Execute(inputs []compute.Buffer, donate []bool, dev compute.DeviceNum) ([]compute.Buffer, error) {
	inner := make([]compute.Buffer, len(inputs))
	for i, in := range inputs {
		inner[i] = in
		if w, ok := in.(*memBuffer); ok {
			inner[i] = w.Buffer
			if i < len(donate) && donate[i] {
				e.owner.release(w)
			}
		}
	}
	outs, err := e.Executable.Execute(inner, donate, dev)
	if err != nil {
		return nil, err
	}
	for i, o := range outs {
		outs[i] = e.owner.track(o)
	}
	return outs, nil
}

// TestGRPOStepFreesDeviceMemory is the CPU proxy of a GPU's memory over
// GRPO steps (issue 53): with a 2-layer model of Qwen3-1.7B's layer shapes
// on a backend that counts live buffers, the bytes live after each of 5
// steps stay at the training state's (weights and AdamW moments: nothing a
// step made is left to Go's collector), and the peak during a step stays
// under weights + master + moments + gradients + one micro-batch's gradients
// + the KV caches of one generation batch (see peakBound).
func TestGRPOStepFreesDeviceMemory(t *testing.T) {
	if testing.Short() {
		t.Skip("a 100 M-parameter model: -short skips it")
	}
	// Its ~100 M-parameter model leaves gigabytes of garbage: hand them back
	// before the package's next tests (CI runs packages side by side).
	// A soft memory limit keeps the collector up with it (without one the
	// package's process reached 20 GB).
	limit := debug.SetMemoryLimit(4 << 30)
	t.Cleanup(func() { debug.SetMemoryLimit(limit); debug.FreeOSMemory() })
	cfg, _, roller, ids, newEnv := tinySetup(t, t.TempDir())
	inner, err := gobackend.New("")
	if err != nil {
		t.Fatal(err)
	}
	backend := newMemBackend(inner)
	mcfg := qwen3.TinyConfig(259)
	mcfg.HiddenSize, mcfg.IntermediateSize, mcfg.NumHiddenLayers = 2048, 6144, 2
	mcfg.NumAttentionHeads, mcfg.NumKeyValueHeads, mcfg.HeadDim = 16, 8, 128
	w, err := qwen3.RandomWeights(mcfg, 1, dtypes.Float32)
	if err != nil {
		t.Fatal(err)
	}
	model, err := qwen3.New(backend, w)
	if err != nil {
		t.Fatal(err)
	}
	rcfg := roller.cfg
	rcfg.NumGenerations, rcfg.MaxNewTokens = 2, 8
	if roller, err = NewRoller(model, byteTokenizer{}, newEnv, rcfg); err != nil {
		t.Fatal(err)
	}
	cfg.NumGenerations, cfg.PerDeviceTrainBatchSize, cfg.GradientAccumulationSteps = 2, 1, 2
	cfg.MaxNewTokens, cfg.StepBudget, cfg.Beta = 8, 1, 0
	tr, err := NewGRPOTrainer(cfg, model, roller, ids, nil)
	if err != nil {
		t.Fatal(err)
	}
	tr.Rewards = append(tr.Rewards, lengthReward)
	weightBytes := int64(0)
	for _, x := range model.Weights() {
		weightBytes += int64(x.Shape().Memory())
	}
	// The state between steps: the base weights (the test's own, which the
	// trainer leaves alone), the trained weights and two AdamW moments, all
	// float32 (no master weights).
	state := 4 * weightBytes
	// The peak: that state, the gradient sums and one micro-batch's
	// gradients (two more weights' worth; AdamW's inputs are donated, so it
	// needs no second copy), plus the KV caches of one generation batch —
	// 2 rows (one question × 2 generations) × 2 (keys, values) × layers ×
	// KV heads × head size × 4 bytes × positions, at most 4,096 positions
	// (the byte tokenizer's prompts are under 3,000 tokens) — and 1 MB of
	// small inputs and outputs (token ids, log-probs, scalars).
	kv := int64(2 * 2 * mcfg.NumHiddenLayers * mcfg.NumKeyValueHeads * mcfg.HeadDim * 4 * 4096)
	peakBound := 6*weightBytes + kv + 1<<20
	for s := 0; s < 5; s++ {
		backend.ResetPeak()
		if _, err := tr.Step(context.Background(), s); err != nil {
			t.Fatal(err)
		}
		live, peak := backend.Live()
		t.Logf("step %d: live %.1f MB (state %.1f MB), peak %.1f MB (bound %.1f MB)", s+1, float64(live)/1e6, float64(state)/1e6,
			float64(peak)/1e6, float64(peakBound)/1e6)
		// Between steps only small host-made inputs may stay (≤ 64 KB).
		if live < state || live > state+64<<10 {
			t.Errorf("after step %d: %d bytes live, want the training state's %d: a step leaves buffers to Go's collector", s+1, live, state)
		}
		if peak > peakBound {
			t.Errorf("step %d: peak %d bytes, more than %d (6 × weights + KV caches)", s+1, peak, peakBound)
		}
	}
}

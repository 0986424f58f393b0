package qwen3

import (
	"context"
	"fmt"
	"testing"

	"github.com/gomlx/compute/dtypes"
	. "github.com/gomlx/gomlx/core/graph"
	"github.com/gomlx/gomlx/core/tensors"
	"github.com/gosqlenv/gosqlenv/internal/cputime"
	"github.com/gosqlenv/gosqlenv/training/optim"
)

// BenchmarkGenerate measures batched generation on the CPU backend with a
// tiny config: 64-token prompts, 64 new tokens per sequence (greedy, no stop).
func BenchmarkGenerate(b *testing.B) {
	cfg := TinyConfig(4096)
	m := tinyModel(b, cfg, dtypes.Float32)
	for _, batch := range []int{1, 8, 32} {
		b.Run(fmt.Sprintf("batch%d", batch), func(b *testing.B) {
			prompts := make([][]int32, batch)
			for i := range prompts {
				prompts[i] = make([]int32, 64)
				for j := range prompts[i] {
					prompts[i][j] = int32((i*31 + j*7) % cfg.VocabSize)
				}
			}
			opts := GenerateOptions{MaxNewTokens: 64}
			if _, err := m.Generate(context.Background(), prompts, opts); err != nil { // compile
				b.Fatal(err)
			}
			b.ResetTimer()
			for b.Loop() {
				if _, err := m.Generate(context.Background(), prompts, opts); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(batch*64*b.N)/b.Elapsed().Seconds(), "tokens/s")
		})
	}
}

// benchConfig is the shape of ../shared/bench/torch_qwen3_cpu.py's default:
// dim 256, 4 layers, 4 heads / 2 KV heads, FF 3·dim, vocab 4096, untied head.
func benchConfig() Config {
	c := TinyConfig(4096)
	c.HiddenSize, c.IntermediateSize, c.NumHiddenLayers = 256, 768, 4
	c.NumAttentionHeads, c.NumKeyValueHeads, c.HeadDim = 4, 2, 64
	c.RopeTheta, c.TieWordEmbeddings = 1e6, false
	return c
}

// trainStepFLOPs is the floating-point operations of the matrix products of
// a training step of cfg's model on batch sequences of t tokens: 2 per
// multiply-add, the forward's products — the projections of t tokens,
// attention's scores and weighted values over all t×t pairs (the causal
// mask saves none here) and the LM head over t−1 positions — and twice as
// many in the backward pass. Element-wise work and the optimizer are not
// counted.
func trainStepFLOPs(cfg Config, batch, t int) float64 {
	h, d := float64(cfg.HiddenSize), float64(cfg.HeadDim)
	q, kv := float64(cfg.NumAttentionHeads)*d, float64(cfg.NumKeyValueHeads)*d
	perToken := h*(q+2*kv) + q*h + 3*h*float64(cfg.IntermediateSize) + // projections and MLP
		2*float64(t)*q // scores and weighted values: t keys per query, per head dimension
	forward := float64(batch) * (float64(t)*float64(cfg.NumHiddenLayers)*perToken + float64(t-1)*h*float64(cfg.VocabSize))
	return 2 * 3 * forward
}

// BenchmarkMatMul times one float32 product of two 1024×1024 matrices on
// the test backend and reports its rate: the most the backend's matrix
// kernel reaches on this machine, against which BenchmarkTrainStep's
// GFLOP/s can be read.
func BenchmarkMatMul(b *testing.B) {
	const n = 1024
	x := tensors.FromShape(shapesOf(dtypes.Float32, n, n))
	tensors.MutableFlatData(x, func(flat []float32) {
		for i := range flat {
			flat[i] = float32(i%7) - 3
		}
	})
	e := MustNewExec(testBackend, func(x *Node) *Node { return MatMul(x, x) })
	e.MustExec(x)
	cpu := cputime.Process()
	for b.Loop() {
		e.MustExec(x)
	}
	cputime.Report(b, cpu)
	b.ReportMetric(2*n*n*n*float64(b.N)/b.Elapsed().Seconds()/1e9, "GFLOP/s")
}

// BenchmarkTrainStep times forward + backward + AdamW for batch 8 × 128
// tokens (the PyTorch anchor's shape), and the forward pass alone.
func BenchmarkTrainStep(b *testing.B) {
	cfg := benchConfig()
	m := tinyModel(b, cfg, dtypes.Float32)
	n := len(m.Weights())
	seqs := make([][]int32, 8)
	for i := range seqs {
		seqs[i] = make([]int32, 128)
		for j := range seqs[i] {
			seqs[i][j] = int32((i*131 + j*17) % cfg.VocabSize)
		}
	}
	batch := PadRight(seqs, 0, 0)
	step := MustNewExec(m.Backend(), func(g *Graph, in []*Node) []*Node {
		w, mo, ve := in[:n], in[n:2*n], in[2*n:3*n]
		ids, mask, pos, stepN, lr := in[3*n], in[3*n+1], in[3*n+2], in[3*n+3], in[3*n+4]
		logp, _ := TokenLogProbs(cfg, w, ids, mask, pos, 1)
		loss := Neg(ReduceAllMean(logp))
		grads := Gradient(loss, w...)
		nw, nm, nv, _ := optim.AdamWStep(optim.AdamWConfig{MaxGradNorm: 1}, w, grads, mo, ve, stepN, lr)
		return append(append(append([]*Node{loss}, nw...), nm...), nv...)
	})
	moments := make([]*tensors.Tensor, 0, 2*n)
	for k := 0; k < 2; k++ {
		for _, spec := range cfg.Weights() {
			moments = append(moments, tensors.FromShape(shapesOf(dtypes.Float32, spec.Shape...)))
		}
	}
	weights := m.Weights()
	run := func(i int) {
		args := append(append(append([]*tensors.Tensor{}, weights...), moments...), batch.IDs, batch.Mask, batch.Positions,
			tensors.FromScalar(float32(i+1)), tensors.FromScalar(float32(1e-3)))
		out, err := step.Call(args)
		if err != nil {
			b.Fatal(err)
		}
		weights, moments = out[1:1+n], out[1+n:]
	}
	b.Run("forward+backward+adamw", func(b *testing.B) {
		run(0)
		b.ResetTimer()
		cpu := cputime.Process()
		for i := 0; b.Loop(); i++ {
			run(i + 1)
		}
		cputime.Report(b, cpu)
		b.ReportMetric(trainStepFLOPs(cfg, 8, 128)*float64(b.N)/b.Elapsed().Seconds()/1e9, "GFLOP/s")
	})
	b.Run("forward", func(b *testing.B) {
		if _, _, err := m.Score(seqs, 1); err != nil {
			b.Fatal(err)
		}
		b.ResetTimer()
		cpu := cputime.Process()
		for b.Loop() {
			if _, _, err := m.Score(seqs, 1); err != nil {
				b.Fatal(err)
			}
		}
		cputime.Report(b, cpu)
	})
}

// BenchmarkDecodeAttention times one decode step's attention of the tiny
// preset's base model (8 heads of 32, one query per row) over key and value
// caches, for a batch of rows × cached positions, with the keys in each
// layout (keysByDim is the one New picks on the pure-Go backend with
// AVX-512) and the one query row per kv head multiplied as it is
// (rows_1) or padded to minKernelRows (rows_4, productRows).
func BenchmarkDecodeAttention(b *testing.B) {
	cfg := TinyConfig(1024)
	cfg.NumAttentionHeads, cfg.NumKeyValueHeads, cfg.HeadDim = 8, 8, 32
	heads, dim := cfg.NumAttentionHeads, cfg.HeadDim
	for _, size := range []struct{ rows, positions int }{{8, 448}, {32, 448}, {256, 384}} {
		q, v := filledTensor(size.rows, 1, heads, dim), filledTensor(size.rows, heads, size.positions, dim)
		visible := tensors.FromShape(shapesOf(dtypes.Bool, size.rows, 1, size.positions))
		tensors.MutableFlatData(visible, func(x []bool) {
			for i := range x {
				x[i] = i%size.positions < size.positions*3/4
			}
		})
		for _, layout := range []keyLayout{keysByPosition, keysByDim} {
			k := filledTensor(size.rows, heads, size.positions, dim)
			if layout == keysByDim {
				k = filledTensor(size.rows, heads, dim, size.positions)
			}
			for _, rows := range []int{-1, minKernelRows} {
				name := fmt.Sprintf("b%d_s%d/%s/rows_%d", size.rows, size.positions, layout, max(rows, 1))
				b.Run(name, func(b *testing.B) {
					forcedProductRows = rows
					defer func() { forcedProductRows = 0 }()
					step := MustNewExec(testBackend, func(q, k, v, visible *Node) *Node {
						return attend(cfg, kernels{}, q, k, layout, v, visible)
					})
					step.MustExec(q, k, v, visible) // compile
					cpu := cputime.Process()
					for b.Loop() {
						step.MustExec(q, k, v, visible)
					}
					cputime.Report(b, cpu)
				})
			}
		}
	}
}

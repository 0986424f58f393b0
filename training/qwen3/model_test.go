package qwen3

import (
	"context"
	"fmt"
	"math"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/gomlx/compute"
	"github.com/gomlx/compute/dtypes"
	"github.com/gomlx/compute/gobackend"
	. "github.com/gomlx/gomlx/core/graph"
	"github.com/gomlx/gomlx/core/tensors"
)

// testBackend is the pure-Go CPU backend, or the backend named by
// $QWEN3_TEST_BACKEND (training/gpu/run.sh runs the tests on the GPU with
// "xla:<plugin>,notf32").
var testBackend = func() compute.Backend {
	if spec := os.Getenv("QWEN3_TEST_BACKEND"); spec != "" {
		b, err := NewBackend(spec)
		if err != nil {
			panic(err)
		}
		return b
	}
	b, err := NewBackend(gobackend.BackendName) // as the pipeline makes it
	if err != nil {
		panic(err)
	}
	return b
}()

// weightsFromReference turns the reference's float64 weights into model weights.
func weightsFromReference(cfg Config, ref map[string][]float64) *Weights {
	w := &Weights{Config: cfg, Tensors: map[string]*tensors.Tensor{}}
	for _, spec := range cfg.Weights() {
		data := make([]float32, len(ref[spec.Name]))
		for i, v := range ref[spec.Name] {
			data[i] = float32(v)
		}
		w.Tensors[spec.Name] = tensors.FromFlatDataAndDimensions(data, spec.Shape...)
	}
	return w
}

// referenceWeights32 rounds the reference weights to float32 so both sides
// compute with the same numbers.
func referenceWeights32(cfg Config, seed uint64) map[string][]float64 {
	ref := referenceWeights(cfg, seed)
	for _, v := range ref {
		for i := range v {
			v[i] = float64(float32(v[i]))
		}
	}
	return ref
}

func testConfigs() map[string]Config {
	tied := TinyConfig(512)
	untied := TinyConfig(300)
	untied.TieWordEmbeddings = false
	untied.AttentionBias = true
	untied.NumKeyValueHeads = 4
	untied.RopeTheta = 1e6
	return map[string]Config{"tied-gqa": tied, "untied-bias-mha": untied}
}

func relErr(got []float32, want []float64) float64 {
	var num, den float64
	for i := range want {
		d := float64(got[i]) - want[i]
		num += d * d
		den += want[i] * want[i]
	}
	return math.Sqrt(num / den)
}

// TestLogitsMatchReference compares the GoMLX forward pass with the
// independent float64 implementation (relative error < 1e-4 in float32),
// with right padding of ragged sequences.
func TestLogitsMatchReference(t *testing.T) {
	for name, cfg := range testConfigs() {
		t.Run(name, func(t *testing.T) {
			ref := referenceWeights32(cfg, 7)
			m, err := New(testBackend, weightsFromReference(cfg, ref))
			if err != nil {
				t.Fatal(err)
			}
			seqs := [][]int32{{1, 5, 9, 200, 7, 7, 3}, {42, 17}, {int32(cfg.VocabSize - 1), 0, 11, 12}}
			got, err := m.Logits(seqs)
			if err != nil {
				t.Fatal(err)
			}
			for i, s := range seqs {
				pos := make([]int32, len(s))
				mask := make([]int32, len(s))
				for j := range s {
					pos[j], mask[j] = int32(j), 1
				}
				want := referenceLogits(cfg, ref, [][]int32{s}, [][]int32{mask}, [][]int32{pos})[0]
				for j := range s {
					if e := relErr(got[i][j], want[j]); e > 1e-4 {
						t.Errorf("sequence %d position %d: relative error %.2e", i, j, e)
					}
				}
			}
		})
	}
}

func tinyModel(t testing.TB, cfg Config, dtype dtypes.DType) *Model {
	t.Helper()
	w, err := RandomWeights(cfg, 3, dtype)
	if err != nil {
		t.Fatal(err)
	}
	m, err := New(testBackend, w)
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// TestKVCacheMatchesFullForward: the logits of each decode step equal the
// full forward pass's logits at that position, whatever the padding and the
// other sequences of the batch, with the key cache in either layout (New
// picks one by backend and CPU), and on the Go backend across the caches'
// growth (150 new tokens: the caches start with 64 positions past the
// prompts and grow twice).
func TestKVCacheMatchesFullForward(t *testing.T) {
	for _, layout := range []keyLayout{keysByPosition, keysByDim} {
		t.Run(layout.String(), func(t *testing.T) {
			cfg := TinyConfig(256)
			m := tinyModel(t, cfg, dtypes.Float32)
			m.keysInCache = layout
			checkKVCacheMatchesFullForward(t, m)
			// The decode step's 2 query rows per kv head as they are and
			// padded to 4 (productRows), whatever this machine's backend
			// would choose.
			for _, rows := range []int{-1, minKernelRows} {
				t.Run(fmt.Sprintf("product_rows_%d", rows), func(t *testing.T) {
					forcedProductRows = rows
					defer func() { forcedProductRows = 0 }()
					m := tinyModel(t, cfg, dtypes.Float32)
					m.keysInCache = layout
					checkKVCacheMatchesFullForward(t, m)
				})
			}
			if grow := m.cacheGrowth(GenerateOptions{LengthBucket: 4}); grow > 0 {
				grown := 0
				for key := range m.execs {
					if strings.HasPrefix(key, "grow_caches") {
						grown++
					}
				}
				if grown != 2 {
					t.Errorf("the caches grew to %d lengths, want 2 (start %d past the prompt, step %d, 150 new tokens)", grown, grow, grow)
				}
			}
		})
	}
}

func checkKVCacheMatchesFullForward(t *testing.T, m *Model) {
	prompts := [][]int32{{3, 4, 5, 6, 7}, {9}, {100, 101, 102}}
	gen, err := m.Generate(context.Background(), prompts, GenerateOptions{MaxNewTokens: 150, LengthBucket: 4, keepLogits: true})
	if err != nil {
		t.Fatal(err)
	}
	for r, p := range prompts {
		full := append(slices.Clone(p), gen.Tokens[r]...)
		logits, err := m.Logits([][]int32{full})
		if err != nil {
			t.Fatal(err)
		}
		for step := range gen.Tokens[r] {
			want := logits[0][len(p)-1+step]
			got := gen.logits[step][r]
			var num, den float64
			for i := range want {
				num += math.Pow(float64(got[i]-want[i]), 2)
				den += float64(want[i]) * float64(want[i])
			}
			if e := math.Sqrt(num / den); e > 1e-5 {
				t.Errorf("row %d step %d: cached logits differ from the full forward (rel %.2e)", r, step, e)
			}
		}
		// Greedy: each token is the argmax of its logits.
		for step, tok := range gen.Tokens[r] {
			if want := argmax(logits[0][len(p)-1+step]); tok != want {
				t.Errorf("row %d step %d: greedy token %d, argmax %d", r, step, tok, want)
			}
		}
	}
}

func argmax(x []float32) int32 {
	best := 0
	for i, v := range x {
		if v > x[best] {
			best = i
		}
	}
	return int32(best)
}

// TestGenerationIndependentOfBatch: a prompt generates the same tokens alone
// and in a batch with longer and shorter prompts (greedy).
func TestGenerationIndependentOfBatch(t *testing.T) {
	cfg := TinyConfig(256)
	m := tinyModel(t, cfg, dtypes.Float32)
	opts := GenerateOptions{MaxNewTokens: 8, LengthBucket: 8}
	alone, err := m.Generate(context.Background(), [][]int32{{10, 20, 30}}, opts)
	if err != nil {
		t.Fatal(err)
	}
	batch, err := m.Generate(context.Background(), [][]int32{{1, 2, 3, 4, 5, 6, 7, 8, 9}, {10, 20, 30}, {77}}, opts)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(alone.Tokens[0], batch.Tokens[1]) {
		t.Fatalf("alone %v, in a batch %v", alone.Tokens[0], batch.Tokens[1])
	}
	for i := range alone.LogProbs[0] {
		if d := math.Abs(float64(alone.LogProbs[0][i] - batch.LogProbs[1][i])); d > 1e-4 {
			t.Fatalf("log-prob %d differs by %g", i, d)
		}
	}
	again, _ := m.Generate(context.Background(), [][]int32{{10, 20, 30}}, opts)
	if !slices.Equal(alone.Tokens[0], again.Tokens[0]) {
		t.Fatal("greedy generation is not deterministic")
	}
}

// TestSeededSampling: the same seed reproduces the samples, another seed
// changes them, and log-probs agree with Score.
func TestSeededSampling(t *testing.T) {
	cfg := TinyConfig(256)
	m := tinyModel(t, cfg, dtypes.Float32)
	prompts := [][]int32{{5, 6}, {7, 8, 9}}
	opts := GenerateOptions{MaxNewTokens: 10, Temperature: 1.3, TopK: 50, TopP: 0.95, Seed: 11}
	a, err := m.Generate(context.Background(), prompts, opts)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := m.Generate(context.Background(), prompts, opts)
	opts.Seed = 12
	c, _ := m.Generate(context.Background(), prompts, opts)
	if !slices.Equal(a.Tokens[0], b.Tokens[0]) || !slices.Equal(a.Tokens[1], b.Tokens[1]) {
		t.Fatal("same seed, different samples")
	}
	if slices.Equal(a.Tokens[0], c.Tokens[0]) && slices.Equal(a.Tokens[1], c.Tokens[1]) {
		t.Fatal("another seed gave the same samples")
	}
	for r, p := range prompts {
		full := append(slices.Clone(p), a.Tokens[r]...)
		logp, _, err := m.Score([][]int32{full}, 1.3)
		if err != nil {
			t.Fatal(err)
		}
		for i, lp := range a.LogProbs[r] {
			if d := math.Abs(float64(lp - logp[0][len(p)-1+i])); d > 1e-4 {
				t.Fatalf("row %d token %d: sampling log-prob %g, score %g", r, i, lp, logp[0][len(p)-1+i])
			}
		}
	}
}

func TestStopTokens(t *testing.T) {
	cfg := TinyConfig(256)
	m := tinyModel(t, cfg, dtypes.Float32)
	free, err := m.Generate(context.Background(), [][]int32{{1, 2, 3}}, GenerateOptions{MaxNewTokens: 5})
	if err != nil {
		t.Fatal(err)
	}
	stop := free.Tokens[0][2]
	gen, err := m.Generate(context.Background(), [][]int32{{1, 2, 3}, {4}}, GenerateOptions{MaxNewTokens: 5, StopTokens: []int32{stop}})
	if err != nil {
		t.Fatal(err)
	}
	if first := slices.Index(free.Tokens[0], stop); len(gen.Tokens[0]) != first+1 || !gen.Stopped[0] {
		t.Fatalf("stop token %d: got %v (stopped %v), free run %v", stop, gen.Tokens[0], gen.Stopped[0], free.Tokens[0])
	}
	if len(gen.Tokens[1]) > 5 || len(gen.LogProbs[1]) != len(gen.Tokens[1]) {
		t.Fatalf("second row: %v", gen.Tokens[1])
	}
}

// TestModelSaveLoadRoundTrip: a model's weights saved as safetensors load
// back into a model that computes bit-identical logits.
func TestModelSaveLoadRoundTrip(t *testing.T) {
	for _, dtype := range []dtypes.DType{dtypes.Float32, dtypes.BFloat16} {
		cfg := TinyConfig(128)
		m := tinyModel(t, cfg, dtype)
		dir := t.TempDir()
		if err := m.HostWeights().Save(dir, dtype); err != nil {
			t.Fatal(err)
		}
		m2, _, err := LoadModel(context.Background(), testBackend, dir, LoadOptions{DType: dtype})
		if err != nil {
			t.Fatal(err)
		}
		seqs := [][]int32{{1, 2, 3, 4}}
		a, _ := m.Logits(seqs)
		b, err := m2.Logits(seqs)
		if err != nil {
			t.Fatal(err)
		}
		for j := range a[0] {
			if !slices.Equal(a[0][j], b[0][j]) {
				t.Fatalf("%s: logits differ after save/load at position %d", dtype, j)
			}
		}
	}
}

// TestLogitsAndScoreManyLengths: Logits and Score answer for 100 distinct
// sequence lengths and 9 batch sizes (more shapes than one program cache
// holds: 64), and bucketing does not change their values: a sequence scored
// alone, padded to its bucket, gives what it gives in a batch of others.
func TestLogitsAndScoreManyLengths(t *testing.T) {
	m := tinyModel(t, TinyConfig(64), dtypes.Float32)
	seq := func(n int) []int32 {
		s := make([]int32, n)
		for i := range s {
			s[i] = int32((i*7 + n) % 64)
		}
		return s
	}
	for n := 2; n < 102; n++ {
		batch := make([][]int32, 1+n%9)
		for i := range batch {
			batch[i] = seq(max(2, n-i))
		}
		logits, err := m.Logits(batch)
		if err != nil {
			t.Fatalf("Logits at length %d: %v", n, err)
		}
		logp, _, err := m.Score(batch, 1)
		if err != nil {
			t.Fatalf("Score at length %d: %v", n, err)
		}
		if len(logits[0]) != n || len(logp[0]) != n-1 {
			t.Fatalf("length %d: %d logit rows, %d log-probs", n, len(logits[0]), len(logp[0]))
		}
		if n%25 == 0 {
			alone, _, err := m.Score(batch[:1], 1)
			if err != nil {
				t.Fatal(err)
			}
			for j := range alone[0] {
				if d := math.Abs(float64(alone[0][j] - logp[0][j])); d > 1e-5 {
					t.Fatalf("length %d position %d: log-prob %g alone, %g in a batch of %d", n, j, alone[0][j], logp[0][j], len(batch))
				}
			}
		}
	}
}

// TestBucketLength: buckets are 2ᵏ and 1.5·2ᵏ from 16, never shorter than
// the length, and 24 of them cover Qwen3's 40,960 positions.
func TestBucketLength(t *testing.T) {
	for _, c := range [][2]int{{0, 16}, {1, 16}, {16, 16}, {17, 24}, {24, 24}, {25, 32}, {33, 48}, {49, 64}, {65, 96}, {97, 128}, {1000, 1024}, {1025, 1536}} {
		if got := BucketLength(c[0]); got != c[1] {
			t.Errorf("BucketLength(%d) = %d, want %d", c[0], got, c[1])
		}
	}
	buckets := map[int]bool{}
	for n := 1; n <= 40960; n++ {
		b := BucketLength(n)
		if b < n || (n > 16 && 3*(b-n) > b) {
			t.Fatalf("BucketLength(%d) = %d", n, b)
		}
		buckets[b] = true
	}
	if len(buckets) != 24 {
		t.Errorf("%d buckets up to 40960, want 24", len(buckets))
	}
}

// TestAttentionPaddedRows checks that attention computed with its query
// rows padded by zero rows (productRows) equals attention without: one
// query per head (a decode step), two heads per kv head, and a few
// positions, in both key layouts, against keys of which some are masked.
func TestAttentionPaddedRows(t *testing.T) {
	for _, c := range []struct{ heads, kvHeads, t int }{{4, 4, 1}, {4, 2, 1}, {2, 2, 3}} {
		for _, layout := range []keyLayout{keysByPosition, keysByDim} {
			t.Run(fmt.Sprintf("h%d_kv%d_t%d_%s", c.heads, c.kvHeads, c.t, layout), func(t *testing.T) {
				cfg := TinyConfig(64)
				cfg.NumAttentionHeads, cfg.NumKeyValueHeads, cfg.HeadDim = c.heads, c.kvHeads, 16
				const b, s = 3, 40
				q := filledTensor(b, c.t, c.heads, cfg.HeadDim)
				k := filledTensor(b, c.kvHeads, s, cfg.HeadDim)
				if layout == keysByDim {
					k = filledTensor(b, c.kvHeads, cfg.HeadDim, s)
				}
				v := filledTensor(b, c.kvHeads, s, cfg.HeadDim)
				visible := tensors.FromShape(shapesOf(dtypes.Bool, b, c.t, s))
				tensors.MutableFlatData(visible, func(x []bool) {
					for i := range x {
						x[i] = i%s < 30-i/s // each row and query sees its own prefix
					}
				})
				run := func(rows int) []float32 {
					forcedProductRows = rows
					defer func() { forcedProductRows = 0 }()
					e := MustNewExec(testBackend, func(q, k, v, visible *Node) *Node {
						return attend(cfg, kernels{}, q, k, layout, v, visible)
					})
					return tensors.MustCopyFlatData[float32](e.MustExec(q, k, v, visible)[0])
				}
				want := run(-1)
				for _, rows := range []int{minKernelRows, 8} {
					got := run(rows)
					for i := range want {
						if math.Abs(float64(got[i]-want[i])) > 1e-5 {
							t.Fatalf("padded to %d rows: output %d = %g, want %g", rows, i, got[i], want[i])
						}
					}
				}
			})
		}
	}
}

// filledTensor is a float32 tensor of the given dimensions filled with
// values in [−0.5, 0.5) that vary along every axis.
func filledTensor(dims ...int) *tensors.Tensor {
	t := tensors.FromShape(shapesOf(dtypes.Float32, dims...))
	tensors.MutableFlatData(t, func(x []float32) {
		for i := range x {
			x[i] = float32((i*7919)%1000)/1000 - 0.5
		}
	})
	return t
}

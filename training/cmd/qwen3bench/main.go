// Command qwen3bench times the Qwen3 model and the GRPO trainer on a compute
// backend and prints one JSON document (the GPU kit training/gpu/run.sh runs
// it next to PyTorch; see README, GPU):
//
//	qwen3bench -mode decode    -shape 1.7b -dtype bf16 -batch 1,16,64 -prompt_len 128 -new_tokens 128
//	qwen3bench -mode trainstep -shape 1.7b -dtype bf16 -batch 16 -seq 512
//	qwen3bench -mode grpostep  -shape 1.7b -questions 8 -generations 4 -grpo_steps 2
//
// decode: Model.Generate (greedy, no stop token) at each batch size, timed
// with new_tokens and with 1 new token on the same compiled programs, so
// that prefill and the per-token decode step separate; it also reports the
// bytes a decode step must read (weights + the KV cache in use), from which
// the memory-bandwidth bound follows.
//
// trainstep: forward + backward + AdamW (float32 moments, global-norm
// clipping) on batch × seq tokens, the loss being the mean next-token NLL.
//
// grpostep: the real trainer (training.GRPOTrainer.Step) on the bundled SQL
// environment: rollouts of questions × generations episodes, rewards,
// advantages, loss, update; its own metrics give the time breakdown
// (time/rollout, time/generation, time/environment, time/loss_backward). The
// tokenizer is the tiny preset's (learned from the environment's texts), so
// the model's vocabulary is the tokenizer's (1024), not Qwen's 151936: a
// "1.7b" model here has Qwen3-1.7B's layers with a small embedding.
//
// Weights are random (normal(0, 0.02), norm scales 1), or read from a
// Hugging Face directory with -weights. -backend "" means $GOMLX_BACKEND,
// then "go".
package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"math"
	"os"
	"runtime"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/gomlx/compute"
	"github.com/gomlx/compute/dtypes"
	"github.com/gomlx/compute/shapes"
	. "github.com/gomlx/gomlx/core/graph"
	"github.com/gomlx/gomlx/core/tensors"
	"github.com/gosqlenv/gosqlenv/training"
	"github.com/gosqlenv/gosqlenv/training/optim"
	"github.com/gosqlenv/gosqlenv/training/qwen3"
)

func main() {
	opts, err := parseFlags(os.Args[1:], os.Stderr)
	if err != nil {
		if errors.Is(err, flag.ErrHelp) {
			os.Exit(2)
		}
		fmt.Fprintln(os.Stderr, "qwen3bench:", err)
		os.Exit(2)
	}
	report, err := run(context.Background(), opts)
	if report != nil {
		if werr := writeReport(opts.Out, report); werr != nil && err == nil {
			err = werr
		}
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "qwen3bench:", err)
		os.Exit(1)
	}
}

// Options are the command's flags.
type Options struct {
	Backend    string
	Shape      string
	DType      string
	Mode       string
	Batches    []int
	PromptLen  int
	NewTokens  int
	Seq        int
	Reps       int
	Weights    string
	Seed       uint64
	Out        string
	GRPO       GRPOOptions
	MaxSeconds float64
}

// GRPOOptions configure -mode grpostep.
type GRPOOptions struct {
	Questions, Generations, Steps int
	MaxNewTokens, MaxCompletion   int
	StepBudget, LengthBucket      int
	MicroBatch                    int
	OutputDir                     string
}

func parseFlags(args []string, stderr io.Writer) (Options, error) {
	var o Options
	fs := flag.NewFlagSet("qwen3bench", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.StringVar(&o.Backend, "backend", "", `compute backend ("go", "xla:/path/plugin.so[,notf32]"); empty: $GOMLX_BACKEND, then "go"`)
	fs.StringVar(&o.Shape, "shape", "tiny", "model shape: tiny (hidden 64, 2 layers) or 1.7b (Qwen3-1.7B)")
	fs.StringVar(&o.DType, "dtype", "auto", "weights dtype: bf16, f32 or auto (f32 on the pure-Go CPU backend, bf16 on XLA)")
	fs.StringVar(&o.Mode, "mode", "decode", "decode, trainstep or grpostep")
	batches := fs.String("batch", "", "comma-separated batch sizes (decode default 1,16,64; trainstep default 16)")
	fs.IntVar(&o.PromptLen, "prompt_len", 128, "decode: prompt tokens per sequence")
	fs.IntVar(&o.NewTokens, "new_tokens", 128, "decode: generated tokens per sequence")
	fs.IntVar(&o.Seq, "seq", 512, "trainstep: tokens per sequence")
	fs.IntVar(&o.Reps, "reps", 3, "timed repetitions after the warm-up (median reported)")
	fs.StringVar(&o.Weights, "weights", "", "Hugging Face model directory to read the weights from (default: random weights of -shape)")
	seed := fs.Int64("seed", 1, "random seed")
	fs.StringVar(&o.Out, "out", "", "write the JSON here (default stdout)")
	fs.Float64Var(&o.MaxSeconds, "max_seconds", 0, "stop starting new measurements after this many seconds (0: no limit)")
	fs.IntVar(&o.GRPO.Questions, "questions", 8, "grpostep: questions per step")
	fs.IntVar(&o.GRPO.Generations, "generations", 4, "grpostep: episodes per question")
	fs.IntVar(&o.GRPO.Steps, "grpo_steps", 2, "grpostep: optimizer steps (the first compiles)")
	fs.IntVar(&o.GRPO.MaxNewTokens, "max_new_tokens", 64, "grpostep: tokens per turn")
	fs.IntVar(&o.GRPO.MaxCompletion, "max_completion_length", 256, "grpostep: model tokens per episode")
	fs.IntVar(&o.GRPO.StepBudget, "step_budget", 4, "grpostep: actions per episode")
	fs.IntVar(&o.GRPO.LengthBucket, "length_bucket", 256, "grpostep: length bucket (fewer XLA compilations when larger)")
	fs.IntVar(&o.GRPO.MicroBatch, "micro_batch", 2, "grpostep: episodes per micro-batch (per_device_train_batch_size)")
	fs.StringVar(&o.GRPO.OutputDir, "output_dir", "", "grpostep: output directory (default: a temporary one)")
	if err := fs.Parse(args); err != nil {
		return o, err
	}
	if fs.NArg() > 0 {
		return o, fmt.Errorf("unexpected arguments %q", fs.Args())
	}
	o.Seed = uint64(*seed)
	if !slices.Contains([]string{"decode", "trainstep", "grpostep"}, o.Mode) {
		return o, fmt.Errorf("-mode %q: want decode, trainstep or grpostep", o.Mode)
	}
	if _, err := shapeConfig(o.Shape, 4096); err != nil {
		return o, err
	}
	if _, err := parseDType(o.DType, nil); err != nil {
		return o, err
	}
	if *batches == "" {
		*batches = map[string]string{"decode": "1,16,64", "trainstep": "16", "grpostep": "0"}[o.Mode]
	}
	for _, f := range strings.Split(*batches, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || n < 0 || (n == 0 && o.Mode != "grpostep") {
			return o, fmt.Errorf("-batch %q: want positive integers separated by commas", *batches)
		}
		o.Batches = append(o.Batches, n)
	}
	for name, v := range map[string]int{"prompt_len": o.PromptLen, "new_tokens": o.NewTokens, "seq": o.Seq, "reps": o.Reps,
		"questions": o.GRPO.Questions, "generations": o.GRPO.Generations, "grpo_steps": o.GRPO.Steps} {
		if v < 1 {
			return o, fmt.Errorf("-%s must be at least 1 (got %d)", name, v)
		}
	}
	if o.Mode == "decode" && o.NewTokens < 2 {
		return o, fmt.Errorf("-new_tokens must be at least 2 to separate the decode step from prefill")
	}
	if o.GRPO.Generations < 2 {
		return o, fmt.Errorf("-generations must be at least 2 (GRPO groups)")
	}
	return o, nil
}

// parseDType resolves -dtype on backend ("auto": qwen3.DTypeForPrecision).
func parseDType(s string, backend compute.Backend) (dtypes.DType, error) {
	switch s {
	case "bf16", "bfloat16":
		return dtypes.BFloat16, nil
	case "f32", "float32":
		return dtypes.Float32, nil
	case "auto":
		return qwen3.DTypeForPrecision(s, backend)
	}
	return dtypes.InvalidDType, fmt.Errorf("-dtype %q: want bf16, f32 or auto", s)
}

// dtypeFlag is the -dtype name of dtype.
func dtypeFlag(dtype dtypes.DType) string {
	if dtype == dtypes.BFloat16 {
		return "bf16"
	}
	return "f32"
}

// shapeConfig is the architecture of a -shape with the given vocabulary.
func shapeConfig(shape string, vocab int) (qwen3.Config, error) {
	switch shape {
	case "tiny":
		return qwen3.TinyConfig(vocab), nil
	case "1.7b":
		c := qwen3.TinyConfig(vocab)
		c.HiddenSize, c.IntermediateSize, c.NumHiddenLayers = 2048, 6144, 28
		c.NumAttentionHeads, c.NumKeyValueHeads, c.HeadDim = 16, 8, 128
		c.RopeTheta, c.MaxPositionEmbeddings, c.TorchDtype = 1e6, 40960, "bfloat16"
		return c, nil
	}
	return qwen3.Config{}, fmt.Errorf("-shape %q: want tiny or 1.7b", shape)
}

// Report is the JSON the command prints.
type Report struct {
	Mode        string         `json:"mode"`
	Backend     string         `json:"backend"`
	Device      string         `json:"device"`
	Shape       string         `json:"shape"`
	DType       string         `json:"dtype"`
	Config      qwen3.Config   `json:"config"`
	Params      int64          `json:"params"`
	ParamBytes  int64          `json:"param_bytes"`
	SetupSecs   float64        `json:"setup_seconds"`
	GoMaxProcs  int            `json:"gomaxprocs"`
	SIMDBuild   bool           `json:"simd_build"`
	Results     []any          `json:"results"`
	Notes       []string       `json:"notes,omitempty"`
	Error       string         `json:"error,omitempty"`
	Extra       map[string]any `json:"extra,omitempty"`
	TotalSecs   float64        `json:"total_seconds"`
	startedAt   time.Time
	maxDuration time.Duration
	out         string // -out, rewritten after every result (a killed run keeps what it measured)
}

// add appends a result and, with -out, rewrites the file.
func (r *Report) add(res any) {
	r.Results = append(r.Results, res)
	if r.out != "" {
		if err := writeReport(r.out, r); err != nil {
			fmt.Fprintln(os.Stderr, "qwen3bench:", err)
		}
	}
}

// outOfTime says whether -max_seconds has passed.
func (r *Report) outOfTime() bool {
	return r.maxDuration > 0 && time.Since(r.startedAt) > r.maxDuration
}

func writeReport(path string, r *Report) error {
	r.TotalSecs = time.Since(r.startedAt).Seconds()
	b, err := json.MarshalIndent(r, "", "  ")
	if err != nil {
		return err
	}
	b = append(b, '\n')
	if path == "" {
		_, err = os.Stdout.Write(b)
		return err
	}
	return os.WriteFile(path, b, 0o644)
}

func run(ctx context.Context, o Options) (*Report, error) {
	start := time.Now()
	backend, err := qwen3.NewBackend(o.Backend)
	if err != nil {
		return nil, err
	}
	dtype, _ := parseDType(o.DType, backend)
	r := &Report{Mode: o.Mode, Backend: backend.Name(), Device: backend.Description(), Shape: o.Shape, DType: dtypeFlag(dtype),
		GoMaxProcs: runtime.GOMAXPROCS(0), SIMDBuild: qwen3.SIMDBuild, startedAt: start,
		maxDuration: time.Duration(o.MaxSeconds * float64(time.Second)), out: o.Out}
	fail := func(err error) (*Report, error) {
		r.Error = err.Error()
		return r, err
	}
	if o.Mode == "grpostep" {
		if err := benchGRPO(ctx, o, r); err != nil {
			return fail(err)
		}
		return r, nil
	}
	var w *qwen3.Weights
	if o.Weights != "" {
		w, err = qwen3.LoadWeights(o.Weights, dtype)
	} else {
		var cfg qwen3.Config
		cfg, _ = shapeConfig(o.Shape, map[string]int{"tiny": 4096, "1.7b": 151936}[o.Shape])
		w, err = qwen3.RandomWeights(cfg, o.Seed, dtype)
	}
	if err != nil {
		return fail(err)
	}
	m, err := qwen3.New(backend, w)
	if err != nil {
		return fail(err)
	}
	r.Config, r.Params = m.Config, m.Config.NumParameters()
	r.ParamBytes = r.Params * int64(dtype.Size())
	r.SetupSecs = time.Since(start).Seconds()
	switch o.Mode {
	case "decode":
		err = benchDecode(ctx, o, m, r)
	case "trainstep":
		err = benchTrainStep(o, m, r)
	}
	if err != nil {
		return fail(err)
	}
	return r, nil
}

// DecodeResult is one batch size of -mode decode.
type DecodeResult struct {
	Batch     int `json:"batch"`
	PromptLen int `json:"prompt_len"`
	NewTokens int `json:"new_tokens"`
	CacheLen  int `json:"cache_len"`
	// FirstCallSecs includes compiling prefill and decode.
	FirstCallSecs float64 `json:"first_call_seconds"`
	// GenerateSecs is the median time of a whole Generate call; PrefillSecs
	// that of a call generating one token (prefill and its sampling).
	GenerateSecs float64   `json:"generate_seconds"`
	PrefillSecs  float64   `json:"prefill_seconds"`
	GenerateAll  []float64 `json:"generate_seconds_all"`
	// DecodeStepMs = (GenerateSecs − PrefillSecs) / (NewTokens − 1).
	DecodeStepMs float64 `json:"decode_step_ms"`
	// TokensPerSec = Batch·NewTokens / GenerateSecs (what generate users see);
	// DecodeTokensPerSec = Batch / decode step.
	TokensPerSec       float64 `json:"tokens_per_s"`
	DecodeTokensPerSec float64 `json:"decode_tokens_per_s"`
	// BytesPerStep is what one decode step must read at least: all weights
	// plus the keys and values of the average context (prompt + half the new
	// tokens) of every sequence.
	BytesPerStep   int64 `json:"bytes_per_step"`
	KVBytesPerStep int64 `json:"kv_bytes_per_step"`
}

// kvBytesPerStep is the KV-cache bytes one decode step reads at context ctx.
func kvBytesPerStep(cfg qwen3.Config, dtype dtypes.DType, batch, ctx int) int64 {
	return int64(2*cfg.NumHiddenLayers*cfg.NumKeyValueHeads*cfg.HeadDim) * int64(ctx) * int64(batch) * int64(dtype.Size())
}

func benchDecode(ctx context.Context, o Options, m *qwen3.Model, r *Report) error {
	// With the length bucket equal to new_tokens, a 1-token call and a
	// new_tokens call use the same compiled programs: the prompt is padded to
	// a multiple of new_tokens and the KV cache holds prompt + new_tokens.
	bucket := o.NewTokens
	plen := (o.PromptLen + bucket - 1) / bucket * bucket
	cacheLen := plen + o.NewTokens
	r.Notes = append(r.Notes, "greedy generation, no stop token: every sequence generates new_tokens tokens",
		fmt.Sprintf("length bucket %d: prompts padded to %d, KV cache of %d slots", bucket, plen, cacheLen))
	for _, b := range o.Batches {
		if r.outOfTime() {
			r.Notes = append(r.Notes, fmt.Sprintf("batch %d skipped: -max_seconds reached", b))
			continue
		}
		prompts := make([][]int32, b)
		for i := range prompts {
			prompts[i] = make([]int32, o.PromptLen)
			for j := range prompts[i] {
				prompts[i][j] = int32((i*7919 + j*104729 + 13) % m.Config.VocabSize)
			}
		}
		call := func(n int) (float64, error) {
			t0 := time.Now()
			gen, err := m.Generate(ctx, prompts, qwen3.GenerateOptions{MaxNewTokens: n, LengthBucket: bucket})
			if err != nil {
				return 0, fmt.Errorf("decode batch %d: %w", b, err)
			}
			for i, toks := range gen.Tokens {
				if len(toks) != n {
					return 0, fmt.Errorf("decode batch %d: row %d generated %d tokens, want %d", b, i, len(toks), n)
				}
			}
			return time.Since(t0).Seconds(), nil
		}
		res := DecodeResult{Batch: b, PromptLen: o.PromptLen, NewTokens: o.NewTokens, CacheLen: cacheLen}
		var err error
		if res.FirstCallSecs, err = call(o.NewTokens); err != nil {
			return err
		}
		if _, err = call(1); err != nil {
			return err
		}
		var full, pre []float64
		for k := 0; k < o.Reps; k++ {
			t, err := call(o.NewTokens)
			if err != nil {
				return err
			}
			full = append(full, t)
			if t, err = call(1); err != nil {
				return err
			}
			pre = append(pre, t)
		}
		res.GenerateAll = full
		res.GenerateSecs, res.PrefillSecs = median(full), median(pre)
		step := (res.GenerateSecs - res.PrefillSecs) / float64(o.NewTokens-1)
		res.DecodeStepMs = 1000 * step
		res.TokensPerSec = float64(b*o.NewTokens) / res.GenerateSecs
		if step > 0 {
			res.DecodeTokensPerSec = float64(b) / step
		}
		res.KVBytesPerStep = kvBytesPerStep(m.Config, m.DType, b, o.PromptLen+o.NewTokens/2)
		res.BytesPerStep = r.ParamBytes + res.KVBytesPerStep
		r.add(res)
		fmt.Fprintf(os.Stderr, "decode batch %d: %.1f tokens/s (decode step %.2f ms, prefill %.3f s, first call %.1f s)\n",
			b, res.TokensPerSec, res.DecodeStepMs, res.PrefillSecs, res.FirstCallSecs)
	}
	return nil
}

func gcd(a, b int) int {
	for b != 0 {
		a, b = b, a%b
	}
	return a
}

func median(x []float64) float64 {
	if len(x) == 0 {
		return math.NaN()
	}
	s := slices.Clone(x)
	sort.Float64s(s)
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}

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

// benchGRPO runs real GRPO steps of the trainer on the bundled environment.
func benchGRPO(ctx context.Context, o Options, r *Report) error {
	start := time.Now()
	out := o.GRPO.OutputDir
	if out == "" {
		dir, err := os.MkdirTemp("", "qwen3bench-grpo-")
		if err != nil {
			return err
		}
		defer os.RemoveAll(dir)
		out = dir
	}
	dtype, _ := parseDType(r.DType, nil) // resolved by run
	cfg, err := grpoBenchConfig(o, dtype, out)
	if err != nil {
		return err
	}
	episodes, micro := cfg.PerDeviceTrainBatchSize*cfg.GradientAccumulationSteps, cfg.PerDeviceTrainBatchSize
	p, err := training.NewPipeline(ctx, cfg)
	if err != nil {
		return err
	}
	defer p.Close()
	if err := useShape(o, p, dtype, r); err != nil {
		return err
	}
	r.Config, r.Params = p.Model.Config, p.Model.Config.NumParameters()
	r.ParamBytes = r.Params * int64(dtype.Size())
	r.Device = p.Backend.Description()
	r.SetupSecs = time.Since(start).Seconds()
	tr, err := p.NewGRPO(nil)
	if err != nil {
		return err
	}
	r.Extra = map[string]any{"questions": o.GRPO.Questions, "generations": o.GRPO.Generations, "episodes": episodes,
		"per_device_train_batch_size": micro, "gradient_accumulation_steps": episodes / micro,
		"max_new_tokens": cfg.MaxNewTokens, "max_completion_length": cfg.MaxCompletionLength,
		"step_budget": cfg.StepBudget, "length_bucket": cfg.LengthBucket}
	r.Notes = append(r.Notes, "each step: rollouts with the environment, rewards, advantages, loss+backward over micro-batches, AdamW; step 1 includes XLA compilation",
		"time/rollout = time/generation + time/environment + tokenizing and bookkeeping; step_time = time/rollout + rewards + time/loss_backward")
	for s := 0; s < o.GRPO.Steps; s++ {
		if s > 0 && r.outOfTime() {
			r.Notes = append(r.Notes, fmt.Sprintf("steps from %d skipped: -max_seconds reached", s+1))
			break
		}
		m, err := tr.Step(ctx, s)
		if err != nil {
			return fmt.Errorf("GRPO step %d: %w", s+1, err)
		}
		r.add(finiteMetrics(m))
		fmt.Fprintf(os.Stderr, "GRPO step %d: %.2f s (rollout %.2f: generation %.2f, environment %.2f; loss+backward+update %.2f), %g generated tokens/s, reward %.3f\n",
			s+1, m["step_time"], m["time/rollout"], m["time/generation"], m["time/environment"], m["time/loss_backward"], m["tokens/s"], m["reward"])
	}
	return nil
}

// grpoBenchConfig is the GRPO configuration of the benchmark: the tiny
// preset, o's group and batch sizes and lengths, no SFT, no checkpoints.
func grpoBenchConfig(o Options, dtype dtypes.DType, out string) (training.GRPOConfig, error) {
	cfg := training.DefaultGRPOConfig()
	cfg.ModelName, cfg.Backend, cfg.OutputDir, cfg.Seed = training.TinyModelName, o.Backend, out, int64(o.Seed)
	cfg.Precision = map[dtypes.DType]string{dtypes.BFloat16: "bfloat16", dtypes.Float32: "float32"}[dtype]
	episodes := o.GRPO.Questions * o.GRPO.Generations
	micro := o.GRPO.MicroBatch
	if micro <= 0 || episodes%micro != 0 {
		return cfg, fmt.Errorf("-micro_batch %d must divide questions × generations = %d", micro, episodes)
	}
	cfg.NumGenerations, cfg.PerDeviceTrainBatchSize, cfg.GradientAccumulationSteps = o.GRPO.Generations, micro, episodes/micro
	cfg.MaxSteps, cfg.LoggingSteps, cfg.SaveSteps = o.GRPO.Steps, 1, 0
	cfg.MaxNewTokens, cfg.MaxCompletionLength, cfg.StepBudget = o.GRPO.MaxNewTokens, o.GRPO.MaxCompletion, o.GRPO.StepBudget
	cfg.LengthBucket, cfg.LearningRate = o.GRPO.LengthBucket, 1e-5
	cfg.SFTEnabled = false
	return cfg, cfg.Validate()
}

// useShape puts a model of shape o.Shape (random weights, the tiny preset's
// vocabulary) into the pipeline, unless the shape is the tiny preset itself.
func useShape(o Options, p *training.Pipeline, dtype dtypes.DType, r *Report) error {
	if o.Shape == "tiny" {
		r.Notes = append(r.Notes, "model: the tiny preset (training.TinyModelConfig), random weights")
		return nil
	}
	mcfg, err := shapeConfig(o.Shape, p.Model.Config.VocabSize)
	if err != nil {
		return err
	}
	w, err := qwen3.RandomWeights(mcfg, o.Seed, dtype)
	if err != nil {
		return err
	}
	if p.Model, err = qwen3.New(p.Backend, w); err != nil {
		return err
	}
	if p.Roller, err = training.NewRoller(p.Model, p.Tokenizer, p.NewEnv, p.RolloutConfig()); err != nil {
		return err
	}
	r.Notes = append(r.Notes, fmt.Sprintf("model: %s layers with the tiny preset's vocabulary (%d tokens), random weights", o.Shape, mcfg.VocabSize))
	return nil
}

// finiteMetrics turns metrics into JSON values (NaN and ±Inf become null).
func finiteMetrics(m training.Metrics) map[string]any {
	out := make(map[string]any, len(m))
	for k, v := range m {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			out[k] = nil
		} else {
			out[k] = v
		}
	}
	return out
}

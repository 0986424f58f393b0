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
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/gomlx/compute"
	"github.com/gomlx/compute/dtypes"
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
	LossRows                      int
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
	fs.IntVar(&o.GRPO.LossRows, "loss_rows", 0, "grpostep: at most this many turn samples per loss forward+backward call (loss_rows; 0: a whole micro-batch)")
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

// Command pretrain rebuilds the tiny base model shipped in package tinybase:
// a randomly initialised tiny Qwen3 (training.TinyModelConfig) with a
// vocabulary learned from its data, trained to imitate the environment's
// oracle on every generated question of the tiny preset's training database
// (bundled.MoreQuestions) except the questions the preset trains on, holds
// out and evaluates on. It writes the model, the tokenizer and
// provenance.json (this command line, commit, machine, time, settings, the
// held-out success it reached and the fingerprints of the SQL it saw).
//
//	GOEXPERIMENT=simd go run ./training/cmd/pretrain [-output_dir training/tinybase/model] [-epochs N] …
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"runtime"
	"slices"
	"strings"
	"time"

	"github.com/gosqlenv/gosqlenv/sqlenv/dataset"
	"github.com/gosqlenv/gosqlenv/sqlenv/dataset/bundled"
	"github.com/gosqlenv/gosqlenv/training"
	"github.com/gosqlenv/gosqlenv/training/tinybase"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	if err := run(ctx, os.Args[1:]); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			os.Exit(2)
		}
		fmt.Fprintln(os.Stderr, "pretrain:", err)
		os.Exit(1)
	}
}

// options are the command's flags.
type options struct {
	outputDir, workDir string
	databases          []string
	epochs, batchSize  int
	learningRate       float64
	seed               int64
}

// Defaults of the shipped model (provenance.json records what was used).
const (
	defaultEpochs       = 40
	defaultBatchSize    = 16
	defaultLearningRate = 2e-3
	defaultDatabases    = "university"
)

func parse(args []string) (options, error) {
	var o options
	fs := flag.NewFlagSet("pretrain", flag.ContinueOnError)
	fs.StringVar(&o.outputDir, "output_dir", "training/tinybase/model", "where the model directory is written")
	fs.StringVar(&o.workDir, "work_dir", "", "checkpoints and metrics during training (default: a temporary directory, removed at the end)")
	fs.IntVar(&o.epochs, "epochs", defaultEpochs, "passes over the pre-training samples")
	fs.IntVar(&o.batchSize, "batch_size", defaultBatchSize, "samples (oracle turns) per optimizer step")
	fs.Float64Var(&o.learningRate, "learning_rate", defaultLearningRate, "peak learning rate (linear decay to 0)")
	fs.Int64Var(&o.seed, "seed", 1, "initialisation and shuffling seed")
	dbs := fs.String("databases", defaultDatabases, "comma-separated bundled training databases whose generated questions it learns (of "+strings.Join(bundled.Databases(dataset.Train), ", ")+")")
	if err := fs.Parse(args); err != nil {
		return o, err
	}
	if fs.NArg() > 0 {
		return o, fmt.Errorf("unexpected argument %q", fs.Arg(0))
	}
	for _, d := range strings.Split(*dbs, ",") {
		if d = strings.TrimSpace(d); d != "" {
			o.databases = append(o.databases, d)
		}
	}
	if len(o.databases) == 0 {
		return o, errors.New("-databases: name at least one database")
	}
	if o.epochs < 1 || o.batchSize < 1 || !(o.learningRate > 0) {
		return o, fmt.Errorf("-epochs %d, -batch_size %d, -learning_rate %g: all must be positive", o.epochs, o.batchSize, o.learningRate)
	}
	return o, nil
}

func run(ctx context.Context, args []string) error {
	start := time.Now()
	o, err := parse(args)
	if err != nil {
		return err
	}
	work := o.workDir
	if work == "" {
		if work, err = os.MkdirTemp("", "gosqlenv-pretrain-"); err != nil {
			return err
		}
		defer os.RemoveAll(work)
	}
	cfg := Config(o, work)
	p, err := training.OpenData(ctx, cfg)
	if err != nil {
		return err
	}
	defer p.Close()
	if p.Pretrain, err = p.PretrainQuestions(ctx, o.databases...); err != nil {
		return err
	}
	p.TokenizerPattern = training.TinyTokenizerPattern
	if err := p.LoadModel(ctx); err != nil {
		return err
	}
	fmt.Fprintf(os.Stderr, "pre-training a %d-parameter model on %d questions of %v (%d training, %d held-out and %d evaluation questions left out), %d epochs\n",
		p.Model.Config.NumParameters(), len(p.Pretrain), o.databases, len(p.Train), len(p.Heldout), len(p.Eval), o.epochs)
	log, err := training.NewRunLog(work, 50, os.Stderr)
	if err != nil {
		return err
	}
	res, err := p.RunPretrain(ctx, log)
	if err != nil {
		return err
	}
	summary := []string{}
	for _, split := range []string{training.SplitTrain, training.SplitHeldout} {
		r, err := p.EvaluateSplit(ctx, "base", split)
		if err != nil {
			return err
		}
		fmt.Fprintf(os.Stderr, "base on %-17s %s\n", split+":", r)
		summary = append(summary, fmt.Sprintf("%s %s", split, r))
	}
	prov := tinybase.Provenance{
		Command:   commandLine(o),
		GitCommit: gitCommit(),
		Created:   time.Now().UTC().Format(time.RFC3339),
		Machine:   machine(),
		Databases: o.databases, Difficulties: cfg.DifficultyFilter,
		Questions: res.Questions, Samples: res.Samples,
		Epochs: o.epochs, LearningRate: o.learningRate, BatchSize: o.batchSize, Seed: o.seed,
		FinalLoss: res.FinalLoss,
		Excluded: fmt.Sprintf("questions whose gold SQL or text is that of one of the tiny preset's %d training, %d held-out (heldout_fraction %g) or %d evaluation questions",
			len(p.Train), len(p.Heldout), cfg.HeldoutFraction, len(p.Eval)),
		Evaluation:  strings.Join(summary, "; "),
		WallSeconds: time.Since(start).Seconds(),
	}
	if err := p.SaveBaseModel(o.outputDir, prov); err != nil {
		return err
	}
	fmt.Fprintf(os.Stderr, "wrote %s in %.0f s\n", o.outputDir, time.Since(start).Seconds())
	return nil
}

// Config is the from-scratch tiny preset (a random tiny model) with the pre-training
// settings of o (as SFT settings), writing under work.
func Config(o options, work string) training.GRPOConfig {
	cfg := training.DefaultGRPOConfig()
	training.TinyScratchPreset(&cfg)
	cfg.OutputDir, cfg.Seed = work, o.seed
	cfg.SFTEpochs, cfg.SFTBatchSize, cfg.SFTLearningRate = o.epochs, o.batchSize, o.learningRate
	cfg.SaveSteps = 0
	return cfg
}

// commandLine is the command that rebuilds the model with every setting
// spelled out, so that it means the same when the defaults change.
func commandLine(o options) string {
	return fmt.Sprintf("GOEXPERIMENT=simd go run ./training/cmd/pretrain -databases %s -epochs %d -batch_size %d -learning_rate %g -seed %d -output_dir %s",
		strings.Join(o.databases, ","), o.epochs, o.batchSize, o.learningRate, o.seed, o.outputDir)
}

func gitCommit() string {
	out, err := exec.Command("git", "rev-parse", "HEAD").Output()
	if err != nil {
		return ""
	}
	return strings.TrimSpace(string(out))
}

// machine names the CPU and the threads used.
func machine() string {
	cpu, simd := "unknown CPU", ""
	if b, err := os.ReadFile("/proc/cpuinfo"); err == nil {
		for _, line := range strings.Split(string(b), "\n") {
			k, v, ok := strings.Cut(line, ":")
			switch k = strings.TrimSpace(k); {
			case ok && k == "model name" && cpu == "unknown CPU":
				cpu = strings.TrimSpace(v)
			case ok && k == "flags" && simd == "":
				var have []string
				for _, f := range []string{"avx2", "avx512f"} {
					if slices.Contains(strings.Fields(v), f) {
						have = append(have, strings.ToUpper(strings.TrimSuffix(f, "f")))
					}
				}
				simd = " (" + strings.Join(have, ", ") + ")"
			}
		}
	}
	cpu += simd
	return fmt.Sprintf("%s, %d threads (GOMAXPROCS), %s/%s", cpu, runtime.GOMAXPROCS(0), runtime.GOOS, runtime.GOARCH)
}

// Command pretrain builds a tiny base model for package tinybase: a
// randomly initialised tiny Qwen3 (training.TinyModelConfig) with a
// vocabulary learned from its data, trained on oracle episodes of redrawn
// instances of bundled training databases (bundled.GenerateInstance: same
// schemas and question templates, other rows, half of the words made up) —
// the loss on the oracle's actions by default, with 8 attention heads —
// none of which is a
// question of the bundled dataset or one of the generated held-out
// questions a run may ask. It writes the model, the tokenizer and
// provenance.json (this command line, commit, machine, time, settings, the
// success it reached and the fingerprints of the SQL it saw).
//
// Its work directory (checkpoints, generated data, vocabulary) is named by
// the settings, so running the same command again after an interruption
// (Ctrl-C saves a checkpoint) continues where it stopped and ends with the
// same model as one uninterrupted run.
//
// The model shipped today was made by an earlier version of this command
// (its provenance.json names the command and commit); BENCHMARKS.md ("The
// tiny base model") reports what the instance pre-training reached so far.
//
//	GOEXPERIMENT=simd go run ./training/cmd/pretrain [-output_dir training/tinybase/model] [-instances N] …
package main

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
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
	outputDir, workDir           string
	databases                    []string
	instances, perInstance       int
	epochs, batchSize, saveSteps int
	learningRate                 float64
	seed                         int64
	loss                         string
	heads, evalSteps             int
	lengthGroupBatches           int
	renamed, reworded            bool
	renamedCopies                int
	lessons                      float64
}

// Defaults of the shipped model (provenance.json records what was used).
const (
	defaultInstances   = 160
	defaultPerInstance = 0 // every easy and medium question of each instance
	// defaultLengthGroupBatches: plain shuffles (grouping by length is
	// faster, but SFT learned a little worse with it; BENCHMARKS.md).
	defaultLengthGroupBatches = 0
	defaultEpochs             = 1
	defaultBatchSize          = 16
	defaultLearningRate       = 2e-3
	defaultSaveSteps          = 200
	defaultEvalSteps          = 1000
	// heldoutGenerated and maxEvalQuestions size the evaluations: 60
	// generated held-out questions besides the file's 10, and at most 70
	// questions per split, so that one standard error is at most 6 points.
	heldoutGenerated = 60
	maxEvalQuestions = 70
)

func parse(args []string) (options, error) {
	var o options
	fs := flag.NewFlagSet("pretrain", flag.ContinueOnError)
	fs.StringVar(&o.outputDir, "output_dir", "training/tinybase/model", "where the model directory is written")
	fs.StringVar(&o.workDir, "work_dir", "", "checkpoints, generated databases and vocabulary (default: a folder of the user's cache named by the settings; the same command resumes from it)")
	fs.IntVar(&o.instances, "instances", defaultInstances, "redrawn instances of each database")
	fs.IntVar(&o.perInstance, "per_instance", defaultPerInstance, "questions taken from each instance of a database (0: all)")
	fs.IntVar(&o.lengthGroupBatches, "length_group_batches", defaultLengthGroupBatches, "sort runs of this many batches by sample length, so that batches pad less (0: plain shuffle; sft_length_group_batches)")
	fs.IntVar(&o.epochs, "epochs", defaultEpochs, "passes over the pre-training samples")
	fs.IntVar(&o.batchSize, "batch_size", defaultBatchSize, "samples (oracle turns) per optimizer step")
	fs.IntVar(&o.saveSteps, "save_steps", defaultSaveSteps, "optimizer steps between checkpoints (the latest is kept)")
	fs.Float64Var(&o.learningRate, "learning_rate", defaultLearningRate, "peak learning rate (linear decay to 0)")
	fs.Int64Var(&o.seed, "seed", 1, "initialisation, question choice and shuffling seed")
	fs.IntVar(&o.evalSteps, "eval_steps", defaultEvalSteps, "optimizer steps between greedy evaluations on the held-out questions and unseen databases (0: only at the end)")
	fs.BoolVar(&o.renamed, "renamed", false, "train on a renamed copy of each instance (tables and columns under other names, drawn per instance), so that names must be read, not recalled")
	fs.IntVar(&o.renamedCopies, "renamed_copies", 1, "with -renamed: renamed copies of each instance, its questions asked on them in turn (more copies: fewer questions per set of names, so that names must be read)")
	fs.Float64Var(&o.lessons, "lessons", 0, "share of the questions whose database also gives schema lessons (re-write the table list; DESCRIBE a table, then re-write its columns), dense lessons in copying names")
	fs.BoolVar(&o.reworded, "reworded", false, "reword the questions (other frames, first words and phrases; about a third keep their wording)")
	fs.IntVar(&o.heads, "heads", training.TinyPretrainHeads, "attention heads of the new model (each with its own key and value head)")
	fs.StringVar(&o.loss, "loss", string(training.PretrainOnActions), "tokens trained on: text (every token of each turn: question, observations, action) or actions (the oracle's actions only)")
	train := bundled.Databases(dataset.Train)
	dbs := fs.String("databases", "university", "comma-separated bundled training databases whose instances it learns (of "+strings.Join(train, ", ")+"), or all")
	if err := fs.Parse(args); err != nil {
		return o, err
	}
	if fs.NArg() > 0 {
		return o, fmt.Errorf("unexpected argument %q", fs.Arg(0))
	}
	if strings.TrimSpace(*dbs) == "all" {
		*dbs = strings.Join(train, ",")
	}
	for _, d := range strings.Split(*dbs, ",") {
		if d = strings.TrimSpace(d); d != "" {
			if !slices.Contains(train, d) {
				return o, fmt.Errorf("-databases: %q is not a bundled training database (%s)", d, strings.Join(train, ", "))
			}
			o.databases = append(o.databases, d)
		}
	}
	if len(o.databases) == 0 {
		return o, errors.New("-databases: name at least one database")
	}
	if o.evalSteps < 0 {
		return o, fmt.Errorf("-eval_steps %d: want 0 or more", o.evalSteps)
	}
	if o.heads < 1 {
		return o, fmt.Errorf("-heads %d: want at least 1", o.heads)
	}
	if o.loss != string(training.PretrainOnText) && o.loss != string(training.PretrainOnActions) {
		return o, fmt.Errorf("-loss %q: want %s or %s", o.loss, training.PretrainOnText, training.PretrainOnActions)
	}
	if o.lessons < 0 || o.lessons > 1 {
		return o, fmt.Errorf("-lessons %g: want a share in [0, 1]", o.lessons)
	}
	if o.renamedCopies < 1 {
		return o, fmt.Errorf("-renamed_copies %d: want at least 1", o.renamedCopies)
	}
	if o.lengthGroupBatches < 0 {
		return o, fmt.Errorf("-length_group_batches %d: want 0 or more", o.lengthGroupBatches)
	}
	if o.instances < 1 || o.epochs < 1 || o.batchSize < 1 || o.saveSteps < 1 || !(o.learningRate > 0) || o.perInstance < 0 {
		return o, fmt.Errorf("-instances %d, -epochs %d, -batch_size %d, -save_steps %d, -learning_rate %g: all must be positive (-per_instance %d: at least 0)",
			o.instances, o.epochs, o.batchSize, o.saveSteps, o.learningRate, o.perInstance)
	}
	return o, nil
}

// defaultWorkDir is the work directory of a run's settings under the user's
// cache: the same settings find the same folder, and resume from it.
func defaultWorkDir(o options) (string, error) {
	base, err := os.UserCacheDir()
	if err != nil {
		return "", fmt.Errorf("no user cache directory (give -work_dir): %w", err)
	}
	key := fmt.Sprintf("%v %d %d %d %d %g %d %s %d %d", o.databases, o.instances, o.perInstance, o.epochs, o.batchSize, o.learningRate, o.seed, o.loss, o.heads, o.lengthGroupBatches)
	if o.renamed || o.reworded { // the keys of earlier runs stay as they were
		key += fmt.Sprintf(" renamed=%v reworded=%v", o.renamed, o.reworded)
	}
	if o.renamedCopies > 1 {
		key += fmt.Sprintf(" renamed_copies=%d", o.renamedCopies)
	}
	if o.lessons > 0 {
		key += fmt.Sprintf(" lessons=%g", o.lessons)
	}
	sum := sha256.Sum256([]byte(key))
	return filepath.Join(base, "gosqlenv", "pretrain-"+hex.EncodeToString(sum[:6])), nil
}

func run(ctx context.Context, args []string) error {
	start := time.Now()
	o, err := parse(args)
	if err != nil {
		return err
	}
	if o.workDir == "" {
		if o.workDir, err = defaultWorkDir(o); err != nil {
			return err
		}
	}
	// The wall time of every run on this work directory adds up, so that a
	// pre-training cut into several runs reports its whole time.
	earlier := readSeconds(filepath.Join(o.workDir, wallFile))
	defer func() { writeSeconds(filepath.Join(o.workDir, wallFile), earlier+time.Since(start).Seconds()) }()
	p, cfg, err := prepare(ctx, o)
	if p != nil {
		defer p.Close()
	}
	if err != nil {
		return err
	}
	fmt.Fprintf(os.Stderr, "pre-training a %d-parameter model on %d questions of %d instances of %v (none of the bundled dataset's questions), %d epochs\n",
		p.Model.Config.NumParameters(), len(p.Pretrain), o.instances, o.databases, o.epochs)
	log, err := training.NewRunLog(cfg.OutputDir, 50, os.Stderr)
	if err != nil {
		return err
	}
	// Record the wall time as the run goes too: a run that is killed (the
	// end of a sitting) never reaches the deferred write.
	log.OnLog = func(training.Metrics) {
		writeSeconds(filepath.Join(o.workDir, wallFile), earlier+time.Since(start).Seconds())
	}
	res, err := p.RunPretrain(ctx, log)
	if res.ResumedFrom != "" {
		fmt.Fprintf(os.Stderr, "continued from %s\n", res.ResumedFrom)
	}
	if err != nil {
		return err
	}
	return evaluateAndSave(ctx, p, o, cfg, res, earlier, start)
}

// wallFile, in the work directory, holds the seconds of the runs so far.
const wallFile = "wall_seconds.txt"

func readSeconds(path string) float64 {
	b, err := os.ReadFile(path)
	if err != nil {
		return 0
	}
	v, err := strconv.ParseFloat(strings.TrimSpace(string(b)), 64)
	if err != nil {
		return 0
	}
	return v
}

func writeSeconds(path string, v float64) {
	if err := os.WriteFile(path, []byte(strconv.FormatFloat(v, 'f', 1, 64)+"\n"), 0o644); err != nil {
		fmt.Fprintln(os.Stderr, "pretrain: record the wall time:", err)
	}
}

// Config is the from-scratch tiny preset (a random tiny model) over the
// dataset at paths, with the pre-training settings of o (as SFT settings),
// the notebook preset's splits (training.TinyPreset) with 60 generated
// held-out questions and up to 70 questions per split for its evaluations
// (every -eval_steps and at the end), writing under o.workDir.
func Config(o options, paths bundled.Paths) training.GRPOConfig {
	cfg := training.DefaultGRPOConfig()
	training.TinyPreset(&cfg)
	cfg.ModelName = training.TinyModelName
	cfg.QuestionsPath, cfg.EvalQuestionsPath, cfg.DBDir = paths.TrainQuestions, paths.EvalQuestions, paths.DBDir
	cfg.OutputDir, cfg.Seed = o.workDir, o.seed
	cfg.SFTEpochs, cfg.SFTBatchSize, cfg.SFTLearningRate = o.epochs, o.batchSize, o.learningRate
	cfg.SFTLengthGroupBatches = o.lengthGroupBatches
	cfg.SaveSteps, cfg.EvalSteps = o.saveSteps, o.evalSteps
	cfg.HeldoutGenerated, cfg.MaxEvalQuestions = heldoutGenerated, maxEvalQuestions
	cfg.TrainGenerated = 0 // pre-training has its own questions (PretrainQuestions)
	return cfg
}

// commandLine is the command that rebuilds the model with every setting
// spelled out, so that it means the same when the defaults change.
func commandLine(o options) string {
	return fmt.Sprintf("GOEXPERIMENT=simd go run ./training/cmd/pretrain -databases %s -instances %d -per_instance %d -renamed=%v -renamed_copies %d -reworded=%v -loss %s -heads %d -epochs %d -batch_size %d -learning_rate %g -length_group_batches %d -seed %d -output_dir %s",
		strings.Join(o.databases, ","), o.instances, o.perInstance, o.renamed, o.renamedCopies, o.reworded, o.loss, o.heads, o.epochs, o.batchSize, o.learningRate, o.lengthGroupBatches, o.seed, o.outputDir)
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

// prepare makes the run's pipeline: the bundled data under the work
// directory, the generated pre-training questions and the fresh model.
func prepare(ctx context.Context, o options) (*training.Pipeline, training.GRPOConfig, error) {
	paths, err := bundled.EnsureAt(ctx, filepath.Join(o.workDir, "data"))
	if err != nil {
		return nil, training.GRPOConfig{}, err
	}
	cfg := Config(o, paths)
	p, err := training.OpenData(ctx, cfg)
	if err != nil {
		return nil, cfg, err
	}
	fmt.Fprintf(os.Stderr, "work directory %s (run the same command again to continue after an interruption)\n", o.workDir)
	fmt.Fprintf(os.Stderr, "generating %d instances of %d databases…\n", o.instances, len(o.databases))
	data := training.PretrainData{Databases: o.databases, Instances: o.instances, PerInstance: o.perInstance, Seed: o.seed, Renamed: o.renamed, RenamedCopies: o.renamedCopies, Reworded: o.reworded}
	if p.Pretrain, err = p.PretrainQuestions(ctx, data); err != nil {
		return p, cfg, err
	}
	p.TokenizerPattern, p.PretrainLoss, p.TinyHeads = training.TinyTokenizerPattern, training.PretrainLoss(o.loss), o.heads
	p.PretrainLessons = o.lessons
	return p, cfg, p.LoadModel(ctx)
}

// evaluateAndSave evaluates the pre-trained base on the held-out and unseen
// splits and writes it to the output directory with its provenance (the
// wall time of all the runs on the work directory: earlier seconds, and
// this run's since start).
func evaluateAndSave(ctx context.Context, p *training.Pipeline, o options, cfg training.GRPOConfig, res training.PretrainResult, earlier float64, start time.Time) error {
	summary := []string{}
	for _, split := range []string{training.SplitHeldout, training.SplitUnseen} {
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
		Instances: o.instances, PerInstance: o.perInstance, Renamed: o.renamed, RenamedCopies: o.renamedCopies, Reworded: o.reworded, Loss: o.loss,
		Questions: res.Questions, Samples: res.Samples,
		Epochs: o.epochs, LearningRate: o.learningRate, BatchSize: o.batchSize, Seed: o.seed, LengthGroupBatches: o.lengthGroupBatches,
		FinalLoss: res.FinalLoss,
		Excluded: fmt.Sprintf("every question of the bundled dataset (version %s), the first %d generated held-out questions and the first %d generated training questions of each training database (heldout_generated, train_generated), by gold SQL and text before any renaming or rewording; the evaluation databases entirely",
			bundled.Version, training.HeldoutReserve, training.TrainReserve),
		Evaluation:  strings.Join(summary, "; "),
		WallSeconds: earlier + time.Since(start).Seconds(),
	}
	if err := p.SaveBaseModel(o.outputDir, prov); err != nil {
		return err
	}
	fmt.Fprintf(os.Stderr, "wrote %s in %.0f s\n", o.outputDir, time.Since(start).Seconds())
	return nil
}

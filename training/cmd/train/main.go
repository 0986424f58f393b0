// Command train runs the training pipeline on the SQL environment from a
// configuration: SFT warm-up on oracle trajectories, GRPO, and evaluation of
// the trained model against the random policy. The raft stage replaces GRPO
// by rejection-sampling fine-tuning (training/raft) on the same questions,
// model and evaluation: the baseline to compare GRPO with.
//
//	train [-config run.yaml] [-<field> value …] [all|sft|grpo|eval]
//	train [-config run.yaml] [-raft_config raft.yaml] [-raft_questions N] raft
//	train [-config run.yaml] [-bench_steps N -bench_warmup N -bench_rounds N] bench
//	train [-config run.yaml] questions
//
// The questions stage writes the questions the run plays to
// output_dir/env_questions.json and prints the sqlenv-server command that
// serves them: environment servers for env_servers (they are checked
// against this at start).
//
// The bench stage times GRPO steps (generation, environment, loss and
// backward, optimizer; wall and CPU) and evaluation episodes per second
// with prefix sharing off (one padded row per turn and per episode, the
// earlier paths) and on, interleaved, from the same weights and seed.
//
// Settings come from training.DefaultGRPOConfig, then the -config file (JSON
// or YAML), then GOSQLENV_<FIELD> environment variables, then flags (one per
// field, e.g. -learning_rate 1e-5 -model_name tiny). Metrics are written as
// JSON lines to output_dir; checkpoints (Hugging Face safetensors) to
// output_dir/checkpoint-N. Ctrl-C saves a checkpoint before exiting.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"slices"
	"strings"

	"github.com/gosqlenv/gosqlenv/sqlenv/dataset"
	"github.com/gosqlenv/gosqlenv/training"
	"github.com/gosqlenv/gosqlenv/training/qwen3"
	"github.com/gosqlenv/gosqlenv/training/raft"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	if err := run(ctx, os.Args[1:]); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			os.Exit(2)
		}
		fmt.Fprintln(os.Stderr, "train:", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, args []string) error {
	cfg, stage, ro, evalPolicy, err := parse(args)
	if err != nil {
		return err
	}
	if cfg.Backend == "" || cfg.Backend == "go" {
		if !qwen3.SIMDBuild {
			fmt.Fprintln(os.Stderr, "note: built without GOEXPERIMENT=simd; the CPU backend is ~14x slower")
		}
	}
	if stage == "questions" {
		return writeEpisodeQuestions(ctx, cfg, os.Stdout)
	}
	p, err := training.NewPipeline(ctx, cfg)
	if err != nil {
		return err
	}
	defer p.Close()
	fmt.Fprintf(os.Stderr, "model %s (%d parameters) on backend %s; %d train and %d eval questions (%v)\n",
		cfg.ModelName, p.Model.Config.NumParameters(), p.Backend.Name(), len(p.Train), len(p.Eval), cfg.DifficultyFilter)
	r := stages{ctx: ctx, p: p, all: stage == "all"}
	if r.all {
		if err := r.evaluate(training.PolicyRandom, training.PolicyUntrained); err != nil {
			return err
		}
	}
	if stage == "sft" || ((r.all || stage == "raft") && cfg.SFTEnabled) {
		if err := r.sft(); err != nil {
			return err
		}
	}
	if stage == "grpo" || r.all {
		if err := r.grpo(); err != nil {
			return err
		}
	}
	if stage == "raft" {
		if err := r.raft(ro); err != nil {
			return err
		}
	}
	if stage == "bench" {
		return r.benchmark(ro.bench)
	}
	if stage == "eval" {
		if err := r.evaluate(training.PolicyRandom, evalPolicy); err != nil {
			return err
		}
	}
	summary, err := training.ReadEvalSummary(cfg.OutputDir)
	if err != nil {
		return err
	}
	if len(summary) > 0 {
		fmt.Print(summary.Table())
		fmt.Printf("summary: %s (transcripts: eval_<policy>.json beside it)\n", filepath.Join(cfg.OutputDir, training.EvalSummaryFile))
	}
	return nil
}

// EpisodeQuestionsFile is the file, in output_dir, that the questions stage
// writes: what environment servers must serve for this run.
const EpisodeQuestionsFile = "env_questions.json"

// writeEpisodeQuestions writes the questions the run's rollouts and
// evaluations play (training, held-out, unseen databases) to output_dir and
// prints the sqlenv-server command that serves them as the run expects
// (env_servers are checked against exactly this at start).
func writeEpisodeQuestions(ctx context.Context, cfg training.GRPOConfig, w io.Writer) error {
	p, err := training.OpenData(ctx, cfg)
	if err != nil {
		return err
	}
	defer p.Close()
	if err := os.MkdirAll(cfg.OutputDir, 0o755); err != nil {
		return err
	}
	path, err := filepath.Abs(filepath.Join(cfg.OutputDir, EpisodeQuestionsFile))
	if err != nil {
		return err
	}
	qs := p.EpisodeQuestions()
	if err := dataset.Save(path, qs); err != nil {
		return err
	}
	dbDir, err := filepath.Abs(p.Databases.Dir())
	if err != nil {
		return err
	}
	fmt.Fprintf(w, "wrote %d questions (%d training, %d held-out, %d of unseen databases) to %s\n", len(qs), len(p.Train), len(p.Heldout), len(p.Eval), path)
	fmt.Fprintf(w, "serve them on each environment host, from a checkout of this repository, with the same files (copy %s and %s there; change the paths below if they differ):\n", path, dbDir)
	fmt.Fprintln(w, "  openssl rand -hex 16 > sqlenv.token   # once: copy sqlenv.token to every host and to the trainer")
	fmt.Fprintf(w, "  SQLENV_AUTH_TOKEN=$(cat sqlenv.token) go run ./sqlenv/cmd/sqlenv-server --addr :8000 --allowed-hosts \"$(hostname)\" --questions %s --db-dir %s --step-budget %d\n", path, dbDir, cfg.StepBudget)
	fmt.Fprintln(w, "(--allowed-hosts: the name the trainer uses for the host); then train with env_servers listing them:")
	fmt.Fprintln(w, "  GOSQLENV_ENV_SERVERS=http://host-a:8000,http://host-b:8000 GOSQLENV_ENV_AUTH_TOKEN=$(cat sqlenv.token) go run ./training/cmd/train -preset tiny")
	return nil
}

// stages runs the stages of a run on one pipeline; with all, each training
// stage is followed by an evaluation.
type stages struct {
	ctx context.Context
	p   *training.Pipeline
	all bool
}

// evaluate evaluates each policy on every split, prints and records it.
func (r stages) evaluate(policies ...string) error {
	for _, policy := range policies {
		res, err := r.p.EvaluateSplits(r.ctx, policy)
		if err != nil {
			return err
		}
		for _, split := range training.Splits {
			if sr, ok := res[split]; ok {
				fmt.Fprintf(os.Stderr, "%-9s on %-17s %s\n", policy, split+":", sr)
			}
		}
		if _, err := training.RecordEvaluation(r.p.Config.OutputDir, policy, res); err != nil {
			return err
		}
	}
	return nil
}

// sft runs the SFT warm-up.
func (r stages) sft() error {
	cfg := r.p.Config
	log, err := training.NewRunLog(filepath.Join(cfg.OutputDir, "sft"), cfg.LoggingSteps, os.Stderr)
	if err != nil {
		return err
	}
	fmt.Fprintln(os.Stderr, "SFT warm-up on oracle trajectories")
	if err := r.p.RunSFT(r.ctx, log); err != nil {
		return err
	}
	if r.all {
		return r.evaluate(training.PolicySFT)
	}
	return nil
}

// grpo trains with GRPO.
func (r stages) grpo() error {
	cfg := r.p.Config
	log, err := training.NewRunLog(cfg.OutputDir, cfg.LoggingSteps, os.Stderr)
	if err != nil {
		return err
	}
	tr, err := r.p.NewGRPO(log)
	if err != nil {
		return err
	}
	tr.EvaluatedAfter = r.all
	fmt.Fprintf(os.Stderr, "GRPO: %d steps of %d questions × %d generations\n", tr.TotalSteps(), cfg.QuestionsPerStep(), cfg.NumGenerations)
	if err := tr.Train(r.ctx); err != nil {
		return err
	}
	fmt.Fprintf(os.Stderr, "metrics: %s\n", log.Path())
	if r.all {
		return r.evaluate(training.PolicyGRPO)
	}
	return nil
}

// raft runs RAFT cycles on the SQL environment, then evaluates.
func (r stages) raft(opts raftOptions) error {
	tr, err := raft.ForPipeline(r.p, opts.config, opts.questions)
	if err != nil {
		return err
	}
	tr.Progress = os.Stderr
	fmt.Fprintf(os.Stderr, "RAFT: %d cycles of %d questions × %d episodes, keep reward ≥ %g then the top %g (%s)\n",
		tr.Config.NumCycles, tr.Source.NumPrompts(), tr.Config.SamplesPerPrompt, tr.Config.RewardThreshold,
		tr.Config.KeepTopFraction, tr.Config.Selection)
	if _, err := tr.Run(r.ctx); err != nil {
		return err
	}
	fmt.Fprintf(os.Stderr, "cycle log: %s\n", filepath.Join(tr.Config.OutputDir, raft.LogFile))
	return r.evaluate("raft")
}

// raftOptions are the raft stage's settings, and the bench stage's.
type raftOptions struct {
	config    raft.Config
	questions int
	bench     benchOptions
}

// parse layers defaults, the config file, the environment and flags.
func parse(args []string) (cfg training.GRPOConfig, stage string, ro raftOptions, evalPolicy string, err error) {
	cfg = training.DefaultGRPOConfig()
	// The config file comes first, so look for it before defining the other flags.
	pre := flag.NewFlagSet("train", flag.ContinueOnError)
	pre.SetOutput(io.Discard)
	configPath := pre.String("config", "", "")
	preset := pre.String("preset", "", "")
	_ = pre.Parse(filterConfigFlag(args))
	switch *preset {
	case "":
	case "tiny":
		training.TinyPreset(&cfg)
	case "tiny-scratch":
		training.TinyScratchPreset(&cfg)
	default:
		return cfg, "", ro, "", fmt.Errorf("-preset %q: the presets are tiny and tiny-scratch", *preset)
	}
	if *configPath != "" {
		if *preset != "" {
			return cfg, "", ro, "", fmt.Errorf("-preset and -config: give one of them (a config file starts from the defaults)")
		}
		if cfg, err = training.LoadGRPOConfig(*configPath); err != nil {
			return cfg, "", ro, "", err
		}
	}
	if err := cfg.ApplyEnv(os.LookupEnv); err != nil {
		return cfg, "", ro, "", err
	}
	fs := flag.NewFlagSet("train", flag.ContinueOnError)
	fs.String("config", *configPath, "JSON or YAML configuration file (applied before environment variables and flags)")
	fs.String("preset", *preset, "tiny: the notebook's CPU preset (training.TinyPreset: the pre-trained tiny base model, 192 training and 70 held-out questions); tiny-scratch: the earlier setup from random weights on the file's 42 training questions (training.TinyScratchPreset); applied before environment variables and flags")
	raftPath := fs.String("raft_config", "", "raft stage: JSON or YAML RAFT configuration (training/raft.Config; default: the reference setup, output in <output_dir>/raft)")
	fs.IntVar(&ro.questions, "raft_questions", 32, "raft stage: number of training questions sampled per cycle (0: all)")
	fs.IntVar(&ro.bench.steps, "bench_steps", 4, "bench stage: timed GRPO steps per round and path")
	fs.IntVar(&ro.bench.warmup, "bench_warmup", 2, "bench stage: untimed GRPO steps before them (compilation)")
	fs.IntVar(&ro.bench.rounds, "bench_rounds", 2, "bench stage: rounds, each timing the earlier path then the prefix-sharing one")
	fs.StringVar(&evalPolicy, "eval_policy", training.PolicyGRPO, "eval stage: the name under which the model's results go into eval_summary.json (untrained, sft, grpo, …)")
	cfg.RegisterFlags(fs)
	fs.Usage = func() {
		fmt.Fprintln(fs.Output(), "usage: train [flags] [all|sft|grpo|eval|raft|bench|questions]")
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		return cfg, "", ro, "", err
	}
	stage = "all"
	if fs.NArg() > 0 {
		stage = fs.Arg(0)
	}
	if !slices.Contains([]string{"all", "sft", "grpo", "eval", "raft", "bench", "questions"}, stage) {
		return cfg, "", ro, "", fmt.Errorf("unknown stage %q (all, sft, grpo, eval, raft, bench or questions)", stage)
	}
	if b := ro.bench; b.steps < 1 || b.warmup < 0 || b.rounds < 1 {
		return cfg, "", ro, "", fmt.Errorf("-bench_steps %d and -bench_rounds %d must be at least 1, -bench_warmup %d at least 0", b.steps, b.rounds, b.warmup)
	}
	ro.config = raft.DefaultConfig()
	ro.config.OutputDir = filepath.Join(cfg.OutputDir, "raft")
	ro.config.Seed, ro.config.Precision, ro.config.LengthBucket = cfg.Seed, cfg.Precision, cfg.LengthBucket
	if *raftPath != "" {
		if ro.config, err = raft.LoadConfig(*raftPath); err != nil {
			return cfg, "", ro, "", err
		}
	}
	if evalPolicy == "" || evalPolicy == training.PolicyRandom {
		return cfg, "", ro, "", fmt.Errorf("-eval_policy %q: name the model's policy (untrained, sft, grpo, …)", evalPolicy)
	}
	return cfg, stage, ro, evalPolicy, cfg.Validate()
}

// filterConfigFlag keeps only -config and -preset (one or two dashes) with
// their values.
func filterConfigFlag(args []string) []string {
	var out []string
	for i := 0; i < len(args); i++ {
		a := args[i]
		name := strings.TrimLeft(a, "-")
		if name == a || len(a)-len(name) > 2 {
			continue
		}
		key, _, hasValue := strings.Cut(name, "=")
		if key != "config" && key != "preset" {
			continue
		}
		out = append(out, a)
		if !hasValue && i+1 < len(args) {
			out = append(out, args[i+1])
			i++
		}
	}
	return out
}

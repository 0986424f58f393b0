// Package nb is what the training notebook imports: the run configuration
// (real setup or tiny CPU preset), the pipeline and its evaluations with
// live progress, and package cell's helpers. Cells that only show the
// environment import the lighter packages cell and explore instead.
package nb

import (
	"context"
	"fmt"
	"html"
	"os"
	"os/signal"
	"path/filepath"
	"strings"

	"github.com/janpfeifer/gonb/gonbui"

	"github.com/gosqlenv/gosqlenv/notebooks/cell"
	"github.com/gosqlenv/gosqlenv/training"
	"github.com/gosqlenv/gosqlenv/training/report"
)

// RunConfig is the notebooks' configuration: the real setup
// (Qwen/Qwen3-1.7B in bfloat16 with the reference training settings) when
// $GOMLX_BACKEND names an XLA backend (a GPU), the tiny CPU preset otherwise;
// then every field can be overridden by a GOSQLENV_<FIELD> environment
// variable (e.g. GOSQLENV_MAX_STEPS=50). It also says which it chose and why.
func RunConfig() (training.GRPOConfig, string, error) {
	cfg := training.DefaultGRPOConfig()
	var why string
	if b := os.Getenv("GOMLX_BACKEND"); strings.HasPrefix(b, "xla") {
		cfg.OutputDir = Dir("outputs", "grpo")
		why = fmt.Sprintf("GOMLX_BACKEND=%s names an XLA backend: the real setup, %s in %s with the reference settings.", b, cfg.ModelName, cfg.Precision)
	} else {
		training.TinyPreset(&cfg)
		cfg.OutputDir = Dir("outputs", "tiny")
		why = "No XLA backend in GOMLX_BACKEND, so the CPU runs the tiny preset (training.TinyPreset): a 0.7 M-parameter " +
			"Qwen3 with its own 1,024-token vocabulary, pre-trained by this project on 160 redrawn instances of one database " +
			"(every name and number changes from one instance to the next, so it had to learn to copy the question's constants " +
			"into its SQL; training/tinybase; none of the questions or databases below), then SFT on 192 training questions " +
			"and GRPO on 160 of them, in a few minutes. It is not a capable agent: it knows one database schema and the kinds " +
			"of questions asked about it. Set GOMLX_BACKEND=xla:<CUDA plugin> for Qwen/Qwen3-1.7B (README, GPU)."
	}
	if err := cfg.ApplyEnv(os.LookupEnv); err != nil {
		return cfg, why, err
	}
	if _, overridden := os.LookupEnv(training.EnvPrefix + "MODEL_NAME"); overridden {
		why += " (model_name overridden by the environment)"
	}
	return cfg, why, cfg.Validate()
}

// TrainedConfig is RunConfig with model_name set to the model
// train_grpo.ipynb trained last: its latest GRPO checkpoint, else its latest
// SFT checkpoint (output_dir/sft), else the preset's model unchanged.
func TrainedConfig() (training.GRPOConfig, error) {
	cfg, _, err := RunConfig()
	if err != nil {
		return cfg, err
	}
	for _, dir := range []string{cfg.OutputDir, filepath.Join(cfg.OutputDir, "sft")} {
		if final, err := training.LatestCheckpoint(dir); err == nil {
			cfg.ModelName = final
			break
		}
	}
	return cfg, nil
}

// LiveLog is a run log whose records update a progress block in place.
func LiveLog(stage, dir string, loggingSteps int) (*training.RunLog, error) {
	log, err := training.NewRunLog(dir, loggingSteps, nil)
	if err != nil {
		return nil, err
	}
	// One display, updated in place: the first update replaces "starting…".
	id := gonbui.UniqueId()
	cell.Update(id, fmt.Sprintf(`<div style="font-family:sans-serif;font-size:13px"><b>%s</b>: starting…</div>`, html.EscapeString(stage)))
	log.OnLog = func(m training.Metrics) {
		cell.Update(id, report.Progress(stage, m, log.Total()))
	}
	// Between steps (a periodic evaluation) the block says what runs.
	log.OnActivity = func(last training.Metrics, total int, what string) {
		cell.Update(id, report.ProgressDoing(stage, last, total, what))
	}
	return log, nil
}

// ShowEvaluations makes p's evaluations show their progress in the cell, in
// one block updated in place: the policy, the split, the episodes finished
// and the time so far.
func ShowEvaluations(p *training.Pipeline) {
	id := gonbui.UniqueId()
	p.OnEvaluate = func(e training.EvalProgress) {
		cell.Update(id, report.EvalProgress(e))
	}
}

// Config is the training notebook's run configuration (RunConfig); it
// stops the cell on a bad setting.
func Config() training.GRPOConfig {
	cfg, _, err := RunConfig()
	Must(err)
	return cfg
}

// OpenData opens the run's questions and databases, without a model; defer
// its Close.
func OpenData(ctx context.Context) *training.Pipeline {
	p, err := training.OpenData(ctx, Config())
	Must(err)
	return p
}

// NewPipeline builds the pipeline of cfg (data, model, roller); defer its
// Close.
func NewPipeline(ctx context.Context, cfg training.GRPOConfig) *training.Pipeline {
	p, err := training.NewPipeline(ctx, cfg)
	Must(err)
	return p
}

// Evaluate evaluates policy on every split with its progress shown
// (ShowEvaluations), records it in the output directory and shows the table
// of every policy evaluated so far.
func Evaluate(ctx context.Context, p *training.Pipeline, policy string) {
	if p.OnEvaluate == nil {
		ShowEvaluations(p)
	}
	summary, err := p.EvaluateAndRecord(ctx, policy)
	Must(err)
	HTML(report.EvalSummaryTable(summary))
}

// Show shows a plot, or stops the cell with its error.
func Show(png []byte, err error) {
	Must(err)
	PNG(png)
}

// Dir, HTML, PNG, Markdown, Must, After, Save and Load are package cell's,
// so that the training notebook needs one import.

// Dir is cell.Dir: a path under the notebooks' folder.
func Dir(elems ...string) string { return cell.Dir(elems...) }

// HTML is cell.HTML: it displays HTML in the notebook.
func HTML(h string) { cell.HTML(h) }

// PNG is cell.PNG: it displays a PNG image in the notebook.
func PNG(b []byte) { cell.PNG(b) }

// Markdown is cell.Markdown: it displays Markdown in the notebook.
func Markdown(md string) { cell.Markdown(md) }

// Must is cell.Must: it stops the cell with the error.
func Must(err error) { cell.Must(err) }

// After is cell.After: it names the section to run first when a file it
// writes is missing.
func After(section string, paths ...string) error { return cell.After(section, paths...) }

// Save is cell.Save: it writes v as JSON to path.
func Save(path string, v any) error { return cell.Save(path, v) }

// Load is cell.Load: it reads JSON written by Save into v.
func Load(path string, v any) error { return cell.Load(path, v) }

// UnfinishedNote returns a Markdown warning when the latest run of the
// training stage whose outputs are in dir (GRPO: output_dir; SFT:
// output_dir/sft) did not complete — the plots and tables that follow are
// then of a partial run — and "" when it completed or never ran.
func UnfinishedNote(stage, dir string) string {
	st, ok, err := training.ReadRunState(dir)
	switch {
	case err != nil:
		return fmt.Sprintf("**Could not read how the %s run ended:** %v", stage, err)
	case !ok || st.Status == training.RunCompleted:
		return ""
	}
	return fmt.Sprintf("**This %s run did not finish** — it %s. What follows shows the partial run; run its section again to the end for the full one.", stage, st)
}

// Context is a cell's context, cancelled when the person presses the stop
// button (GoNB interrupts a cell's program with SIGINT, then kills it 5 s
// later): training stops between steps, saves a checkpoint and records
// that it stopped (run.json) instead of dying mid-step with no record.
func Context() context.Context {
	ctx, _ := signal.NotifyContext(context.Background(), os.Interrupt)
	return ctx
}

// StaleGRPONote returns a Markdown warning when the GRPO run in output_dir
// dir started from another SFT warm-up than the latest one in dir/sft (the
// SFT cell was run again since), and "" otherwise.
func StaleGRPONote(dir string) string {
	st, ok, err := training.ReadRunState(dir)
	if err != nil || !ok || st.From == "" {
		return ""
	}
	if now := training.StageRunID(filepath.Join(dir, "sft")); now != st.From {
		return fmt.Sprintf("**This GRPO run started from an earlier SFT warm-up** (%s); the SFT warm-up has been run again since (%s): run section 6 (GRPO) again to train from it.",
			st.From, orNone(now))
	}
	return ""
}

// ShowRunNotes shows, before a run's plots or tables, UnfinishedNote and
// StaleGRPONote of the GRPO run in output_dir dir, when they have
// something to say.
func ShowRunNotes(dir string) {
	for _, note := range []string{UnfinishedNote("GRPO", dir), StaleGRPONote(dir)} {
		if note != "" {
			Markdown(note)
		}
	}
}

func orNone(s string) string {
	if s == "" {
		return "no record"
	}
	return s
}

// Package nb is what the project's notebooks import: the run configuration
// (real setup or tiny CPU preset), display helpers over GoNB's gonbui, and
// small persistence helpers, because every GoNB cell is a separate program
// and values pass between cells through files.
package nb

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/janpfeifer/gonb/gonbui"

	"github.com/gosqlenv/gosqlenv/training"
	"github.com/gosqlenv/gosqlenv/training/report"
)

// TinySystemPrompt is the tiny preset's one-line system prompt: the default
// prompt (~310 tokens) would be two thirds of every sequence of a model that
// has to learn the actions from the SFT warm-up anyway.
const TinySystemPrompt = "Answer the question about the SQLite database. Reply with one action: DESCRIBE: table, SAMPLE: table, QUERY: select, or ANSWER: value."

// TinyPreset turns cfg into the CPU preset: a tiny model trained from scratch
// on the questions of one database, in about five minutes on two cores. The
// SFT warm-up teaches it the training questions' episodes; GRPO, sampling
// at temperature 0.7, then makes the sampled episodes more reliable. The
// evaluation shows what such a model can do (its training questions) and
// cannot (held-out questions, other databases): it memorises, it does not
// yet generalise.
func TinyPreset(cfg *training.GRPOConfig) {
	cfg.ModelName, cfg.Precision, cfg.SystemPrompt = training.TinyModelName, "float32", TinySystemPrompt
	cfg.TrainDatabases, cfg.DifficultyFilter = []string{"university"}, []string{"easy", "medium"}
	cfg.StepBudget, cfg.HistoryPairs, cfg.MaxResultChars = 5, 0, 300
	cfg.MaxNewTokens, cfg.MaxCompletionLength, cfg.LengthBucket = 80, 240, 32
	cfg.SFTMaxQuestions, cfg.SFTEpochs, cfg.SFTBatchSize, cfg.SFTLearningRate = 0, 24, 8, 2e-3
	cfg.NumGenerations, cfg.PerDeviceTrainBatchSize, cfg.GradientAccumulationSteps = 8, 16, 2
	cfg.Temperature, cfg.RewardFuncs = 0.7, []string{"correctness", "progress"}
	cfg.MaxSteps, cfg.LearningRate, cfg.LRSchedulerType, cfg.WarmupSteps = 60, 1e-4, "constant", 0
	cfg.LoggingSteps, cfg.EvalSteps = 5, 20
	cfg.MaxEvalQuestions, cfg.EvalSamples = 40, 8
}

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
		TinyPreset(&cfg)
		cfg.OutputDir = Dir("outputs", "tiny")
		why = "No XLA backend in GOMLX_BACKEND, so the CPU runs the tiny preset: a small random-initialised Qwen3 with a " +
			"1,024-token vocabulary learned from the environment's texts, trained on the easy and medium questions of one " +
			"database with short episodes — the whole pipeline in minutes, a model that learns its training questions but " +
			"not a capable agent. Set GOMLX_BACKEND=xla:<CUDA plugin> for Qwen/Qwen3-1.7B (README, GPU)."
	}
	if err := cfg.ApplyEnv(os.LookupEnv); err != nil {
		return cfg, why, err
	}
	if _, overridden := os.LookupEnv(training.EnvPrefix + "MODEL_NAME"); overridden {
		why += " (model_name overridden by the environment)"
	}
	return cfg, why, cfg.Validate()
}

// Dir is a path under the notebooks' directory ($GONB_DIR when running in
// GoNB, else the working directory).
func Dir(elems ...string) string {
	base := os.Getenv("GONB_DIR")
	if base == "" {
		base, _ = os.Getwd()
	}
	return filepath.Join(append([]string{base}, elems...)...)
}

// HTML displays HTML in the notebook (a no-op outside GoNB).
func HTML(h string) { gonbui.DisplayHTML(h) }

// PNG displays a PNG image in the notebook.
func PNG(b []byte) { gonbui.DisplayPNG(b) }

// Markdown displays Markdown in the notebook.
func Markdown(md string) { gonbui.DisplayMarkdown(md) }

// LiveLog is a run log whose records update a progress block in place.
func LiveLog(stage, dir string, loggingSteps int) (*training.RunLog, error) {
	log, err := training.NewRunLog(dir, loggingSteps, nil)
	if err != nil {
		return nil, err
	}
	id := gonbui.UniqueID()
	gonbui.DisplayHTML(fmt.Sprintf(`<div id="%s">%s: starting…</div>`, id, stage))
	log.OnLog = func(m training.Metrics) {
		gonbui.UpdateHTML(id, report.Progress(stage, m, log.Total()))
	}
	return log, nil
}

// Save writes v as JSON to path.
func Save(path string, v any) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	b, err := json.MarshalIndent(v, "", " ")
	if err != nil {
		return err
	}
	return os.WriteFile(path, b, 0o644)
}

// Load reads JSON written by Save into v; the error says which cell to run
// first when the file is missing.
func Load(path string, v any) error {
	b, err := os.ReadFile(path)
	if err != nil {
		return fmt.Errorf("%s not found: run the earlier cells first (%w)", path, err)
	}
	return json.Unmarshal(b, v)
}

// Must stops a cell with the error (GoNB shows it and marks the cell failed).
func Must(err error) {
	if err != nil {
		panic(err)
	}
}

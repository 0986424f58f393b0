// Package nb is what the project's notebooks import: the run configuration
// (real setup or tiny CPU preset), display helpers over GoNB's gonbui, and
// small persistence helpers, because every GoNB cell is a separate program
// and values pass between cells through files.
package nb

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/janpfeifer/gonb/gonbui"

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
		why = "No XLA backend in GOMLX_BACKEND, so the CPU runs the tiny preset (training.TinyPreset): a 0.5 M-parameter " +
			"Qwen3 with its own 1,024-token vocabulary, pre-trained by this project on several hundred generated questions " +
			"of one database (training/tinybase; none of the questions below), then SFT on that database's 42 training " +
			"questions and GRPO on 12 of them, in a few minutes. It is not a capable agent: it knows one database and the " +
			"kinds of questions asked about it. Set GOMLX_BACKEND=xla:<CUDA plugin> for Qwen/Qwen3-1.7B (README, GPU)."
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

// After checks that the files an earlier section of a notebook writes
// exist, so that a cell run before that section stops with an error naming
// the section to run first (instead of "no such file").
func After(section string, paths ...string) error {
	for _, p := range paths {
		if _, err := os.Stat(p); errors.Is(err, fs.ErrNotExist) {
			return fmt.Errorf("%s does not exist yet: run %s first", p, section)
		} else if err != nil {
			return err
		}
	}
	return nil
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

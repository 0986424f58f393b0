package training

import (
	"fmt"
	"os"
	"path/filepath"
)

// ResetOutputs removes what an earlier run left in a run's output
// directory — metrics, the SFT warm-up, checkpoints, evaluations and the
// tiny preset's tokenizer — so that a new run does not mix with it (GRPO
// refuses to start over checkpoints of another run, and the evaluation
// summary merges policies). Other files are kept.
func ResetOutputs(dir string) error {
	for _, name := range []string{MetricsFile, "sft", "tokenizer", EvalSummaryFile} {
		if err := os.RemoveAll(filepath.Join(dir, name)); err != nil {
			return err
		}
	}
	for _, pattern := range []string{"checkpoint-*", "eval_*.json"} {
		matches, err := filepath.Glob(filepath.Join(dir, pattern))
		if err != nil {
			return err
		}
		for _, m := range matches {
			if err := os.RemoveAll(m); err != nil {
				return err
			}
		}
	}
	return nil
}

// LatestCheckpoint returns the complete checkpoint-N directory of dir with
// the largest N (one whose save was cut short is passed over); the error
// names dir when there is none.
func LatestCheckpoint(dir string) (string, error) {
	best, _, err := latestCheckpoint(dir)
	if err != nil {
		return "", err
	}
	if best == "" {
		return "", fmt.Errorf("no complete checkpoint-N directory in %s: run the training first", dir)
	}
	return best, nil
}

// ConfigAfterSFT returns cfg set to start from the SFT warm-up's final
// checkpoint when sft_enabled, for a GRPO run in another process than the
// warm-up (a notebook cell); cfg unchanged otherwise. See StartAfterSFT.
func ConfigAfterSFT(cfg GRPOConfig) (GRPOConfig, error) {
	cfg, _, err := StartAfterSFT(cfg)
	return cfg, err
}

// StartAfterSFT is ConfigAfterSFT, also saying in words what GRPO starts
// from ("sft/checkpoint-174, written … by a completed SFT run"). The
// checkpoint is the one the SFT warm-up's latest attempt ended with
// (output_dir/sft/run.json): if that attempt did not complete — stopped,
// failed, or still running — it refuses, saying so, rather than start from
// an older attempt's checkpoint. An output directory without a run state
// (written before run states existed) starts from its latest checkpoint.
func StartAfterSFT(cfg GRPOConfig) (GRPOConfig, string, error) {
	if !cfg.SFTEnabled {
		return cfg, "GRPO starts from " + cfg.ModelName + " (sft_enabled is false)", nil
	}
	sftDir := filepath.Join(cfg.OutputDir, "sft")
	st, ok, err := ReadRunState(sftDir)
	if err != nil {
		return cfg, "", err
	}
	if !ok {
		dir, err := LatestCheckpoint(sftDir)
		if err != nil {
			return cfg, "", err
		}
		cfg.ModelName = dir
		return cfg, "GRPO starts from " + dir + " (the latest SFT checkpoint; no record of its run)", nil
	}
	if st.Status != RunCompleted || st.Checkpoint == "" {
		return cfg, "", fmt.Errorf("the latest SFT warm-up %s: run the SFT warm-up to its end before GRPO (GRPO would otherwise start from an older run's checkpoint)", st)
	}
	cfg.ModelName = filepath.Join(sftDir, st.Checkpoint)
	return cfg, fmt.Sprintf("GRPO starts from sft/%s, written at %s by a completed SFT run (%d steps)",
		st.Checkpoint, st.Ended.UTC().Format("15:04:05 MST"), st.Step), nil
}

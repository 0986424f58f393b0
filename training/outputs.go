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
// checkpoint (output_dir/sft/checkpoint-N) when sft_enabled, for a GRPO run
// in another process than the warm-up (a notebook cell); cfg unchanged
// otherwise.
func ConfigAfterSFT(cfg GRPOConfig) (GRPOConfig, error) {
	if !cfg.SFTEnabled {
		return cfg, nil
	}
	dir, err := LatestCheckpoint(filepath.Join(cfg.OutputDir, "sft"))
	if err != nil {
		return cfg, err
	}
	cfg.ModelName = dir
	return cfg, nil
}

package nb

import (
	"os"
	"path/filepath"
	"testing"
)

// TrainedConfig picks the model the training notebook trained last: GRPO's
// latest checkpoint, else SFT's, else the preset's model.
func TestTrainedConfigFindsTheLatestModel(t *testing.T) {
	t.Setenv("GONB_DIR", t.TempDir())
	cfg, err := TrainedConfig()
	if err != nil {
		t.Fatal(err)
	}
	preset := cfg.ModelName
	sft := filepath.Join(cfg.OutputDir, "sft", "checkpoint-12")
	if err := os.MkdirAll(sft, 0o755); err != nil {
		t.Fatal(err)
	}
	if cfg, _ = TrainedConfig(); cfg.ModelName != sft {
		t.Fatalf("with an SFT checkpoint: model %s, want %s (preset %s)", cfg.ModelName, sft, preset)
	}
	grpo := filepath.Join(cfg.OutputDir, "checkpoint-3")
	if err := os.MkdirAll(grpo, 0o755); err != nil {
		t.Fatal(err)
	}
	if cfg, _ = TrainedConfig(); cfg.ModelName != grpo {
		t.Fatalf("with GRPO and SFT checkpoints: model %s, want %s", cfg.ModelName, grpo)
	}
}

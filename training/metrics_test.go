package training

import (
	"os"
	"strings"
	"testing"
)

// TestProgressLine: GRPO steps show their rollout figures, supervised steps
// their epoch and no made-up reward.
func TestProgressLine(t *testing.T) {
	grpo := progressLine(Metrics{"step": 3, "reward": 0.412, "success_rate": 0.25, "loss": 0.1, "step_time": 1.5}, 6)
	sft := progressLine(Metrics{"step": 3, "epoch": 1.5, "loss": 0.7, "step_time": 0.2}, 6)
	if !strings.Contains(grpo, "step 3/6 [") || !strings.Contains(grpo, "reward 0.412 success 25%") || !strings.Contains(grpo, "loss 0.1000 1.5s/step") {
		t.Errorf("GRPO line %q", grpo)
	}
	if strings.Contains(sft, "reward") || strings.Contains(sft, "success") || !strings.Contains(sft, "epoch 1.50 loss 0.7000") {
		t.Errorf("SFT line %q", sft)
	}
}

// TestRewindRefusesADamagedLog: only the last line may be cut short (the
// write a kill interrupted); a bad line before it is an error naming the
// file and line, and the log is left as it was. A run with no log yet has
// nothing to rewind.
func TestRewindRefusesADamagedLog(t *testing.T) {
	dir := t.TempDir()
	log, err := NewRunLog(dir, 1, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := log.Rewind(3); err != nil {
		t.Fatalf("no log yet: %v", err)
	}
	damaged := "{\"step\": 1}\n{\"st\n{\"step\": 2}\n"
	os.WriteFile(log.Path(), []byte(damaged), 0o644)
	if err := log.Rewind(1); err == nil || !strings.Contains(err.Error(), log.Path()+" line 2") {
		t.Fatalf("a bad line inside the log: %v", err)
	}
	if data, _ := os.ReadFile(log.Path()); string(data) != damaged {
		t.Fatalf("the refused log was changed: %q", data)
	}
}

package training

import (
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

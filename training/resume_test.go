package training

import (
	"context"
	"path/filepath"
	"slices"
	"testing"

	"github.com/gomlx/gomlx/core/tensors"
)

// TestGRPOResumeReproduces: a GRPO run resumed from a checkpoint (a new
// process's trainer, model and roller) ends with the uninterrupted run's
// weights and optimizer moments bit for bit, and logs the same rewards:
// the checkpoint carries the roller's sampling counter, so the resumed
// steps sample the same episodes.
func TestGRPOResumeReproduces(t *testing.T) {
	if testing.Short() {
		t.Skip("trains twice")
	}
	ctx := context.Background()
	whole := t.TempDir()
	cfg, model, roller, ids, _ := tinySetup(t, whole)
	cfg.MaxSteps, cfg.SaveSteps = 4, 2
	tr := loggedTrainer(t, cfg, model, roller, ids, whole)
	tr.Rewards = append(tr.Rewards, lengthReward) // advantages that are never all 0
	if err := tr.Train(ctx); err != nil {
		t.Fatal(err)
	}
	resumed := t.TempDir()
	cfg2, model2, roller2, _, _ := tinySetup(t, resumed)
	cfg2.MaxSteps, cfg2.SaveSteps = 4, 2
	tr2 := loggedTrainer(t, cfg2, model2, roller2, ids, resumed)
	tr2.Rewards = append(tr2.Rewards, lengthReward)
	if err := tr2.LoadCheckpoint(filepath.Join(whole, "checkpoint-2")); err != nil {
		t.Fatal(err)
	}
	if err := tr2.Train(ctx); err != nil {
		t.Fatal(err)
	}
	flat := func(ts []*tensors.Tensor) []float32 {
		var out []float32
		for _, x := range ts {
			out = append(out, tensors.MustCopyFlatData[float32](x)...)
		}
		return out
	}
	if !slices.Equal(flat(model.Weights()), flat(model2.Weights())) || !slices.Equal(flat(tr.Learner.m), flat(tr2.Learner.m)) || !slices.Equal(flat(tr.Learner.v), flat(tr2.Learner.v)) {
		t.Fatal("the resumed run ends with other weights or moments than the uninterrupted run")
	}
	a, b := Series(tr.Log.History, "reward"), Series(tr2.Log.History, "reward")
	if !slices.Equal(a[2:], b) {
		t.Fatalf("rewards of steps 3-4: uninterrupted %v, resumed %v", a[2:], b)
	}
}

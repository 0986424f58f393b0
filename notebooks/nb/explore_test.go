package nb

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gosqlenv/gosqlenv/sqlenv"
)

// The explore notebook's session forgives what people do in notebooks:
// a bad question id changes nothing, re-running a step's cell redoes that
// step (the same observation and reward, not one more step), and a step
// run before its predecessors says which to run first.
func TestExploreSessionForgivesReruns(t *testing.T) {
	t.Setenv("GONB_DIR", t.TempDir())
	if _, err := Start("no_such_question"); err == nil || !strings.Contains(err.Error(), "no_such_question") {
		t.Fatalf("Start with an unknown id: %v, want an error naming it", err)
	}
	if _, err := os.Stat(sessionPath()); !os.IsNotExist(err) {
		t.Fatalf("a refused Start saved a session (%v)", err)
	}
	if _, err := Step(1, sqlenv.Describe, "customer"); err == nil || !strings.Contains(err.Error(), "nb.Start") {
		t.Fatalf("Step before Start: %v, want an error naming nb.Start", err)
	}
	if _, err := Start("bank_eval_000"); err != nil {
		t.Fatal(err)
	}
	if _, err := Start("no_such_question"); err == nil {
		t.Fatal("Start with an unknown id after a good one: no error")
	}
	if _, err := Step(2, sqlenv.Sample, "customer"); err == nil || !strings.Contains(err.Error(), "run the cell of step 1") {
		t.Fatalf("step 2 before step 1: %v, want an error naming step 1", err)
	}
	first, err := Step(1, sqlenv.Describe, "customer")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := Step(2, sqlenv.Sample, "customer"); err != nil {
		t.Fatal(err)
	}
	again, err := Step(1, sqlenv.Describe, "customer")
	if err != nil {
		t.Fatal(err)
	}
	if again.Reward != first.Reward || again.Result != first.Result || again.StepCount != first.StepCount || again.StepCount != 1 {
		t.Fatalf("re-running step 1 gave step %d reward %g, first run step %d reward %g", again.StepCount, again.Reward, first.StepCount, first.Reward)
	}
	// Five steps fill the budget; re-running the last one still answers.
	for i, a := range []sqlenv.Action{{ActionType: sqlenv.Sample, Argument: "customer"}, {ActionType: sqlenv.Query, Argument: "SELECT 1"},
		{ActionType: sqlenv.Query, Argument: "SELECT 2"}, {ActionType: sqlenv.Answer, Argument: "103"}} {
		if _, err := Step(i+2, a.ActionType, a.Argument); err != nil {
			t.Fatal(err)
		}
	}
	last, err := Step(5, sqlenv.Answer, "103")
	if err != nil {
		t.Fatal(err)
	}
	if !last.Done || last.Error != "" {
		t.Fatalf("re-running the answer step: done %v, error %q", last.Done, last.Error)
	}
	var s Session
	if err := Load(sessionPath(), &s); err != nil || len(s.Actions) != 5 {
		t.Fatalf("session after re-runs: %d actions (%v), want 5", len(s.Actions), err)
	}
}

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

// After names the section to run when a file it writes is missing.
func TestAfterNamesTheSectionToRun(t *testing.T) {
	dir := t.TempDir()
	have, missing := filepath.Join(dir, "metrics.jsonl"), filepath.Join(dir, "eval_grpo.json")
	if err := os.WriteFile(have, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := After("section 6 (GRPO)", have); err != nil {
		t.Fatalf("file present: %v", err)
	}
	err := After("section 6 (GRPO)", have, missing)
	if err == nil || !strings.Contains(err.Error(), "run section 6 (GRPO) first") || !strings.Contains(err.Error(), missing) {
		t.Fatalf("file missing: %v, want an error naming %s and the section", err, missing)
	}
}

package explore

import (
	"os"
	"strings"
	"testing"

	"github.com/gosqlenv/gosqlenv/notebooks/cell"
	"github.com/gosqlenv/gosqlenv/sqlenv"
	"github.com/gosqlenv/gosqlenv/training"
)

// The explore notebook's session forgives what people do in notebooks:
// a bad question id changes nothing, re-running a step's cell redoes that
// step (the same observation and reward, not one more step), and a step
// run before its predecessors says which to run first.
func TestExploreSessionForgivesReruns(t *testing.T) {
	t.Setenv("GONB_DIR", t.TempDir())
	if _, err := Start("no_such_question"); err == nil || !strings.Contains(err.Error(), "no_such_question") ||
		!strings.Contains(err.Error(), `explore.Questions("") lists them`) || !strings.Contains(err.Error(), "university_train_000") {
		t.Fatalf("Start with an unknown id: %v, want an error naming it, where ids are listed, and examples", err)
	}
	if n, err := Questions("bank"); err != nil || n < 10 {
		t.Fatalf("Questions(bank): %d, %v", n, err)
	}
	if _, err := Questions("no_such_db"); err == nil || !strings.Contains(err.Error(), "university") {
		t.Fatalf("Questions of an unknown database: %v, want the databases named", err)
	}
	if _, err := os.Stat(sessionPath()); !os.IsNotExist(err) {
		t.Fatalf("a refused Start saved a session (%v)", err)
	}
	if _, err := Step(1, sqlenv.Describe, "customer"); err == nil || !strings.Contains(err.Error(), "explore.Start") {
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
	if err := cell.Load(sessionPath(), &s); err != nil || len(s.Actions) != 5 {
		t.Fatalf("session after re-runs: %d actions (%v), want 5", len(s.Actions), err)
	}
}

// A hand-played episode has the budget the notebook's model gets.
func TestDefaultStepBudgetIsThePresets(t *testing.T) {
	cfg := training.DefaultGRPOConfig()
	training.TinyPreset(&cfg)
	if DefaultStepBudget != cfg.StepBudget {
		t.Fatalf("DefaultStepBudget %d, the tiny preset's step_budget %d", DefaultStepBudget, cfg.StepBudget)
	}
}

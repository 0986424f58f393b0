package training

import (
	"context"
	"testing"
)

// TestTinyPresetFitsEveryOracleEpisode: the preset's token budgets leave
// room for what the oracle writes on every split the preset trains and
// evaluates on, counted with the shipped base model's own vocabulary (end
// of turn included): each action within max_new_tokens and each episode's
// actions together within max_completion_length. A budget below them cuts a
// correct QUERY short at generation time or ends the episode before its
// ANSWER, so no policy could solve that question and the split's success
// would be capped below 100 % by the budget rather than by the model. The
// tiny vocabulary was learned from the training database's texts, so the
// other databases' names split into many more tokens: the unseen split is
// where a budget that fits the training questions falls short.
func TestTinyPresetFitsEveryOracleEpisode(t *testing.T) {
	ctx := context.Background()
	p := tinyPresetPipeline(t, nil)
	cfg := p.Config
	for _, split := range Splits {
		qs, err := p.EvalQuestions(split)
		if err != nil {
			t.Fatal(err)
		}
		if split == SplitTrain {
			qs = p.SFTQuestions() // SFT imitates all of them
		}
		samples, err := p.oracleSamples(ctx, qs, 0)
		if err != nil {
			t.Fatal(err)
		}
		if len(samples) < len(qs) {
			t.Fatalf("%s: %d oracle turns for %d questions", split, len(samples), len(qs))
		}
		n := measureTokenNeeds(samples, cfg.MaxNewTokens, cfg.MaxCompletionLength)
		t.Logf("%s: %d questions, %d oracle turns; longest action %d tokens (max_new_tokens %d), longest episode %d (max_completion_length %d)",
			split, len(qs), len(samples), n.longestAction, cfg.MaxNewTokens, n.longestEpisode, cfg.MaxCompletionLength)
		if w := CheckTokenBudgets(samples, cfg.MaxNewTokens, cfg.MaxCompletionLength); w != "" {
			t.Errorf("%s: %s", split, w)
		}
	}
}

// TestEvaluationWarnsOfBudgetsTooSmall: an evaluation whose budgets are too
// small for its questions says so, naming the split and the setting to
// raise (here the preset's earlier max_new_tokens 96 and
// max_completion_length 240 on the unseen databases), and stays silent on a
// split that fits.
func TestEvaluationWarnsOfBudgetsTooSmall(t *testing.T) {
	ctx := context.Background()
	p := tinyPresetPipeline(t, func(c *GRPOConfig) { c.MaxNewTokens, c.MaxCompletionLength = 96, 240 })
	unseen, err := p.EvalQuestions(SplitUnseen)
	if err != nil {
		t.Fatal(err)
	}
	w := p.splitBudgetWarning(ctx, SplitUnseen, unseen)
	t.Log(w)
	if !containsAll(w, "evaluation split unseen_databases", "oracle actions are longer than max_new_tokens = 96", "max_completion_length = 240", "at least 203") {
		t.Errorf("warning %q", w)
	}
	heldout, err := p.EvalQuestions(SplitHeldout)
	if err != nil {
		t.Fatal(err)
	}
	if w := p.splitBudgetWarning(ctx, SplitHeldout, heldout); w != "" {
		t.Errorf("held-out questions fit max_new_tokens 96, got warning %q", w)
	}
}

// tinyPresetPipeline returns a pipeline of the notebook's CPU preset
// (TinyPreset, the shipped base model) writing to a temporary directory,
// after edit (when not nil) has changed its configuration; it is closed at
// the end of the test. Tests that use it skip under -short.
func tinyPresetPipeline(t *testing.T, edit func(*GRPOConfig)) *Pipeline {
	t.Helper()
	if testing.Short() {
		t.Skip("loads the shipped base model (-short)")
	}
	cfg := DefaultGRPOConfig()
	TinyPreset(&cfg)
	cfg.OutputDir = t.TempDir()
	if edit != nil {
		edit(&cfg)
	}
	p, err := NewPipeline(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { p.Close() })
	return p
}

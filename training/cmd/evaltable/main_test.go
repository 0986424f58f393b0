package main

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/gosqlenv/gosqlenv/training"
)

// TestTable: the summaries written by two runs become one table, each run
// named by its directory; a directory without a summary, or none at all,
// is an error that names it.
func TestTable(t *testing.T) {
	root := t.TempDir()
	for i, grpo := range []float64{0.6, 0.7} {
		dir := filepath.Join(root, []string{"s1", "s2"}[i])
		for policy, p := range map[string]float64{training.PolicySFT: 0.5, training.PolicyGRPO: grpo} {
			if _, err := training.RecordEvaluation(dir, policy, map[string]training.SplitResult{
				training.SplitHeldout: {GreedySuccess: p, SampledSuccess: p, SampledSuccessSE: 0.03, Questions: 70}}); err != nil {
				t.Fatal(err)
			}
		}
	}
	out, err := table([]string{filepath.Join(root, "s1"), filepath.Join(root, "s2") + "/"})
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"| s1 | heldout_questions | — | — | 50.0 / 50.0 ± 3.0 % | 60.0 / 60.0 ± 3.0 % | +10.0 = +2.4 s.e. |",
		"| s2 | heldout_questions | — | — | 50.0 / 50.0 ± 3.0 % | 70.0 / 70.0 ± 3.0 % | +20.0 = +4.7 s.e. |",
		"heldout_questions +15.0 ± 5.0 (2 runs)",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("missing %q in:\n%s", want, out)
		}
	}
	missing := filepath.Join(root, "nothing")
	if _, err := table([]string{missing}); err == nil || !strings.Contains(err.Error(), missing) {
		t.Errorf("a directory without a summary: %v", err)
	}
	if _, err := table(nil); err == nil || !strings.Contains(err.Error(), "usage") {
		t.Errorf("no directory: %v", err)
	}
}

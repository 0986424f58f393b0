package report

import (
	"fmt"
	"strings"
	"testing"

	"github.com/gosqlenv/gosqlenv/training"
)

// TestRunsTable: a row per run and split, each policy's greedy / sampled ±
// s.e., GRPO − SFT paired over the questions when the summaries have
// per-question rates (else unpaired), a dash for a missing policy, and the
// mean gain over runs with its standard error between runs.
func TestRunsTable(t *testing.T) {
	paired := func(rates ...float64) map[string]float64 {
		m := map[string]float64{}
		for i, r := range rates {
			m[fmt.Sprintf("q%d", i)] = r
		}
		return m
	}
	run1 := summaryOf(map[string]map[string][3]float64{
		training.SplitTrain:   {"random": {0, 0, 0}, "untrained": {0.5, 0.4, 0.05}, "sft": {0.8, 0.7, 0.04}, "grpo": {0.9, 0.8, 0.04}},
		training.SplitHeldout: {"random": {0, 0.01, 0.01}, "sft": {0.6, 0.5, 0.05}, "grpo": {0.6, 0.5, 0.05}},
	})
	// Per-question rates: GRPO − SFT = +0.25, −0.25, +0.25, +0.25 → mean
	// +0.125, sd 0.25, s.e. 0.125 → +12.5 = +1.0 s.e.
	sft, grpo := run1[training.SplitTrain]["sft"], run1[training.SplitTrain]["grpo"]
	sft.SampledByQuestion, grpo.SampledByQuestion = paired(0.5, 0.75, 0.5, 0.25), paired(0.75, 0.5, 0.75, 0.5)
	run1[training.SplitTrain]["sft"], run1[training.SplitTrain]["grpo"] = sft, grpo
	run2 := summaryOf(map[string]map[string][3]float64{
		training.SplitTrain: {"random": {0, 0, 0}, "untrained": {0.5, 0.4, 0.05}, "sft": {0.8, 0.7, 0.03}, "grpo": {0.8, 0.74, 0.04}},
	})
	got := RunsTable([]Run{{"seed 1", run1}, {"seed 2", run2}})
	want := `| run | split | random | untrained (base) | SFT | SFT + GRPO | GRPO − SFT (sampled) |
|---|---|---|---|---|---|---|
| seed 1 | train | 0.0 / 0.0 ± 0.0 % | 50.0 / 40.0 ± 5.0 % | 80.0 / 70.0 ± 4.0 % | 90.0 / 80.0 ± 4.0 % | +12.5 = +1.0 s.e. |
| seed 1 | heldout_questions | 0.0 / 1.0 ± 1.0 % | — | 60.0 / 50.0 ± 5.0 % | 60.0 / 50.0 ± 5.0 % | +0.0 = +0.0 s.e. |
| seed 2 | train | 0.0 / 0.0 ± 0.0 % | 50.0 / 40.0 ± 5.0 % | 80.0 / 70.0 ± 3.0 % | 80.0 / 74.0 ± 4.0 % | +4.0 = +0.8 s.e. |

GRPO − SFT in sampled success, mean over the runs that have both ± its standard error between runs (points): train +8.3 ± 4.2 (2 runs).
`
	if got != want {
		t.Fatalf("got:\n%s\nwant:\n%s", got, want)
	}
	if strings.Contains(RunsTable([]Run{{"only", run2}}), "mean over") {
		t.Fatal("a mean over one run")
	}
}

// ExampleRunsTable renders two seeds' summaries (in a real use, read with
// training.ReadEvalSummary from each run's output directory).
func ExampleRunsTable() {
	seed := func(grpo float64) training.EvalSummary {
		s := training.EvalSummary{}
		s.Set("sft", map[string]training.SplitResult{training.SplitHeldout: {GreedySuccess: 0.5, SampledSuccess: 0.5, SampledSuccessSE: 0.03, Questions: 70}})
		s.Set("grpo", map[string]training.SplitResult{training.SplitHeldout: {GreedySuccess: grpo, SampledSuccess: grpo, SampledSuccessSE: 0.04, Questions: 70}})
		return s
	}
	fmt.Print(RunsTable([]Run{{"seed 1", seed(0.6)}, {"seed 2", seed(0.5)}}))
	// Output:
	// | run | split | random | untrained (base) | SFT | SFT + GRPO | GRPO − SFT (sampled) |
	// |---|---|---|---|---|---|---|
	// | seed 1 | heldout_questions | — | — | 50.0 / 50.0 ± 3.0 % | 60.0 / 60.0 ± 4.0 % | +10.0 = +2.0 s.e. |
	// | seed 2 | heldout_questions | — | — | 50.0 / 50.0 ± 3.0 % | 50.0 / 50.0 ± 4.0 % | +0.0 = +0.0 s.e. |
	//
	// GRPO − SFT in sampled success, mean over the runs that have both ± its standard error between runs (points): heldout_questions +5.0 ± 5.0 (2 runs).
}

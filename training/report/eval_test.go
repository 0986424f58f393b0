package report

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/gosqlenv/gosqlenv/sqlenv"
	"github.com/gosqlenv/gosqlenv/sqlenv/render"
	"github.com/gosqlenv/gosqlenv/training"
)

func summaryOf(rows map[string]map[string][3]float64) training.EvalSummary {
	s := training.EvalSummary{}
	for split, byPolicy := range rows {
		for policy, v := range byPolicy {
			s.Set(policy, map[string]training.SplitResult{split: {GreedySuccess: v[0], SampledSuccess: v[1], SampledSuccessSE: v[2], Questions: 12}})
		}
	}
	return s
}

// TestFindings: the statement follows the numbers — what is solved, what
// is no better than random, and whether GRPO's gain is beyond two standard
// errors.
func TestFindings(t *testing.T) {
	memorises := summaryOf(map[string]map[string][3]float64{
		training.SplitTrain:   {"random": {0, 0.01, 0.01}, "sft": {0.75, 0.31, 0.047}, "grpo": {0.83, 0.67, 0.048}},
		training.SplitHeldout: {"random": {0, 0, 0}, "sft": {0, 0, 0}, "grpo": {0, 0, 0}},
		training.SplitUnseen:  {"random": {0.04, 0.02, 0.01}, "sft": {0, 0, 0}, "grpo": {0, 0, 0}},
	})
	got := Findings(memorises)
	for _, want := range []string{"SFT + GRPO", "On the training questions it succeeds greedily on 83 %", "solved well",
		"held-out questions (training databases) it succeeds greedily on 0 %", "no better than the random policy",
		"by 36.0 points (5.4 standard errors)", "does not generalise"} {
		if !strings.Contains(got, want) {
			t.Errorf("findings lack %q:\n%s", want, got)
		}
	}
	generalises := summaryOf(map[string]map[string][3]float64{
		training.SplitTrain:   {"random": {0, 0.01, 0.01}, "sft": {0.75, 0.60, 0.02}, "grpo": {0.83, 0.70, 0.02}},
		training.SplitHeldout: {"random": {0, 0, 0}, "sft": {0.45, 0.30, 0.02}, "grpo": {0.50, 0.40, 0.02}},
		training.SplitUnseen:  {"random": {0.02, 0.01, 0.005}, "sft": {0.05, 0.04, 0.01}, "grpo": {0.06, 0.05, 0.01}},
	})
	got = Findings(generalises)
	for _, want := range []string{"on the held-out questions (training databases) by 10.0 points (3.5 standard errors)",
		"on the training questions by 10.0 points", "better than random, far from solved", "beyond chance to databases it never saw"} {
		if !strings.Contains(got, want) {
			t.Errorf("findings lack %q:\n%s", want, got)
		}
	}
	flat := summaryOf(map[string]map[string][3]float64{
		training.SplitTrain: {"random": {0, 0, 0}, "sft": {0.5, 0.40, 0.05}, "grpo": {0.5, 0.42, 0.05}},
	})
	if got := Findings(flat); !strings.Contains(got, "not a clear gain") {
		t.Errorf("a gain of 0.3 s.e. is reported as:\n%s", got)
	}
	// With per-question rates the difference is paired: GRPO wins 0.25 on
	// 8 of 40 questions and loses on none: +5 points, paired s.e. 1.6; as
	// two independent samples of 160 episodes (s.e. 5.6) it would not be.
	paired := summaryOf(map[string]map[string][3]float64{
		training.SplitTrain:   {"random": {0, 0, 0}, "sft": {0.9, 0.9, 0.02}, "grpo": {0.9, 0.9, 0.02}},
		training.SplitHeldout: {"random": {0, 0, 0}, "sft": {0.5, 0.5, 0.0395}, "grpo": {0.5, 0.55, 0.0393}},
	})
	sft, grpo := paired[training.SplitHeldout]["sft"], paired[training.SplitHeldout]["grpo"]
	sft.SampledByQuestion, grpo.SampledByQuestion = map[string]float64{}, map[string]float64{}
	for i := range 40 {
		q := fmt.Sprint("q", i)
		sft.SampledByQuestion[q], grpo.SampledByQuestion[q] = float64(i%2), float64(i%2)
		if i%2 == 0 && i < 16 {
			grpo.SampledByQuestion[q] = 0.25
		}
	}
	paired[training.SplitHeldout]["sft"], paired[training.SplitHeldout]["grpo"] = sft, grpo
	if got := Findings(paired); !strings.Contains(got, "held-out questions (training databases) by 5.0 points (3.1 standard errors)") {
		t.Errorf("a paired gain of 5 points on 40 questions is reported as:\n%s", got)
	}
	// A pre-trained base that already answers held-out questions: the
	// findings credit it, and state what the run itself changed.
	pretrained := summaryOf(map[string]map[string][3]float64{
		training.SplitTrain:   {"random": {0, 0.01, 0.01}, "untrained": {0.65, 0.60, 0.03}, "sft": {0.75, 0.70, 0.03}, "grpo": {0.80, 0.72, 0.03}},
		training.SplitHeldout: {"random": {0, 0, 0}, "untrained": {0.62, 0.55, 0.03}, "sft": {0.61, 0.57, 0.03}, "grpo": {0.63, 0.58, 0.03}},
		training.SplitUnseen:  {"random": {0.02, 0.01, 0.005}, "untrained": {0, 0, 0}, "sft": {0, 0, 0}, "grpo": {0, 0, 0}},
	})
	got = Findings(pretrained)
	for _, want := range []string{"already succeeded on the training questions 65 % greedily (60 % sampled) and on the held-out questions (training databases) 62 % greedily (55 % sampled)",
		"changed sampled success by +12.0 points (2.8 standard errors) on the training questions and by +3.0 points (0.7 standard errors) on the held-out",
		"generalises to new questions about its training databases (as the model the run started from already did), not to other databases"} {
		if !strings.Contains(got, want) {
			t.Errorf("findings lack %q:\n%s", want, got)
		}
	}
	// The same model, no better than random once the tables are renamed or
	// the questions reworded: the summary does not claim those.
	pretrained.Set("random", map[string]training.SplitResult{training.SplitRenamed: {SampledSuccess: 0.02, SampledSuccessSE: 0.01, Questions: 12},
		training.SplitParaphrased: {SampledSuccess: 0.02, SampledSuccessSE: 0.01, Questions: 12}})
	pretrained.Set("grpo", map[string]training.SplitResult{training.SplitRenamed: {Questions: 12},
		training.SplitParaphrased: {GreedySuccess: 0.03, SampledSuccess: 0.01, SampledSuccessSE: 0.01, Questions: 12}})
	want := "generalises to new questions about its training databases (as the model the run started from already did), as long as they keep the names and wordings it was trained on (not with their tables and columns renamed or the questions reworded), and not to other databases."
	if got := Findings(pretrained); !strings.Contains(got, want) {
		t.Errorf("findings lack %q:\n%s", want, got)
	}
	// Reworded questions read beyond chance: only the renaming is excepted.
	pretrained.Set("grpo", map[string]training.SplitResult{training.SplitParaphrased: {GreedySuccess: 0.5, SampledSuccess: 0.45, SampledSuccessSE: 0.03, Questions: 12}})
	if got := Findings(pretrained); !strings.Contains(got, "(not with their tables and columns renamed), and not to") {
		t.Errorf("a reworded split read beyond chance is still excepted:\n%s", got)
	}
	if strings.Contains(sinceStart(pretrained, "grpo"), "unseen") || strings.Contains(Findings(generalises), "started from") {
		t.Errorf("a split where the starting model never succeeds, or a summary without it, is compared with it:\n%s", got)
	}
	if got := Findings(training.EvalSummary{}); !strings.Contains(got, "No trained model") {
		t.Errorf("empty summary: %s", got)
	}
}

func TestEvalSummaryTableAndSolved(t *testing.T) {
	s := summaryOf(map[string]map[string][3]float64{training.SplitTrain: {"random": {0, 0.01, 0.01}, "grpo": {0.5, 0.25, 0.05}}})
	table := EvalSummaryTable(s)
	if !strings.Contains(table, "25.0 ± 5.0 %") || strings.Index(table, "random") > strings.Index(table, "grpo") {
		t.Fatalf("table: %s", table)
	}
	trained := sqlenv.EvalReport{Episodes: []sqlenv.EpisodeReport{{QuestionID: "q1", Question: "first?", Correct: false},
		{QuestionID: "q2", Question: "second <b>?", Correct: true}}}
	random := sqlenv.EvalReport{Episodes: []sqlenv.EpisodeReport{{QuestionID: "q1", Question: "first?"}, {QuestionID: "q2", Question: "second <b>?"}}}
	base := sqlenv.EvalReport{Episodes: []sqlenv.EpisodeReport{{QuestionID: "q2", Question: "second <b>?", Turns: []sqlenv.Turn{{Action: sqlenv.Action{ActionType: sqlenv.Answer, Argument: "base guess"}}}}}}
	html := SolvedSideBySide(3, render.Column{Name: "trained", Report: trained}, render.Column{Name: "random policy", Report: random}, render.Column{Name: "base model", Report: base})
	if strings.Contains(html, "first?") || strings.Count(html, "second &lt;b&gt;?") != 3 || !strings.Contains(html, "base guess") ||
		strings.Index(html, "random policy") > strings.Index(html, "base model") || strings.Index(html, "base model") > strings.Index(html, ">trained<") {
		t.Fatalf("solved side by side shows the wrong questions or columns: %s", html)
	}
	// A question one column lacks is left out.
	if html := SolvedSideBySide(3, render.Column{Name: "trained", Report: trained}, render.Column{Name: "base model", Report: sqlenv.EvalReport{}}); strings.Contains(html, "second") {
		t.Fatalf("question without a base episode shown: %s", html)
	}
	if got := SolvedSideBySide(3, render.Column{Name: "trained", Report: sqlenv.EvalReport{}}, render.Column{Name: "random policy", Report: random}); !strings.Contains(got, "solved none") {
		t.Fatalf("nothing solved: %s", got)
	}
}

// Solved questions that show learning come first: the trained SQL carries
// the question's constant, then the other policies failed more often.
func TestSolvedSideBySideShowsLearningFirst(t *testing.T) {
	query := func(sql string) []sqlenv.Turn {
		return []sqlenv.Turn{{Action: sqlenv.Action{ActionType: sqlenv.Query, Argument: sql}}}
	}
	trained := sqlenv.EvalReport{Episodes: []sqlenv.EpisodeReport{
		{QuestionID: "q1", Question: "How many courses?", Correct: true, Turns: query("SELECT count(*) FROM courses")},
		{QuestionID: "q2", Question: "How many students?", Correct: true, Turns: query("SELECT count(*) FROM students")},
		{QuestionID: "q3", Question: "How many students come from Brussels?", Correct: true,
			Turns: query("SELECT count(*) FROM students WHERE home_city = 'Brussels'")},
	}}
	base := sqlenv.EvalReport{Episodes: []sqlenv.EpisodeReport{
		{QuestionID: "q1", Question: "How many courses?", Correct: true},
		{QuestionID: "q2", Question: "How many students?"},
		{QuestionID: "q3", Question: "How many students come from Brussels?", Correct: true},
	}}
	order := func(n int) []int {
		html := SolvedSideBySide(n, render.Column{Name: "trained", Report: trained}, render.Column{Name: "base model", Report: base})
		var at []int
		for _, q := range []string{"courses?", "students?", "Brussels?"} {
			at = append(at, strings.Index(html, q))
		}
		return at
	}
	if at := order(1); at[2] < 0 || at[0] >= 0 || at[1] >= 0 {
		t.Fatalf("one question shown: want the one whose SQL copies Brussels (positions %v)", at)
	}
	if at := order(3); !(at[2] < at[1] && at[1] < at[0]) {
		t.Fatalf("order by position %v: want the copying question, then the one the base failed, then the one it solved", at)
	}
}

// Progress blocks say what runs, how far it is and how long is left.
func TestProgressBlocks(t *testing.T) {
	got := Progress("SFT warm-up", training.Metrics{"step": 30, "loss": 0.5, "step_time": 0.5}, 150)
	if !strings.Contains(got, "step 30/150") || !strings.Contains(got, "about 1m0s left") || !strings.Contains(got, "width:20%") || !strings.Contains(got, "loss 0.5") {
		t.Errorf("training progress: %s", got)
	}
	e := training.EvalProgress{Policy: "sft", Split: training.SplitHeldout, SplitNumber: 2, Splits: 3, Done: 120, Episodes: 350, Elapsed: 35 * time.Second}
	if got := EvalProgress(e); !strings.Contains(got, "Evaluating sft") || !strings.Contains(got, "split 2 of 3") ||
		!strings.Contains(got, "120/350 episodes") || !strings.Contains(got, "35s") || !strings.Contains(got, "held-out") {
		t.Errorf("evaluation progress: %s", got)
	}
	e.SplitNumber, e.Done = 3, 350
	if got := EvalProgress(e); !strings.Contains(got, "done") {
		t.Errorf("finished evaluation: %s", got)
	}
}

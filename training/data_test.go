package training

import (
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/gosqlenv/gosqlenv/sqlenv"
	"github.com/gosqlenv/gosqlenv/sqlenv/dataset"
)

func questionsOf(perDB map[string]int) []dataset.QuestionRecord {
	var qs []dataset.QuestionRecord
	for _, db := range slices.Sorted(func(yield func(string) bool) {
		for k := range perDB {
			if !yield(k) {
				return
			}
		}
	}) {
		for i := range perDB[db] {
			qs = append(qs, dataset.QuestionRecord{QuestionID: fmt.Sprintf("%s_%03d", db, i), DatabaseName: db})
		}
	}
	return qs
}

// TestHoldOut: each database gives round(fraction × n) questions, the
// choice depends on the ids only (not on the order of the input), and the
// two parts are disjoint and complete.
func TestHoldOut(t *testing.T) {
	qs := questionsOf(map[string]int{"a": 26, "b": 10, "c": 1})
	train, held := HoldOut(qs, 0.2)
	count := map[string]int{}
	for _, q := range held {
		count[q.DatabaseName]++
	}
	if count["a"] != 5 || count["b"] != 2 || count["c"] != 0 || len(train)+len(held) != len(qs) {
		t.Fatalf("held out per database %v, %d train + %d held of %d", count, len(train), len(held), len(qs))
	}
	seen := map[string]bool{}
	for _, q := range append(slices.Clone(train), held...) {
		if seen[q.QuestionID] {
			t.Fatalf("%s in both parts", q.QuestionID)
		}
		seen[q.QuestionID] = true
	}
	reversed := slices.Clone(qs)
	slices.Reverse(reversed)
	_, held2 := HoldOut(reversed, 0.2)
	ids := func(qs []dataset.QuestionRecord) []string {
		out := QuestionIDs(qs)
		slices.Sort(out)
		return out
	}
	if !slices.Equal(ids(held), ids(held2)) {
		t.Fatalf("held-out set depends on the file order: %v vs %v", ids(held), ids(held2))
	}
	if train, held := HoldOut(qs, 0); len(held) != 0 || len(train) != len(qs) {
		t.Fatalf("fraction 0 held out %d", len(held))
	}
}

// TestSpreadOverDatabases: a cap takes questions in turn from each database
// instead of the first database of the file.
func TestSpreadOverDatabases(t *testing.T) {
	qs := questionsOf(map[string]int{"a": 5, "b": 2, "c": 3})
	got := QuestionIDs(SpreadOverDatabases(qs, 7))
	want := []string{"a_000", "b_000", "c_000", "a_001", "b_001", "c_001", "a_002"}
	if !slices.Equal(got, want) {
		t.Fatalf("spread %v, want %v", got, want)
	}
	if n := len(SpreadOverDatabases(qs, 0)); n != 10 {
		t.Fatalf("no cap gave %d questions", n)
	}
}

// TestEvalSample: a cap keeps each database's share, as SpreadOverDatabases
// does, but samples each database's questions from across its ids instead
// of keeping its first ones; the sample does not depend on the order of a
// database's questions, and keeps it.
func TestEvalSample(t *testing.T) {
	qs := questionsOf(map[string]int{"a": 100, "b": 40, "c": 3})
	got := EvalSample(qs, 30)
	count := map[string]int{}
	for _, q := range got {
		count[q.DatabaseName]++
	}
	if len(got) != 30 || count["a"] != 14 || count["b"] != 13 || count["c"] != 3 {
		t.Fatalf("sample of 30: %d questions, per database %v; want a 14, b 13, c 3", len(got), count)
	}
	checkSpread(t, "a's sample", qs[:100], got[:14], 4)
	checkSpread(t, "b's sample", qs[100:140], got[14:27], 2)
	if !slices.IsSortedFunc(got, func(x, y dataset.QuestionRecord) int { return strings.Compare(x.QuestionID, y.QuestionID) }) {
		t.Fatalf("the sample is not in the input's order: %v", QuestionIDs(got))
	}
	reversed := slices.Clone(qs) // each database's questions in reverse
	slices.Reverse(reversed[:100])
	slices.Reverse(reversed[100:140])
	again := QuestionIDs(EvalSample(reversed, 30))
	slices.Sort(again)
	if !slices.Equal(again, QuestionIDs(got)) {
		t.Fatalf("the sample depends on the input's order: %v vs %v", again, QuestionIDs(got))
	}
	if n := len(EvalSample(qs, 0)); n != len(qs) {
		t.Fatalf("no cap kept %d of %d", n, len(qs))
	}
}

func TestCheckTokenBudgets(t *testing.T) {
	// Two episodes: turns of 3 and 6 action tokens (9 in all), and one of 1.
	samples := []Sample{{Mask: []int32{0, 0, 1, 1, 1}}, {Mask: []int32{0, 1, 1, 1, 1, 1, 1}}, {Mask: []int32{0, 1}, Episode: 1}}
	if w := CheckTokenBudgets(samples, 6, 9); w != "" {
		t.Fatalf("all fit, got warning %q", w)
	}
	w := CheckTokenBudgets(samples, 4, 9)
	if !containsAll(w, "1 of 3 oracle actions", "max_new_tokens = 4", "at least 6") || strings.Contains(w, "max_completion_length") {
		t.Fatalf("warning %q", w)
	}
	w = CheckTokenBudgets(samples, 6, 8)
	if !containsAll(w, "1 of 2 oracle episodes", "max_completion_length = 8", "at least 9") || strings.Contains(w, "max_new_tokens") {
		t.Fatalf("warning %q", w)
	}
	if w = CheckTokenBudgets(samples, 5, 2); !containsAll(w, "max_new_tokens = 5", "max_completion_length = 2") {
		t.Fatalf("warning %q", w)
	}
}

// TestEvalSummaryRecord: policies recorded one at a time (as notebook cells
// do) merge into one eval_summary.json of the documented shape.
func TestEvalSummaryRecord(t *testing.T) {
	dir := t.TempDir()
	r := SplitResult{GreedySuccess: 0.5, SampledSuccess: 0.25, SampledSuccessSE: 0.1, Questions: 4, SampledEpisodes: 16}
	if _, err := RecordEvaluation(dir, PolicyRandom, map[string]SplitResult{SplitTrain: r, SplitUnseen: r}); err != nil {
		t.Fatal(err)
	}
	r.GreedySuccess = 1
	s, err := RecordEvaluation(dir, PolicySFT, map[string]SplitResult{SplitTrain: r})
	if err != nil {
		t.Fatal(err)
	}
	if s[SplitTrain][PolicyRandom].GreedySuccess != 0.5 || s[SplitTrain][PolicySFT].GreedySuccess != 1 || len(s[SplitUnseen]) != 1 {
		t.Fatalf("merged summary %+v", s)
	}
	b, _ := os.ReadFile(filepath.Join(dir, EvalSummaryFile))
	if !containsAll(string(b), `"train": {`, `"sft": {`, `"greedy_success": 1`, `"sampled_success_se": 0.1`, `"questions": 4`) {
		t.Fatalf("eval_summary.json:\n%s", b)
	}
	table := s.Table()
	if !strings.Contains(table, "sft") || strings.Index(table, "random") > strings.Index(table, "sft") {
		t.Fatalf("table:\n%s", table)
	}
}

func TestSplitResultSE(t *testing.T) {
	var greedy, sampled = evalReportWith(1, 1, 0, 0), evalReportWith(1, 0, 0, 0, 1, 0, 0, 0)
	r := splitResult(4, 0.7, greedy, sampled)
	if r.GreedySuccess != 0.5 || r.SampledSuccess != 0.25 || r.SampledEpisodes != 8 || !near(r.SampledSuccessSE, 0.153093108923949, 1e-12) {
		t.Fatalf("result %+v", r)
	}
	if len(r.SampledByQuestion) == 0 {
		t.Fatalf("no per-question rates: %+v", r)
	}
	r = splitResult(4, 0.7, greedy, evalReportWith())
	if r.SampledSuccess != 0.5 || r.SampledEpisodes != 4 || !near(r.SampledSuccessSE, 0.25, 1e-12) {
		t.Fatalf("greedy only: %+v", r)
	}
}

// PairedDifference: the mean per-question difference and sd/√n over the
// shared questions, from the episodes' question ids.
func TestPairedDifference(t *testing.T) {
	episodes := func(outcomes map[string][]bool) sqlenv.EvalReport {
		var r sqlenv.EvalReport
		for q, os := range outcomes {
			for _, ok := range os {
				r.Episodes = append(r.Episodes, sqlenv.EpisodeReport{QuestionID: q, Correct: ok})
			}
		}
		return r
	}
	a := splitResult(3, 0.7, sqlenv.EvalReport{}, episodes(map[string][]bool{"q1": {true, true}, "q2": {true, false}, "q3": {false, false}, "only_a": {true, true}}))
	b := splitResult(3, 0.7, sqlenv.EvalReport{}, episodes(map[string][]bool{"q1": {true, false}, "q2": {true, false}, "q3": {false, false}}))
	if want := map[string]float64{"q1": 1, "q2": 0.5, "q3": 0, "only_a": 1}; !maps.Equal(a.SampledByQuestion, want) {
		t.Fatalf("per question %v, want %v", a.SampledByQuestion, want)
	}
	// Differences 0.5, 0, 0: mean 1/6, sd √(1/12), s.e. sd/√3 = 1/6.
	d, se, n, ok := PairedDifference(a, b)
	if !ok || n != 3 || !near(d, 1.0/6, 1e-12) || !near(se, 1.0/6, 1e-12) {
		t.Fatalf("PairedDifference = %v, %v, %d, %v; want 1/6, 1/6, 3, true", d, se, n, ok)
	}
	if _, _, _, ok := PairedDifference(a, SplitResult{SampledSuccess: 0.5}); ok {
		t.Fatal("a result without per-question rates gave a paired difference")
	}
}

func TestLatestCheckpointAndReset(t *testing.T) {
	dir := t.TempDir()
	if _, err := LatestCheckpoint(dir); err == nil || !strings.Contains(err.Error(), dir) {
		t.Fatalf("empty dir: %v", err)
	}
	// Complete checkpoints have a trainer_state.json that reads; saves cut
	// short leave none (checkpoint-15) or a truncated one (checkpoint-14).
	for d, state := range map[string]string{"checkpoint-9": "{}", "checkpoint-12": `{"global_step": 12}`, "checkpoint-14": `{"global_st`,
		"checkpoint-15": "", "checkpoint-x": "{}", "sft/checkpoint-3": "{}", "sft/checkpoint-5": "", "tokenizer": ""} {
		os.MkdirAll(filepath.Join(dir, d), 0o755)
		if state != "" {
			os.WriteFile(filepath.Join(dir, d, "trainer_state.json"), []byte(state), 0o644)
		}
	}
	if _, err := LatestCheckpoint(filepath.Join(dir, "tokenizer")); err == nil || !strings.Contains(err.Error(), "no complete checkpoint") {
		t.Fatalf("a directory without complete checkpoints: %v", err)
	}
	for _, f := range []string{MetricsFile, EvalSummaryFile, "eval_random.json", "notes.txt"} {
		os.WriteFile(filepath.Join(dir, f), []byte("{}"), 0o644)
	}
	got, err := LatestCheckpoint(dir)
	if err != nil || got != filepath.Join(dir, "checkpoint-12") {
		t.Fatalf("latest %q, %v", got, err)
	}
	cfg := DefaultGRPOConfig()
	cfg.OutputDir = dir
	after, err := ConfigAfterSFT(cfg)
	if err != nil || after.ModelName != filepath.Join(dir, "sft", "checkpoint-3") {
		t.Fatalf("after SFT: %q, %v", after.ModelName, err)
	}
	if err := ResetOutputs(dir); err != nil {
		t.Fatal(err)
	}
	entries, _ := os.ReadDir(dir)
	var left []string
	for _, e := range entries {
		left = append(left, e.Name())
	}
	if !slices.Equal(left, []string{"notes.txt"}) {
		t.Fatalf("left after reset: %v", left)
	}
}

// evalReportWith is a report of episodes with the given outcomes (1 = correct).
func evalReportWith(outcomes ...int) sqlenv.EvalReport {
	var rep sqlenv.EvalReport
	for i, o := range outcomes {
		rep.Episodes = append(rep.Episodes, sqlenv.EpisodeReport{QuestionID: fmt.Sprint("q", i), Correct: o == 1})
		rep.SuccessRate += float64(o) / float64(len(outcomes))
	}
	return rep
}

// TestRunLogAveragesSparseMetrics: a metric reported on one step of a
// logging window (the periodic evaluation) is logged with its value, not
// divided by the window's length; dense metrics are averaged.
func TestRunLogAveragesSparseMetrics(t *testing.T) {
	log, err := NewRunLog(t.TempDir(), 4, nil)
	if err != nil {
		t.Fatal(err)
	}
	for s := 1; s <= 4; s++ {
		m := Metrics{"step": float64(s), "loss": float64(s)}
		if s == 4 {
			m["eval/train/greedy_success"] = 0.75
		}
		if err := log.Add(m, 4); err != nil {
			t.Fatal(err)
		}
	}
	if len(log.History) != 1 {
		t.Fatalf("%d records, want 1", len(log.History))
	}
	rec := log.History[0]
	if rec["eval/train/greedy_success"] != 0.75 || rec["loss"] != 2.5 || rec["step"] != 4 {
		t.Fatalf("record %v", rec)
	}
	back, err := ReadMetrics(log.Path())
	if err != nil || back[0]["eval/train/greedy_success"] != 0.75 {
		t.Fatalf("read back %v, %v", back, err)
	}
}

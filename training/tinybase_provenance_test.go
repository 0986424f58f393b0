package training

import (
	"context"
	"slices"
	"testing"

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
	if len(all) < 800 || len(prov.SeenSQL) == 0 {
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
}

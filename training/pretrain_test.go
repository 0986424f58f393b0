package training

import (
	"context"
	"errors"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gosqlenv/gosqlenv/sqlenv/dataset"
	"github.com/gosqlenv/gosqlenv/training/tinybase"
)

// TestPretrainQuestionsLeaveSplitsOut: the pre-training questions are many
// more than the training questions, all of the training databases, and
// none has the gold SQL or the text of a training, held-out or evaluation
// question.
func TestPretrainQuestionsLeaveSplitsOut(t *testing.T) {
	ctx := context.Background()
	cfg := DefaultGRPOConfig()
	TinyPreset(&cfg)
	cfg.OutputDir = t.TempDir()
	p, err := OpenData(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	pre, err := p.PretrainQuestions(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(pre) < 5*len(p.Train) {
		t.Fatalf("%d pre-training questions for %d training questions", len(pre), len(p.Train))
	}
	used := map[string]string{}
	for _, q := range append(append(append([]dataset.QuestionRecord{}, p.Train...), p.Heldout...), p.Eval...) {
		used[tinybase.SQLKey(q.GoldSQL)] = q.QuestionID
		used[strings.ToLower(q.QuestionText)] = q.QuestionID
	}
	for _, q := range pre {
		if q.DatabaseName != "university" || q.Difficulty == dataset.Hard {
			t.Fatalf("pre-training question of another database or difficulty: %+v", q)
		}
		if id, ok := used[tinybase.SQLKey(q.GoldSQL)]; ok {
			t.Fatalf("%s has the gold SQL of %s", q.QuestionID, id)
		}
		if id, ok := used[strings.ToLower(q.QuestionText)]; ok {
			t.Fatalf("%s has the text of %s", q.QuestionID, id)
		}
	}
	if _, err := p.PretrainQuestions(ctx, "university", p.Eval[0].DatabaseName); err == nil || !strings.Contains(err.Error(), p.Eval[0].DatabaseName) {
		t.Fatalf("pre-training on an evaluation database: %v", err)
	}
	// Guard: a base model pre-trained on a held-out question is refused.
	prov := tinybase.Provenance{SeenSQL: []string{tinybase.SQLKey(p.Heldout[1].GoldSQL)}}
	var seen *tinybase.ErrSeen
	if err := checkNotPretrained(prov, p.Heldout); !errors.As(err, &seen) || len(seen.QuestionIDs) != 1 || seen.QuestionIDs[0] != p.Heldout[1].QuestionID ||
		!strings.Contains(err.Error(), p.Heldout[1].QuestionID) {
		t.Fatalf("held-out question seen in pre-training: %v", err)
	}
	if err := checkNotPretrained(tinybase.Provenance{}, p.Heldout); err != nil {
		t.Fatal(err)
	}
}

// TestPretrainSavesLoadableBase: a short pre-training run writes a model
// directory that loads as a model_name, with provenance listing the SQL it
// saw.
func TestPretrainSavesLoadableBase(t *testing.T) {
	if testing.Short() {
		t.Skip("trains a tiny model")
	}
	ctx := context.Background()
	cfg := tinyPipelineConfig(t.TempDir())
	cfg.TrainDatabases, cfg.DifficultyFilter, cfg.HeldoutFraction = []string{"university"}, []string{"easy"}, 0.2
	cfg.SFTEpochs, cfg.SFTBatchSize = 1, 4
	p, err := OpenData(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	pre, err := p.PretrainQuestions(ctx)
	if err != nil {
		t.Fatal(err)
	}
	p.Pretrain = pre[:6]
	if err := p.LoadModel(ctx); err != nil {
		t.Fatal(err)
	}
	res, err := p.RunPretrain(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	if res.Questions != 6 || res.Samples < 12 || !(res.FinalLoss > 0) {
		t.Fatalf("result %+v", res)
	}
	dir := filepath.Join(t.TempDir(), "base")
	if err := p.SaveBaseModel(dir, tinybase.Provenance{Command: "test"}); err != nil {
		t.Fatal(err)
	}
	prov, err := tinybase.ReadProvenance(dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(prov.SeenSQL) != 6 || !prov.Seen(pre[3].GoldSQL) || prov.Seen(p.Train[0].GoldSQL) || prov.Parameters != p.Model.Config.NumParameters() {
		t.Fatalf("provenance %+v", prov)
	}
	cfg.ModelName = dir
	q, err := NewPipeline(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer q.Close()
	want, _ := p.Model.Logits([][]int32{{1, 2, 3}})
	got, _ := q.Model.Logits([][]int32{{1, 2, 3}})
	if got[0][2][5] != want[0][2][5] {
		t.Fatalf("reloaded base differs: %v vs %v", got[0][2][5], want[0][2][5])
	}
}

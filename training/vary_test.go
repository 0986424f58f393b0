package training

import (
	"context"
	"strings"
	"testing"
)

// TestVaryTraining: train_renamed asks about that share of the training
// questions on a renamed copy of their database (same text and answer,
// SQL in the copy's names, id <id>_v1), train_reworded rewords about that
// share; the others stay as they are, and the choice is deterministic.
func TestVaryTraining(t *testing.T) {
	ctx := context.Background()
	cfg, _ := tinyPresetOnFreshData(t)
	cfg.TrainRenamed, cfg.TrainReworded = 0.5, 0.5
	plain := cfg
	plain.TrainRenamed, plain.TrainReworded = 0, 0
	open := func(c GRPOConfig) *Pipeline {
		p, err := OpenData(ctx, c)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { p.Close() })
		return p
	}
	p, orig, again := open(cfg), open(plain), open(cfg)
	if len(p.Train) != len(orig.Train) {
		t.Fatalf("%d training questions, %d without variations", len(p.Train), len(orig.Train))
	}
	renamed, reworded, sameSQL := 0, 0, 0
	for i, q := range p.Train {
		o := orig.Train[i]
		if a := again.Train[i]; q.QuestionID != a.QuestionID || q.QuestionText != a.QuestionText || q.GoldSQL != a.GoldSQL {
			t.Fatalf("not deterministic: %+v vs %+v", q, again.Train[i])
		}
		if q.GoldAnswer != o.GoldAnswer || q.Difficulty != o.Difficulty {
			t.Fatalf("%s: answer %q (%s), originally %q (%s)", q.QuestionID, q.GoldAnswer, q.Difficulty, o.GoldAnswer, o.Difficulty)
		}
		if q.QuestionID == o.QuestionID+"_v1" {
			renamed++
			if q.DatabaseName != o.DatabaseName+"_v1" {
				t.Fatalf("renamed %+v of %+v", q, o)
			}
			if q.GoldSQL == o.GoldSQL { // every name it uses kept its form (pre-training's pool keeps a fifth)
				sameSQL++
			}
		} else if q.QuestionID != o.QuestionID || q.GoldSQL != o.GoldSQL || q.DatabaseName != o.DatabaseName {
			t.Fatalf("%+v changed otherwise than renamed (%+v)", q, o)
		}
		if q.QuestionText != o.QuestionText {
			reworded++
		}
	}
	n := len(p.Train)
	// About half each (a fair hash: 192 questions, ±5 standard deviations).
	if renamed < n/2-35 || renamed > n/2+35 || reworded < n/4 || reworded > n/2+35 || sameSQL > renamed/4 {
		t.Fatalf("%d renamed (%d with the same SQL) and %d reworded of %d", renamed, sameSQL, reworded, n)
	}
	for _, bad := range []float64{-0.1, 1.5} {
		c := cfg
		c.TrainRenamed = bad
		if err := c.Validate(); err == nil || !strings.Contains(err.Error(), "train_renamed") {
			t.Errorf("train_renamed %v: %v", bad, err)
		}
	}
}

// Pre-training of the tiny base model: oracle imitation on many generated
// questions of the training databases, none of which the pipeline trains
// on, holds out or evaluates on.

package training

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/gomlx/compute/dtypes"
	"github.com/gosqlenv/gosqlenv/sqlenv/dataset"
	"github.com/gosqlenv/gosqlenv/sqlenv/dataset/bundled"
	"github.com/gosqlenv/gosqlenv/training/tinybase"
	"github.com/gosqlenv/gosqlenv/training/tokenizer"
)

// PretrainQuestions returns the questions a base model is pre-trained on:
// every question the bundled generator's templates give for databases (none:
// the pipeline's training databases) at the configured difficulties
// (bundled.MoreQuestions), minus any whose gold SQL or text is that of a
// training, held-out or evaluation question of the pipeline — so that every
// split still measures questions the base model never saw. A database of
// the evaluation split is refused. It needs the bundled dataset (no
// questions_path).
func (p *Pipeline) PretrainQuestions(ctx context.Context, databases ...string) ([]dataset.QuestionRecord, error) {
	c := p.Config
	if c.QuestionsPath != "" || c.DBDir != "" {
		return nil, errors.New("pre-training generates questions of the bundled databases: leave questions_path and db_dir empty")
	}
	paths, err := bundled.Ensure(ctx)
	if err != nil {
		return nil, err
	}
	var diffs []dataset.Difficulty
	for _, d := range c.DifficultyFilter {
		diffs = append(diffs, dataset.Difficulty(d))
	}
	dbs := databases
	if len(dbs) == 0 {
		dbs = c.TrainDatabases
	}
	if len(dbs) == 0 {
		for _, q := range p.Train {
			if !slices.Contains(dbs, q.DatabaseName) {
				dbs = append(dbs, q.DatabaseName)
			}
		}
	}
	used := map[string]bool{}
	for _, q := range slices.Concat(p.Train, p.Heldout, p.Eval) {
		used[tinybase.SQLKey(q.GoldSQL)] = true
		used[strings.ToLower(strings.TrimSpace(q.QuestionText))] = true
	}
	for _, q := range p.Eval {
		if slices.Contains(dbs, q.DatabaseName) {
			return nil, fmt.Errorf("pre-training on %s, a database of the unseen_databases split, would make it seen", q.DatabaseName)
		}
	}
	var out []dataset.QuestionRecord
	for _, db := range dbs {
		more, err := bundled.MoreQuestions(ctx, paths.DBDir, db, diffs...)
		if err != nil {
			return nil, err
		}
		for _, q := range more {
			if !used[tinybase.SQLKey(q.GoldSQL)] && !used[strings.ToLower(strings.TrimSpace(q.QuestionText))] {
				out = append(out, q)
			}
		}
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("no pre-training questions left for %v", dbs)
	}
	return out, nil
}

// PretrainResult is what Pretrain did.
type PretrainResult struct {
	Questions, Samples int
	// FinalLoss is the mean token NLL over the last epoch's steps.
	FinalLoss float64
}

// RunPretrain trains the pipeline's model on questions (PretrainQuestions) the
// way the SFT warm-up does — the oracle's turns, assistant-only loss,
// sft_epochs over sft_batch_size samples per step at sft_learning_rate —
// with checkpoints under output_dir/pretrain. The pipeline must have been
// opened with Pretrain set to the same questions before its model was
// loaded (the environment and the tiny vocabulary include them).
func (p *Pipeline) RunPretrain(ctx context.Context, log *RunLog) (PretrainResult, error) {
	if len(p.Pretrain) == 0 {
		return PretrainResult{}, errors.New("pretrain: Pipeline.Pretrain is empty (set it to PretrainQuestions before LoadModel)")
	}
	tr, samples, err := p.oracleTrainer(ctx, p.Pretrain, "pretrain", log)
	if err != nil {
		return PretrainResult{}, err
	}
	if err := tr.Train(ctx); err != nil {
		return PretrainResult{}, err
	}
	return PretrainResult{Questions: len(p.Pretrain), Samples: samples, FinalLoss: tr.LastEpochLoss}, nil
}

// SaveBaseModel writes the pipeline's model in float32 and its tokenizer
// to dir as a Hugging Face model directory, with provenance.json (prov,
// completed with the pre-training questions' SQL fingerprints).
func (p *Pipeline) SaveBaseModel(dir string, prov tinybase.Provenance) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	if err := p.Model.HostWeights().Save(dir, dtypes.Float32); err != nil {
		return err
	}
	for _, f := range []string{tokenizer.TokenizerJSON, tokenizer.TokenizerConfig} {
		if err := copyIfExists(filepath.Join(p.TokenizerDir, f), filepath.Join(dir, f)); err != nil {
			return err
		}
	}
	prov.SeenSQL = nil
	for _, q := range p.Pretrain {
		prov.SeenSQL = append(prov.SeenSQL, tinybase.SQLKey(q.GoldSQL))
	}
	slices.Sort(prov.SeenSQL)
	prov.SeenSQL = slices.Compact(prov.SeenSQL)
	prov.Parameters = p.Model.Config.NumParameters()
	return writeJSON(filepath.Join(dir, tinybase.ProvenanceFile), prov)
}

// checkNotPretrained returns a *tinybase.ErrSeen naming the questions of qs
// whose gold SQL the base model was pre-trained on.
func checkNotPretrained(prov tinybase.Provenance, qs []dataset.QuestionRecord) error {
	var seen []string
	for _, q := range qs {
		if prov.Seen(q.GoldSQL) {
			seen = append(seen, q.QuestionID)
		}
	}
	if len(seen) > 0 {
		return &tinybase.ErrSeen{QuestionIDs: seen}
	}
	return nil
}

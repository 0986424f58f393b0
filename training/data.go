package training

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"hash/fnv"
	"math"
	"slices"
	"strings"

	"github.com/gosqlenv/gosqlenv/sqlenv"
	"github.com/gosqlenv/gosqlenv/sqlenv/dataset"
	"github.com/gosqlenv/gosqlenv/sqlenv/dataset/bundled"
	"github.com/gosqlenv/gosqlenv/sqlenv/sqlitedb"
)

// The evaluation splits, as named in eval_summary.json.
const (
	// SplitTrain is the questions the model is trained on: those GRPO plays
	// (the SFT warm-up saw them too).
	SplitTrain = "train"
	// SplitHeldout is held-out questions of the training databases: the same
	// kinds of questions with other constants (heldout_fraction).
	SplitHeldout = "heldout_questions"
	// SplitUnseen is the questions of databases never trained on.
	SplitUnseen = "unseen_databases"
)

// Splits lists the evaluation splits in reporting order.
var Splits = []string{SplitTrain, SplitHeldout, SplitUnseen}

// loadQuestions reads the questions and opens the databases: the training
// file's questions of train_databases and difficulty_filter, minus the held
// out ones (heldout_fraction), capped by max_train_questions; the evaluation
// file's questions (unseen databases).
func (p *Pipeline) loadQuestions(ctx context.Context) error {
	c := p.Config
	trainPath, evalPath, dbDir := c.QuestionsPath, c.EvalQuestionsPath, c.DBDir
	if trainPath == "" && evalPath == "" && dbDir == "" {
		paths, err := bundled.Ensure(ctx)
		if err != nil {
			return err
		}
		trainPath, evalPath, dbDir = paths.TrainQuestions, paths.EvalQuestions, paths.DBDir
	} else if trainPath == "" || dbDir == "" {
		return errors.New("config: give questions_path and db_dir (and eval_questions_path), or none of them for the bundled dataset")
	}
	load := func(path string, split dataset.Split, databases []string) ([]dataset.QuestionRecord, error) {
		qs, err := dataset.Load(ctx, path, dataset.LoadOptions{DBDir: dbDir, Split: split})
		if err != nil {
			return nil, err
		}
		if err := checkDatabases(path, qs, databases); err != nil {
			return nil, err
		}
		if qs, err = (dataset.Filter{Difficulties: c.DifficultyFilter, Databases: databases}).Apply(qs); err != nil {
			return nil, err
		}
		if len(qs) == 0 {
			return nil, fmt.Errorf("questions file %s has no %s questions of difficulty %v", path, split, c.DifficultyFilter)
		}
		return qs, nil
	}
	all, err := load(trainPath, dataset.Train, c.TrainDatabases)
	if err != nil {
		return err
	}
	train, heldout := HoldOut(all, c.HeldoutFraction)
	if len(train) == 0 {
		return fmt.Errorf("heldout_fraction = %g leaves no training questions of %d", c.HeldoutFraction, len(all))
	}
	p.Train, p.Heldout = SpreadOverDatabases(train, c.MaxTrainQuestions), heldout
	if evalPath != "" {
		if p.Eval, err = load(evalPath, dataset.Eval, nil); err != nil {
			return err
		}
	}
	p.Databases = sqlenv.OpenDatabases(dbDir, sqlitedb.Limits{})
	return nil
}

// checkDatabases reports names in want that no question of qs uses.
func checkDatabases(path string, qs []dataset.QuestionRecord, want []string) error {
	have := map[string]bool{}
	for _, q := range qs {
		have[strings.ToLower(q.DatabaseName)] = true
	}
	var missing []string
	for _, d := range want {
		if !have[strings.ToLower(d)] {
			missing = append(missing, d)
		}
	}
	if len(missing) > 0 {
		names := slices.Sorted(func(yield func(string) bool) {
			for d := range have {
				if !yield(d) {
					return
				}
			}
		})
		return fmt.Errorf("train_databases: %s not in %s (it has %s)", strings.Join(missing, ", "), path, strings.Join(names, ", "))
	}
	return nil
}

// EvalQuestions returns up to max_eval_questions questions of an evaluation
// split (SplitTrain, SplitHeldout or SplitUnseen), spread over its databases.
// The training split is the questions GRPO plays (GRPOQuestions: all
// training questions unless grpo_max_questions picks fewer; the SFT warm-up
// saw them too).
func (p *Pipeline) EvalQuestions(split string) ([]dataset.QuestionRecord, error) {
	var qs []dataset.QuestionRecord
	switch split {
	case SplitTrain:
		qs = p.GRPOQuestions()
	case SplitHeldout:
		qs = p.Heldout
	case SplitUnseen:
		qs = p.Eval
	default:
		return nil, fmt.Errorf("unknown evaluation split %q (%s)", split, strings.Join(Splits, ", "))
	}
	return SpreadOverDatabases(qs, p.Config.MaxEvalQuestions), nil
}

// HoldOut splits questions into training and held-out questions: from each
// database, round(fraction × its questions) are held out, chosen by a hash
// of their ids, so the choice depends neither on the file order nor on the
// seed. Both results keep the input order.
func HoldOut(qs []dataset.QuestionRecord, fraction float64) (train, heldout []dataset.QuestionRecord) {
	if fraction <= 0 {
		return slices.Clone(qs), nil
	}
	byDB := map[string][]int{}
	for i, q := range qs {
		byDB[q.DatabaseName] = append(byDB[q.DatabaseName], i)
	}
	held := make([]bool, len(qs))
	for _, idx := range byDB {
		slices.SortFunc(idx, func(a, b int) int {
			return cmp.Or(cmp.Compare(idHash(qs[a].QuestionID), idHash(qs[b].QuestionID)), cmp.Compare(a, b))
		})
		n := int(math.Round(fraction * float64(len(idx))))
		for _, i := range idx[:min(n, len(idx))] {
			held[i] = true
		}
	}
	for i, q := range qs {
		if held[i] {
			heldout = append(heldout, q)
		} else {
			train = append(train, q)
		}
	}
	return train, heldout
}

func idHash(id string) uint64 {
	h := fnv.New64a()
	h.Write([]byte(id))
	return h.Sum64()
}

// SpreadOverDatabases returns up to n questions (all if n <= 0) taken in
// turn from each database (databases in order of first appearance, each
// database's questions in order), so that a cap keeps every database's
// share instead of the first databases of the file.
func SpreadOverDatabases(qs []dataset.QuestionRecord, n int) []dataset.QuestionRecord {
	if n <= 0 || n >= len(qs) {
		return slices.Clone(qs)
	}
	var order []string
	byDB := map[string][]dataset.QuestionRecord{}
	for _, q := range qs {
		if _, ok := byDB[q.DatabaseName]; !ok {
			order = append(order, q.DatabaseName)
		}
		byDB[q.DatabaseName] = append(byDB[q.DatabaseName], q)
	}
	out := make([]dataset.QuestionRecord, 0, n)
	for k := 0; len(out) < n; k++ {
		for _, db := range order {
			if k < len(byDB[db]) && len(out) < n {
				out = append(out, byDB[db][k])
			}
		}
	}
	return out
}

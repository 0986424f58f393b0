package bundled

import (
	"context"
	"errors"
	"fmt"

	"github.com/gosqlenv/gosqlenv/sqlenv/dataset"
)

// Source names question data: a questions file with its database directory,
// or a data directory in this package's layout (Paths), or — when all fields
// are empty — the bundled dataset itself (Ensure).
type Source struct {
	Data      string // a directory with databases/, questions_train.json, questions_eval.json
	Questions string // a questions file (enriched or raw Spider records); needs DBDir
	DBDir     string
}

// Load reads every question of src (both splits of a data directory) and
// returns them with their database directory.
func (src Source) Load(ctx context.Context) ([]dataset.QuestionRecord, string, error) {
	if src.Questions != "" {
		if src.DBDir == "" {
			return nil, "", errors.New("a questions file needs its database directory")
		}
		qs, err := dataset.Load(ctx, src.Questions, dataset.LoadOptions{DBDir: src.DBDir})
		return qs, src.DBDir, err
	}
	paths := PathsIn(src.Data)
	if src.Data == "" {
		var err error
		if paths, err = Ensure(ctx); err != nil {
			return nil, "", err
		}
	}
	// One split may be empty (an import of Spider's dev set alone has no
	// training questions), not both.
	var qs []dataset.QuestionRecord
	for _, f := range []string{paths.TrainQuestions, paths.EvalQuestions} {
		part, err := dataset.Load(ctx, f, dataset.LoadOptions{DBDir: paths.DBDir, AllowEmpty: true})
		if err != nil {
			return nil, "", err
		}
		qs = append(qs, part...)
	}
	if len(qs) == 0 {
		return nil, "", fmt.Errorf("data directory %s has no questions: %s and %s are both empty", paths.Root, paths.TrainQuestions, paths.EvalQuestions)
	}
	return qs, paths.DBDir, nil
}

package bundled

import (
	"context"
	"fmt"
	"slices"

	"github.com/gosqlenv/gosqlenv/sqlenv/dataset"
	"github.com/gosqlenv/gosqlenv/sqlenv/sqlitedb"
)

// MoreQuestions makes every usable question the templates of a generated
// database can give — each parameter row of each template once, phrasings
// in turn — instead of the 65 (training) or 55 (evaluation) drawn for the
// bundled question files: material for pre-training a model on many
// questions of the same kinds. dbDir holds the generated databases
// (Paths.DBDir); difficulties filters the templates (none: all). Question
// ids are <database>_more_<n>; the bundled files' own questions are among
// the results (compare gold SQL to leave them out). Deterministic.
func MoreQuestions(ctx context.Context, dbDir, database string, difficulties ...dataset.Difficulty) ([]dataset.QuestionRecord, error) {
	d, err := domainNamed(database)
	if err != nil {
		return nil, err
	}
	db, err := sqlitedb.Open(sqlitedb.Path(dbDir, d.name), sqlitedb.Limits{})
	if err != nil {
		return nil, err
	}
	defer db.Close()
	return allQuestions(ctx, db, d, difficulties)
}

// allQuestions makes every usable question of d's templates at the
// difficulties (none: all) on db, ids <d.name>_more_<n>.
func allQuestions(ctx context.Context, db *sqlitedb.DB, d *domain, difficulties []dataset.Difficulty) ([]dataset.QuestionRecord, error) {
	r := newRand(d.name + "/more")
	q := &questioner{db: db, d: d, seen: map[string]bool{}, stats: &domainStats{Rejected: map[string]int{}, PerTemplate: make([]int, len(d.templates))}}
	var out []dataset.QuestionRecord
	for i := range d.templates {
		t := &d.templates[i]
		if len(difficulties) > 0 && !slices.Contains(difficulties, t.want) {
			continue
		}
		src, err := newSource(ctx, db, t, i, r)
		if err != nil {
			return nil, fmt.Errorf("%s template %d: %w", d.name, i, err)
		}
		for {
			rec, ok, err := q.draw(ctx, src, len(out))
			if err != nil {
				return nil, fmt.Errorf("%s template %d (%q): %w", d.name, i, t.texts[0], err)
			}
			if !ok {
				break
			}
			rec.QuestionID = fmt.Sprintf("%s_more_%04d", d.name, len(out))
			out = append(out, rec)
		}
	}
	return out, nil
}

// Databases lists the generated databases of a split (dataset.Train or
// dataset.Eval) in output order.
func Databases(split dataset.Split) []string {
	var out []string
	for _, d := range domains() {
		if d.split == split {
			out = append(out, d.name)
		}
	}
	return out
}

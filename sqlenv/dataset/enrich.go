package dataset

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/gosqlenv/gosqlenv/sqlenv/answer"
	"github.com/gosqlenv/gosqlenv/sqlenv/sqlitedb"
)

// MaxAnswerRows is the most rows a gold result may have: the environment
// shows at most this many rows of a query result, so a larger gold answer
// could not be read off the environment's observations.
const MaxAnswerRows = 20

// Reasons a raw question cannot become a record.
var (
	ErrGoldFails   = errors.New("gold SQL fails")
	ErrEmptyAnswer = errors.New("gold SQL returns no rows")
	ErrTooManyRows = fmt.Errorf("gold SQL returns more than %d rows", MaxAnswerRows)
	// ErrNullAnswer: every value of the gold result is NULL (an aggregate
	// over no rows, a column with no data), which can only be answered
	// "NULL".
	ErrNullAnswer = errors.New("gold SQL returns only NULL")
)

// Enrich turns a raw question into a record: it runs the gold SQL on db
// (without its wall-clock timeout: sqlitedb.DB.QueryUntimed) to compute the
// gold answer and its type, finds the tables it reads (from the
// query plan, so aliases, subqueries and views are handled) and grades the
// difficulty by their number. Tables are those SQLite actually reads: a
// LEFT JOIN the optimiser drops does not count, and a self-join counts once. index numbers the question within its
// database and split: the id is {db_id}_{split}_{index:03d}.
func Enrich(ctx context.Context, db *sqlitedb.DB, r RawRecord, split Split, index int) (QuestionRecord, error) {
	q := QuestionRecord{
		QuestionID:   fmt.Sprintf("%s_%s_%03d", r.DBID, split, index),
		QuestionText: strings.TrimSpace(r.Question),
		DatabaseName: r.DBID,
		GoldSQL:      strings.TrimSpace(r.Query),
		Split:        split,
	}
	res, err := db.QueryUntimed(ctx, q.GoldSQL)
	if err != nil {
		return q, fmt.Errorf("%w: %v", ErrGoldFails, err)
	}
	switch {
	case len(res.Rows) == 0:
		return q, ErrEmptyAnswer
	case len(res.Rows) > MaxAnswerRows || res.Truncated:
		return q, ErrTooManyRows
	case allNull(res.Rows):
		return q, ErrNullAnswer
	}
	gold, typ := answer.Infer(res.Rows)
	q.GoldAnswer, q.AnswerType = GoldAnswer(gold), typ
	tables, err := db.TablesRead(ctx, q.GoldSQL)
	if err != nil {
		return q, fmt.Errorf("%w: %v", ErrGoldFails, err)
	}
	q.TablesInvolved = tables
	q.Difficulty = DifficultyForTables(len(tables))
	return q, nil
}

// allNull reports whether every value of rows is NULL.
func allNull(rows [][]any) bool {
	for _, r := range rows {
		for _, v := range r {
			if v != nil {
				return false
			}
		}
	}
	return true
}
